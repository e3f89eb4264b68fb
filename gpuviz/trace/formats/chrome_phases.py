"""The phases of Chrome Trace Event JSON other than X (see chrome.py for the rules).

Each function reads the :class:`~gpuviz.trace.formats.jsonevents.EventColumns`
and the phase codes, and returns span parts, links or tables. Loops here run
over the events of their phase only (B/E, async, flows, metadata, counters);
X slices stay vectorised in chrome.py.
"""

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..lanes import visiting

from ..model import table

__all__ = ["metadata", "begin_end_spans", "async_spans", "flow_points", "flow_links", "flow_v2_links", "first_seen",
           "counters_table", "instants_table"]

_EMPTY_SPANS = {"event": np.zeros(0, np.int64), "start": np.zeros(0, np.int64), "dur": np.zeros(0, np.int64),
                "thread": np.zeros(0, np.int64), "incomplete": np.zeros(0, bool)}


def _args(event):
    raw = event.args
    if not len(raw):
        return {}
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _raw_text(raw):
    text = bytes(raw).decode("utf-8", "replace")
    return text[1:-1] if len(text) >= 2 and text[0] == '"' and text[-1] == '"' else text


def metadata(cols, code, ident, reporter):
    """Apply M events: process/thread names, labels, sort indexes."""
    idx = np.flatnonzero(code == 14)
    names = {i: cols.rare[i].name for i in idx.tolist()}
    thread_meta = np.zeros(len(code), bool)
    for i, name in names.items():
        if name in ("thread_name", "thread_sort_index"):
            thread_meta[i] = True
    ident.threads_for(thread_meta)
    for i, name in names.items():
        args = _args(cols.rare[i])
        proc = int(ident.pid_index[i])
        if name == "process_name":
            ident.process_names[proc] = str(args.get("name", ""))
        elif name == "process_labels":
            labels = args.get("labels", "")
            ident.process_labels.setdefault(proc, []).append(str(labels))
        elif name == "thread_name":
            ident.thread_names[int(ident.thread_of[i])] = str(args.get("name", ""))
        elif name == "thread_sort_index":
            value = args.get("sort_index")
            if isinstance(value, (int, float)) and abs(value) < 2 ** 62:
                ident.thread_sort[int(ident.thread_of[i])] = int(value)
            else:  # not a number (NaN included) or beyond int64: the thread keeps its default order
                reporter.add("bad_sort_index", index=i)
        elif name != "process_sort_index":
            reporter.add("unknown_metadata", index=i)


def _spans(rows):
    if not rows:
        return dict(_EMPTY_SPANS)
    event, start, dur, thread, incomplete = zip(*rows)
    return {"event": np.array(event, np.int64), "start": np.array(start, np.int64),
            "dur": np.array(dur, np.int64), "thread": np.array(thread, np.int64),
            "incomplete": np.array(incomplete, bool)}


def begin_end_spans(cols, code, ts, ident, reporter, last):
    """B/E pairs per thread stack; unclosed Bs end at their thread's last ts.

    Threads where no B and E share a timestamp and no E comes with nothing
    open (the usual case) are matched vectorised by nesting level; the
    others replay the stack rules event by event. Both give the same spans.
    """
    idx = np.flatnonzero((code == 2) | (code == 3))
    if len(idx) == 0:
        return dict(_EMPTY_SPANS)
    thread = ident.thread_of[idx]
    order = np.lexsort((idx, ts[idx], thread))
    idx, thread = idx[order], thread[order]
    names = np.array([cols.rare[i].name for i in idx.tolist()], dtype=object)
    fast = _fast_threads(idx, thread, ts[idx], code[idx] == 2)
    parts = [_matched_by_level(idx[fast], thread[fast], ts[idx][fast], code[idx][fast] == 2, names[fast],
                               reporter, last)]
    slow = ~fast
    if slow.any():
        parts.append(_replayed(idx[slow], thread[slow], ts[idx][slow].tolist(), (code[idx][slow] == 2).tolist(),
                               names[slow].tolist(), reporter, last))
    return {k: np.concatenate([p[k] for p in parts]) for k in _EMPTY_SPANS}


