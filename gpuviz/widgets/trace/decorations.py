"""The decorations a TraceViewer draws around and over the tracks, on the CPU side:
the minimap, the time axis, the gutter of process and thread names, span
labels, instants, the links of the selection, the tooltip and the HTML
details of the selected span.

Everything is queued into a :class:`~gpuviz.render.overlay.PlotOverlay`
(logical pixels) or returned as plain data; nothing here touches the
tracks' GPU buffers.
"""

from __future__ import annotations

import html
import json
from dataclasses import replace

import numpy as np

from ...render.axes import Axis
from ...render.overlay import LINE_COLOR, MUTED_COLOR, TEXT_COLOR
from .counters import queue_counters
from .geometry import (AXIS_HEIGHT, GUTTER, MINIMAP_HEIGHT, MINIMAP_TOP, MODE_EXPANDED, MODE_HIDDEN,
                       MODE_PROCESS_COLLAPSED, PROCESS_COLUMN, ROW_HEIGHT, STATUS_HEIGHT, TRACKS_TOP, format_ns)

__all__ = ["queue_decorations", "link_segments", "span_lines", "details_html", "MINIMAP_BINS", "MIN_LABEL_PX"]

MINIMAP_BINS = 512
_GUTTER_BG = (0.11, 0.115, 0.135, 1.0)
_HEADER_BG = (0.095, 0.10, 0.12, 1.0)
_BAND = (1.0, 1.0, 1.0, 0.035)
_WINDOW = (0.35, 0.65, 1.0, 0.28)
_LINK_COLOUR = (1.0, 0.78, 0.25, 1.0)
MIN_LABEL_PX = 28.0  # logical pixels a span needs for its name
_MAX_LABELS = 4000


def _queue_gutter(overlay, index, layout, process_expanded, geometry, height):
    overlay.rect(0, TRACKS_TOP, GUTTER, height, color=_GUTTER_BG)
    first, rows = geometry.first_row, geometry.visible_rows
    prow, pheight = layout.process_row, layout.process_height
    for p in np.flatnonzero((pheight > 0) & (prow + pheight > first) & (prow < first + rows)):
        top_row, h = int(prow[p]), int(pheight[p])
        y0, y1 = float(geometry.y_of(top_row)), float(geometry.y_of(top_row + h))
        if p % 2 == 0:
            overlay.rect(GUTTER, max(y0, TRACKS_TOP), geometry.width, y1, color=_BAND)
        overlay.rect(0, max(y1 - 1, TRACKS_TOP), geometry.width, y1, color=(1, 1, 1, 0.12))
        mark = "-" if process_expanded[p] else "+"
        name = index.process_names[p] or f"pid {index.process_pids[p]}"
        ly = max(y0, TRACKS_TOP) + 2
        if ly < height - 12:
            overlay.text(f"{mark} {name}", x=4, y=ly, color=TEXT_COLOR, max_width=PROCESS_COLUMN - 6)
        if not process_expanded[p]:
            count = int(index.process_threads[p])
            overlay.text(f"{count} thread{'s' if count != 1 else ''} (summary)", x=PROCESS_COLUMN, y=ly,
                         color=MUTED_COLOR,
                         max_width=GUTTER - PROCESS_COLUMN - 4)
    trow, tmode = layout.thread_row[layout.thread_order], layout.thread_mode[layout.thread_order]
    shown = (tmode != MODE_HIDDEN) & (tmode != MODE_PROCESS_COLLAPSED) & (trow >= first) & (trow < first + rows)
    for t in layout.thread_order[shown]:
        mode, row = int(layout.thread_mode[t]), int(layout.thread_row[t])
        y = float(geometry.y_of(row)) + 2
        if y + ROW_HEIGHT - 2 > height + 1:
            continue
        mark = "-" if mode == MODE_EXPANDED and index.thread_lanes[t] > 1 else ("+" if mode != MODE_EXPANDED else " ")
        name = index.thread_names[t] or f"tid {index.thread_tids[t]}"
        overlay.text(f"{mark} {name}", x=PROCESS_COLUMN, y=y, color=MUTED_COLOR,
                     max_width=GUTTER - PROCESS_COLUMN - 4)
    overlay.rect(GUTTER - 1, TRACKS_TOP, GUTTER, height, color=LINE_COLOR)


