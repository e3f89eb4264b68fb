"""Spatial-layer oracles: numpy models of gpuviz/spatial/ (the grid index,
its conservative query and the exact point filter), shared by the spatial
tests and the spatial benchmark. Float32 arithmetic is done in numpy
float32 in the kernels' order, so cells and exact tests match the GPU
(away from ties of a rounding step).
"""

import numpy as np

QUERY_KINDS = {"empty": 0, "point": 1, "bounds": 2, "radius": 3, "polygon": 4}


def grid_scale(lo, hi, cells):
    """float32 ``cells / (hi - lo)`` per axis (lo, hi rounded to float32 first)."""
    lo32, hi32 = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
    return (np.asarray(cells, np.float64) / (hi32 - lo32).astype(np.float64)).astype(np.float32)


def axis_cells(x, lo, hi, cells):
    """Each coordinate's cell on one axis (float32 floor((x - lo) * scale), clamped)."""
    lo32 = np.float32(lo)
    scale = grid_scale([lo], [hi], [cells])[0]
    with np.errstate(invalid="ignore", over="ignore"):
        c = np.floor((np.asarray(x, np.float32) - lo32) * scale)
    return np.clip(np.nan_to_num(c, nan=0.0, posinf=0.0, neginf=0.0), 0, cells - 1).astype(np.int64)


def grid_index(points, domain, cells, capacity=None):
    """The grid index of ``points`` ((n, dims) float32): a dict of
    ``cell_offsets`` (cells + 1), ``ids`` (the first ``capacity`` stored row
    IDs), ``cell`` (each row's cell, -1 when rejected), ``count``,
    ``overflow``, ``nonfinite`` and ``outside``."""
    points = np.asarray(points, np.float32).reshape(-1, len(cells))
    lo, hi = (np.asarray(c, np.float32) for c in domain)
    n, dims = points.shape
    finite = np.isfinite(points).all(axis=1)
    inside = finite & ((points >= lo) & (points <= hi)).all(axis=1)
    cell = np.zeros(n, np.int64)
    stride = 1
    for k in range(dims):
        cell += stride * axis_cells(points[:, k], lo[k], hi[k], cells[k])
        stride *= cells[k]
    cell[~inside] = -1
    total = int(np.prod(cells))
    counts = np.bincount(cell[inside], minlength=total)
    offsets = np.zeros(total + 1, np.int64)
    offsets[1:] = np.cumsum(counts)
    order = np.argsort(np.where(inside, cell, total), kind="stable")[:int(inside.sum())]
    capacity = max(n, 1) if capacity is None else capacity
    count = int(inside.sum())
    return {"cell_offsets": offsets.astype(np.uint32), "ids": order[:capacity].astype(np.uint32), "cell": cell,
            "capacity": capacity,
            "count": count, "overflow": max(count - capacity, 0), "nonfinite": int((~finite).sum()),
            "outside": int((finite & ~inside).sum())}


def _record(words):
    words = np.asarray(words, np.uint32)
    return words, words.view(np.float32)


def query_region(words, dims):
    """``(valid, a, b)``: the float32 region a query record selects
    (query_common.wgsl ``query_region``)."""
    words, f = _record(words)
    kind = int(words[0])
    a, b = f[4:4 + dims].copy(), f[8:8 + dims].copy()
    valid = 1 <= kind <= 4
    if kind == 1:
        b = a.copy()
    elif kind == 3:
        r = f[7]
        valid = valid and bool(np.isfinite(a).all()) and bool(np.isfinite(r)) and r >= 0
        if valid:
            with np.errstate(over="ignore"):
                rb = np.float32(np.float32(r + np.float32(r * np.float32(9.5367431640625e-7))) + np.float32(1e-30))
                b, a = (a + rb).astype(np.float32), (a - rb).astype(np.float32)
            big = np.finfo(np.float32).max
            a[~np.isfinite(a)], b[~np.isfinite(b)] = -big, big
    elif kind == 4:
        valid = valid and 3 <= int(words[1]) <= 256 and dims == 2
    valid = valid and bool(np.isfinite(a).all() and np.isfinite(b).all() and (a <= b).all())
    return valid, a, b


