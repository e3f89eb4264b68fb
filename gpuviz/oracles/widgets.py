"""Widget-layer oracles: DataAnalysis's views (``analysis_*``) and the numpy
model of the TraceViewer ``tracks`` node (gpuviz/widgets/trace/shaders/tracks.wgsl,
``tracks_picture``): the colour and span ID of every pixel of a frame's
render-size corner.

The tracks model uses the same float32 arithmetic as the shader, step by step: a rect covers
the pixels whose centres lie in ``[x0, x1) x [y0, y1)``; per (layout row,
pixel column) cell a span wins over a merged run over a density run, and
among spans the later visible one (the draw order of the old instanced
rects). Colours come out as float32 before the 8-bit conversion, so a
comparison allows one unit of rounding there; span IDs are exact. Where
the GPU may fuse a multiply-add, a result equal to a pixel centre can land
on either side: tests use exact (power-of-two) scales.

For tests and benchmarks; plain vectorised numpy, not fast.
"""

from __future__ import annotations

import numpy as np

from ..render.picking import NO_ID

__all__ = ["tracks_picture", "trace_graph_tracks", "check_trace_graph_tracks", "analysis_selected", "analysis_grid",
           "analysis_groups"]

F = np.float32
DENSITY = np.array([0.42, 0.58, 0.86], F)
SEARCH, FOCUS = 2, 8  # graph.VIEW_FLAGS


def _delta_f32(a, b):
    """trace_time_delta_f32: (a - b) as float32 from 64-bit integers."""
    d = (np.asarray(a, np.uint64) - np.asarray(b, np.uint64)).astype(np.uint64)
    negative = (d >> np.uint64(63)) != 0
    m = np.where(negative, (~d + np.uint64(1)).astype(np.uint64), d)
    hi, lo = (m >> np.uint64(32)).astype(F), (m & np.uint64(0xFFFFFFFF)).astype(F)
    v = hi * F(4294967296.0) + lo
    return np.where(negative, -v, v).astype(F)


def _mix(a, b, t):
    t = F(t)
    return (a * (F(1) - t) + b * t).astype(F)


