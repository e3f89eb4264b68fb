"""GPUGridIndexQuery against the numpy oracle: point, bounds, radius and
lasso queries (their bounds) in 2-D and 3-D, packed and chunked; queries
reaching past the domain, wholly outside it, invalid records; output
capacity exactly full and one short; an index truncated by its capacity;
the mask; empty indexes; query changes as buffer writes with no new
pipeline; and the named errors."""

import numpy as np
import pytest

import gpuviz
from gpuviz.errors import GraphStateError, GraphValidationError
from gpuviz.oracles import spatial as oracle
from gpuviz.spatial import QUERY_WORDS, GPUGridIndex, GPUGridIndexQuery, query_record

from .conftest import SpatialRun, filled, points_view

DOM2 = ((0.0, 0.0), (10.0, 10.0))
DOM3 = ((-1.0, 0.0, 2.0), (1.0, 4.0, 3.0))

QUERIES2 = [dict(point=(3.3, 7.1)), dict(point=(10, 10)), dict(point=(0, 0)), dict(bounds=((2, 3), (5, 7))),
            dict(bounds=((0, 0), (10, 10))), dict(bounds=((-5, -5), (3, 3))), dict(bounds=((11, 11), (12, 12))),
            dict(bounds=((4, 4), (4, 4))), dict(radius=((4, 4), 2.5)), dict(radius=((0, 10), 0)),
            dict(radius=((5, 5), 100)), dict(polygon=[(1, 1), (8, 2), (5, 9), (2, 6)]),
            dict(polygon=[(1, 1), (9, 9), (9, 1), (1, 9)]), {}]
QUERIES3 = [dict(point=(0.1, 2.2, 2.5)), dict(bounds=((-0.5, 1, 2.2), (0.3, 3.5, 2.9))),
            dict(radius=((0, 2, 2.5), 0.7)), dict(bounds=((-2, -1, 1), (0, 1, 2.5))), {}]


def check(run, words, got, out_capacity, capacity=None):
    domain, cells = run.domain, run.cells
    index = oracle.grid_index(run.points, domain, cells, capacity)
    want, stats = oracle.grid_query(index, words, domain, cells, out_capacity)
    assert {k: got["qstats"][k] for k in stats} == stats
    written = stats["written_count"]
    np.testing.assert_array_equal(got["cands"][:written], want[:written])
    mask = np.zeros(len(run.points), np.uint32)
    mask[want] = 1
    np.testing.assert_array_equal(got["cmask"], mask)
    return want, stats


def make(device, points, domain, cells, **kwargs):
    run = SpatialRun(device, points, domain=domain, cells=cells, **kwargs)
    run.domain = domain
    return run


@pytest.mark.parametrize("chunks", [None, [900, 0, 1100, 0, 1000]])
def test_queries_2d(device, chunks):
    rng = np.random.default_rng(11)
    points = rng.uniform(-1, 11, (3000, 2)).astype(np.float32)
    points[::101] = np.nan
    run = make(device, points, DOM2, (7, 9), chunks=chunks)
    for query in QUERIES2:
        words, got = run.run(**query)
        check(run, words, got, 3000)


@pytest.mark.parametrize("chunks", [None, [1, 0, 2499]])
def test_queries_3d(device, chunks):
    rng = np.random.default_rng(12)
    points = rng.uniform((-1.2, -0.2, 1.9), (1.2, 4.2, 3.1), (2500, 3)).astype(np.float32)
    run = make(device, points, DOM3, (4, 5, 3), chunks=chunks)
    for query in QUERIES3:
        words, got = run.run(**query)
        check(run, words, got, 2500)


def test_reaching_past_the_domain_reports_ignored_rows(device):
    rng = np.random.default_rng(13)
    points = rng.uniform(-1, 11, (2000, 2)).astype(np.float32)
    run = make(device, points, DOM2, (5, 5))
    words, got = run.run(bounds=((-5, -5), (3, 3)))
    check(run, words, got, 2000)
    assert got["qstats"]["ignored_outside"] == got["istats"]["outside"] > 0
    words, got = run.run(bounds=((1, 1), (3, 3)))
    assert got["qstats"]["ignored_outside"] == 0


@pytest.mark.parametrize("short", [0, 1])
def test_output_capacity_exactly_full_and_one_short(device, short):
    rng = np.random.default_rng(14)
    points = rng.uniform(0, 10, (1000, 2)).astype(np.float32)
    index = oracle.grid_index(points, DOM2, (4, 4))
    words = query_record(bounds=((0, 0), (4.9, 4.9)))
    full = len(oracle.grid_query(index, words, DOM2, (4, 4), 1000)[0])
    run = make(device, points, DOM2, (4, 4), out_capacity=full - short)
    words, got = run.run(bounds=((0, 0), (4.9, 4.9)))
    _, stats = check(run, words, got, full - short)
    assert stats["overflow"] == short and stats["candidate_count"] == full
    assert got["cands"][-1] != 0xDEADBEEF


