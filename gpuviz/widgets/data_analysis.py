"""DataAnalysis: explore an Arrow table on the GPU in one notebook widget.

A heatmap of a value over two position columns (grid aggregation), the
value's histogram with its CDF (inclusive scan) on linear or log bins, and
per-group means, all drawn by one compiled command graph into one
:class:`~gpuviz.widgets.GPUCanvas`, with the :class:`GraphInspector` beside
it. Every control is a parameter of that graph: none recompiles it (see
:mod:`gpuviz.widgets.analysis_graph` for how each one is expressed).
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets
import numpy as np

from ..device import device_capabilities, request_device
from ..graph.errors import GraphValidationError
from ..tables import GPUData
from ..tables.readback import read_many
from .analysis_data import check_edges, histogram_edges, pad_edges, prepare_table
from .analysis_graph import OPERATIONS, AnalysisGraph
from .analysis_render import BAR_COLOR, CDF_COLOR, GROUP_PALETTE, RAMP, PlotPresenter, css_color, panel_rects
from .canvas import GPUCanvas, draw_offscreen
from .inspector import GraphInspector

__all__ = ["DataAnalysis"]

_TIMESTAMP_INTERVAL = 0.5  # seconds between frames encoded with per-node GPU timestamps
_ZOOM_PER_WHEEL_UNIT = 1.0015  # wheel dy of +100 zooms out by ~16%


class DataAnalysis(widgets.HBox):
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
        value (sorted), at most 256. Nulls belong to no group.
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
    operation_dropdown, range_slider, reset_button :
        The controls (ipywidgets); setting their values drives the widget
        exactly like the ``set_*`` methods.
    status, legend : ipywidgets.HTML
        Messages for refused control values; what each panel shows (columns,
        ranges, bins, colours and group labels), from host-side state only.

    Notes
    -----
    Rows count only when their value is finite and inside the value range
    (initially the column's finite extent): NaN and infinite values are
    excluded from every view. The heatmap shows rows whose position lies in
    the current bounds (initially the x / y extents; drag to pan, wheel to
    zoom, double-click or ``reset_view`` to reset); empty cells are NaN.
    Each parameter change writes parameters, encodes the graph once (CPU
    encode times always, GPU timestamps at most every 0.5 s when the device
    has them, for the inspector) and submits; the canvas frame copies the
    rendered plot. No frame reads anything back; :meth:`results` does,
    explicitly. Raises GraphValidationError (a ValueError) at construction for
    a missing, non-numeric or all-NaN column, an unusable group column or an
    empty table, naming the column and the available ones.
    """

    def __init__(self, table, *, x: str, y: str, value: str, group: str | None = None, bins: int = 64,
                 max_bins: int = 256, grid_size=(256, 256), operation: str = "mean", device=None,
                 size=(720, 420)):
        super().__init__()
        _check_int("max_bins", max_bins, 1, 4096)
        _check_int("bins", bins, 1, max_bins)
        try:
            grid_size = tuple(int(v) for v in grid_size)
        except (TypeError, ValueError):
            grid_size = ()
        if len(grid_size) != 2 or min(grid_size) < 1 or grid_size[0] * grid_size[1] > 4096 * 4096:
            raise GraphValidationError(f"DataAnalysis grid_size must be two positive integers (got {grid_size!r})")
        if operation not in OPERATIONS:
            raise GraphValidationError(f"DataAnalysis operation must be one of {', '.join(OPERATIONS)} "
                                       f"(got {operation!r})")
        self.device = device or request_device()
        limit = int(self.device.limits["max-storage-buffer-binding-size"])
        self.data = prepare_table(self.device, table, x=x, y=y, value=value, group=group,
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
        """Graph, canvas, inspector and controls over the uploaded table."""
        self._columns = columns
        value = columns["value"]
        self._bins, self._max_bins, self._scale, self._operation = bins, max_bins, "linear", operation
        self._value_range = self._extent(value)
        self._bounds = self._home_bounds()
        self._edges, padded = histogram_edges(self.data.stats[value], bins, max_bins, "linear")
        self.graph = AnalysisGraph(self.device, self.data, columns=dict(self._columns), max_bins=max_bins,
                                   grid_size=grid_size, edges=padded, bounds=self._bounds,
                                   value_range=self._value_range)
        self.graph.bins = bins
        self.graph.render_size = self._canvas_size = tuple(int(v) for v in size)
        self._offscreen = False
        self._timestamps = device_capabilities(self.device).timestamps
        self._last_timestamps = float("-inf")
        self._gpu_times = {}
        self._dirty = True
        self._drag = None
        self._syncing = False
        self.frames = 0
        self._presenter = PlotPresenter(self.device, self.graph.plot_texture)
        self.inspector = GraphInspector(self.graph.compiled)
        overflow = self.graph.group_overflow_buffer
        if overflow is not None:  # a GPU-resident count, sampled at low frequency, never in the frame path
            self.inspector.watch_counts({"rows with an unknown group": GPUData(overflow, format="uint32", length=1)})
        self.canvas = GPUCanvas(self, device=self.device, size=tuple(size))
        self._build_controls()
        # The canvas column keeps its size (a shrinking column would resize the canvas whenever the
        # inspector's text changes); the inspector sits beside it, or below when the page is narrow.
        left = widgets.VBox(self._control_rows + [self.status, self.canvas, self.legend],
                            layout=widgets.Layout(flex="0 0 auto"))
        self.inspector.layout.flex = "1 1 320px"
        self.layout = widgets.Layout(flex_flow="row wrap", align_items="flex-start")
        self.children = [left, self.inspector]
        self._frame()

    # ------------------------------------------------------------- controls
    def _build_controls(self) -> None:
        names = self.data.columns
        layout = widgets.Layout(width="220px")
        self.x_dropdown = widgets.Dropdown(options=names, value=self._columns["x"], description="x", layout=layout)
        self.y_dropdown = widgets.Dropdown(options=names, value=self._columns["y"], description="y", layout=layout)
        self.value_dropdown = widgets.Dropdown(options=names, value=self._columns["value"], description="value",
                                               layout=layout)
        self.bins_slider = widgets.IntSlider(value=self._bins, min=1, max=self._max_bins, description="bins",
                                             continuous_update=True)
        self.scale_toggle = widgets.ToggleButtons(options=["linear", "log"], value="linear",
                                                  style={"button_width": "64px"})
        self.operation_dropdown = widgets.Dropdown(options=list(OPERATIONS), value=self._operation,
                                                   description="heatmap", layout=layout)
        self.range_slider = widgets.FloatRangeSlider(description="range", readout_format=".4g",
                                                     layout=widgets.Layout(width="420px"))
        self._sync_range_slider()
        self.reset_button = widgets.Button(description="reset view", layout=widgets.Layout(width="100px"))
        self.status = widgets.HTML()
        self.legend = widgets.HTML()
        for control, handler in ((self.x_dropdown, lambda c: self.set_columns(x=c.new)),
                                 (self.y_dropdown, lambda c: self.set_columns(y=c.new)),
                                 (self.value_dropdown, lambda c: self.set_columns(value=c.new)),
                                 (self.bins_slider, lambda c: self.set_bins(c.new)),
                                 (self.scale_toggle, lambda c: c.new is not None and self.set_scale(c.new)),
                                 (self.operation_dropdown, lambda c: self.set_operation(c.new)),
                                 (self.range_slider, lambda c: self.set_value_range(c.new))):
            control.observe(self._from_control(handler), names="value")
        self.reset_button.on_click(lambda _button: self.reset_view())
        self._control_rows = [widgets.HBox([self.x_dropdown, self.y_dropdown, self.value_dropdown]),
                              widgets.HBox([self.bins_slider, self.scale_toggle]),
                              widgets.HBox([self.operation_dropdown, self.range_slider, self.reset_button])]

    def _from_control(self, handler):
        def observer(change):
            if self._syncing:
                return
            try:
                handler(change)
                self.status.value = ""
            except ValueError as exc:  # shown in the widget; the control goes back to the widget's state
                self.status.value = f'<span style="color: #c33">{html.escape(str(exc))}</span>'
                self._sync_controls()
        return observer

    def _sync_controls(self) -> None:
        """Make every control show the widget's state (without re-triggering)."""
        self._syncing = True
        try:
            self.x_dropdown.value, self.y_dropdown.value = self._columns["x"], self._columns["y"]
            self.value_dropdown.value = self._columns["value"]
            self.bins_slider.value = self._bins
            self.scale_toggle.value = None if self._scale == "custom" else self._scale
            self.operation_dropdown.value = self._operation
            self._sync_range_slider()
        finally:
            self._syncing = False

    def _sync_range_slider(self) -> None:
        lo, hi = self._extent(self._columns["value"])
        slider = self.range_slider
        syncing, self._syncing = self._syncing, True
        try:
            if lo > slider.max:
                slider.max, slider.min = hi, lo
            else:
                slider.min, slider.max = lo, hi
            slider.step = (hi - lo) / 1000 if hi > lo else 1.0
            slider.value = self._value_range
        finally:
            self._syncing = syncing

    # ----------------------------------------------------------- parameters
    @property
    def compile_count(self) -> int:
        """Graph compilations so far (1: parameters never recompile)."""
        return self.inspector.compile_count

    @property
    def columns(self) -> dict:
        """The current ``{"x", "y", "value"}`` column names."""
        return dict(self._columns)

    bins = property(lambda self: self._bins, doc="Histogram bins shown.")
    scale = property(lambda self: self._scale, doc='Histogram bins: "linear", "log" or "custom" (set_edges).')
    operation = property(lambda self: self._operation, doc="Heatmap statistic.")
    value_range = property(lambda self: self._value_range, doc="The value-range mask (inclusive).")
    bounds = property(lambda self: self._bounds, doc="Heatmap bounds (xmin, ymin, xmax, ymax).")

    def set_columns(self, *, x: str | None = None, y: str | None = None, value: str | None = None) -> None:
        """Switch the x, y and/or value column (per-encoding buffer overrides).

        A new x or y resets the heatmap bounds to the columns' extents; a new
        value resets the value range and the histogram edges to its extent.
        """
        new = dict(self._columns)
        for role, name in (("x", x), ("y", y), ("value", value)):
            if name is None:
                continue
            if name not in self.data.stats:
                raise GraphValidationError(f'DataAnalysis {role}= column "{name}" is not an uploaded numeric column '
                                           f"(columns: {', '.join(self.data.columns)})")
            new[role] = name
        old, self._columns = self._columns, new
        if (new["x"], new["y"]) != (old["x"], old["y"]):
            self._bounds = self._home_bounds()
            self.graph.set_bounds(self._bounds)
        if new["value"] != old["value"]:
            self._value_range = self._extent(new["value"])
            self.graph.set_filter_range(self._value_range)
            no_log = self._scale == "log" and self.data.stats[new["value"]].positive_lo is None
            if self._scale == "custom" or no_log:
                self._scale = "linear"
            self._write_edges()
        self._sync_controls()
        self._frame()

    def set_bins(self, bins: int) -> None:
        """Show ``bins`` histogram bins (1 to ``max_bins``) through new literal
        edges (custom edges give way to linear ones)."""
        _check_int("bins", bins, 1, self._max_bins)
        self._bins = int(bins)
        if self._scale == "custom":
            self._scale = "linear"
        self._write_edges()
        self._sync_controls()
        self._frame()

    def set_scale(self, scale: str) -> None:
        """``"linear"`` (equal-width) or ``"log"`` (geometric from the smallest
        positive value; rows <= 0 then fall outside the histogram)."""
        if scale not in ("linear", "log"):
            raise GraphValidationError(f'DataAnalysis scale must be "linear" or "log" (got {scale!r})')
        previous, self._scale = self._scale, scale
        try:
            self._write_edges()
        except GraphValidationError:
            self._scale = previous
            raise
        self._sync_controls()
        self._frame()

    def set_edges(self, edges) -> None:
        """Irregular bins: 2 to ``max_bins + 1`` finite, strictly increasing
        edges; bin ``i`` is ``[e_i, e_i+1)`` and the last edge belongs to the
        last bin (e.g. latency thresholds). :attr:`scale` becomes ``"custom"``;
        bars are drawn at equal width, one per bin."""
        real = check_edges(edges, self._max_bins)
        self.graph.histogram.set_edges(pad_edges(real, self._max_bins))
        self._bins, self._scale, self._edges = len(real) - 1, "custom", real
        self.graph.bins = self._bins
        self._sync_controls()
        self._frame()

    def set_operation(self, operation: str) -> None:
        """Heatmap statistic: ``"count"``, ``"sum"``, ``"mean"``, ``"min"`` or ``"max"`` (a uniform write)."""
        if operation not in OPERATIONS:
            raise GraphValidationError(f"DataAnalysis operation must be one of {', '.join(OPERATIONS)} "
                                       f"(got {operation!r})")
        self._operation = operation
        self._sync_controls()
        self._frame()

    def set_value_range(self, value_range) -> None:
        """Keep only rows whose value lies in ``(lo, hi)`` (inclusive) in every view."""
        try:
            lo, hi = (float(v) for v in value_range)
        except (TypeError, ValueError):
            raise GraphValidationError(f"DataAnalysis value range needs two numbers (got {value_range!r})") from None
        if not lo <= hi:
            raise GraphValidationError(f"DataAnalysis value range needs lo <= hi (got {lo}, {hi})")
        self._value_range = (lo, hi)
        self.graph.set_filter_range(self._value_range)
        self._sync_controls()
        self._frame()

    def set_bounds(self, bounds, *, frame: bool = True) -> None:
        """Heatmap bounds ``(xmin, ymin, xmax, ymax)`` (what pan and zoom change)."""
        try:
            x0, y0, x1, y1 = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise GraphValidationError(f"DataAnalysis bounds need four numbers (got {bounds!r})") from None
        with np.errstate(over="ignore", invalid="ignore"):
            b32 = np.array([x0, y0, x1, y1], np.float32)
            ok = np.isfinite(b32).all() and np.isfinite(b32[2:] - b32[:2]).all() and (b32[:2] < b32[2:]).all()
        if not ok:
            raise GraphValidationError(f"DataAnalysis bounds need finite float32 xmin < xmax and ymin < ymax "
                                       f"(got {bounds!r})")
        self._bounds = (x0, y0, x1, y1)
        self.graph.set_bounds(self._bounds)
        self._dirty = True
        if frame:
            self._frame()

    def reset_view(self) -> None:
        """Bounds back to the x / y columns' extents."""
        self.set_bounds(self._home_bounds())

    def _extent(self, name) -> tuple:
        stats = self.data.stats[name]
        return (stats.lo, stats.hi)

    def _home_bounds(self) -> tuple:
        (x0, x1), (y0, y1) = self._extent(self._columns["x"]), self._extent(self._columns["y"])
        pad_x = 0.0 if x1 > x0 else max(0.5, abs(x0) * 1e-3)
        pad_y = 0.0 if y1 > y0 else max(0.5, abs(y0) * 1e-3)
        return (x0 - pad_x, y0 - pad_y, x1 + pad_x, y1 + pad_y)

    def _write_edges(self) -> None:
        real, padded = histogram_edges(self.data.stats[self._columns["value"]], self._bins, self._max_bins,
                                       self._scale)
        self.graph.histogram.set_edges(padded)
        self.graph.bins = self._bins
        self._edges = real

    # --------------------------------------------------------------- frames
    def _encode(self, encoder, render_size) -> None:
        """Write the view parameters and record the whole graph into ``encoder``."""
        self._collect_timings()
        self.graph.render_size = render_size
        self.graph.write_view(operation=self._operation)
        now = time.perf_counter()
        timestamps = self._timestamps and now - self._last_timestamps >= _TIMESTAMP_INTERVAL
        if timestamps:
            self._last_timestamps = now
        self.inspector.poll()  # counts sampled by earlier, already submitted encodings
        cpu = self.graph.compiled.encode(encoder, buffers=self.graph.overrides(self._columns), timestamps=timestamps)
        self.inspector.sample_counts(encoder)
        self.inspector.record_encode(cpu, self._gpu_times)
        self._dirty = False
        self.frames += 1
        legend = self._legend_html()
        if legend != self.legend.value:
            self.legend.value = legend

    def _legend_html(self) -> str:
        x, y, value = (html.escape(self._columns[role]) for role in ("x", "y", "value"))
        x0, y0, x1, y1 = self._bounds
        ramp = ", ".join(css_color(c) for c in RAMP)
        swatch = '<span style="color: {}">&#9632;</span>'
        parts = [f"<b>heatmap</b> {self._operation} of <i>{value}</i>"
                 f"{' (log colours)' if self._operation == 'count' else ''} · <i>{x}</i> {x0:.4g} … {x1:.4g} · "
                 f"<i>{y}</i> {y0:.4g} … {y1:.4g} "
                 f'<span style="display: inline-block; width: 64px; height: 9px; '
                 f'background: linear-gradient(to right, {ramp})"></span>',
                 f"{swatch.format(css_color(BAR_COLOR))} <b>histogram</b> of <i>{value}</i>: {self._bins} "
                 f"{self._scale} bins {self._edges[0]:.4g} … {self._edges[-1]:.4g} · "
                 f"{swatch.format(css_color(CDF_COLOR))} CDF · range {self._value_range[0]:.4g} … "
                 f"{self._value_range[1]:.4g}"]
        if self.data.group is not None:
            labels = " ".join(f"{swatch.format(css_color(GROUP_PALETTE[g % len(GROUP_PALETTE)]))} {html.escape(label)}"
                              for g, label in enumerate(self.data.group_labels))
            parts.append(f"<b>mean <i>{value}</i> by {html.escape(self.data.group)}</b>: {labels}")
        return '<div style="font: 12px sans-serif; line-height: 1.6">' + "<br>".join(parts) + "</div>"

    def _collect_timings(self) -> None:
        """GPU timings of earlier, submitted encodings that are ready (never waits)."""
        while True:
            timings = self.graph.compiled.read_timings(wait=False)
            if timings is None:
                return
            self._gpu_times = timings

    def _frame(self) -> None:
        """One parameter change: encode the graph, submit, ask the canvas for a frame."""
        encoder = self.device.create_command_encoder(label="data-analysis-update")
        self._encode(encoder, self._canvas_size)
        self.device.queue.submit([encoder.finish()])
        self.inspector.poll()
        self.canvas.request_draw()

    def draw(self, encoder, target_view, size) -> None:
        """GPUCanvas drawable hook: re-encode the graph when a parameter changed
        (pan / zoom events) or the size did, then copy the plot into the target."""
        width, height = (max(1, int(v)) for v in size)
        pw, ph = self.graph.plot_size
        scale = min(1.0, pw / width, ph / height)
        render_size = (max(1, int(width * scale)), max(1, int(height * scale)))
        if not self._offscreen:
            self._canvas_size = render_size  # what parameter changes render at from now on
        if self._dirty or render_size != self.graph.render_size:
            self._encode(encoder, render_size)
        self._presenter.present(encoder, target_view, render_size, (width, height))

    def handle_event(self, event) -> bool:
        """GPUCanvas event hook: drag on the heatmap pans, the wheel zooms
        around the pointer, a double click resets. Returns True to redraw.
        A pan or zoom that would leave float32 (or collapse the view) is ignored."""
        try:
            return self._pan_zoom(event)
        except GraphValidationError:
            return False

    def _pan_zoom(self, event) -> bool:
        kind = event.get("event_type")
        if kind == "resize":
            return True
        if kind == "pointer_up":
            self._drag = None
            return False
        if kind not in ("pointer_down", "pointer_move", "wheel", "double_click"):
            return False
        width, height = self.canvas.get_logical_size()
        hx, hy, hw, hh = panel_rects(width, height, bool(self.graph.groups))["heatmap"]
        u = (event.get("x", 0.0) - hx) / hw
        v = 1.0 - (event.get("y", 0.0) - hy) / hh  # 0 at the bottom (ymin)
        inside = 0.0 <= u <= 1.0 and 0.0 <= v <= 1.0
        x0, y0, x1, y1 = self._bounds
        if kind == "pointer_down":
            self._drag = (u, v, self._bounds) if inside and event.get("button", 1) == 1 else None
            return False
        if kind == "pointer_move":
            if self._drag is None:  # (browsers also send a button-less move right after pointer_down)
                return False
            u0, v0, (a0, b0, a1, b1) = self._drag
            dx, dy = (u - u0) * (a1 - a0), (v - v0) * (b1 - b0)
            self.set_bounds((a0 - dx, b0 - dy, a1 - dx, b1 - dy), frame=False)
            return True
        if not inside:
            return False
        if kind == "double_click":
            self.set_bounds(self._home_bounds(), frame=False)
            return True
        factor = _ZOOM_PER_WHEEL_UNIT ** float(event.get("dy", 0.0))
        ax, ay = x0 + u * (x1 - x0), y0 + v * (y1 - y0)
        self.set_bounds((ax + (x0 - ax) * factor, ay + (y0 - ay) * factor,
                         ax + (x1 - ax) * factor, ay + (y1 - ay) * factor), frame=False)
        return True

    # -------------------------------------------------------------- outputs
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
            ``columns``, ``scale``; with a group column ``group_labels``,
            ``group_counts`` (int64), ``group_means`` (float32, NaN when empty)
            and ``group_overflow`` (rows whose group is null).
        """
        if self._dirty:
            self._frame()
        out = self.graph.outputs
        names = ["display", "counts", "cdf"] + (["group_counts", "group_means"] if self.graph.groups else [])
        arrays = dict(zip(names, read_many(self.device, [out[n] for n in names])))
        w, h = self.graph.grid_size
        result = {
            "histogram_counts": arrays["counts"][:self._bins].astype(np.int64),
            "cdf": arrays["cdf"][:self._bins].astype(np.int64),
            "edges": self._edges.copy(),
            "grid": arrays["display"].reshape(h, w),
            "operation": self._operation, "bounds": self._bounds, "value_range": self._value_range,
            "columns": dict(self._columns), "scale": self._scale,
        }
        if self.graph.groups:
            overflow = self.device.queue.read_buffer(self.graph.group_overflow_buffer)
            result.update(group_labels=list(self.data.group_labels),
                          group_counts=arrays["group_counts"].astype(np.int64),
                          group_means=arrays["group_means"],
                          group_overflow=int(np.frombuffer(overflow, np.uint32)[0]))
        return result

    def draw_offscreen(self, *, width: int, height: int) -> np.ndarray:
        """The widget's canvas content rendered offscreen: ``(height, width, 4)`` uint8."""
        self._offscreen = True
        try:
            return draw_offscreen(self, width=width, height=height, device=self.device)
        finally:
            self._offscreen = False

    def close(self) -> None:
        """Close the widgets and free the GPU table, graph and plot."""
        if getattr(self, "graph", None) is not None:
            self.canvas.close()
            self.inspector.close()
            self._presenter.destroy()
            self.graph.destroy()
            self.data.table.destroy()
            self.graph = None
        super().close()


def _check_int(name, value, lo, hi) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not lo <= value <= hi:
        raise GraphValidationError(f"DataAnalysis {name} must be an integer from {lo} to {hi} (got {value!r})")