def grid_query(index, words, domain, cells, out_capacity):
    """The candidates and QUERY_STATS dict of a query in ``index`` (the dict
    :func:`grid_index` returns, built with the same domain and cells)."""
    dims = len(cells)
    lo, hi = (np.asarray(c, np.float32) for c in domain)
    valid, a, b = query_region(words, dims)
    stats = dict(candidate_count=0, written_count=0, overflow=0, index_overflow=0, ignored_outside=0, cell_count=0,
                 available_count=0)
    if valid and ((a < lo) | (b > hi)).any():  # also a region wholly outside: such rows may match it
        stats["ignored_outside"] = index["outside"]
    if not (valid and (b >= lo).all() and (a <= hi).all()):
        return np.zeros(0, np.uint32), stats
    c0 = [int(axis_cells([max(a[k], lo[k])], lo[k], hi[k], cells[k])[0]) for k in range(dims)]
    c1 = [int(axis_cells([min(b[k], hi[k])], lo[k], hi[k], cells[k])[0]) for k in range(dims)]
    stats["cell_count"] = int(np.prod([c1[k] - c0[k] + 1 for k in range(dims)]))
    offsets, ids = index["cell_offsets"].astype(np.int64), index["ids"]
    icap = index["capacity"]
    out, missing = [], 0
    nz = cells[2] if dims == 3 else 1
    for z in range(nz):
        if dims == 3 and not c0[2] <= z <= c1[2]:
            continue
        for y in range(c0[1], c1[1] + 1):
            first = cells[0] * (y + cells[1] * z)
            start, end = offsets[first + c0[0]], offsets[first + c1[0] + 1]
            avail = min(end, icap)
            if avail > start:
                out.extend(ids[start:avail])
            missing += end - max(start, avail)
    out = np.asarray(out, np.uint32)
    stats["available_count"] = len(out)
    stats["index_overflow"] = int(missing)
    stats["candidate_count"] = len(out) + int(missing)
    stats["written_count"] = min(len(out), out_capacity)
    stats["overflow"] = stats["candidate_count"] - stats["written_count"]
    return out, stats


def point_filter(points, words):
    """The exact 0/1 mask of a query record over ``points`` ((n, dims)
    float32; point_filter.wgsl ``inside``): non-finite rows never match."""
    points = np.asarray(points, np.float32)
    n, dims = points.shape
    words, f = _record(words)
    kind = int(words[0])
    finite = np.isfinite(points).all(axis=1)
    a, b, r = f[4:4 + dims], f[8:8 + dims], f[7]
    with np.errstate(invalid="ignore", over="ignore"):
        if kind == 1:
            hit = (points == a).all(axis=1)
        elif kind == 2:
            hit = ((points >= a) & (points <= b)).all(axis=1)
        elif kind == 3:
            d = (points - a).astype(np.float32)
            d2 = np.zeros(n, np.float32)
            for k in range(dims):
                d2 = (d2 + (d[:, k] * d[:, k]).astype(np.float32)).astype(np.float32)
            hit = (d2 <= np.float32(r * r)) & bool(np.isfinite(r) and r >= 0)
        elif kind == 4 and dims == 2 and 3 <= int(words[1]) <= 256:
            v = f[16:16 + 2 * int(words[1])].reshape(-1, 2)
            hit = even_odd(points, v) & ((points >= a) & (points <= b)).all(axis=1)
        else:
            hit = np.zeros(n, bool)
    return (hit & finite).astype(np.uint32)


def even_odd(points, vertices):
    """Even-odd point-in-polygon in float32, edge by edge as the kernel does."""
    px, py = points[:, 0], points[:, 1]
    inside = np.zeros(len(points), bool)
    m = len(vertices)
    for i in range(m):
        xi, yi = vertices[i]
        xj, yj = vertices[(i + 1) % m]
        spans = (yi > py) != (yj > py)
        left = px < min(xi, xj)
        right = px >= max(xi, xj)
        with np.errstate(invalid="ignore", over="ignore"):
            lhs = ((px - xi).astype(np.float32) * np.float32(yj - yi)).astype(np.float32)
            rhs = (np.float32(xj - xi) * (py - yi).astype(np.float32)).astype(np.float32)
        edge_left = (lhs < rhs) if yj > yi else (lhs > rhs)
        crosses = spans & (left | (~right & edge_left))
        inside ^= crosses
    return inside


