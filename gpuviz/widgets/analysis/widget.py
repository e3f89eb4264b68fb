"""DataAnalysis: explore an Arrow table on the GPU in one notebook widget.

A heatmap of a value over two position columns (grid aggregation), the
value's histogram with its CDF (inclusive scan) on linear or log bins, and
per-group means, all drawn by one compiled command graph into one
:class:`~gpuviz.widgets.GPUCanvas`, with the :class:`GraphInspector` beside
it. Every control is a parameter of that graph: none recompiles it (see
:mod:`gpuviz.widgets.analysis.graph` for how each one is expressed).

The widget composes the parts of this subpackage and owns the frame loop:
:mod:`.data` (upload), :mod:`.parameters` (host-side view state),
:mod:`.graph` (the GPU side), :mod:`.render` (drawing), :mod:`.controls`
(ipywidgets), :mod:`.interaction` (pointer events: pan and zoom, plus
:mod:`.brushing` and :mod:`.hover`), :mod:`.frame_gate` (when a change
renders: never inside another frame).
"""

from __future__ import annotations

import math
import numbers
import time

import ipywidgets as widgets
import numpy as np

from ...device import device_capabilities, request_device
from ...errors import GraphTypeError, GraphValidationError
from ...tables import GPUData
from ...tables.readback import read_many
from ..canvas import GPUCanvas, draw_offscreen
from ..inspector import GraphInspector
from ..lifecycle import WidgetLifecycle, close_widget_tree, guarded
from .controls import AnalysisControls
from .data import prepare_table
from .frame_gate import FrameGate
from .graph import DataAnalysisGraph
from .interaction import PanZoom, PointerTools
from .labels import COLOUR_SCALES
from .parameters import AnalysisParameters, check_int, check_operation
from .render import PlotPresenter, panel_rects

__all__ = ["DataAnalysis"]

_TIMESTAMP_INTERVAL = 0.5  # seconds between frames encoded with per-node GPU timestamps


