"""GPUBatchHashIndex: the GPUHashIndex map built from a vector's chunks in
place (one insert dispatch per chunk, in chunk order), valued by global row."""

from __future__ import annotations

from ..errors import GraphValidationError
from ..graph.resources import GraphVectorView
from .hash_index import GPUHashIndex

__all__ = ["GPUBatchHashIndex"]


class GPUBatchHashIndex(GPUHashIndex):
    """A hash index over preserved key chunks, without concatenation.

    Parameters
    ----------
    id : str
    keys : GraphVectorView
        Packed key chunks (``uint32``, or ``uint32x2`` for two key words),
        empty and uneven chunks allowed. Row ``r`` of chunk ``c`` is global
        row ``sum(len(chunk) for chunk before c) + r``.
    capacity, key_words, max_load_factor, max_probe_length, stats
        As for :class:`GPUHashIndex`; the load factor counts the rows of
        every chunk.

    Notes
    -----
    Values are global row IDs (there is no ``values`` argument): a lookup
    returns the global row of the lowest row holding the key, across
    chunks. Chunks are inserted one dispatch each, in order; rows of one
    chunk race only among themselves, and keys stored by earlier chunks are
    compared from the table. Statistics, sentinels and determinism are
    those of :class:`GPUHashIndex`. Does not pack the chunks, does not
    submit or read back, and keeps one table for all chunks (it does not
    partition the index by chunk).
    """

    owner = "GPUBatchHashIndex"

    def __init__(self, *, id: str, keys, capacity: int | None = None, key_words: int = 1,
                 max_load_factor: float = 0.9, max_probe_length: int | None = None, stats=None):
        super().__init__(id=id, keys=keys, capacity=capacity, key_words=key_words, max_load_factor=max_load_factor,
                         max_probe_length=max_probe_length, stats=stats)

    def _check_keys_type(self, keys) -> None:
        if not isinstance(keys, GraphVectorView):
            raise GraphValidationError(f'{self.owner} "{self.id}" keys must be a GraphVectorView (got '
                                       f"{type(keys).__name__}; use GPUHashIndex for one packed batch)")

