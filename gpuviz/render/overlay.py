"""PlotOverlay: axes, colour bars, titles, legends and tooltips of a plot, in a few draws.

One overlay owns a :class:`~gpuviz.render.shapes.RectLayer` and
:class:`~gpuviz.render.TextLayer` objects (tick labels; titles; and a top
pair for tooltips, which must cover everything else). A consumer clears it,
queues an :class:`~gpuviz.render.axes.AxisLayout`, a
:class:`~gpuviz.render.colour_bar.ColourBarLayout`, titles, legends and a
tooltip, uploads once per frame and records :meth:`PlotOverlay.draw` at the
end of its render pass: five instanced draws whatever the number of labels.
Logical pixels, origin top-left; the target is ``pixel_ratio`` times larger.
"""

from __future__ import annotations

from .glyph_atlas import glyph_atlas
from .shapes import RectLayer
from .text import TextLayer

__all__ = ["PlotOverlay", "TEXT_COLOR", "MUTED_COLOR", "LINE_COLOR", "GRID_COLOR", "TOOLTIP_BACKGROUND"]

TEXT_COLOR = (0.88, 0.88, 0.90, 1.0)
MUTED_COLOR = (0.66, 0.66, 0.70, 1.0)
LINE_COLOR = (0.55, 0.55, 0.60, 1.0)
GRID_COLOR = (1.0, 1.0, 1.0, 0.07)
TOOLTIP_BACKGROUND = (0.02, 0.02, 0.03, 0.92)