def _fast_threads(idx, thread, t, begin):
    """Per event: does its thread qualify for matching by nesting level?"""
    n = len(idx)
    new_thread = np.ones(n, bool)
    new_thread[1:] = thread[1:] != thread[:-1]
    new_group = new_thread.copy()
    new_group[1:] |= t[1:] != t[:-1]
    group = np.cumsum(new_group) - 1
    b_in = np.bincount(group, weights=begin, minlength=group[-1] + 1) > 0
    e_in = np.bincount(group, weights=~begin, minlength=group[-1] + 1) > 0
    tie = (b_in & e_in)[group]
    depth = _thread_depth(begin, new_thread)
    bad = tie | (~begin & (depth < 0))          # depth after an E below 0: E with nothing open
    tid = np.cumsum(new_thread) - 1
    bad_thread = np.bincount(tid, weights=bad, minlength=tid[-1] + 1) > 0
    return ~bad_thread[tid]


def _thread_depth(begin, new_thread):
    """Open B count after each event, restarting at every thread."""
    delta = np.where(begin, 1, -1).astype(np.int64)
    total = np.cumsum(delta)
    first = np.flatnonzero(new_thread)
    before = total[first] - delta[first]
    return total - np.repeat(before, np.diff(np.append(first, len(delta))))


def _matched_by_level(idx, thread, t, begin, names, reporter, last):
    if len(idx) == 0:
        return dict(_EMPTY_SPANS)
    new_thread = np.ones(len(idx), bool)
    new_thread[1:] = thread[1:] != thread[:-1]
    depth = _thread_depth(begin, new_thread)
    level = np.where(begin, depth, depth + 1)           # a B opens level d, its E closes it
    order = np.lexsort((np.arange(len(idx)), level, thread))
    b = begin[order]
    same = np.zeros(len(order), bool)
    same[:-1] = (thread[order][1:] == thread[order][:-1]) & (level[order][1:] == level[order][:-1])
    pair = np.flatnonzero(b & same & np.append(~b[1:], False))
    bi, ei = order[pair], order[pair + 1]
    paired = np.zeros(len(idx), bool)
    paired[bi] = True
    mismatch = np.array([bool(e) and e != a for a, e in zip(names[bi].tolist(), names[ei].tolist())], bool)
    reporter.add_mask("mismatched_end_name", mismatch, idx[ei])
    open_b = np.flatnonzero(begin & ~paired)
    reporter.add_mask("unclosed_begin", np.ones(len(open_b), bool), idx[open_b])
    start = np.concatenate([t[bi], t[open_b]])
    stop = np.concatenate([t[ei], np.maximum(last[thread[open_b]], t[open_b])])
    return {"event": np.concatenate([idx[bi], idx[open_b]]), "start": start, "dur": stop - start,
            "thread": np.concatenate([thread[bi], thread[open_b]]),
            "incomplete": np.concatenate([np.zeros(len(bi), bool), np.ones(len(open_b), bool)])}


def _replayed(idx, thread, times, is_begin, names, reporter, last):
    """The stack rules event by event (threads with B/E ties or stray Es)."""
    rows = []
    ev = idx.tolist()
    th = thread.tolist()
    k, n = 0, len(ev)
    while k < n:
        t, tt = th[k], times[k]
        stack = []
        while k < n and th[k] == t:
            g = k
            while g < n and th[g] == t and times[g] == tt:
                g += 1
            _one_timestamp(k, g, stack, ev, names, is_begin, tt, t, rows, reporter)
            k = g
            if k < n:
                tt = times[k]
        for b in stack:
            reporter.add("unclosed_begin", index=b[0])
            rows.append((b[0], b[1], max(int(last[t]) - b[1], 0), t, True))
    return _spans(rows)


def _one_timestamp(lo, hi, stack, ev, names, is_begin, ts, thread, rows, reporter):
    ends = [j for j in range(lo, hi) if not is_begin[j]]
    pending = list(ends)
    progress = True
    while progress and pending and stack:
        progress = False
        for j in pending:
            if stack and names[j] == stack[-1][2]:
                b = stack.pop()
                rows.append((b[0], b[1], ts - b[1], thread, False))
                pending.remove(j)
                progress = True
                break
    for j in range(lo, hi):
        if is_begin[j]:
            stack.append((ev[j], ts, names[j]))
    for j in pending:
        if not stack:
            reporter.add("unmatched_end", index=ev[j])
            continue
        b = stack.pop()
        if names[j] and names[j] != b[2]:
            reporter.add("mismatched_end_name", index=ev[j])
        rows.append((b[0], b[1], ts - b[1], thread, False))


