"""GPUHashJoin: bounded many-to-one join of packed left keys against a hash
index, as (left row, right value) pairs in left-row order.

Three steps in one graph: the shared lookup node (:mod:`.hash_query`)
writes each left row's value and found flag into transients, the chained
scan (:class:`~gpuviz.algorithms.scan.ChainedScan`) turns the flags into
output offsets and the exact pair count, and ``shaders/hash_join.wgsl``
scatters the pairs that fit and records what did not.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphTypeError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.resources import GraphDataView
from ..graph.shaders import wgsl
from .compaction import add_count_clear
from .dispatch import WORKGROUP, ceil_div
from .hash_index import check_index
from .hash_query import add_lookup_node
from .hash_table import LOOKUP_STATS, WithStatistics, key_chunks, stat_property, stat_rows, stats_view
from .scan import ChainedScan, ScanTuning
from .validation import checked_tuning, refuse_overlaps, single_row
from .views import storage_alignment, view_binding

__all__ = ["GPUHashJoin"]

STORAGE = wgpu.BufferUsage.STORAGE
PARAMS_BYTES = 32  # hash_join.wgsl: JoinParams


def check_capacity(owner: str, id: str, name: str, capacity) -> int:
    """A pair capacity: an int of at least 1."""
    if not isinstance(capacity, (int, np.integer)) or isinstance(capacity, bool):
        raise GraphTypeError(f'{owner} "{id}" {name} must be an int (got {type(capacity).__name__})')
    if capacity < 1:
        raise GraphValidationError(f'{owner} "{id}" {name} must be at least 1 (got {capacity})')
    return int(capacity)


class GPUHashJoin(WithStatistics):
    """Many-to-one join: (left row, right value) for every left key found.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-lookup"``, ``"{id}-scan-tiles"``,
        ``"{id}-scatter"``).
    left_keys : GraphDataView
        Packed left keys in the index's key format (``uint32`` or
        ``uint32x2``). Use :class:`GPUBatchHashJoin` for chunked left keys.
    index : GPUHashIndex or GPUBatchHashIndex
        The right side, added to the same graph before this join. Each
        right key has one value (the lowest right row with that key), so
        the join is many-to-one.
    pairs : GraphDataView
        Packed ``uint32x2`` rows, at least ``capacity`` of them: pair ``j``
        is (left row, right value) of the ``j``-th left row that found its
        key, in left-row order. Rows past the written count are untouched.
    count : GraphDataView
        One uint32 row receiving the exact required pair count (the left
        rows that found their key), also when it exceeds ``capacity``.
    capacity : int
        Pairs written at most; the first ``capacity`` pairs (in left order)
        are written when more are required.
    stats : GraphDataView, optional
        Eight packed uint32 rows (fields in
        :data:`~gpuviz.algorithms.hash_table.LOOKUP_STATS` order): found,
        invalid, probe lengths, the index's overflow, pairs written and
        pairs that did not fit. Default: a graph transient ``"{id}-stats"``.
    tuning : ScanTuning, optional
        Knobs of the chained scan.

    Attributes
    ----------
    stats, written_count, overflow, index_overflow : GraphDataView
        After ``add_to_graph``: the statistics and one-row views of it. The
        result is complete exactly when ``overflow`` and ``index_overflow``
        are both 0: an index that dropped rows makes the join report itself
        incomplete rather than present its matches as the whole answer.

    Notes
    -----
    Left rows whose key is the reserved empty key never match (they count
    as invalid). Pair left rows are the row numbers of ``left_keys`` (plus
    a batch's base row inside :class:`GPUBatchHashJoin`). Scratch: three
    uint32 transients of one word per left row (values, found flags,
    offsets). Zero left rows writes count 0 and the statistics only. Does
    not submit or read back, does not gather payload columns (the pairs are
    row IDs to gather with) and does not produce more than one pair per
    left row (no many-to-many).
    """

    owner = "GPUHashJoin"

    def __init__(self, *, id: str, left_keys, index, pairs, count, capacity: int, stats=None,
                 tuning: ScanTuning | None = None, row_base: int = 0):
        self.id = check_id(self.owner, id)
        self.capacity = check_capacity(self.owner, id, "capacity", capacity)
        checked_tuning(self.owner, id, tuning, ScanTuning)
        if not isinstance(left_keys, GraphDataView):
            raise GraphValidationError(f'{self.owner} "{id}" left_keys must be a GraphDataView (got '
                                       f"{type(left_keys).__name__}; use GPUBatchHashJoin for chunked left keys)")
        self.left_keys, self.index, self.pairs, self.count = left_keys, index, pairs, count
        self.tuning = tuning
        self.row_base = int(row_base)
        self._stats_arg = stats
        self.stats = None
        self.node_ids: list = []

    found_count = stat_property("found_count", "Required pairs (one row).")
    written_count = stat_property("written_count", "Pairs written (one row).")
    overflow = stat_property("overflow", "Required pairs that did not fit (one row).")
    index_overflow = stat_property("index_overflow",
                                   "The index's overflow (one row; non-zero: the join is incomplete).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the lookup, scan and scatter
        nodes; returns their IDs."""
        owner, id = self.owner, self.id
        check_index(owner, id, self.index, graph)
        keys = key_chunks(owner, id, "left_keys", self.left_keys, graph, self.index.key_words)[1][0]
        pairs = single_row(owner, id, "pairs", self.pairs, graph, formats=("uint32x2",), rows=self.capacity)
        count = single_row(owner, id, "count", self.count, graph)
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        for name, view in (("pairs", pairs), ("stats", stats)):
            if view.handle is count.handle:
                raise GraphValidationError(f'{owner} "{id}" count shares buffer "{count.handle.id}" with {name}')
        refuse_overlaps(owner, id, reads={"left_keys": keys, "index stats": self.index.stats},
                        writes={"pairs": pairs, "count": count, "stats": stats}, separate=True)
        self.stats = stats
        self._stat_views = stat_rows(graph, stats, LOOKUP_STATS)
        n = keys.length
        if n == 0:
            ids = [add_count_clear(graph, f"{id}-count-clear", count),
                   add_lookup_node(graph, f"{id}-lookup", self.index, [keys], [keys], None, stats)]
        else:
            scratch = {}
            for name in ("values", "found", "offsets"):
                handle = graph.create_transient_buffer(id=f"{id}-{name}", byte_length=4 * n, usage=STORAGE)
                scratch[name] = graph.create_data_view(handle, format="uint32", length=n)
            ids = [add_lookup_node(graph, f"{id}-lookup", self.index, [keys], [scratch["values"]],
                                   [scratch["found"]], stats)]
            ids += ChainedScan(id=f"{id}-scan", data=[scratch["found"]], out=[scratch["offsets"]], total=count,
                               tuning=self.tuning, owner=owner, owner_id=id).add_to_graph(graph)
            scratch.update(pairs=pairs, count=count, stats=stats)
        ids.append(self._add_scatter(graph, n, scratch if n else {"pairs": pairs, "count": count, "stats": stats}))
        self.node_ids = ids
        return ids

    def _add_scatter(self, graph, n, views) -> str:
        """``"{id}-scatter"``: the pairs that fit (when there are left rows),
        then the written and overflow words."""
        resources = [(views["count"], "storage-read"), (views["stats"], "storage-read-write")]
        if n:
            resources += [(views[k], "storage-read") for k in ("found", "values", "offsets")]
            resources.append((views["pairs"], "storage-write"))

        def compile_scatter(ctx):
            align = storage_alignment(ctx.device)
            code = wgsl("algorithms/shaders/hash_join.wgsl")
            bound = {name: view_binding(binding, views[name], alignment=align, vec4=False)
                     for binding, name in ((4, "pairs"), (5, "count"), (6, "stats"))}
            params = np.zeros(PARAMS_BYTES // 4, np.uint32)
            params[:6] = (n, self.row_base, self.capacity, bound["pairs"].offset, bound["count"].offset,
                          bound["stats"].offset)
            uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params",
                                                                 data=params.tobytes(),
                                                                 usage=wgpu.BufferUsage.UNIFORM))
            scatter = ComputeKernel(ctx.device, code=code, entry_point="scatter", label=f"{ctx.node_id}-scatter")
            finalize = ComputeKernel(ctx.device, code=code, entry_point="finalize", label=f"{ctx.node_id}-finalize")

            def encode(compute_pass, frame):
                if n:
                    bindings = {0: uniform, 1: views["found"], 2: views["values"], 3: views["offsets"],
                                4: bound["pairs"].storage.resolve(frame)}
                    scatter.dispatch(compute_pass, frame, bindings=bindings, workgroups=ceil_div(n, WORKGROUP))
                finalize.dispatch(compute_pass, frame, workgroups=1,
                                  bindings={0: uniform, 5: bound["count"].storage.resolve(frame),
                                            6: bound["stats"].storage.resolve(frame)})
            return encode

        return graph.add_compute_node(id=f"{self.id}-scatter", resources=resources, compile=compile_scatter)
