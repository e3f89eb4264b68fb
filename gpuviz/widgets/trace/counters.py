"""Counter tracks of a TraceViewer: each (process, counter name) of
``trace.counters`` becomes a one-row track at the end of its process, drawn
as a small stacked area chart of its series (values hold until the next
sample, as Chrome's and Perfetto's counter tracks do); the gutter names
the track and its peak.

The tracks are threads without spans appended to the trace's threads table
(so the GPU frame's row layout, collapse and scrolling include them); the
chart is queued into the overlay per frame from per-track sorted arrays:
O(pixel columns + samples in the window) per track in view, never a pass
over every span.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .host import GUTTER, MODE_HIDDEN, MODE_PROCESS_COLLAPSED, ROW_HEIGHT, name_colour

__all__ = ["CounterTrack", "with_counter_tracks", "mark_counter_lanes", "queue_counters", "COUNTER_KIND"]

COUNTER_KIND = "counter"


@dataclass(frozen=True)
class CounterTrack:
    """One counter track: its thread row, process, name, and per series
    ``(ts_ns sorted, value)``; ``peak`` the largest stacked value."""

    thread: int
    process: int
    name: str
    series: tuple  # ((series name, ts int64 sorted, value float64), ...)
    peak: float


def with_counter_tracks(trace):
    """``(trace with one extra thread per counter track, [CounterTrack])``;
    the same trace object and ``[]`` without counters. Spans, their IDs and
    threads keep their rows (the new threads come after the existing ones)."""
    counters = trace.counters
    if not counters.num_rows:
        return trace, []
    from ...trace.model import Trace
    df = counters.to_pandas()
    threads = trace.threads
    base = threads.num_rows
    sort_after = int(threads.column("sort_index").to_numpy().max()) + 1 if base else 0
    tracks, rows = [], []
    for k, ((process, name), group) in enumerate(df.groupby(["process", "name"], sort=True)):
        series = []
        for label, part in group.groupby("series", sort=True):
            order = np.argsort(part["ts_ns"].to_numpy(), kind="stable")
            series.append((str(label), part["ts_ns"].to_numpy().astype(np.int64)[order],
                           part["value"].to_numpy().astype(np.float64)[order]))
        peak = _stacked_peak(series)
        tracks.append(CounterTrack(base + k, int(process), str(name), tuple(series), peak))
        rows.append((base + k, int(process), f"counter:{name}", f"{name} · max {peak:.4g}", sort_after + k,
                     COUNTER_KIND))
    extra = pa.table({field.name: pa.array([r[i] for r in rows], field.type)
                      for i, field in enumerate(threads.schema)}, schema=threads.schema)
    augmented = Trace(spans=trace.spans, links=trace.links, threads=pa.concat_tables([threads, extra]),
                      processes=trace.processes, counters=counters, instants=trace.instants, report=trace.report,
                      sources=trace.sources, metadata=trace.metadata)
    return augmented, tracks


def _stacked_peak(series) -> float:
    """The largest sum of the series' held values at any sample time (>= 0)."""
    if not series:
        return 0.0
    times = np.unique(np.concatenate([ts for _, ts, _ in series]))
    total = np.zeros(len(times))
    for _, ts, value in series:
        at = np.searchsorted(ts, times, side="right") - 1
        total += np.where(at >= 0, np.maximum(value[np.maximum(at, 0)], 0.0), 0.0)
    return float(total.max()) if len(total) else 0.0


def mark_counter_lanes(scene, tracks) -> None:
    """Give each counter track's thread one lane in the scene (it has no
    spans, so the scene counted 0): queue writes of ``scene.thread_lanes``
    before a GPUTraceFrame reads them."""
    lanes = scene.thread_lanes
    for track in tracks:
        scene.device.queue.write_buffer(lanes.buffer, lanes.byte_offset + 4 * track.thread,
                                        np.ones(1, np.uint32).tobytes())


def _column_values(ts, value, edges):
    """Held value at the start of each pixel column and the largest sample
    inside it (a spike narrower than a column still shows)."""
    at = np.searchsorted(ts, edges[:-1], side="right") - 1
    held = np.where(at >= 0, value[np.maximum(at, 0)], 0.0)
    a, b = np.searchsorted(ts, edges[0]), np.searchsorted(ts, edges[-1])
    if b > a:  # samples in the window: the largest per column
        col = np.clip(np.searchsorted(edges, ts[a:b], side="right") - 1, 0, len(edges) - 2)
        np.maximum.at(held, col, value[a:b])
    return np.maximum(held, 0.0)


def queue_counters(overlay, *, tracks, layout, geometry) -> None:
    """Queue the area charts of the counter tracks whose row is in view."""
    first, bottom = geometry.first_row, geometry.bottom
    x0, x1 = GUTTER, geometry.width
    columns = max(int(x1 - x0), 1)
    edges = geometry.window[0] + (np.arange(columns + 1) / columns) * (geometry.window[1] - geometry.window[0])
    for track in tracks:
        if layout.thread_mode[track.thread] in (MODE_PROCESS_COLLAPSED, MODE_HIDDEN):
            continue  # its process is collapsed (the summary row shows the spans' density)
        row = int(layout.thread_row[track.thread])
        top = float(geometry.y_of(row))
        if row < first or top + ROW_HEIGHT > bottom + 1:
            continue
        base = np.zeros(columns)
        height = ROW_HEIGHT - 3.0
        scale = height / track.peak if track.peak > 0 else 0.0
        lefts = x0 + np.arange(columns)
        for k, (label, ts, value) in enumerate(track.series):
            v = _column_values(ts, value, edges)
            keep = np.flatnonzero(v > 0)
            if len(keep):
                y_low = top + ROW_HEIGHT - 1 - base[keep] * scale
                rects = np.stack([lefts[keep], y_low - v[keep] * scale, lefts[keep] + 1, y_low], axis=1)
                r, g, b = name_colour(f"{track.name}/{label}")
                overlay.rects.add_many(rects, colors=np.tile((r, g, b, 0.9), (len(keep), 1)))
            base += v
