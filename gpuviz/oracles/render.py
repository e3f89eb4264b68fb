"""Oracles of the render layer: compute rasterisation's two targets
(:mod:`gpuviz.render.raster`), splatted and resolved on the CPU, and the
colour range GPUColourRange selects."""

from __future__ import annotations

import math

import numpy as np

from ..render.colour_range import ROBUST_PERCENTILE
from ..render.raster import RASTER_EMPTY, RASTER_FAR, packed_words

__all__ = ["packed_raster", "depth_raster", "colour_range_oracle"]


def packed_raster(pixels, keys, ids, *, key_bits: int, size: int, runs=None) -> np.ndarray:
    """The words of a packed target of ``size`` pixels after items ``i``
    splat ``(keys[i], ids[i])`` at pixel ``pixels[i]`` (and the next
    ``runs[i] - 1`` pixels where ``runs`` is given); uint32."""
    pixels = np.asarray(pixels, np.int64)
    runs = np.ones(len(pixels), np.int64) if runs is None else np.asarray(runs, np.int64)
    words = np.asarray(packed_words(keys=keys, ids=ids, key_bits=key_bits), np.int64)
    out = np.full(size, RASTER_EMPTY, np.int64)
    at = np.repeat(pixels, runs) + (np.arange(runs.sum()) - np.repeat(np.cumsum(runs) - runs, runs))
    np.maximum.at(out, at, np.repeat(words, runs))
    return out.astype(np.uint32)


def depth_raster(pixels, depths, ids, *, size: int):
    """``(depth_bits, hits)`` of a depth target of ``size`` pixels after items
    ``i`` splat ``ids[i]`` at depth ``depths[i] >= 0`` (float32) at pixel
    ``pixels[i]``: each pixel's nearest depth's bits (RASTER_FAR where none)
    and ``id + 1`` of the highest ID at that depth (0 where none)."""
    pixels = np.asarray(pixels, np.int64)
    bits = np.maximum(np.asarray(depths, np.float32), np.float32(0)).view(np.uint32).astype(np.int64)
    ids = np.asarray(ids, np.int64)
    near = np.full(size, RASTER_FAR, np.int64)
    np.minimum.at(near, pixels, bits)
    hits = np.zeros(size, np.int64)
    won = bits == near[pixels]
    np.maximum.at(hits, pixels[won], ids[won] + 1)
    return near.astype(np.uint32), hits.astype(np.uint32)


def colour_range_oracle(values, *, normalisation: str, percentile: float = ROBUST_PERCENTILE):
    """The ``(lo, hi)`` GPUColourRange computes for float32 ``values``, in
    numpy (NaNs when nothing counts): the test oracle, and what a host that
    holds the values would label (notebook 04 does)."""
    v = np.asarray(values, np.float32).ravel()
    v = v[np.isfinite(v)]
    if normalisation == "log":
        v = v[v > 0]
    if not len(v):
        return (math.nan, math.nan)
    v = np.sort(v)
    fraction = percentile / 100.0 if normalisation == "robust" else 0.0
    k = int(math.floor(np.float32(fraction) * np.float32(len(v) - 1)))
    return (float(v[k]), float(v[len(v) - 1 - k]))
