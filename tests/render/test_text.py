"""GlyphAtlas and TextLayer: real offscreen renders read back and checked
for where the ink is (measured boxes, anchors, clipping, ellipsis, pixel
ratio), one draw for thousands of labels, and a sample PNG for the eye."""

import struct
import zlib

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz.render import ELLIPSIS, GlyphAtlas, TextLayer, glyph_atlas

W, H = 256, 96
BLACK = (0.0, 0.0, 0.0, 1.0)


def render(device, layers, size=(W, H), background=(1.0, 1.0, 1.0, 1.0)):
    """Upload and draw ``layers`` into a fresh rgba8unorm target; returns
    the (h, w, 4) uint8 image."""
    width, height = size
    texture = device.create_texture(size=(width, height, 1), format="rgba8unorm",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    for layer in layers:
        layer.upload(device.queue, target_size=size)
    encoder = device.create_command_encoder()
    render_pass = encoder.begin_render_pass(color_attachments=[{
        "view": texture.create_view(), "load_op": "clear", "store_op": "store",
        "clear_value": background}])
    for layer in layers:
        layer.draw(render_pass)
    render_pass.end()
    device.queue.submit([encoder.finish()])
    data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": width * 4, "rows_per_image": height},
                                     (width, height, 1))
    return np.frombuffer(data, np.uint8).reshape(height, width, 4)


def ink(image, threshold=40):
    """Mask of pixels darker than the white background by ``threshold``."""
    return (255 - image[..., :3].min(axis=2)) > threshold


def ink_box(mask):
    """``(x0, y0, x1, y1)`` of the inked pixels, exclusive ends, or None."""
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return None
    return xs.min(), ys.min(), xs.max() + 1, ys.max() + 1


def inside(box, outer, slack=0):
    return (box[0] >= outer[0] - slack and box[1] >= outer[1] - slack
            and box[2] <= outer[2] + slack and box[3] <= outer[3] + slack)


def write_png(path, image):
    """A minimal RGBA8 PNG writer (the test needs no imaging package)."""
    height, width = image.shape[:2]
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def layer(device):
    return TextLayer(device, font_size=14)


# -- atlas --------------------------------------------------------------------------


def test_atlas_is_cached_per_device_size_and_ratio(device):
    a = glyph_atlas(device, font_size=14)
    assert glyph_atlas(device, font_size=14) is a
    assert glyph_atlas(device, font_size=14, pixel_ratio=2) is not a
    assert a.texture.format == "r8unorm" and a.image.shape == (a.texture.size[1], a.texture.size[0])
    for char in "0123456789kMGTmµnp×−…°éÜ":
        assert char in a.characters
    slots, pen, width = a.layout("µs")
    assert width == pen[1] + a.metrics("advance")[slots[1]]
    assert a.image.max() == 255  # full coverage in stems


def test_kerning_pairs_shorten_the_line(device):
    atlas = glyph_atlas(device, font_size=32)
    advance = atlas.metrics("advance")
    slots, _, width = atlas.layout("To")
    assert width < advance[slots].sum()  # DejaVu's kern table pulls "o" under "T"


def test_bad_arguments_are_refused(device, layer):
    with pytest.raises(gpuviz.GraphValidationError, match="GlyphAtlas"):
        GlyphAtlas(device, font_size=0)
    with pytest.raises(gpuviz.GraphTypeError, match="GlyphAtlas"):
        GlyphAtlas(device, font_size="12")
    with pytest.raises(gpuviz.GraphValidationError, match='TextLayer "text" anchor'):
        layer.add("x", x=0, y=0, anchor=("middle", "left"))
    with pytest.raises(gpuviz.GraphValidationError, match="single-line"):
        layer.add("a\nb", x=0, y=0)
    with pytest.raises(gpuviz.GraphValidationError, match="color"):
        layer.add("a", x=0, y=0, color=(0, 0, 2))
    with pytest.raises(gpuviz.GraphTypeError, match="text must be a str"):
        layer.add(12, x=0, y=0)
    with pytest.raises(gpuviz.GraphValidationError, match="finite"):
        layer.add("a", x=float("nan"), y=0)
    layer.clear()


