"""TraceIndex: the one CPU index of a trace. The scene's records carry its
codes (words 8 and 9) and its lanes are the scene's thread-lane table; built
on the CPU alone it equals the scene's; counter tracks are threads with one
lane; the row layout against a plain per-thread walk; the CPU queries
against direct numpy."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.tables import read_array
from gpuviz.trace.counter_tracks import COUNTER_KIND, with_counter_tracks
from gpuviz.trace.index import MODE_EXPANDED, MODE_HIDDEN, MODE_PROCESS_COLLAPSED, MODE_THREAD_COLLAPSED, TraceIndex
from gpuviz.trace.model import Trace
from gpuviz.trace.scene import RECORD_WORDS, GPUTraceScene
from gpuviz.trace.synthetic import synthetic


@pytest.fixture(scope="module")
def trace():
    return synthetic(spans=900, processes=3, threads_per_process=3, seed=11)


def _with_counters(trace):
    t0 = int(trace.spans.column("start_ns").to_numpy().min())
    counters = pa.table({"process": pa.array([2, 0, 0], pa.uint32()), "name": ["mem", "queue", "queue"],
                         "series": ["a", "b", "b"], "ts_ns": pa.array([t0, t0, t0 + 5], pa.int64()),
                         "value": [1.0, 2.0, 3.0]})
    return Trace(spans=trace.spans, links=trace.links, threads=trace.threads, processes=trace.processes,
                 counters=counters, instants=trace.instants)


def _same(a, b):
    assert a.names == b.names and a.categories == b.categories
    for name in ("name_id", "category_id", "thread_lanes", "thread_order", "thread_slot", "process_first_slot"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_scene_records_carry_the_index_codes(device, trace):
    scene = GPUTraceScene(device, trace)
    try:
        index = scene.index
        assert index.trace is trace and index.n == trace.spans.num_rows and index.counter_tracks == ()
        records = read_array(device, _records(scene)).reshape(-1, RECORD_WORDS)
        ids = records[:, 11]
        np.testing.assert_array_equal(records[:, 8], index.name_id[ids])
        np.testing.assert_array_equal(records[:, 9], index.category_id[ids])
        names = trace.spans.column("name").to_pylist()
        assert [index.names[c] for c in index.name_id] == names
        np.testing.assert_array_equal(read_array(device, scene.thread_lanes), index.thread_lanes)
        _same(index, TraceIndex.of(trace))
    finally:
        scene.destroy()


def _records(scene):
    from gpuviz.tables import GPUData
    _, rows, buffer = scene.record_chunks[0]
    return GPUData(buffer, format="uint32", length=rows * RECORD_WORDS)


def test_counter_tracks_are_threads_with_one_lane(device, trace):
    counted = _with_counters(trace)
    scene = GPUTraceScene(device, counted, counter_tracks=True)
    try:
        index = scene.index
        base = trace.threads.num_rows
        assert [t.thread for t in index.counter_tracks] == [base, base + 1]
        assert [(t.process, t.name) for t in index.counter_tracks] == [(0, "queue"), (2, "mem")]
        assert index.trace.threads.num_rows == base + 2 and counted.threads.num_rows == base
        assert index.trace.threads.column("kind").to_pylist()[base:] == [COUNTER_KIND] * 2
        lanes = read_array(device, scene.thread_lanes)
        assert lanes[base:].tolist() == [1, 1]
        np.testing.assert_array_equal(lanes, index.thread_lanes)
        _same(index, TraceIndex.of(counted, counter_tracks=True))
        # a counter track is the last thread of its process in display order
        order = index.thread_order.tolist()
        assert order.index(base) == max(order.index(t) for t in range(base + 2) if index.thread_process[t] == 0)
    finally:
        scene.destroy()
    assert with_counter_tracks(trace) == (trace, ())


def test_row_layout_against_a_walk(trace):
    index = TraceIndex.of(trace)
    rng = np.random.default_rng(2)
    for _ in range(6):
        pexp = rng.random(index.process_count) < 0.7
        texp = rng.random(index.thread_count) < 0.6
        layout = index.row_layout(process_expanded=pexp, thread_expanded=texp)
        row, rows = 0, {}
        for p in range(index.process_count):
            threads = [t for t in index.thread_order.tolist() if index.thread_process[t] == p]
            start = row
            for t in threads:
                if not pexp[p]:
                    rows[t] = (start, 0, MODE_PROCESS_COLLAPSED)
                    continue
                lanes = int(index.thread_lanes[t])
                height = lanes if texp[t] else 1
                mode = MODE_HIDDEN if lanes == 0 else (MODE_EXPANDED if texp[t] else MODE_THREAD_COLLAPSED)
                rows[t] = (row, height, mode)
                row += height
            if not pexp[p] and threads:
                row += 1
            assert layout.process_row[p] == start and layout.process_height[p] == (row - start)
        assert layout.total_rows == row
        for t, (first, height, mode) in rows.items():
            assert (layout.thread_row[t], layout.thread_mode[t]) == (first, mode), t
            if mode != MODE_PROCESS_COLLAPSED:
                assert layout.thread_height[t] == height


def test_queries_against_numpy(trace):
    index = TraceIndex.of(trace).prepare_spans()
    source, target = (trace.links.column(k).to_numpy().astype(np.int64) for k in ("source", "target"))
    ids = np.unique(source[:5])
    want = np.flatnonzero(np.isin(source, ids) | np.isin(target, ids))
    np.testing.assert_array_equal(index.links_of(ids, limit=10_000), want)
    one = index.focus_set(ids, depth=1)
    np.testing.assert_array_equal(np.flatnonzero(one), np.unique(np.concatenate(
        [ids, target[np.isin(source, ids)], source[np.isin(target, ids)]])))
    needle = index.names[0][:2]
    assert index.name_matches(needle).tolist() == [needle.casefold() in n.casefold() for n in index.names]
    start = trace.spans.column("start_ns").to_numpy()
    end = start + np.maximum(trace.spans.column("duration_ns").to_numpy(), 1)
    assert index.extent == (int(start.min()), int(end.max()))
