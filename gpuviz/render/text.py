"""TextLayer: many single-line labels drawn as one instanced draw in any render pass.

A frame queues labels with :meth:`TextLayer.add` (CPU layout, cached per
string), writes them with :meth:`TextLayer.upload` (one ``queue.write_buffer``
of 20-byte glyph instances and one of a 16-byte uniform) and records
:meth:`TextLayer.draw` into the caller's render pass: one ``draw(4, n)`` of a
triangle-strip quad per glyph, whatever the number of labels.

Coordinates are logical canvas pixels, origin top-left, y down; the render
target is ``pixel_ratio`` times larger (its size in physical pixels is given
to :meth:`~TextLayer.upload`). Each label's pen origin snaps to a whole
physical pixel, so glyphs are copied 1:1 from the atlas. Clipping is exact
on the CPU: a glyph quad is cut to the clip rectangle (in whole physical
pixels) and dropped when nothing is left.
"""

from __future__ import annotations

import math

import numpy as np
import wgpu

from ..errors import DeviceMismatchError, GraphStateError, GraphTypeError, GraphValidationError
from ..graph.checks import check_count
from ..graph.compat import device_cache
from ..graph.shaders import shader_module, wgsl
from .glyph_atlas import GlyphAtlas, glyph_atlas

__all__ = ["TextLayer", "TEXT_ANCHORS", "GLYPH_INSTANCE_DTYPE"]

#: Accepted ``anchor`` values: (horizontal, vertical).
TEXT_ANCHORS = (("left", "center", "right"), ("top", "middle", "baseline", "bottom"))

#: One glyph quad in the instance buffer (20 bytes): top-left corner in
#: physical pixels, bitmap size, atlas texel origin, straight-alpha RGBA8.
GLYPH_INSTANCE_DTYPE = np.dtype([("origin", "<f4", 2), ("size", "<u2", 2), ("uv", "<u2", 2), ("color", "u1", 4)])

