"""GPUTraceFrame: the compute half of one trace-view frame, built once per
capacity tier.

Per frame (all on the GPU, no readback)::

    clear            cells, minimap, stats                    (trace_clear.wgsl)
    layout           GPUHierarchyLayout: thread heights -> row offsets,
                     then thread_rows / process_rows by ID      (trace_rows.wgsl)
    focus            GPUGraphTraversal over links, both directions
    predicate        per span record: 64-bit window, expansion, rows,
                     categories, duration, search, focus        (trace_predicate.wgsl)
                     -> draw mask (spans >= 2 pixel columns),
                        sub-pixel spans into per-(row, column) cells,
                        collapsed-process spans into density cells,
                        minimap bins, stats
    compaction       GPUVisibilityWorkflow: draw mask -> visible_rows,
                     count -> draw_commands record SPANS
    merge            runs of equal cells -> merged / density records,
                     counts -> records MERGED / DENSITY          (trace_merge.wgsl)

The CPU writes only :meth:`GPUTraceFrame.write`'s small buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuviz.trace.interaction.state import DEFAULT_FOCUS_DEPTH, TraceViewState

__all__ = ["GPUTraceFrame", "TraceLayout", "SPANS", "MERGED", "DENSITY", "EDGES", "STATS",
           "DEFAULT_WIDTH_CAPACITY", "DEFAULT_ROW_CAPACITY", "DEFAULT_MINIMAP_BINS", "DEFAULT_MAX_SEEDS"]

#: Records of :attr:`GPUTraceFrame.draw_commands` (``"draw"`` type, 6 vertices each).
SPANS, MERGED, DENSITY, EDGES = 0, 1, 2, 3
#: Words of :attr:`GPUTraceFrame.stats`, by name.
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
STATS_WORDS = 16
DEFAULT_WIDTH_CAPACITY = 4096
DEFAULT_ROW_CAPACITY = 256
DEFAULT_MINIMAP_BINS = 1024
DEFAULT_MAX_SEEDS = 64


@dataclass(frozen=True)
class TraceLayout:
    """Row layout of one state, on the CPU (the GPU computes the same).

    Attributes
    ----------
    thread_row, thread_height : numpy uint32, per thread row
        First layout row and rows of each thread (height: its lanes when it
        and its process are expanded, 1 when it is collapsed, 0 in a
        collapsed process or without spans).
    process_row, process_height : numpy uint32, per process row
        First row and rows of each process (a collapsed process has one
        summary row at ``process_row``; its height is 1).
    total_rows : int
    thread_order : numpy uint32
        Thread rows in display order (by process row, then
        ``threads.sort_index``, then thread row).
    """

    thread_row: np.ndarray
    thread_height: np.ndarray
    process_row: np.ndarray
    process_height: np.ndarray
    total_rows: int
    thread_order: np.ndarray


class GPUTraceFrame:
    """Visibility, sub-pixel merging, layout, focus and density of a trace
    view, as one part of a compiled command graph.

    Parameters
    ----------
    scene : GPUTraceScene
    trace : gpuviz.trace.Trace
        The trace the scene was built from (threads' display order).
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
        Bins of the whole-trace density.
    id : str
        Prefix of node and buffer IDs.

    Attributes (GPU outputs the widget's render nodes read)
    ----------
    draw_commands : DrawCommandBuffer
        4 ``"draw"`` records, vertex_count 6 each: ``SPANS`` (instances =
        visible_rows count), ``MERGED``, ``DENSITY`` (written by the GPU),
        ``EDGES`` (for the widget; the frame never writes it).
    visible_rows : wgpu.GPUBuffer
        uint32 scene rows drawn one by one (spans covering 2+ pixel
        columns), ascending; ``capacity`` rows, the first instance-count valid.
        A span's layout row is ``thread_rows[s.thread] + s.lane``.
    thread_rows : wgpu.GPUBuffer
        uint32 per thread row: its first layout row.
    process_rows : wgpu.GPUBuffer
        uint32 per process row: its first layout row (the summary row when collapsed).
    merged : wgpu.GPUBuffer
        ``vec4<u32>`` records ``(row, x0, x1, name)``: layout row, pixel
        columns ``[x0, x1)`` where every column holds a sub-pixel span and
        the largest name ID among those spans is ``name`` in each (order
        unspecified; ``row_capacity * width_capacity`` records).
    density : wgpu.GPUBuffer
        ``vec4<u32>`` records ``(row, x0, x1, count)``: summary row of a
        collapsed process, columns ``[x0, x1)`` each overlapped by ``count``
        (> 0) of its spans in the window.
    minimap : wgpu.GPUBuffer
        uint32 ``minimap_bins`` bins: span starts of the spans passing the
        filters (not the window or rows) over the whole trace extent.
    stats : wgpu.GPUBuffer
        uint32 words named by :data:`STATS` (for the inspector's readback ring).
    focus_mask : wgpu.GPUBuffer
        uint32 per scene row: 1 within the focus depth of a seed (0 without focus).
    search_mask, category_mask : wgpu.GPUBuffer
        Bit words (bit ``i % 32`` of word ``i // 32``) per name / category ID.
    view : wgpu.GPUBuffer
        Uniform ``TraceView`` (``shaders/trace_view.wgsl``): window origin
        and end as time words, width, rows, flags, pixels per ns.

    Notes
    -----
    Built once per capacity tier; :meth:`write` changes only buffer
    contents, so a compiled graph keeps working through every interaction.
    The frame owns its buffers (:meth:`destroy`); the graph borrows them.
    Never submits, reads back or records render work; sub-pixel merging is
    exact on the integer column grid of :func:`~gpuviz.trace.interaction.state.column_bounds`.
    Does not draw flows/links (the ``EDGES`` record is the widget's).
    """

    def __init__(self, *, scene, trace, capacity=None, width_capacity=DEFAULT_WIDTH_CAPACITY,
                 row_capacity=DEFAULT_ROW_CAPACITY, max_depth=DEFAULT_FOCUS_DEPTH, max_seeds=DEFAULT_MAX_SEEDS,
                 minimap_bins=DEFAULT_MINIMAP_BINS, id="trace-view"):
        raise NotImplementedError("GPUTraceFrame: skeleton (being filled in)")

    def initial_state(self, *, width=1000, rows=None) -> TraceViewState:
        """The whole trace, everything expanded, every category, no search or focus."""
        raise NotImplementedError

    def layout(self, state: TraceViewState) -> TraceLayout:
        """The CPU row layout of ``state`` (gutter labels; same as the GPU's)."""
        raise NotImplementedError

    def add_to_graph(self, graph, *, scene_views=None) -> list:
        """Add the frame's nodes to ``graph``; returns their IDs.

        ``scene_views``: the dict of ``scene.import_to_graph(graph)`` when the
        caller already imported the scene (default: import it as
        ``f"{id}-scene"``). Afterwards :attr:`views` holds GraphDataViews of
        every output buffer in ``graph`` (keys as the attribute names, plus
        ``"scene"``: the scene views) for the widget's render nodes."""
        raise NotImplementedError

    def write(self, state: TraceViewState) -> None:
        """Validate ``state`` and queue the parameter buffers that changed
        (``queue.write_buffer``); never recompiles, submits or waits."""
        raise NotImplementedError

    def destroy(self) -> None:
        """Free the frame's buffers; idempotent."""
        raise NotImplementedError