def _async_key(cols, i, ident):
    e = cols.rare[i]
    if len(e.id2):
        try:
            id2 = msgspec.json.decode(e.id2)
        except (msgspec.DecodeError, RecursionError):
            id2 = {}
        if isinstance(id2, dict) and "global" in id2:
            return (None, e.cat, "g:" + str(id2["global"]))
        if isinstance(id2, dict) and "local" in id2:
            return (int(ident.pid_index[i]), e.cat, "l:" + str(id2["local"]))
    return (int(ident.pid_index[i]), e.cat, _raw_text(e.id))


def async_spans(cols, code, ts, ident, reporter):
    """Nestable b/e/n and legacy S/T/p/F spans on per-process async threads.

    Returns (span parts, [(event, event)] async-step pairs). n events and
    instants are left to :func:`instants_table`.
    """
    idx = np.flatnonzero(np.isin(code, (4, 5, 7, 8, 9, 10)))
    if len(idx) == 0:
        return dict(_EMPTY_SPANS), []
    idx = idx[np.lexsort((idx, ts[idx]))]
    rows, steps = [], []
    nestable, legacy = {}, {}
    last = {}
    for i in idx.tolist():
        c = int(code[i])
        e = cols.rare[i]
        t = int(ts[i])
        proc = int(ident.pid_index[i])
        if c in (4, 5):
            key = _async_key(cols, i, ident)
            if c == 4:
                track = ident.async_row(proc)
                nestable.setdefault(key, []).append((i, t, track, e.name))
            else:
                # e closes the innermost open b of its key with its name
                # (any name when e has none); a b left above it stays open.
                stack = nestable.get(key, [])
                at = next((k for k in range(len(stack) - 1, -1, -1) if not e.name or stack[k][3] == e.name), -1)
                if at < 0:
                    reporter.add("unmatched_async_end", index=i)
                    continue
                b = stack.pop(at)
                track = b[2]
                rows.append((b[0], b[1], t - b[1], b[2], False))
        else:
            key = (e.cat, e.name, _raw_text(e.id))
            if c == 7:
                track = ident.async_row(proc)
                legacy[key] = {"start": (i, t, track), "step": None}
            elif key not in legacy:
                reporter.add("unmatched_async_end" if c == 10 else "unmatched_async_step", index=i)
                continue
            else:
                state = legacy[key]
                track = state["start"][2]
                if state["step"] is not None:
                    s = state["step"]
                    rows.append((s[0], s[1], t - s[1], track, False))
                prev = state["step"][0] if state["step"] is not None else state["start"][0]
                if c == 10:
                    s = state["start"]
                    rows.append((s[0], s[1], t - s[1], track, False))
                    del legacy[key]
                else:
                    steps.append((prev, i))
                    state["step"] = (i, t)
        last[track] = max(last.get(track, t), t)
    for stack in nestable.values():
        for b in stack:
            reporter.add("unclosed_async", index=b[0])
            rows.append((b[0], b[1], last[b[2]] - b[1], b[2], True))
    for state in legacy.values():
        s = state["start"]
        reporter.add("unclosed_async", index=s[0])
        end = last[s[2]]
        if state["step"] is not None:
            st = state["step"]
            rows.append((st[0], st[1], end - st[1], s[2], True))
        rows.append((s[0], s[1], end - s[1], s[2], True))
    return _spans(rows), steps


def _slice_index(spans, visit=None):
    """Per-thread search structures over the spans: (order, thread, start,
    end); ``visit``: :func:`~gpuviz.trace.lanes.visiting` of them, when
    already made."""
    order, start, thread = visiting(spans["start"], spans["dur"], spans["thread"]) if visit is None else visit
    return order, thread, start, spans["start"] + spans["dur"]


