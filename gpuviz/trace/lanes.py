"""Lane packing: where each span of a thread is drawn.

Rules (per thread; a span never leaves its thread and none is dropped):

* Spans are visited in order of (start, longer first, row).
* A span is *open* at time ``t`` when it started earlier in that order and
  ends after ``t`` (``end > t``): touching spans do not overlap, and a
  zero-length span contains nothing.
* A thread has *tracks*; each track is a stack of nested spans. A span goes
  onto the first track (greedy, earliest) whose innermost open span contains
  it (or which has no open span); if none fits, a new track is opened. Its
  ``depth`` is its place in that track's stack and its packed ``parent`` the
  span below it (-1 at the bottom).
* Track 0 takes lanes ``0 .. h0-1`` (``h0`` its deepest stack), track 1 the
  next ``h1`` lanes, and so on: ``lane = offset[track] + depth``. The lanes
  beyond track 0 are the ``lanes_added``.

Properly nested threads (the common case) are packed entirely with numpy: the
depth is the number of open spans at a span's start, the parent the previous
span one level up, checked to contain it. Only the *clusters* (runs between
two moments where nothing is open) that fail that check go through the exact
greedy sweep in Python, O(n log n) with a heap and a segment tree (a
staircase of n mutually overlapping spans needs n tracks).
"""

import heapq

import numpy as np

__all__ = ["pack_lanes", "visit_order", "visiting"]


def _sweep_fast(start, end):
    """The greedy tracks of one cluster in O(n log n) (the plain sweep is
    :func:`gpuviz.oracles.trace.pack_lanes_reference`).

    Lists in, lists out. Ended spans are popped eagerly from a heap of track tops (start times
    only grow), so every open top ends after the current start; the first
    track that fits is then the leftmost whose top ends at or after the
    span's end (an empty track fits anything): a max segment tree over the
    tracks finds it in O(log tracks).
    """
    n = len(start)
    out_track = [0] * n
    out_depth = [0] * n
    out_parent = [0] * n
    inf, none = float("inf"), float("-inf")
    stacks, heap = [], []
    size = 1
    tree = [none, none]

    def set_leaf(t, value):
        k = t + size
        tree[k] = value
        k >>= 1
        while k:
            a, b = tree[2 * k], tree[2 * k + 1]
            tree[k] = a if a > b else b
            k >>= 1
    for i in range(n):
        s, e = start[i], end[i]
        while heap and heap[0][0] <= s:
            _, t, p = heapq.heappop(heap)
            st = stacks[t]
            if st and st[-1][1] == p:
                st.pop()
                if st:
                    heapq.heappush(heap, (st[-1][0], t, st[-1][1]))
                    set_leaf(t, st[-1][0])
                else:
                    set_leaf(t, inf)
        if tree[1] >= e:
            k = 1
            while k < size:
                k = 2 * k if tree[2 * k] >= e else 2 * k + 1
            t = k - size
        else:
            t = len(stacks)
            stacks.append([])
            if t >= size:
                leaves = tree[size:] + [none] * size
                size *= 2
                tree = [none] * size + leaves
                for k in range(size - 1, 0, -1):
                    a, b = tree[2 * k], tree[2 * k + 1]
                    tree[k] = a if a > b else b
        st = stacks[t]
        out_track[i] = t
        out_depth[i] = len(st)
        out_parent[i] = st[-1][1] if st else -1
        st.append((e, i))
        heapq.heappush(heap, (e, t, i))
        set_leaf(t, e)
    return out_track, out_depth, out_parent


def visit_order(start, duration, thread):
    """Argsort of spans by (thread, start, longer first, row): the order the
    packing visits them in (int64 arrays; ``thread`` >= 0). Does not pack."""
    start = np.asarray(start, np.int64)
    duration = np.asarray(duration, np.int64)
    thread = np.asarray(thread, np.int64)
    if len(start) == 0:
        return np.zeros(0, np.int64)
    nthreads = int(thread.max()) + 1 if len(thread) else 0
    t0 = start.min()
    span = int(start.max()) - int(t0) + 1
    dmax = int(duration.max()) + 1
    if nthreads * span * dmax < (1 << 62):
        # One int64 key: one argsort instead of a three-key lexsort.
        key = (thread * np.int64(span) + (start - t0)) * np.int64(dmax) + (dmax - 1 - duration)
        return np.argsort(key, kind="stable")
    return np.lexsort((-duration, start, thread))


