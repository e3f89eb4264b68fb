"""GPUPointSpatialFilter against the numpy oracle, over every row and over a
grid query's candidates (the same mask): bounds, radius, point and lasso
(convex, self-intersecting, 3 and 256 vertices) queries in 2-D and 3-D,
packed and chunked with empty and uneven chunks, NaN/inf rows, a sequence
of query changes with no new pipeline, broad-phase overflow and ignored
out-of-domain rows reported, the mask feeding GPUVisibilityWorkflow with a
selection, and the named errors (query records and the filter)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.oracles import spatial as oracle
from gpuviz.spatial import QUERY_WORDS, GPUGridIndex, GPUPointSpatialFilter, query_record, write_query

from .conftest import SpatialRun, filled, points_view

DOM2 = ((0.0, 0.0), (10.0, 10.0))
DOM3 = ((-1.0, 0.0, 2.0), (1.0, 4.0, 3.0))
STAR = [(5 + 4 * np.cos(t) * (1 if k % 2 else 0.4), 5 + 4 * np.sin(t) * (1 if k % 2 else 0.4))
        for k, t in enumerate(np.linspace(0, 2 * np.pi, 256, endpoint=False))]
QUERIES2 = [dict(bounds=((2, 3), (5, 7))), dict(radius=((4, 4), 2.5)), dict(radius=((0, 0), 0)),
            dict(polygon=[(1, 1), (8, 2), (5, 9), (2, 6)]), dict(polygon=[(1, 1), (9, 9), (9, 1), (1, 9)]),
            dict(polygon=[(0, 0), (10, 0), (0, 10)]), dict(polygon=STAR), dict(bounds=((0, 0), (10, 10))), {}]
QUERIES3 = [dict(bounds=((-0.5, 1, 2.2), (0.3, 3.5, 2.9))), dict(radius=((0, 2, 2.5), 0.7)),
            dict(point=(0.25, 1.5, 2.75)), {}]


def check(run, words, got):
    want = oracle.point_filter(run.points, words)
    np.testing.assert_array_equal(got["umask"], want)
    assert got["ustats"]["selected_count"] == want.sum() and got["ustats"]["tested_count"] == len(run.points)
    assert (got["ustats"]["broad_phase_overflow"], got["ustats"]["broad_phase_ignored"]) == (0, 0)
    complete = got["fstats"]["broad_phase_overflow"] == 0 and got["fstats"]["broad_phase_ignored"] == 0
    if complete:
        np.testing.assert_array_equal(got["imask"], want)
    else:  # an incomplete broad phase may miss rows, never invent them
        assert not (got["imask"] & ~want.astype(bool)).any()
    assert got["fstats"]["selected_count"] == got["imask"].sum()
    assert got["fstats"]["tested_count"] == got["qstats"]["written_count"]
    return want, complete


def make(device, points, domain, cells, **kwargs):
    run = SpatialRun(device, points, domain=domain, cells=cells, **kwargs)
    run.domain = domain
    return run


@pytest.mark.parametrize("chunks", [None, [0, 1500, 1, 0, 999]])
def test_indexed_equals_unindexed_2d(device, chunks, compiled_pipelines):
    rng = np.random.default_rng(21)
    points = rng.uniform(0, 10, (2500, 2)).astype(np.float32)
    points[::89, 1] = np.nan
    points[::97, 0] = np.inf
    points[5] = (3.0, 4.0)  # a point query's exact hit
    run = make(device, points, DOM2, (9, 7), chunks=chunks)
    run.run(point=(3.0, 4.0))
    made = len(compiled_pipelines)
    for query in QUERIES2 + [dict(point=(3.0, 4.0))]:
        words, got = run.run(**query)
        want, complete = check(run, words, got)
        assert complete
        assert not want[np.isnan(points).any(axis=1) | np.isinf(points).any(axis=1)].any()
    assert len(compiled_pipelines) == made  # every query change was a buffer write


@pytest.mark.parametrize("chunks", [None, [700, 0, 1300]])
def test_indexed_equals_unindexed_3d(device, chunks):
    rng = np.random.default_rng(22)
    points = rng.uniform((-1, 0, 2), (1, 4, 3), (2000, 3)).astype(np.float32)
    points[9] = (0.25, 1.5, 2.75)
    run = make(device, points, DOM3, (3, 4, 5), chunks=chunks)
    for query in QUERIES3:
        words, got = run.run(**query)
        assert check(run, words, got)[1]
    assert got["umask"].sum() == 0  # the empty query


def test_one_row_and_empty(device):
    run = make(device, [[2.0, 2.0]], DOM2, (2, 2))
    words, got = run.run(radius=((2.5, 2.5), 1))
    assert check(run, words, got)[1] and got["umask"][0] == 1 and got["imask"][0] == 1
    run = make(device, np.zeros((0, 2), np.float32), DOM2, (2, 2), chunks=[0, 0])
    words, got = run.run(bounds=((0, 0), (10, 10)))
    assert got["fstats"]["selected_count"] == 0 and got["ustats"]["tested_count"] == 0


def test_broad_phase_overflow_is_reported(device):
    rng = np.random.default_rng(23)
    points = rng.uniform(0, 10, (1500, 2)).astype(np.float32)
    run = make(device, points, DOM2, (4, 4), out_capacity=100)
    words, got = run.run(bounds=((1, 1), (9, 9)))
    _, complete = check(run, words, got)
    assert not complete and got["fstats"]["broad_phase_overflow"] == got["qstats"]["overflow"] > 0
    run = make(device, points, DOM2, (4, 4), capacity=1000)
    words, got = run.run(bounds=((1, 1), (9, 9)))
    assert not check(run, words, got)[1] and got["fstats"]["broad_phase_overflow"] > 0


def test_rows_outside_the_domain_are_reported_not_lost_silently(device):
    rng = np.random.default_rng(24)
    points = rng.uniform(-3, 13, (1500, 2)).astype(np.float32)
    run = make(device, points, DOM2, (5, 5))
    words, got = run.run(radius=((0, 0), 4))
    _, complete = check(run, words, got)
    assert not complete and got["fstats"]["broad_phase_ignored"] == got["istats"]["outside"]
    words, got = run.run(radius=((5, 5), 2))  # inside the domain: complete
    assert check(run, words, got)[1]


def test_mask_feeds_visibility_with_a_selection(device):
    rng = np.random.default_rng(25)
    n = 1800
    points = rng.uniform(0, 10, (n, 2)).astype(np.float32)
    selection = (rng.random(n) < 0.5).astype(np.uint32)
    graph = gpuviz.GPUCommandGraph(device, id="vis")
    view, _ = points_view(device, graph, points)
    query_data = filled(device, QUERY_WORDS, 0)
    bufs = {"query": query_data, "ids": filled(device, n), "cands": filled(device, n), "mask": filled(device, n),
            "sel": gpuviz.GPUData.from_numpy(device, selection), "out": filled(device, n), "count": filled(device, 1)}
    v = {k: graph.import_gpu_data(k, b) for k, b in bufs.items()}
    index = GPUGridIndex(id="grid", points=view, domain=DOM2, cells=(8, 8))
    index.add_to_graph(graph)
    from gpuviz.spatial import GPUGridIndexQuery
    query = GPUGridIndexQuery(id="q", index=index, query=v["query"], candidates=v["cands"])
    query.add_to_graph(graph)
    GPUPointSpatialFilter(id="exact", points=view, query=v["query"], candidates=query,
                          mask=v["mask"]).add_to_graph(graph)
    gpuviz.GPUVisibilityWorkflow(id="vis", output=v["out"], count=v["count"], masks=[v["mask"], v["sel"]],
                                 length=n).add_to_graph(graph)
    compiled = graph.compile()
    for q in (dict(polygon=[(1, 1), (9, 2), (4, 8)]), dict(radius=((6, 6), 3))):
        words = write_query(query_data, queue=device.queue, **q)
        encoder = device.create_command_encoder()
        compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        want = np.flatnonzero(oracle.point_filter(points, words) & selection)
        count = int(gpuviz.read_array(device, bufs["count"])[0])
        assert count == len(want)
        np.testing.assert_array_equal(gpuviz.read_array(device, bufs["out"])[:count], want)


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, match", [
    (dict(polygon=[(0, 0), (1, 1)]), "3 to 256 vertices"),
    (dict(polygon=[(0, k) for k in range(257)]), "3 to 256 vertices"),
    (dict(polygon=[(0, 0, 0)] * 3), "sequence of \\(x, y\\) vertices"),
    (dict(dims=3, polygon=[(0, 0), (1, 0), (0, 1)]), "polygon queries are 2-D"),
    (dict(point=(np.nan, 0)), "finite"),
    (dict(point=(0, 0, 0)), "2 coordinates"),
    (dict(bounds=((2, 0), (1, 1))), "exceeds maximum"),
    (dict(bounds=(1, 2, 3)), "bounds must be"),
    (dict(radius=((0, 0), -1)), "radius must be >= 0"),
    (dict(radius=((0, 0), np.inf)), "finite"),
    (dict(radius=((0, 0), 1), point=(0, 0)), "exactly one"),
    (dict(dims=4), "dims must be 2 or 3"),
])
def test_query_record_errors(kwargs, match):
    with pytest.raises(GraphValidationError, match=match):
        query_record(**kwargs)


def test_query_record_layout():
    words = query_record(polygon=[(1, 2), (5, -1), (3, 4)])
    f = words.view(np.float32)
    assert words[0] == 4 and words[1] == 3 and list(f[4:6]) == [1, -1] and list(f[8:10]) == [5, 4]
    assert list(f[16:22]) == [1, 2, 5, -1, 3, 4] and len(words) == QUERY_WORDS
    assert not query_record().any()


def test_filter_errors(device):
    graph = gpuviz.GPUCommandGraph(device, id="errors")
    view, _ = points_view(device, graph, np.zeros((4, 2), np.float32))
    query = graph.import_gpu_data("query", filled(device, QUERY_WORDS))
    mask = graph.import_gpu_data("mask", filled(device, 4))
    with pytest.raises(GraphValidationError, match="candidates must be a GPUGridIndexQuery"):
        GPUPointSpatialFilter(id="f", points=view, query=query, candidates=object(), mask=mask)
    short = graph.import_gpu_data("short", filled(device, 3))
    with pytest.raises(GraphValidationError, match='GPUPointSpatialFilter "f" mask is shorter'):
        GPUPointSpatialFilter(id="f", points=view, query=query, mask=short).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="mask and query share buffer"):
        GPUPointSpatialFilter(id="f", points=view, query=query, mask=query).add_to_graph(graph)
    with pytest.raises(GraphTypeError):
        write_query("nowhere", queue=device.queue, point=(0, 0))
    with pytest.raises(GraphValidationError, match="needs 2112 bytes"):
        write_query(filled(device, 10), queue=device.queue, point=(0, 0))
    other = graph.import_gpu_data("other", gpuviz.GPUData.from_numpy(device, np.zeros((5, 2), np.float32)))
    index = GPUGridIndex(id="g", points=other, domain=DOM2, cells=(2, 2))
    index.add_to_graph(graph)
    from gpuviz.spatial import GPUGridIndexQuery
    q = GPUGridIndexQuery(id="q", index=index, query=query, candidates=graph.import_gpu_data("c", filled(device, 5)))
    with pytest.raises(GraphStateError, match="have not been added"):
        GPUPointSpatialFilter(id="f", points=view, query=query, candidates=q, mask=mask).add_to_graph(graph)
    q.add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="are not the candidates' index points"):
        GPUPointSpatialFilter(id="f", points=view, query=query, candidates=q, mask=mask).add_to_graph(graph)


# ----------------------------------------------------- adversarial and random
def test_points_on_cell_edges_and_circles(device):
    """Points on a lattice whose lines are the cell edges; radius queries
    with many points at exactly distance r (3-4-5 triangles) and bounds on
    the edges: the indexed mask still equals the unindexed one."""
    xs = np.arange(0, 10.25, 0.25, dtype=np.float32)
    points = np.stack(np.meshgrid(xs, xs), axis=-1).reshape(-1, 2)
    run = make(device, points, DOM2, (10, 8))
    for query in (dict(radius=((5, 5), 5)), dict(radius=((2, 2), 2.5)), dict(radius=((0, 0), 10)),
                  dict(radius=((7.25, 3.5), 1.25)), dict(bounds=((2.5, 1.25), (5, 3.75))),
                  dict(bounds=((0, 0), (0, 0))), dict(point=(10, 10)), dict(point=(2.5, 3.75)),
                  dict(polygon=[(0, 0), (5, 0), (5, 5), (0, 5)]), dict(polygon=[(2.5, 2.5), (7.5, 2.5), (5, 7.5)])):
        words, got = run.run(**query)
        want, complete = check(run, words, got)
        assert complete and want.sum() > 0, query


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), dims=st.sampled_from([2, 3]), n=st.integers(0, 900),
       chunked=st.booleans())
def test_property_indexed_equals_unindexed(device, seed, dims, n, chunked):
    rng = np.random.default_rng(seed)
    domain = DOM2 if dims == 2 else DOM3
    lo, hi = (np.asarray(c, np.float32) for c in domain)
    points = rng.uniform(lo, hi, (n, dims)).astype(np.float32)
    if n:
        points[rng.random(n) < 0.03] = np.nan
    chunks = None
    if chunked:
        cuts = np.sort(rng.integers(0, n + 1, 3))
        chunks = list(np.diff(np.concatenate([[0], cuts, [n]])))
    cells = tuple(int(c) for c in rng.integers(1, 7, dims))
    run = make(device, points, domain, cells, chunks=chunks)
    for _ in range(4):  # dynamic query changes on one compiled graph
        a = rng.uniform(lo, hi).astype(np.float32)
        b = rng.uniform(lo, hi).astype(np.float32)
        kind = rng.integers(0, 4 if dims == 3 else 5)
        if kind == 0:
            query = dict(bounds=(np.minimum(a, b), np.maximum(a, b)))
        elif kind == 1:
            query = dict(radius=(a, float(rng.uniform(0, 2))))
        elif kind == 2:
            query = dict(point=points[rng.integers(n)] if n and np.isfinite(points).all() else a)
        elif kind == 3:
            query = {}
        else:
            query = dict(polygon=rng.uniform(lo, hi, (int(rng.integers(3, 12)), 2)))
        words, got = run.run(**query)
        assert check(run, words, got)[1]
