"""GPUGridIndex against the numpy oracle: empty, one row, clustered (all in
one cell), out-of-domain, NaN/inf, the domain's exact corners, capacity
exactly full and one short, 2-D and 3-D, packed and chunked (empty and
uneven chunks), sizes around the sort's one-workgroup limit and the scan
tile, rebuilds after new point contents, and the named errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.oracles import spatial as oracle
from gpuviz.spatial import GPUGridIndex

from .conftest import SpatialRun, points_view

DOM2 = ((0.0, 0.0), (10.0, 10.0))
DOM3 = ((-1.0, 0.0, 2.0), (1.0, 4.0, 3.0))


def check_index(run, got, capacity=None):
    """The GPU index equals the oracle: offsets, stored ids, statistics."""
    dims = run.dims
    domain = DOM2 if dims == 2 else DOM3
    domain = run.domain if hasattr(run, "domain") else domain
    want = oracle.grid_index(run.points, domain, run.cells, capacity)
    np.testing.assert_array_equal(got["offsets"], want["cell_offsets"])
    stored = min(want["count"], want["capacity"])
    np.testing.assert_array_equal(got["ids"][:stored], want["ids"][:stored])
    stats = got["istats"]
    assert (stats["count"], stats["overflow"], stats["nonfinite"], stats["outside"]) == \
        (want["count"], want["overflow"], want["nonfinite"], want["outside"])
    assert stats["rows"] == len(run.points) and stats["capacity"] == want["capacity"]
    return want


def build(device, points, *, domain=DOM2, cells=(8, 8), capacity=None, chunks=None):
    run = SpatialRun(device, points, domain=domain, cells=cells, capacity=capacity, chunks=chunks)
    run.domain = domain
    _, got = run.run()
    return run, got


def uniform(rng, n, domain, margin=0.0):
    lo, hi = (np.asarray(c, np.float32) for c in domain)
    return rng.uniform(lo - margin, hi + margin, (n, len(lo))).astype(np.float32)


@pytest.mark.parametrize("chunks", [None, [0], [0, 0]])
def test_empty(device, chunks):
    run, got = build(device, np.zeros((0, 2), np.float32), chunks=chunks)
    want = check_index(run, got, capacity=1)
    assert want["count"] == 0 and got["istats"]["count"] == 0


def test_one_row(device):
    run, got = build(device, [[3.5, 7.25]], cells=(4, 4))
    want = check_index(run, got)
    assert got["ids"][0] == 0 and want["cell"][0] == 1 + 4 * 2


def test_all_in_one_cell_keeps_source_order(device):
    rng = np.random.default_rng(2)
    points = rng.uniform(2.6, 3.7, (3000, 2)).astype(np.float32)  # cell (2, 2) of a 8x8 over 0..10
    run, got = build(device, points)
    check_index(run, got)
    np.testing.assert_array_equal(got["ids"][:3000], np.arange(3000))
    assert got["offsets"][18] == 0 and got["offsets"][19] == 3000


def test_domain_corners_and_edges(device):
    """The exact maximum falls in the last cell, the minimum in the first;
    just outside is outside; NaN and inf rows are counted apart."""
    f = np.float32
    points = np.array([[0, 0], [10, 10], [10, 0], [0, 10], [np.nextafter(f(10), f(11)), 5],
                       [5, np.nextafter(f(0), f(-1))], [np.nan, 1], [1, np.inf], [-np.inf, np.nan], [5, 5]], f)
    run, got = build(device, points, cells=(5, 3))
    want = check_index(run, got, capacity=None)
    assert list(want["cell"][:4]) == [0, 14, 4, 10]
    assert (got["istats"]["outside"], got["istats"]["nonfinite"]) == (2, 3)


@pytest.mark.parametrize("short", [0, 1])
def test_capacity_exactly_full_and_one_short(device, short):
    rng = np.random.default_rng(3)
    points = uniform(rng, 500, DOM2)
    run, got = build(device, points, capacity=500 - short)
    check_index(run, got, capacity=500 - short)
    assert got["istats"]["overflow"] == short
    if short:
        assert got["ids"][-1] != 0xDEADBEEF  # every slot written, none past it


def test_three_d_with_outside_and_nonfinite(device):
    rng = np.random.default_rng(4)
    points = uniform(rng, 4000, DOM3, margin=0.3)
    points[::97, 2] = np.nan
    run, got = build(device, points, domain=DOM3, cells=(3, 5, 4))
    want = check_index(run, got)
    assert want["outside"] > 0 and want["nonfinite"] > 0


@pytest.mark.parametrize("chunks", [[700, 0, 1, 1299], [0, 2000, 0], [1, 1, 1998]])
def test_chunked_equals_packed(device, chunks):
    rng = np.random.default_rng(5)
    points = uniform(rng, 2000, DOM2, margin=1.0)
    run, got = build(device, points, chunks=chunks, cells=(13, 6))
    check_index(run, got)


@pytest.mark.parametrize("n", [2047, 2048, 2049, 12289])
def test_sizes_around_sort_and_scan_tiles(device, n):
    rng = np.random.default_rng(n)
    points = uniform(rng, n, DOM2)
    run, got = build(device, points, cells=(40, 31))
    check_index(run, got)


def test_many_cells_past_a_scan_tile(device):
    rng = np.random.default_rng(6)
    points = uniform(rng, 5000, DOM2)
    run, got = build(device, points, cells=(130, 101))  # 13130 cells: more than one scan tile
    check_index(run, got)


def test_rebuild_follows_new_points_without_recompile(device, compiled_pipelines):
    rng = np.random.default_rng(7)
    points = uniform(rng, 1000, DOM2)
    run, got = build(device, points)
    check_index(run, got)
    made = len(compiled_pipelines)
    moved = uniform(rng, 1000, DOM2, margin=2.0)
    device.queue.write_buffer(run.source.buffer, run.source.byte_offset, moved.tobytes())
    run.points = moved
    _, got = run.run(encodings=2)
    check_index(run, got)
    assert len(compiled_pipelines) == made


@settings(max_examples=8, deadline=None)
@given(n=st.integers(0, 600), nx=st.integers(1, 9), ny=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_property_random_grids(device, n, nx, ny, seed):
    rng = np.random.default_rng(seed)
    points = uniform(rng, n, DOM2, margin=1.5)
    points[rng.random(n) < 0.05] = np.nan
    run, got = build(device, points, cells=(nx, ny), capacity=max(1, n - seed % 3))
    check_index(run, got, capacity=max(1, n - seed % 3))


# ----------------------------------------------------------------- errors
@pytest.fixture
def pts(device):
    graph = gpuviz.GPUCommandGraph(device, id="errors")
    view, _ = points_view(device, graph, np.zeros((4, 2), np.float32))
    return graph, view


@pytest.mark.parametrize("kwargs, match", [
    (dict(cells=(0, 4)), "cells must be positive"),
    (dict(cells=(4, -1)), "cells must be positive"),
    (dict(cells=(4,)), "cells must be 2"),
    (dict(cells=(4, 4.0)), "cells must be positive ints"),
    (dict(domain=((0, 0), (0, 1))), "axis 0 has no usable extent"),
    (dict(domain=((0, 2), (1, 1))), "axis 1 has no usable extent"),
    (dict(domain=((0, np.nan), (1, 1))), "must be finite"),
    (dict(domain=((0, 0), (1, 1, 1))), "need 2 coordinates"),
    (dict(domain=((-3e38, 0), (3e38, 1))), "axis 0 has no usable extent"),
    (dict(capacity=0), "capacity must be at least 1"),
    (dict(cells=(1 << 16, 1 << 16)), "uint32 offset table"),
])
def test_bad_construction(pts, kwargs, match):
    _, view = pts
    args = dict(id="g", points=view, domain=DOM2, cells=(4, 4)) | kwargs
    with pytest.raises(GraphValidationError, match=match) as info:
        GPUGridIndex(**args)
    assert 'GPUGridIndex "g"' in str(info.value)


def test_bad_types_and_states(device, pts):
    graph, view = pts
    with pytest.raises(GraphTypeError, match="capacity must be an int"):
        GPUGridIndex(id="g", points=view, domain=DOM2, cells=(4, 4), capacity=2.5)
    u32 = graph.import_gpu_data("u32", gpuviz.GPUData.from_numpy(device, np.zeros(4, np.uint32)))
    with pytest.raises(GraphValidationError, match="float32x2 or float32x3"):
        GPUGridIndex(id="g", points=u32, domain=DOM2, cells=(4, 4))
    with pytest.raises(GraphValidationError, match="must be a GraphDataView"):
        GPUGridIndex(id="g", points=np.zeros((4, 2)), domain=DOM2, cells=(4, 4))
    index = GPUGridIndex(id="g", points=view, domain=DOM2, cells=(4, 4))
    with pytest.raises(GraphStateError, match="before add_to_graph"):
        index.count
    index.add_to_graph(graph)
    with pytest.raises(GraphStateError, match="already added"):
        index.add_to_graph(graph)
    short = graph.import_gpu_data("short", gpuviz.GPUData.from_numpy(device, np.zeros(3, np.uint32)))
    with pytest.raises(GraphValidationError, match="cell_offsets is shorter"):
        GPUGridIndex(id="h", points=view, domain=DOM2, cells=(2, 2), cell_offsets=short).add_to_graph(graph)


def test_cells_over_the_binding_limit(device, pts):
    graph, view = pts
    limit = int(device.limits["max-storage-buffer-binding-size"])
    side = int((limit // 4) ** 0.5) + 2
    with pytest.raises(GraphValidationError, match="max-storage-buffer-binding-size"):
        GPUGridIndex(id="g", points=view, domain=DOM2, cells=(side, side)).add_to_graph(graph)


@pytest.mark.parametrize("chunks", [None, [300, 0, 450, 250]])
def test_explicit_source_ids(device, chunks):
    """Explicit IDs replace row numbers in ids, and address a query's mask;
    the exact filter refuses such candidates."""
    from gpuviz.spatial import GPUGridIndexQuery, GPUPointSpatialFilter, QUERY_WORDS, write_query
    from .conftest import filled

    rng = np.random.default_rng(41)
    n = 1000
    points = uniform(rng, n, DOM2, margin=0.5)
    source = rng.permutation(3 * n)[:n].astype(np.uint32)
    graph = gpuviz.GPUCommandGraph(device, id="sources")
    view, _ = points_view(device, graph, points, chunks)
    if chunks is None:
        sview = graph.import_gpu_data("source", gpuviz.GPUData.from_numpy(device, source))
    else:
        parts = np.split(source, np.cumsum(chunks)[:-1])
        sview = graph.import_gpu_vector("source", gpuviz.GPUVector.from_numpy(device, parts, format="uint32"))
    bufs = {"ids": filled(device, n), "query": filled(device, QUERY_WORDS, 0), "cands": filled(device, n),
            "mask": filled(device, 3 * n), "qstats": filled(device, 8)}
    v = {k: graph.import_gpu_data(k, b) for k, b in bufs.items()}
    index = GPUGridIndex(id="g", points=view, domain=DOM2, cells=(6, 5), ids=v["ids"], source_ids=sview)
    index.add_to_graph(graph)
    query = GPUGridIndexQuery(id="q", index=index, query=v["query"], candidates=v["cands"], mask=v["mask"],
                              stats=v["qstats"])
    query.add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="explicit source_ids"):
        GPUPointSpatialFilter(id="f", points=view, query=v["query"], candidates=query,
                              mask=graph.import_gpu_data("fmask", filled(device, n))).add_to_graph(graph)
    compiled = graph.compile()
    words = write_query(bufs["query"], queue=device.queue, bounds=((1, 2), (6, 9)))
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    want = oracle.grid_index(points, DOM2, (6, 5))
    got_ids = gpuviz.read_array(device, bufs["ids"])
    np.testing.assert_array_equal(got_ids[:want["count"]], source[want["ids"]])
    rows, stats = oracle.grid_query(want, words, DOM2, (6, 5), n)
    np.testing.assert_array_equal(gpuviz.read_array(device, bufs["cands"])[:len(rows)], source[rows])
    mask = np.zeros(3 * n, np.uint32)
    mask[source[rows]] = 1
    np.testing.assert_array_equal(gpuviz.read_array(device, bufs["mask"]), mask)


def test_source_ids_must_match_points(device, pts):
    graph, view = pts
    short = graph.import_gpu_data("s3", gpuviz.GPUData.from_numpy(device, np.zeros(3, np.uint32)))
    with pytest.raises(GraphValidationError, match="source_ids is shorter than points"):
        GPUGridIndex(id="g", points=view, domain=DOM2, cells=(2, 2), source_ids=short).add_to_graph(graph)