def bind_points(spans, parent, index, thread, t, enclosing):
    """Rows of the slices flow points bind to (-1: none), vectorised.

    ``enclosing``: the innermost slice open at t (start <= t <= end) — the
    last slice starting at or before t or one of its ancestors; else the
    first slice beginning at or after t.
    """
    return _walk_up(spans, parent, index, t, enclosing, _nearest(index, thread, t, enclosing))


def _nearest(index, thread, t, enclosing):
    """Per point: the last slice of its thread starting at or before t
    (``enclosing``) or the first starting at or after t; -1 if none."""
    order, th, st, _ = index
    thread = np.asarray(thread, np.int64)
    t = np.asarray(t, np.int64)
    rows = _nearest_starts(order, th, st, thread, t, enclosing)
    if rows is None:
        rows = _nearest_starts_by_thread(order, th, st, thread, t, enclosing)
    return rows


def _walk_up(spans, parent, index, t, enclosing, rows):
    """:func:`bind_points` from the :func:`_nearest` rows (changed in place):
    an enclosing point walks up from the last slice starting before t until
    one contains t."""
    end = index[3]
    t = np.asarray(t, np.int64)
    walk = np.flatnonzero(enclosing & (rows >= 0))
    while len(walk):
        r = rows[walk]
        inside = (spans["start"][r] <= t[walk]) & (t[walk] <= end[r])
        walk = walk[~inside]
        rows[walk] = parent[rows[walk]]
        walk = walk[rows[walk] >= 0]
    return rows


def _nearest_starts(order, th, st, thread, t, enclosing):
    """Per point: the last slice of its thread starting at or before t
    (``enclosing``) or the first starting at or after t (else); -1 if none.
    One search over keys that put each thread's starts in a range of
    their own (times clamped to just outside it); None when the keys would
    not fit int64 (the caller loops over threads)."""
    if len(th) == 0:
        return np.full(len(t), -1, np.int64)
    first = np.flatnonzero(np.append(True, th[1:] != th[:-1]))
    lo, hi = st[first], np.maximum.reduceat(st, first)
    width = hi - lo + 3
    if float(width.astype(np.float64).sum()) >= 2.0 ** 62:
        return None
    offset = np.cumsum(width) - width
    counts = np.diff(np.append(first, len(th)))
    keys = st + np.repeat(offset - lo + 1, counts)        # thread u's starts: offset[u] + 1 ..
    # Thread rows are small integers: the point's thread range by lookup.
    lookup = np.full(int(max(th[-1], thread.max(initial=0))) + 1, -1, np.int64)
    lookup[th[first]] = np.arange(len(first))
    u = np.where(thread >= 0, lookup[np.maximum(thread, 0)], -1)
    known = u >= 0
    u = np.maximum(u, 0)
    q = offset[u] + np.clip(t, lo[u] - 1, hi[u] + 1) - lo[u] + 1
    lo_i = first[u]
    hi_i = np.append(first[1:], len(th))[u]
    # Searched in sorted order (points come in time order, so nearly sorted
    # already): the search then walks the keys instead of jumping around.
    # (Stable: timsort, cheaper on the nearly sorted q; any order of equal q
    # gives the same result.)
    by_q = np.argsort(q, kind="stable")
    enc = enclosing[by_q]
    k = np.empty(len(q), np.int64)
    k[by_q[enc]] = np.searchsorted(keys, q[by_q[enc]], side="right") - 1
    k[by_q[~enc]] = np.searchsorted(keys, q[by_q[~enc]], side="left")
    ok = known & np.where(enclosing, k >= lo_i, k < hi_i)
    return np.where(ok, order[np.clip(k, 0, len(order) - 1)], -1)


def _nearest_starts_by_thread(order, th, st, thread, t, enclosing):
    """:func:`_nearest_starts` thread by thread (any times)."""
    rows = np.full(len(t), -1, np.int64)
    for u in np.unique(thread).tolist():
        q = np.flatnonzero(thread == u)
        lo = np.searchsorted(th, u, side="left")
        hi = np.searchsorted(th, u, side="right")
        if lo == hi:
            continue
        starts = st[lo:hi]
        enc = enclosing[q]
        before = lo + np.searchsorted(starts, t[q], side="right") - 1
        after = lo + np.searchsorted(starts, t[q], side="left")
        k = np.where(enc, before, after)
        ok = np.where(enc, before >= lo, after < hi)
        rows[q] = np.where(ok, order[np.clip(k, 0, len(order) - 1)], -1)
    return rows


