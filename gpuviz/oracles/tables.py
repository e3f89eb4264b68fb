"""Tables-layer oracles: numpy models of the table operations in
gpuviz/tables/ (flat arrays in, flat arrays out)."""

import numpy as np

__all__ = ["interleave"]


def interleave(x, y) -> np.ndarray:
    """GPUInterleave: rows ``(x[i], y[i])`` of two 4-byte columns, bit for bit
    (returned as uint32 pairs, shape (n, 2))."""
    x = np.ascontiguousarray(x).view(np.uint32)
    y = np.ascontiguousarray(y).view(np.uint32)
    return np.stack([x, y], 1)
