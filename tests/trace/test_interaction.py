"""GPUTraceFrame (the trace view's GPU policy) against TraceViewOracle, and
the oracle's pixel facts against a plain per-span loop."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuviz.graph import GPUCommandGraph
from gpuviz.errors import GraphTypeError, GraphValidationError
from gpuviz.trace import Trace, synthetic
from gpuviz.oracles.trace import TraceViewOracle
from gpuviz.trace.interaction import GPUTraceFrame, column_bounds
from gpuviz.trace.scene import GPUTraceScene

KEYS = ("drawn", "merged", "density", "minimap", "focus", "shown", "anchors", "edges")


class Rig:
    """A scene, a frame in a compiled graph and its oracle."""

    def __init__(self, device, trace, scene_args=None, **frame_args):
        self.device, self.trace = device, trace
        self.scene = GPUTraceScene(device, trace, **(scene_args or {}))
        self.frame = GPUTraceFrame(scene=self.scene, trace=trace, **frame_args)
        graph = GPUCommandGraph(device)
        self.frame.add_to_graph(graph)
        self.compiled = graph.compile()
        self.oracle = TraceViewOracle(self.frame, trace)

    def run(self, state):
        self.frame.write(state)
        encoder = self.device.create_command_encoder()
        self.frame.encode_changes(encoder)
        self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        return self.frame.read_back()

    def check(self, state, keys=KEYS):
        """Run ``state``; assert every output equals the oracle's; return the oracle frame."""
        got, want = self.run(state), self.oracle.frame(state)
        self.got = got
        for key in keys:
            np.testing.assert_array_equal(got[key], getattr(want, key), err_msg=key)
        assert got["stats"] == want.stats
        np.testing.assert_array_equal(got["thread_rows"], self.frame.layout(state).thread_row)
        return want

    def close(self):
        self.frame.destroy()
        self.scene.destroy()


@pytest.fixture(scope="module")
def rig(device):
    # 3 processes = 3 partitions, flows between CPU launches and GPU kernels
    r = Rig(device, synthetic(spans=6000, processes=3, threads_per_process=4, seed=3), width_capacity=256,
            row_capacity=48, piece_rows=2048)
    yield r
    r.close()


def test_whole_trace_and_zoom_levels(rig):
    state = rig.frame.initial_state(width=200)
    want = rig.check(state)
    assert want.stats["merged"] > 0 and want.stats["drawn"] > 0 and want.stats["merged_records"] > 0
    w0, w1 = state.window
    for lo, hi in ((0.4, 0.6), (0.5, 0.501), (0.0, 0.02)):
        window = (w0 + int((w1 - w0) * lo), w0 + max(int((w1 - w0) * hi), int((w1 - w0) * lo) + 200))
        want = rig.check(state.with_(window=window))
        assert want.stats["visible"] > 0


def test_windows_outside_and_across_the_trace(rig):
    state = rig.frame.initial_state(width=128)
    w0, w1 = state.window
    for window in ((w0 - 10**9, w0 - 10**6), (w1 + 1, w1 + 10**9), (w0 - 10**9, w0 + 1), (w1 - 1000, w1 + 10**9)):
        want = rig.check(state.with_(window=window))
        if window[1] <= w0 or window[0] >= w1:
            assert want.stats["visible"] == 0 and want.stats["collapsed"] == 0
    assert rig.check(state.with_(window=(w0 - 10**12, w1 + 10**12))).stats["visible"] > 0


def test_expansion_rows_and_collapsed_density(rig):
    state = rig.frame.initial_state(width=160)
    rng = np.random.default_rng(0)
    for k in range(4):
        processes = rng.random(rig.frame.process_count) < 0.5
        processes[k % rig.frame.process_count] = False  # at least one summary row
        threads = rng.random(rig.frame.thread_count) < 0.6
        layout = rig.frame.layout(state.with_(process_expanded=processes, thread_expanded=threads))
        first = int(rng.integers(0, max(layout.total_rows - 10, 1)))
        want = rig.check(state.with_(process_expanded=processes, thread_expanded=threads,
                                     rows=(first, int(rng.integers(1, 48)))))
        assert want.stats["collapsed"] == 0 or len(want.density) > 0
    everything_collapsed = state.with_(process_expanded=np.zeros(rig.frame.process_count, bool))
    want = rig.check(everything_collapsed)
    assert want.stats["visible"] == 0 and want.stats["collapsed"] > 0 and want.stats["density_max"] > 0
    assert len(np.unique(want.density[:, 0])) == rig.frame.process_count  # one summary row each