def _flow_keys(cols, idx, ids, span):
    """(key per flow event, keys < count, category code per event, the
    categories): keys of (cat, name, id), ``ids`` being :func:`_id_values`
    of the events' ids (< ``span``). Built from separate codes of the three
    fields, so fields holding NUL cannot make two keys one (as the text
    joined with NULs did). The keys are the codes combined when they fit in
    a few times the event count (dense ids: no hash pass), else renumbered
    densely."""
    cat, cats = _dense(_take_flat(cols.cat, idx))
    name, names = _dense(_take_flat(cols.name, idx))
    pair, npairs = cat * len(names) + name, len(cats) * len(names)
    if npairs * span <= 4 * len(idx) + 1024:
        return pair * span + ids, npairs * span, cat, cats.to_pylist()
    # pair * span + id must fit in int64 (a product that wraps makes two keys one):
    # renumber the pairs densely, then if need be the ids (both < the event count).
    if npairs * span >= 1 << 62:
        distinct, pair = first_seen(pair)
        npairs = len(distinct)
    if npairs * span >= 1 << 62:
        distinct, ids = first_seen(ids)
        span = len(distinct)
    distinct, key = first_seen(pair * span + ids)
    return key, len(distinct), cat, cats.to_pylist()


def _dense(values):
    """(index of each value in the distinct values, int64; the distinct values)."""
    enc = pc.dictionary_encode(values)
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary


def first_seen(values):
    """(distinct int64 values in order of first appearance, index of each
    value in them): a hash pass, not a sort."""
    enc = pc.dictionary_encode(pa.array(np.asarray(values, np.int64)))
    return (enc.dictionary.to_numpy(zero_copy_only=False).astype(np.int64),
            enc.indices.to_numpy(zero_copy_only=False).astype(np.int64))