def tracks_picture(*, view: dict, render_size, cell_rows: int, cols: int, background, name_colours, spans,
                   span_ids, time_origin: int, frame, thread_row, selection=(), search=None):
    """The tracks' pixels: ``(rgb float32 (h, w, 3), ids uint32 (h, w))``.

    Parameters
    ----------
    view : dict
        :attr:`TraceGraph.view_fields` (what :meth:`TraceGraph.write_view` wrote).
    render_size : (int, int)
    cell_rows, cols : int
        The cells' rows (from the first shown one) and columns.
    background : rgb floats
    name_colours : numpy uint32, rgba8 per scene name ID
    spans : TraceViewOracle
        Scene-row columns: ``start`` (absolute ns), ``duration``, ``thread``,
        ``lane``, ``name`` (scene name ID).
    span_ids : numpy, the span ID of each scene row (``GPUTraceScene.span_ids``)
    time_origin : int, the scene's time origin (ns)
    frame : OracleFrame
        The frame's drawn rows, merged and density runs, focus and stats.
    thread_row : numpy, first layout row per thread (the frame's layout)
    selection : span IDs
    search : bool per scene name, or None
    """
    w, h = (int(v) for v in render_size)
    bg = np.asarray(background, F)
    fx, fy = F(w), F(h)
    gutter, top, rh, bottom = (F(view[k]) for k in ("gutter", "top", "row_height", "bottom"))
    ppn, scale, column_px = F(view["px_per_ns"]), F(view["scale"]), F(view["column_px"])
    first = int(view["first_row"])
    gap = max(F(1), np.floor(scale))
    origin = np.uint64(int(view["origin_rel"]) & ((1 << 64) - 1))

    def y_of(row):
        y0 = (top + (np.asarray(row).astype(F) - F(first)) * rh).astype(F)
        return y0, np.minimum((y0 + rh - gap).astype(F), bottom)

    # ------------------------------------------------------------ records
    drawn = np.asarray(frame.drawn, np.int64)
    start = (spans.start[drawn] - int(time_origin)).astype(np.uint64)
    duration = spans.duration[drawn].astype(np.uint64)
    end = start + duration + (duration == 0).astype(np.uint64)
    x0 = (gutter + _delta_f32(start, origin) * ppn).astype(F)
    x1 = (gutter + _delta_f32(end, origin) * ppn).astype(F)
    x0 = np.clip(x0, gutter, fx - F(1))
    x1 = np.maximum(np.clip(x1, gutter, fx), (x0 + F(1)).astype(F))
    span_row = thread_row[spans.thread[drawn]].astype(np.int64) + spans.lane[drawn]

    def run_x(runs):
        r0 = (gutter + runs[:, 1].astype(F) * column_px).astype(F)
        r1 = np.maximum((gutter + runs[:, 2].astype(F) * column_px).astype(F), (r0 + F(1)).astype(F))
        return r0, np.minimum(r1, fx)

    merged = np.asarray(frame.merged, np.int64).reshape(-1, 4)
    density = np.asarray(frame.density, np.int64).reshape(-1, 4)
    kinds = [(3, span_row, x0, x1), (2, merged[:, 0], *run_x(merged)), (1, density[:, 0], *run_x(density))]

    # --------------------------------------------------------- the cells
    cells = np.zeros(cell_rows * cols, np.int64)
    limit = min(w, cols)
    for kind, row, a, b in kinds:
        index = np.arange(len(row))
        y0, y1 = y_of(row)
        keep = (row >= first) & (row - first < cell_rows) & (y0 < bottom) & (y1 > y0)
        p0 = np.maximum(np.ceil(a - F(0.5)).astype(np.int64), 0)
        p1 = np.minimum(np.ceil(b - F(0.5)).astype(np.int64), limit)
        keep &= p1 > p0
        lengths = (p1 - p0)[keep]
        base = ((row - first) * cols + p0)[keep]
        at = np.repeat(base, lengths) + (np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths))
        np.maximum.at(cells, at, np.repeat((kind << 30) | index[keep], lengths))
    cells = cells.reshape(cell_rows, cols)

    # ---------------------------------------------------------- per pixel
    rgb = np.broadcast_to(bg, (h, w, 3)).astype(F)
    ids = np.full((h, w), NO_ID, np.uint32)
    py = np.arange(h, dtype=F) + F(0.5)
    slot_of = np.full(h, -1, np.int64)
    ry0, ry1 = y_of(first + np.arange(cell_rows))
    for slot in range(cell_rows):
        slot_of[(py >= ry0[slot]) & (py < ry1[slot]) & (py >= top) & (py < bottom)] = slot
    ys = np.flatnonzero(slot_of >= 0)
    if not len(ys):
        return rgb, ids
    c = cells[slot_of[ys]][:, :w]  # (rows of pixels, w)
    kind, index = c >> 30, c & 0x3FFFFFFF
    yy, xx = np.nonzero(kind > 0)
    k, idx = kind[yy, xx], index[yy, xx]
    y, x = ys[yy], xx
    p = np.stack([x.astype(F) + F(0.5), y.astype(F) + F(0.5)], 1)
    y0, y1 = ry0[slot_of[y]], ry1[slot_of[y]]

    def name_rgb(names):
        col = name_colours[names].astype(np.int64)
        out = (np.stack([col & 255, (col >> 8) & 255, (col >> 16) & 255], 1).astype(F) / F(255)).astype(F)
        if view["flags"] & SEARCH and search is not None:
            dim = ~np.asarray(search, bool)[names]
            out[dim] = _mix(out[dim], bg, 0.75)
        return out

    out = np.zeros((len(k), 3), F)
    out_ids = np.full(len(k), NO_ID, np.uint32)
    s = k == 3  # spans
    if s.any():
        kk = idx[s]
        rows = drawn[kk]
        col = name_rgb(spans.name[rows])
        if view["flags"] & FOCUS:
            dim = np.asarray(frame.focus)[rows] == 0
            col[dim] = _mix(col[dim], bg, 0.8)
        span_id = np.asarray(span_ids)[rows].astype(np.int64)
        hover = span_id == (NO_ID if view["hover"] is None else int(view["hover"]))
        col[hover] = _mix(col[hover], np.ones(3, F), 0.25)
        chosen = np.isin(span_id, np.asarray(selection, np.int64))
        if chosen.any():
            lx = (p[s, 0] - x0[kk]).astype(F)
            ly = (p[s, 1] - y0[s]).astype(F)
            sx, sy = (x1[kk] - x0[kk]).astype(F), (y1[s] - y0[s]).astype(F)
            edge = np.minimum(np.minimum(lx, sx - lx), np.minimum(ly, sy - ly))
            ring = chosen & (edge <= F(1.5) * scale)
            col[chosen] = _mix(col[chosen], np.ones(3, F), 0.15)
            col[ring] = 1.0
        out[s], out_ids[s] = col, span_id.astype(np.uint32)
    m = k == 2
    out[m] = (name_rgb(merged[idx[m], 3]) * F(0.92)).astype(F)
    d = k == 1
    if d.any():
        peak = F(max(int(frame.stats["density_max"]), 1))
        bar = ((rh - gap) * (F(0.15) + F(0.85) * density[idx[d], 3].astype(F) / peak)).astype(F)
        on = p[d, 1] >= (y1[d] - bar)
        out[d] = np.where(on[:, None], DENSITY, bg)
    rgb[y, x], ids[y, x] = out, out_ids
    return rgb, ids


