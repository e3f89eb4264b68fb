"""Trace-layer oracles: :class:`TraceViewOracle`, what a GPUTraceFrame must
produce, in numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from ..trace.interaction.frame import STATS
from ..trace.interaction.state import column_bounds
from ..trace.scene import NO_PARENT, RECORD_WORDS

__all__ = ["TraceViewOracle", "OracleFrame", "pack_lanes_reference", "scene_records", "scene_csrs",
           "scene_tables_by_loops"]


@dataclass(frozen=True)
class OracleFrame:
    """The expected outputs of one frame.

    Attributes
    ----------
    visible : numpy uint32
        Scene rows passing every test (window, rows, filters, focus "hide"), ascending.
    drawn : numpy uint32
        Of those, the rows drawn one by one (2+ pixel columns), ascending: ``visible_rows``.
    merged : numpy uint32 (k, 4)
        ``(row, x0, x1, name)`` runs, sorted by (row, x0).
    density : numpy uint32 (k, 4)
        ``(row, x0, x1, count)`` runs of collapsed-process summary rows, sorted.
    minimap : numpy uint32 (bins,)
    focus : numpy uint32 per row (0/1)
    stats : dict of int (keys of :data:`~gpuviz.trace.interaction.frame.STATS`)
    shown, anchors : numpy uint32 per row
    edges : numpy uint32 (k, 4), sorted by link ID
    """

    visible: np.ndarray
    drawn: np.ndarray
    merged: np.ndarray
    density: np.ndarray
    minimap: np.ndarray
    focus: np.ndarray
    stats: dict
    shown: np.ndarray
    anchors: np.ndarray
    edges: np.ndarray


class TraceViewOracle:
    """numpy model of :class:`~gpuviz.trace.interaction.frame.GPUTraceFrame`.

    Parameters
    ----------
    frame : GPUTraceFrame
        Supplies the scene's row order, dense IDs, layout rules and capacities.
    trace : gpuviz.trace.Trace

    Notes
    -----
    Copies the span columns into numpy in scene-row order once (about 40
    bytes per span). :meth:`frame` is a plain vectorised model for tests and
    benchmarks, not fast; does not touch the GPU.
    """

    def __init__(self, frame, trace):
        scene = frame.scene
        self.frame_ = frame
        rows = scene.span_ids  # trace row of each scene row
        spans = trace.spans

        def col(name, dtype):
            return spans.column(name).to_numpy().astype(dtype)[rows]

        self.start = col("start_ns", np.int64)
        self.duration = col("duration_ns", np.int64)
        self.thread = col("thread", np.int64)
        self.lane = col("lane", np.int64)
        self.process = col("process", np.int64)
        self.name = pc.index_in(spans.column("name"), value_set=scene.names).to_numpy().astype(np.int64)[rows]
        self.category = pc.index_in(spans.column("category"),
                                    value_set=scene.categories).to_numpy().astype(np.int64)[rows]
        row_of_id = np.empty(len(rows), np.int64)
        row_of_id[rows] = np.arange(len(rows))
        self.row_of_id = row_of_id
        links = trace.links
        parent = spans.column("parent").to_numpy().astype(np.int64)[rows]
        self.parent = np.where(parent >= 0, row_of_id[np.maximum(parent, 0)], -1)
        self.link_source = row_of_id[links.column("source").to_numpy().astype(np.int64)]
        self.link_target = row_of_id[links.column("target").to_numpy().astype(np.int64)]
        self.minimap_bounds = column_bounds((0, max(frame.extent_ns, frame.minimap_bins)), frame.minimap_bins)

    def focus(self, seeds, depth) -> np.ndarray:
        """0/1 uint32 per row: within ``depth`` link hops of a seed row, either direction."""
        n = len(self.start)
        mask = np.zeros(n, np.uint32)
        frontier = np.unique(np.asarray(seeds, np.int64))
        if len(frontier) == 0:
            return mask
        mask[frontier] = 1
        src = np.concatenate([self.link_source, self.link_target])
        dst = np.concatenate([self.link_target, self.link_source])
        for _ in range(depth):
            reached = dst[np.isin(src, frontier)]
            frontier = np.unique(reached[mask[reached] == 0])
            if len(frontier) == 0:
                break
            mask[frontier] = 1
        return mask

    def frame(self, state) -> OracleFrame:
        """Expected outputs of ``state``."""
        f = self.frame_
        layout = f.layout(state)
        w0, w1 = (int(v) for v in state.window)
        span, width = w1 - w0, int(state.width)
        first, count = (int(v) for v in state.rows)
        seeds = self.row_of_id[np.asarray(list(state.focus_seeds), np.int64)] if len(state.focus_seeds) else []
        focus = self.focus(seeds, int(state.focus_depth))
        keep = self.duration >= int(state.min_duration_ns)
        if state.categories is not None:
            keep &= np.asarray(state.categories)[self.category]
        matches = np.zeros(len(keep), bool) if state.search is None else np.asarray(state.search)[self.name]
        if state.search is not None and state.search_mode == "filter":
            keep &= matches
        if len(seeds) and state.focus_mode == "hide":
            keep &= focus != 0
        minimap = self._minimap(keep)
        rs = self.start - w0
        re = rs + np.maximum(self.duration, 1)
        # Only the rows passing the filters and overlapping the window matter
        # from here on (the rest are hidden): work on their indices.
        idx = np.flatnonzero(keep & (rs < span) & (re > 0))
        rs, re = rs[idx], re[idx]
        cols = column_bounds((0, span), width)[:-1]
        c0 = np.searchsorted(cols, np.maximum(rs, 0), side="right") - 1
        c1 = np.searchsorted(cols, np.minimum(re, span) - 1, side="right") - 1
        pexp, texp = np.asarray(state.process_expanded, bool), np.asarray(state.thread_expanded, bool)
        thread, lane = self.thread[idx], self.lane[idx]
        expanded = pexp[self.process[idx]]
        row = layout.thread_row[thread].astype(np.int64) + np.where(expanded, lane, 0)
        ok = (row >= first) & (row - first < count) & ~(expanded & ~texp[thread] & (lane != 0))
        idx, c0, c1, expanded, row = idx[ok], c0[ok], c1[ok], expanded[ok], row[ok]
        collapsed = ~expanded
        merged = expanded & (c0 == c1)
        drawn = expanded & (c0 != c1)
        cells = np.zeros((max(count, 1), width), np.int64)
        np.maximum.at(cells, (row[merged] - first, c0[merged]), self.name[idx[merged]] + 1)
        density = np.zeros((max(count, 1), width), np.int64)
        lengths = (c1 - c0 + 1)[collapsed]
        cover_rows = np.repeat(row[collapsed] - first, lengths)
        cover_cols = np.repeat(c0[collapsed], lengths) + _ramps(lengths)
        np.add.at(density, (cover_rows, cover_cols), 1)
        merged_runs = _runs(cells, first)
        merged_runs[:, 3] -= 1
        density_runs = _runs(density, first)
        visible = idx[expanded]
        stats = {"visible": len(visible), "drawn": int(drawn.sum()), "merged": int(merged.sum()),
                 "search_matches": int(matches[visible].sum()), "collapsed": int(collapsed.sum()),
                 "density_max": int(density.max(initial=0)), "merged_records": len(merged_runs),
                 "density_records": len(density_runs), "minimap_max": int(minimap.max(initial=0)),
                 "focused": int(focus.sum())}
        assert set(stats) == set(STATS)
        # hidden rows: 0 in an open process, 3 in a collapsed one; kept rows: 1 drawn or merged, 2 in a density
        shown = np.where(pexp[self.process], 0, 3).astype(np.uint32)
        shown[visible] = 1
        shown[idx[collapsed]] = 2
        anchors = self.anchors(shown != 0)
        return OracleFrame(visible.astype(np.uint32), idx[drawn].astype(np.uint32),
                           merged_runs, density_runs, minimap, focus, stats, shown, anchors,
                           self.edges(shown, anchors))

    def anchors(self, shown) -> np.ndarray:
        """uint32 per row: itself when shown, else its closest shown ancestor
        within the frame's ``edge_depth`` parent steps (0xFFFFFFFF: none)."""
        out = np.full(len(shown), 0xFFFFFFFF, np.uint32)
        out[shown] = np.flatnonzero(shown)
        rows = np.flatnonzero(~shown)  # still looking, and where each one's climb is
        at = rows.copy()
        for _ in range(self.frame_.edge_depth):
            if len(rows) == 0:
                break
            at = self.parent[at]
            alive = at >= 0
            rows, at = rows[alive], at[alive]
            hit = shown[at]
            out[rows[hit]] = at[hit]
            rows, at = rows[~hit], at[~hit]
        return out

    def _minimap(self, keep) -> np.ndarray:
        """Bins of the starts of the rows in ``keep`` (cached: it depends on the filters only)."""
        key = np.packbits(keep).tobytes()
        if getattr(self, "_minimap_key", None) != key:
            rel = self.start[keep] - self.frame_.scene.time_origin_ns
            bins = np.searchsorted(self.minimap_bounds[:-1], rel, side="right") - 1
            self._minimap_value = np.bincount(np.clip(bins, 0, self.frame_.minimap_bins - 1),
                                              minlength=self.frame_.minimap_bins).astype(np.uint32)
            self._minimap_key = key
        return self._minimap_value.copy()

    def edges(self, shown, anchors) -> np.ndarray:
        """(source point, target point, link ID, flags) of the kept links, by link ID."""
        ends = []
        for rows in (self.link_source, self.link_target):
            code = shown[rows]
            summary = code >= 2
            point = np.where(summary | (code == 1), rows, anchors[rows].astype(np.int64))
            ends.append((point, summary, code != 3, point != 0xFFFFFFFF))
        (a, sa, va, ra), (b, sb, vb, rb) = ends
        keep = ra & rb & (va | vb) & ~(~sa & ~sb & (a == b))
        link = np.arange(len(a))
        return np.stack([a[keep], b[keep], link[keep], sa[keep] | (sb[keep] << 1)], 1).astype(np.uint32)