def _queue_minimap(overlay, index, geometry, minimap, cache):
    x0, x1 = GUTTER, geometry.width - 4
    top, bottom = MINIMAP_TOP, MINIMAP_TOP + MINIMAP_HEIGHT
    overlay.rect(x0, top, x1, bottom, color=(0.13, 0.14, 0.17, 1.0))
    key = (id(overlay), overlay.pixel_ratio, x1)
    if cache.get("key") == key:  # the bars only change with the width: queue the snapped ones again
        overlay.rects.extend(cache["bars"])
    else:
        start = overlay.rects.queued_count
        peak = max(int(minimap.max()) if len(minimap) else 0, 1)
        step = (x1 - x0) / len(minimap)
        k = np.flatnonzero(minimap)
        if len(k):
            h = (bottom - top - 2) * (0.15 + 0.85 * minimap[k] / peak)
            bars = np.stack([x0 + k * step, bottom - 1 - h, x0 + (k + 1) * step, np.full(len(k), bottom - 1)],
                            axis=1)
            overlay.rects.add_many(bars, colors=np.tile((0.45, 0.55, 0.75, 0.9), (len(k), 1)))
        cache.update(key=key, bars=overlay.rects.queued(start))
    t0, t1 = index.extent
    span = max(t1 - t0, 1)
    w0 = x0 + (geometry.window[0] - t0) / span * (x1 - x0)
    w1 = x0 + (geometry.window[1] - t0) / span * (x1 - x0)
    w0, w1 = max(x0, min(w0, x1)), max(x0, min(w1, x1))
    overlay.rect(w0, top, max(w1, w0 + 2), bottom, color=_WINDOW)
    overlay.text("minimap", x=6, y=top + 6, color=MUTED_COLOR, max_width=GUTTER - 10)


def _inside(labels, lo, hi, measure, gap=6.0):
    """Centred tick labels kept within [lo, hi] (the tracks reach the
    canvas edge, so an end label would be cut): one that overhangs moves
    inside, or is dropped where it would then crowd its neighbour."""
    kept, right_of_last = [], lo - gap
    for text, x, y, anchor, max_width in labels:
        half = measure(text) / 2
        x = min(max(x, lo + half), hi - half)
        if x - half < right_of_last + gap:
            continue
        kept.append((text, x, y, anchor, max_width))
        right_of_last = x + half
    return tuple(kept)


def _queue_axis(overlay, index, geometry):
    t0 = index.extent[0]
    axis = Axis(side="top", domain=(geometry.window[0] - t0, geometry.window[1] - t0), scale="time", grid=True)
    rect = (GUTTER, TRACKS_TOP, geometry.plot_width, geometry.bottom - TRACKS_TOP)  # (x, y, w, h)
    layout = axis.layout(rect, measure=overlay.measure, line_height=overlay.line_height)
    grid = tuple(g for g in layout.grid if GUTTER + 1.5 <= g[0] <= geometry.width - 1.5)  # not on the plot's edges
    overlay.axis(replace(layout, labels=_inside(layout.labels, GUTTER, geometry.width, overlay.measure), grid=grid))
    overlay.text("time since trace start", x=6, y=TRACKS_TOP - AXIS_HEIGHT + 4, color=MUTED_COLOR,
                 max_width=GUTTER - 10)


