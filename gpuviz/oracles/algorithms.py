"""Numpy oracles of the primitives, shared by the algorithm tests and the
soak (flat arrays in, flat arrays out; vectors are one logical sequence)."""

import numpy as np

MASK_OPS = ("and", "or", "xor", "difference", "not")


def scan(x, flags=None, inclusive=False):
    """Exclusive/inclusive, optionally segmented, uint32 scan (wraps mod 2**32)."""
    x = np.asarray(x, np.uint32)
    if x.size == 0:
        return x.copy()
    inc = np.cumsum(x, dtype=np.uint32)
    if flags is not None:
        heads = np.asarray(flags) != 0
        heads[0] = True
        starts = np.flatnonzero(heads)
        inc = inc - (inc - x)[starts][np.cumsum(heads) - 1]
    return inc if inclusive else inc - x


def compaction(x, flags):
    """Survivors in source order."""
    return np.asarray(x, np.uint32)[np.asarray(flags) != 0]


def reduction(x, operation, dtype):
    """sum / min / max / extent of one column; empty input gives zeros."""
    x = np.asarray(x, dtype)
    if x.size == 0:
        return np.zeros(2 if operation == "extent" else 1, dtype)
    if operation == "sum":
        return np.array([x.sum(dtype=dtype)], dtype)
    if operation == "extent":
        return np.array([x.min(), x.max()], dtype)
    return np.array([x.min() if operation == "min" else x.max()], dtype)


def mask(inputs, operation):
    """Canonical 0/1 boolean composition of nonzero-is-true masks."""
    truth = [np.asarray(m) != 0 for m in inputs]
    if operation == "and":
        out = np.logical_and.reduce(truth)
    elif operation == "or":
        out = np.logical_or.reduce(truth)
    elif operation == "xor":
        out = np.add.reduce([t.astype(np.int64) for t in truth]) % 2 == 1
    elif operation == "difference":
        out = truth[0] & ~np.logical_or.reduce(truth[1:]) if len(truth) > 1 else truth[0]
    else:
        out = ~truth[0]
    return out.astype(np.uint32)


def sort_order(keys, key_bits, descending):
    """The stable permutation a radix sort of the low ``key_bits`` bits gives."""
    masked = np.asarray(keys, np.int64) & ((1 << key_bits) - 1)
    return np.argsort(-masked if descending else masked, kind="stable")


def histogram(x, keep, *, bins, domain=None):
    """Counts of finite kept values; ``bins`` is a count (with ``domain``) or edges."""
    x = np.asarray(x, np.float64)
    sel = np.isfinite(x) & keep
    return np.histogram(x[sel], bins=bins, range=domain)[0].astype(np.uint32)


def grouped(cell, n, operation, weights=None):
    """Per-group count / sum / min / max / mean of float32 weights; ``cell`` -1 is ignored.

    Sums are float64 (the soak's weights are small integers, so float32 atomics
    in any order are exact); mean divides in float32 as the GPU does.
    """
    ok = cell >= 0
    if operation == "count":
        return np.bincount(cell[ok], minlength=n).astype(np.uint32)
    ok &= np.isfinite(weights)
    w = np.asarray(weights, np.float64)
    if operation in ("sum", "mean"):
        sums = np.bincount(cell[ok], w[ok], n).astype(np.float32)
        if operation == "sum":
            return sums
        counts = np.bincount(cell[ok], minlength=n).astype(np.float32)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / counts, np.float32(np.nan)).astype(np.float32)
    out = np.full(n, np.nan)
    (np.fmin if operation == "min" else np.fmax).at(out, cell[ok], w[ok])
    return out.astype(np.float32)
