"""Counter tracks of a TraceViewer, drawn: each track (a thread without
spans at the end of its process, :mod:`gpuviz.trace.counter_tracks`) is a
small stacked area chart of its series (values hold until the next
sample, as Chrome's and Perfetto's counter tracks do); the gutter names
the track and its peak.

The chart is queued into the overlay per frame from the tracks' sorted
arrays: O(pixel columns + samples in the window) per track in view, never
a pass over every span.
"""

from __future__ import annotations

import numpy as np

from ...trace.counter_tracks import COUNTER_KIND, CounterTrack
from .geometry import GUTTER, MODE_HIDDEN, MODE_PROCESS_COLLAPSED, ROW_HEIGHT, name_colour

__all__ = ["queue_counters", "CounterTrack", "COUNTER_KIND"]


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
