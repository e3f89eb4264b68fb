"""GPUPointSpatialFilter: the exact spatial predicate of a query record
over 2-D or 3-D points, over every row or over a grid query's candidates
(``shaders/point_filter.wgsl``)."""

from __future__ import annotations

import numpy as np
import wgpu

from ..algorithms.dispatch import WORKGROUP, ceil_div
from ..algorithms.hash_table import WithStatistics, stat_property, stat_rows, stats_view
from ..algorithms.validation import refuse_overlaps, single_row
from ..algorithms.views import storage_alignment, uniform_slot, view_binding
from ..errors import GraphStateError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .grid import point_chunks
from .grid_query import GPUGridIndexQuery, query_view

__all__ = ["GPUPointSpatialFilter", "FILTER_STATS"]

#: Filter statistics, one uint32 word each: rows selected, rows tested (all
#: rows, or the candidates tested), the broad phase's overflow (its
#: ``overflow``: candidates it could not deliver) and its ``ignored_outside``
#: (unindexed out-of-domain rows its region reaches), then four reserved
#: words. The mask is complete only when both broad-phase words are 0; over
#: every row they are always 0.
FILTER_STATS = ("selected_count", "tested_count", "broad_phase_overflow", "broad_phase_ignored",
                "reserved0", "reserved1", "reserved2", "reserved3")
PARAMS_BYTES = 48  # point_filter.wgsl: FilterParams


