"""DataAnalysis images (draw_offscreen) checked for real content: tick labels
where the axes are, colour bar end labels equal to the range the heatmap was
coloured by (recomputed from results() in numpy), heatmap colours on that
range, the value range shaded, group legend, tooltip, tick labels in order."""

import os

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.errors import GraphValidationError
from gpuviz.render.axes import Axis
from gpuviz.render.colour_bar import ramp_colours
from gpuviz.oracles.render import colour_range_oracle
from gpuviz.render.number_format import format_number
from gpuviz.widgets.analysis.labels import resolve_colour_scale
from gpuviz.widgets.analysis.layout import GROUP_PALETTE, PANEL_COLOR, RAMP, panel_layout
from gpuviz.widgets.analysis.widget import DataAnalysis
from tests.render.test_text import ink_box, write_png

W, H = 720, 420
PANEL = np.array(PANEL_COLOR[:3]) * 255


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(5)
    n = 6000
    x = rng.normal(0.0, 1.0, n).astype(np.float32)
    y = (0.5 * x + rng.normal(0.0, 1.0, n)).astype(np.float32)
    fare = rng.lognormal(2.0, 0.5, n).astype(np.float32)
    fare[:4] = 4000.0  # outliers: a linear colour range would squash every other cell
    pay = rng.choice(["card", "cash", "app"], n)
    return pa.table({"x": x, "y": y, "fare": fare, "tip": (fare * 0.1).astype(np.float32), "pay": pay})


@pytest.fixture(scope="module")
def widget(table):
    w = DataAnalysis(table, x="x", y="y", value="fare", group="pay", grid_size=(64, 48), bins=32, size=(W, H))
    yield w
    w.close()


def text_ink(image, rect):
    """Label-like pixels (light grey or coloured text) inside ``rect = (x, y, w, h)``."""
    x, y, w, h = (int(round(v)) for v in rect)
    part = image[max(y, 0):y + h, max(x, 0):x + w, :3].astype(int)
    return np.abs(part - PANEL).max(axis=2) > 70


def save(name, image):
    folder = os.environ.get("GPUVIZ_TEST_IMAGES")
    if folder:
        os.makedirs(folder, exist_ok=True)
        write_png(os.path.join(folder, name), image)


def test_tick_labels_are_in_the_margin_bands_of_every_axis(widget):
    image = widget.draw_offscreen(width=W, height=H)
    save("analysis-default.png", image)
    layout = panel_layout(W, H, True)
    for name, rects in layout.items():
        fx, fy, fw, fh = rects["frame"]
        px, py, pw, ph = rects["plot"]
        below = (px, py + ph + 6, pw, 13)  # tick labels under the x axis
        left = (fx, py, px - fx - 5, ph)  # tick labels left of the y axis
        assert text_ink(image, below).sum() > 20, name
        assert text_ink(image, left).sum() > 20, name
        title = (fx, fy, fw, 18)
        assert text_ink(image, title).sum() > 40, name
    hx, hy, hw, hh = layout["histogram"]["plot"]
    fx, _fy, fw, _fh = layout["histogram"]["frame"]
    assert text_ink(image, (hx + hw + 5, hy, fx + fw - hx - hw - 5, hh)).sum() > 20  # CDF labels on the right
    cx, cy, cw, ch = layout["heatmap"]["colour_bar"]
    fx, _fy, fw, _fh = layout["heatmap"]["frame"]
    assert text_ink(image, (cx + cw + 5, cy - 7, fx + fw - cx - cw - 5, ch + 14)).sum() > 40  # colour bar labels
    # and nothing text-like between the heatmap plot and its colour bar
    px, py, pw, ph = layout["heatmap"]["plot"]
    assert text_ink(image, (px + pw + 2, py, cx - px - pw - 4, ph)).sum() == 0


@pytest.mark.parametrize("operation,colour_scale", [("mean", "auto"), ("count", "auto"), ("max", "linear"),
                                                    ("sum", "auto"), ("min", "log")])
