"""What the hash primitives share: the table layout, the reserved key and
value words, the statistics records and the key-view checks.

The table is open addressing with linear probing over ``capacity`` slots (a
power of two). A slot is one record of ``2`` words (``key_words=1``: key,
value) or ``4`` words (``key_words=2``: low word, high word, value, pad).
The slot a key starts from is ``hash(key) & (capacity - 1)``, where the hash
is the murmur3 32-bit finalizer of the key (one word) or murmur3_32 of the
two words with seed 0 (two words): see ``shaders/hash_common.wgsl`` and
:func:`gpuviz.oracles.algorithms.hash_slot`.
"""

from __future__ import annotations

import wgpu

from ..errors import GraphStateError
from .validation import chunks_of, single_row

__all__ = ["EMPTY_KEY", "NOT_FOUND", "INDEX_STATS", "LOOKUP_STATS", "STAT_WORDS", "KEY_FORMATS",
           "record_words", "key_chunks", "stats_view", "stat_rows"]

#: The reserved key word: a key whose every word equals it marks an empty
#: slot, so a source key equal to it is counted as invalid, never inserted
#: (and a query for it is invalid, never found).
EMPTY_KEY = 0xFFFFFFFF
#: What a lookup writes for a key that is not in the index (a found mask
#: tells it apart from a stored value that happens to equal it).
NOT_FOUND = 0xFFFFFFFF
#: Words of every statistics record (index, query and join).
STAT_WORDS = 8
#: Index statistics, one uint32 word each, in record order: rows inserted
#: (distinct keys), rows whose key was already present, rows that found no
#: slot within ``max_probe_length``, rows whose key is the reserved
#: :data:`EMPTY_KEY`, the longest probe (slots visited by one row), the
#: total probe length as two words (low, high), and the source row count.
INDEX_STATS = ("inserted_count", "duplicate_count", "overflow", "invalid", "max_probe_length",
               "total_probe_length_low", "total_probe_length_high", "rows")
#: Lookup and join statistics: keys found (a join's exact required pair
#: count), keys equal to :data:`EMPTY_KEY`, the longest and total probe
#: length (two words), the index's overflow at lookup time (non-zero: the
#: index is incomplete, so a miss may be wrong), and for a join the pairs
#: written and the pairs that did not fit (a lookup leaves both 0).
LOOKUP_STATS = ("found_count", "invalid_count", "max_probe_length", "total_probe_length_low",
                "total_probe_length_high", "index_overflow", "written_count", "overflow")
#: View format of the keys for each ``key_words``.
KEY_FORMATS = {1: "uint32", 2: "uint32x2"}

STORAGE = wgpu.BufferUsage.STORAGE


def record_words(key_words: int) -> int:
    """Words per table slot (keys, value, padding to a vector load)."""
    return 2 if key_words == 1 else 4


def key_chunks(owner: str, id: str, name: str, value, graph, key_words: int) -> tuple:
    """``(kind, views)`` of a packed key view of this graph: uint32 rows for
    one key word, uint32x2 rows (low word first) for two."""
    return chunks_of(owner, id, name, value, graph, formats=(KEY_FORMATS[key_words],))


def stats_view(owner: str, id: str, graph, stats, name: str, rows: int = STAT_WORDS):
    """The caller's statistics view (checked: packed uint32, ``rows`` rows), or
    a graph transient ``"{id}-{name}"`` of that many words."""
    if stats is None:
        handle = graph.create_transient_buffer(id=f"{id}-{name}", byte_length=4 * rows, usage=STORAGE)
        return graph.create_data_view(handle, format="uint32", length=rows)
    return single_row(owner, id, name, stats, graph, rows=rows)


class WithStatistics:
    """Base of a primitive whose statistics record is read as one-row views
    by name: ``stats`` (None before ``add_to_graph``) and ``_stat_views``
    (the rows by field name, set by ``add_to_graph``)."""

    def _stat(self, name: str):
        if self.stats is None:
            raise GraphStateError(f'{self.owner} "{self.id}" has no statistics before add_to_graph')
        return self._stat_views[name]


def check_index_graph(owner: str, id: str, index, graph) -> None:
    """Refuse an index (hash or grid) not added to ``graph``, naming both."""
    if index.graph is None:
        raise GraphStateError(f'{owner} "{id}" index "{index.id}" has not been added to a graph '
                              "(call its add_to_graph first)")
    if index.graph is not graph:
        raise GraphStateError(f'{owner} "{id}" index "{index.id}" belongs to graph "{index.graph.id}", '
                              f'not "{graph.id}"')


def stat_property(name: str, doc: str) -> property:
    """A read-only attribute of a :class:`WithStatistics`: the one-row view of
    statistic ``name``, documented by ``doc``."""
    return property(lambda self: self._stat(name), doc=doc)


def stat_rows(graph, stats, fields, first_row: int = 0) -> dict:
    """One-row views of a statistics record, by field name."""
    return {field: graph.create_data_view(stats.handle, format="uint32", length=1,
                                          byte_offset=stats.byte_offset + 4 * (first_row + k))
            for k, field in enumerate(fields)}