def test_filters_and_search(rig):
    state = rig.frame.initial_state(width=200)
    categories = np.arange(len(rig.scene.categories)) % 2 == 1
    names = np.arange(len(rig.scene.names)) % 3 == 0
    for change in (dict(categories=categories), dict(min_duration_ns=20_000), dict(min_duration_ns=1 << 40),
                   dict(search=names), dict(search=names, search_mode="filter"),
                   dict(categories=categories, search=names, min_duration_ns=5_000)):
        want = rig.check(state.with_(**change))
        if "search" in change:
            assert want.stats["search_matches"] > 0


@pytest.mark.parametrize("mode", ["dim", "hide"])
def test_focus_hops_both_directions(rig, mode):
    trace = rig.trace
    source = int(trace.links.column("source")[0].as_py())
    target = int(trace.links.column("target")[0].as_py())
    state = rig.frame.initial_state(width=120).with_(focus_mode=mode)
    reached = []
    for depth in range(0, 9):
        want = rig.check(state.with_(focus_seeds=(target,), focus_depth=depth))
        assert want.focus[rig.oracle.row_of_id[target]] == 1
        reached.append(int(want.focus.sum()))
        if depth >= 1:  # the link backwards from its target
            assert want.focus[rig.oracle.row_of_id[source]] == 1
    assert reached[0] == 1 and reached[1] >= 2
    assert all(a <= b for a, b in zip(reached, reached[1:]))
    rig.check(state.with_(focus_seeds=(source, target, 7), focus_depth=4))