def _queue_labels(overlay, index, layout, labels, geometry, text_dark):
    """Names inside the label spans the GPU picked (span IDs, dimmed flags:
    O(labels)), placed from the current window."""
    ids, dim = labels
    if not len(ids):
        return
    rows = index.span_rows(layout, ids=ids)
    x0 = np.maximum(geometry.x_of(index.start[ids]), GUTTER)
    x1 = np.minimum(geometry.x_of(index.end[ids]), geometry.width)
    y = geometry.y_of(rows)
    keep = np.flatnonzero((rows >= geometry.first_row) & (y + ROW_HEIGHT <= geometry.bottom + 1)
                          & (x1 - x0 >= MIN_LABEL_PX))
    if len(keep) > _MAX_LABELS:  # the widest first
        keep = keep[np.argsort(-(x1 - x0)[keep], kind="stable")[:_MAX_LABELS]]
    for k in keep:
        s = ids[k]
        if dim[k]:
            colour = (0.62, 0.63, 0.66, 1.0)  # on a dimmed rect: a muted light label
        else:
            colour = (0.06, 0.06, 0.07, 1.0) if text_dark[index.name_id[s]] else (0.97, 0.97, 0.98, 1.0)
        overlay.text(index.names[index.name_id[s]], x=float(x0[k]) + 3, y=float(y[k]) + 2, color=colour,
                     max_width=float(x1[k] - x0[k]) - 6)


def _queue_instants(overlay, index, layout, geometry, height):
    ts, threads = index.instants_in(geometry.window, limit=2000)
    for t_ns, t in zip(ts, threads):
        x = float(geometry.x_of(t_ns))
        if t < 0:
            y0, y1 = TRACKS_TOP, height  # a process or global instant: a line across the tracks
            colour = (1.0, 1.0, 1.0, 0.25)
        else:
            row = int(layout.thread_row[int(t)]) if layout.thread_mode[int(t)] != MODE_HIDDEN else -1
            if row < geometry.first_row:
                continue
            y0 = float(geometry.y_of(row))
            y1 = y0 + ROW_HEIGHT - 1
            colour = (1.0, 0.95, 0.6, 0.95)
        overlay.rect(x - 0.5, max(y0, TRACKS_TOP), x + 1.0, y1, color=colour)


def queue_decorations(overlay, *, index, layout, process_expanded, labels, geometry, minimap, text_dark,
                      hover_lines, pointer, status, counters=(), cache=None):
    """Queue the whole overlay of one frame (logical pixels): O(labels +
    rows in view + instants in the window), never a pass over every span.
    ``process_expanded``: bool per process row (the gutter's marks);
    ``labels``: (span IDs, dimmed bool) of the spans to name; ``counters``:
    the :class:`~.counters.CounterTrack` list (area charts); ``cache``: a
    dict the caller keeps between frames (the minimap's snapped bars)."""
    w, h = geometry.width, geometry.height
    overlay.clear()
    overlay.rect(0, 0, w, TRACKS_TOP, color=_HEADER_BG)
    _queue_labels(overlay, index, layout, labels, geometry, text_dark)
    if counters:
        queue_counters(overlay, tracks=counters, layout=layout, geometry=geometry)
    _queue_instants(overlay, index, layout, geometry, geometry.bottom)
    _queue_gutter(overlay, index, layout, process_expanded, geometry, geometry.bottom)
    overlay.rect(0, 0, w, TRACKS_TOP, color=_HEADER_BG)
    _queue_minimap(overlay, index, geometry, minimap, {} if cache is None else cache)
    _queue_axis(overlay, index, geometry)
    overlay.rect(0, h - STATUS_HEIGHT, w, h, color=_HEADER_BG)
    if status:
        overlay.text(status, x=6, y=h - STATUS_HEIGHT + 3, color=MUTED_COLOR, max_width=w - 12)
    if hover_lines and pointer is not None:
        overlay.tooltip(hover_lines, x=pointer[0], y=pointer[1], bounds=(0, 0, w, h))


def _centre(index, row, geometry, s):
    x0 = max(float(geometry.x_of(index.start[s])), GUTTER)
    x1 = min(float(geometry.x_of(index.end[s])), geometry.width)
    return (x0 + x1) / 2 if x1 >= x0 else x0, float(geometry.y_of(row)) + ROW_HEIGHT / 2