def _ramps(lengths) -> np.ndarray:
    """0..k-1 for each k of ``lengths``, concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total) - starts


def _runs(cells, first) -> np.ndarray:
    """(row, x0, x1, value) uint32 runs of equal non-zero values per row, sorted."""
    rows, width = cells.shape
    out = []
    for r in range(rows):
        v = cells[r]
        change = np.ones(width, bool)
        change[1:] = v[1:] != v[:-1]
        starts = np.flatnonzero(change & (v != 0))
        bounds = np.flatnonzero(change)
        ends = np.append(bounds, width)[np.searchsorted(bounds, starts, side="right")]
        out.extend(zip([first + r] * len(starts), starts, ends, v[starts]))
    return np.array(out, np.uint32).reshape(-1, 4)


def pack_lanes_reference(*, start, duration, thread):
    """The packing of :func:`gpuviz.trace.lanes.pack_lanes` (its module
    docstring states the rules), by the plain greedy sweep over whole threads:
    ``(lane, depth, parent, lanes added)``. Slow; for tests. Shares no code
    with the vectorised path."""
    start = np.asarray(start, np.int64)
    duration = np.asarray(duration, np.int64)
    thread = np.asarray(thread, np.int64)
    n = len(start)
    lane = np.zeros(n, np.uint32)
    depth = np.zeros(n, np.uint32)
    parent = np.full(n, -1, np.int64)
    added = 0
    for t in np.unique(thread):
        rows = np.flatnonzero(thread == t)
        rows = rows[np.lexsort((-duration[rows], start[rows]))]
        tr, dep, par = _greedy_tracks(start[rows].tolist(), (start[rows] + duration[rows]).tolist())
        heights = [int(dep[tr == k].max()) + 1 for k in range(int(tr.max()) + 1)]
        offsets = np.concatenate([[0], np.cumsum(heights)[:-1]])
        lane[rows] = offsets[tr] + dep
        depth[rows] = dep
        parent[rows] = np.where(par >= 0, rows[np.maximum(par, 0)], -1)
        added += sum(heights[1:])
    return lane, depth, parent, added


def _greedy_tracks(start, end):
    """Greedy tracks for one cluster (arrays already in visiting order).

    Returns (track, depth, parent_position) with positions inside the cluster.
    """
    tracks = []        # per track: list of (end, position)
    out_track = np.empty(len(start), np.int64)
    out_depth = np.empty(len(start), np.int64)
    out_parent = np.empty(len(start), np.int64)
    for i in range(len(start)):
        s = start[i]
        e = end[i]
        for t, stack in enumerate(tracks):
            while stack and stack[-1][0] <= s:
                stack.pop()
            if not stack or e <= stack[-1][0]:
                break
        else:
            t = len(tracks)
            stack = []
            tracks.append(stack)
        out_track[i] = t
        out_depth[i] = len(stack)
        out_parent[i] = stack[-1][1] if stack else -1
        stack.append((e, i))
    return out_track, out_depth, out_parent


def _first_appearance_ids(strings):
    ids = {}
    return np.asarray([ids.setdefault(s, len(ids)) for s in strings], np.uint32)


def scene_records(trace):
    """GPUTraceScene's (rows, 12) uint32 span records, as the module docstring
    of gpuviz.trace.scene defines them, one whole-column expression per word
    (no blocks, chunks or threads)."""
    spans = trace.spans
    n = spans.num_rows

    def col(name):
        return spans.column(name).to_numpy()

    partition = col("partition").astype(np.int64)
    order = np.argsort(partition, kind="stable")  # scene row -> span ID
    row_of = np.empty(n, np.int64)
    row_of[order] = np.arange(n)
    start, duration = col("start_ns"), col("duration_ns")
    origin = int(start.min()) if n else 0
    rel = (start - origin).astype(np.uint64)  # exact: origin is the minimum
    dur = duration.astype(np.uint64)
    parent = col("parent")
    parent_row = np.where(parent >= 0, row_of[np.maximum(parent, 0)], -1)  # per span ID
    has_children = np.isin(row_of, parent_row[parent_row >= 0])
    links_out = np.isin(row_of, row_of[trace.links.column("source").to_numpy().astype(np.int64)])
    links_in = np.isin(row_of, row_of[trace.links.column("target").to_numpy().astype(np.int64)])
    flags = (col("incomplete").astype(np.int64) * 1 + spans.column("args").is_valid().to_numpy() * 2
             + (parent < 0) * 4 + has_children * 8 + links_out * 16 + links_in * 32 + (duration == 0) * 64)
    words = np.zeros((n, RECORD_WORDS), np.uint64)  # per span ID, reordered to rows at the end
    words[:, 0], words[:, 1] = rel & 0xFFFFFFFF, rel >> np.uint64(32)
    words[:, 2], words[:, 3] = dur & 0xFFFFFFFF, dur >> np.uint64(32)
    for word, name in ((4, "lane"), (5, "thread"), (6, "process"), (7, "depth")):
        words[:, word] = col(name)
    words[:, 8] = _first_appearance_ids(spans.column("name").to_pylist())
    words[:, 9] = _first_appearance_ids(spans.column("category").to_pylist())
    words[:, 10] = flags + (partition << 8)
    words[:, 11] = np.arange(n)
    assert n == 0 or words.max() < 2**32
    return words[order].astype(np.uint32)


def scene_csrs(trace):
    """GPUTraceScene's four CSRs (links forward and reverse, hierarchy forward
    and reverse), each ``(local offsets, neighbors, edges, partition starts)``,
    by stable argsorts."""
    spans, n = trace.spans, trace.spans.num_rows
    order = np.argsort(spans.column("partition").to_numpy(), kind="stable")
    row_of = np.empty(n, np.int64)
    row_of[order] = np.arange(n)
    partition = spans.column("partition").to_numpy()[order].astype(np.int64)
    parts = max(1, len(trace.sources), int(partition.max()) + 1 if n else 0,
                int(trace.processes.column("partition").to_numpy().max()) + 1)
    bounds = np.searchsorted(partition, np.arange(parts + 1))
    parent = spans.column("parent").to_numpy()[order]
    parent_row = np.where(parent >= 0, row_of[np.maximum(parent, 0)], -1)
    src = row_of[trace.links.column("source").to_numpy().astype(np.int64)]
    dst = row_of[trace.links.column("target").to_numpy().astype(np.int64)]
    child = np.flatnonzero(parent_row >= 0)

    def csr(keys, values, with_edges):
        by_key = np.argsort(keys, kind="stable")
        offsets = np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=n))]).astype(np.int64)
        local = np.concatenate([offsets[a:b + 1] - offsets[a] for a, b in zip(bounds, bounds[1:])])
        return local, values[by_key], by_key if with_edges else None, offsets[bounds]

    return {"links_forward": csr(src, dst, True), "links_reverse": csr(dst, src, True),
            "hierarchy_reverse": csr(parent_row[child], child, False),
            "hierarchy_forward": csr(child, parent_row[child], False)}


#: GPUTraceScene's record flag bits (word 10, low byte).
SCENE_FLAG_BITS = {"incomplete": 1, "args": 2, "root": 4, "children": 8, "out": 16, "in": 32, "zero": 64}


def scene_tables_by_loops(trace):
    """GPUTraceScene's tables computed with plain Python loops over the Arrow
    rows: row order, partition bounds, time origin, name and category lists,
    parent rows, records, children and link adjacency (slow; small traces)."""
    spans = trace.spans.to_pylist()
    links = trace.links.to_pylist()
    parts = max([len(trace.sources), 1] + [s["partition"] + 1 for s in spans] +
                [p + 1 for p in trace.processes.column("partition").to_pylist()])
    order = [s["id"] for p in range(parts) for s in spans if s["partition"] == p]  # row -> id
    row = {span_id: r for r, span_id in enumerate(order)}
    bounds = [0]
    for p in range(parts):
        bounds.append(bounds[-1] + sum(1 for s in spans if s["partition"] == p))
    origin = min((s["start_ns"] for s in spans), default=0)
    names, cats = [], []
    for s in spans:
        if s["name"] not in names:
            names.append(s["name"])
        if s["category"] not in cats:
            cats.append(s["category"])
    children = {r: [] for r in range(len(spans))}
    parent_row = []
    for r, span_id in enumerate(order):
        p = spans[span_id]["parent"]
        parent_row.append(NO_PARENT if p < 0 else row[p])
    for r, p in enumerate(parent_row):
        if p != NO_PARENT:
            children[p].append(r)
    out_links = {r: [] for r in range(len(spans))}
    in_links = {r: [] for r in range(len(spans))}
    for i, link in enumerate(links):
        out_links[row[link["source"]]].append((row[link["target"]], i))
        in_links[row[link["target"]]].append((row[link["source"]], i))
    records = []
    for r, span_id in enumerate(order):
        s = spans[span_id]
        rel, dur = s["start_ns"] - origin, s["duration_ns"]
        flags = ((SCENE_FLAG_BITS["incomplete"] if s["incomplete"] else 0) | (SCENE_FLAG_BITS["args"] if s["args"] else 0)
                 | (SCENE_FLAG_BITS["root"] if parent_row[r] == NO_PARENT else 0)
                 | (SCENE_FLAG_BITS["children"] if children[r] else 0) | (SCENE_FLAG_BITS["out"] if out_links[r] else 0)
                 | (SCENE_FLAG_BITS["in"] if in_links[r] else 0) | (SCENE_FLAG_BITS["zero"] if dur == 0 else 0))
        records.append([rel % 2**32, rel >> 32, dur % 2**32, dur >> 32, s["lane"], s["thread"], s["process"],
                        s["depth"], names.index(s["name"]), cats.index(s["category"]),
                        flags | s["partition"] << 8, span_id])
    return dict(order=order, bounds=bounds, origin=origin, names=names, cats=cats, parents=parent_row,
                records=np.asarray(records, np.uint32).reshape(-1, RECORD_WORDS), children=children,
                parent_adj={r: [] if p == NO_PARENT else [p] for r, p in enumerate(parent_row)},
                out_links=out_links, in_links=in_links, links=links, row=row)
