"""The text and axes of :class:`~gpuviz.widgets.DataAnalysis`: titles, axes,
the heatmap's colour bar, the histogram's count and CDF axes with the value
range shaded, group labels, values and legend, and the tooltip.

Labels that depend on GPU results (the colour range of this frame's grid,
the histogram's largest count, the group means) come from a
:class:`~gpuviz.graph.GPUReadbackRing` sample of those buffers, recorded
after the graph in each encoding and read without waiting in a later frame:
the frame loop never stalls. Until a newer sample arrives the labels are
those of the last one read, and :meth:`AnalysisOverlay.poll` says when a
sample changed them. ``draw_offscreen`` calls :meth:`AnalysisOverlay.settle`,
which waits, so its labels are exact. The colours themselves never wait:
the heatmap reads the GPU-computed range in the same frame
(:class:`~gpuviz.render.colour_range.GPUColourRange`).

The overlay is drawn by the presentation pass, on top of the blitted plot
(:class:`~gpuviz.widgets.analysis.render.PlotPresenter`), not by the graph:
a new label sample or a moving tooltip redraws text without re-running the
graph, and live canvases and ``draw_offscreen`` share that one path.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph.readback_ring import GPUReadbackRing
from ...render.axes import Axis
from ...render.colour_bar import colour_bar_layout
from ...render.colour_range import COLOUR_NORMALISATIONS, ROBUST_PERCENTILE
from ...render.number_format import format_numbers
from ...render.overlay import MUTED_COLOR, TEXT_COLOR, PlotOverlay
from .layout import CDF_COLOR, GROUP_PALETTE, PLOT_TOP, RAMP, panel_layout

__all__ = ["AnalysisOverlay", "COLOUR_SCALES", "resolve_colour_scale"]

#: ``colour_scale`` values of the widget: ``auto`` picks per operation (:func:`resolve_colour_scale`).
COLOUR_SCALES = ("auto",) + COLOUR_NORMALISATIONS
_SHADE = (0.45, 0.70, 1.0, 0.13)
_SHADE_EDGE = (0.55, 0.78, 1.0, 0.85)
_DIM = (0.45, 0.45, 0.50, 1.0)
_NOTE_DROP = 7.0  # below the plot to the x axis title's row, less a line: Axis tick length + pad + 1


def resolve_colour_scale(colour_scale: str, operation: str, value_stats) -> str:
    """The normalisation ``colour_scale`` means for ``operation``.

    ``auto``: ``robust`` (1st..99th percentile of the non-empty cells) for
    mean, min and max, whose few outlier cells would otherwise squash every
    other cell into one colour; ``log`` for count (row densities span
    decades: log shows sparse and dense regions at once, and a count is
    never <= 0 in a non-empty cell); ``log`` for sum of a value column with
    no negative values (sums behave like weighted counts), ``robust``
    otherwise (a log scale cannot show negative sums).
    """
    if colour_scale != "auto":
        return colour_scale
    if operation == "count":
        return "log"
    if operation == "sum":
        return "log" if value_stats is not None and value_stats.lo >= 0 else "robust"
    return "robust"


def _state_key(params) -> tuple:
    """Everything of the view parameters that labels depend on, hashable."""
    enabled = getattr(params, "group_enabled", None)
    return (tuple(params.columns.items()), params.operation, params.bins, params.scale,
            np.asarray(params.edges).tobytes(), tuple(params.bounds), tuple(params.value_range),
            None if enabled is None else np.asarray(enabled).tobytes())


def _hover_key(hover):
    if hover is None:
        return None
    x, y, lines = hover
    return (float(x), float(y), tuple(str(line) for line in lines))


def _logical(rect, ratio):
    return tuple(v / ratio for v in rect)


def _frozen(value):
    """``value`` as a hashable cache-key part (arrays by their bytes, lists as tuples)."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


_LAYOUT_CACHE = 64  # axis / colour-bar layouts kept per overlay (a few per parameter state)