def test_sub_pixel_cells_cover_exactly_the_columns_of_a_plain_loop(rig):
    """Independent of the oracle: each sub-pixel span marks its one column,
    computed span by span with Python integers."""
    state = rig.frame.initial_state(width=97)
    w0, w1 = state.window
    state = state.with_(window=(w0 + (w1 - w0) // 3, w0 + (w1 - w0) // 3 + (w1 - w0) // 50), rows=(2, 30))
    got = rig.run(state)
    layout = rig.frame.layout(state)
    bounds = [int(b) for b in column_bounds(state.window, state.width)]
    expect = {}
    spans = rig.trace.spans.to_pydict()
    for i, (s, d) in enumerate(zip(spans["start_ns"], spans["duration_ns"])):
        e = s + max(d, 1)
        row = int(layout.thread_row[spans["thread"][i]]) + spans["lane"][i]
        if not (s < state.window[1] and e > state.window[0]) or not 2 <= row < 32:
            continue
        lo, hi = max(s, state.window[0]), min(e, state.window[1]) - 1
        c0 = max(c for c in range(state.width) if bounds[c] <= lo)
        c1 = max(c for c in range(state.width) if bounds[c] <= hi)
        if c0 == c1:
            expect.setdefault((row, c0), set()).add(spans["name"][i])
    covered = {(int(r), c): int(n) for r, x0, x1, n in got["merged"] for c in range(x0, x1)}
    assert set(covered) == set(expect) and covered
    names = rig.scene.names.to_pylist()
    assert all(names[covered[key]] == max(expect[key], key=names.index) for key in expect)


def test_no_recompile_across_every_change(rig, monkeypatch):
    import gpuviz.graph.kernel as kernel
    made = []
    original = kernel.ComputeKernel.__init__
    monkeypatch.setattr(kernel.ComputeKernel, "__init__", lambda self, *a, **k: (made.append(1), original(self, *a, **k))[1])
    monkeypatch.setattr(GPUCommandGraph, "compile", lambda self: pytest.fail("compiled again"))
    state = rig.frame.initial_state(width=64)
    for change in (dict(window=(state.window[0] + 5, state.window[0] + 10**6)), dict(width=250),
                   dict(rows=(5, 10)), dict(process_expanded=np.zeros(rig.frame.process_count, bool)),
                   dict(thread_expanded=np.zeros(rig.frame.thread_count, bool)),
                   dict(categories=np.zeros(len(rig.scene.categories), bool)), dict(min_duration_ns=99),
                   dict(search=np.ones(len(rig.scene.names), bool), search_mode="filter"),
                   dict(focus_seeds=(1, 2), focus_depth=3, focus_mode="hide")):
        rig.check(state.with_(**change))
    assert made == []


def _trace(starts, durations, threads=None):
    columns = {"name": pa.array([f"n{i % 3}" for i in range(len(starts))], pa.string()),
               "start_ns": pa.array(starts, pa.int64()), "duration_ns": pa.array(durations, pa.int64())}
    if threads is not None:
        columns["thread"] = pa.array(threads, pa.uint32())
    return Trace.from_arrow(spans=pa.table(columns))


def test_exact_nanoseconds_far_from_the_origin(device):
    """A day-long trace: a 1 ns span 86399 s after the first span."""
    t0, day = 1_700_000_000_000_000_000, 86_400 * 10**9
    t = t0 + day - 10**9 + 123_456_789
    rig = Rig(device, _trace([t0, t, t + 1, t + 10**6], [day, 1, 0, 5]), width_capacity=64, row_capacity=8)
    try:
        state = rig.frame.initial_state(width=10)
        ids = lambda s: set(rig.scene.span_ids[rig.oracle.frame(s).visible].tolist())  # noqa: E731
        for window, inside in (((t, t + 10), {0, 1, 2}), ((t + 1, t + 11), {0, 2}), ((t - 10, t), {0}),
                               ((t - 9, t + 1), {0, 1}), ((t + 2, t + 10**6), {0}), ((t + 2, t + 10**6 + 1), {0, 3})):
            s = state.with_(window=window)
            want = rig.check(s)
            assert ids(s) == inside, window
            assert want.stats["visible"] == len(inside)
        rig.check(state.with_(window=(t0 - day, t0 + 2 * day)))
    finally:
        rig.close()


def test_empty_and_one_span_traces(device):
    for trace in (_trace([], []), _trace([5], [0])):
        rig = Rig(device, trace, width_capacity=16, row_capacity=4)
        try:
            state = rig.frame.initial_state(width=16)
            want = rig.check(state)
            assert want.stats["visible"] == trace.spans.num_rows
        finally:
            rig.close()


def test_bad_states_are_refused(rig):
    state = rig.frame.initial_state(width=100)
    w0 = state.window[0]
    bad = [dict(window=(w0, w0)), dict(window=(w0, w0 + 50)), dict(width=0), dict(width=10_000),
           dict(rows=(0, 1000)), dict(process_expanded=np.ones(2, bool)), dict(thread_expanded=np.ones(99, bool)),
           dict(categories=np.ones(3, int)), dict(min_duration_ns=-1), dict(search_mode="regex"),
           dict(focus_mode="blur"), dict(focus_depth=9), dict(focus_seeds=(10**9,)),
           dict(focus_seeds=tuple(range(65))), dict(window=(w0, w0 + (1 << 62)))]
    for change in bad:
        with pytest.raises(GraphValidationError):
            rig.frame.write(state.with_(**change))
    with pytest.raises(GraphTypeError):
        rig.frame.write(state.with_(width=1.5))
    with pytest.raises(GraphTypeError):
        GPUTraceFrame(scene=rig.scene, trace="trace")
    with pytest.raises(GraphValidationError):  # a trace with other threads than the scene's
        GPUTraceFrame(scene=rig.scene, trace=synthetic(spans=6000, processes=3, threads_per_process=5, seed=3))
    with pytest.raises(GraphValidationError):
        GPUTraceFrame(scene=rig.scene, trace=rig.trace, piece_rows=1000)


def test_edges_land_on_summary_rows_and_closest_shown_ancestors(rig):
    spans = rig.trace.spans.to_pydict()
    links = rig.trace.links.to_pydict()
    base = rig.frame.initial_state(width=150)
    k = next(i for i, s in enumerate(links["source"]) if spans["lane"][s] > 0)
    source, target = links["source"][k], links["target"][k]
    # a collapsed thread: the source (lane > 0) climbs to its lane-0 ancestor
    threads = np.ones(rig.frame.thread_count, bool)
    threads[spans["thread"][source]] = False
    want = rig.check(base.with_(thread_expanded=threads))
    edge = want.edges[want.edges[:, 2] == k]
    up = source
    while spans["lane"][up] > 0:
        up = spans["parent"][up]
    assert edge.tolist() == [[up, target, k, 0]]
    # a collapsed process: both ends become points on its summary row
    processes = np.ones(rig.frame.process_count, bool)
    processes[spans["process"][source]] = False
    state = base.with_(process_expanded=processes)
    want = rig.check(state)
    layout = rig.frame.layout(state)
    assert want.edges[want.edges[:, 2] == k].tolist() == [[source, target, k, 3]]
    for span in (source, target):
        assert layout.thread_row[spans["thread"][span]] == layout.process_row[spans["process"][span]]
    assert (want.edges[:, 3] != 0).sum() > 0 and (want.edges[:, 3] == 0).sum() > 0


def _random_trace(rng, n, links):
    thread = rng.integers(0, 5, n).astype(np.uint32)
    nested = rng.random(n) < 0.5  # half the spans inside the previous one: deeper lanes and parents
    start = rng.integers(0, 10**7, n)
    duration = rng.integers(0, 10**5, n) * (rng.random(n) < 0.9)
    for i in np.flatnonzero(nested[1:]) + 1:
        if thread[i] == thread[i - 1] and duration[i - 1] > 2:
            start[i] = start[i - 1] + 1
            duration[i] = duration[i - 1] // 2
    spans = pa.table({"name": pa.array([f"n{v}" for v in rng.integers(0, 40, n)], pa.string()),
                      "category": pa.array([f"c{v}" for v in rng.integers(0, 5, n)], pa.string()),
                      "start_ns": pa.array(start, pa.int64()), "duration_ns": pa.array(duration, pa.int64()),
                      "process": pa.array((thread * 2) % 3), "thread": pa.array(thread)})
    ends = pa.table({"source": pa.array(rng.integers(0, max(n, 1), links).astype(np.uint32)),
                     "target": pa.array(rng.integers(0, max(n, 1), links).astype(np.uint32))})
    return Trace.from_arrow(spans=spans, links=ends if n else None)


def _random_state(rng, rig):
    f = rig.frame
    state = f.initial_state(width=int(rng.integers(1, 65)))
    w0, w1 = state.window
    a = int(rng.integers(w0 - 10**6, w1))
    width_ns = int(rng.choice([state.width, state.width + 7, (w1 - w0) // 10 + state.width, 3 * (w1 - w0)]))
    layout_rows = f.layout(state).total_rows
    return state.with_(window=(a, a + width_ns), rows=(int(rng.integers(0, max(layout_rows, 1))),
                                                       int(rng.integers(0, f.row_capacity + 1))),
                       process_expanded=rng.random(f.process_count) < 0.7,
                       thread_expanded=rng.random(f.thread_count) < 0.7,
                       categories=None if rng.random() < 0.5 else rng.random(f.category_count) < 0.7,
                       min_duration_ns=int(rng.choice([0, 1, 500, 50_000])),
                       search=None if rng.random() < 0.5 else rng.random(f.name_count) < 0.3,
                       search_mode=str(rng.choice(["highlight", "filter"])),
                       focus_seeds=tuple(int(v) for v in rng.integers(0, max(f.span_count, 1), rng.integers(0, 4)))
                       if f.span_count else (),
                       focus_depth=int(rng.integers(0, 9)), focus_mode=str(rng.choice(["dim", "hide"])))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from([1, 2, 2047, 2048, 2049, 4200]), seed=st.integers(0, 2**31))
def test_random_traces_and_states_match_the_oracle(device, n, seed):
    """Piece (2048 rows) and workgroup-tile boundaries, unsorted thread
    order, nested and overlapping spans, random links and states."""
    rng = np.random.default_rng(seed)
    rig = Rig(device, _random_trace(rng, n, links=n // 3 + 1), width_capacity=64, row_capacity=12, piece_rows=2048)
    try:
        for _ in range(3):
            rig.check(_random_state(rng, rig))
    finally:
        rig.close()


def test_frame_without_edges(device):
    rig = Rig(device, synthetic(spans=3000, processes=2, threads_per_process=4, seed=5), width_capacity=128,
              row_capacity=32, edges=False)
    try:
        state = rig.frame.initial_state(width=100)
        want = rig.check(state, keys=("drawn", "merged", "density", "minimap", "focus", "shown"))
        assert len(want.edges) > 0 and len(rig.got["edges"]) == 0  # the oracle would keep some; none resolved
        assert not any(node.endswith(("-edges", "-anchors-project")) for node in rig.frame.node_ids)
    finally:
        rig.close()


def test_a_frame_encoded_before_any_write_draws_nothing(device):
    rig = Rig(device, synthetic(spans=2500, processes=2, threads_per_process=2, seed=9), width_capacity=32,
              row_capacity=8)
    try:
        encoder = device.create_command_encoder()
        assert rig.frame.encode_changes(encoder) == ("minimap",)  # due since construction
        assert rig.frame.encode_changes(encoder) == ()
        rig.compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        got = rig.frame.read_back()
        assert len(got["drawn"]) == len(got["merged"]) == len(got["density"]) == len(got["edges"]) == 0
        assert got["stats"]["visible"] == 0 and got["minimap"].sum() == 2500  # minimap ignores the window
        rig.check(rig.frame.initial_state(width=32))
    finally:
        rig.close()


def test_chunked_records_match_the_oracle(device):
    """Records split into 2048-row buffers (a tiny max_chunk_bytes stands in
    for 100M spans over the H200's max-buffer-size): partitions straddle
    chunks, pieces never do, span IDs stay global."""
    from gpuviz.errors import GraphStateError
    from gpuviz.trace.interaction.nodes import record_pieces
    from gpuviz.trace.scene import RECORD_BYTES

    trace = synthetic(spans=9000, processes=3, threads_per_process=4, seed=21)
    rig = Rig(device, trace, scene_args={"max_chunk_bytes": 2048 * RECORD_BYTES + 100}, width_capacity=128,
              row_capacity=40, piece_rows=2048)
    try:
        chunks = rig.scene.record_chunks
        assert [rows for _, rows, _ in chunks] == [2048] * 4 + [9000 - 4 * 2048]
        assert len({id(buffer) for _, _, buffer in chunks}) == 5
        with pytest.raises(GraphStateError, match="5 chunks"):
            rig.scene.record_buffer
        ranges = record_pieces(rig.frame)
        assert [(base, rows) for base, rows, _, _ in ranges] == [(lo, rows) for lo, rows, _ in chunks]
        state = rig.frame.initial_state(width=128)
        t0, t1 = state.window
        rig.check(state)
        rig.check(state.with_(window=(t0 + (t1 - t0) // 3, t0 + (t1 - t0) // 2), rows=(3, 30)))
        collapsed = np.ones(rig.frame.process_count, bool)
        collapsed[1] = False
        rig.check(state.with_(process_expanded=collapsed, min_duration_ns=50))
        linked = trace.links.column("source").to_numpy()
        rig.check(state.with_(focus_seeds=tuple(int(v) for v in linked[::400][:8]), focus_depth=2, focus_mode="hide"))
    finally:
        rig.close()


def test_whole_trace_work_runs_only_when_its_inputs_change(rig, monkeypatch):
    """Pan/zoom frames record no focus or minimap work; a focus change records
    the focus graph (and the minimap only in "hide" mode); a filter change the
    minimap; every frame still equals the oracle."""
    submitted = []
    for name in ("focus_graph", "minimap_graph"):
        graph = getattr(rig.frame, name)
        original = graph.encode
        monkeypatch.setattr(graph, "encode", lambda encoder, _o=original, _n=name, **k: (submitted.append(_n),
                                                                                         _o(encoder, **k))[1])
    state = rig.frame.initial_state(width=200)
    rig.check(state.with_(min_duration_ns=1))
    t0, t1 = state.window
    submitted.clear()
    for k in range(3):
        rig.check(state.with_(window=(t0 + k * 1000, t1 - k * 5000), min_duration_ns=1))
    assert submitted == []
    seeds = tuple(int(v) for v in rig.trace.links.column("source").to_numpy()[:3])
    rig.check(state.with_(min_duration_ns=1, focus_seeds=seeds, focus_depth=2))
    assert submitted == ["focus_graph"]
    submitted.clear()
    rig.check(state.with_(min_duration_ns=1, focus_seeds=seeds, focus_depth=2, focus_mode="hide"))
    assert submitted == ["minimap_graph"]
    submitted.clear()
    rig.check(state.with_(min_duration_ns=1, focus_seeds=seeds, focus_depth=3, focus_mode="hide"))
    assert submitted == ["focus_graph", "minimap_graph"]
    submitted.clear()
    rig.check(state.with_(min_duration_ns=7))
    assert submitted == ["focus_graph", "minimap_graph"]  # focus cleared; filter changed


def test_tiles_outside_the_window_skip_their_records(device):
    """Few threads with many spans: each 2048-row tile covers a short time
    range, so narrow windows skip most tiles (hidden without reading their
    records); expanded and collapsed processes, focus counts, vs the oracle."""
    trace = synthetic(spans=13000, processes=2, threads_per_process=1, seed=8)
    rig = Rig(device, trace, width_capacity=96, row_capacity=24, piece_rows=4096)
    try:
        state = rig.frame.initial_state(width=96)
        t0, t1 = state.window
        seeds = tuple(int(v) for v in trace.links.column("source").to_numpy()[:4]) or (0,)
        for a, b in ((0.40, 0.41), (0.1, 0.1004), (0.0, 0.002), (0.995, 1.0)):
            window = (t0 + int((t1 - t0) * a), t0 + int((t1 - t0) * b) + 96)
            rig.check(state.with_(window=window))
            rig.check(state.with_(window=window, process_expanded=np.array([False, True]), focus_seeds=seeds,
                                  focus_depth=1))
    finally:
        rig.close()
