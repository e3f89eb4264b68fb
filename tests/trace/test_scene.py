"""GPUTraceScene: records, parents, links and CSRs read back against a plain
Python reading of trace.spans/links; exact times over a day; the WGSL time
include against numpy int64; destroy; borrowed graph imports."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import wgpu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuviz
from gpuviz.errors import GraphStateError, GraphTypeError
from gpuviz.graph.shaders import compute_pipeline, wgsl
from gpuviz.oracles.trace import scene_tables_by_loops as _expected
from gpuviz.tables import read_array
from gpuviz.trace.formats.otlp import read_otlp
from gpuviz.trace.model import assemble, table
from gpuviz.trace.scene import NO_PARENT, RECORD_WORDS, GPUTraceScene
from gpuviz.trace.synthetic import synthetic

DATA = Path("/work/shared/data/traces")
if not DATA.exists():  # a clone elsewhere: the repository's shared folder
    DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces"


def _make_trace(spans, *, threads, links=(), processes=None):
    """spans: dicts with name, start, dur, thread and optional category/parent/partition/args/incomplete."""
    nt = len(threads)
    processes = processes or [0]
    procs = table("processes", {"id": np.arange(len(processes), dtype=np.uint32),
                                "pid": [str(p) for p in range(len(processes))],
                                "name": [f"p{p}" for p in range(len(processes))],
                                "labels": [""] * len(processes), "partition": np.asarray(processes, np.uint32)})
    thr = table("threads", {"id": np.arange(nt, dtype=np.uint32), "process": np.asarray(threads, np.uint32),
                            "tid": [str(t) for t in range(nt)], "name": [f"t{t}" for t in range(nt)],
                            "sort_index": np.arange(nt, dtype=np.int64), "kind": ["thread"] * nt})
    lk = table("links", {"source": np.asarray([a for a, _ in links], np.uint32),
                         "target": np.asarray([b for _, b in links], np.uint32), "kind": ["flow"] * len(links)})
    kwargs = {}
    if spans and "parent" in spans[0]:
        kwargs["parent"] = np.asarray([s["parent"] for s in spans], np.int64)
    if spans and "partition" in spans[0]:
        kwargs["partition"] = np.asarray([s["partition"] for s in spans], np.uint32)
    return assemble(name=[s["name"] for s in spans], category=[s.get("category", "") for s in spans],
                    start_ns=np.asarray([s["start"] for s in spans], np.int64),
                    duration_ns=np.asarray([s["dur"] for s in spans], np.int64),
                    thread=np.asarray([s["thread"] for s in spans], np.uint32), threads=thr, processes=procs,
                    args=[s.get("args") for s in spans], incomplete=[s.get("incomplete", False) for s in spans],
                    links=lk, sources=[f"rank{p}" for p in range(max(processes) + 1)], **kwargs)


def _csr_chunks(device, adjacency):
    return ([read_array(device, c) for c in adjacency.offsets.chunks],
            [read_array(device, c) for c in adjacency.neighbors.chunks],
            None if adjacency.edges is None else [read_array(device, c) for c in adjacency.edges.chunks])


def _check_adjacency(device, adjacency, bounds, expected, with_edges):
    offsets, neighbors, edges = _csr_chunks(device, adjacency)
    assert len(offsets) == len(neighbors) == len(bounds) - 1
    for p in range(len(bounds) - 1):
        a, b = bounds[p], bounds[p + 1]
        assert len(offsets[p]) == b - a + 1 and offsets[p][0] == 0
        for r in range(a, b):
            got = neighbors[p][offsets[p][r - a]:offsets[p][r - a + 1]].tolist()
            want = expected[r]
            if with_edges:
                assert got == [n for n, _ in want]
                assert edges[p][offsets[p][r - a]:offsets[p][r - a + 1]].tolist() == [e for _, e in want]
            else:
                assert got == want
        assert offsets[p][-1] == len(neighbors[p])


def check_scene(device, trace, scene):
    exp = _expected(trace)
    assert scene.span_count == trace.span_count and scene.link_count == trace.links.num_rows
    assert list(scene.partition_offsets) == exp["bounds"]
    assert scene.span_ids.tolist() == exp["order"]
    assert scene.rows_are_ids == (exp["order"] == sorted(exp["order"]))
    assert scene.time_origin_ns == exp["origin"]
    assert scene.names.to_pylist() == exp["names"] and scene.categories.to_pylist() == exp["cats"]
    batches = scene.spans.batches
    assert [b.num_rows for b in batches] == np.diff(exp["bounds"]).tolist()
    words = np.concatenate([np.concatenate([read_array(device, b.columns[c]) for c in ("time", "place", "label")],
                                           axis=1) for b in batches]) if batches else np.zeros((0, 12))
    np.testing.assert_array_equal(words.reshape(-1, RECORD_WORDS), exp["records"])
    raw = np.frombuffer(device.queue.read_buffer(scene.record_buffer), np.uint32)[: scene.span_count * RECORD_WORDS]
    np.testing.assert_array_equal(raw.reshape(-1, RECORD_WORDS), exp["records"])
    assert [c.length for c in scene.parents.chunks] == np.diff(exp["bounds"]).tolist()
    assert read_array(device, scene.parents).tolist() == exp["parents"]
    kinds = list(dict.fromkeys(lk["kind"] for lk in exp["links"]))
    assert scene.link_kinds.to_pylist() == kinds
    links = read_array(device, scene.links).reshape(-1, 4).tolist()
    assert links == [[exp["row"][lk["source"]], exp["row"][lk["target"]], kinds.index(lk["kind"]), i]
                     for i, lk in enumerate(exp["links"])]
    _check_adjacency(device, scene.links_forward, exp["bounds"], exp["out_links"], True)
    _check_adjacency(device, scene.links_reverse, exp["bounds"], exp["in_links"], True)
    _check_adjacency(device, scene.hierarchy_reverse, exp["bounds"], exp["children"], False)
    _check_adjacency(device, scene.hierarchy_forward, exp["bounds"], exp["parent_adj"], False)
    lanes = [0] * trace.threads.num_rows
    for s in trace.spans.to_pylist():
        lanes[s["thread"]] = max(lanes[s["thread"]], s["lane"] + 1)
    assert read_array(device, scene.thread_lanes).tolist() == lanes
    assert read_array(device, scene.thread_process).tolist() == trace.threads.column("process").to_pylist()
    assert scene.stats["total"] == sum(v for k, v in scene.stats.items() if k != "total")
    assert scene.stats["records"] >= scene.span_count * 48


# ------------------------------------------------------------------ real and generated traces

@pytest.mark.parametrize("name", ["otlp_proto_example_trace.json", "otlp_jaeger_multi_resource.json"])
def test_real_otlp_files(device, name):
    trace = read_otlp(DATA / name)
    scene = GPUTraceScene(device, trace)
    try:
        check_scene(device, trace, scene)
    finally:
        scene.destroy()


def test_real_kineto_file(device):
    load = pytest.importorskip("gpuviz.trace.load").load
    trace = load(DATA / "kineto_rocm_mi250_small.json.gz")
    scene = GPUTraceScene(device, trace)
    try:
        check_scene(device, trace, scene)
        assert scene.link_count > 0
    finally:
        scene.destroy()


def test_synthetic_partitions_and_links(device):
    trace = synthetic(spans=3000, processes=3, threads_per_process=4, links=200, seed=5)
    scene = GPUTraceScene(device, trace)
    try:
        assert scene.rows_are_ids and scene.partition_count == 3
        check_scene(device, trace, scene)
    finally:
        scene.destroy()


def test_interleaved_partitions_empty_partition_and_orphans(device):
    # partitions 0 and 2 interleaved in ID order, partition 1 empty; cross-partition parent and links
    spans = [dict(name="a", start=100, dur=50, thread=0, parent=-1, partition=0),
             dict(name="b", start=90, dur=10, thread=1, parent=-1, partition=2, args=json.dumps({"x": 1})),
             dict(name="c", start=110, dur=0, thread=0, parent=0, partition=0, incomplete=True),
             dict(name="a", start=95, dur=3, thread=1, parent=1, partition=2, category="gpu"),
             dict(name="d", start=120, dur=5, thread=1, parent=0, partition=2)]
    trace = _make_trace(spans, threads=[0, 1, 2], processes=[0, 1, 2], links=[(0, 3), (3, 2), (0, 4), (0, 3)])
    scene = GPUTraceScene(device, trace)
    try:
        assert not scene.rows_are_ids
        assert scene.partition_offsets == (0, 2, 2, 5)
        assert [c.length for c in scene.links_forward.offsets.chunks] == [3, 1, 4]
        check_scene(device, trace, scene)
    finally:
        scene.destroy()


def test_empty_trace(device):
    trace = _make_trace([], threads=[0])
    scene = GPUTraceScene(device, trace)
    assert scene.span_count == 0 and scene.partition_count == 1 and scene.time_origin_ns == 0
    check_scene(device, trace, scene)
    scene.destroy()


_SPAN = st.fixed_dictionaries({"start": st.integers(-2**40, 2**40), "dur": st.integers(0, 2**36),
                               "thread": st.integers(0, 2), "name": st.sampled_from("xyz"),
                               "category": st.sampled_from(["", "k", "m"]), "args": st.sampled_from([None, "{}"]),
                               "incomplete": st.booleans()})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_traces_against_plain_reading(device, data):
    spans = data.draw(st.lists(_SPAN, max_size=40))
    n = len(spans)
    threads = data.draw(st.lists(st.integers(0, 2), min_size=3, max_size=3))  # thread -> process (= partition)
    for i, s in enumerate(spans):
        s["parent"] = data.draw(st.integers(-1, n - 1)) if data.draw(st.booleans()) else -1
        s["partition"] = threads[s["thread"]]
    links = data.draw(st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))),
                               max_size=30)) if n else []
    trace = _make_trace(spans, threads=threads, processes=[0, 1, 2], links=links)
    scene = GPUTraceScene(device, trace)
    try:
        check_scene(device, trace, scene)
    finally:
        scene.destroy()


# ------------------------------------------------------------------ exact times and the WGSL include

def _dispatch(device, entry, params, inputs, out_rows, *, in_binding, out_binding):
    code = wgsl("trace/shaders/trace_probe.wgsl")
    pipeline = compute_pipeline(device, code, entry_point=entry, label=f"test-{entry}")
    BU = wgpu.BufferUsage
    uniform = device.create_buffer_with_data(data=np.asarray(params, np.uint32).tobytes(), usage=BU.UNIFORM)
    out = device.create_buffer(size=max(16, out_rows * 16), usage=BU.STORAGE | BU.COPY_SRC)
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": uniform, "offset": 0, "size": 16}},
        {"binding": in_binding, "resource": {"buffer": inputs, "offset": 0, "size": inputs.size}},
        {"binding": out_binding, "resource": {"buffer": out, "offset": 0, "size": out.size}}])
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(max(1, -(-params[0] // 64)))
    compute.end()
    device.queue.submit([encoder.finish()])
    result = np.frombuffer(device.queue.read_buffer(out), np.uint32)[: out_rows * 4].reshape(-1, 4).copy()
    for buffer in (uniform, out):
        buffer.destroy()
    return result


def _words(values):
    return np.asarray(values, np.int64).view(np.uint64).view(np.uint32).reshape(-1, 2)


def _check_f32(got_bits, delta):
    got = got_bits.view(np.float32).astype(np.float64)
    exact = np.abs(delta) < 2**24
    np.testing.assert_array_equal(got[exact], delta[exact].astype(np.float64))
    big = ~exact
    ulp = 2.0 ** (np.floor(np.log2(np.abs(delta[big]).astype(np.float64))) - 23)
    assert np.all(np.abs(got[big] - delta[big].astype(np.float64)) <= 2 * ulp)


def test_wgsl_time_subtraction_matches_int64(device):
    rng = np.random.default_rng(7)
    day = 86_400 * 10**9
    a = rng.integers(0, day, 4000)
    b = rng.integers(0, day, 4000)
    near = a[:1000] + rng.integers(-2**25, 2**25, 1000)  # around the 2^24 and 2^31 edges
    edges = np.asarray([0, 1, 2**24 - 1, 2**24, 2**24 + 1, 2**31 - 2, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1,
                        2**32, 2**32 + 1, day, 2**47])
    a = np.concatenate([a, np.abs(near), edges + 2**33, np.full(len(edges), 2**33)])
    b = np.concatenate([b, a[:1000], np.full(len(edges), 2**33), edges + 2**33])
    pairs = np.concatenate([_words(a), _words(b)], axis=1).astype(np.uint32)
    BU = wgpu.BufferUsage
    buffer = device.create_buffer_with_data(data=pairs.tobytes(), usage=BU.STORAGE)
    got = _dispatch(device, "time_probe", [len(a), 0, 0, 0], buffer, 2 * len(a), in_binding=1, out_binding=2)
    buffer.destroy()
    delta = a - b
    main, extra = got[0::2], got[1::2]
    np.testing.assert_array_equal(main[:, :2], _words(delta))
    np.testing.assert_array_equal(main[:, 3].view(np.int32), np.clip(delta, -(2**31 - 1), 2**31 - 1))
    _check_f32(main[:, 2], delta)
    np.testing.assert_array_equal(extra[:, 0], 1)
    np.testing.assert_array_equal(extra[:, 1], a < b)
    np.testing.assert_array_equal(extra[:, 2], b < a)
    np.testing.assert_array_equal(extra[:, 3], (a + b) % 2**32)


def test_day_long_trace_is_exact_on_the_gpu(device):
    epoch = 1_700_000_000_123_456_789  # absolute ns: far beyond float64's ns resolution
    rng = np.random.default_rng(3)
    n = 2000
    start = np.sort(rng.integers(0, 86_400 * 10**9, n)) + epoch
    dur = rng.integers(0, 10**12, n)
    dur[:3] = [0, 1, 86_400 * 10**9]
    spans = [dict(name=f"s{i % 5}", start=int(s), dur=int(d), thread=i % 2) for i, (s, d) in enumerate(zip(start, dur))]
    trace = _make_trace(spans, threads=[0, 0])
    scene = GPUTraceScene(device, trace)
    try:
        assert scene.time_origin_ns == int(start.min())
        words = read_array(device, scene.spans.column("time")).astype(np.uint64)
        np.testing.assert_array_equal((words[:, 0] | words[:, 1] << np.uint64(32)).astype(np.int64) + scene.time_origin_ns,
                                      start)
        np.testing.assert_array_equal((words[:, 2] | words[:, 3] << np.uint64(32)).astype(np.int64), dur)
        # a view origin near the end of the day, in scene time
        origin = int(start[n // 2] - scene.time_origin_ns) + 12345
        ow = _words([origin])[0]
        assert scene.time_words(int(start[n // 2]) + 12345) == (int(ow[0]), int(ow[1]))
        assert scene.time_words(scene.time_origin_ns - 1) == (2**32 - 1, 2**32 - 1)
        with pytest.raises(GraphTypeError):
            scene.time_words(1.5)
        got = _dispatch(device, "span_probe", [n, int(ow[0]), int(ow[1]), 0], scene.record_buffer, 2 * n,
                        in_binding=3, out_binding=4)
        end_rel = start + dur - scene.time_origin_ns
        np.testing.assert_array_equal(got[1::2, :2], _words(end_rel))
        np.testing.assert_array_equal(got[0::2, 0].view(np.int32), np.clip(end_rel - origin, -(2**31 - 1), 2**31 - 1))
        _check_f32(got[0::2, 1], start - scene.time_origin_ns - origin)
        rec = read_array(device, scene.spans.column("label"))
        np.testing.assert_array_equal(got[0::2, 2], rec[:, 2] & 0xFF)
        np.testing.assert_array_equal(got[0::2, 3], rec[:, 2] >> 8)
        np.testing.assert_array_equal(got[1::2, 2], np.arange(n))
        place = read_array(device, scene.spans.column("place"))
        np.testing.assert_array_equal(got[1::2, 3], place[:, 0] ^ place[:, 1] ^ place[:, 2] ^ place[:, 3]
                                      ^ rec[:, 0] ^ rec[:, 1])
    finally:
        scene.destroy()


# ------------------------------------------------------------------ lifetime and graph import

def test_destroy_is_idempotent_and_refuses_imports(device):
    trace = synthetic(spans=100, processes=2, threads_per_process=2, seed=1)
    scene = GPUTraceScene(device, trace, label="lifetime")
    assert "lifetime" in repr(scene) and not scene.destroyed
    scene.destroy()
    scene.destroy()
    assert scene.destroyed and "destroyed" in repr(scene)
    assert scene.parents.chunks[0].destroyed
    with pytest.raises(GraphStateError, match='"lifetime" was destroyed'):
        scene.import_to_graph(gpuviz.GPUCommandGraph(device))


def test_bad_arguments(device):
    trace = synthetic(spans=10, processes=1, threads_per_process=1)
    with pytest.raises(GraphTypeError):
        GPUTraceScene(None, trace)
    with pytest.raises(GraphTypeError, match="needs a gpuviz.trace.Trace"):
        GPUTraceScene(device, trace.spans)
    many = _make_trace([dict(name="x", start=0, dur=1, thread=0, parent=-1, partition=2**24)], threads=[0])
    with pytest.raises(gpuviz.GraphValidationError, match=r'GPUTraceScene "big" holds at most 16777216 partitions'):
        GPUTraceScene(device, many, label="big")
    scene = GPUTraceScene(device, trace)
    with pytest.raises(GraphTypeError, match="needs a GPUCommandGraph"):
        scene.import_to_graph(device)
    graph = gpuviz.GPUCommandGraph(device)
    scene.import_to_graph(graph, id="one")
    with pytest.raises(gpuviz.DuplicateIdError):
        scene.import_to_graph(graph, id="one")
    scene.destroy()


def test_graph_import_is_borrowed(device):
    trace = synthetic(spans=500, processes=3, threads_per_process=2, links=40, seed=2)
    scene = GPUTraceScene(device, trace)
    graph = gpuviz.GPUCommandGraph(device, id="scene-import")
    views = scene.import_to_graph(graph, id="t")
    bounds = scene.partition_offsets
    sizes = list(np.diff(bounds))
    assert views["records"].chunk_lengths == tuple(sizes)
    assert views["records-packed"].length == scene.span_count
    assert views["records"].views[1].byte_offset == 48 * bounds[1]
    assert views["records"].views[1].row_byte_length == 48 and views["records"].views[1].byte_stride == 48
    assert views["parents"].chunk_lengths == tuple(sizes)
    assert views["links-forward-offsets"].chunk_lengths == tuple(s + 1 for s in sizes)
    assert views["hierarchy-reverse-neighbors"].length == int((trace.spans.column("parent").to_numpy() >= 0).sum())
    assert "hierarchy-forward-edges" not in views and views["links"].length == scene.link_count
    handles = graph.buffers
    assert all(handles[k].lifetime == "imported" for k in handles)
    assert handles["t-records"].buffer is scene.record_buffer
    compiled = graph.compile()
    compiled.destroy()
    del graph, compiled
    # the scene's buffers are still alive and unchanged
    before = read_array(device, scene.parents)
    assert before.tolist() == [NO_PARENT if p < 0 else p for p in trace.spans.column("parent").to_pylist()]
    scene.destroy()


def test_dense_ids_with_dictionary_and_null_free_strings(device):
    names = pa.array(["k", "j", "k", "k", "i"])
    spans = [dict(name=n, start=i, dur=1, thread=0) for i, n in enumerate(names.to_pylist())]
    scene = GPUTraceScene(device, _make_trace(spans, threads=[0]))
    try:
        assert scene.names.to_pylist() == ["k", "j", "i"]
        assert read_array(device, scene.spans.column("label"))[:, 0].tolist() == [0, 1, 0, 0, 2]
    finally:
        scene.destroy()


def test_link_csrs_drive_graph_traversal_both_ways(device):
    """The partitioned CSRs as GPUGraphTraversal takes them: linked-span focus in both directions."""
    traversal = pytest.importorskip("gpuviz.algorithms.graph_traversal")
    from gpuviz.tables import GPUData, GPUVector

    spans = [dict(name="s", start=i * 10, dur=5, thread=i % 3, partition=(i % 3) * (i % 3 != 1))
             for i in range(60)]
    rng = np.random.default_rng(11)
    links = [tuple(int(x) for x in rng.integers(0, 60, 2)) for _ in range(70)]
    trace = _make_trace(spans, threads=[0, 1, 2], processes=[0, 0, 2], links=links)
    scene = GPUTraceScene(device, trace)
    graph = gpuviz.GPUCommandGraph(device, id="focus-test")
    views = scene.import_to_graph(graph)
    out = GPUVector([GPUData.allocate(device, format="uint32", length=int(s)) for s in np.diff(scene.partition_offsets)])
    seed_ids = [3, 40]
    seeds = GPUData.from_numpy(device, np.asarray([scene.span_ids.tolist().index(i) for i in seed_ids], np.uint32))
    traversal.GPUGraphTraversal(
        id="focus", offsets=views["links-forward-offsets"], neighbors=views["links-forward-neighbors"],
        reverse_offsets=views["links-reverse-offsets"], reverse_neighbors=views["links-reverse-neighbors"],
        seeds=graph.import_gpu_data("seeds", seeds), output=graph.import_gpu_vector("out", out),
        direction="both", max_depth=2).add_to_graph(graph)
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    got = read_array(device, out)
    compiled.destroy()
    # oracle over span IDs: undirected links, 2 hops
    near = {i: set() for i in range(60)}
    for a, b in links:
        near[a].add(b)
        near[b].add(a)
    seen, front = set(seed_ids), set(seed_ids)
    for _ in range(2):
        front = {m for n in front for m in near[n]} - seen
        seen |= front
    assert sorted(int(scene.span_ids[r]) for r in np.flatnonzero(got)) == sorted(seen)
    for data in (*out.chunks, seeds):
        data.destroy()
    scene.destroy()


def test_dense_ids_in_slices_match_one_pass(device, monkeypatch):
    """Long columns are dictionary-encoded in slices on several threads: same IDs as one pass."""
    names = ["x", "", "y", "x", "", "z", "y", "", "w", "x", "v"]
    spans = [dict(name=n, start=i, dur=1, thread=0, category=n[::-1] + "c") for i, n in enumerate(names)]
    trace = _make_trace(spans, threads=[0])
    whole = GPUTraceScene(device, trace)  # short columns: one pass
    monkeypatch.setattr("gpuviz.trace.scene_tables.DENSE_SLICE", 2)
    monkeypatch.setattr("gpuviz.trace.scene_tables.WORKERS", 3)
    sliced = GPUTraceScene(device, trace)
    try:
        assert whole.names.to_pylist() == ["x", "", "y", "z", "w", "v"]
        for scene in (whole, sliced):
            check_scene(device, trace, scene)
        assert sliced.names.to_pylist() == whole.names.to_pylist()
    finally:
        whole.destroy()
        sliced.destroy()


def test_multi_file_load_keeps_one_chunk_per_file(device):
    load = pytest.importorskip("gpuviz.trace.load").load
    files = [DATA / "otlp_proto_example_trace.json", DATA / "catapult_flow_simple.json",
             DATA / "otlp_jaeger_multi_resource.json"]
    trace = load(files, progress=False)
    scene = GPUTraceScene(device, trace)
    try:
        assert scene.partition_count == 3
        assert [b.num_rows for b in scene.spans.batches] == [read_otlp(files[0]).span_count,
                                                             load(files[1]).span_count,
                                                             read_otlp(files[2]).span_count]
        check_scene(device, trace, scene)
    finally:
        scene.destroy()


def test_trace_from_arrow_minimal_columns(device):
    """Trace.from_arrow with only name, start_ns and duration_ns (lanes, depth and parents derived)."""
    from gpuviz.trace.model import Trace

    spans = pa.table({"name": ["a", "b", "c", "b"], "start_ns": pa.array([10, 12, 15, 40], pa.int64()),
                      "duration_ns": pa.array([20, 5, 10, 0], pa.int64())})
    trace = Trace.from_arrow(spans=spans, links=pa.table({"source": pa.array([0], pa.uint32()),
                                                          "target": pa.array([3], pa.uint32())}))
    scene = GPUTraceScene(device, trace)
    try:
        check_scene(device, trace, scene)
        # c (15-25) overlaps b (12-17) without nesting: a second track after track 0 (a, b: 2 lanes)
        assert read_array(device, scene.thread_lanes).tolist() == [3]
    finally:
        scene.destroy()


def test_records_split_into_chunks(device):
    """max_chunk_bytes splits the records into buffers of 2048-row multiples
    (the 100M-span case on the H200, small): every row reads back as in one
    buffer, batches and graph views split where partitions cross chunks,
    other tables unchanged, span IDs global."""
    from gpuviz.trace.scene import RECORD_BYTES, RECORD_CHUNK_ALIGN

    trace = synthetic(spans=7000, processes=3, threads_per_process=2, links=300, seed=4)
    whole = GPUTraceScene(device, trace)
    split = GPUTraceScene(device, trace, max_chunk_bytes=2 * RECORD_CHUNK_ALIGN * RECORD_BYTES + 47)
    try:
        assert [(first, rows) for first, rows, _ in split.record_chunks] == [(0, 4096), (4096, 7000 - 4096)]
        with pytest.raises(GraphStateError, match="2 chunks"):
            split.record_buffer
        want = np.frombuffer(device.queue.read_buffer(whole.record_buffer), np.uint32)[:7000 * RECORD_WORDS]
        got = np.concatenate([np.frombuffer(device.queue.read_buffer(b), np.uint32)[:rows * RECORD_WORDS]
                              for _, rows, b in split.record_chunks])
        np.testing.assert_array_equal(got, want)
        bounds = split.partition_offsets
        cuts = sorted({*bounds, 4096})
        assert [b.num_rows for b in split.spans.batches] == [b - a for a, b in zip(cuts, cuts[1:]) if b > a]
        words = np.concatenate([np.concatenate([read_array(device, b.columns[c]) for c in ("time", "place", "label")],
                                               axis=1) for b in split.spans.batches])
        np.testing.assert_array_equal(words.reshape(-1), want)
        for name in ("parents", "hierarchy_reverse", "links_forward"):
            a, b = getattr(whole, name), getattr(split, name)
            if name == "parents":
                assert read_array(device, a).tolist() == read_array(device, b).tolist()
            else:
                assert read_array(device, a.neighbors).tolist() == read_array(device, b.neighbors).tolist()
                assert read_array(device, a.offsets).tolist() == read_array(device, b.offsets).tolist()
        graph = gpuviz.GPUCommandGraph(device, id="chunked-import")
        views = split.import_to_graph(graph, id="c")
        assert "records-packed" not in views and [v.length for v in views["records-chunks"]] == [4096, 2904]
        assert sum(views["records"].chunk_lengths) == 7000
        assert graph.buffers["c-records-1"].buffer is split.record_chunks[1][2]
        with pytest.raises(gpuviz.errors.GraphValidationError, match="max_chunk_bytes"):
            GPUTraceScene(device, trace, max_chunk_bytes=1000)
    finally:
        whole.destroy()
        split.destroy()


def test_writes_flushed_by_empty_submits(device, monkeypatch):
    """An empty submit every few KiB of queued writes (and small write pieces)
    leaves every table as one final flush does."""
    monkeypatch.setattr("gpuviz.trace.scene._SUBMIT_BYTES", 4096)
    monkeypatch.setattr("gpuviz.trace.scene._WRITE_PIECE", 1000)
    trace = synthetic(spans=5000, processes=3, threads_per_process=2, links=300, seed=11)
    scene = GPUTraceScene(device, trace)
    try:
        check_scene(device, trace, scene)
    finally:
        scene.destroy()
