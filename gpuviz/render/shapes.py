"""RectLayer: many solid rectangles (axis lines, ticks, swatches, boxes) in one instanced draw.

The companion of :class:`~gpuviz.render.TextLayer` for what axes, colour
bars, legends and tooltips draw besides text: a frame queues rectangles with
:meth:`RectLayer.add` (logical pixels, origin top-left), writes them with
:meth:`RectLayer.upload` (one ``queue.write_buffer`` of 20-byte instances and
one of a 16-byte uniform) and records :meth:`RectLayer.draw` into the
caller's render pass: one ``draw(4, n)``.

Edges snap to whole physical pixels, and a rectangle thinner than one
physical pixel (a hairline) is widened to exactly one, so lines and ticks
are crisp at every pixel ratio.
"""

from __future__ import annotations

import math

import numpy as np
import wgpu

from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from ..graph.compat import device_cache
from ..graph.shaders import shader_module, wgsl

__all__ = ["RectLayer", "RECT_INSTANCE_DTYPE", "rgba"]

#: One rectangle in the instance buffer (20 bytes): physical-pixel edges and straight-alpha RGBA8.
RECT_INSTANCE_DTYPE = np.dtype([("rect", "<f4", 4), ("color", "u1", 4)])

_ATTRIBUTES = [{"format": "float32x4", "offset": 0, "shader_location": 0},
               {"format": "unorm8x4", "offset": 16, "shader_location": 1}]
