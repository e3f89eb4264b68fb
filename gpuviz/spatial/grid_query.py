"""GPUGridIndexQuery: the conservative candidates of a point, bounds,
radius or lasso query in a GPUGridIndex built earlier in the same graph
(``shaders/grid_query.wgsl``)."""

from __future__ import annotations

import numpy as np
import wgpu

from ..algorithms.dispatch import WORKGROUP, ceil_div
from ..algorithms.hash_table import WithStatistics, stat_property, stat_rows, stats_view
from ..algorithms.scan import ChainedScan
from ..algorithms.validation import refuse_overlaps, single_row
from ..algorithms.views import storage_alignment, uniform_slot, view_binding
from ..errors import GraphStateError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .grid import check_grid_index, grid_words
from .query import QUERY_WORDS

__all__ = ["GPUGridIndexQuery", "QUERY_STATS", "query_view"]

STORAGE = wgpu.BufferUsage.STORAGE
#: Query statistics, one uint32 word each: candidate rows in the selected
#: cells (all of them, stored in the index or not), candidate IDs written,
#: candidates missing from the output (index truncation plus output
#: capacity: any non-zero value means the candidates are incomplete),
#: candidates the index did not store (past its capacity), the index's
#: out-of-domain row count when the query region reaches past the domain
#: (else 0: such rows may match but were never indexed), the cells
#: selected, the candidates available in the index, one reserved word.
QUERY_STATS = ("candidate_count", "written_count", "overflow", "index_overflow", "ignored_outside",
               "cell_count", "available_count", "reserved")
PARAMS_BYTES = 112  # grid_query.wgsl: QueryParams (Grid, then twelve words)


def query_view(owner: str, id: str, query, graph):
    """A checked query record view: packed uint32 (or float32), at least
    QUERY_WORDS rows, of this graph."""
    return single_row(owner, id, "query", query, graph, formats=("uint32", "float32"), rows=QUERY_WORDS)


