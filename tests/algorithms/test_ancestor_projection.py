"""GPUAncestorProjection against a numpy walk: random forests and random
graphs (cycles, self loops), deep chains at the max_depth boundary, missing
and out-of-range parents, vectors with empty and uneven chunks and
cross-chunk parents, visibility changes by buffer writes, zero length and
errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms.ancestor_projection import WALK, GPUAncestorProjection, projection_rounds
from gpuviz.oracles.algorithms import ancestor_projection as projection_oracle
from gpuviz.tables import GPUData

from .conftest import TILE, gpu_data, gpu_vector, new_graph, read, run, shared_vector, submit_encodings

NONE = 0xFFFFFFFF
SENTINEL = 0xDEADBEEF


def trace_like(rng, n, depth=32, root_share=0.02):
    """Parents a few rows back (spans nest inside earlier spans of their
    thread), depth bounded, a few roots."""
    parents = np.full(n, NONE, np.uint32)
    depth_of = np.zeros(n, np.int64)
    back = rng.integers(1, 8, n)
    for i in range(1, n):
        p = i - back[i]
        if p >= 0 and depth_of[p] < depth and rng.random() > root_share:
            parents[i] = p
            depth_of[i] = depth_of[p] + 1
    return parents


def random_graph(rng, n):
    """Arbitrary parents: cycles, self loops, out-of-range IDs and roots."""
    parents = rng.integers(0, max(n, 1) + 3, n).astype(np.uint32)
    parents[rng.random(n) < 0.05] = NONE
    return parents


def project(device, parents, visibility, *, max_depth=32, invalid=NONE, chunks=None):
    n = len(parents)
    graph = new_graph(device)
    if chunks is None:
        out = gpu_data(device, np.full(n + 2, SENTINEL, np.uint32))
        views = [graph.import_gpu_data("p", gpu_data(device, parents)),
                 graph.import_gpu_data("v", gpu_data(device, visibility)), graph.import_gpu_data("o", out)]
    else:
        cuts = np.cumsum(chunks)[:-1]
        out = gpu_vector(device, np.split(np.full(n, SENTINEL, np.uint32), cuts))
        views = [graph.import_gpu_vector("p", gpu_vector(device, np.split(np.asarray(parents, np.uint32), cuts))),
                 graph.import_gpu_vector("v", gpu_vector(device, np.split(np.asarray(visibility, np.uint32), cuts))),
                 graph.import_gpu_vector("o", out)]
    GPUAncestorProjection(id="proj", parents=views[0], visibility=views[1], output=views[2], max_depth=max_depth,
                          invalid=invalid).add_to_graph(graph)
    run(graph)
    got = read(device, out)
    if chunks is None:
        assert got[n:].tolist() == [SENTINEL, SENTINEL], "rows past the nodes changed"
        got = got[:n]
    return got


SIZES = [0, 1, 2, 255, 256, 257, 1023, 1024, 1025, TILE + 1, 3 * TILE + 5]
DEPTHS = [0, 1, 2, WALK - 1, WALK, WALK + 1, 7, 8, 9, 31, 32, 33, 100]


@settings(max_examples=16, deadline=None)
@given(n=st.one_of(st.sampled_from(SIZES), st.integers(0, 2 * TILE)), shape=st.sampled_from(["trace", "random"]),
       density=st.sampled_from([0.0, 0.05, 0.3, 1.0]), max_depth=st.sampled_from(DEPTHS),
       invalid=st.sampled_from([NONE, 0, 7]), seed=st.integers(0, 2**16))
def test_matches_numpy(device, n, shape, density, max_depth, invalid, seed):
    rng = np.random.default_rng(seed)
    parents = trace_like(rng, n, depth=40) if shape == "trace" else random_graph(rng, n)
    visibility = (rng.random(n) < density).astype(np.uint32) * rng.integers(1, 5, n).astype(np.uint32)
    got = project(device, parents, visibility, max_depth=max_depth, invalid=invalid)
    np.testing.assert_array_equal(got, projection_oracle(parents, visibility, max_depth, invalid))


@pytest.mark.parametrize("max_depth", [0, 1, WALK, 5, 31, 32, 33, 64, 200])
def test_deep_chain_boundary(device, max_depth):
    """A chain 0 <- 1 <- ... <- 299 with only node 0 visible: node i finds 0
    exactly when i <= max_depth."""
    n = 300
    parents = np.concatenate([[NONE], np.arange(n - 1)]).astype(np.uint32)
    visibility = np.zeros(n, np.uint32)
    visibility[0] = 1
    got = project(device, parents, visibility, max_depth=max_depth)
    expected = np.where(np.arange(n) <= max_depth, 0, NONE).astype(np.uint32)
    np.testing.assert_array_equal(got, expected)


def test_cycles_never_loop(device):
    """A hidden ring, a ring with one visible node, a self loop, and tails
    running into each."""
    parents = np.array([1, 2, 3, 0,      # 0-3: hidden ring
                        5, 6, 4,         # 4-6: ring, 6 visible
                        7,               # 7: hidden self loop
                        8,               # 8: visible self loop
                        0, 9, 4, 7, 8],  # 9-13: tails into the rings and loops
                       np.uint32)
    visibility = np.zeros(parents.size, np.uint32)
    visibility[[6, 8]] = 1
    for max_depth in (0, 3, 32, 1000):
        got = project(device, parents, visibility, max_depth=max_depth)
        np.testing.assert_array_equal(got, projection_oracle(parents, visibility, max_depth))
    got = project(device, parents, visibility, max_depth=32)
    assert got[:4].tolist() == [NONE] * 4 and got[[7, 9, 10, 12]].tolist() == [NONE] * 4
    assert got[[4, 5, 6, 11]].tolist() == [6, 6, 6, 6] and got[[8, 13]].tolist() == [8, 8]


def test_missing_and_out_of_range_parents_are_roots(device):
    parents = np.array([NONE, 0, 4, 5, 1 << 31, 3, 2], np.uint32)  # n = 7: 4 -> (1 << 31) is out of range
    visibility = np.array([1, 0, 0, 0, 0, 0, 0], np.uint32)
    got = project(device, parents, visibility, max_depth=10)
    assert got.tolist() == [0, 0, NONE, NONE, NONE, NONE, NONE]
    np.testing.assert_array_equal(got, projection_oracle(parents, visibility, 10))


@settings(max_examples=8, deadline=None)
@given(chunks=st.lists(st.sampled_from([0, 1, 3, 255, 257, 1030]), min_size=1, max_size=5),
       shape=st.sampled_from(["trace", "random"]), seed=st.integers(0, 2**16))
def test_vectors_match_packed(device, chunks, shape, seed):
    """Parents are global IDs: chains cross chunk boundaries in both
    directions; empty chunks keep their place."""
    n = sum(chunks)
    rng = np.random.default_rng(seed)
    parents = trace_like(rng, n) if shape == "trace" else random_graph(rng, n)
    visibility = (rng.random(n) < 0.2).astype(np.uint32)
    got = project(device, parents, visibility, max_depth=9, chunks=chunks)
    np.testing.assert_array_equal(got, projection_oracle(parents, visibility, 9))


def test_shared_buffer_chunks_keep_guard_words(device):
    chunks = [6, 0, 300, 3]
    n = sum(chunks)
    rng = np.random.default_rng(4)
    parents, visibility = random_graph(rng, n), (rng.random(n) < 0.3).astype(np.uint32)
    starts = [2, 9, 9, 313]
    out = shared_vector(device, [np.zeros(c) for c in chunks], starts, fill=SENTINEL)
    cuts = np.cumsum(chunks)[:-1]
    graph = new_graph(device)
    GPUAncestorProjection(id="proj", parents=graph.import_gpu_vector("p", gpu_vector(device, np.split(parents, cuts))),
                          visibility=graph.import_gpu_vector("v", gpu_vector(device, np.split(visibility, cuts))),
                          output=graph.import_gpu_vector("o", out), max_depth=12).add_to_graph(graph)
    run(graph)
    np.testing.assert_array_equal(read(device, out), projection_oracle(parents, visibility, 12))
    words = read(device, GPUData(out.chunks[0].buffer, format="uint32", length=out.chunks[0].buffer.size // 4))
    inside = np.zeros(words.size, bool)
    for s, c in zip(starts, chunks):
        inside[s:s + c] = True
    assert (words[~inside] == SENTINEL).all()


def test_visibility_change_is_a_buffer_write(device, compiled_pipelines):
    rng = np.random.default_rng(6)
    n = 5000
    parents = trace_like(rng, n)
    vis = gpu_data(device, np.zeros(n, np.uint32))
    out = gpu_data(device, np.zeros(n, np.uint32))
    graph = new_graph(device)
    GPUAncestorProjection(id="proj", parents=graph.import_gpu_data("p", gpu_data(device, parents)),
                          visibility=graph.import_gpu_data("v", vis), output=graph.import_gpu_data("o", out)
                          ).add_to_graph(graph)
    compiled = graph.compile()
    made = len(compiled_pipelines)
    for density in (0.0, 0.1, 0.7):
        visibility = (rng.random(n) < density).astype(np.uint32)
        device.queue.write_buffer(vis.buffer, vis.byte_offset, visibility.tobytes())
        submit_encodings(device, compiled, 1)
        np.testing.assert_array_equal(read(device, out), projection_oracle(parents, visibility, 32))
    assert len(compiled_pipelines) == made


@pytest.mark.parametrize("walk", [1, 2, 7, 64])
def test_walk_steps_change_passes_not_results(device, walk):
    rng = np.random.default_rng(walk)
    n = 3000
    parents, visibility = random_graph(rng, n), (rng.random(n) < 0.15).astype(np.uint32)
    for max_depth in (0, walk - 1, walk, 33):
        graph = new_graph(device)
        out = gpu_data(device, np.zeros(n))
        projection = GPUAncestorProjection(id="proj", parents=graph.import_gpu_data("p", gpu_data(device, parents)),
                                           visibility=graph.import_gpu_data("v", gpu_data(device, visibility)),
                                           output=graph.import_gpu_data("o", out), max_depth=max_depth)
        projection.walk_steps = walk
        projection.add_to_graph(graph)
        assert projection.rounds == projection_rounds(max_depth, walk=walk)
        run(graph)
        np.testing.assert_array_equal(read(device, out), projection_oracle(parents, visibility, max_depth))


def test_rounds_grow_with_log_depth():
    """Passes after the walk: the least R with WALK * 2**R > max_depth."""
    assert WALK == 4, "the table below assumes a 4-step walk"
    assert [projection_rounds(d) for d in (0, 3, 4, 7, 8, 31, 32, 1000, 1 << 24)] == [0, 0, 1, 1, 2, 3, 4, 8, 23]
    for d in (1, 5, 32, 999, 1 << 20):
        r = projection_rounds(d)
        assert WALK << r > d and (r == 0 or WALK << (r - 1) <= d)


def test_zero_nodes_add_no_nodes(device, graph):
    e = [graph.import_gpu_data(k, gpu_data(device, [])) for k in "pvo"]
    assert GPUAncestorProjection(id="a", parents=e[0], visibility=e[1], output=e[2]).add_to_graph(graph) == []
    v = [graph.import_gpu_vector(k + "v", gpu_vector(device, [[], []])) for k in "pvo"]
    assert GPUAncestorProjection(id="b", parents=v[0], visibility=v[1], output=v[2]).add_to_graph(graph) == []


def test_errors(device, graph):
    p = graph.import_gpu_data("p", gpu_data(device, np.zeros(10)))
    v = graph.import_gpu_data("v", gpu_data(device, np.ones(10)))
    o = graph.import_gpu_data("o", gpu_data(device, np.zeros(10)))
    short = graph.import_gpu_data("short", gpu_data(device, np.zeros(9)))
    f = graph.import_gpu_data("f", gpu_data(device, np.zeros(10), np.float32))
    pv = graph.import_gpu_vector("pv", gpu_vector(device, [np.zeros(4), np.zeros(6)]))
    vv = graph.import_gpu_vector("vv", gpu_vector(device, [np.zeros(5), np.zeros(5)]))
    E = gpuviz.GraphValidationError

    def proj(**kw):
        args = dict(id="a", parents=p, visibility=v, output=o)
        args.update(kw)
        return GPUAncestorProjection(**args).add_to_graph(graph)

    with pytest.raises(E, match=r'GPUAncestorProjection "a" max_depth must be in \[0, 16777216\] \(got -1\)'):
        proj(max_depth=-1)
    with pytest.raises(gpuviz.GraphTypeError, match="max_depth must be an int"):
        proj(max_depth=2.0)
    with pytest.raises(E, match=r"invalid must be in \[0, 4294967295\] \(got 4294967296\)"):
        proj(invalid=1 << 32)
    with pytest.raises(E, match='"a" parents must be uint32 \\(got float32\\)'):
        proj(parents=f)
    with pytest.raises(E, match="visibility has 9 rows but parents has 10"):
        proj(visibility=short)
    with pytest.raises(E, match="output is shorter than parents \\(needs 10 rows, got 9\\)"):
        proj(output=short)
    with pytest.raises(E, match="visibility is a vector view but parents is a data view"):
        proj(visibility=pv)
    with pytest.raises(E, match=r"visibility chunk lengths \[5, 5\] do not match parents chunk lengths \[4, 6\]"):
        proj(parents=pv, visibility=vv)
    with pytest.raises(E, match='output and parents share buffer "p"'):
        proj(output=p)
    with pytest.raises(E, match='output and visibility share buffer "v"'):
        proj(output=v)
    bad = GPUAncestorProjection(id="a", parents=p, visibility=v, output=o)
    bad.walk_steps = 0
    with pytest.raises(E, match=r'"a" walk_steps must be an int in \[1, 64\] \(got 0\)'):
        bad.add_to_graph(graph)
    words = graph.import_gpu_data("w", gpu_data(device, np.zeros(20)))
    lo = graph.create_data_view(words.handle, format="uint32", length=10)
    hi = graph.create_data_view(words.handle, format="uint32", length=10, byte_offset=40)
    with pytest.raises(E, match='output and parents share buffer "w"'):
        proj(parents=lo, output=hi)


def test_topology_bench_tiny(device, capsys):
    """The layout and projection benchmark cases at a tiny size: every row
    printed only after matching numpy (a mismatch raises), the trace-like
    generator keeps depth <= 32 with parents before children."""
    from gpuviz.bench.harness import Peers
    from gpuviz.bench.tables import Report
    from gpuviz.bench.topology import bench_topology
    from gpuviz.bench.topology_layout import trace_parents

    report = Report()
    bench_topology(device, [4096], 2, peers=Peers(), report=report, parts=("layout", "projection"))
    assert report.failures == [] and "NOT PRINTED" not in capsys.readouterr().out
    tables = {t.name: t for t in report.tables}
    assert [r["case"] for r in tables["topology-layout"].rows] == ["regular (8 per parent), lanes view",
                                                                   "irregular child_parents, lanes view"]
    assert len(tables["topology-projection"].rows) == 2 and all(r["gpu_s"] > 0 for r in tables["topology-projection"].rows)
    parents = trace_parents(np.random.default_rng(0), 20000)
    has = parents != NONE
    assert (parents[has] < np.flatnonzero(has)).all()
    depth = np.zeros(parents.size, np.int64)
    for i in np.flatnonzero(has):  # parents come first, so one forward sweep finds every depth
        depth[i] = depth[parents[i]] + 1
    assert depth.max() <= 32 and depth.max() >= 16


def test_unpacked_views_are_refused(device, graph):
    words = graph.import_gpu_data("w", gpu_data(device, np.ones(20)))
    strided = graph.create_data_view(words.handle, format="uint32", length=10, byte_stride=8)
    views = {k: graph.import_gpu_data(k, gpu_data(device, np.ones(10))) for k in ("parents", "visibility", "output")}
    for role in views:
        args = dict(views, **{role: strided})
        with pytest.raises(gpuviz.ViewRangeError, match=f'GPUAncestorProjection "a" {role} must be packed'):
            GPUAncestorProjection(id="a", **args).add_to_graph(graph)
