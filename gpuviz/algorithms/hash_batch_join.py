"""GPUBatchHashJoin: ordered left chunks each join one shared right index,
with per-batch pair outputs, capacities, counts and statistics."""

from __future__ import annotations

from ..errors import GraphStateError, GraphValidationError
from ..graph.checks import check_id
from ..graph.resources import GraphDataView, GraphVectorView
from .hash_index import check_index
from .hash_join import GPUHashJoin, check_capacity
from .hash_table import LOOKUP_STATS, STAT_WORDS, key_chunks, stat_rows, stats_view
from .scan import ScanTuning
from .validation import checked_tuning, single_row

__all__ = ["GPUBatchHashJoin"]


class GPUBatchHashJoin:
    """One many-to-one :class:`GPUHashJoin` per left chunk, sharing one index.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs; batch ``b`` uses ``"{id}-batch-{b}"``.
    left_keys : GraphVectorView
        Packed left key chunks in the index's key format; empty and uneven
        chunks allowed. Row ``r`` of chunk ``b`` is global left row
        ``sum(len(chunk) for chunk before b) + r``.
    index : GPUHashIndex or GPUBatchHashIndex
        The shared right side, added to the same graph before this join.
    pairs : GraphVectorView or sequence of GraphDataView
        One packed ``uint32x2`` output per left chunk: batch ``b``'s
        (global left row, right value) pairs in left-row order.
    counts : GraphDataView
        At least one uint32 row per batch: batch ``b``'s exact required
        pair count.
    capacities : sequence of int, optional
        Pairs each batch may write (default: each pairs output's length).
    stats : GraphDataView, optional
        Eight uint32 rows per batch (batch ``b`` from row ``8 * b``, fields
        in :data:`~gpuviz.algorithms.hash_table.LOOKUP_STATS` order).
        Default: a graph transient ``"{id}-stats"``.
    tuning : ScanTuning, optional

    Attributes
    ----------
    joins : list of GPUHashJoin
        After ``add_to_graph``, one per batch (their ``overflow`` and
        ``index_overflow`` views say which batch is incomplete).
    stats : GraphDataView

    Notes
    -----
    Each batch looks up, scans and scatters on its own (its own scan, its
    own capacity): the left side is never packed or concatenated, and one
    batch's overflow does not move another's pairs. Does not submit or
    read back, does not merge the batches' pairs into one sequence, and
    does not partition the right side.
    """

    owner = "GPUBatchHashJoin"

    def __init__(self, *, id: str, left_keys, index, pairs, counts, capacities=None, stats=None,
                 tuning: ScanTuning | None = None):
        self.id = check_id(self.owner, id)
        checked_tuning(self.owner, id, tuning, ScanTuning)
        if not isinstance(left_keys, GraphVectorView):
            raise GraphValidationError(f'{self.owner} "{id}" left_keys must be a GraphVectorView (got '
                                       f"{type(left_keys).__name__}; use GPUHashJoin for one packed batch)")
        if isinstance(pairs, GraphVectorView):
            pairs = list(pairs.views)
        elif isinstance(pairs, GraphDataView) or not all(isinstance(p, GraphDataView) for p in pairs):
            raise GraphValidationError(f'{self.owner} "{id}" pairs must be a GraphVectorView or a sequence of '
                                       "GraphDataView (one per left chunk)")
        batches = len(left_keys.views)
        if len(pairs) != batches:
            raise GraphValidationError(f'{self.owner} "{id}" has {batches} left chunks but {len(pairs)} pairs '
                                       "outputs (needs one per chunk)")
        if capacities is None:
            capacities = [p.length for p in pairs]
        capacities = list(capacities)
        if len(capacities) != batches:
            raise GraphValidationError(f'{self.owner} "{id}" has {batches} left chunks but {len(capacities)} '
                                       "capacities")
        self.capacities = [check_capacity(self.owner, id, f"capacities[{b}]", c) for b, c in enumerate(capacities)]
        self.left_keys, self.index, self.pairs, self.counts = left_keys, index, pairs, counts
        self.tuning = tuning
        self._stats_arg = stats
        self.stats = None
        self.joins: list = []
        self.node_ids: list = []

    def batch_stats(self, batch: int) -> dict:
        """One-row views of batch ``batch``'s statistics, by field name."""
        if self.stats is None:
            raise GraphStateError(f'{self.owner} "{self.id}" has no statistics before add_to_graph')
        return self._batch_stats[batch]

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add every batch's nodes; returns their IDs."""
        owner, id = self.owner, self.id
        check_index(owner, id, self.index, graph)
        keys = key_chunks(owner, id, "left_keys", self.left_keys, graph, self.index.key_words)[1]
        batches = len(keys)
        counts = single_row(owner, id, "counts", self.counts, graph, rows=max(batches, 1))
        stats = stats_view(owner, id, graph, self._stats_arg, "stats", rows=STAT_WORDS * max(batches, 1))
        self.stats = stats
        self._batch_stats = [stat_rows(graph, stats, LOOKUP_STATS, STAT_WORDS * b) for b in range(batches)]
        base, ids, self.joins = 0, [], []
        for b, (view, out, capacity) in enumerate(zip(keys, self.pairs, self.capacities)):
            row = lambda v, k, words=1: graph.create_data_view(v.handle, format="uint32", length=words,  # noqa: E731
                                                               byte_offset=v.byte_offset + 4 * k)
            join = GPUHashJoin(id=f"{id}-batch-{b}", left_keys=view, index=self.index, pairs=out,
                               count=row(counts, b), capacity=capacity,
                               stats=row(stats, STAT_WORDS * b, STAT_WORDS), tuning=self.tuning, row_base=base)
            ids += join.add_to_graph(graph)
            self.joins.append(join)
            base += view.length
        self.node_ids = ids
        return ids
