"""Tables-layer oracles: numpy models of the table operations in
gpuviz/tables/ (flat arrays in, flat arrays out)."""

import numpy as np

from ..formats import vector_format

__all__ = ["interleave", "read_rows"]


def interleave(x, y) -> np.ndarray:
    """GPUInterleave: rows ``(x[i], y[i])`` of two 4-byte columns, bit for bit
    (returned as uint32 pairs, shape (n, 2))."""
    x = np.ascontiguousarray(x).view(np.uint32)
    y = np.ascontiguousarray(y).view(np.uint32)
    return np.stack([x, y], 1)


def read_rows(raw, fmt, *, length, byte_offset, byte_stride):
    """read_array's rows: ``length`` rows of format ``fmt`` (a name or a
    GPUVectorFormat) taken from the bytes ``raw`` at ``byte_offset``, one every
    ``byte_stride`` bytes; shape (length,) or (length, components)."""
    fmt = vector_format(fmt)
    raw = np.asarray(raw, np.uint8)
    rows = [raw[byte_offset + i * byte_stride: byte_offset + i * byte_stride + fmt.byte_size] for i in range(length)]
    flat = np.concatenate(rows) if rows else np.empty(0, np.uint8)
    shape = (length,) if fmt.components == 1 else (length, fmt.components)
    return flat.view(fmt.dtype).reshape(shape)
