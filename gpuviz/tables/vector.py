"""GPUVector: an ordered list of GPUData chunks sharing one format.

The GPU counterpart of an Arrow ChunkedArray. Chunks may live in different
buffers and may be empty; the vector never concatenates, copies or reads
them back.
"""

from __future__ import annotations

from types import MappingProxyType

from ..formats import vector_format
from ..errors import DeviceMismatchError, GraphTypeError, GraphValidationError
from .data import GPUData

__all__ = ["GPUVector"]


class GPUVector:
    """Ordered :class:`GPUData` chunks of one format, read as one logical column.

    Parameters
    ----------
    chunks : iterable of GPUData
        The chunks in row order; empty chunks are kept as given.
    format : GPUVectorFormat or str, optional
        Required when ``chunks`` is empty; otherwise it must match them.
    metadata : mapping, optional
        Adapter-defined facts carried with the vector (for example the Arrow
        type in :mod:`gpuviz.arrow`); the tables layer never interprets them.

    Raises
    ------
    GraphTypeError
        ``chunks`` is not an iterable (``None``, a single GPUData).
    GraphValidationError
        Chunks of different formats, a non-GPUData chunk, or no chunks and no
        format.
    DeviceMismatchError
        Chunks on different devices.

    Notes
    -----
    Does not merge, copy or reorder chunks and does not own buffers itself:
    :meth:`destroy` forwards to each chunk, which frees only owned buffers.
    """

    def __init__(self, chunks, *, format=None, metadata=None):
        if chunks is None or isinstance(chunks, (str, bytes, GPUData)) or not hasattr(chunks, "__iter__"):
            raise GraphTypeError(f"GPUVector needs an iterable of GPUData chunks (got {type(chunks).__name__})")
        self.chunks = tuple(chunks)
        for i, chunk in enumerate(self.chunks):
            if not isinstance(chunk, GPUData):
                raise GraphValidationError(
                    f"GPUVector chunk {i} is a {type(chunk).__name__}, expected GPUData"
                )
        if format is None:
            if not self.chunks:
                raise GraphValidationError("GPUVector has no chunks and no format (pass format=)")
            format = self.chunks[0].format
        self.format = vector_format(format)
        for i, chunk in enumerate(self.chunks):
            if chunk.format != self.format:
                raise GraphValidationError(
                    f'GPUVector chunk {i} "{chunk.label}" has format {chunk.format.name}, '
                    f"expected {self.format.name} ({len(self.chunks)} chunks)"
                )
            if chunk.device is not self.chunks[0].device:
                raise DeviceMismatchError(
                    f'GPUVector chunk {i} "{chunk.label}" is on another device than chunk 0 '
                    f'"{self.chunks[0].label}"'
                )
        self.metadata = MappingProxyType(dict(metadata or {}))

    @classmethod
    def from_numpy(cls, device, arrays, usage=None, *, format=None, metadata=None) -> "GPUVector":
        """Upload each array as one owned chunk (see :meth:`GPUData.from_numpy`).

        ``format`` names the format when ``arrays`` is empty. Never casts.
        """
        chunks = [GPUData.from_numpy(device, array, usage) for array in arrays]
        return cls(chunks, format=format, metadata=metadata)

    @property
    def length(self) -> int:
        """Total rows over all chunks."""
        return sum(chunk.length for chunk in self.chunks)

    @property
    def device(self):
        """The chunks' device, or None for a vector without chunks."""
        return self.chunks[0].device if self.chunks else None

    @property
    def chunk_offsets(self) -> tuple:
        """Row index where each chunk starts, plus the total: ``len(chunks) + 1`` values."""
        offsets = [0]
        for chunk in self.chunks:
            offsets.append(offsets[-1] + chunk.length)
        return tuple(offsets)

    def destroy(self) -> None:
        """Destroy every chunk's owned buffer (see :meth:`GPUData.destroy`); idempotent."""
        for chunk in self.chunks:
            chunk.destroy()

    def __repr__(self) -> str:
        return f"GPUVector(format={self.format.name}, length={self.length}, chunks={len(self.chunks)})"