class GPUPointSpatialFilter(WithStatistics):
    """Exact point-in-bounds, within-radius, point-equality or lasso test.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-filter"``).
    points : GraphDataView or GraphVectorView
        Packed ``float32x2`` or ``float32x3`` points (a vector's chunks are
        one logical sequence of row IDs); for candidates, the index's points.
    query : GraphDataView
        A query record (:func:`~gpuviz.spatial.write_query`): bounds are
        inclusive; a radius keeps rows whose float32 squared distance is at
        most ``r * r``; a point keeps rows equal to it; a lasso (2-D only,
        3 to 256 vertices) keeps rows inside by the even-odd rule (and inside
        its vertices' bounds). Invalid records select nothing.
    candidates : GPUGridIndexQuery, optional
        Test only its written candidate IDs (added to the same graph before
        this filter, over the same points); default: test every row.
    mask : GraphDataView
        Packed ``uint32``, at least the source rows: 1 where a row passes,
        else 0 (indexed by global row ID, so it feeds GPUMask or
        GPUVisibilityWorkflow as a source-aligned mask).
    stats : GraphDataView, optional
        Eight packed uint32 rows (:data:`FILTER_STATS`); default a graph
        transient ``"{id}-stats"``.

    Notes
    -----
    Both modes run the same predicate code, so the masks are equal whenever
    the broad phase was complete (``broad_phase_overflow`` and
    ``broad_phase_ignored`` 0); when it was not, those words say so instead
    of the mask silently missing rows. Rows with a NaN or infinite
    coordinate never pass. Over candidates, each point chunk's dispatch
    reads every candidate (work: candidates x non-empty chunks). Does not
    submit or read back, and does not compact the passing rows (compose
    :class:`~gpuviz.GPUCompaction`).
    """

    owner = "GPUPointSpatialFilter"

    def __init__(self, *, id: str, points, query, candidates=None, mask, stats=None):
        self.id = check_id(self.owner, id)
        if candidates is not None and not isinstance(candidates, GPUGridIndexQuery):
            raise GraphValidationError(f'{self.owner} "{id}" candidates must be a GPUGridIndexQuery or None '
                                       f"(got {type(candidates).__name__})")
        self.points, self.query, self.candidates, self.mask = points, query, candidates, mask
        self._stats_arg = stats
        self.stats = None
        self.graph = None
        self.node_ids: list = []

    selected_count = stat_property("selected_count", "Rows that passed (one row).")
    tested_count = stat_property("tested_count", "Rows tested (one row).")
    broad_phase_overflow = stat_property("broad_phase_overflow",
                                         "Candidates the broad phase could not deliver (one row).")
    broad_phase_ignored = stat_property("broad_phase_ignored",
                                        "Unindexed out-of-domain rows the query reaches (one row).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the filter node; returns its ID."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        dims, _, views = point_chunks(owner, id, "points", self.points, graph)
        rows = sum(v.length for v in views)
        query = query_view(owner, id, self.query, graph)
        mask = single_row(owner, id, "mask", self.mask, graph, rows=max(rows, 1))
        mask = graph.create_data_view(mask.handle, format="uint32", length=max(rows, 1), byte_offset=mask.byte_offset)
        cand = self.candidates
        if cand is not None:
            if cand.graph is not graph:
                raise GraphStateError(f'{owner} "{id}" candidates "{cand.id}" have not been added to this graph '
                                      "(call its add_to_graph first)")
            if cand.index.source_ids is not None:
                raise GraphValidationError(f'{owner} "{id}" candidates come from index "{cand.index.id}" with explicit '
                                           "source_ids, which do not locate points (filter every row instead)")

            def spans(vs):
                return [(v.handle.id, v.byte_offset, v.length) for v in vs]
            if spans(views) != spans(cand.index.point_views):
                raise GraphValidationError(
                    f'{owner} "{id}" points ({rows} rows, {dims}-D) are not the candidates\' index points '
                    f'("{cand.index.id}": {cand.index.rows} rows, {cand.index.dims}-D): the IDs would name other rows')
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        reads = {"points": views, "query": query}
        if cand is not None:
            cand_out = single_row(owner, id, "candidates", cand.candidates, graph)
            reads.update({"candidates": cand_out, "candidate stats": cand.stats})
        refuse_overlaps(owner, id, reads=reads, writes={"mask": mask, "stats": stats}, separate=True)
        self.stats, self.graph = stats, graph
        self._stat_views = stat_rows(graph, stats, FILTER_STATS)
        resources = [(v, "storage-read") for v in views if v.length]
        resources += [(query, "storage-read"), (mask, "storage-write"), (stats, "storage-read-write")]
        if cand is not None:
            resources += [(cand_out, "storage-read"), (cand.stats, "storage-read")]
        else:
            cand_out = None
        node = graph.add_compute_node(id=f"{id}-filter", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, dims, views, query, mask, cand_out))
        self.node_ids = [node]
        return self.node_ids

    def _compile(self, ctx, dims, views, query, mask, cand_out):
        align = storage_alignment(ctx.device)
        indexed = cand_out is not None
        code = wgsl("spatial/shaders/point_filter.wgsl", dims=dims, candidates=indexed)
        entries = ("clear", "candidates", "finish") if indexed else ("clear", "rows")
        kernels = {e: ComputeKernel(ctx.device, code=code, entry_point=e, label=f"{ctx.node_id}-{e}")
                   for e in entries}
        shared = {"query": view_binding(2, query, alignment=align, vec4=False),
                  "mask": view_binding(3, mask, alignment=align, vec4=False),
                  "stats": view_binding(4, self.stats, alignment=align, vec4=False)}
        if indexed:
            shared["cands"] = view_binding(5, cand_out, alignment=align, vec4=False)
            shared["qstats"] = view_binding(6, self.candidates.stats, alignment=align, vec4=False)
        work = [(v, base) for v, base in zip(views, np.cumsum([0] + [v.length for v in views])) if v.length]
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((len(work) + 1, slot // 4), np.uint32)
        params[:, 3:6] = (shared["mask"].offset, shared["query"].offset, shared["stats"].offset)
        if indexed:
            params[:, 6:9] = (shared["cands"].offset, shared["qstats"].offset, cand_out.length)
        params[:, 9] = mask.length
        point_bindings = []
        for row, (view, base) in enumerate(work):
            pb = view_binding(1, view, alignment=align, vec4=False)
            params[row, 0:3] = (view.length, base, pb.offset)
            point_bindings.append(pb.storage)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        last = (uniform, len(work) * slot, PARAMS_BYTES)
        clear_rows = mask.length if indexed else 8
        cand_groups = ceil_div(cand_out.length, WORKGROUP) if indexed else 0

        def encode(compute_pass, frame):
            b = {k: v.storage.resolve(frame) for k, v in shared.items()}
            clear = {0: last, 4: b["stats"]}
            if indexed:
                clear[3] = b["mask"]
            kernels["clear"].dispatch(compute_pass, frame, bindings=clear,
                                      workgroups=ceil_div(max(clear_rows, 8), WORKGROUP))
            for row, (pb, (view, _)) in enumerate(zip(point_bindings, work)):
                bindings = {0: (uniform, row * slot, PARAMS_BYTES), 1: pb.resolve(frame), 2: b["query"],
                            3: b["mask"], 4: b["stats"]}
                if indexed:
                    bindings.update({5: b["cands"], 6: b["qstats"]})
                    kernels["candidates"].dispatch(compute_pass, frame, bindings=bindings, workgroups=cand_groups)
                else:
                    kernels["rows"].dispatch(compute_pass, frame, bindings=bindings,
                                             workgroups=ceil_div(view.length, WORKGROUP))
            if indexed:
                kernels["finish"].dispatch(compute_pass, frame, workgroups=1,
                                           bindings={0: last, 4: b["stats"], 6: b["qstats"]})
        return encode