BIG = np.float32(np.finfo(np.float32).max)


def bvh_nodes(minimum, maximum, leaf_capacity):
    """``(nodes, ids, stats)`` of a GPUBVH: nodes (2L - 1, 2, 3) float32 in
    level order (min, max; 2-D trees hold z = 0, empty nodes +-FLT_MAX)."""
    lo, hi = np.asarray(minimum, np.float32), np.asarray(maximum, np.float32)
    rows, dims = lo.shape
    L = leaf_capacity
    nodes = np.zeros((2 * L - 1, 2, 3), np.float32)
    nodes[:, 0], nodes[:, 1] = BIG, -BIG
    ids = np.full(L, 0xFFFFFFFF, np.uint32)
    count = min(rows, L)
    valid = np.isfinite(lo[:count]).all(axis=1) & np.isfinite(hi[:count]).all(axis=1) & \
        (lo[:count] <= hi[:count]).all(axis=1)
    leaf = nodes[L - 1:L - 1 + count]
    leaf[valid, 0] = 0
    leaf[valid, 1] = 0
    leaf[valid, 0, :dims] = lo[:count][valid]
    leaf[valid, 1, :dims] = hi[:count][valid]
    ids[:count] = np.arange(count)
    for i in range(L - 2, -1, -1):
        nodes[i, 0] = np.minimum(nodes[2 * i + 1, 0], nodes[2 * i + 2, 0])
        nodes[i, 1] = np.maximum(nodes[2 * i + 1, 1], nodes[2 * i + 2, 1])
    stats = dict(count=count, overflow=rows - count, invalid=int((~valid).sum()), rows=rows, leaf_capacity=L,
                 levels=L.bit_length())
    return nodes, ids, stats


def bvh_query(nodes, ids, words, dims, stack_capacity=32, root_level=10):
    """``(matches, stats)`` of a GPUBVHQuery: the traversal of bvh_query.wgsl
    replayed (same subtree roots, same depth-first order, same stack bound)."""
    L = len(ids)
    valid, a, b = query_region(words, dims)
    level = min(root_level, L.bit_length() - 1)
    visited = dropped = 0
    hits = np.zeros(L, bool)
    if valid:
        for root in range((1 << level) - 1, (1 << (level + 1)) - 1):
            stack = [root]
            while stack:
                i = stack.pop()
                visited += 1
                if not ((nodes[i, 0, :dims] <= b).all() and (nodes[i, 1, :dims] >= a).all()):
                    continue
                if i >= L - 1:
                    hits[i - (L - 1)] = True
                    continue
                for c in (2, 1):
                    if len(stack) < stack_capacity:
                        stack.append(2 * i + c)
                    else:
                        dropped += 1
    matches = ids[hits]
    return matches, dict(match_count=len(matches), visited_count=visited, stack_overflow=dropped)


def segmented_bvh(minimum, maximum, tree_rows):
    """``(nodes, ids)`` of a GPUSegmentedBVH: each tree's :func:`bvh_nodes`
    (leaf capacity the next power of two of its rows, at least 1) packed one
    after another; ids hold global rows."""
    lo, hi = np.asarray(minimum, np.float32), np.asarray(maximum, np.float32)
    all_nodes, all_ids, start = [], [], 0
    for rows in tree_rows:
        capacity = 1 << max(0, rows - 1).bit_length() if rows else 1
        nodes, ids, _ = bvh_nodes(lo[start:start + rows], hi[start:start + rows], capacity)
        ids = np.where(ids == 0xFFFFFFFF, ids, ids + np.uint32(start)).astype(np.uint32)
        all_nodes.append(nodes)
        all_ids.append(ids)
        start += rows
    return np.concatenate(all_nodes), np.concatenate(all_ids)