class AnalysisOverlay:
    """The labels of one DataAnalysis graph, drawn at the end of its render node.

    Parameters
    ----------
    device : wgpu.GPUDevice
    outputs : dict
        The graph's output GPUData by name (``colour_range``, ``hist_max``,
        ``group_extent``, ``group_means``): the values the labels sample.
    group_count : int

    Attributes
    ----------
    enabled : bool
        False: nothing but the plots is drawn (the benchmark's "without text").
    pixel_ratio : float
        Of the frame being drawn (set by :meth:`prepare`).
    stats : dict or None
        The latest sample read: ``colour_range`` ``(lo, hi)``, ``colour_count``,
        ``normalisation``, ``hist_max``, ``group_extent``, ``group_means``.
    colour_bar : ColourBarLayout or None
        The colour bar queued by the last :meth:`prepare` (tests compare
        its ``extremes`` and labels with the data).

    Notes
    -----
    Never submits and never waits in the frame path: :meth:`sample` records
    copies into the caller's encoder, :meth:`poll` starts maps of submitted
    samples and reads finished ones. Only :meth:`settle` waits.
    """

    def __init__(self, device, *, outputs, group_count: int):
        self.device, self.outputs, self.group_count = device, outputs, int(group_count)
        self.enabled = True
        self.pixel_ratio = 1.0
        self.stats = None
        self.colour_bar = None
        self._plot = None
        self._layouts = {}  # (kind, inputs) -> layout of the current PlotOverlay (same measure, line height)
        self._parts = [("colour_range", 16), ("hist_max", 4)]
        if self.group_count:
            self._parts += [("group_extent", 8), ("group_means", 4 * self.group_count)]
        self._ring = GPUReadbackRing(device, byte_length=sum(n for _k, n in self._parts), slot_count=4,
                                     label="data-analysis-labels")
        self._recorded, self._pending = [], []
        # A sample is mapped only once the encoder it was copied in has been
        # submitted (a submit using a buffer pending a map aborts the process
        # in wgpu-native), whatever runs in between (poll, prepare, or another
        # encoder submitted first; the widget no longer nests frames, but this
        # rule does not rely on that). Until then it is
        # held as (slot, encoder, recorded in a canvas draw): the widget says
        # submitted(encoder) after its own submits; a canvas draw's samples
        # are released by the next begin_draw (the canvas submits right after
        # draw returns). Serials keep a late-released sample from replacing
        # a newer one's stats.
        self._drawing, self._held = False, []
        self._serials, self._next_serial, self._read_serial = {}, 0, -1
        self._drawn = None
        self._key = None  # what the uploaded labels were laid out from
        self._serial = 0  # samples read

    # ------------------------------------------------------------ readback
    def sample(self, encoder) -> bool:
        """Record copies of the label inputs into a free ring slot (after the
        graph in ``encoder``); False when every slot is still in flight."""
        if not self.enabled:
            return False
        slot = self._ring.try_acquire()
        if slot is None:
            return False
        offset = 0
        for name, size in self._parts:
            data = self.outputs[name]
            slot.copy(encoder, data.buffer, source_offset=data.byte_offset, byte_length=size,
                      destination_offset=offset)
            offset += size
        self._serials[slot] = self._next_serial
        self._next_serial += 1
        self._held.append((slot, encoder, self._drawing))
        return True

    def _release(self, done) -> None:
        keep = []
        for item in self._held:
            if done(item):
                self._recorded.append(item[0])
            else:
                keep.append(item)
        self._held = keep

    def submitted(self, encoder) -> None:
        """The caller submitted ``encoder``: the samples copied in it may map."""
        self._release(lambda item: item[1] is encoder)

    def begin_draw(self) -> None:
        """A canvas draw starts: earlier draws' encoders were submitted (the
        canvas submits each when its draw returns); samples recorded until
        :meth:`end_draw` are held like any other until then."""
        self._release(lambda item: item[2])
        self._drawing = True

    def end_draw(self) -> None:
        """The draw returned its encoder to the canvas (which submits it)."""
        self._drawing = False

    @property
    def pending(self) -> bool:
        """Samples recorded or in flight that have not been read yet."""
        return bool(self._recorded or self._pending or self._held)

    def _collect(self, *, wait: bool) -> None:
        # Every slot in _recorded was copied into by an encoder already
        # submitted (held ones join after their draw returned).
        for slot in self._recorded:
            slot.map_async()
        self._pending += self._recorded
        self._recorded = []
        still = []
        for slot in self._pending:
            data = slot.read(wait=wait)
            if data is None:
                still.append(slot)
            else:
                serial = self._serials.pop(slot, 0)
                if serial > self._read_serial:  # an older sample released late never replaces a newer one
                    self._read_serial = serial
                    self.stats = self._parse(data)
                    self._serial += 1
        self._pending = still

    def _parse(self, data: bytes) -> dict:
        raw = np.frombuffer(data, np.uint8)
        colour = raw[:16].view(np.float32)
        stats = {"colour_range": (float(colour[0]), float(colour[1])), "colour_count": int(colour[2]),
                 "normalisation": COLOUR_NORMALISATIONS[min(int(colour[3]), 2)],
                 "hist_max": int(raw[16:20].view(np.uint32)[0])}
        if self.group_count:
            extent = raw[20:28].view(np.float32)
            stats["group_extent"] = (float(extent[0]), float(extent[1]))
            stats["group_means"] = raw[28:28 + 4 * self.group_count].view(np.float32).copy()
        return stats

    def poll(self) -> bool:
        """Start maps of submitted samples and read finished ones, never
        waiting; True when the labels drawn last are out of date."""
        self._collect(wait=False)
        return self.enabled and self._changed()

    def settle(self) -> None:
        """Wait for every sample in flight (``draw_offscreen``: exact labels).
        Only after every encoder that sampled was submitted, outside a draw."""
        self._release(lambda item: True)
        self._collect(wait=True)

    def _changed(self) -> bool:
        if self.stats is None or self._drawn is None:
            return self.stats is not self._drawn
        return any(not np.array_equal(self.stats[k], self._drawn[k], equal_nan=True)
                   if isinstance(self.stats[k], np.ndarray) else self.stats[k] != self._drawn[k]
                   for k in self.stats)

    # -------------------------------------------------------------- labels
    def before_encode(self, queue, *, graph, params, data, colour_scale="auto", pixel_ratio=1.0) -> str:
        """Before the graph is encoded: write the heatmap's normalisation
        (``colour_scale`` resolved for the operation) into its colour-range
        node and take the frame's pixel ratio (the render node insets its
        plots by it); returns the normalisation."""
        self.pixel_ratio = float(pixel_ratio)
        value_stats = data.stats.get(params.columns["value"])
        normalisation = resolve_colour_scale(colour_scale, params.operation, value_stats)
        graph.colour_range.set_normalisation(normalisation, percentile=ROBUST_PERCENTILE, queue=queue)
        return normalisation

    def prepare(self, queue, *, params, data, render_size, target_size=None, pixel_ratio=1.0, hover=None,
                brush=None) -> None:
        """Before presenting a frame: lay out every label from host state and
        the latest sample and write them (``queue.write_buffer``).

        ``render_size`` is the plot's size (physical pixels, what the graph
        drew), ``target_size`` the canvas target it is presented into
        (default: the same); labels are laid out over the plot in logical
        pixels (``render_size / pixel_ratio``) and drawn at the target's scale.
        """
        self._collect(wait=False)
        width, height = render_size
        target = tuple(render_size if target_size is None else target_size)
        ratio = float(pixel_ratio)
        key = (tuple(render_size), target, ratio, self.enabled, _state_key(params), _hover_key(hover),
               None if brush is None else tuple(brush), self._serial)
        if key == self._key:
            return  # the buffers hold these labels already (a steady frame lays out nothing)
        self._key = key
        drawn_ratio = ratio * target[0] / width
        if self._plot is None or drawn_ratio != self._plot.pixel_ratio:
            if self._plot is not None:
                self._plot.destroy()
            self._plot = PlotOverlay(self.device, pixel_ratio=drawn_ratio, label="data-analysis-overlay")
            self._layouts = {}
        self.pixel_ratio = ratio
        plot = self._plot
        plot.clear()
        self.colour_bar = None
        if self.enabled:
            layout = panel_layout(width, height, bool(self.group_count), pixel_ratio=ratio)
            panels = {name: {k: _logical(r, ratio) for k, r in rects.items()} for name, rects in layout.items()}
            self._heatmap(plot, panels["heatmap"], params, data)
            self._histogram(plot, panels["histogram"], params, brush)
            if self.group_count:
                self._groups(plot, panels["groups"], params, data)
            if hover is not None:
                x, y, lines = hover
                plot.tooltip(lines, x=x, y=y, bounds=(0.0, 0.0, width / ratio, height / ratio))
        plot.upload(queue, target_size=target)
        self._drawn = self.stats

    def invalidate(self) -> None:
        """Lay the labels out again at the next :meth:`prepare` even if nothing changed."""
        self._key = None

    def draw(self, render_pass) -> None:
        """Record the prepared labels into ``render_pass`` (the presentation pass)."""
        if self._plot is not None:
            self._plot.draw(render_pass)

    def _cached(self, key, make):
        """``make()``, or its result for the same ``key`` from an earlier
        layout: axis tick selection (which measures every candidate label)
        and colour-bar layouts are pure functions of their inputs and the
        overlay's font, and most of them survive a parameter change."""
        out = self._layouts.get(key)
        if out is None:
            if len(self._layouts) >= _LAYOUT_CACHE:
                self._layouts.clear()
            out = self._layouts[key] = make()
        return out

    def _axis(self, plot, rect, **spec):
        """``Axis(**spec)`` and its layout over ``rect`` (cached, see :meth:`_cached`)."""
        key = ("axis", tuple(rect), _frozen(tuple(sorted(spec.items()))))

        def make():
            axis = Axis(**spec)
            return axis, axis.layout(rect, measure=plot.measure, line_height=plot.line_height)
        return self._cached(key, make)

    def _title(self, plot, rects, text):
        x, y, w, _h = rects["frame"]
        plot.text(text, x=x + 6, y=y + 3, title=True, color=TEXT_COLOR, max_width=max(w - 12, 8))

    def _heatmap(self, plot, rects, params, data) -> None:
        c = params.columns
        op = params.operation
        what = "rows" if op == "count" else f"{op} of {c['value']}"
        self._title(plot, rects, f"{what} by {c['x']} \u00d7 {c['y']}")
        x0, y0, x1, y1 = params.bounds
        lh = plot.line_height
        whole = {role: bool(getattr(data.stats.get(c[role]), "integer", False)) for role in ("x", "y")}
        for spec in (dict(side="bottom", domain=(x0, x1), title=c["x"], integer=whole["x"]),
                     dict(side="left", domain=(y0, y1), title=c["y"], integer=whole["y"])):
            plot.axis(self._axis(plot, rects["plot"], **spec)[1])
        stats = self.stats
        if stats is None or not all(math.isfinite(v) for v in stats["colour_range"]):
            return
        used = stats["normalisation"]
        lo, hi = stats["colour_range"]
        # the statistic above the bar, how it was normalised below it
        name = "rows" if op == "count" else op
        note = {"linear": "min\u2013max", "log": "log scale",
                "robust": f"p{ROBUST_PERCENTILE:g}\u2013p{100 - ROBUST_PERCENTILE:g}"}[used]
        fx, _fy, fw, _fh = rects["frame"]
        bar = rects["colour_bar"]
        spec = dict(rect=tuple(bar), domain=(lo, hi), normalisation=used, title=name, title_width=fx + fw - bar[0] - 2)
        self.colour_bar = self._cached(("colour_bar", _frozen(tuple(sorted(spec.items())))), lambda: colour_bar_layout(
            stops=RAMP, measure=plot.measure, line_height=lh, **spec))
        plot.colour_bar(self.colour_bar)
        # in the x axis's title row, right of the plot: the tick labels' row has the last tick's label
        # centred on the plot's right edge, reaching into the colour bar's column after a pan
        plot.text(note, x=bar[0], y=bar[1] + bar[3] + _NOTE_DROP + lh, anchor=("left", "top"), color=MUTED_COLOR,
                  max_width=fx + fw - bar[0] - 2)

    def _histogram(self, plot, rects, params, brush) -> None:
        value = params.columns["value"]
        edges = np.asarray(params.edges, np.float64)
        self._title(plot, rects, f"{value}: {params.bins} {params.scale} bins, CDF")
        area = rects["plot"]
        if params.scale == "log" and edges[0] > 0:
            spec = dict(domain=(float(edges[0]), float(edges[-1])), scale="log")
        elif params.scale == "custom":
            spec = dict(edges=edges, scale="edges")
        else:
            spec = dict(domain=(float(edges[0]), float(edges[-1])))
        x_axis, x_layout = self._axis(plot, area, side="bottom", title=value, **spec)
        lo, hi = brush if brush is not None else params.value_range
        px = x_axis.to_pixel(np.clip([lo, hi], edges[0], edges[-1]), area)
        if np.all(np.isfinite(px)) and (lo > edges[0] or hi < edges[-1]):  # a range narrower than the bins
            a, b = sorted(float(v) for v in px)
            top, bottom = area[1], area[1] + area[3]
            plot.rect(a, top, b, bottom, color=_SHADE)
            for edge in (a, b):
                plot.rect(edge, top, edge, bottom, color=_SHADE_EDGE)
        plot.axis(x_layout)
        cdf = self._axis(plot, area, side="right", domain=(0.0, 1.0 / PLOT_TOP), title="CDF")[1]
        plot.axis(cdf, text_color=CDF_COLOR + (1.0,))
        if self.stats is not None:
            top = max(self.stats["hist_max"], 1) / PLOT_TOP
            plot.axis(self._axis(plot, area, side="left", domain=(0.0, top), title="count")[1])

    def _groups(self, plot, rects, params, data) -> None:
        labels = list(data.group_labels)
        value, group = params.columns["value"], data.group
        self._title(plot, rects, f"mean {value} by {group}")
        x, y, w, _h = rects["frame"]
        lh, area = plot.line_height, rects["plot"]
        items = [(label, GROUP_PALETTE[i % len(GROUP_PALETTE)]) for i, label in enumerate(labels)]
        plot.legend(items, x=x + 6, y=y + 3 + plot.title_height + 1, max_width=w - 12, max_rows=1)
        plot.axis(self._axis(plot, area, side="bottom", scale="category", categories=labels, title=group)[1])
        if self.stats is None:
            return
        lo, hi = self.stats["group_extent"]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        if hi <= lo:
            hi = lo + 1.0
        axis, layout = self._axis(plot, area, side="left", domain=(lo, lo + (hi - lo) / PLOT_TOP))
        plot.axis(layout)
        means = self.stats["group_means"]
        band = area[2] / max(len(labels), 1)
        finite = means[np.isfinite(means)]
        texts = iter(format_numbers(finite.tolist(), digits=3) if len(finite) else ())
        texts = [next(texts) if math.isfinite(m) else "" for m in means]
        # values over the bars only when every one fits its band (else the tooltip tells them)
        show = max((plot.measure(t) for t in texts), default=0.0) <= band - 2
        enabled = getattr(params, "group_enabled", np.ones(len(labels), bool))
        for i, (mean, text) in enumerate(zip(means, texts)):
            centre = area[0] + (i + 0.5) * band
            if not enabled[i]:  # a deselected group: say so where its bar was
                plot.text("off", x=centre, y=area[1] + area[3] - 2, anchor=("center", "bottom"), color=_DIM,
                          max_width=band)
            elif text and show:
                top = float(axis.to_pixel([max(mean, 0.0)], area)[0])
                plot.text(text, x=centre, y=max(top - 1, area[1] - lh + 2), anchor=("center", "bottom"),
                          color=MUTED_COLOR)

    def destroy(self) -> None:
        """Free the overlay's buffers and the readback ring."""
        if self._plot is not None:
            self._plot.destroy()
        self._ring.destroy()