_VERTEX_ATTRIBUTES = [
    {"format": "float32x2", "offset": 0, "shader_location": 0},
    {"format": "uint16x2", "offset": 8, "shader_location": 1},
    {"format": "uint16x2", "offset": 12, "shader_location": 2},
    {"format": "unorm8x4", "offset": 16, "shader_location": 3},
]
# Premultiplied "over": the shader returns colour * coverage * alpha.
_BLEND = {"color": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"},
          "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}
_EMPTY = np.zeros(0, GLYPH_INSTANCE_DTYPE)
_ALONG = {"left": 0.0, "center": 0.5, "right": 1.0}  # anchor -> fraction of the advance width left of x


def _pipeline(device, target_format: str, depth_format, sample_count: int):
    """The text render pipeline for one target configuration, once per device."""
    cache = device_cache(device, "text-pipelines")
    key = (target_format, depth_format, sample_count)
    pipeline = cache.get(key)
    if pipeline is None:
        module = shader_module(device, wgsl("render/shaders/text.wgsl"), label="text")
        depth = None if depth_format is None else {
            "format": depth_format, "depth_write_enabled": False, "depth_compare": "always"}
        pipeline = cache[key] = device.create_render_pipeline(
            label=f"text-{target_format}", layout="auto",
            vertex={"module": module, "entry_point": "vs_main", "buffers": [{
                "array_stride": GLYPH_INSTANCE_DTYPE.itemsize, "step_mode": "instance",
                "attributes": _VERTEX_ATTRIBUTES}]},
            primitive={"topology": "triangle-strip"},
            depth_stencil=depth, multisample={"count": sample_count},
            fragment={"module": module, "entry_point": "fs_main",
                      "targets": [{"format": target_format, "blend": _BLEND}]})
    return pipeline


def _number(owner: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise GraphTypeError(f'{owner} "{name}" must be a number (got {type(value).__name__})')
    value = float(value)
    if not math.isfinite(value):
        raise GraphValidationError(f'{owner} "{name}" must be finite (got {value})')
    return value


class TextLayer:
    """Queued single-line labels, drawn with one instanced draw.

    Parameters
    ----------
    device : wgpu.GPUDevice
    atlas : GlyphAtlas, optional
        The glyphs (and so the font size and pixel ratio) of every label in
        this layer; defaults to ``glyph_atlas(device, font_size=font_size,
        pixel_ratio=pixel_ratio)``. One size per layer: use a layer per size.
    font_size, pixel_ratio : float
        Used only without ``atlas``.
    target_format : str
        Colour format of the render pass's (single) attachment.
    depth_format : str, optional
        The pass's depth-stencil format, if it has one (text neither tests
        nor writes depth).
    sample_count : int
        The pass's multisample count.
    capacity : int
        Glyphs the instance buffer holds at first; :meth:`upload` replaces it
        with a larger one (doubling) when more are queued.
    label : str
        ID used in errors and GPU object labels.

    Attributes
    ----------
    atlas : GlyphAtlas
    pixel_ratio : float
    capacity : int
        Glyphs the current instance buffer holds.
    instance_buffer : wgpu.GPUBuffer
        VERTEX | COPY_DST; replaced when it grows (re-record draws then:
        a render bundle that captured the old one draws stale glyphs).
    label_count : int
        Labels queued since the last :meth:`clear`.
    glyph_count : int
        Glyph quads the last :meth:`upload` wrote (blank glyphs and clipped
        ones take none): the instance count :meth:`draw` records.

    Raises
    ------
    GraphValidationError
        A capacity below 1 or a sample count below 1.
    GraphTypeError
        ``atlas`` is not a GlyphAtlas.
    DeviceMismatchError
        ``atlas`` belongs to another device.

    Notes
    -----
    Never submits, never reads back and never creates command encoders:
    :meth:`upload` writes this layer's own buffers through the queue the
    caller passes (ordered before the caller's next submit), and
    :meth:`draw` records into the caller's render pass. No multi-line text,
    no rotation, no shaping beyond kerning pairs.
    """

    def __init__(self, device, *, atlas: GlyphAtlas | None = None, font_size: float = 12.0,
                 pixel_ratio: float = 1.0, target_format: str = "rgba8unorm", depth_format: str | None = None,
                 sample_count: int = 1, capacity: int = 1024, label: str = "text"):
        self.label = label
        if atlas is None:
            atlas = glyph_atlas(device, font_size=font_size, pixel_ratio=pixel_ratio)
        elif not isinstance(atlas, GlyphAtlas):
            raise GraphTypeError(f'TextLayer "{label}" atlas must be a GlyphAtlas (got {type(atlas).__name__})')
        elif atlas.device is not device:
            raise DeviceMismatchError(f'TextLayer "{label}" atlas belongs to another device than the one given')
        for name, value in (("capacity", capacity), ("sample_count", sample_count)):
            check_count(f'TextLayer "{label}"', name, value, low=1)
        self.device, self.atlas, self.pixel_ratio = device, atlas, atlas.pixel_ratio
        self._owner = f'TextLayer "{label}"'
        self._uniform_bytes = None  # what the uniform holds (upload writes it when that changes)
        self._colours = {}  # colour tuple -> RGBA8 (see _packed_colour)
        # physical offsets from the anchor's y to the baseline, per vertical anchor
        self._baseline_offset = {"top": atlas.ascender, "middle": (atlas.ascender + atlas.descender) / 2,
                                 "baseline": 0, "bottom": atlas.descender}
        self._pipeline = _pipeline(device, target_format, depth_format, int(sample_count))
        self._uniform = device.create_buffer(label=f"{label}-params", size=16,
                                             usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self._bind_group = device.create_bind_group(layout=self._pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self._uniform, "offset": 0, "size": 16}},
            {"binding": 1, "resource": atlas.texture.create_view()}])
        self._allocate(int(capacity))
        self.glyph_count = 0
        self.clear()
        self._dirty = False  # nothing queued, nothing to draw

    def _allocate(self, capacity: int):
        self.capacity = capacity
        self.instance_buffer = self.device.create_buffer(
            label=f"{self.label}-glyphs", size=capacity * GLYPH_INSTANCE_DTYPE.itemsize,
            usage=wgpu.BufferUsage.VERTEX | wgpu.BufferUsage.COPY_DST)

    # ------------------------------------------------------------ queueing
    def clear(self):
        """Forget every queued label (the next :meth:`upload` writes none)."""
        self._labels = []  # (slots, pen, x0, baseline, color, clip)
        self._dirty = True

    @property
    def label_count(self) -> int:
        """Labels queued since the last :meth:`clear` (empty texts excluded)."""
        return len(self._labels)

    def queued(self, start: int = 0) -> tuple:
        """The labels queued since the first ``start`` ones (opaque entries
        for :meth:`extend` of this layer or one with the same atlas), so a
        caller can queue a recurring group of labels again without laying
        them out again. Copies nothing to the GPU."""
        return tuple(self._labels[start:])

    def extend(self, entries) -> None:
        """Queue again ``entries`` that :meth:`queued` returned (no
        validation: they were checked when first added)."""
        if entries:
            self._labels.extend(entries)
            self._dirty = True

    def measure(self, text: str, *, max_width: float | None = None) -> tuple[float, float]:
        """``(width, height)`` in logical pixels of ``text`` as :meth:`add`
        lays it out: its advance width (after truncation to ``max_width``)
        and the atlas's line height. Queues nothing."""
        text = self._text(text, max_width)
        ratio = self.pixel_ratio
        return self.atlas.layout(text)[2] / ratio, self.atlas.line_height / ratio

    def _text(self, text, max_width):
        if not isinstance(text, str):
            raise GraphTypeError(f'TextLayer "{self.label}" text must be a str (got {type(text).__name__})')
        if "\n" in text or "\r" in text:
            raise GraphValidationError(f'TextLayer "{self.label}" text is single-line (got {text!r}): '
                                       f"add one label per line")
        if max_width is not None:
            limit = _number(self._owner, "max_width", max_width)
            text = self.atlas.truncate(text, max_width=math.floor(limit * self.pixel_ratio + 1e-6))
        return text

    def add(self, text: str, *, x: float, y: float, anchor=("left", "top"), color=(0.0, 0.0, 0.0, 1.0),
            clip=None, max_width: float | None = None) -> tuple[float, float, float, float]:
        """Queue one label; returns its line box ``(x0, y0, x1, y1)`` in
        logical pixels (advance width by line height, before clipping).

        Parameters
        ----------
        text : str
            One line. Characters missing from the atlas are drawn as ``?``.
        x, y : float
            The anchor point, logical pixels from the top-left corner.
        anchor : (str, str)
            Which point of the line box sits at ``(x, y)``: horizontal
            ``"left"`` (the pen's start), ``"center"`` or ``"right"`` (the end
            of the advance width); vertical ``"top"`` (the ascender line),
            ``"middle"`` (half way between ascender and descender lines),
            ``"baseline"`` or ``"bottom"`` (the descender line).
        color : sequence of 4 floats
            Straight-alpha RGBA in 0..1 (a 3-tuple means opaque).
        clip : (x0, y0, x1, y1), optional
            Logical rectangle outside which nothing of this label is drawn.
        max_width : float, optional
            Logical width; a longer text is cut and ends with ``…`` (nothing
            is drawn if not even ``…`` fits).

        Raises
        ------
        GraphTypeError, GraphValidationError
            A non-str or multi-line text, an unknown anchor, a colour that is
            not 3 or 4 numbers in 0..1, a clip that is not 4 finite numbers,
            non-finite coordinates.
        """
        owner = self._owner
        x, y = _number(owner, "x", x), _number(owner, "y", y)
        text = self._text(text, max_width)
        try:
            horizontal, vertical = anchor
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} anchor must be (horizontal, vertical) (got {anchor!r})") from None
        if horizontal not in TEXT_ANCHORS[0] or vertical not in TEXT_ANCHORS[1]:
            raise GraphValidationError(f"{owner} anchor {anchor!r} is unknown: horizontal one of "
                                       f"{TEXT_ANCHORS[0]}, vertical one of {TEXT_ANCHORS[1]}")
        packed = self._packed_colour(color)
        atlas, ratio = self.atlas, self.pixel_ratio
        slots, pen, width = atlas.layout(text)
        x0 = round(x * ratio - _ALONG[horizontal] * width)
        baseline = round(y * ratio + self._baseline_offset[vertical])
        if clip is not None:
            try:
                cx0, cy0, cx1, cy1 = (_number(owner, "clip", c) for c in clip)
            except (TypeError, ValueError) as error:
                if isinstance(error, GraphValidationError):
                    raise
                raise GraphTypeError(f"{owner} clip must be (x0, y0, x1, y1) (got {clip!r})") from None
            clip = (round(cx0 * ratio), round(cy0 * ratio), round(cx1 * ratio), round(cy1 * ratio))
        if len(slots):
            self._labels.append((slots, pen, x0, baseline, packed, clip))
            self._dirty = True
        top = baseline - atlas.ascender
        return x0 / ratio, top / ratio, (x0 + width) / ratio, (top + atlas.line_height) / ratio

    def _packed_colour(self, color) -> np.ndarray:
        """``color`` as RGBA8 (read-only, cached per colour tuple: a frame reuses a few)."""
        key = color if isinstance(color, tuple) else None
        try:
            packed = self._colours.get(key)
        except TypeError:  # unhashable parts: named below
            key = packed = None
        if packed is not None:
            return packed
        owner = self._owner
        try:
            rgba = [float(c) for c in color]
        except (TypeError, ValueError):
            raise GraphTypeError(f"{owner} color must be 3 or 4 numbers (got {color!r})") from None
        if len(rgba) == 3:
            rgba.append(1.0)
        if len(rgba) != 4 or not all(0.0 <= c <= 1.0 for c in rgba):
            raise GraphValidationError(f"{owner} color must be 3 or 4 numbers in 0..1 (got {color!r})")
        packed = np.array([round(c * 255) for c in rgba], np.uint8)
        packed.setflags(write=False)
        if key is not None and len(self._colours) < 256:
            self._colours[key] = packed
        return packed

    # ------------------------------------------------------------ GPU
    def instances(self) -> np.ndarray:
        """The glyph instances of every queued label (what :meth:`upload`
        writes), as a :data:`GLYPH_INSTANCE_DTYPE` array."""
        if not self._labels:
            return _EMPTY
        m = self.atlas.metrics
        slots = np.concatenate([label[0] for label in self._labels])
        counts = np.fromiter((len(label[0]) for label in self._labels), np.int64, len(self._labels))
        pen = np.concatenate([label[1] for label in self._labels])
        x0 = np.repeat(np.fromiter((label[2] for label in self._labels), np.int64, len(counts)), counts)
        base = np.repeat(np.fromiter((label[3] for label in self._labels), np.int64, len(counts)), counts)
        color = np.repeat(np.stack([label[4] for label in self._labels]), counts, axis=0)
        gx0 = x0 + pen + m("left")[slots]
        gy0 = base - m("top")[slots]
        gx1, gy1 = gx0 + m("width")[slots], gy0 + m("height")[slots]
        u, v = m("u")[slots].astype(np.int64), m("v")[slots].astype(np.int64)
        clipped = [label[5] is not None for label in self._labels]
        if any(clipped):
            big = 1 << 40
            rects = np.array([label[5] if label[5] is not None else (-big, -big, big, big)
                              for label in self._labels], np.int64)
            rects = np.repeat(rects, counts, axis=0)
            cx0, cy0 = np.maximum(gx0, rects[:, 0]), np.maximum(gy0, rects[:, 1])
            gx1, gy1 = np.minimum(gx1, rects[:, 2]), np.minimum(gy1, rects[:, 3])
            u, v = u + (cx0 - gx0), v + (cy0 - gy0)
            gx0, gy0 = cx0, cy0
        keep = (gx1 > gx0) & (gy1 > gy0)
        out = np.empty(int(keep.sum()), GLYPH_INSTANCE_DTYPE)
        out["origin"] = np.stack([gx0[keep], gy0[keep]], axis=1)
        out["size"] = np.stack([(gx1 - gx0)[keep], (gy1 - gy0)[keep]], axis=1)
        out["uv"] = np.stack([u[keep], v[keep]], axis=1)
        out["color"] = color[keep]
        return out

    def upload(self, queue, *, target_size) -> int:
        """Write the queued glyphs and the target size into this layer's
        buffers through ``queue`` (``write_buffer`` only: nothing is
        submitted); returns the glyph count :meth:`draw` will record.

        Parameters
        ----------
        queue : wgpu.GPUQueue
        target_size : (int, int)
            The render target's width and height in physical pixels.

        Raises
        ------
        GraphValidationError
            A target size that is not two positive numbers.
        """
        try:
            width, height = (float(v) for v in target_size)
        except (TypeError, ValueError):
            raise GraphValidationError(f'TextLayer "{self.label}" target_size must be (width, height) '
                                       f"(got {target_size!r})") from None
        if not (width > 0 and height > 0 and math.isfinite(width + height)):
            raise GraphValidationError(f'TextLayer "{self.label}" target_size must be positive '
                                       f"(got {target_size!r})")
        instances = self.instances()
        if len(instances) > self.capacity:
            self._allocate(1 << (len(instances) - 1).bit_length())
        params = np.array([width, height, self.pixel_ratio, 0], np.float32).tobytes()
        if params != self._uniform_bytes:  # the target size rarely changes: skip the write
            queue.write_buffer(self._uniform, 0, params)
            self._uniform_bytes = params
        if len(instances):
            queue.write_buffer(self.instance_buffer, 0, instances.tobytes())
        self.glyph_count = len(instances)
        self._dirty = False
        return self.glyph_count

    def draw(self, render_pass):
        """Record the glyphs of the last :meth:`upload` into ``render_pass``:
        pipeline, bind group, instance buffer and ONE ``draw(4, glyph_count)``
        (nothing when there are no glyphs). Leaves the pass's pipeline, bind
        group 0 and vertex buffer 0 set to this layer's; changes nothing else.

        Raises
        ------
        GraphStateError
            Labels were added or cleared since the last :meth:`upload`.
        """
        if self._dirty:
            raise GraphStateError(f'TextLayer "{self.label}" labels changed since the last upload '
                                  f"({len(self._labels)} queued): call upload(queue, target_size=...) before draw")
        if self.glyph_count == 0:
            return
        render_pass.set_pipeline(self._pipeline)
        render_pass.set_bind_group(0, self._bind_group)
        render_pass.set_vertex_buffer(0, self.instance_buffer, 0, self.glyph_count * GLYPH_INSTANCE_DTYPE.itemsize)
        render_pass.draw(4, self.glyph_count)

    def destroy(self) -> None:
        """Free the instance and uniform buffers (the glyph atlas is shared and cached per device)."""
        self.instance_buffer.destroy()
        self._uniform.destroy()

    def __repr__(self):
        return f'TextLayer("{self.label}", {self.atlas!r}, {len(self._labels)} labels, {self.glyph_count} glyphs)'