def _id_values(ids):
    """(a value >= 0 per id text, the same for the same text only; span:
    all values are below it). Ids that are all canonical decimal integers
    (Kineto's, most writers') are their numbers less the smallest: the
    text -> int64 -> text round trip gives back every one, so equal
    numbers mean equal texts. Other ids are numbered by a hash of their
    text (the slower path: hashing text costs several times the numbers)."""
    if len(ids) and ids.null_count == 0:
        try:
            numbers = pc.cast(ids, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            numbers = None
        if numbers is not None and pc.all(pc.equal(pc.cast(numbers, pa.string()), ids)).as_py():
            v = numbers.to_numpy()
            lo, hi = int(v.min()), int(v.max())
            if hi - lo < 1 << 62:
                return v - lo, hi - lo + 1
    index, distinct = _dense(ids)
    return index, max(len(distinct), 1)


def _take_flat(column, rows):
    """column[rows] as one Array (columns may be chunked)."""
    out = pc.take(column, pa.array(np.asarray(rows, np.int64)))
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def _flow_kinds(cat, cats, flow_kind):
    """Link kind per flow event of category code ``cat`` (``flow_kind(cat)``,
    once per category), a string Array (no Python string per link)."""
    names = [flow_kind(c) if flow_kind else "flow" for c in cats]
    return pc.take(pa.array(names, pa.string()), pa.array(cat))


def flow_points(cols, code, ts, ident, spans, visit=None):
    """What :func:`flow_links` needs of the v1 flow points (s/t/f) that
    depends neither on the packed parents nor on the reporter, so it can be
    worked out while the lanes are packed (see chrome.build_trace): the
    points in (ts, file) order, their keys and nearest slices; ``visit``:
    :func:`~gpuviz.trace.lanes.visiting` of the spans, when already made.
    None without flows."""
    idx = np.flatnonzero(np.isin(code, (11, 12, 13)))
    if len(idx) == 0:
        return None
    by_time = np.lexsort((idx, ts[idx]))
    # Every s/t/f event is in cols.flows (sorted); all of them kept (the
    # usual case, no bad timestamps): the same list, no search.
    listed = cols.flows["index"]
    at_flow = by_time if len(listed) == len(idx) else np.searchsorted(listed, idx)[by_time]
    idx = idx[by_time]
    c = code[idx]
    t = ts[idx]
    enclosing = (c != 13) | cols.flows["bp_e"][at_flow]
    index = _slice_index(spans, visit)
    ids, span = _id_values(cols.flows["id"].cast(pa.string()))
    kid, nkeys, cat, cats = _flow_keys(cols, idx, ids[at_flow], span)
    return {"idx": idx, "c": c, "t": t, "enclosing": enclosing, "index": index, "kid": kid, "nkeys": nkeys,
            "cat": cat, "cats": cats, "nearest": _nearest(index, ident.thread_of[idx], t, enclosing)}


def flow_links(cols, code, ts, ident, reporter, spans, parent, flow_kind=None, points=None):
    """v1 flows (s/t/f) -> ``flow`` links between the slices they bind to:
    (sources, targets, kinds as a string Array).

    Keys with exactly one s and one f (Kineto's ac2g/fwdbwd) are linked
    vectorised; any other key replays its points in (ts, file) order.
    ``points``: :func:`flow_points` of the same arguments, when already made.
    """
    if points is None:
        points = flow_points(cols, code, ts, ident, spans)
    if points is None:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), pa.array([], pa.string())
    idx, c, kid, nkeys = points["idx"], points["c"], points["kid"], points["nkeys"]
    bound = _walk_up(spans, parent, points["index"], points["t"], points["enclosing"], points["nearest"].copy())
    reporter.add_mask("unbound_flow", bound < 0, idx)
    # s, t and f points per key, in one pass (11, 12, 13 -> columns 0, 1, 2).
    per_key = np.bincount(kid * 3 + (c - 11), minlength=3 * nkeys).reshape(nkeys, 3)
    count = {11: per_key[:, 0], 12: per_key[:, 1], 13: per_key[:, 2]}
    simple_key = (count[11] == 1) & (count[13] == 1) & (count[12] == 0)
    simple = simple_key[kid]
    at = np.arange(len(idx))
    s_at = np.full(nkeys, -1, np.int64)
    f_at = np.full(nkeys, -1, np.int64)
    s_at[kid[simple & (c == 11)]] = at[simple & (c == 11)]
    f_at[kid[simple & (c == 13)]] = at[simple & (c == 13)]
    keys = np.flatnonzero(simple_key)
    # Links in the order of their keys' first points (the key numbers need
    # not be in that order): each point is the first of one key at most.
    first = np.full(len(idx), -1, np.int64)
    first[np.minimum(s_at[keys], f_at[keys])] = keys
    keys = first[first >= 0]
    sp, fp = s_at[keys], f_at[keys]
    reporter.add_mask("reversed_flow", fp < sp, idx[fp])
    ok = (bound[sp] >= 0) & (bound[fp] >= 0)
    src = [bound[sp][ok]]
    dst = [bound[fp][ok]]
    cat, cat_names = points["cat"], points["cats"]
    kinds = _flow_kinds(cat[sp[ok]], cat_names, flow_kind)
    rest = ~simple
    if not reporter.strict:
        # Points of keys without any s (Kineto's f of launches profiled
        # before the trace began) link nothing: the replay would only count
        # them, one by one. (Strict mode keeps them in the replay: it must
        # raise at the same first problem.)
        orphan = rest & (count[11][kid] == 0)
        reporter.add("unmatched_flow_end", int(np.count_nonzero(orphan & (c == 13))))
        reporter.add("unmatched_flow_step", int(np.count_nonzero(orphan & (c == 12))))
        rest &= ~orphan
    replayed = np.flatnonzero(rest)
    cats = [cat_names[k] for k in cat[replayed].tolist()]
    s2, d2, k2 = _replay(replayed, idx, cats, c, kid, bound, reporter, flow_kind)
    src.append(s2)
    dst.append(d2)
    return np.concatenate(src), np.concatenate(dst), pa.concat_arrays([kinds, pa.array(k2, pa.string())])