def link_segments(index, layout, geometry, selected) -> np.ndarray:
    """float32 (k, 8) thick segments ``(x0, y0, x1, y1, r, g, b, a)``: the
    links of the selected spans (both directions, at most 160) as lines with
    an arrow head at their target. Ends on hidden rows are skipped. Found by
    binary searches (:meth:`~gpuviz.trace.index.TraceIndex.links_of`), not a pass over the links."""
    pick = index.links_of(selected, limit=160)
    if not len(pick):
        return np.zeros((0, 8), np.float32)
    a_ids, b_ids = index.link_source[pick], index.link_target[pick]
    a_rows, b_rows = index.span_rows(layout, ids=a_ids), index.span_rows(layout, ids=b_ids)
    out = []
    for a, b, ra, rb in zip(a_ids, b_ids, a_rows, b_rows):
        if ra < 0 or rb < 0:
            continue
        (ax, ay), (bx, by) = _centre(index, ra, geometry, a), _centre(index, rb, geometry, b)
        out.append((ax, ay, bx, by, *_LINK_COLOUR))
        d = np.array([bx - ax, by - ay])
        length = float(np.hypot(*d))
        if length > 8:
            u = d / length
            for sign in (1.0, -1.0):
                c, s = np.cos(0.45), sign * np.sin(0.45)
                r = np.array([u[0] * c - u[1] * s, u[0] * s + u[1] * c])
                out.append((bx, by, bx - 9 * r[0], by - 9 * r[1], *_LINK_COLOUR))
    return np.asarray(out, np.float32).reshape(-1, 8)


def span_lines(index, s: int) -> list:
    """Tooltip lines of span ``s``: name, category, start, duration, thread, args."""
    thread = index.thread_names[index.thread[s]] or index.thread_tids[index.thread[s]]
    process = index.process_names[index.process[s]] or index.process_pids[index.process[s]]
    lines = [index.names[index.name_id[s]],
             f"category: {index.categories[index.category_id[s]] or '—'}",
             f"start: +{format_ns(index.start[s] - index.extent[0])}   duration: {format_ns(index.duration[s])}",
             f"thread: {thread} ({process})"]
    args = index.trace.spans.column("args")[int(s)].as_py()
    if args:
        text = " ".join(args.split())  # one tooltip line: Kineto's args are indented JSON
        text = text if len(text) <= 90 else text[:87] + "..."
        lines.append(f"args: {text}")
    return lines


def details_html(index, selected) -> str:
    """HTML of the selection: one span's fields, args, parent chain and links;
    for several spans their count and total duration."""
    if not len(selected):
        return "<div style='color:#888;font:12px sans-serif'>Click a span to see its details.</div>"
    esc = html.escape
    if len(selected) > 1:
        total = int(index.duration[selected].sum())
        return (f"<div style='font:12px sans-serif'><b>{len(selected):,} spans selected</b><br>"
                f"total duration {esc(format_ns(total))} — see <code>summary()</code></div>")
    s = int(selected[0])
    rows = [("name", index.names[index.name_id[s]]), ("span ID", str(s)),
            ("category", index.categories[index.category_id[s]] or "—"),
            ("start", f"+{format_ns(index.start[s] - index.extent[0])} ({index.start[s]} ns)"),
            ("duration", format_ns(index.duration[s])),
            ("thread", index.thread_names[index.thread[s]] or index.thread_tids[index.thread[s]]),
            ("process", index.process_names[index.process[s]] or index.process_pids[index.process[s]])]
    chain = index.parent_chain(s)
    if chain:
        rows.append(("parents", " ← ".join(index.names[index.name_id[p]] for p in chain)))
    links = index.links_of([s], limit=16)
    out_links = index.link_target[links[index.link_source[links] == s]]
    in_links = index.link_source[links[index.link_target[links] == s]]
    if len(out_links):
        rows.append(("links to", ", ".join(f"{index.names[index.name_id[t]]} (#{t})" for t in out_links[:8])))
    if len(in_links):
        rows.append(("linked from", ", ".join(f"{index.names[index.name_id[t]]} (#{t})" for t in in_links[:8])))
    args = index.trace.spans.column("args")[s].as_py()
    if args:
        try:
            args = json.dumps(json.loads(args), indent=1)[:2000]
        except ValueError:
            pass
        rows.append(("args", args))
    body = "".join(f"<tr><td style='color:#888;padding-right:8px;vertical-align:top'>{esc(k)}</td>"
                   f"<td style='white-space:pre-wrap'>{esc(str(v))}</td></tr>" for k, v in rows)
    return f"<table style='font:12px sans-serif;max-width:320px'>{body}</table>"