def test_truncated_index_is_propagated(device):
    rng = np.random.default_rng(15)
    points = rng.uniform(0, 10, (1200, 2)).astype(np.float32)
    run = make(device, points, DOM2, (6, 6), capacity=700)
    for query in (dict(bounds=((0, 0), (10, 10))), dict(bounds=((6, 6), (9, 9))), dict(point=(1, 1))):
        words, got = run.run(**query)
        _, stats = check(run, words, got, 1200, capacity=700)
    words, got = run.run(bounds=((0, 0), (10, 10)))
    assert got["qstats"]["index_overflow"] == 500 and got["qstats"]["overflow"] == 500


def test_clustered_and_empty_indexes(device):
    points = np.full((600, 2), 9.99, np.float32)
    run = make(device, points, DOM2, (3, 3))
    words, got = run.run(point=(9.5, 9.5))
    want, _ = check(run, words, got, 600)
    np.testing.assert_array_equal(want, np.arange(600))
    empty = make(device, np.zeros((0, 2), np.float32), DOM2, (3, 3), chunks=[0, 0])
    words, got = empty.run(bounds=((0, 0), (10, 10)))
    assert got["qstats"]["candidate_count"] == 0 and got["qstats"]["cell_count"] == 9


def test_invalid_records_select_nothing(device):
    """A GPU node (or a careless write) may put anything in the record."""
    rng = np.random.default_rng(16)
    points = rng.uniform(0, 10, (500, 2)).astype(np.float32)
    run = make(device, points, DOM2, (4, 4))
    bad = []
    for kind, a, b, r, n in ((2, (5, 5), (1, 1), 0, 0), (2, (np.nan, 0), (1, 1), 0, 0), (3, (1, 1), (0, 0), -1, 0),
                             (3, (np.inf, 1), (0, 0), 1, 0), (4, (0, 0), (5, 5), 0, 2), (4, (0, 0), (5, 5), 0, 300),
                             (9, (0, 0), (10, 10), 0, 0)):
        words = np.zeros(QUERY_WORDS, np.uint32)
        f = words.view(np.float32)
        words[0], words[1] = kind, n
        f[4:6], f[8:10], f[7] = a, b, r
        bad.append(words)
    for words in bad:
        run.device.queue.write_buffer(run.bufs["query"].buffer, 0, words.tobytes())
        encoder = device.create_command_encoder()
        run.compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        got = gpuviz.read_array(device, run.bufs["qstats"])
        assert got[0] == 0 and got[5] == 0, words[:12]
        assert oracle.grid_query(oracle.grid_index(points, DOM2, (4, 4)), words, DOM2, (4, 4), 500)[1][
            "candidate_count"] == 0


def test_query_changes_are_buffer_writes(device, compiled_pipelines):
    rng = np.random.default_rng(17)
    points = rng.uniform(0, 10, (800, 2)).astype(np.float32)
    run = make(device, points, DOM2, (5, 5))
    run.run(point=(1, 1))
    made = len(compiled_pipelines)
    for query in QUERIES2:
        words, got = run.run(**query)
        check(run, words, got, 800)
    assert len(compiled_pipelines) == made


def test_errors(device):
    graph = gpuviz.GPUCommandGraph(device, id="errors")
    view, _ = points_view(device, graph, np.zeros((4, 2), np.float32))
    query = graph.import_gpu_data("query", filled(device, QUERY_WORDS))
    out = graph.import_gpu_data("out", filled(device, 4))
    index = GPUGridIndex(id="g", points=view, domain=DOM2, cells=(2, 2))
    with pytest.raises(GraphStateError, match='index "g" has not been added'):
        GPUGridIndexQuery(id="q", index=index, query=query, candidates=out).add_to_graph(graph)
    index.add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="index must be a GPUGridIndex"):
        GPUGridIndexQuery(id="q", index=object(), query=query, candidates=out).add_to_graph(graph)
    short = graph.import_gpu_data("short", filled(device, QUERY_WORDS - 1))
    with pytest.raises(GraphValidationError, match=f"query is shorter than needed \\(needs {QUERY_WORDS}"):
        GPUGridIndexQuery(id="q", index=index, query=short, candidates=out).add_to_graph(graph)
    mask = graph.import_gpu_data("mask", filled(device, 3))
    with pytest.raises(GraphValidationError, match="mask is shorter"):
        GPUGridIndexQuery(id="q", index=index, query=query, candidates=out, mask=mask).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="candidates and query share buffer"):
        GPUGridIndexQuery(id="q", index=index, query=query, candidates=query).add_to_graph(graph)
    other = gpuviz.GPUCommandGraph(device, id="other")
    oq = other.import_gpu_data("query", filled(device, QUERY_WORDS))
    oo = other.import_gpu_data("out", filled(device, 4))
    with pytest.raises(GraphStateError, match='belongs to graph "errors"'):
        GPUGridIndexQuery(id="q", index=index, query=oq, candidates=oo).add_to_graph(other)
