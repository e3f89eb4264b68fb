"""GPUTraceInteraction: the reusable GPU policy of a trace view (time
windows, process and thread expansion, filters, linked-span focus, ancestor
retention, stable indirect draws): the compute half of one trace-view
frame, built once per capacity tier.

Per frame (all on the GPU, no readback)::

    clear            cells, stats                              (trace_clear.wgsl)
    layout           GPUHierarchyLayout: thread heights -> row offsets,
                     then thread_rows by thread row          (trace_rows.wgsl)
    predicate        per span record: 64-bit window, expansion, rows,
                     categories, duration, search, focus        (trace_predicate.wgsl)
                     -> draw mask (spans >= 2 pixel columns),
                        sub-pixel spans into per-(row, column) cells,
                        collapsed-process spans into density cells, stats
    compaction       GPUVisibilityWorkflow: draw mask -> visible_rows,
                     count -> draw_commands record SPANS
    edges            (edges=True) GPUAncestorProjection + links pass
    merge            runs of equal cells -> merged / density records,
                     counts -> records MERGED / DENSITY          (trace_merge.wgsl)

Only when their inputs change (its own compiled graphs, made due by
:meth:`GPUTraceInteraction.write` and recorded by
:meth:`GPUTraceInteraction.encode_changes` into the caller's encoder, before
the caller's graph)::

    focus            GPUGraphTraversal over links, both directions -> focus_mask
                     (focus seeds or depth changed)
    minimap          whole-trace bins of the filtered spans' starts (trace_minimap.wgsl)
                     (categories, min duration, search filter, or focus in "hide" mode changed)

Neither depends on the window, so a pan or zoom frame never pays for them.
The CPU writes only :meth:`GPUTraceInteraction.write`'s small buffers;
nothing here submits: the caller encodes and submits.
"""

from __future__ import annotations

import struct

import numpy as np
import wgpu

from ...algorithms.dispatch import ceil_div
from ...algorithms.hierarchy_layout import GPUHierarchyLayout
from ...graph import GPUCommandGraph
from ...graph.checks import check_count, check_id
from ...errors import GraphStateError, GraphTypeError, GraphValidationError
from ...render.draw_commands import DrawCommandBuffer
from . import nodes as steps
from ..index import TraceLayout
from .tables import edges_by_link, link_csrs, row_tiles
from .nodes import (DENSITY, EDGES, MERGED, ROWS_PER_GROUP, SPANS, STATS_WORDS,
                    VIEW_BYTES)
from .state import DEFAULT_FOCUS_DEPTH, TraceViewState, column_bounds
from ..model import Trace
from ..scene import GPUTraceScene
from ...workflows.visibility import GPUVisibilityWorkflow

__all__ = ["GPUTraceInteraction", "GPUTraceFrame", "TraceLayout", "SPANS", "MERGED", "DENSITY", "EDGES", "STATS",
           "DEFAULT_WIDTH_CAPACITY", "DEFAULT_ROW_CAPACITY", "DEFAULT_MINIMAP_BINS", "DEFAULT_MAX_SEEDS"]

#: Words of :attr:`GPUTraceInteraction.stats`, by name.
STATS = {
    "visible": 0,        # spans passing every test (window, rows, filters, focus "hide"), drawn or merged
    "drawn": 1,          # of those, drawn one by one (== instance count of SPANS)
    "merged": 2,         # of those, sub-pixel: merged into cells
    "search_matches": 3,  # visible spans whose name matches the search (0 without one)
    "collapsed": 4,      # spans of collapsed processes in the window and rows (density cells)
    "density_max": 5,    # largest density cell value
    "merged_records": 6,  # == instance count of MERGED
    "density_records": 7,  # == instance count of DENSITY
    "minimap_max": 8,    # largest minimap bin
    "focused": 9,        # spans in the focus mask (0 without focus)
}
DEFAULT_WIDTH_CAPACITY = 4096
DEFAULT_ROW_CAPACITY = 256
DEFAULT_MINIMAP_BINS = 1024
DEFAULT_MAX_SEEDS = 64
_VIEW_WORDS = struct.Struct("<16I")  # the TraceView uniform as written (VIEW_BYTES may pad it)
_FLOAT32 = struct.Struct("<f")