def visiting(start, duration, thread):
    """(:func:`visit_order`, start and thread in that order) as int64 arrays:
    what :func:`pack_lanes` and the flow binding (chrome_phases) both need."""
    start = np.asarray(start, np.int64)
    thread = np.asarray(thread, np.int64)
    order = visit_order(start, duration, thread)
    return order, start[order], thread[order]


def _thread_keys(s, e, th, new_thread):
    """Start and end keys made comparable across threads: (skey, ekey)."""
    first = np.flatnonzero(new_thread)
    counts = np.diff(np.append(first, len(s)))
    lo = np.minimum.reduceat(s, first)
    hi = np.maximum.reduceat(e, first)
    width = hi - lo + 1
    if np.all(width > 0) and float(width.astype(np.float64).sum()) < 2.0 ** 62:
        base = np.cumsum(width) - width - lo
        b = np.repeat(base, counts)
        return s + b, e + b
    values, inverse = np.unique(np.concatenate([s, e]), return_inverse=True)
    m = np.int64(len(values) + 1)
    n = len(s)
    return th * m + inverse[:n], th * m + inverse[n:]


def _vector_depth(s, e, zero, th, new_thread, pos_in_thread, thread_first):
    """Open-span count at each start (positions in visiting order; ``zero``:
    the zero-length spans)."""
    n = len(s)
    skey, ekey = _thread_keys(s, e, th, new_thread)
    # A fresh array, sorted in place. The ends of spans in visiting order are
    # nearly sorted already: timsort ("stable") is far cheaper on them than
    # the default introsort; same values.
    ekey.sort(kind="stable")
    ended = np.searchsorted(ekey, skey, side="right") - thread_first   # ends <= start in thread
    del ekey
    # Spans at or after i in order that also end <= start_i: zero-length spans
    # at exactly start_i, which sort last in their start group.
    if not zero.any():
        return pos_in_thread - ended
    group_end = _run_ends(skey)
    zkey = skey[zero]
    zcount = np.searchsorted(zkey, skey, side="right") - np.searchsorted(zkey, skey, side="left")
    positions = np.arange(n, dtype=np.int64)
    later = group_end - np.maximum(positions, group_end - zcount)
    return pos_in_thread - (ended - later)


def _run_ends(sorted_keys):
    """Per element of a sorted array: one past the last index of its run of
    equal values (``searchsorted(a, a, "right")`` in one linear pass)."""
    n = len(sorted_keys)
    ends = np.append(np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1, n)
    return np.repeat(ends, np.diff(ends, prepend=0))


def pack_lanes(*, start, duration, thread, visit=None):
    """Pack the spans of every thread into lanes.

    Parameters
    ----------
    start, duration : array of int64 (ns; durations >= 0)
    thread : array of int (thread row of each span)
    visit : :func:`visiting` of the same spans, when already made (read only)

    Returns
    -------
    lane : uint32 array, depth : uint32 array, parent : int64 array (row or
    -1), lanes_added : int (lanes beyond each thread's nesting stack, summed).

    Spans are never dropped, reordered in the output, or moved to another
    thread; this does not look at names or at given parents.
    """
    start = np.asarray(start, np.int64)
    duration = np.asarray(duration, np.int64)
    thread = np.asarray(thread, np.int64)
    n = len(start)
    if n == 0:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.int64), 0
    order, s, th = visiting(start, duration, thread) if visit is None else visit
    d = duration[order]
    del start, duration, thread, visit
    e = s + d
    positions = np.arange(n, dtype=np.int64)
    new_thread = np.empty(n, bool)
    new_thread[0] = True
    new_thread[1:] = th[1:] != th[:-1]
    thread_first = np.maximum.accumulate(np.where(new_thread, positions, 0))
    # Peak memory (this runs next to the flow binding): temporaries dropped early.
    pos_in_thread = positions - thread_first
    del positions
    zero = d == 0
    del d
    depth = _vector_depth(s, e, zero, th, new_thread, pos_in_thread, thread_first)
    del pos_in_thread, thread_first, zero
    parent_pos = _parent_positions(depth, n)
    has_parent = depth > 0
    pp = np.where(has_parent, parent_pos, 0)
    ok = ~has_parent | ((parent_pos >= 0) & (e[pp] > s) & (e <= e[pp]) & (th[pp] == th))
    del has_parent, pp
    if ok.all():
        lane, added = depth.astype(np.uint32), 0          # one track per thread: lane = depth
    else:
        track = np.zeros(n, np.int64)
        _repair_clusters(s, e, depth, parent_pos, track, ok, new_thread)
        lane, added = _lanes_from_tracks(track, depth, th, new_thread)
    del ok, s, e
    out_lane = np.empty(n, np.uint32)
    out_depth = np.empty(n, np.uint32)
    out_parent = np.empty(n, np.int64)
    out_lane[order] = lane
    out_depth[order] = depth
    out_parent[order] = np.where(parent_pos >= 0, order[np.maximum(parent_pos, 0)], -1)
    return out_lane, out_depth, out_parent, added