class PlotOverlay:
    """Queued plot decorations, drawn on top of a plot in one render pass.

    Parameters
    ----------
    device : wgpu.GPUDevice
    pixel_ratio : float
    font_size, title_size : float
        Logical em sizes of labels and of titles.
    target_format : str
    label : str

    Attributes
    ----------
    line_height, title_height : float
        Logical heights of one label line and one title line.

    Notes
    -----
    Draws what it is given; it computes no data ranges and reads nothing
    back. Never submits: :meth:`upload` writes through the queue given and
    :meth:`draw` records into the caller's pass (which it leaves with its
    own pipeline bound).
    """

    def __init__(self, device, *, pixel_ratio: float = 1.0, font_size: float = 11.0, title_size: float = 12.0,
                 target_format: str = "rgba8unorm", label: str = "overlay"):
        self.device, self.pixel_ratio = device, float(pixel_ratio)
        small = glyph_atlas(device, font_size=font_size, pixel_ratio=pixel_ratio)
        big = glyph_atlas(device, font_size=title_size, pixel_ratio=pixel_ratio)
        common = dict(target_format=target_format)
        self.rects = RectLayer(device, pixel_ratio=pixel_ratio, label=f"{label}-rects", **common)
        self.labels = TextLayer(device, atlas=small, label=f"{label}-labels", **common)
        self.titles = TextLayer(device, atlas=big, label=f"{label}-titles", **common)
        self.top_rects = RectLayer(device, pixel_ratio=pixel_ratio, capacity=8, label=f"{label}-top-rects", **common)
        self.top_labels = TextLayer(device, atlas=small, capacity=256, label=f"{label}-top-labels", **common)
        self._layers = (self.rects, self.labels, self.titles, self.top_rects, self.top_labels)
        self.line_height = small.line_height / small.pixel_ratio
        self.title_height = big.line_height / big.pixel_ratio
        self._gradient = None  # (slices, rects, colours) of the last colour bar queued
        self._queued_axes = {}  # (id(layout), colours) -> (layout, rect items, label items)

    def measure(self, text: str) -> float:
        """Logical width of a label (the ``measure`` of axis layouts)."""
        return self.labels.measure(text)[0]

    def measure_title(self, text: str) -> float:
        """Logical width of a title."""
        return self.titles.measure(text)[0]

    def clear(self) -> None:
        """Forget everything queued (the next :meth:`upload` writes nothing)."""
        for layer in self._layers:
            layer.clear()

    # --------------------------------------------------------------- queueing
    def rect(self, x0, y0, x1, y1, *, color) -> None:
        """Queue a filled rectangle under the labels (see :meth:`RectLayer.add`)."""
        self.rects.add(x0, y0, x1, y1, color=color)

    def text(self, text, *, x, y, anchor=("left", "top"), color=TEXT_COLOR, max_width=None, clip=None,
             title=False):
        """Queue one label (a title in the larger font with ``title=True``); returns its box."""
        layer = self.titles if title else self.labels
        return layer.add(text, x=x, y=y, anchor=anchor, color=color, max_width=max_width, clip=clip)

    def axis(self, layout, *, color=LINE_COLOR, text_color=MUTED_COLOR, grid_color=GRID_COLOR) -> None:
        """Queue an :class:`~gpuviz.render.axes.AxisLayout` (grid, line, ticks, labels, title).

        The same layout object queued again with the same colours (a consumer
        that caches its layouts) reuses what it queued the first time."""
        key = (id(layout), color, text_color, grid_color)
        try:
            hit = self._queued_axes.get(key)
        except TypeError:  # unhashable colours: not cached
            key = hit = None
        if hit is not None and hit[0] is layout:
            self.rects.extend(hit[1])
            self.labels.extend(hit[2])
            return
        marks = self.rects.queued_count, self.labels.label_count
        self._queue_axis(layout, color, text_color, grid_color)
        if key is not None:
            if len(self._queued_axes) >= 64:
                self._queued_axes.clear()
            self._queued_axes[key] = (layout, self.rects.queued(marks[0]), self.labels.queued(marks[1]))

    def _queue_axis(self, layout, color, text_color, grid_color) -> None:
        for x0, y0, x1, y1 in layout.grid:
            self.rects.add(x0, y0, x1, y1, color=grid_color)
        for x0, y0, x1, y1 in layout.segments:
            self.rects.add(x0, y0, x1, y1, color=color)
        for text, x, y, anchor, max_width in layout.labels:
            self.labels.add(text, x=x, y=y, anchor=anchor, color=text_color, max_width=max_width)
        if layout.title is not None:
            text, x, y, anchor, max_width = layout.title
            self.labels.add(text, x=x, y=y, anchor=anchor, color=TEXT_COLOR, max_width=max_width)

    def colour_bar(self, layout, *, color=LINE_COLOR, text_color=MUTED_COLOR) -> None:
        """Queue a :class:`~gpuviz.render.colour_bar.ColourBarLayout`."""
        if self._gradient is None or self._gradient[0] is not layout.slices:  # the same bar's gradient: reuse
            self._gradient = (layout.slices, [part[:4] for part in layout.slices], [part[4] for part in layout.slices])
        self.rects.add_many(self._gradient[1], colors=self._gradient[2])
        for x0, y0, x1, y1 in layout.segments:
            self.rects.add(x0, y0, x1, y1, color=color)
        for text, x, y, anchor, max_width in layout.labels:
            self.labels.add(text, x=x, y=y, anchor=anchor, color=text_color, max_width=max_width)
        if layout.title is not None:
            text, x, y, anchor, max_width = layout.title
            self.labels.add(text, x=x, y=y, anchor=anchor, color=TEXT_COLOR, max_width=max_width)

    def legend(self, items, *, x, y, max_width, max_rows: int = 2, swatch: float = 9.0,
               label_width: float = 90.0) -> float:
        """Queue ``items`` (``(label, rgb)``) as swatch + label entries flowing
        left to right from ``(x, y)`` in at most ``max_rows`` rows of
        ``max_width`` (labels truncated to ``label_width``); when not all
        fit, the last entry is ``+N more``. Returns the height used."""
        lh, gap = self.line_height, 10.0
        items = list(items)
        widths = []
        placed, row, cx = [], 0, x
        for k, (text, _rgb) in enumerate(items):
            width = swatch + 4.0 + min(self.measure(text), label_width)
            widths.append(width)
            if cx > x and cx + width > x + max_width:
                row, cx = row + 1, x
            if row >= max_rows:
                break
            placed.append((k, row, cx))
            cx += width + gap
        while len(placed) < len(items) and placed:  # make room for "+N more" on the last row
            k, row, cx = placed[-1]
            more = self.measure(f"+{len(items) - k - 1} more")
            end = cx + widths[k] + gap
            if row == max_rows - 1 and end + more > x + max_width:
                placed.pop()
                continue
            self.labels.add(f"+{len(items) - k - 1} more", x=end, y=y + row * lh, anchor=("left", "top"),
                            color=MUTED_COLOR)
            break
        for k, row, cx in placed:
            text, rgb = items[k]
            top = y + row * lh
            self.rects.add(cx, top + (lh - swatch) / 2, cx + swatch, top + (lh + swatch) / 2, color=rgb)
            self.labels.add(text, x=cx + swatch + 4.0, y=top, anchor=("left", "top"), color=TEXT_COLOR,
                            max_width=label_width)
        return ((placed[-1][1] + 1) if placed else 1) * lh

    def tooltip(self, lines, *, x, y, bounds, offset: float = 12.0) -> tuple | None:
        """Queue a tooltip box with ``lines`` beside the cursor ``(x, y)``,
        kept inside ``bounds = (x0, y0, x1, y1)`` (flipped to the cursor's
        left / above it near an edge). Returns the box, or None for no lines."""
        lines = [str(line) for line in lines if str(line)]
        if not lines:
            return None
        pad, lh = 5.0, self.line_height
        width = max(self.top_labels.measure(line)[0] for line in lines) + 2 * pad
        height = lh * len(lines) + 2 * pad
        bx0, by0, bx1, by1 = bounds
        left = x + offset if x + offset + width <= bx1 else x - offset - width
        top = y + offset if y + offset + height <= by1 else y - offset - height
        left, top = max(bx0, min(left, bx1 - width)), max(by0, min(top, by1 - height))
        self.top_rects.add(left, top, left + width, top + height, color=TOOLTIP_BACKGROUND)
        for edge in ((left, top, left + width, top), (left, top + height, left + width, top + height),
                     (left, top, left, top + height), (left + width, top, left + width, top + height)):
            self.top_rects.add(*edge, color=LINE_COLOR)
        for i, line in enumerate(lines):
            self.top_labels.add(line, x=left + pad, y=top + pad + i * lh, anchor=("left", "top"), color=TEXT_COLOR)
        return (left, top, left + width, top + height)

    # -------------------------------------------------------------------- GPU
    def upload(self, queue, *, target_size) -> None:
        """Write every layer's queued shapes (``queue.write_buffer`` only)."""
        for layer in self._layers:
            layer.upload(queue, target_size=target_size)

    def draw(self, render_pass) -> None:
        """Record rectangles, labels, titles, then the tooltip's box and text."""
        for layer in self._layers:
            layer.draw(render_pass)

    def destroy(self) -> None:
        """Free every layer's buffers (the glyph atlases are shared and cached per device)."""
        for layer in self._layers:
            layer.destroy()