def _replay(points, idx, cats, c, kid, bound, reporter, flow_kind):
    """The general flow rules, point by point (keys that are not one s + one f)."""
    open_flows = {}
    early_ends = {}            # key -> [(event, row, phase)] of f/t seen before any s
    src, dst, kinds = [], [], []

    def link(a, b, cat):
        if a >= 0 and b >= 0:
            src.append(a)
            dst.append(b)
            kinds.append(flow_kind(cat) if flow_kind else "flow")
    for n, p in enumerate(points.tolist()):
        i, cat, row, key, ph = int(idx[p]), cats[n], int(bound[p]), int(kid[p]), int(c[p])
        if ph == 11:
            if key in open_flows:
                reporter.add("unclosed_flow", index=open_flows[key][0])
            open_flows[key] = (i, row)
            continue
        if key not in open_flows:
            early_ends.setdefault(key, []).append((i, row, ph, cat))
            continue
        link(open_flows[key][1], row, cat)
        if ph == 13:
            del open_flows[key]
        else:
            open_flows[key] = (i, row if row >= 0 else open_flows[key][1])
    # An f earlier in time than its s (e.g. GPU clock ahead of the CPU's):
    # pair it with the s of its key that stayed open.
    for key, ends in early_ends.items():
        for i, row, ph, cat in ends:
            if ph == 13 and key in open_flows:
                reporter.add("reversed_flow", index=i)
                link(open_flows.pop(key)[1], row, cat)
            else:
                reporter.add("unmatched_flow_end" if ph == 13 else "unmatched_flow_step", index=i)
    for first, _ in open_flows.values():
        reporter.add("unclosed_flow", index=first)
    return np.array(src, np.int64), np.array(dst, np.int64), kinds


def flow_v2_links(cols, event, code, ts):
    """Slices with ``bind_id`` (or ``id``) and ``flow_out``/``flow_in``."""
    flagged = np.array([e for e, ev in cols.rare.items() if code[e] == 1 and (ev.flow_in or ev.flow_out)], np.int64)
    if len(flagged) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    row_of = {int(e): r for r, e in zip(np.flatnonzero(np.isin(event, flagged)).tolist(),
                                        event[np.isin(event, flagged)].tolist())}
    rows = [(row_of[e], e) for e in flagged.tolist() if e in row_of]
    src, dst = [], []
    out = {}
    rows.sort(key=lambda re: (int(ts[re[1]]), re[1]))
    for r, e in rows:
        ev = cols.rare[e]
        key = _raw_text(ev.bind_id if len(ev.bind_id) else ev.id)
        if ev.flow_in and key in out:
            src.append(out[key])
            dst.append(r)
        if ev.flow_out:
            out[key] = r
    return np.array(src, np.int64), np.array(dst, np.int64), ["flow"] * len(src)


def counters_table(cols, code, ts, ident, reporter):
    """C events -> one row per (event, numeric args key)."""
    rows = {"process": [], "name": [], "series": [], "ts_ns": [], "value": []}
    for i in np.flatnonzero(code == 15).tolist():
        e = cols.rare[i]
        name = e.name + (" " + _raw_text(e.id) if len(e.id) else "")
        for key, value in _args(e).items():
            number = _counter_number(value)
            if number is None:
                reporter.add("bad_counter_value", index=i)
                continue
            rows["process"].append(int(ident.pid_index[i]))
            rows["name"].append(name)
            rows["series"].append(str(key))
            rows["ts_ns"].append(int(ts[i]))
            rows["value"].append(number)
    return table("counters", rows)


def _counter_number(value):
    """A counter value as a float, or None for what is not a number (text,
    booleans, NaN) or an integer beyond the float64 range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def instants_table(cols, code, ts, ident, reporter):
    """i/I (scope g/p/t) and async n events -> instants."""
    rows = {"name": [], "category": [], "ts_ns": [], "process": [], "thread": [], "scope": []}
    for i in np.flatnonzero(np.isin(code, (6, 16, 17))).tolist():
        e = cols.rare[i]
        proc = int(ident.pid_index[i])
        if code[i] == 6:
            scope, thread = "t", ident.async_row(proc)
        else:
            scope = e.s if e.s in ("g", "p", "t") else "t"
            thread = int(ident.thread_of[i]) if scope == "t" else None
        rows["name"].append(e.name)
        rows["category"].append(e.cat)
        rows["ts_ns"].append(int(ts[i]))
        rows["process"].append(None if scope == "g" else proc)
        rows["thread"].append(thread)
        rows["scope"].append(scope)
    return table("instants", rows)
