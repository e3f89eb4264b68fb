"""Algorithm-layer oracles: numpy models of the primitives in
gpuviz/algorithms/, shared by the algorithm tests, the soak and the
benchmarks (flat arrays in, flat arrays out; vectors are one logical
sequence)."""

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
    """GPUReduction's sum / min / max / extent of one column: integer sums
    wrap to 32 bits, float32 sums are the float64 sum rounded once (exact
    where the values are, whatever the GPU's order), float min / max skip
    NaN and infinities; an empty (or all non-finite) input gives zeros."""
    x = np.asarray(x, dtype)
    if operation == "sum":
        if x.dtype.kind == "f":
            return np.array([x.astype(np.float64).sum()], dtype)
        wrapped = int(x.astype(np.int64).sum()) % (1 << 32)
        return np.array([wrapped], np.uint64).astype(np.uint32).view(dtype)
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    lo, hi = (finite.min(), finite.max()) if finite.size else (0, 0)
    return np.array({"min": [lo], "max": [hi], "extent": [lo, hi]}[operation], dtype)


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


def hierarchy_layout(parent_states, child_states, parent_of, expanded, collapsed_child, collapsed_parent):
    """Heights and exclusive offsets (uint32, wrapping) of GPUHierarchyLayout's rule."""
    parent_states = np.asarray(parent_states, np.uint32)
    child_states = np.asarray(child_states, np.uint32)
    parent_of = np.asarray(parent_of, np.int64)
    n = child_states.size
    first = np.ones(n, bool)
    first[1:] = parent_of[1:] != parent_of[:-1]
    inside = parent_of < parent_states.size
    open_parent = np.ones(n, bool)
    open_parent[inside] = parent_states[parent_of[inside]] != 0
    full = np.broadcast_to(np.asarray(expanded, np.uint32), (n,))
    heights = np.where(open_parent, np.where(child_states != 0, full, np.uint32(collapsed_child)),
                       np.where(first, np.uint32(collapsed_parent), np.uint32(0))).astype(np.uint32)
    offsets = (np.cumsum(heights, dtype=np.uint32) - heights).astype(np.uint32)
    return heights, offsets


NONE = 0xFFFFFFFF  # GPUAncestorProjection's "no visible ancestor"


def ancestor_projection(parents, visibility, max_depth, invalid=NONE):
    """GPUAncestorProjection: every node's walk of up to ``max_depth`` parent
    steps to its first visible node (itself included), all nodes at once."""
    parents = np.asarray(parents, np.int64)
    visible = np.asarray(visibility) != 0
    n = parents.size
    out = np.full(n, invalid, np.uint32)
    cur = np.arange(n)
    open_ = np.ones(n, bool)  # neither found nor at a root yet
    for d in range(max_depth + 1):
        hit = open_ & visible[cur]
        out[hit] = cur[hit]
        open_ &= ~hit
        if d == max_depth or not open_.any():
            break
        nxt = parents[cur]
        open_ &= (nxt >= 0) & (nxt < n)
        cur = np.where(open_, nxt, cur)
    return out


UNREACHED = 0xFFFFFFFF  # GPUGraphTraversal's depth of a node not reached