def test_draw_before_upload_is_refused(device):
    layer = TextLayer(device, font_size=14, label="late")
    layer.add("12", x=0, y=0)

    class Pass:
        def __getattr__(self, name):
            raise AssertionError("recorded before upload")

    with pytest.raises(gpuviz.GraphStateError, match='TextLayer "late"'):
        layer.draw(Pass())


# -- ink where the layout says ------------------------------------------------------


def test_ink_lies_inside_the_measured_box(device, layer):
    layer.clear()
    box = layer.add("Hello 1000 µs", x=20.0, y=30.0, color=BLACK)
    width, height = layer.measure("Hello 1000 µs")
    assert box == (20.0, 30.0, 20.0 + width, 30.0 + height)
    got = ink_box(ink(render(device, [layer])))
    assert got is not None and inside(got, box)
    # and fills it horizontally up to the side bearings ("H" and "s" are ~1-2 px in)
    assert got[0] - box[0] <= 3 and box[2] - got[2] <= 3
    assert got[1] > box[1] and got[3] <= box[3]  # caps below the ascender line, no descenders here


def test_widths_follow_the_text_and_match_measure(device, layer):
    widths = {}
    for text in ("W", "i", "1000", "1"):
        layer.clear()
        layer.add(text, x=10, y=10, color=BLACK)
        got = ink_box(ink(render(device, [layer])))
        widths[text] = got[2] - got[0]
        measured = layer.measure(text)[0]
        assert widths[text] <= measured and measured - widths[text] <= 4  # only side bearings differ
    assert widths["W"] > widths["i"] and widths["1000"] > 3 * widths["1"]
    assert layer.measure("W")[0] > layer.measure("i")[0]
    assert layer.measure("1000")[0] == 4 * layer.measure("1")[0]  # tabular digits, no kerning


@pytest.mark.parametrize("horizontal", ["left", "center", "right"])
@pytest.mark.parametrize("vertical", ["top", "middle", "baseline", "bottom"])
def test_anchors_move_the_box(device, layer, horizontal, vertical):
    layer.clear()
    x, y = 128.0, 48.0
    box = layer.add("Anchor", x=x, y=y, anchor=(horizontal, vertical), color=BLACK)
    width, height = layer.measure("Anchor")
    atlas = layer.atlas
    expect_x0 = {"left": x, "center": x - width / 2, "right": x - width}[horizontal]
    expect_y0 = {"top": y, "middle": y - height / 2, "baseline": y - atlas.ascender, "bottom": y - height}[vertical]
    assert abs(box[0] - expect_x0) <= 0.5 and abs(box[1] - expect_y0) <= 0.5
    got = ink_box(ink(render(device, [layer])))
    assert inside(got, box)
    if horizontal == "right":
        assert x - 3 <= got[2] <= x  # right-anchored text ends at x
    if horizontal == "center":
        assert abs((got[0] + got[2]) / 2 - x) <= 1.5
    if vertical == "baseline":
        assert got[3] == y  # no descenders in "Anchor": ink stops on the baseline


def test_clip_removes_ink_outside_the_rect(device, layer):
    layer.clear()
    layer.add("Clipped label text", x=10, y=20, color=BLACK)
    full = ink(render(device, [layer]))
    layer.clear()
    clip = (30, 24, 80, 30)
    layer.add("Clipped label text", x=10, y=20, color=BLACK, clip=clip)
    clipped = ink(render(device, [layer]))
    assert inside(ink_box(clipped), clip)
    window = np.zeros_like(full)
    window[clip[1]:clip[3], clip[0]:clip[2]] = True
    assert (clipped == (full & window)).all()  # inside the rect: exactly the unclipped pixels
    assert layer.glyph_count < len("Clipped label text")


