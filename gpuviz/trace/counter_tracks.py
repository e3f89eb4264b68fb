"""Counter tracks of a trace: each (process, counter name) of
``trace.counters`` becomes one thread without spans, appended to the
threads table, so a view's row layout, collapse and scrolling include it.

:func:`with_counter_tracks` returns the trace with those threads and one
:class:`CounterTrack` per track (its series as sorted numpy arrays); a
:class:`~gpuviz.trace.index.TraceIndex` built with counter tracks gives each
such thread one lane. Drawing the tracks is the viewer's
(:mod:`gpuviz.widgets.trace.counters`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["CounterTrack", "with_counter_tracks", "COUNTER_KIND"]

#: ``threads.kind`` of a counter track's thread.
COUNTER_KIND = "counter"


@dataclass(frozen=True)
class CounterTrack:
    """One counter track: its thread row, process, name, and per series
    ``(series name, ts_ns sorted, value)``; ``peak`` the largest stacked value."""

    thread: int
    process: int
    name: str
    series: tuple  # ((series name, ts int64 sorted, value float64), ...)
    peak: float


def with_counter_tracks(trace):
    """``(trace with one extra thread per counter track, (CounterTrack, ...))``;
    the same trace object and ``()`` without counters. Spans, their IDs and
    threads keep their rows (the new threads come after the existing ones)."""
    counters = trace.counters
    if not counters.num_rows:
        return trace, ()
    from .model import Trace
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
    return augmented, tuple(tracks)


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