def _parent_positions(depth, n):
    """Previous position whose depth is one less; -1 if none.

    (In a properly nested thread that is the parent; the caller checks.)
    """
    # (depth, position) order; a stable sort of small integers is a radix sort.
    small = depth.astype(np.uint16) if n and 0 <= depth.min() and depth.max() < (1 << 16) else depth
    by_depth = np.argsort(small, kind="stable")
    del small
    level = depth[by_depth]
    key = level * np.int64(n) + by_depth
    # In that order the wanted keys (one level up, same position) grow too:
    # the search walks the keys once instead of jumping around.
    at = np.searchsorted(key, key - np.int64(n), side="left") - 1
    del key
    found = by_depth[np.maximum(at, 0)]
    valid = (at >= 0) & (level > 0) & (depth[found] == level - 1)
    out = np.empty(n, np.int64)
    out[by_depth] = np.where(valid, found, -1)
    return out


def _repair_clusters(s, e, depth, parent_pos, track, ok, new_thread):
    """Exact greedy sweep over each cluster holding a non-nested overlap.

    All such clusters go through one Python loop (many are two spans: the
    per-cluster numpy calls cost more than their sweep), scattered back at once.
    """
    n = len(s)
    starts = np.flatnonzero((depth == 0) | new_thread)
    bounds = np.append(starts, n)
    bad_cluster = np.unique(np.searchsorted(starts, np.flatnonzero(~ok), side="right") - 1)
    lo, hi = bounds[bad_cluster], bounds[bad_cluster + 1]
    lengths = hi - lo
    first = np.repeat(lo, lengths)
    pos = first + np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    t, dep, par = _sweep_clusters(s[pos].tolist(), e[pos].tolist(), lengths.tolist())
    track[pos] = t
    depth[pos] = dep
    par = np.asarray(par, np.int64)
    parent_pos[pos] = np.where(par >= 0, par + first, -1)


def _sweep_clusters(start, end, lengths):
    """:func:`_sweep_fast` over consecutive clusters (parents relative to their cluster)."""
    track, depth, parent = [], [], []
    at = 0
    for m in lengths:
        t, d, p = _sweep_fast(start[at:at + m], end[at:at + m])
        track += t
        depth += d
        parent += p
        at += m
    return track, depth, parent


def _lanes_from_tracks(track, depth, th, new_thread):
    """lane = offset[thread, track] + depth, with per-track heights."""
    if not track.any():
        return depth.astype(np.uint32), 0
    tkey = th * (np.int64(track.max()) + 1) + track
    keys, inverse = np.unique(tkey, return_inverse=True)
    height = np.zeros(len(keys), np.int64)
    np.maximum.at(height, inverse, depth + 1)
    key_thread = keys // (np.int64(track.max()) + 1)
    # Exclusive cumulative heights inside each thread.
    cum = np.cumsum(height) - height
    first = np.ones(len(keys), bool)
    first[1:] = key_thread[1:] != key_thread[:-1]
    base = np.maximum.accumulate(np.where(first, cum, 0))
    offset = cum - base
    added = int(height[~first].sum())
    return (offset[inverse] + depth).astype(np.uint32), added