def test_colour_bar_ends_are_the_range_the_heatmap_was_coloured_by(widget, operation, colour_scale):
    widget.set_operation(operation)
    widget.set_colour_scale(colour_scale)
    image = widget.draw_offscreen(width=W, height=H)
    result = widget.results()
    grid = result["grid"]
    normalisation = resolve_colour_scale(colour_scale, operation, widget.data.stats["fare"])
    lo, hi = colour_range_oracle(grid, normalisation=normalisation)
    bar = widget.graph.overlay.colour_bar
    assert bar.extremes == (lo, hi)
    labels = [t for t, *_ in bar.labels]
    assert labels[0] == format_number(lo, digits=3) and labels[-1] == format_number(hi, digits=3)
    if operation == "mean":  # robust: the outlier cells lie above the bar's top
        assert normalisation == "robust" and hi < np.nanmax(grid)
    if operation == "count":
        assert normalisation == "log"
    # the end labels are drawn at the bar's ends (hanging inside its extent)
    cx, cy, cw, ch = panel_layout(W, H, True)["heatmap"]["colour_bar"]
    top = text_ink(image, (cx + cw + 5, cy, 60, 14))
    bottom = text_ink(image, (cx + cw + 5, cy + ch - 14, 60, 14))
    assert top.sum() > 10 and bottom.sum() > 5
    # cells are coloured on exactly that range: below lo -> first stop, above hi -> last, between -> the ramp
    px, py, pw, ph = panel_layout(W, H, True)["heatmap"]["plot"]
    rows, cols = grid.shape
    finite = np.argwhere(np.isfinite(grid))
    values = grid[np.isfinite(grid)]
    for value in (np.nanmin(grid), np.nanmax(grid), np.median(values)):
        j, i = finite[np.argmin(np.abs(values - value))]
        v = float(grid[j, i])
        if normalisation == "log":
            t = 0.0 if v <= 0 else np.log(v / lo) / np.log(hi / lo)
        else:
            t = (v - lo) / (hi - lo)
        sx = int(px + (i + 0.5) * pw / cols)
        sy = int(py + ph - (j + 0.5) * ph / rows)
        want = ramp_colours(RAMP, [np.clip(t, 0, 1)])[0] * 255
        assert np.abs(image[sy, sx, :3].astype(float) - want).max() <= 4, (operation, v, t)
    save(f"analysis-{operation}-{colour_scale}.png", image)
    widget.set_colour_scale("auto")
    widget.set_operation("mean")


def test_x_tick_labels_are_drawn_in_order_where_laid_out(widget):
    image = widget.draw_offscreen(width=W, height=H)
    px, py, pw, ph = panel_layout(W, H, True)["heatmap"]["plot"]
    ink = text_ink(image, (0, 0, W, H))
    band = ink[py + ph + 6:py + ph + 20]
    columns = np.nonzero(band.any(axis=0))[0]
    runs = np.split(columns, np.nonzero(np.diff(columns) > 4)[0] + 1)  # one run of ink per label
    centres = [(r[0] + r[-1] + 1) / 2 for r in runs if r[0] >= px - 20 and r[-1] <= px + pw + 20]
    x0, _y0, x1, _y1 = widget.bounds
    overlay = widget.graph.overlay._plot
    layout = Axis(side="bottom", domain=(x0, x1)).layout((px, py, pw, ph), measure=overlay.measure,
                                                         line_height=overlay.line_height)
    assert len(centres) == len(layout.labels)
    np.testing.assert_allclose(centres, [x for _t, x, *_ in layout.labels], atol=2.0)
    widths = [r[-1] - r[0] + 1 for r in runs if r[0] >= px - 20 and r[-1] <= px + pw + 20]
    for (text, *_), width in zip(layout.labels, widths):
        assert abs(width - overlay.measure(text)) <= 3, text


def test_value_range_is_shaded_and_groups_have_a_legend(widget):
    lo, hi = widget.value_range
    widget.set_value_range((8.0, 15.0))
    image = widget.draw_offscreen(width=W, height=H)
    save("analysis-range.png", image)
    hx, hy, hw, hh = panel_layout(W, H, True)["histogram"]["plot"]
    strip = image[hy + 2:hy + 12, hx + 2:hx + hw - 2, :3].astype(int)  # above the bars, inside the axes
    shaded = (strip[..., 2] - PANEL[2]) > 15
    cols = np.nonzero(shaded.all(axis=0))[0] + 2
    edges = widget.results()["edges"].astype(np.float64)  # log bins: the shade spans log(8)..log(15)
    expect = hw * np.log(np.array([8.0, 15.0]) / edges[0]) / np.log(edges[-1] / edges[0])
    assert abs(cols[0] - expect[0]) <= 2 and abs(cols[-1] + 1 - expect[1]) <= 2, (cols[[0, -1]], expect)
    widget.set_value_range((lo, hi))
    gx, gy, gw, _gh = panel_layout(W, H, True)["groups"]["frame"]
    legend = image[gy + 19:gy + 19 + 15, gx:gx + gw, :3].astype(int)
    for colour in GROUP_PALETTE[:3]:
        near = np.abs(legend - np.array(colour) * 255).max(axis=2) <= 8
        assert near.sum() >= 30  # a 9 x 9 swatch per group