def test_ellipsis_keeps_ink_within_max_width(device, layer):
    text = "A long category name that does not fit"
    layer.clear()
    box = layer.add(text, x=10, y=20, color=BLACK, max_width=100)
    assert box[2] - box[0] <= 100 and layer.measure(text, max_width=100)[0] == box[2] - box[0]
    assert layer.atlas.truncate(text, max_width=100).endswith(ELLIPSIS)
    got = ink_box(ink(render(device, [layer])))
    assert got[2] <= 110
    # the last glyph drawn is the ellipsis: three dots on the baseline, nothing above them
    ellipsis_width = layer.measure(ELLIPSIS)[0]
    mask = ink(render(device, [layer]))
    tail = mask[:, int(box[2] - ellipsis_width):int(box[2])]
    rows = np.nonzero(tail.any(axis=1))[0]
    assert len(rows) and rows.max() - rows.min() <= 3  # dots only, a couple of pixels tall
    assert layer.measure("fits", max_width=100) == layer.measure("fits")
    layer.clear()
    assert layer.add(text, x=10, y=20, max_width=2)[2] == 10  # not even "…" fits: nothing


def test_two_thousand_labels_one_draw(device):
    layer = TextLayer(device, font_size=10, capacity=16, label="many")
    texts = [f"{i:d}" for i in range(2000)]
    for i, text in enumerate(texts):
        layer.add(text, x=(i % 40) * 25, y=(i // 40) * 12, color=BLACK)
    assert layer.label_count == 2000
    calls = []

    class Spy:
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            method = getattr(self.inner, name)

            def record(*args):
                calls.append((name, args))
                return method(*args)
            return record

    size = (1000, 600)
    texture = device.create_texture(size=(*size, 1), format="rgba8unorm",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    assert layer.upload(device.queue, target_size=size) == sum(map(len, texts))  # digits are never blank
    assert layer.capacity >= layer.glyph_count  # grew from 16
    encoder = device.create_command_encoder()
    render_pass = encoder.begin_render_pass(color_attachments=[{
        "view": texture.create_view(), "load_op": "clear", "store_op": "store", "clear_value": (1, 1, 1, 1)}])
    layer.draw(Spy(render_pass))
    render_pass.end()
    device.queue.submit([encoder.finish()])
    draws = [args for name, args in calls if name.startswith("draw")]
    assert draws == [(4, sum(map(len, texts)))]
    data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": size[0] * 4, "rows_per_image": size[1]},
                                     (*size, 1))
    mask = ink(np.frombuffer(data, np.uint8).reshape(size[1], size[0], 4))
    assert mask[-12:].any() and mask[:12].any()  # first and last rows of labels are drawn


def test_pixel_ratio_two_doubles_the_ink_box(device):
    boxes = []
    for ratio in (1.0, 2.0):
        layer = TextLayer(device, font_size=12, pixel_ratio=ratio)
        layer.add("Ratio 42", x=8, y=8, color=BLACK)
        assert layer.measure("Ratio 42")[1] == pytest.approx(layer.atlas.line_height / ratio)
        got = ink_box(ink(render(device, [layer], size=(int(128 * ratio), int(48 * ratio)))))
        boxes.append((got[2] - got[0], got[3] - got[1]))
    (w1, h1), (w2, h2) = boxes
    assert abs(w2 - 2 * w1) <= 3 and abs(h2 - 2 * h1) <= 2


# -- a sample for the eye ---------------------------------------------------------


def test_sample_png(device):
    size = (480, 220)
    big = TextLayer(device, font_size=20, label="title")
    mid = TextLayer(device, font_size=12, label="ticks")
    small = TextLayer(device, font_size=9, label="small")
    big.add("Mean arr_delay by hour", x=240, y=8, anchor=("center", "top"), color=(0.1, 0.1, 0.1, 1))
    for i, value in enumerate(["0", "250 µs", "500 µs", "750 µs", "1 ms"]):
        mid.add(value, x=60 + i * 90, y=120, anchor=("center", "top"), color=BLACK)
    for i, value in enumerate(["1.5 k", "1 k", "500", "0", "−500"]):
        mid.add(value, x=40, y=44 + i * 16, anchor=("right", "middle"), color=(0.2, 0.2, 0.6, 1))
    mid.add("A category label far too long for its cell", x=60, y=150, max_width=160, color=BLACK)
    mid.add("clipped to a box", x=260, y=150, clip=(260, 150, 330, 160), color=(0.7, 0.1, 0.1, 1))
    small.add("9 px: 12.5 °C × 3 = 37.5 °C, 1e−3 s = 1 ms  AVATAR To Wa", x=8, y=190, color=BLACK)
    image = render(device, [big, mid, small], size=size)
    write_png("/tmp/text_sample.png", image)
    assert ink(image).sum() > 500


def test_truncate_is_the_longest_prefix_that_fits(device):
    atlas = glyph_atlas(device, font_size=14)
    text = "To be, or not  to be: AVAT"
    full = atlas.layout(text)[2]
    for max_width in range(0, full + 2):
        got = atlas.truncate(text, max_width=max_width)
        candidates = [text] if full <= max_width else \
            [text[:k].rstrip() + ELLIPSIS for k in range(len(text) - 1, -1, -1)]
        oracle = next((c for c in candidates if atlas.layout(c)[2] <= max_width), "")
        assert atlas.layout(got)[2] <= max_width and len(got) == len(oracle), (max_width, got, oracle)


def test_coverage_is_closer_to_the_outline_than_a_distance_field():
    """The measurement behind the coverage atlas (glyph_atlas.py's docstring):
    at 12 px, FreeType's unhinted coverage vs an exactly sampled signed
    distance field, each against the outline rendered 16x larger and
    box-filtered down (the ideal coverage). CPU only."""
    import freetype

    from gpuviz.render.glyph_atlas import DEFAULT_FONT

    px, s = 12, 16
    n = 3 * px
    centres = (np.stack(np.mgrid[0:n, 0:n], -1).reshape(-1, 2) + 0.5) * s

    def glyphs(size_64):
        face = freetype.Face(str(DEFAULT_FONT))
        face.set_char_size(size_64)
        for c in map(chr, range(0x21, 0x7F)):
            face.load_char(c, freetype.FT_LOAD_RENDER | freetype.FT_LOAD_NO_HINTING)
            b, g = face.glyph.bitmap, face.glyph
            yield np.frombuffer(bytes(b.buffer), np.uint8).reshape(b.rows, b.pitch)[:, :b.width] / 255, \
                g.bitmap_left, g.bitmap_top

    def place(glyph, scale):
        image, left, top = glyph
        canvas = np.zeros((n * scale, n * scale))
        y0, x0 = 2 * px * scale - top, px * scale + left  # pen origin at (px, 2 px)
        canvas[y0:y0 + image.shape[0], x0:x0 + image.shape[1]] = image
        return canvas

    errors = {"coverage": [], "sdf": []}
    for big, small in zip(glyphs(px * s * 64), glyphs(px * 64)):
        outline = place(big, s)
        ideal = outline.reshape(n, s, n, s).mean(axis=(1, 3))
        filled = outline >= 0.5
        interior = (np.roll(filled, 1, 0) & np.roll(filled, -1, 0) & np.roll(filled, 1, 1) & np.roll(filled, -1, 1))
        edge = np.argwhere(filled & ~interior) + 0.5
        distance = np.sqrt(((centres[:, None] - edge[None]) ** 2).sum(-1)).min(1) / s
        sign = np.where(filled[centres[:, 0].astype(int), centres[:, 1].astype(int)], -1, 1)
        sdf = np.clip(0.5 - sign * distance, 0, 1).reshape(n, n)
        coverage = place(small, 1)
        where = (ideal > 0) | (coverage > 0) | (sdf > 0)
        errors["coverage"].append(np.abs(coverage - ideal)[where].mean())
        errors["sdf"].append(np.abs(sdf - ideal)[where].mean())
    coverage, sdf = np.mean(errors["coverage"]), np.mean(errors["sdf"])
    assert coverage < 0.015 and sdf > 3 * coverage, (coverage, sdf)