_BLEND = {"color": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"},
          "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}


def rgba(owner: str, color) -> tuple:
    """``color`` (3 or 4 numbers in 0..1) as an RGBA float tuple; raises the
    named errors TextLayer raises for the same mistakes."""
    try:
        values = [float(c) for c in color]
    except (TypeError, ValueError):
        raise GraphTypeError(f"{owner} color must be 3 or 4 numbers (got {color!r})") from None
    if len(values) == 3:
        values.append(1.0)
    if len(values) != 4 or not all(0.0 <= c <= 1.0 for c in values):
        raise GraphValidationError(f"{owner} color must be 3 or 4 numbers in 0..1 (got {color!r})")
    return tuple(values)


def _pipeline(device, target_format: str):
    cache = device_cache(device, "rect-pipelines")
    pipeline = cache.get(target_format)
    if pipeline is None:
        module = shader_module(device, wgsl("render/shaders/rects.wgsl"), label="rects")
        pipeline = cache[target_format] = device.create_render_pipeline(
            label=f"rects-{target_format}", layout="auto",
            vertex={"module": module, "entry_point": "vs_main", "buffers": [{
                "array_stride": RECT_INSTANCE_DTYPE.itemsize, "step_mode": "instance", "attributes": _ATTRIBUTES}]},
            primitive={"topology": "triangle-strip"},
            fragment={"module": module, "entry_point": "fs_main", "targets": [{"format": target_format,
                                                                               "blend": _BLEND}]})
    return pipeline


class RectLayer:
    """Queued solid rectangles, drawn with one instanced draw.

    Parameters
    ----------
    device : wgpu.GPUDevice
    pixel_ratio : float
        Physical pixels per logical pixel of the target.
    target_format : str
        Colour format of the render pass's (single, non-multisampled) attachment.
    capacity : int
        Rectangles the instance buffer holds at first (it doubles when needed).
    label : str

    Attributes
    ----------
    rect_count : int
        Rectangles the last :meth:`upload` wrote (what :meth:`draw` records).

    Notes
    -----
    Never submits, reads back or creates encoders. Draws axis-aligned
    rectangles only: no rotation, strokes, rounded corners or antialiasing
    (edges are on whole physical pixels, so none is needed).
    """

    def __init__(self, device, *, pixel_ratio: float = 1.0, target_format: str = "rgba8unorm",
                 capacity: int = 256, label: str = "rects"):
        self.label = label
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise GraphValidationError(f'RectLayer "{label}" capacity must be an integer >= 1 (got {capacity!r})')
        ratio = float(pixel_ratio)
        if not (math.isfinite(ratio) and ratio > 0):
            raise GraphValidationError(f'RectLayer "{label}" pixel_ratio must be positive (got {pixel_ratio!r})')
        self.device, self.pixel_ratio = device, ratio
        self._pipeline = _pipeline(device, target_format)
        self._uniform = device.create_buffer(label=f"{label}-params", size=16,
                                             usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self._bind_group = device.create_bind_group(layout=self._pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self._uniform, "offset": 0, "size": 16}}])
        self._allocate(int(capacity))
        self._owner = f'RectLayer "{label}"'
        self._uniform_bytes = None  # what the uniform holds (upload writes it when that changes)
        self._rgba8 = {}  # colour tuple -> its RGBA8 tuple (validated once: a frame reuses a few colours)
        self.rect_count = 0
        self.clear()
        self._dirty = False

    def _allocate(self, capacity):
        self.capacity = capacity
        self.instance_buffer = self.device.create_buffer(
            label=f"{self.label}-instances", size=capacity * RECT_INSTANCE_DTYPE.itemsize,
            usage=wgpu.BufferUsage.VERTEX | wgpu.BufferUsage.COPY_DST)

    def clear(self) -> None:
        """Forget every queued rectangle."""
        self._rects, self._colors = [], []  # the run of single rectangles since the last block
        self._blocks = []  # (rects (n, 4) int64, colours (n, 4) uint8) in queue order
        self._queued = 0
        self._dirty = True

    def _flush(self) -> None:
        """Move the run of single rectangles into a block (keeps queue order)."""
        if self._rects:
            self._blocks.append((np.asarray(self._rects, np.int64).reshape(-1, 4),
                                 np.asarray(self._colors, np.uint8).reshape(-1, 4)))
            self._rects, self._colors = [], []

    @property
    def queued_count(self) -> int:
        """Rectangles queued since the last :meth:`clear`."""
        return self._queued

    def queued(self, start: int = 0) -> tuple:
        """``(rects, colours)`` of the rectangles queued after the first
        ``start`` (snapped physical-pixel edges ``(n, 4)`` int64 and RGBA8
        ``(n, 4)`` uint8), for :meth:`extend`: a recurring group of
        rectangles queued again without snapping it again."""
        self._flush()
        rects = np.concatenate([r for r, _c in self._blocks]) if self._blocks else np.zeros((0, 4), np.int64)
        colours = np.concatenate([c for _r, c in self._blocks]) if self._blocks else np.zeros((0, 4), np.uint8)
        return rects[start:].copy(), colours[start:].copy()

    def extend(self, queued) -> None:
        """Queue again the ``(rects, colours)`` that :meth:`queued` returned (no validation)."""
        rects, colours = queued
        if len(rects):
            self._flush()
            self._blocks.append((rects, colours))
            self._queued += len(rects)
            self._dirty = True

    def add(self, x0: float, y0: float, x1: float, y1: float, *, color) -> None:
        """Queue the rectangle between corners ``(x0, y0)`` and ``(x1, y1)``
        (logical pixels, any order). A zero or sub-pixel extent draws one
        physical pixel, so ``add(x, y0, x, y1)`` is a vertical hairline.

        Raises
        ------
        GraphValidationError, GraphTypeError
            Non-finite coordinates, or a colour that is not 3 or 4 numbers in 0..1.
        """
        x0, y0, x1, y1 = float(x0), float(y0), float(x1), float(y1)
        if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
            raise GraphValidationError(f"{self._owner} rectangle must be finite (got {[x0, y0, x1, y1]})")
        r = self.pixel_ratio
        x0, y0, x1, y1 = x0 * r, y0 * r, x1 * r, y1 * r
        a0, a1 = (x0, x1) if x0 <= x1 else (x1, x0)
        b0, b1 = (y0, y1) if y0 <= y1 else (y1, y0)
        a0, b0 = math.floor(a0 + 1e-6), math.floor(b0 + 1e-6)
        self._rects.append((a0, b0, max(a0 + 1, round(a1)), max(b0 + 1, round(b1))))
        key = color if isinstance(color, tuple) else None
        try:
            packed = self._rgba8.get(key)
        except TypeError:  # unhashable parts: rgba names the mistake
            key = packed = None
        if packed is None:
            packed = tuple(round(c * 255) for c in rgba(self._owner, color))
            if key is not None and len(self._rgba8) < 256:
                self._rgba8[key] = packed
        self._colors.append(packed)
        self._queued += 1
        self._dirty = True

    def add_many(self, rects, *, colors) -> None:
        """Queue ``n`` rectangles at once: ``rects`` ``(n, 4)`` corners
        ``x0, y0, x1, y1`` (logical pixels) and ``colors`` ``(n, 3 or 4)`` in
        0..1, snapped as :meth:`add` snaps them (vectorised: a colour ramp
        of many slices costs one call)."""
        owner = f'RectLayer "{self.label}"'
        r = np.asarray(rects, np.float64).reshape(-1, 4) * self.pixel_ratio
        c = np.asarray(colors, np.float64)
        if c.ndim != 2 or c.shape[0] != len(r) or c.shape[1] not in (3, 4):
            raise GraphValidationError(f"{owner} add_many needs one 3- or 4-component colour per rectangle "
                                       f"(got {c.shape} for {len(r)})")
        if c.shape[1] == 3:
            c = np.concatenate([c, np.ones((len(c), 1))], axis=1)
        if not np.all(np.isfinite(r)) or not np.all((c >= 0) & (c <= 1)):
            raise GraphValidationError(f"{owner} add_many needs finite rectangles and colours in 0..1")
        a0, a1 = np.minimum(r[:, 0], r[:, 2]), np.maximum(r[:, 0], r[:, 2])
        b0, b1 = np.minimum(r[:, 1], r[:, 3]), np.maximum(r[:, 1], r[:, 3])
        a0, b0 = np.floor(a0 + 1e-6), np.floor(b0 + 1e-6)
        a1, b1 = np.maximum(a0 + 1, np.round(a1)), np.maximum(b0 + 1, np.round(b1))
        self._flush()
        self._blocks.append((np.stack([a0, b0, a1, b1], axis=1).astype(np.int64),
                             np.round(c * 255).astype(np.uint8)))
        self._queued += len(r)
        self._dirty = True

    def instances(self) -> np.ndarray:
        """The queued rectangles as a :data:`RECT_INSTANCE_DTYPE` array (what :meth:`upload` writes)."""
        self._flush()
        out = np.empty(self._queued, RECT_INSTANCE_DTYPE)
        if len(out):
            out["rect"] = np.concatenate([rects for rects, _c in self._blocks])
            out["color"] = np.concatenate([colours for _r, colours in self._blocks])
        return out

    def upload(self, queue, *, target_size) -> int:
        """Write the queued rectangles and the target size (physical pixels)
        through ``queue``; returns the count :meth:`draw` records."""
        width, height = (float(v) for v in target_size)
        if not (width > 0 and height > 0):
            raise GraphValidationError(f'RectLayer "{self.label}" target_size must be positive (got {target_size!r})')
        instances = self.instances()
        if len(instances) > self.capacity:
            self._allocate(1 << (len(instances) - 1).bit_length())
        params = np.array([width, height, 0, 0], np.float32).tobytes()
        if params != self._uniform_bytes:  # the target size rarely changes: skip the write
            queue.write_buffer(self._uniform, 0, params)
            self._uniform_bytes = params
        if len(instances):
            queue.write_buffer(self.instance_buffer, 0, instances.tobytes())
        self.rect_count = len(instances)
        self._dirty = False
        return self.rect_count

    def draw(self, render_pass) -> None:
        """Record one ``draw(4, rect_count)`` of the last upload (nothing when empty).

        Raises
        ------
        GraphStateError
            Rectangles were added or cleared since the last :meth:`upload`.
        """
        if self._dirty:
            raise GraphStateError(f'RectLayer "{self.label}" rectangles changed since the last upload '
                                  f"({self._queued} queued): call upload(queue, target_size=...) before draw")
        if self.rect_count == 0:
            return
        render_pass.set_pipeline(self._pipeline)
        render_pass.set_bind_group(0, self._bind_group)
        render_pass.set_vertex_buffer(0, self.instance_buffer, 0, self.rect_count * RECT_INSTANCE_DTYPE.itemsize)
        render_pass.draw(4, self.rect_count)

    def destroy(self) -> None:
        """Free the instance and uniform buffers."""
        self.instance_buffer.destroy()
        self._uniform.destroy()