def trace_graph_tracks(graph, oracle, frame, state, *, selection=()):
    """:func:`tracks_picture` of a TraceGraph's last written view: ``oracle``
    a TraceViewOracle of the graph's scene, ``frame`` its OracleFrame of
    ``state``; returns ``(rgb float32, ids uint32)``."""
    from ..widgets.trace.graph import BACKGROUND  # the Jupyter stack only when a TraceGraph exists

    return tracks_picture(
        view=graph.view_fields, render_size=graph.render_size, cell_rows=graph.cell_rows, cols=graph.frame_size[0],
        background=BACKGROUND, name_colours=graph.colours, spans=oracle, span_ids=graph.scene.span_ids,
        time_origin=graph.scene.time_origin_ns, frame=frame, thread_row=graph.frame.layout(state).thread_row,
        selection=selection, search=state.search)


def check_trace_graph_tracks(graph, oracle, frame, state):
    """None when a TraceGraph's last frame's tracks pixels (colour within one
    8-bit unit, span IDs exact) equal :func:`trace_graph_tracks`'s, else what
    differs (``frame``: the TraceViewOracle's OracleFrame of ``state``).
    Reads the frame back: tests and benchmarks only."""
    colour, ids = graph.read_tracks()
    rgb, want_ids = trace_graph_tracks(graph, oracle, frame, state)
    wrong_ids = int((ids != want_ids).sum())
    want = np.round(np.clip(rgb, 0, 1) * 255).astype(np.int16)
    wrong_colours = int((np.abs(colour[..., :3].astype(np.int16) - want).max(axis=2) > 1).sum())
    if wrong_ids or wrong_colours:
        return f"tracks: {wrong_ids} span IDs and {wrong_colours} colours of {ids.size} pixels differ"
    return None


def analysis_selected(columns, value, value_range):
    """DataAnalysis's value-range mask: rows whose ``value`` column is finite
    and inside the float32 ``value_range`` (both ends included)."""
    v = columns[value]
    lo, hi = np.float32(value_range[0]), np.float32(value_range[1])
    with np.errstate(invalid="ignore"):
        return np.isfinite(v) & (v >= lo) & (v <= hi)


def analysis_grid(columns, *, x, y, value, value_range, bounds, operation, grid_size):
    """DataAnalysis's heatmap, (rows, columns) float64 with NaN in empty
    cells, cells computed in float32 as the shader does (exact for bounds
    whose extent is a power of two; elsewhere a division may round a point
    on a cell edge into its neighbour). ``columns``: name -> numpy array."""
    w, h = grid_size
    px, py, v = columns[x], columns[y], columns[value]
    x0, y0, x1, y1 = (np.float32(b) for b in bounds)
    ok = analysis_selected(columns, value, value_range) & (px >= x0) & (px <= x1) & (py >= y0) & (py <= y1)
    i = np.minimum(np.floor((px[ok] - x0) / (x1 - x0) * np.float32(w)).astype(np.int64), w - 1)
    j = np.minimum(np.floor((py[ok] - y0) / (y1 - y0) * np.float32(h)).astype(np.int64), h - 1)
    cell, vals = j * w + i, v[ok].astype(np.float64)
    count = np.bincount(cell, minlength=w * h).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {"count": count, "sum": np.bincount(cell, vals, w * h)}
        out["mean"] = out["sum"] / count
    out["min"] = np.full(w * h, np.inf)
    out["max"] = np.full(w * h, -np.inf)
    np.minimum.at(out["min"], cell, vals)
    np.maximum.at(out["max"], cell, vals)
    return np.where(count > 0, out[operation], np.nan).reshape(h, w)


def analysis_groups(columns, *, group, value, value_range):
    """DataAnalysis's bars: ``(labels, counts, means, overflow)`` of the
    selected rows per label of the ``group`` column (sorted; None is not a
    label: its rows are the overflow)."""
    labels_of, v = columns[group], columns[value]
    ok = analysis_selected(columns, value, value_range)
    labels = sorted({p for p in labels_of if p is not None})
    counts = np.array([np.sum(ok & (labels_of == label)) for label in labels])
    means = np.array([v[ok & (labels_of == label)].astype(np.float64).mean() for label in labels])
    overflow = int(np.sum(ok & np.array([p is None for p in labels_of])))
    return labels, counts, means, overflow
