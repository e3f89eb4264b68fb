"""Literal bin edges of GPUHistogram and the grid aggregations: a checked
float32 range and the edge table kernels correct their float32 bin estimate
against, so values on an edge land exactly whatever the GPU's division
accuracy."""

from __future__ import annotations

import numpy as np

from ..errors import GraphValidationError

__all__ = ["finite_range", "edge_table"]


def finite_range(owner: str, name: str, pair) -> tuple:
    """``(lo, hi)`` rounded to float32: finite, ``lo <= hi`` and a finite
    float32 width ``hi - lo``; raises GraphValidationError naming ``owner``."""
    try:
        lo, hi = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} {name} needs two numbers (got {pair!r})") from None
    lo32, hi32 = np.float32(lo), np.float32(hi)
    with np.errstate(over="ignore"):
        width = np.float32(hi32 - lo32)
    if not (np.isfinite(lo32) and np.isfinite(hi32) and np.isfinite(width)) or lo32 > hi32:
        raise GraphValidationError(
            f"{owner} {name} must be finite float32 values with lo <= hi and a finite width (got {lo!r}, {hi!r})")
    return float(lo32), float(hi32)


def edge_table(lo: float, hi: float, n: int) -> np.ndarray:
    """The ``n + 1`` equal-width edges of ``[lo, hi]`` as float32, each the
    smallest float32 not below the real edge ``lo + (hi - lo) * i / n``: for
    a float32 value, ``x >= table[i]`` exactly when ``x`` reaches the real
    edge."""
    exact = lo + (hi - lo) * np.arange(n + 1, dtype=np.float64) / n
    table = exact.astype(np.float32)
    below = table.astype(np.float64) < exact
    table[below] = np.nextafter(table[below], np.float32(np.inf))
    table[0], table[-1] = lo, hi
    return table