class GPUGridIndexQuery(WithStatistics):
    """Candidate row IDs of the grid cells a query touches, plus counts.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-cells"``, ``"{id}-gather"``).
    index : GPUGridIndex
        Added to the same graph before this query.
    query : GraphDataView
        A query record of at least :data:`~gpuviz.spatial.QUERY_WORDS` packed
        ``uint32`` (or ``float32``) rows, written by
        :func:`~gpuviz.spatial.write_query` or by a GPU node. A point selects
        its one cell; bounds, a radius (centre +- r, widened by 2**-20 r) and
        a lasso (its vertices' bounds) select every cell they intersect.
        Invalid records (non-finite, inverted, negative radius) select none.
    candidates : GraphDataView
        Packed ``uint32`` output: the candidate row IDs, cell by cell in
        row-major cell order with source order inside a cell; its length is
        the output capacity.
    mask : GraphDataView, optional
        Packed ``uint32``, at least the index's rows: 1 at every candidate's
        row ID (also candidates past the output capacity), else 0. With the
        index's explicit ``source_ids`` the whole view is cleared and
        addressed by those IDs; IDs at or past its length are skipped.
    stats : GraphDataView, optional
        Eight packed uint32 rows (:data:`QUERY_STATS`); default a graph
        transient ``"{id}-stats"``.

    Attributes
    ----------
    stats, candidate_count, written_count, overflow, index_overflow, ignored_outside : GraphDataView
        After ``add_to_graph``; one-row views of ``stats``.

    Notes
    -----
    Conservative by design: candidates are every indexed row of the
    selected cells, not an exact hit set (see
    :class:`~gpuviz.spatial.GPUPointSpatialFilter`). The candidates are
    complete only when ``overflow`` and ``ignored_outside`` are both 0.
    Work is one invocation per row of cells plus one per stored candidate
    (the gather is dispatched over the index capacity). A new query is a
    write of the record, never a recompile. Does not submit or read back,
    and does not modify the index.
    """

    owner = "GPUGridIndexQuery"

    def __init__(self, *, id: str, index, query, candidates, mask=None, stats=None):
        self.id = check_id(self.owner, id)
        self.index, self.query, self.candidates, self.mask = index, query, candidates, mask
        self._stats_arg = stats
        self.stats = None
        self.graph = None
        self.node_ids: list = []

    candidate_count = stat_property("candidate_count", "Rows in the selected cells.")
    written_count = stat_property("written_count", "Candidate IDs written.")
    overflow = stat_property("overflow", "Candidates missing from the output.")
    index_overflow = stat_property("index_overflow", "Candidates the index did not store.")
    ignored_outside = stat_property("ignored_outside",
                                    "Unindexed out-of-domain rows, when the region reaches past the domain.")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the query nodes; returns their IDs."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        index = self.index
        check_grid_index(owner, id, index, graph)
        query = query_view(owner, id, self.query, graph)
        out = single_row(owner, id, "candidates", self.candidates, graph)
        mask = None
        if self.mask is not None:
            mask = single_row(owner, id, "mask", self.mask, graph, rows=max(index.rows, 1))
            if index.source_ids is None:  # row-addressed: exactly the source rows
                mask = graph.create_data_view(mask.handle, format="uint32", length=max(index.rows, 1),
                                              byte_offset=mask.byte_offset)
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        refuse_overlaps(owner, id, reads={"query": query, "index ids": index.ids, "index cell_offsets":
                                          index.cell_offsets, "index stats": index.stats},
                        writes={"candidates": out, "mask": mask, "stats": stats}, separate=True)
        self.stats, self.graph = stats, graph
        self._stat_views = stat_rows(graph, stats, QUERY_STATS)
        runs = index.cell_count // index.domain.cells[0]
        handle = graph.create_transient_buffer(id=f"{id}-run-lengths", byte_length=4 * runs, usage=STORAGE)
        lengths = graph.create_data_view(handle, format="uint32", length=runs)
        handle = graph.create_transient_buffer(id=f"{id}-run-offsets", byte_length=4 * runs, usage=STORAGE)
        run_offsets = graph.create_data_view(handle, format="uint32", length=runs)
        reads = [(query, "storage-read"), (index.cell_offsets, "storage-read")]
        resources = reads + [(index.stats, "storage-read"), (lengths, "storage-write"),
                             (stats, "storage-read-write")]
        if mask is not None:
            resources.append((mask, "storage-write"))
        ids = [graph.add_compute_node(id=f"{id}-cells", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, "cells", query, out, mask, lengths,
                                                                        run_offsets))]
        ids += ChainedScan(id=f"{id}-runs", data=[lengths], out=[run_offsets],
                           total=self._stat_views["available_count"], owner=owner, owner_id=id).add_to_graph(graph)
        resources = reads + [(index.ids, "storage-read"), (run_offsets, "storage-read"),
                             (stats, "storage-read-write"), (out, "storage-write")]
        if mask is not None:
            resources.append((mask, "storage-read-write"))
        ids.append(graph.add_compute_node(id=f"{id}-gather", resources=resources,
                                          compile=lambda ctx: self._compile(ctx, "gather", query, out, mask, lengths,
                                                                            run_offsets)))
        self.node_ids = ids
        return ids

    def _compile(self, ctx, phase, query, out, mask, lengths, run_offsets):
        index = self.index
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/grid_query.wgsl", dims=index.dims, mask=mask is not None)
        entries = ("clear", "ranges") if phase == "cells" else ("gather", "finish")
        kernels = {e: ComputeKernel(ctx.device, code=code, entry_point=e, label=f"{ctx.node_id}-{e}")
                   for e in entries}
        b = {name: view_binding(binding, view, alignment=align, vec4=False)
             for name, binding, view in (("query", 1, query), ("offsets", 2, index.cell_offsets),
                                         ("stats", 4, self.stats), ("ids", 5, index.ids), ("out", 7, out),
                                         ("istats", 9, index.stats))}
        if mask is not None:
            b["mask"] = view_binding(8, mask, alignment=align, vec4=False)
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = grid_words(index.domain, slot // 4)
        runs = lengths.length
        params[16:28] = (runs, index.capacity, out.length, b["query"].offset, b["offsets"].offset, b["ids"].offset,
                         b["out"].offset, b["mask"].offset if mask is not None else 0, b["stats"].offset,
                         b["istats"].offset, mask.length if mask is not None else 0, 0)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        p = (uniform, 0, PARAMS_BYTES)
        mask_rows = mask.length if mask is not None else 0

        def bind(frame, *names):
            return {b[n].storage.binding: b[n].storage.resolve(frame) for n in names}

        if phase == "cells":
            def encode(compute_pass, frame):
                clear = {0: p, **bind(frame, "stats", *(("mask",) if mask is not None else ()))}
                kernels["clear"].dispatch(compute_pass, frame, bindings=clear,
                                          workgroups=ceil_div(max(mask_rows, 8), WORKGROUP))
                kernels["ranges"].dispatch(compute_pass, frame, workgroups=ceil_div(runs, WORKGROUP),
                                           bindings={0: p, 3: lengths,
                                                     **bind(frame, "query", "offsets", "stats", "istats")})
            return encode

        def encode(compute_pass, frame):
            names = ("query", "offsets", "stats", "ids", "out") + (("mask",) if mask is not None else ())
            kernels["gather"].dispatch(compute_pass, frame, workgroups=ceil_div(index.capacity, WORKGROUP),
                                       bindings={0: p, 6: run_offsets, **bind(frame, *names)})
            kernels["finish"].dispatch(compute_pass, frame, workgroups=1,
                                       bindings={0: p, **bind(frame, "stats")})
        return encode