def csr(n, src, dst):
    """(offsets, neighbors) of edges src -> dst over n nodes (dst may be out of range)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    order = np.argsort(src, kind="stable")
    offsets = np.zeros(n + 1, np.uint32)
    np.add.at(offsets, src + 1, 1)
    return np.cumsum(offsets).astype(np.uint32), dst[order].astype(np.uint32)


def bfs(n, forward, reverse, seeds, *, direction="forward", depth, seed_count=None):
    """GPUGraphTraversal's ``(depths, out-of-range count)``: a level-synchronous
    BFS written the plain way (a Python loop per edge), the specification the
    GPU must meet when no frontier overflows. For test sizes; see
    :func:`traversal_depths` for benchmark sizes."""
    sets = {"forward": [forward], "backward": [reverse], "both": [forward, reverse]}[direction]
    depths = np.full(n, UNREACHED, np.uint32)
    used = list(seeds)[:len(seeds) if seed_count is None else min(seed_count, len(seeds))]
    oob = sum(1 for s in used if s >= n)
    frontier = []
    for s in used:
        if s < n and depths[s] == UNREACHED:
            depths[s] = 0
            frontier.append(s)
    for level in range(depth):
        nxt = []
        for u in frontier:
            for offsets, neighbors in sets:
                for v in neighbors[offsets[u]:offsets[u + 1]]:
                    if v >= n:
                        oob += 1
                    elif depths[v] == UNREACHED:
                        depths[v] = level + 1
                        nxt.append(v)
        frontier = nxt
    return depths, oob


def traversal_depths(n, csrs, seeds, depth) -> np.ndarray:
    """Depths (uint32, UNREACHED where not reached) of a level-synchronous
    BFS over every ``(offsets, neighbors)`` in ``csrs``, frontier by frontier
    (vectorised: :func:`bfs` at benchmark sizes, without the out-of-range count)."""
    depths = np.full(n, UNREACHED, np.uint32)
    frontier = np.unique(seeds[seeds < n])
    depths[frontier] = 0
    for level in range(depth):
        found = []
        for offsets, neighbors in csrs:
            starts = offsets[frontier].astype(np.int64)
            degree = offsets[frontier + 1].astype(np.int64) - starts
            before = np.cumsum(degree) - degree
            index = np.repeat(starts - before, degree) + np.arange(int(degree.sum()))
            found.append(neighbors[index])
        targets = np.unique(np.concatenate(found)) if found else np.zeros(0, np.uint32)
        targets = targets[targets < n]
        frontier = targets[depths[targets] == UNREACHED]
        depths[frontier] = level + 1
    return depths


def group_aggregation(codes, groups, operation, values=None, mask=None, keep=None):
    """GPUGroupAggregation: ``(per-group result, overflow)``: count (uint32) or
    float64 sum / min / max / mean of the finite values of selected rows
    (``mask`` nonzero and ``keep``); rows with a code >= ``groups`` count as
    overflow; groups with no value hold 0 (sum) or NaN."""
    codes = np.asarray(codes, np.int64)
    sel = np.ones(len(codes), bool) if mask is None else np.asarray(mask) != 0
    if keep is not None:
        sel &= keep
    overflow = int((sel & (codes >= groups)).sum())
    sel &= codes < groups
    if operation == "count":
        return np.bincount(codes[sel], minlength=groups).astype(np.uint32), overflow
    values = np.asarray(values, np.float32)
    sel &= np.isfinite(values)
    at, v = codes[sel], values[sel].astype(np.float64)
    if operation in ("sum", "mean"):
        sums = np.bincount(at, v, groups)
        if operation == "sum":
            return sums, overflow
        counts = np.bincount(at, minlength=groups)
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan), overflow
    out = np.full(groups, np.nan)
    (np.fmin if operation == "min" else np.fmax).at(out, at, v)
    return out, overflow


def histogram_uniform(x, lo, hi, bins, keep=None):
    """GPUHistogram's equal-width bins over float32 ``[lo, hi]`` (the maximum
    in the last bin), in real arithmetic: float64 is exact enough for float32
    data. Non-finite and out-of-range values are not counted."""
    x = np.asarray(x, np.float32).astype(np.float64)
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(x) & (x >= lo) & (x <= hi)
    if keep is not None:
        ok &= keep
    t = (x[ok] - lo) * bins / (hi - lo) if hi > lo else np.zeros(ok.sum())
    return np.bincount(np.minimum(np.floor(t).astype(np.int64), bins - 1), minlength=bins).astype(np.uint32)


def histogram_edges(x, edges):
    """GPUHistogram over explicit float32 edges (numpy's rule: the last bin is closed)."""
    x = np.asarray(x, np.float32)
    return np.histogram(x[np.isfinite(x)], np.asarray(edges, np.float32))[0].astype(np.uint32)


def _grid_axis(v, lo, hi, n):
    """Equal-width cells in real arithmetic (float64 is exact enough for float32 data)."""
    lo, hi = float(np.float32(lo)), float(np.float32(hi))
    if hi <= lo:
        return np.zeros(len(v), np.int64)
    with np.errstate(invalid="ignore"):
        return np.minimum(np.floor((v.astype(np.float64) - lo) * n / (hi - lo)), n - 1).astype(np.int64)


def grid_cells(positions, bounds, grid_size):
    """GPUGridBinning's row-major cell per row (-1: non-finite or outside
    ``bounds`` (x0, y0, x1, y1); the maximum coordinate falls in the last cell)."""
    p = np.asarray(positions, np.float32).reshape(-1, 2)
    x0, y0, x1, y1 = (np.float32(b) for b in bounds)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(p).all(axis=1) & (p[:, 0] >= x0) & (p[:, 0] <= x1) & (p[:, 1] >= y0) & (p[:, 1] <= y1)
    w, h = grid_size
    cell = _grid_axis(p[:, 1], y0, y1, h) * w + _grid_axis(p[:, 0], x0, x1, w)
    return np.where(ok, cell, -1)


def grid_aggregation(positions, bounds, grid_size, operation="count", weights=None, keep=None):
    """GPUGridBinning (count, uint32) and GPUGridAggregation (float64 sum /
    min / max / mean of finite weights; empty cells 0 for sum, else NaN)."""
    cell = grid_cells(positions, bounds, grid_size)
    ok = cell >= 0
    if keep is not None:
        ok &= keep
    n = grid_size[0] * grid_size[1]
    if operation == "count":
        return np.bincount(cell[ok], minlength=n).astype(np.uint32)
    ok &= np.isfinite(weights)
    out = np.full(n, 0.0 if operation == "sum" else np.nan)
    w = weights.astype(np.float64)
    if operation in ("sum", "mean"):
        sums = np.bincount(cell[ok], w[ok], n)
        counts = np.bincount(cell[ok], minlength=n)
        out = sums if operation == "sum" else np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    else:
        reduce = np.fmin if operation == "min" else np.fmax
        reduce.at(out, cell[ok], w[ok])
    return out


def group_filter(values, codes, enabled):
    """GPUGroupFilter: ``values[i]`` where ``enabled[min(codes[i], len(enabled) - 1)]``
    is nonzero, NaN elsewhere (float32; values' bits kept)."""
    values, codes = np.asarray(values, np.float32), np.asarray(codes, np.int64)
    enabled = np.asarray(enabled, np.uint32)
    keep = enabled[np.minimum(codes, len(enabled) - 1)] != 0
    return np.where(keep, values, np.float32(np.nan)).astype(np.float32)


def gather(indices, table, fill=0):
    """GPUGather: ``table[indices[i]]`` where the index is inside the table,
    ``fill`` elsewhere (the table's dtype)."""
    indices, table = np.asarray(indices, np.int64), np.asarray(table)
    inside = indices < len(table)
    out = np.full(len(indices), fill, table.dtype)
    out[inside] = table[indices[inside]]
    return out


GRID_STATISTICS = ("count", "sum", "mean", "min", "max")


def grid_statistic(counts, sums, mins, maxs, grid_size, operation, offset=(0.0, 0.0), scale=(1.0, 1.0)):
    """GPUGridStatistic: ``(values float32, counts uint32)`` per output cell of a
    ``w x h`` grid; output cell (i, j) samples source cell
    ``floor(offset + (i + 0.5) * scale)`` per axis (float32); NaN and 0 where
    the sample is outside or its count is 0; mean = sum / count."""
    w, h = grid_size
    f = np.float32
    i = np.arange(w * h)
    cx = (i % w).astype(f) + f(0.5)
    cy = (i // w).astype(f) + f(0.5)
    sx = np.floor(f(offset[0]) + cx * f(scale[0])).astype(f)
    sy = np.floor(f(offset[1]) + cy * f(scale[1])).astype(f)
    inside = (sx >= 0) & (sy >= 0) & (sx < w) & (sy < h)
    k = np.where(inside, sy.astype(np.int64) * w + sx.astype(np.int64), 0)
    counts = np.asarray(counts, np.uint32)
    n = np.where(inside, counts[k], 0).astype(np.uint32)
    sums, mins, maxs = (np.asarray(a, f) for a in (sums, mins, maxs))
    pick = {"count": n.astype(f), "sum": sums[k], "mean": (sums[k] / np.maximum(n, 1).astype(f)).astype(f),
            "min": mins[k], "max": maxs[k]}[operation]
    return np.where(n > 0, pick, f(np.nan)).astype(f), n


# ------------------------------------------------------------- hash index
HASH_EMPTY = 0xFFFFFFFF  # GPUHashIndex's reserved key word and NOT_FOUND value
_M32 = 0xFFFFFFFF


def fmix32(x):
    """murmur3's 32-bit finalizer over uint32 values (a bijection)."""
    h = np.asarray(x, np.uint64) & _M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h.astype(np.uint32)


def fmix32_inverse(h):
    """The key whose fmix32 is ``h``: crafts keys that share a probe chain."""
    x = np.asarray(h, np.uint64) & _M32
    x ^= x >> 16
    x = (x * pow(0xC2B2AE35, -1, 1 << 32)) & _M32
    x ^= (x >> 13) ^ (x >> 26)
    x = (x * pow(0x85EBCA6B, -1, 1 << 32)) & _M32
    x ^= x >> 16
    return x.astype(np.uint32)


def _murmur_block(h, word):
    k = (np.asarray(word, np.uint64) * 0xCC9E2D51) & _M32
    k = ((k << 15) | (k >> 17)) & _M32
    k = (k * 0x1B873593) & _M32
    m = (np.asarray(h, np.uint64) ^ k) & _M32
    m = ((m << 13) | (m >> 19)) & _M32
    return (m * 5 + 0xE6546B64) & _M32


def hash_slot(keys, capacity):
    """The slot a key starts probing from: ``keys`` is (n,) uint32 (one word)
    or (n, 2) uint32 (low, high: murmur3_32 of the 8 bytes, seed 0)."""
    keys = np.asarray(keys, np.uint32)
    if keys.ndim == 1:
        h = fmix32(keys)
    else:
        h = fmix32(_murmur_block(_murmur_block(0, keys[:, 0]), keys[:, 1]) ^ 8)
    return (h & np.uint32(capacity - 1)).astype(np.uint32)


def _key_tuples(keys):
    keys = np.asarray(keys, np.uint32)
    return [(k,) for k in keys.tolist()] if keys.ndim == 1 else [tuple(r) for r in keys.tolist()]


def hash_index(keys, values=None):
    """GPUHashIndex as a dict ``key tuple -> value`` (the lowest row's value
    for a duplicated key; keys whose words are all HASH_EMPTY skipped) and
    the counts ``{"inserted_count", "duplicate_count", "invalid", "rows"}``."""
    table = {}
    invalid = 0
    rows = _key_tuples(keys)
    for row, key in enumerate(rows):
        if all(w == HASH_EMPTY for w in key):
            invalid += 1
        elif key not in table:
            table[key] = row if values is None else int(values[row])
    return table, {"inserted_count": len(table), "duplicate_count": len(rows) - invalid - len(table),
                   "invalid": invalid, "rows": len(rows)}


def hash_lookup(table, keys):
    """``(output, found)`` of looking ``keys`` up in a :func:`hash_index` dict."""
    out, found = [], []
    for key in _key_tuples(keys):
        value = table.get(key)
        out.append(HASH_EMPTY if value is None else value)
        found.append(value is not None)
    return np.asarray(out, np.uint32), np.asarray(found, np.uint32)


def hash_join(table, keys, row_base=0):
    """Many-to-one join pairs ``(n, 2)`` uint32 (left row, value) in left order."""
    out, found = hash_lookup(table, keys)
    rows = np.flatnonzero(found).astype(np.uint32) + np.uint32(row_base)
    return np.stack([rows, out[found != 0]], axis=1).astype(np.uint32).reshape(-1, 2)


def indexed_range_compaction(flags, ranges, active):
    """GPUIndexedRangeCompaction: the flagged rows of the active ranges
    (``ranges[r] = (start, count)``), ranges in ascending index order, each
    range's rows in order."""
    return [s for r in sorted(set(active)) for s in range(ranges[r][0], ranges[r][0] + ranges[r][1]) if flags[s]]