class GPUTraceInteraction:
    """Visibility, sub-pixel merging, layout, focus and density of a trace
    view, as one part of a compiled command graph: the spec's reusable
    trace policy. :meth:`add_to_graph` declares its nodes; the caller
    encodes and submits.

    Parameters
    ----------
    scene : GPUTraceScene
        Its :attr:`~GPUTraceScene.index` gives the thread display order,
        lanes and codes.
    trace : gpuviz.trace.Trace, optional
        The trace the scene holds (``scene.index.trace``, the default); only
        checked against it.
    capacity : int, optional
        Span capacity tier (at least the scene's span count; default: it).
        Output buffers are sized by it.
    width_capacity : int
        Largest canvas width in pixel columns (cells are rows x width).
    row_capacity : int
        Largest vertical viewport in rows.
    max_depth : int
        Focus hops compiled into the traversal (default 8).
    max_seeds : int
        Focus seeds the seed buffer holds.
    minimap_bins : int
        Bins of the whole-trace density (at most 4096).
    edges : bool
        Whether each frame resolves the link edges (``edges``, ``anchors``,
        record ``EDGES``): an ancestor projection over every span plus a
        pass over the links. Without them ``EDGES`` stays at 0 instances.
    edge_depth : int
        Parent steps a hidden link endpoint climbs to its closest shown
        ancestor (GPUAncestorProjection ``max_depth``).
    piece_rows : int, optional
        Rows per predicate dispatch, a multiple of 2048 (default: as many
        records as one storage binding holds; 100M records need several).
    id : str
        Prefix of node and buffer IDs.

    Attributes (GPU outputs the widget's render nodes read)
    ----------
    draw_commands : DrawCommandBuffer
        4 ``"draw"`` records, vertex_count 6 each, instance counts written
        by the GPU: ``SPANS`` (visible_rows), ``MERGED``, ``DENSITY``, ``EDGES``.
    visible_rows : wgpu.GPUBuffer
        uint32 scene rows drawn one by one (spans covering 2+ pixel
        columns), ascending; ``capacity`` rows, the first instance-count valid.
        A span's layout row is ``thread_rows[s.thread] + s.lane``.
    thread_rows : wgpu.GPUBuffer
        uint32 per thread row: its first layout row (in a collapsed
        process: the process's summary row).
    merged : wgpu.GPUBuffer
        ``vec4<u32>`` records ``(row, x0, x1, name)``: layout row, pixel
        columns ``[x0, x1)`` where every column holds a sub-pixel span and
        the largest name ID among those spans is ``name`` in each (order
        unspecified; ``row_capacity * width_capacity`` records).
    density : wgpu.GPUBuffer
        ``vec4<u32>`` records ``(row, x0, x1, count)``: summary row of a
        collapsed process, columns ``[x0, x1)`` each overlapped by ``count``
        (> 0) of its spans in the window.
    edges : wgpu.GPUBuffer
        ``vec4<u32>`` records ``(source row, target row, link ID, flags)``,
        instance count in record ``EDGES`` (order unspecified): the links
        both of whose ends resolve (a shown span; a hidden span's closest
        shown ancestor; a span of a collapsed process: a point on its
        summary row, flag 1 for the source, 2 for the target, the row being
        the span's own) with at least one end in view, ends not the same span.
    shown : wgpu.GPUBuffer
        uint32 per scene row: 1 drawn or merged, 0 hidden (open process),
        2 collapsed process and in its density, 3 collapsed process otherwise.
    anchors : wgpu.GPUBuffer
        uint32 per scene row: itself when its shown code is nonzero, else
        the closest such ancestor within ``edge_depth`` (0xFFFFFFFF: none).
    minimap : wgpu.GPUBuffer
        uint32 ``minimap_bins`` bins: span starts of the spans passing the
        filters (not the window or rows) over the whole trace extent.
    stats : wgpu.GPUBuffer
        uint32 words named by :data:`STATS` (for the inspector's readback ring).
    focus_mask : wgpu.GPUBuffer
        uint32 per scene row: 1 within the focus depth of a seed (0 without focus).
    search_mask, category_mask : wgpu.GPUBuffer
        Bit words (bit ``i % 32`` of word ``i // 32``) per name / category ID.
    buffers : dict of str to wgpu.GPUBuffer
        Every buffer the frame owns, by dashed name (``"visible-rows"``...).
    view : wgpu.GPUBuffer
        Uniform ``TraceView`` (``shaders/trace_view.wgsl``): window origin
        and end as time words, width, rows, flags, pixels per ns.

    Notes
    -----
    focus_graph, minimap_graph : CompiledGPUCommandGraph or None
        Its own graphs for the whole-trace work that does not depend on the
        window (None without spans): the focus traversal and the minimap
        pass. Compiled once at construction; :meth:`write` makes them due
        when their inputs change (the minimap is due after construction)
        and :meth:`encode_changes` records the due ones into the caller's
        encoder (benchmarks time them).

    Built once per capacity tier; :meth:`write` changes only buffer
    contents, so a compiled graph keeps working through every interaction.
    The frame owns its buffers (:meth:`destroy`); the graph borrows them.
    Never submits: every graph it owns is recorded into an encoder the
    caller passes and submits; never reads back on the frame path (only
    :meth:`read_back`, an explicit wait) or records render work;
    sub-pixel merging is exact on the integer column grid of
    :func:`~gpuviz.trace.interaction.state.column_bounds`.
    Draws nothing: the records are for the widget's render bundle.

    The focus traverses the frame's own packed link CSRs (both directions,
    built on the CPU at construction: 8 bytes per span + 8 per link), not
    the scene's per-partition ones: one partition keeps the traversal at a
    few dispatches per hop, which is what bounds the CPU encode time.
    """

    def __init__(self, *, scene, trace=None, capacity=None, width_capacity=DEFAULT_WIDTH_CAPACITY,
                 row_capacity=DEFAULT_ROW_CAPACITY, max_depth=DEFAULT_FOCUS_DEPTH, max_seeds=DEFAULT_MAX_SEEDS,
                 minimap_bins=DEFAULT_MINIMAP_BINS, edges=True, edge_depth=32, piece_rows=None, id="trace-view"):
        self.id = check_id("GPUTraceInteraction", id)
        if not isinstance(scene, GPUTraceScene):
            raise GraphTypeError(f'GPUTraceInteraction "{id}" scene must be a GPUTraceScene '
                                 f"(got {type(scene).__name__})")
        if trace is None:
            trace = scene.index.trace
        if not isinstance(trace, Trace):
            raise GraphTypeError(f'GPUTraceInteraction "{id}" trace must be a gpuviz.trace.Trace '
                                 f"(got {type(trace).__name__})")
        n = scene.span_count
        if trace.spans.num_rows != n:
            raise GraphValidationError(f'GPUTraceInteraction "{id}" trace has {trace.spans.num_rows} spans but the '
                                       f"scene has {n}")
        capacity = n if capacity is None else self._count("capacity", capacity, max(n, 1))
        self.width_capacity = self._count("width_capacity", width_capacity, 1, 1 << 14)
        self.row_capacity = self._count("row_capacity", row_capacity, 1, 1 << 14)
        self.max_depth = self._count("max_depth", max_depth, 0, 1024)
        self.max_seeds = self._count("max_seeds", max_seeds, 1, 1 << 20)
        self.minimap_bins = self._count("minimap_bins", minimap_bins, 1, 4096)
        self.edge_depth = self._count("edge_depth", edge_depth, 0, 1 << 24)
        if not isinstance(edges, bool):
            raise GraphTypeError(f'GPUTraceInteraction "{id}" edges must be a bool (got {type(edges).__name__})')
        self.with_edges = edges
        self.piece_rows = None if piece_rows is None else self._count("piece_rows", piece_rows, ROWS_PER_GROUP)
        if self.piece_rows is not None and self.piece_rows % ROWS_PER_GROUP:
            raise GraphValidationError(f'GPUTraceInteraction "{id}" piece_rows must be a multiple of {ROWS_PER_GROUP} '
                                       f"(got {self.piece_rows})")
        self.scene, self.capacity, self.span_count = scene, capacity, n
        self.device = scene.device
        self.process_count, self.thread_count = trace.processes.num_rows, trace.threads.num_rows
        self.category_count, self.name_count = len(scene.categories), len(scene.names)
        self.index = index = scene.index
        if trace.threads.num_rows != index.thread_count:
            raise GraphValidationError(f'GPUTraceInteraction "{id}" trace has {trace.threads.num_rows} threads but the '
                                       f"scene has {index.thread_count}")
        self.thread_order, self.thread_lanes = index.thread_order, index.thread_lanes
        self.thread_process = index.thread_process.astype(np.uint32)
        self._host_links(trace)
        self.extent_ns = int(np.max(trace.spans.column("start_ns").to_numpy() - scene.time_origin_ns
                                    + np.maximum(trace.spans.column("duration_ns").to_numpy(), 1))) if n else 0
        self.host_tiles = row_tiles(trace, scene)
        self.views: dict = {}
        self._written: dict = {}
        self._destroyed = False
        self.buffers: dict = {}
        self._graph_handles: dict = {}
        self.focus_graph = self.minimap_graph = None
        self._change_keys = {"focus": None, "minimap": None}
        self._due = {"focus": False, "minimap": False}  # change graphs to record before the next frame
        try:
            self._create_buffers()
            self._build_change_graphs()
        except BaseException:
            self.destroy()
            raise

    def _count(self, name, value, low, high=None):
        return check_count(f'GPUTraceInteraction "{self.id}"', name, value, low=low, high=high)

    # ------------------------------------------------------------- host side
    def _host_links(self, trace):
        """One packed CSR of the links each way (scene rows), for a single-partition
        focus traversal: a few dispatches per hop instead of a few per partition."""
        ids = trace.links.column("source").to_numpy(), trace.links.column("target").to_numpy()
        src, dst = (self.seed_rows_array(x) for x in ids)
        self.link_count = len(src)
        self.host_csr = link_csrs(src, dst, self.span_count)

    def layout(self, state: TraceViewState) -> TraceLayout:
        """The CPU row layout of ``state`` (gutter labels; same as the GPU's)."""
        return self.index.row_layout(process_expanded=state.process_expanded,
                                     thread_expanded=state.thread_expanded)

    def initial_state(self, *, width=1000, rows=None) -> TraceViewState:
        """The whole trace, everything expanded, every category, no search or focus."""
        start = self.scene.time_origin_ns
        end = start + max(self.extent_ns, int(width))
        rows = (0, self.row_capacity) if rows is None else rows
        return TraceViewState(window=(start, end), width=int(width), rows=tuple(rows),
                              process_expanded=np.ones(self.process_count, bool),
                              thread_expanded=np.ones(self.thread_count, bool))

    # --------------------------------------------------------------- buffers
    def _buffer(self, name, nbytes, usage, data=None):
        size = max(16, -(-int(nbytes) // 16) * 16)
        buffer = self.device.create_buffer(label=f"{self.id}-{name}", size=size, usage=usage)
        self.buffers[name] = buffer
        if data is not None:
            raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
            if raw.nbytes:
                self.device.queue.write_buffer(buffer, 0, raw)
        return buffer

    def _create_buffers(self):
        BU = wgpu.BufferUsage
        rw = BU.STORAGE | BU.COPY_DST | BU.COPY_SRC
        n, t, p = self.capacity, self.thread_count, self.process_count
        cells = self.row_capacity * self.width_capacity
        self.view = self._buffer("view", VIEW_BYTES, BU.UNIFORM | BU.COPY_DST)
        self.visible_rows = self._buffer("visible-rows", 4 * n, rw)
        self.thread_rows = self._buffer("thread-rows", 4 * t, rw)
        self.merged = self._buffer("merged", 16 * cells, rw)
        self.density = self._buffer("density", 16 * cells, rw)
        self.minimap = self._buffer("minimap", 4 * self.minimap_bins, rw)
        self.stats = self._buffer("stats", 4 * STATS_WORDS, rw)
        self.focus_mask = self._buffer("focus-mask", 4 * n, rw)
        self.search_mask = self._buffer("search-mask", 4 * ceil_div(max(self.name_count, 1), 32), rw)
        self.category_mask = self._buffer("category-mask", 4 * ceil_div(max(self.category_count, 1), 32), rw)
        self.cells = self._buffer("cells", 8 * cells, rw)
        self.draw_mask = self._buffer("draw-mask", 4 * n, rw)
        self.shown = self._buffer("shown", 4 * n, rw)
        self.anchors = self._buffer("anchors", 4 * n, rw)
        self.edges = self._buffer("edges", 16 * self.link_count, rw)
        self.columns = self._buffer("columns", 8 * (self.width_capacity + 1), rw)
        bounds = column_bounds((0, max(self.extent_ns, self.minimap_bins)), self.minimap_bins)
        self.minimap_bounds = self._buffer("minimap-bounds", 8 * (self.minimap_bins + 1), rw,
                                           bounds.astype(np.uint64))
        self.thread_states_word = -(-max(p, 1) // 64) * 64  # 256-byte aligned: a view of its own
        self.states = self._buffer("states", 4 * (self.thread_states_word + t), rw)
        self.slot_states = self._buffer("slot-states", 4 * t, rw)
        self.focus_seeds = self._buffer("focus-seeds", 4 * self.max_seeds, rw)
        self.focus_control = self._buffer("focus-control", 256 + 4, rw)  # seed count @0, active depth @256
        for name, array in self.host_csr.items():
            self._buffer(name, 4 * len(array), rw, array)
        del self.host_csr
        self._buffer("tiles", self.host_tiles.nbytes, rw, self.host_tiles)
        del self.host_tiles
        info = np.zeros((t, 4), np.uint32)
        if t:
            info[:, 0] = self.index.thread_slot
            info[:, 1] = self.thread_process
            info[:, 2] = self.index.process_first_slot[self.index.thread_process]
        self.thread_info = self._buffer("thread-info", 16 * t, rw, info)
        order = self.thread_order
        self.slot_process = self._buffer("slot-process", 4 * t, rw, self.thread_process[order])
        self.slot_lanes = self._buffer("slot-lanes", 4 * t, rw, self.thread_lanes[order])
        self.draw_commands = DrawCommandBuffer(self.device, type="draw", capacity=4, label=f"{self.id}-commands")
        self.draw_commands.write_records(np.array([[6, 0, 0, 0]] * 4, np.uint32))

    # ----------------------------------------------------------------- graph
    def graph_view(self, graph, name, *, fmt="uint32", length=None, byte_offset=0):
        """A data view of the frame's buffer ``name`` (a key of :attr:`buffers`)
        in ``graph``, the graph :meth:`add_to_graph` is filling (each buffer is
        imported once per graph); default: the whole buffer as uint32."""
        buffer = self.buffers[name]
        key = f"{self.id}-{name}"
        handles = self._graph_handles.setdefault(id(graph), (graph, {}))[1]
        handle = handles.get(name)
        if handle is None:
            handle = graph.import_buffer(id=key, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
            handles[name] = handle
        if length is None:
            length = buffer.size // 4
        return graph.create_data_view(handle, format=fmt, length=length, byte_offset=byte_offset)

    def add_to_graph(self, graph, *, scene_views=None) -> list:
        """Add the frame's nodes to ``graph``; returns their IDs.

        ``scene_views``: the dict of ``scene.import_to_graph(graph)`` when the
        caller already imported the scene (default: import it as
        ``f"{id}-scene"``). Afterwards :attr:`views` holds GraphDataViews of
        every output buffer in ``graph`` (keys as the attribute names, plus
        ``"scene"``: the scene views) for the widget's render nodes.

        Raises GraphValidationError when the device binds fewer storage
        buffers per stage than the predicate needs (13), GraphStateError
        after :meth:`destroy`. Call once per graph."""
        if self._destroyed:
            raise GraphStateError(f'GPUTraceInteraction "{self.id}" was destroyed')
        limit = int(self.device.limits["max-storage-buffers-per-shader-stage"])
        if limit < 14:
            raise GraphValidationError(f'GPUTraceInteraction "{self.id}" needs 14 storage buffers per shader stage; '
                                       f"the device binds {limit}")
        if scene_views is None:
            scene_views = self.scene.import_to_graph(graph, id=f"{self.id}-scene")
        n, t = self.span_count, self.thread_count
        cells = self.row_capacity * self.width_capacity
        dcb = self.draw_commands
        handle = graph.import_buffer(id=f"{self.id}-commands", byte_length=dcb.byte_length,
                                     usage=dcb.buffer.usage, buffer=dcb.buffer)
        v = {name: self.graph_view(graph, name) for name in
             ("view", "visible-rows", "thread-rows", "merged", "density", "minimap", "stats", "focus-mask",
              "search-mask", "category-mask", "cells", "draw-mask", "columns", "minimap-bounds", "states",
              "slot-states", "focus-seeds", "thread-info", "slot-process", "slot-lanes", "shown", "anchors", "tiles",
              "edges")}
        v["commands"] = graph.create_data_view(handle, format="uint32", length=dcb.byte_length // 4)
        v["spans-count"] = graph.create_data_view(handle, format="uint32", length=1,
                                                  byte_offset=dcb.instance_count_byte_offset(SPANS))
        v["process-states"] = self.graph_view(graph, "states", length=max(self.process_count, 1))
        v["thread-states"] = self.graph_view(graph, "states", length=max(t, 1),
                                          byte_offset=4 * self.thread_states_word)
        v["seed-count"] = self.graph_view(graph, "focus-control", length=1)
        v["active-depth"] = self.graph_view(graph, "focus-control", length=1, byte_offset=256)
        v["offsets"] = graph.create_data_view(graph.create_transient_buffer(
            id=f"{self.id}-layout-offsets", byte_length=4 * max(t, 4), usage=wgpu.BufferUsage.STORAGE),
            format="uint32", length=max(t, 1))
        nodes = [steps.add_clear(self, graph, v, cells)]
        if t:
            nodes += GPUHierarchyLayout(
                id=f"{self.id}-layout", parent_states=v["process-states"],
                child_states=self.graph_view(graph, "slot-states", length=t),
                offsets=graph.create_data_view(v["offsets"].handle, format="uint32", length=t),
                child_parents=self.graph_view(graph, "slot-process", length=t),
                expanded_child_height=self.graph_view(graph, "slot-lanes", length=t),
                collapsed_child_height=1, collapsed_parent_height=1).add_to_graph(graph)
            nodes.append(steps.add_rows(self, graph, v))
        if n:
            nodes.append(steps.add_predicate(self, graph, v, scene_views))
            nodes += GPUVisibilityWorkflow(
                id=f"{self.id}-compact", output=self.graph_view(graph, "visible-rows", length=n),
                count=v["spans-count"], masks=(self.graph_view(graph, "draw-mask", length=n),)).add_to_graph(graph)
            if self.with_edges:
                nodes += steps.add_edges(self, graph, v, scene_views)
        nodes.append(steps.add_merge(self, graph, v, cells))
        self.views = {"scene": scene_views, **{k.replace("-", "_"): view for k, view in v.items()}}
        self.views["draw_commands"] = self.views.pop("commands")
        self.node_ids = nodes
        self._graph_handles.pop(id(graph), None)
        return nodes

    def _build_change_graphs(self) -> None:
        """Compile the focus and minimap graphs (once); the minimap of the
        zeroed view (no filter: every span counts) is due."""
        if not self.span_count:
            return
        for name in ("focus", "minimap"):
            graph = GPUCommandGraph(self.device, id=f"{self.id}-{name}")
            v = {key: self.graph_view(graph, key) for key in
                 ("view", "focus-mask", "minimap", "minimap-bounds", "category-mask", "search-mask")}
            if name == "focus":
                v["seed-count"] = self.graph_view(graph, "focus-control", length=1)
                v["active-depth"] = self.graph_view(graph, "focus-control", length=1, byte_offset=256)
                steps.add_focus(self, graph, v)
            else:
                steps.add_minimap(self, graph, v, self.scene.import_to_graph(graph, id=f"{self.id}-minimap-scene"))
            setattr(self, f"{name}_graph", graph.compile())
            self._graph_handles.pop(id(graph), None)
        self._due["minimap"] = True
        self._change_keys["minimap"] = (0, 0, 0, None, None, None)  # the key of the zeroed view

    def encode_changes(self, encoder) -> tuple:
        """Record the due focus and/or minimap graph (in that order) into
        ``encoder``, before the caller's graph in the same encoder; returns
        the names recorded (``"focus"``, ``"minimap"``). Never submits: the
        caller submits ``encoder`` (the writes :meth:`write` queued reach the
        GPU first, in queue order). A caller that drops the encoder drops
        that work too: record changes only into an encoder that is submitted."""
        if self._destroyed:
            raise GraphStateError(f'GPUTraceInteraction "{self.id}" was destroyed')
        done = []
        for name in ("focus", "minimap"):
            if self._due[name]:
                getattr(self, f"{name}_graph").encode(encoder)
                self._due[name] = False
                done.append(name)
        return tuple(done)



    # ----------------------------------------------------------------- write
    def _bits(self, flags, count) -> np.ndarray:
        words = np.zeros(ceil_div(max(count, 1), 32) * 32, bool)
        words[:count] = flags
        return np.packbits(words.reshape(-1, 8), axis=1, bitorder="little").reshape(-1).view(np.uint32)

    def seed_rows(self, span_ids) -> np.ndarray:
        """uint32 scene rows of span IDs (rows are IDs unless the scene regrouped them)."""
        return self.seed_rows_array(np.asarray(list(span_ids), np.int64))

    def seed_rows_array(self, ids) -> np.ndarray:
        """uint32 scene rows of a numpy array of span IDs."""
        ids = np.asarray(ids).astype(np.uint32)
        if self.scene.rows_are_ids:
            return ids
        if not hasattr(self, "_row_of_id"):
            self._row_of_id = np.empty(self.span_count, np.uint32)
            self._row_of_id[self.scene.span_ids] = np.arange(self.span_count, dtype=np.uint32)
        return self._row_of_id[ids]

    def view_words(self, state: TraceViewState) -> np.ndarray:
        """The 16 uint32 words of the ``TraceView`` uniform for ``state``."""
        return np.array(self._view_words(state), np.uint32)

    def _view_words(self, state: TraceViewState) -> tuple:
        """:meth:`view_words` as Python ints (what :meth:`write` packs: no numpy on a pan)."""
        w0, w1 = (int(x) for x in state.window)
        flags = 0
        if len(state.focus_seeds):
            flags |= 1 | (2 if state.focus_mode == "hide" else 0)
        if state.search is not None:
            flags |= 4 | (8 if state.search_mode == "filter" else 0)
        if state.categories is not None:
            flags |= 16
        lo0, hi0 = self.scene.time_words(w0)
        lo1, hi1 = self.scene.time_words(w1)
        (px_per_ns,) = struct.unpack("<I", _FLOAT32.pack(state.width / (w1 - w0)))  # float32 bits
        duration = int(state.min_duration_ns)
        return (lo0, hi0, lo1, hi1, int(state.width), int(state.rows[0]), int(state.rows[1]), flags, px_per_ns,
                int(state.focus_depth), duration & 0xFFFFFFFF, duration >> 32, self.span_count, 0, 0, 0)

    def write(self, state: TraceViewState) -> None:
        """Validate ``state`` and queue the parameter buffers that changed
        (``queue.write_buffer``); when the focus (seeds, depth) or the minimap's
        inputs (categories, min duration, search "filter", focus "hide")
        changed, also makes :attr:`focus_graph` / :attr:`minimap_graph` due
        for :meth:`encode_changes`. Never records, submits, recompiles or waits.

        Raises GraphValidationError / GraphTypeError for a state that does
        not fit the scene or the frame: wrong array shapes, a width or row
        count over the capacities, a window narrower than ``width`` ns (at
        least 1 ns per column) or more than 2**62 ns from the trace, unknown
        focus seeds, a depth over ``max_depth``."""
        if self._destroyed:
            raise GraphStateError(f'GPUTraceInteraction "{self.id}" was destroyed')
        state.check(processes=self.process_count, threads=self.thread_count, categories=self.category_count,
                    names=self.name_count, width_capacity=self.width_capacity, row_capacity=self.row_capacity,
                    max_depth=self.max_depth, max_seeds=self.max_seeds, spans=self.span_count)
        w0, w1 = (int(x) for x in state.window)
        if w1 - w0 < state.width:
            raise GraphValidationError(f'GPUTraceInteraction "{self.id}" window is {w1 - w0} ns wide for {state.width} '
                                       "columns (needs at least 1 ns per column)")
        origin = self.scene.time_origin_ns
        if max(abs(w0 - origin), abs(w1 - origin)) >= 1 << 62:
            raise GraphValidationError(f'GPUTraceInteraction "{self.id}" window ({w0}, {w1}) is 2**62 ns or more from '
                                       f"the trace origin {origin}")
        # Each buffer is rebuilt only when its inputs differ from the last write's
        # (a pan changes the view alone: columns are relative to the window start).
        pexp = np.asarray(state.process_expanded, bool)
        texp = np.asarray(state.thread_expanded, bool)
        cats = None if state.categories is None else np.asarray(state.categories, bool)
        search = None if state.search is None else np.asarray(state.search, bool)
        focus = tuple(int(v) for v in state.focus_seeds)
        view = (w0, w1, state.width, tuple(state.rows), focus != (), state.focus_mode,
                None if search is None else state.search_mode, cats is None, state.focus_depth, state.min_duration_ns)
        if self._written.get("view") != view:  # a pan: the one write, packed from Python ints
            words = self._written["view-words"] = self._view_words(state)
            self.device.queue.write_buffer(self.buffers["view"], 0, _VIEW_WORDS.pack(*words))
            self._written["view"] = view
        self._put("columns", (w1 - w0, state.width),
                  lambda: column_bounds((0, w1 - w0), state.width).astype(np.uint64))
        thread_bytes = texp.tobytes()
        self._put("states", (pexp.tobytes(), thread_bytes), lambda: self._states(pexp, texp))
        self._put("slot-states", thread_bytes, lambda: texp[self.thread_order].astype(np.uint32))
        self._put("category-mask", None if cats is None else cats.tobytes(),
                  lambda: self._bits(True if cats is None else cats, self.category_count))
        self._put("search-mask", None if search is None else search.tobytes(),
                  lambda: self._bits(False if search is None else search, self.name_count))
        self._put("focus-seeds", focus, lambda: self.seed_rows(focus))
        self._put("focus-control", (len(focus), state.focus_depth), lambda: self._control(len(focus), state))
        if self.span_count:
            self._queue_changes(focus, state)

    def _states(self, pexp, texp) -> np.ndarray:
        states = np.zeros(self.thread_states_word + self.thread_count, np.uint32)
        states[:self.process_count] = pexp
        states[self.thread_states_word:] = texp
        return states

    @staticmethod
    def _control(seeds, state) -> np.ndarray:
        control = np.zeros(65, np.uint32)
        control[0], control[64] = seeds, state.focus_depth
        return control

    def _queue_changes(self, seeds, state) -> None:
        """Make the focus / minimap graphs due when their inputs changed since
        the last write (:meth:`encode_changes` records them before the
        caller's frame)."""
        focus = None if len(seeds) == 0 else (seeds, int(state.focus_depth))
        words = self._written["view-words"]  # the view words of this state (written just before)
        flags = int(words[7])
        minimap = (flags & 26, int(words[10]), int(words[11]),
                   self._written["category-mask"] if flags & 16 else None,
                   self._written["search-mask"] if flags & 8 else None, focus if flags & 2 else None)
        changed = {name: key != self._change_keys[name] for name, key in (("focus", focus), ("minimap", minimap))}
        self._change_keys = {"focus": focus, "minimap": minimap}
        for name, due in changed.items():
            self._due[name] = self._due[name] or due

    def _put(self, name, key, make) -> None:
        """Write ``make()`` into buffer ``name`` unless ``key`` (its inputs) equals the last write's."""
        if name in self._written and self._written[name] == key:
            return
        array = make()
        raw = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        if raw.nbytes:
            self.device.queue.write_buffer(self.buffers[name], 0, raw)
        self._written[name] = key

    def read_back(self) -> dict:
        """Read the outputs of the last submitted frame (waits for the GPU).

        For tests, benchmarks and explicit inspection only, never the frame
        path. Returns ``{"drawn": uint32 rows, "merged": (k, 4) uint32,
        "density": (k, 4) uint32 (both sorted by row, x0), "minimap",
        "focus": uint32 per row, "stats": dict by STATS name, "thread_rows"}``."""
        queue = self.device.queue

        def words(buffer, count, offset=0):
            if count == 0:
                return np.zeros(0, np.uint32)
            return np.frombuffer(queue.read_buffer(buffer, offset, 4 * count), np.uint32).copy()

        commands = words(self.draw_commands.buffer, 16)
        stats = words(self.stats, STATS_WORDS)

        def records(buffer, k):
            r = words(buffer, 4 * int(k)).reshape(-1, 4)
            return r[np.lexsort((r[:, 1], r[:, 0]))]

        return {"drawn": words(self.visible_rows, int(commands[4 * SPANS + 1])),
                "merged": records(self.merged, commands[4 * MERGED + 1]),
                "density": records(self.density, commands[4 * DENSITY + 1]),
                "minimap": words(self.minimap, self.minimap_bins), "focus": words(self.focus_mask, self.span_count),
                "stats": {name: int(stats[k]) for name, k in STATS.items()},
                "thread_rows": words(self.thread_rows, self.thread_count),
                "edges": edges_by_link(words(self.edges, 4 * int(commands[4 * EDGES + 1])).reshape(-1, 4)),
                "anchors": words(self.anchors, self.span_count), "shown": words(self.shown, self.span_count)}

    def destroy(self) -> None:
        """Free the frame's buffers; idempotent. Leaves the scene (and graphs
        that imported the buffers) to the caller."""
        if self._destroyed:
            return
        self._destroyed = True
        for graph in (self.focus_graph, self.minimap_graph):
            if graph is not None:
                graph.destroy()
        for buffer in self.buffers.values():
            buffer.destroy()
        if hasattr(self, "draw_commands"):
            self.draw_commands.destroy()

    def __repr__(self) -> str:
        return (f'GPUTraceInteraction("{self.id}", spans={self.span_count}, capacity={self.capacity}, '
                f"cells={self.row_capacity}x{self.width_capacity})")


#: The earlier name of :class:`GPUTraceInteraction`, kept for one release.
GPUTraceFrame = GPUTraceInteraction