class DataAnalysis(WidgetLifecycle, widgets.HBox):
    """Heatmap, histogram + CDF and group bars of an Arrow table, on the GPU.

    Parameters
    ----------
    table : pyarrow.Table or RecordBatch, or a pandas / polars DataFrame
        Converted through Arrow. Numeric columns (integers, floats,
        booleans) are cast to float32 (nulls become NaN) and uploaded once,
        one GPU chunk per record batch; they are never uploaded again.
    x, y : str
        Numeric columns giving each row's heatmap position.
    value : str
        Numeric column aggregated in the heatmap and groups, counted by the
        histogram and filtered by the value-range mask.
    group : str, optional
        Integer, boolean, string or dictionary column: one bar per distinct
        value (sorted), at most 256. Nulls belong to no group. With
        ``lookup``, the lookup's name (the default then).
    lookup : dict, optional
        ``{name: (dimension, key)}`` or ``{name: (dimension, table_key,
        dimension_key)}``: group by column ``name`` of ``dimension`` (a
        table of any kind ``table`` may be), each row taking the value of
        the dimension row whose key equals its own, joined on the GPU
        (e.g. ``lookup={"manufacturer": (planes, "tailnum")}`` groups
        flights by aircraft manufacturer, no pandas merge). Keys are integer,
        string or dictionary columns of one kind on both sides; the host
        gives both one dictionary (as :func:`gpuviz.arrow.hash_join` does),
        then a :class:`~gpuviz.GPUHashIndex` of the dimension keys, a
        :class:`~gpuviz.GPUHashIndexQuery` of every row's key and a
        :class:`~gpuviz.GPUGather` of the dimension's group codes write the
        group codes on the GPU, once, at construction. Rows whose key is
        null or absent from the dimension table form the last group,
        ``"(no match)"`` (always present, possibly empty; hide it like any
        group); rows whose dimension value is null belong to no group
        (``group_overflow``). Raises GraphValidationError at construction
        for a name that is not a column of ``dimension`` or that is a column
        of ``table``, a key missing on either side, key types that differ or
        are not integers / strings, a dimension key that repeats (saying how
        many rows repeat one), or more than one entry; GraphTypeError for a
        malformed entry.
    bins : int
        Histogram bins shown, 1 to ``max_bins``.
    max_bins : int
        Bins compiled into the histogram (the upper limit of the bins slider).
    grid_size : (int, int)
        Heatmap cells ``(columns, rows)``.
    operation : {"count", "sum", "mean", "min", "max"}
        Heatmap statistic of ``value`` per cell.
    device : wgpu.GPUDevice, optional
        Defaults to :func:`gpuviz.request_device`.
    size : (int, int)
        Canvas size in CSS pixels.

    Attributes
    ----------
    canvas : GPUCanvas
    inspector : GraphInspector
    x_dropdown, y_dropdown, value_dropdown, bins_slider, scale_toggle,
    operation_dropdown, range_slider, reset_button, full_button :
        The controls (ipywidgets); setting their values drives the widget
        exactly like the ``set_*`` methods (``full_button``: ``reset_view(full=True)``).
    status, legend, range_readout : ipywidgets.HTML
        Messages for refused control values (and, otherwise, the count of
        values beyond float32's range that every view leaves out); what each
        panel shows (columns, ranges, bins, colours and group labels), from
        host-side state only; the value range beside its slider.
    device_lost : str or None
        ``"GPU device lost: ..."`` once the widget found its device lost.

    Notes
    -----
    Rows count only when their value is finite and inside the value range
    (initially the column's finite extent): NaN and infinite values are
    excluded from every view. The heatmap shows rows whose position lies in
    the current bounds (initially the 0.5 and 99.5 percentiles of the finite
    x / y values, robust to outliers; ``reset_view(full=True)`` or the
    ``full extent`` button show every row; drag to pan, wheel to zoom,
    double-click or ``reset_view`` to go back); empty cells are NaN. An
    integer column with no more values in view than the axis has cells bins
    one cell per value (``results()["binning"]``); an integer value
    column's linear histogram bins hold whole values, one bin per value
    when ``bins`` allows (:attr:`bins` may be fewer than asked). Skewed
    positive value columns default to log histogram bins. Duplicated column
    names are refused for x, y, value and group and left out of the
    dropdowns otherwise; finite values beyond float32's range are counted in
    ``status`` and left out like infinities. Clicking a group bar hides that
    group from every view (:meth:`set_group_mask`).
    Each parameter change writes parameters, encodes the graph once (CPU
    encode times always, GPU timestamps at most every 0.5 s when the device
    has them, for the inspector) and submits; the canvas frame copies the
    rendered plot. On a page, changes that arrive while such an update still
    waits to be shown (a slider or brush drag while the browser is behind)
    are encoded together by the canvas frame that shows it. Frames never
    nest: a change made while one is encoded or drawn (by an observer of
    something the frame sets) is drawn by the next frame. No frame reads
    anything back; :meth:`results` does,
    explicitly. Raises GraphValidationError (a ValueError) at construction for
    a missing, non-numeric or all-NaN column, an unusable group column or an
    empty table, naming the column and the available ones.

    After :meth:`close`, every method but ``close`` raises GraphStateError.
    When the device is lost, the widget stops drawing and encoding, shows
    "GPU device lost: ..." in ``status`` and its methods raise
    GraphStateError saying so (the canvas hooks ``draw`` and
    ``handle_event`` report instead of raising).
    """


    def __init__(self, table, *, x: str, y: str, value: str, group: str | None = None, lookup: dict | None = None,
                 bins: int = 64, max_bins: int = 256, grid_size=(256, 256), operation: str = "mean", device=None,
                 size=(720, 420)):
        super().__init__()
        check_int("max_bins", max_bins, 1, 4096)
        check_int("bins", bins, 1, max_bins)
        try:
            grid_size = tuple(int(v) for v in grid_size)
        except (TypeError, ValueError):
            grid_size = ()
        if len(grid_size) != 2 or min(grid_size) < 1 or grid_size[0] * grid_size[1] > 4096 * 4096:
            raise GraphValidationError(f"DataAnalysis grid_size must be two positive integers (got {grid_size!r})")
        check_operation(operation)
        self.device = device or request_device()
        self.device_lost = None  # "GPU device lost: ..." once found
        limit = int(self.device.limits["max-storage-buffer-binding-size"])
        self.data = prepare_table(self.device, table, x=x, y=y, value=value, group=group, lookup=lookup,
                                  max_chunk_rows=max(1024, (limit - 4096) // 8))
        self.graph = None
        try:
            self._build(columns={"x": x, "y": y, "value": value}, bins=bins, max_bins=max_bins, grid_size=grid_size,
                        operation=operation, size=size)
        except BaseException:
            if self.graph is not None:
                self.graph.destroy()
            self.data.table.destroy()
            raise

    def _build(self, *, columns, bins, max_bins, grid_size, operation, size) -> None:
        """Parameters, graph, canvas, inspector and controls over the uploaded table."""
        params = self._params = AnalysisParameters(self.data, columns=columns, bins=bins, max_bins=max_bins,
                                                   operation=operation)
        self.graph = DataAnalysisGraph(self.device, self.data, columns=dict(params.columns), max_bins=max_bins,
                                       grid_size=grid_size, edges=params.padded_edges, bounds=params.bounds,
                                       value_range=params.value_range)
        self.graph.write_parameters(params)
        self._unwritten = False  # parameters changed since the graph last took them (written at the next encode)
        self.graph.render_size = self._canvas_size = tuple(int(v) for v in size)
        self._offscreen, self._offscreen_ratio = False, 1.0
        self._timestamps = device_capabilities(self.device).timestamps
        self._last_timestamps = float("-inf")
        self._gpu_times = {}
        self._dirty = True
        self._colour_scale = "auto"  # heatmap colour normalisation (labels.resolve_colour_scale)
        self._pan_zoom = PanZoom()
        self._pointer = PointerTools(self, params)  # brushing, hover tooltips (self._hover), cursor
        self._hover = None
        self.frames = 0
        self._presenter = PlotPresenter(self.device, self.graph.plot_texture)
        self.inspector = GraphInspector(self.graph.compiled)
        overflow = self.graph.group_overflow_buffer
        if overflow is not None:  # a GPU-resident count, sampled at low frequency, never in the frame path
            self.inspector.watch_counts({"rows with an unknown group": GPUData(overflow, format="uint32", length=1)})
        self.canvas = GPUCanvas(self, device=self.device, size=tuple(size))
        self._gate = FrameGate(self.canvas)  # frames never nest; a live canvas coalesces fast changes
        c = self._controls = AnalysisControls(self, params, self.data)
        self.x_dropdown, self.y_dropdown, self.value_dropdown = c.x_dropdown, c.y_dropdown, c.value_dropdown
        self.bins_slider, self.scale_toggle = c.bins_slider, c.scale_toggle
        self.operation_dropdown, self.range_slider, self.reset_button = (c.operation_dropdown, c.range_slider,
                                                                          c.reset_button)
        self.full_button, self.range_readout = c.full_button, c.range_readout
        self.status, self.legend = c.status, c.legend
        # The canvas column keeps its size (a shrinking column would resize the canvas whenever the
        # inspector's text changes); the inspector sits beside it, or below when the page is narrow.
        left = widgets.VBox(c.rows + [self.status, self.canvas, self.legend], layout=widgets.Layout(flex="0 0 auto"))
        self.inspector.layout.flex = "1 1 320px"
        self.layout.flex_flow, self.layout.align_items = "row wrap", "flex-start"  # (a new Layout would orphan one)
        self.children = [left, self.inspector]
        self._controls.update_legend()
        self._frame()

    # ----------------------------------------------------------- parameters
    @property
    def compile_count(self) -> int:
        """Graph compilations so far (1: parameters never recompile)."""
        return self.inspector.compile_count

    @property
    def columns(self) -> dict:
        """The current ``{"x", "y", "value"}`` column names."""
        return dict(self._params.columns)

    bins = property(lambda self: self._params.bins, doc="Histogram bins shown.")
    scale = property(lambda self: self._params.scale, doc='Histogram bins: "linear", "log" or "custom" (set_edges).')
    operation = property(lambda self: self._params.operation, doc="Heatmap statistic.")
    value_range = property(lambda self: self._params.value_range, doc="The value-range mask (inclusive).")
    bounds = property(lambda self: self._params.bounds, doc="Heatmap bounds (xmin, ymin, xmax, ymax).")

    @guarded
    def set_columns(self, *, x: str | None = None, y: str | None = None, value: str | None = None) -> None:
        """Switch the x, y and/or value column (per-encoding buffer overrides).

        A new x or y resets the heatmap bounds to the columns' extents; a new
        value resets the value range and the histogram edges to its extent.
        """
        self._params.set_columns(x=x, y=y, value=value)
        self._apply()

    @guarded
    def set_bins(self, bins: int) -> None:
        """Show ``bins`` histogram bins (1 to ``max_bins``) through new literal
        edges (custom edges give way to linear ones)."""
        self._params.set_bins(bins)
        self._apply()

    @guarded
    def set_scale(self, scale: str) -> None:
        """``"linear"`` (equal-width) or ``"log"`` (geometric from the smallest
        positive value; rows <= 0 then fall outside the histogram)."""
        self._params.set_scale(scale)
        self._apply()

    @guarded
    def set_edges(self, edges) -> None:
        """Irregular bins: 2 to ``max_bins + 1`` finite, strictly increasing
        edges; bin ``i`` is ``[e_i, e_i+1)`` and the last edge belongs to the
        last bin (e.g. latency thresholds). :attr:`scale` becomes ``"custom"``;
        bars are drawn at equal width, one per bin."""
        self._params.set_edges(edges)
        self._apply()

    @guarded
    def set_operation(self, operation: str) -> None:
        """Heatmap statistic: ``"count"``, ``"sum"``, ``"mean"``, ``"min"`` or ``"max"`` (a uniform write)."""
        self._params.set_operation(operation)
        self._apply()

    colour_scale = property(lambda self: self._colour_scale,
                            doc='Heatmap colour normalisation: "auto", "linear", "log" or "robust".')

    @guarded
    def set_colour_scale(self, colour_scale: str) -> None:
        """Heatmap colour normalisation, computed on the GPU every frame from
        the displayed grid: ``"linear"`` (min..max of the non-empty cells),
        ``"log"`` (min..max of the positive cells, log-mapped), ``"robust"``
        (1st..99th percentile cells, the rest clamped) or ``"auto"`` (robust
        for mean / min / max, log for count and for sums of non-negative
        values; see :func:`~gpuviz.widgets.analysis.labels.resolve_colour_scale`).
        A uniform write: never recompiles."""
        if colour_scale not in COLOUR_SCALES:
            raise GraphValidationError(f"{self._name()} colour_scale {colour_scale!r} is not one of {COLOUR_SCALES}")
        self._colour_scale = colour_scale
        self._dirty = True
        self._frame()

    @guarded
    def set_value_range(self, value_range) -> None:
        """Keep only rows whose value lies in ``(lo, hi)`` (inclusive) in every view."""
        self._params.set_value_range(value_range)
        self._apply()

    @guarded
    def set_bounds(self, bounds, *, frame: bool = True) -> None:
        """Heatmap bounds ``(xmin, ymin, xmax, ymax)`` (what pan and zoom change)."""
        self._params.set_bounds(bounds)
        self._unwritten = self._dirty = True
        self._controls.update_legend()
        if frame:
            self._frame()

    @guarded
    def reset_view(self, *, full: bool = False) -> None:
        """Bounds back home: the 0.5 and 99.5 percentiles of the x / y columns'
        finite values (robust to outliers; what a double click and the
        ``reset view`` button do), or with ``full=True`` their whole finite
        extent (the ``full extent`` button). Integer columns end half a unit
        beyond their values. Changes neither the value range nor the group mask."""
        self.set_bounds(self._params.home_bounds(full=bool(full)))

    @property
    def hover(self):
        """What the tooltip shows, or None: ``panel`` (``"heatmap"``,
        ``"histogram"``, ``"groups"``), ``index`` (displayed cell ``j * w + i``,
        bin or group), ``values`` as read from the GPU (heatmap ``[value,
        rows]``, histogram ``[count, cdf, total]``, groups ``[rows, mean]``)
        and ``lines``. Set by pointer moves, read back without waiting
        (it lags the pointer by a frame or two); refreshed after every change."""
        with self.call_lock:
            self._check_usable("hover", raise_lost=False)
            hover = self._pointer.hover
        return None if hover is None else dict(hover)

    group_mask = property(lambda self: self._params.group_enabled.copy(),
                          doc="One bool per group label: False for groups hidden from every view.")

    @guarded
    def set_group_mask(self, enabled) -> None:
        """Keep only rows of the enabled groups (one bool per ``group_labels``
        entry) in every view: heatmap, histogram and group bars (a hidden
        group reads count 0 and mean NaN). Rows whose group is null are always
        kept. A buffer write: never recompiles. Clicking a group bar toggles it."""
        self._params.set_group_enabled(enabled)
        self._apply()

    @guarded
    def toggle_group(self, index: int) -> None:
        """Hide group ``index`` (of ``group_labels``) from every view, or show it again."""
        check_int("group index", index, 0, len(self._params.group_enabled) - 1)
        mask = self._params.group_enabled.copy()
        mask[index] = not mask[index]
        self.set_group_mask(mask)

    # ------------------------------------------------------------ lifecycle
    # WidgetLifecycle: the graph is None once closed; a loss shows in ``status``
    _LIFECYCLE_OWNED, _LIFECYCLE_PANEL = "graph", "status"

    def _lifecycle_name(self) -> str:
        return self._name()

    def _name(self) -> str:
        columns = self._params.columns
        return f'DataAnalysis (x "{columns["x"]}", y "{columns["y"]}", value "{columns["value"]}")'

    def _apply(self) -> None:
        """After a control's parameter changed: show it in the controls and the
        legend, then render it. Both come before the frame, so a change that an
        observer of those makes (a legend observer setting another parameter)
        is drawn by the same single frame."""
        self._unwritten = self._dirty = True
        self._controls.sync()
        self._controls.update_legend()
        self._controls.show_notice()
        self._frame()

    # --------------------------------------------------------------- frames
    def _encode(self, encoder, render_size) -> None:
        """Write the parameters and the view and record the whole graph into
        ``encoder``. Called only while a frame is rendered (``_gate.scope``).
        What calls out of the widget (the inspector's reports, which observers
        may watch) runs before the parameters are taken or after the graph is
        recorded: a change made before is drawn by this frame, one made after
        marks the widget dirty again and is drawn by the next."""
        self._collect_timings()
        self.inspector.poll()  # counts sampled by earlier, already submitted encodings
        if self._unwritten:
            self._unwritten = False
            self.graph.write_parameters(self._params)
        self._dirty = False
        try:
            cpu = self._record(encoder, render_size)
        except BaseException:
            self._dirty = True  # nothing was drawn
            raise
        self.frames += 1
        self.inspector.record_encode(cpu, gpu_times=self._gpu_times)

    def _record(self, encoder, render_size) -> dict:
        """The middle of :meth:`_encode`, which sets no observable trait: view
        uniform, normalisation, the graph and the samples; the graph's CPU times."""
        ratio = self._frame_ratio()
        self.graph.render_size = render_size
        self.graph.write_view(operation=self._params.operation, pixel_ratio=ratio)
        now = time.perf_counter()
        timestamps = self._timestamps and now - self._last_timestamps >= _TIMESTAMP_INTERVAL
        if timestamps:
            self._last_timestamps = now
        overlay = self.graph.overlay
        overlay.before_encode(self.device.queue, graph=self.graph, params=self._params, data=self.data,
                              colour_scale=self._colour_scale, pixel_ratio=ratio)
        cpu = self.graph.compiled.encode(encoder, buffers=self.graph.overrides(self._params.columns),
                                         timestamps=timestamps)
        overlay.sample(encoder)  # this frame's label inputs, read by a later frame (never waited for)
        self.inspector.sample_counts(encoder)
        return cpu

    def _collect_timings(self) -> None:
        """GPU timings of earlier, submitted encodings that are ready (never waits)."""
        while True:
            timings = self.graph.compiled.read_timings(wait=False)
            if timings is None:
                return
            self._gpu_times = timings

    def _frame(self, *, now: bool = False) -> None:
        """After a parameter change: encode the graph, submit, ask the canvas
        for a frame. Called while a frame is rendered, or (unless ``now``)
        while an update waits for a live canvas frame, it only asks for a
        canvas frame, which draws the change (see :mod:`.frame_gate`)."""
        if self._gate.rendering:
            self._dirty = True
            self.canvas.request_draw()
            return
        if self._dirty and not now and self._gate.defer_update():
            self.canvas.request_draw()  # the frame that shows the waiting update encodes this change too
            return
        if self._dirty:  # (not when a nested change's frame already drew it)
            with self._gate.scope():
                encoder = self.device.create_command_encoder(label="data-analysis-update")
                self._encode(encoder, self._canvas_size)
                self.device.queue.submit([encoder.finish()])
                self.graph.overlay.submitted(encoder)
                self.inspector.poll()
                self.graph.overlay.poll()
            self._pointer.request()  # the hover values after this change (submitted after it)
            self._gate.update_submitted()
        self.canvas.request_draw()

    def _frame_ratio(self) -> float:
        """The pixel ratio frames are laid out at: the canvas's, or draw_offscreen's."""
        return self._offscreen_ratio if self._offscreen else self._pixel_ratio()

    def _pixel_ratio(self) -> float:
        try:
            return max(float(self.canvas.get_pixel_ratio()), 0.25)
        except (AttributeError, TypeError, ValueError):
            return 1.0

    def draw(self, encoder, target_view, size) -> None:
        """GPUCanvas drawable hook: re-encode the graph when a parameter changed
        (pan / zoom events) or the size did, then copy the plot into the target.
        Records nothing once the device is lost; never submits."""
        with self.call_lock:  # (GPUCanvas holds it already; a direct call takes it here)
            if self._check_usable("draw", raise_lost=False):
                return
            overlay = self.graph.overlay  # text and axes over the plot: a label change never re-runs the graph
            overlay.begin_draw()
            try:
                with self._gate.scope():
                    self._draw(encoder, target_view, size, overlay)
            finally:
                overlay.end_draw()

    def _draw(self, encoder, target_view, size, overlay) -> None:
        width, height = (max(1, int(v)) for v in size)
        pw, ph = self.graph.plot_size
        scale = min(1.0, pw / width, ph / height)
        render_size = (max(1, int(width * scale)), max(1, int(height * scale)))
        if not self._offscreen:
            self._canvas_size = render_size  # what parameter changes render at from now on
            self._gate.canvas_frame()
        if self._pointer.poll():  # a hover sample arrived (never waited for): a new tooltip, drawn by the
            self._hover = self._pointer.tooltip  # presentation pass (the graph does not run again)
        ratio = self._frame_ratio()
        encoded = self._dirty or render_size != self.graph.render_size or ratio != self.graph.pixel_ratio
        if encoded:
            if self._dirty:  # parameters changed since the last encoding: hover values too (next frame)
                self._pointer.refresh_after_frame()
            self._encode(encoder, render_size)
        self._pointer.after_frame(encoded and not self._offscreen)
        overlay.prepare(self.device.queue, params=self._params, data=self.data, render_size=render_size,
                        target_size=(width, height), pixel_ratio=ratio,
                        hover=getattr(self, "_hover", None), brush=getattr(self, "_brush", None))
        self._presenter.present(encoder, target_view, render_size, (width, height), overlay=overlay)
        if overlay.pending and not self._offscreen:
            self.canvas.request_draw()  # until the labels' sample is read (a few frames)

    def handle_event(self, event) -> bool:
        """GPUCanvas event hook: drag on the heatmap pans, the wheel zooms
        around the pointer, a double click resets; a drag across the
        histogram sets the value range to the bins it covers (a double click
        there: the whole extent); a click on a group bar hides or shows that
        group (a double click there: every group); moving the pointer shows
        the value under it (:attr:`hover`, read back without waiting) and
        sets the cursor (crosshair, ew-resize, pointer). Returns True to redraw.
        A pan or zoom that would leave float32 (or collapse the view) is ignored,
        and so is every event once the device is lost (see ``status``); an
        event whose ``x``, ``y`` or ``dy`` is not a finite number raises
        GraphTypeError (not a number) or GraphValidationError (NaN, infinite).
        Holds :attr:`call_lock` (events may arrive from another thread)."""
        with self.call_lock:
            return self._handle_event(event)

    def _handle_event(self, event) -> bool:
        if self._event_ignored(event):
            return False
        for key in ("x", "y", "dy"):  # what pointer handling reads as numbers
            value = event.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise GraphTypeError(f'{self._name()} handle_event() event "{key}" must be a number '
                                     f"(got {value!r})")
            if not math.isfinite(value):
                raise GraphValidationError(f'{self._name()} handle_event() event "{key}" must be finite '
                                           f"(got {value!r})")
        if event.get("event_type") == "resize":
            return True
        rects = panel_rects(*self.canvas.get_logical_size(), bool(self.graph.groups))
        try:
            consumed, redraw = self._pointer.handle(event, rects)
        except GraphValidationError:
            consumed, redraw = True, False
        if redraw:  # a new tooltip (drawn over the plot), or a brush that already re-ran the graph
            self._hover = self._pointer.tooltip
        if consumed:
            return redraw
        rect = rects["heatmap"]
        bounds = self._pan_zoom.bounds_after(event, rect=rect, bounds=self._params.bounds,
                                             home=self._params.home_bounds())
        if bounds is None:
            return redraw
        try:
            self.set_bounds(bounds, frame=False)
        except GraphValidationError:
            return redraw
        return True

    # -------------------------------------------------------------- outputs
    @guarded
    def results(self) -> dict:
        """The current aggregates as numpy, read back explicitly (one submit).

        Returns
        -------
        dict
            ``histogram_counts`` (int64, ``bins``), ``cdf`` (int64, inclusive
            running count), ``edges`` (float32, ``bins + 1``: the real edges,
            ``[e_i, e_i+1)`` with the last edge included), ``grid`` (float32
            ``(rows, columns)`` of the current operation, row 0 at ymin, NaN
            for empty cells), ``operation``, ``bounds``, ``value_range``,
            ``columns``, ``scale``, ``grid_counts`` (int64, the rows behind
            each displayed cell), ``binning`` (``{"x", "y"}``: ``"integer"``
            axes bin one cell per whole number and ``grid`` shows each cell
            over an equal band of displayed cells, see
            :meth:`AnalysisParameters.grid_cells`; ``"linear"`` ones bin as
            displayed); with a group column ``group_labels``, ``group_mask``,
            ``group_counts`` (int64), ``group_means`` (float32, NaN when empty)
            and ``group_overflow`` (rows whose group is null); with a
            lookup, ``lookup``: ``{"name", "fact_key", "dimension_key",
            "dimension_rows", "found", "null_keys", "not_found"}``, the
            join's row counts over the whole table (read back once, at
            construction).
        """
        if self._dirty:
            self._frame(now=True)
        p, out = self._params, self.graph.outputs
        names = ["display", "grid_counts", "counts", "cdf"] + (["group_counts", "group_means"] if self.graph.groups
                                                                else [])
        arrays = dict(zip(names, read_many(self.device, [out[n] for n in names])))
        w, h = self.graph.grid_size
        result = {
            "histogram_counts": arrays["counts"][:p.bins].astype(np.int64),
            "cdf": arrays["cdf"][:p.bins].astype(np.int64),
            "edges": p.edges.copy(),
            "grid": arrays["display"].reshape(h, w),
            "grid_counts": arrays["grid_counts"].reshape(h, w).astype(np.int64),
            "operation": p.operation, "bounds": p.bounds, "value_range": p.value_range,
            "columns": dict(p.columns), "scale": p.scale, "binning": dict(self.graph.binning),
        }
        if self.graph.groups:
            overflow = self.device.queue.read_buffer(self.graph.group_overflow_buffer)
            result.update(group_labels=list(self.data.group_labels), group_mask=p.group_enabled.copy(),
                          group_counts=arrays["group_counts"].astype(np.int64),
                          group_means=arrays["group_means"],
                          group_overflow=int(np.frombuffer(overflow, np.uint32)[0]))
        if self.data.lookup is not None:
            result["lookup"] = self.data.lookup.as_dict()
        return result

    @guarded
    def draw_offscreen(self, *, width: int, height: int, pixel_ratio: float = 1.0) -> np.ndarray:
        """The widget's canvas content rendered offscreen: ``(height, width, 4)`` uint8.

        ``width`` and ``height`` are physical pixels; ``pixel_ratio`` lays the
        frame out as a high-DPI canvas of ``width / pixel_ratio`` logical
        pixels would show it (margins, line widths and text scaled by it).
        Does not change the live canvas's pixel ratio or layout.
        """
        if (not isinstance(pixel_ratio, (int, float, np.integer, np.floating)) or isinstance(pixel_ratio, bool)
                or not 0.25 <= float(pixel_ratio) <= 8.0):
            raise GraphValidationError(f"DataAnalysis draw_offscreen pixel_ratio must be a number from 0.25 to 8 "
                                       f"(got {pixel_ratio!r})")
        self._offscreen, self._offscreen_ratio = True, float(pixel_ratio)
        try:
            self._settle_labels(width, height)
            return draw_offscreen(self, width=width, height=height, device=self.device)
        finally:
            self._offscreen, self._offscreen_ratio = False, 1.0

    def _settle_labels(self, width, height) -> None:
        """Offscreen images get exact labels: encode this frame at the image's
        size and wait for its label sample; the draw then presents it."""
        if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
            return  # draw_offscreen raises its own error
        pw, ph = self.graph.plot_size
        scale = min(1.0, pw / width, ph / height)
        with self._gate.scope():
            encoder = self.device.create_command_encoder(label="data-analysis-labels")
            self._encode(encoder, (max(1, int(width * scale)), max(1, int(height * scale))))
            self.device.queue.submit([encoder.finish()])
        self.graph.overlay.settle()

    def close(self) -> None:
        """Free every GPU buffer the widget owns (the uploaded table, the
        graph with its transients and outputs, the plot texture, the labels,
        the hover and label readback rings) and close every ipywidget it made
        (canvas, inspector, controls, their layouts and styles).

        Holds :attr:`call_lock`: a frame or call running in another thread
        finishes first, and every later call raises GraphStateError.
        Closing twice is harmless."""
        with self.call_lock:
            graph = getattr(self, "graph", None)
            if graph is not None:
                self.canvas.close()  # (its close event still reaches an open widget's handle_event)
                self.graph = None  # closed from here on, even if freeing below fails
                self.inspector.close()
                self._pointer.destroy()
                self._presenter.destroy()
                graph.overlay.destroy()
                graph.destroy()
                self.data.table.destroy()
            close_widget_tree(self, root=False)
            super().close()
