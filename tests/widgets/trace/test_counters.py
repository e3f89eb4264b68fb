"""Counter tracks: each (process, counter) of trace.counters is a one-row
area chart at the end of its process (pixels where the value is > 0, none
where it is 0, height by value), in the GPU's row layout (collapse hides it)."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.trace.model import Trace
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace.counters import COUNTER_KIND
from gpuviz.widgets.trace.geometry import GUTTER, ROW_HEIGHT, TRACKS_TOP, name_colour
from gpuviz.widgets.trace.widget import TraceViewer

W, H = 900, 520


def with_counters(trace):
    t0 = int(trace.spans.column("start_ns").to_numpy().min())
    t1 = int((trace.spans.column("start_ns").to_numpy() + trace.spans.column("duration_ns").to_numpy()).max())
    mid = (t0 + t1) // 2
    counters = pa.table({
        "process": pa.array([1, 1, 1, 0, 0], pa.uint32()),
        "name": ["memory"] * 3 + ["queue"] * 2,
        "series": ["allocated"] * 3 + ["depth"] * 2,
        "ts_ns": pa.array([t0, mid, (mid + t1) // 2, t0, (t0 + mid) // 2], pa.int64()),
        "value": [0.0, 100.0, 50.0, 5.0, 10.0]})
    return Trace(spans=trace.spans, links=trace.links, threads=trace.threads, processes=trace.processes,
                 counters=counters, instants=trace.instants), (t0, mid, t1)


@pytest.fixture(scope="module")
def viewer():
    trace, times = with_counters(synthetic(spans=400, processes=2, threads_per_process=2, seed=4))
    v = TraceViewer(trace, size=(W, H))
    v.times = times
    yield v
    v.close()


def track(v, name):
    return next(t for t in v.index.counter_tracks if t.name == name)


def track_row(v, name):
    h = v.index
    thread = track(v, name).thread
    assert h.trace.threads.column("kind")[thread].as_py() == COUNTER_KIND
    return int(v._layout().thread_row[thread])


def test_counter_area_pixels(viewer):
    v = viewer
    assert v.trace.threads.num_rows == 4  # the user's trace is not changed
    row = track_row(v, "memory")
    # the track is the last row of process 1 (after its threads' lanes)
    layout = v._layout()
    assert row == layout.process_row[1] + layout.process_height[1] - 1
    v.first_row = max(row - 5, 0)
    img = v.draw_offscreen(width=W, height=H).astype(int)
    g = v._geometry()
    y0 = float(g.y_of(row))
    rgb = np.array([int(c * 255) for c in name_colour("memory/allocated")])
    t0, mid, t1 = v.times

    def coloured(x_from, x_to, y):
        strip = img[int(y), int(x_from):int(x_to), :3]
        return float((np.abs(strip - rgb).max(axis=1) <= 24).mean())
    bottom = y0 + ROW_HEIGHT - 2
    before, after = g.x_of(t0) + 3, g.x_of(mid)
    assert coloured(max(before, GUTTER + 1), after - 3, bottom) < 0.05  # value 0: nothing drawn
    assert coloured(after + 3, g.x_of(t1) - 3, bottom) > 0.9  # value 100 then 50 (held): filled at the bottom
    # height by value: near the top only where the value is the peak (100), not where it is 50
    top = y0 + 3
    x_peak, x_half = (after + g.x_of((mid + t1) // 2)) / 2, (g.x_of((mid + t1) // 2) + g.x_of(t1)) / 2
    assert coloured(x_peak - 2, x_peak + 2, top) > 0.9
    assert coloured(x_half - 2, x_half + 2, top) == 0.0
    v.first_row = 0


def test_collapsed_process_hides_its_counter(viewer):
    v = viewer
    row = track_row(v, "queue")
    thread = track(v, "queue").thread
    assert track(v, "queue").process == 0 and v._layout().thread_height[thread] == 1
    rgb = np.array([int(c * 255) for c in name_colour("queue/depth")])

    def queue_pixels():
        img = v.draw_offscreen(width=W, height=H).astype(int)
        tracks = img[int(TRACKS_TOP):H - 20, int(GUTTER) + 1:, :3]
        return int((np.abs(tracks - rgb).max(axis=2) <= 24).sum())
    assert queue_pixels() > 1000
    v.collapse(process=0)
    assert v._layout().thread_height[thread] == 0
    assert queue_pixels() < 20
    v.expand()
    assert track_row(v, "queue") == row
    assert v.compile_count == 1
