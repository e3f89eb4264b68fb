"""TraceViewer: a hierarchical trace timeline on the GPU, in a notebook.

The trace is uploaded once as a :class:`~gpuviz.trace.scene.GPUTraceScene`;
one command graph (:mod:`.graph`) is compiled per capacity tier and draws
every frame by compute into its frame texture (:mod:`.tracks`). Every interaction (pan,
zoom, rows, collapse, filters, search, focus, selection, hover) is a small
buffer write; the overlay (axis, gutter, labels, counters, minimap,
tooltip) is queued on the CPU from small tables: which spans get a label,
the span under the pointer and the status counts come from the GPU frame
through a readback ring (:mod:`.sampler`), so no frame passes over every span.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

import ipywidgets as widgets
import numpy as np

from ...device import request_device
from ...errors import GraphTypeError, GraphValidationError
from ...graph.checks import check_count
from ...render.overlay import PlotOverlay
from ...trace.interaction.state import TraceViewState
from ..canvas import GPUCanvas, draw_offscreen
from ..inspector import GraphInspector
from ..lifecycle import WidgetLifecycle, close_widget_tree, guarded
from .decorations import MINIMAP_BINS, details_html, queue_decorations, span_lines
from .cpuview import layout_of, shown, visible
from .events import PointerState, handle
from .frames import FrameWriter, status_line
from .graph import TraceGraph
from .geometry import GUTTER, MIN_WINDOW_NS, ROW_HEIGHT, TRACKS_TOP, Geometry, name_colour
from .load import as_trace
from .present import Presenter
from .region import RegionSelection, check_region, longest_in_column, merged_column, queue_band, summary_html
from .sampler import SamplePoller, label_items, sample_hover
from .tiers import CAPACITY_TIERS, capacity_tier

__all__ = ["TraceViewer", "FOCUS_MODES", "CAPACITY_TIERS", "capacity_tier"]

NAME = "TraceViewer"
FOCUS_MODES = ("dim", "hide")
MAX_FOCUS_DEPTH = 8
_ZOOM_STEP = 1.25
def _int(name, value, low=None):
    return check_count(NAME, name, value, low=low)


def _span_ids(index, span_ids, what: str) -> np.ndarray:
    """int64 span IDs, each a row of ``trace.spans``; GraphValidationError otherwise."""
    ids = np.atleast_1d(np.asarray(span_ids))
    if ids.size and (ids.dtype.kind not in "iu"):
        raise GraphValidationError(f"{NAME} {what} takes integer span IDs (got dtype {ids.dtype})")
    ids = ids.astype(np.int64).ravel()
    bad = ids[(ids < 0) | (ids >= index.n)]
    if len(bad):
        raise GraphValidationError(f"{NAME} {what}: span ID {int(bad[0])} is not in the trace "
                                   f"({index.n} spans: IDs 0..{index.n - 1})")
    return ids


class TraceViewer(WidgetLifecycle, widgets.HBox):
    """A zoomable timeline of a trace's spans, drawn on the GPU.

    Parameters
    ----------
    trace : Trace, path, or what ``Trace.from_arrow`` takes
        A :class:`gpuviz.trace.Trace`; a path is loaded with
        :func:`gpuviz.trace.load`; a pyarrow spans table (or a dict of
        ``from_arrow`` keywords) goes through ``Trace.from_arrow``.
    size : (int, int)
        Canvas size in CSS pixels.
    capacity : int, optional
        Span capacity of the compiled graph (>= the span count). Default:
        the capacity tier of the span count (:func:`capacity_tier`, the
        smallest of :data:`CAPACITY_TIERS` >= it); GPU buffers per span
        are sized by it.
    device : wgpu.GPUDevice, optional
        Defaults to :func:`gpuviz.request_device`.

    Attributes
    ----------
    canvas : GPUCanvas
    inspector : GraphInspector
    details : ipywidgets.HTML
        The selected span's fields, args, parent chain and links.
    trace : Trace
    scene : GPUTraceScene
        The trace on the GPU (counter tracks appended as threads).
    index : TraceIndex
        ``scene.index``: the trace's one CPU index (name and category codes,
        thread order, lanes, counter tracks, span columns) that the scene's
        records, the interaction policy and this viewer share.
    device_lost : str or None

    Notes
    -----
    The view is one :class:`~gpuviz.trace.interaction.TraceViewState`
    (window, first row, expansion, filters, search, focus) that the setters
    and the input handlers (:func:`.events.handle`: state and event in, new
    state out) replace, plus a small pointer state (position, hover, drag,
    rubber band); each frame is written from the state it is given
    (:class:`.frames.FrameWriter`).

    One command graph per capacity tier, compiled once
    (:attr:`compile_count` stays 1): a :class:`~gpuviz.trace.interaction.GPUTraceInteraction`
    (64-bit window predicate, expansion, categories, duration, search and
    focus over links; compaction of the drawn spans with the count written
    into the indirect draw's instanceCount; sub-pixel spans merged per row
    and pixel column; density bins of collapsed processes), a compute node
    writing the tracks' pixels and span IDs, and a render node for the
    selection's links. Every interaction
    (pan, zoom, rows, collapse, filters, search, focus, selection, hover)
    is a small buffer write. Spans are coloured by a hash of their name,
    with their names inside when there is room; collapsed processes show
    one row of density bars; the selection's links are arrows (an end in a
    collapsed process lands on its summary row); instants are ticks; a
    minimap of span starts shows the window. Drag pans (time and rows), the
    wheel zooms at the cursor (shift+wheel scrolls rows), W/S zoom, A/D
    pan, a click selects (GPU picking; gutter clicks collapse / expand),
    shift+drag selects a time x row region (:meth:`select_region`) and
    shows its summary, a double click zooms to a span, Escape clears the
    selection. Nothing is drawn while idle (after the one redraw that shows
    the last frame's labels and hover) and no frame waits for a readback.

    Counters (``trace.counters``) are one-row stacked area charts at the
    end of their process (:mod:`.counters`). Per frame the host writes only
    small buffers and queues the overlay from O(labels + rows + instants in
    the window) data: the labels, hover and the status counts come from
    the GPU frame (the compacted visible set, the picking pass, the stats
    words) through a readback ring, a frame or two late (:mod:`.sampler`).

    What it does NOT do (yet): only the selection's links are drawn (from
    the CPU, not the frame's GPU edges); hover does not resolve merged
    sub-pixel columns (clicks and :meth:`pick` do); :meth:`summary` without
    a selection, :meth:`span_rect` with focus "hide" and the CPU oracles
    (``_visible``, ``_rows``) are O(spans) numpy, for explicit calls only.
    A GPUTraceScene alone is refused (the viewer builds its own, with
    counter tracks).
    """

    def __init__(self, trace, *, size=(1000, 600), capacity=None, device=None):
        super().__init__()
        try:
            size = tuple(int(v) for v in size)
        except (TypeError, ValueError):
            size = ()
        if len(size) != 2 or size[0] < GUTTER + 40 or size[1] < TRACKS_TOP + 2 * ROW_HEIGHT:
            raise GraphValidationError(f"{NAME} size must be two integers, at least ({int(GUTTER) + 40}, "
                                       f"{int(TRACKS_TOP + 2 * ROW_HEIGHT)}) (got {size!r})")
        self.trace = as_trace(trace)
        self.device = device or request_device()
        self.device_lost = None
        self._graph = None
        n = self.trace.spans.num_rows
        self.capacity = capacity_tier(n) if capacity is None else _int("capacity", capacity, max(n, 1))
        from ...trace.scene import GPUTraceScene
        # record chunks of at most one storage binding: the tracks and labels bind each (up to 4)
        limits = self.device.limits
        chunk = min(int(limits["max-buffer-size"]), int(limits["max-storage-buffer-binding-size"]))
        # counter tracks are threads without spans appended to the threads table (rows in the GPU layout)
        self.scene = GPUTraceScene(self.device, self.trace, label="trace-viewer", max_chunk_bytes=chunk,
                                   counter_tracks=True)
        self.index = index = self.scene.index
        try:
            index.prepare_spans()  # read every frame: none is built mid-frame
            colours = [name_colour(v) for v in index.names]
            packed = np.array([int(r * 255) | int(g * 255) << 8 | int(b * 255) << 16 | 255 << 24
                               for r, g, b in colours], np.uint32)
            self._text_dark = np.array([0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in colours]) > 0.42
            self._graph = TraceGraph(self.device, self.scene, name_colours=packed, capacity=self.capacity)
        except BaseException:
            self.scene.destroy()
            raise
        self._size = size
        # the view: what a frame shows. Setters and input handlers replace it (never change it in
        # place); each frame completes it with its column and row counts (frames.frame_state)
        self._state = TraceViewState(window=index.extent, width=1, rows=(0, 0),
                                     process_expanded=np.ones(index.process_count, bool),
                                     thread_expanded=np.ones(index.thread_count, bool), focus_depth=0)
        self._pointer = PointerState()  # position, hover, drag and rubber band
        self._layout_cache = (None, None)
        self._decorations_cache = {}  # overlay pieces that outlive a frame (queue_decorations)
        self._drawn_sample = None  # the readback sample the last frame's overlay used
        self._selection = self._graph.selected_ids  # empty, and what the selection buffer holds
        self._callbacks = []
        self._version, self._cache = 0, {}
        self._frames = FrameWriter(self._graph, index)
        self._poller = SamplePoller(self._graph.sampler, on_sample=self._sample_arrived,
                                    redraw=lambda: self.canvas.request_draw(),
                                    alive=lambda: self._graph is not None and self.device_lost is None,
                                    lock=self.call_lock)
        self._minimap = np.histogram(index.start, bins=MINIMAP_BINS, range=index.extent)[0] if index.n \
            else np.zeros(MINIMAP_BINS, np.int64)
        self._summary = None
        self._region = None  # the region graph, built on the first region
        self._presenter = Presenter(self.device, self._graph)
        self._overlay = None
        self._offscreen = False
        self.inspector = GraphInspector(self._graph.compiled)
        self.inspector.watch_counts({"span records drawn (instanceCount)":
                                     self._graph.draws.get_instance_count_data(0)})
        self.canvas = GPUCanvas(self, device=self.device, size=size)
        self.details = widgets.HTML(details_html(index, self._selection))
        side = widgets.VBox([self.details, self.inspector], layout=widgets.Layout(flex="1 1 320px"))
        # the box's own Layout, changed in place: a replaced one would stay registered
        self.layout.flex_flow, self.layout.align_items = "row wrap", "flex-start"
        self.children = [self.canvas, side]

    # ----------------------------------------------------------- the view
    @property
    def time_window(self) -> tuple:
        """``(start_ns, end_ns)``: the absolute nanoseconds the tracks show
        (integers, start < end). Setting it is a buffer write; a window
        outside the trace shows empty tracks."""
        return self._state.window

    @time_window.setter
    @guarded
    def time_window(self, window) -> None:
        try:
            start, end = window
        except (TypeError, ValueError):
            raise GraphValidationError(f"{NAME} time_window must be (start_ns, end_ns) (got {window!r})") from None
        start, end = _int("time_window start", start), _int("time_window end", end)
        if not start < end:
            raise GraphValidationError(f"{NAME} time_window must have start < end (got {start}, {end})")
        if max(abs(start), abs(end)) >= 1 << 62:
            raise GraphValidationError(f"{NAME} time_window must lie within ±2**62 ns (got {start}, {end})")
        self._set_window(start, end)

    def _set_window(self, start, end) -> None:
        self._update(window=(int(start), int(end)))

    def _update(self, **changes) -> None:
        """Replace the view state with these fields changed (a new state: a new frame)."""
        self._state = self._state.with_(**changes)
        self._changed()

    @guarded
    def reset_view(self) -> None:
        """Show the whole trace from the first row (filters, focus and selection stay)."""
        self._update(window=self.index.extent, rows=(0, self._state.rows[1]))

    @property
    def first_row(self) -> int:
        """The layout row at the top of the tracks (vertical scroll)."""
        return self._state.rows[0]

    @first_row.setter
    @guarded
    def first_row(self, row) -> None:
        row = min(_int("first_row", row, 0), max(self._layout().total_rows - 1, 0))
        self._update(rows=(row, self._state.rows[1]))

    def _changed(self) -> None:
        self._version += 1
        self._cache.clear()
        if getattr(self, "canvas", None) is not None:
            self.canvas.request_draw()

    # ------------------------------------------------------ the CPU model
    def _layout(self):
        """The row layout of the view's expansion state: O(threads), cached per expansion state."""
        key = (self._state.process_expanded.tobytes(), self._state.thread_expanded.tobytes())
        if self._layout_cache[0] != key:
            self._layout_cache = (key, layout_of(self.index, self._state))
        return self._layout_cache[1]

    def _rows(self):
        """Layout row of every span: O(spans), for explicit queries and tests only (never a frame)."""
        if "rows" not in self._cache:
            self._cache["rows"] = self.index.span_rows(self._layout())
        return self._cache["rows"]

    def _visible(self, geometry=None) -> np.ndarray:
        """bool per span drawn in the current view (:func:`.cpuview.visible`):
        O(spans), for :meth:`summary` and tests only (never a frame)."""
        geometry = geometry or self._geometry()
        key = ("visible", geometry.width, geometry.height)
        if key not in self._cache:
            self._cache[key] = visible(self.index, self._state, self._layout(), self._rows(), geometry,
                                       self._focus_set)
        return self._cache[key]

    def _shown(self, s: int, geometry) -> bool:
        """Span ``s`` passes the frame's tests (:func:`.cpuview.shown`)."""
        return shown(self.index, self._state, self._layout(), geometry, s, self._focus_set)

    def _focus_set(self):
        """bool per span in the focus (CPU, O(links x depth)): only for explicit queries."""
        key = ("focus", self._state.focus_seeds, self._state.focus_depth)
        if key not in self._cache:
            self._cache[key] = self.index.focus_set(self._state.focus_seeds, depth=self._state.focus_depth)
        return self._cache[key]

    def _geometry(self, size=None) -> Geometry:
        return Geometry.of(self._state, size or self._size)

    def _write_frame(self, size, scale) -> None:
        """Write the view of :attr:`_state` into the graph's buffers (what changed)."""
        self._frames.write(self._state, version=self._version, selection=self._selection, layout=self._layout(),
                           pointer=self._pointer, size=size, scale=scale)

    # --------------------------------------------------------- geometry
    @guarded
    def span_rect(self, span_id):
        """``(x0, y0, x1, y1)`` in canvas (logical) pixels of ``span_id`` as
        currently drawn (clipped to the tracks), or None when it is not
        drawn. GraphValidationError for an ID that is not in the trace."""
        s = int(_span_ids(self.index, span_id, "span_rect")[0])
        geometry = self._geometry()
        if not self._shown(s, geometry):
            return None
        x0 = float(np.clip(geometry.x_of(self.index.start[s]), GUTTER, geometry.width - 1.0))
        x1 = float(np.clip(geometry.x_of(self.index.end[s]), GUTTER, geometry.width))
        x1 = max(x1, x0 + 1.0)  # at least one pixel column, as the shader draws it
        y0 = float(geometry.y_of(self.index.span_rows(self._layout(), ids=[s])[0]))
        return (x0, y0, x1, min(y0 + ROW_HEIGHT - 1, geometry.bottom))

    @guarded
    def pick(self, x, y):
        """The span ID drawn at canvas pixel ``(x, y)`` (logical, origin
        top-left) or None: renders one frame and reads the picking target's
        ID under that pixel back (an explicit wait, never part of a frame).
        Over a column of merged sub-pixel spans (no ID in the picking
        target) it returns the longest span shown in that pixel column on
        that row, found by the region pass (a second wait)."""
        for name, value in (("x", x), ("y", y)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(value):
                raise GraphValidationError(f"{NAME} pick {name} must be a finite number of pixels (got {value!r})")
        w, h = self._size
        if not (0 <= x < w and 0 <= y < h):
            return None
        self._write_frame(self._size, 1.0)
        rw, rh = self._graph.render_size
        picked = self._graph.pick((min(int(x * rw / w), rw - 1), min(int(y * rh / h), rh - 1)))
        if picked is None and self.index.n:  # a merged sub-pixel column carries no ID: ask the region pass
            column = merged_column(self._geometry(), self._frames.columns, float(x), float(y))
            if column is not None:
                t0, t1, row = column
                picked = longest_in_column(self.index, self._region_ids((t0, t1), (row, row + 1)), t0, t1)
        return picked

    def _region_ids(self, window, rows) -> np.ndarray:
        """Span IDs shown in ``window`` x ``rows`` (absolute ns, layout rows,
        half-open, already checked) of the current view; waits for the readback."""
        if self._region is None:
            self._region = RegionSelection(self.device, self._graph.frame)
        self._write_frame(self._size, 1.0)  # the frame of the current view (as pick draws it)
        encoder = self.device.create_command_encoder(label="trace-viewer-region")
        self._graph.encode(encoder)
        origin = self.scene.time_origin_ns
        return self._region.run(encoder, t0_rel=window[0] - origin, t1_rel=window[1] - origin,
                                row0=rows[0], row1=rows[1])

    # -------------------------------------------------------- selection
    @guarded
    def select(self, span_ids) -> None:
        """Select these span IDs (an int or a sequence; empty clears). Calls
        the :meth:`on_select` callbacks with the new :attr:`selection`."""
        ids = np.unique(_span_ids(self.index, span_ids, "select")) if np.size(span_ids) else np.zeros(0, np.int64)
        self._selection = ids
        self.details.value = details_html(self.index, ids)
        self._changed()
        table = self.selection
        for callback in list(self._callbacks):
            callback(table)

    @guarded
    def select_region(self, window, *, rows=None):
        """Select every span shown in the time x row region and put its
        :meth:`summary` in the details panel (what shift+drag does).

        ``window`` is ``(t0_ns, t1_ns)`` absolute ns (half-open); ``rows``
        ``(row0, row1)`` layout rows, half-open (default: the rows in view).
        A span is selected when it is drawn or merged into a sub-pixel
        column in the current view, on one of those rows, and
        ``[start, start + max(duration, 1))`` overlaps the window (exact
        64-bit times). Found on the GPU over every span record
        (:mod:`.region`), read back once (this call waits). Returns the IDs.
        It does NOT select spans outside the current view, hidden by a
        filter, or in a collapsed process's summary row.
        """
        first = self._state.rows[0]
        window, rows = check_region(window, rows, (first, first + self._geometry().visible_rows))
        ids = self._region_ids(window, rows)
        self.select(ids)
        if len(ids):
            self.details.value += summary_html(self.summary())
        return ids

    @property
    def selection(self):
        """pyarrow Table: the selected rows of ``trace.spans`` (ascending IDs)."""
        return self.trace.spans.take(self._selection)

    @guarded
    def on_select(self, callback) -> None:
        """Call ``callback(selection_table)`` after every selection change."""
        if not callable(callback):
            raise GraphTypeError(f"{NAME} on_select takes a callable (got {type(callback).__name__})")
        self._callbacks.append(callback)

    # ------------------------------------------------------------ focus
    @guarded
    def focus(self, span_id, *, depth: int = MAX_FOCUS_DEPTH) -> None:
        """Keep ``span_id`` (or several) and the spans within ``depth`` link
        hops of it, both directions, bright; the rest is dimmed or hidden
        (:attr:`focus_mode`). Depth 0..8."""
        seeds = _span_ids(self.index, span_id, "focus")
        depth = _int("focus depth", depth, 0)
        if depth > MAX_FOCUS_DEPTH:
            raise GraphValidationError(f"{NAME} focus depth must be at most {MAX_FOCUS_DEPTH} (got {depth})")
        seeds = np.unique(seeds)
        if len(seeds) > self._graph.frame.max_seeds:
            raise GraphValidationError(f"{NAME} focus takes at most {self._graph.frame.max_seeds} seed spans "
                                       f"(got {len(seeds)})")
        self._update(focus_seeds=tuple(int(v) for v in seeds), focus_depth=depth)  # the GPU traverses the links

    @guarded
    def clear_focus(self) -> None:
        """Show every span normally again."""
        self._update(focus_seeds=(), focus_depth=0)

    @property
    def focus_mode(self) -> str:
        """``"dim"`` (default) or ``"hide"``: what happens to unfocused spans."""
        return self._state.focus_mode

    @focus_mode.setter
    @guarded
    def focus_mode(self, mode) -> None:
        if mode not in FOCUS_MODES:
            raise GraphValidationError(f"{NAME} focus_mode must be one of {FOCUS_MODES} (got {mode!r})")
        self._update(focus_mode=mode)

    # -------------------------------------------------------- expansion
    def _targets(self, process, thread, action):
        h = self.index
        if process is None and thread is None:
            return np.arange(h.process_count), None
        procs = None if process is None else self._row_of(process, h.process_count, h.process_names, "process", action)
        threads = None if thread is None else self._row_of(thread, h.thread_count, h.thread_names, "thread", action)
        return procs, threads

    @staticmethod
    def _row_of(value, count, names, what, action):
        if isinstance(value, str):
            hits = [i for i, v in enumerate(names) if v == value]
            if not hits:
                raise GraphValidationError(f"{NAME} {action}: no {what} named {value!r}")
            return np.array(hits)
        k = _int(f"{action} {what}", value, 0)
        if k >= count:
            raise GraphValidationError(f"{NAME} {action}: {what} {k} is not in the trace ({count} {what}es)"
                                       if what == "process" else
                                       f"{NAME} {action}: {what} {k} is not in the trace ({count} threads)")
        return np.array([k])

    @guarded
    def collapse(self, process=None, *, thread=None) -> None:
        """Collapse a process (one summary row) or a thread (its lane 0);
        with no argument, every process. Rows or names (str) are accepted."""
        procs, threads = self._targets(process, thread, "collapse")
        pexp, texp = self._state.process_expanded.copy(), self._state.thread_expanded.copy()
        if procs is not None:
            pexp[procs] = False
        if threads is not None:
            texp[threads] = False
        self._update(process_expanded=pexp, thread_expanded=texp)

    @guarded
    def expand(self, process=None, *, thread=None) -> None:
        """Undo :meth:`collapse` (no argument: every process and thread)."""
        procs, threads = self._targets(process, thread, "expand")
        pexp, texp = self._state.process_expanded.copy(), self._state.thread_expanded.copy()
        if process is None and thread is None:
            texp[:] = True
        if procs is not None:
            pexp[procs] = True
        if threads is not None:
            texp[threads] = True
        self._update(process_expanded=pexp, thread_expanded=texp)

    # ---------------------------------------------------------- filters
    @property
    def categories(self):
        """The shown categories (a frozenset of str), or None for all. Set an iterable of names or None."""
        shown = self._state.categories
        if shown is None:
            return None
        return frozenset(c for c, on in zip(self.index.categories, shown) if on)

    @categories.setter
    @guarded
    def categories(self, shown) -> None:
        if shown is None:
            mask = None
        else:
            if isinstance(shown, str):
                shown = [shown]
            shown = {str(c) for c in shown}
            unknown = shown - set(self.index.categories)
            if unknown:
                raise GraphValidationError(f"{NAME} categories: {sorted(unknown)!r} not in the trace "
                                           f"(it has {self.index.categories!r})")
            mask = np.array([c in shown for c in self.index.categories], bool)
        self._update(categories=mask)

    @property
    def min_duration_ns(self) -> int:
        """Spans shorter than this are hidden (0: all shown)."""
        return self._state.min_duration_ns

    @min_duration_ns.setter
    @guarded
    def min_duration_ns(self, value) -> None:
        self._update(min_duration_ns=_int("min_duration_ns", value, 0))

    @property
    def search(self):
        """The search: None, a substring (case-insensitive) or a compiled
        regex over span names. Matching spans stay bright (the rest dims);
        set ``(pattern, "filter")`` to hide the rest. :attr:`search_count`
        counts the matches in the window."""
        return None if self._state.search is None else self._state.search_pattern

    @search.setter
    @guarded
    def search(self, value) -> None:
        mode = "highlight"
        if isinstance(value, tuple):
            if len(value) != 2 or value[1] not in ("highlight", "filter"):
                raise GraphValidationError(f'{NAME} search tuple must be (pattern, "highlight"|"filter") '
                                           f"(got {value!r})")
            value, mode = value
        if value is None or value == "":
            self._update(search=None, search_mode="highlight", search_pattern=None)
        elif isinstance(value, (str, re.Pattern)):
            self._update(search=self.index.name_matches(value), search_mode=mode, search_pattern=value)
        else:
            raise GraphTypeError(f"{NAME} search must be a str, a re.Pattern or None (got {type(value).__name__})")

    @property
    @guarded
    def search_count(self) -> int:
        """Spans whose name matches the search in the current view (0 without
        a search): the GPU frame's count, read back (this call waits)."""
        if self._state.search is None:
            return 0
        from ...trace.interaction import STATS
        self._write_frame(self._size, 1.0)
        return int(self._graph.read_stats()[STATS["search_matches"]])

    # ---------------------------------------------------------- summary
    @guarded
    def summary(self):
        """pandas DataFrame per name of the selection (or, without one, of the
        spans in the current view): count, total, mean, max duration and
        self time (total minus the time in their children), in ns, by total
        descending. Computed with GPUGroupAggregation (float32 sums) on a
        small graph of its own, compiled on the first call."""
        from .summary import SpanSummary
        if self._summary is None:
            self._summary = SpanSummary(self.device, self.index)
        mask = np.zeros(self.index.n, bool)
        if len(self._selection):
            mask[self._selection] = True
        else:
            mask = self._visible().copy()
        return self._summary.run(mask).to_pandas()

    @property
    def compile_count(self) -> int:
        """Compilations of the frame graph: 1 per capacity tier (interactions never recompile)."""
        return self.inspector.compile_count

    # ------------------------------------------------------------ frames
    def draw(self, encoder, target_view, size) -> None:
        """GPUCanvas drawable hook: write what changed, record the graph and
        the presentation (frame copy + overlay). Never submits."""
        if self._check_usable("draw", raise_lost=False):
            return
        width, height = (max(2, int(v)) for v in size)
        ratio = 1.0 if self._offscreen else self._pixel_ratio()
        logical = (width / ratio, height / ratio)
        t0 = time.perf_counter()
        graph = self._graph
        if graph.sampler.poll():  # samples of earlier (submitted) frames, never waiting
            self._apply_sample()
        self._write_frame(logical, ratio)
        self.inspector.poll()
        cpu = graph.encode(encoder)
        graph.sample(encoder, self._sample_key(logical))
        self.inspector.sample_counts(encoder)
        self.inspector.record_encode(cpu)
        if self._overlay is None or self._overlay.pixel_ratio != ratio:
            if self._overlay is not None:
                self._overlay.destroy()
            self._overlay = PlotOverlay(self.device, pixel_ratio=ratio, label="trace-viewer-overlay")
        geometry = self._geometry(logical)
        sample = self._drawn_sample = graph.sampler.latest
        state, pointer = self._state, self._pointer
        hover_lines = span_lines(self.index, pointer.hover) if pointer.hover is not None else None
        status = status_line(self.index, state, self._selection, geometry, None if sample is None else sample.stats)
        queue_decorations(self._overlay, index=self.index, layout=self._layout(),
                          process_expanded=state.process_expanded, labels=label_items(self.index, state, sample),
                          counters=self.index.counter_tracks, cache=self._decorations_cache, geometry=geometry,
                          minimap=self._minimap, text_dark=self._text_dark, hover_lines=hover_lines,
                          pointer=pointer.position, status=status)
        if pointer.band is not None:
            queue_band(self._overlay, pointer.band)
        self._overlay.upload(self.device.queue, target_size=(width, height))
        self._presenter.present(encoder, target_view, (width, height), self._overlay)
        self._encode_seconds = time.perf_counter() - t0

    def frame_submitted(self) -> None:
        """GPUCanvas drawable hook: the frame :meth:`draw` recorded was
        submitted, so its readback sample may map; polls for it from the
        event loop. A host that calls :meth:`draw` itself calls this after
        its submit."""
        if self._check_usable("frame_submitted", raise_lost=False):
            return
        self._graph.sampler.submitted()
        self._poller.later()

    def _sample_key(self, logical) -> tuple:
        return (self._version, tuple(logical), self._graph.render_size, self._pointer.position)

    def _apply_sample(self) -> None:
        """Take the hover from the latest sample when it was drawn for the current pointer."""
        found, hover = sample_hover(self._graph.sampler.latest, self._pointer.position, self.index.n)
        if found:
            self._pointer = replace(self._pointer, hover=hover)

    def _sample_arrived(self) -> bool:
        """A sample came back after the last frame: take its hover; True when
        the overlay drawn last is not this sample's (a redraw shows it)."""
        self._apply_sample()
        return self._graph.sampler.latest is not self._drawn_sample

    def _pixel_ratio(self) -> float:
        try:
            return max(float(self.canvas.get_pixel_ratio()), 0.25)
        except (AttributeError, TypeError, ValueError):
            return 1.0

    @guarded
    def draw_offscreen(self, *, width: int, height: int) -> np.ndarray:
        """The canvas content rendered offscreen at ``width`` x ``height``
        logical = physical pixels: ``(height, width, 4)`` uint8 RGBA. The
        tracks fill the image (the view's size follows it while it renders)."""
        kept = self._size
        self._offscreen = True
        try:
            if isinstance(width, int) and isinstance(height, int) and not isinstance(width, bool):
                self._size = (width, height)
            self._cache.clear()
            image = draw_offscreen(self, width=width, height=height, device=self.device)
            if self._graph.sampler.poll(wait=True):  # an explicit image: its labels, hover and counts now
                self._apply_sample()
                image = draw_offscreen(self, width=width, height=height, device=self.device)
            return image
        finally:
            self._offscreen = False
            self._size = kept
            self._cache.clear()
            self._frames.forget()

    # ------------------------------------------------------------ events
    def handle_event(self, event) -> bool:
        """GPUCanvas event hook (rendercanvas events); True to redraw."""
        if self._event_ignored(event):
            return False
        state = self._state
        outcome = handle(state, self._pointer, event, size=self._size, layout=self._layout(),
                         extent=self.index.extent)
        self._pointer, self._size = outcome.pointer, outcome.size
        if outcome.state is not state or event.get("event_type") == "resize":
            self._state = outcome.state
            self._changed()
        if outcome.request is not None:
            self._carry_out(outcome.request)
        return outcome.redraw

    def _carry_out(self, request) -> None:
        """What an event asked of the viewer (GPU picking, selection): see :class:`.events.Outcome`."""
        kind = request[0]
        if kind == "select_at":
            picked = self.pick(*request[1:])
            self.select([] if picked is None else [picked])
        elif kind == "zoom_at":
            picked = self.pick(*request[1:])
            if picked is not None:
                self.zoom_to_span(picked)
        elif kind == "select_region":
            self.select_region(request[1], rows=request[2])
        elif kind == "clear_selection":
            self.select([])

    @guarded
    def zoom_to_span(self, span_id) -> None:
        """Fit the window to one span (10 % margin each side)."""
        s = int(_span_ids(self.index, span_id, "zoom_to_span")[0])
        start, end = int(self.index.start[s]), int(self.index.end[s])
        margin = max((end - start) // 10, MIN_WINDOW_NS // 2)
        self._set_window(start - margin, end + margin)

    # ---------------------------------------------------------- lifecycle
    _LIFECYCLE_NAME = NAME
    _LIFECYCLE_OWNED = "_graph"  # WidgetLifecycle: None once closed
    _LIFECYCLE_PANEL = "details"  # WidgetLifecycle: shows a device loss (escaped)

    def close(self) -> None:
        """Close every ipywidget the viewer made (canvas, inspector, details,
        their boxes, layouts and styles) and free the graph, the scene and
        the overlay. Waits for a frame or call in progress on another thread
        (it holds :attr:`call_lock`); from then on every public method raises
        GraphStateError. Idempotent; does not wait for the GPU."""
        with self.call_lock:
            if getattr(self, "_graph", None) is not None:
                self._poller.cancel()
                close_widget_tree(self, root=False)  # the canvas's close event still finds the viewer open
                if self._overlay is not None:
                    self._overlay.destroy()
                if self._summary is not None:
                    self._summary.destroy()
                if self._region is not None:
                    self._region.destroy()
                self._presenter.destroy()
                self._graph.destroy()
                self._graph = None
                self.scene.destroy()
            super().close()