def test_tooltip_is_drawn_at_the_cursor(widget):
    widget._hover = (150.0, 120.0, ["fare 12.5", "rows 40"])
    try:
        image = widget.draw_offscreen(width=W, height=H)
    finally:
        widget._hover = None
    save("analysis-tooltip.png", image)
    box = image[128:160, 160:220, :3].astype(int)  # right of and below the cursor
    assert (box.max(axis=2) < 20).mean() > 0.4  # the dark box
    assert (box.min(axis=2) > 150).sum() > 20  # light text on it
    plain = widget.draw_offscreen(width=W, height=H)
    assert not np.array_equal(plain[128:160, 160:220], image[128:160, 160:220])
    assert ink_box((plain[..., :3].astype(int) != image[..., :3]).any(axis=2))[0] >= 150


def test_high_dpi_frames_scale_plots_axes_and_text_together(widget):
    """A canvas at pixel ratio 2: the plots, the axes and the labels all sit
    on the logical layout times two (the render node and the overlay agree)."""
    import wgpu

    from gpuviz.render.overlay import LINE_COLOR

    device = widget.device
    size = (2 * 400, 2 * 240)
    texture = device.create_texture(size=(*size, 1), format="rgba8unorm",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    widget._pixel_ratio = lambda: 2.0  # what GPUCanvas reports on a high-DPI screen
    try:
        encoder = device.create_command_encoder()  # one frame: the graph encoded at ratio 2 and presented
        widget.draw(encoder, texture.create_view(), size)
        device.queue.submit([encoder.finish()])
        widget.graph.overlay.settle()
    finally:
        del widget._pixel_ratio
    data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": 4 * size[0], "rows_per_image": size[1]},
                                     (*size, 1))
    image = np.frombuffer(data, np.uint8).reshape(size[1], size[0], 4)
    save("analysis-hidpi.png", image)
    logical = panel_layout(400, 240, True)
    physical = panel_layout(*size, True, pixel_ratio=2.0)
    for name in logical:
        for key, rect in logical[name].items():
            assert np.abs(np.subtract(physical[name][key], np.multiply(rect, 2))).max() <= 1, (name, key)
    px, py, pw, ph = physical["heatmap"]["plot"]
    line = image[py + 4:py + ph - 4, px, :3].astype(int)  # the y axis line runs along the plot's left edge
    assert (np.abs(line - np.array(LINE_COLOR[:3]) * 255).max(axis=1) <= 3).mean() > 0.9
    gap = image[py:py + ph, px - 10, :3].astype(int)  # between tick marks and tick labels: bare panel
    assert np.abs(gap - PANEL).max() <= 2
    heat = image[py:py + ph, px + 2:px + pw, :3].astype(int)
    assert (np.abs(heat - PANEL).max(axis=2) > 5).mean() > 0.95  # cells (or the empty-cell colour) fill the plot
    _fx, fy, _fw, _fh = physical["heatmap"]["frame"]
    title = text_ink(image, (px - 100, fy, pw, 36))
    rows = np.nonzero(title.any(axis=1))[0]
    assert 14 <= rows[-1] - rows[0] + 1 <= 30  # a 12 px title at ratio 2: ~2 x its logical ink height
    texture.destroy()


def cdf_thickness(image, rect):
    """Median vertical run (physical pixels) of the CDF line's colour over
    the right fifth of the histogram plot ``rect``, where the CDF is nearly
    flat (so a column crosses the line across its width)."""
    from gpuviz.widgets.analysis.layout import CDF_COLOR

    x, y, w, h = rect
    part = image[y:y + h, x + w - w // 5:x + w - 2, :3].astype(int)
    line = np.abs(part - np.array(CDF_COLOR) * 255).max(axis=2) <= 3
    runs = line.sum(axis=0)
    assert (runs > 0).mean() > 0.9, "no CDF line in the right of the histogram plot"
    return float(np.median(runs[runs > 0]))


def test_cdf_line_is_three_logical_pixels_wide_at_every_pixel_ratio(widget):
    """draw_offscreen at pixel ratio 2 draws the CDF 2 x as thick (in
    physical pixels) as at ratio 1: 3 logical pixels either way."""
    thick = {}
    for ratio in (1, 2):
        size = (400 * ratio, 240 * ratio)
        image = widget.draw_offscreen(width=size[0], height=size[1], pixel_ratio=float(ratio))
        save(f"analysis-cdf-ratio{ratio}.png", image)
        thick[ratio] = cdf_thickness(image, panel_layout(*size, True, pixel_ratio=ratio)["histogram"]["plot"])
    assert 2.5 <= thick[1] <= 3.5 and 5.0 <= thick[2] <= 7.0, thick
    with pytest.raises(GraphValidationError, match="draw_offscreen pixel_ratio"):
        widget.draw_offscreen(width=40, height=30, pixel_ratio=0.0)
