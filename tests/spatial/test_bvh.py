"""GPUBVH and GPUBVHQuery against the numpy oracle (which replays the
traversal): empty, one leaf, rows exactly filling the leaves and one over,
NaN and inverted boxes, 2-D and 3-D, trees shallower and deeper than the
traversal's root level, refit after moving boxes with no new pipeline,
point/bounds (exact) and radius/lasso (region box) queries, output
overflow, stack overflow kept apart from an empty result, the mask, and the
named errors."""

import numpy as np
import pytest

import gpuviz
from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.oracles import spatial as oracle
from gpuviz.spatial import QUERY_WORDS, GPUBVH, GPUBVHQuery, write_query
from gpuviz.spatial.bvh import BVH_QUERY_STATS, BVH_STATS, NODE_WORDS

from .conftest import USAGE, as_dict, filled

QUERIES2 = [dict(bounds=((2, 2), (4, 5))), dict(point=(5, 5)), dict(bounds=((-1, -1), (11, 11))),
            dict(radius=((3, 7), 1.5)), dict(polygon=[(1, 1), (6, 2), (3, 6)]), dict(bounds=((20, 20), (21, 21))), {}]
QUERIES3 = [dict(bounds=((2, 2, 2), (4, 5, 6))), dict(point=(5, 5, 5)), dict(radius=((3, 7, 5), 2)), {}]


class BVHRun:
    def __init__(self, device, lo, hi, leaf_capacity, *, out_capacity=None, stack_capacity=32):
        self.device = device
        self.lo, self.hi = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
        rows, self.dims = self.lo.shape
        L = leaf_capacity
        self.L, self.stack = L, stack_capacity
        graph = gpuviz.GPUCommandGraph(device, id="bvh")
        empty = np.zeros((0, self.dims), np.float32)
        self.bufs = {"lo": gpuviz.GPUData.from_numpy(device, self.lo if rows else empty, USAGE),
                     "hi": gpuviz.GPUData.from_numpy(device, self.hi if rows else empty, USAGE),
                     "ids": filled(device, L), "nodes": filled(device, NODE_WORDS * (2 * L - 1)),
                     "stats": filled(device, 8), "query": filled(device, QUERY_WORDS, 0),
                     "out": filled(device, out_capacity if out_capacity is not None else max(rows, 1)),
                     "mask": filled(device, rows), "qstats": filled(device, 8)}
        v = {k: graph.import_gpu_data(k, b) for k, b in self.bufs.items()}
        self.bvh = GPUBVH(id="tree", bounds=(v["lo"], v["hi"]), leaf_capacity=L, ids=v["ids"], nodes=v["nodes"],
                          stats=v["stats"])
        self.bvh.add_to_graph(graph)
        GPUBVHQuery(id="q", bvh=self.bvh, query=v["query"], output=v["out"], mask=v["mask"],
                    stack_capacity=stack_capacity, stats=v["qstats"]).add_to_graph(graph)
        self.compiled = graph.compile()

    def move(self, lo, hi):
        self.lo, self.hi = np.asarray(lo, np.float32), np.asarray(hi, np.float32)
        for name, a in (("lo", self.lo), ("hi", self.hi)):
            self.device.queue.write_buffer(self.bufs[name].buffer, 0, a.tobytes())

    def check(self, **query):
        words = write_query(self.bufs["query"], queue=self.device.queue, dims=self.dims, **query)
        encoder = self.device.create_command_encoder()
        self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        got = {k: gpuviz.read_array(self.device, b) for k, b in self.bufs.items()}
        nodes, ids, stats = oracle.bvh_nodes(self.lo, self.hi, self.L)
        gn = got["nodes"].view(np.float32).reshape(-1, 2, 4)[:, :, :3]
        np.testing.assert_array_equal(gn, nodes)
        np.testing.assert_array_equal(got["ids"], ids)
        assert {k: v for k, v in as_dict(got["stats"], BVH_STATS).items() if k in stats} == stats
        matches, qstats = oracle.bvh_query(nodes, ids, words, self.dims, self.stack)
        gq = as_dict(got["qstats"], BVH_QUERY_STATS)
        assert {k: gq[k] for k in qstats} == qstats
        cap = len(got["out"]) if len(self.lo) else 1
        written = min(len(matches), cap)
        assert (gq["written_count"], gq["overflow"], gq["bvh_overflow"]) == \
            (written, len(matches) - written, stats["overflow"])
        np.testing.assert_array_equal(got["out"][:written], matches[:written])
        mask = np.zeros(max(len(self.lo), 1), np.uint32)
        mask[matches] = 1
        np.testing.assert_array_equal(got["mask"], mask)
        return matches, gq


def boxes(rng, n, dims, size=0.6):
    lo = rng.uniform(0, 10, (n, dims)).astype(np.float32)
    return lo, (lo + rng.uniform(0, size, (n, dims))).astype(np.float32)


@pytest.mark.parametrize("n, L", [(0, 1), (1, 1), (5, 8), (128, 128), (129, 128), (700, 1024), (3000, 4096)])
def test_queries_2d(device, n, L):
    rng = np.random.default_rng(n + L)
    lo, hi = boxes(rng, n, 2)
    if n > 3:
        lo[1, 0], hi[2, 1], lo[3] = np.nan, np.inf, hi[3] + 1  # NaN, inf and inverted boxes: empty leaves
    run = BVHRun(device, lo, hi, L)
    for query in QUERIES2:
        run.check(**query)


@pytest.mark.parametrize("n, L", [(1, 2), (2048, 2048)])
def test_queries_3d(device, n, L):
    rng = np.random.default_rng(n)
    lo, hi = boxes(rng, n, 3, size=1.0)
    run = BVHRun(device, lo, hi, L)
    for query in QUERIES3:
        run.check(**query)


@pytest.mark.parametrize("n, L", [(100, 128), (1500, 2048)])  # one-workgroup refit, level passes
def test_refit_after_moving_boxes(device, compiled_pipelines, n, L):
    rng = np.random.default_rng(31)
    lo, hi = boxes(rng, n, 2)
    run = BVHRun(device, lo, hi, L)
    before, _ = run.check(bounds=((0, 0), (2, 2)))
    made = len(compiled_pipelines)
    run.move(lo + 5, hi + 5)
    after, _ = run.check(bounds=((0, 0), (2, 2)))
    assert len(after) == 0 < len(before)
    run.check(bounds=((5, 5), (7, 7)))
    assert len(compiled_pipelines) == made


@pytest.mark.parametrize("short", [0, 1])
def test_output_capacity_full_and_one_short(device, short):
    rng = np.random.default_rng(32)
    lo, hi = boxes(rng, 400, 2)
    nodes, ids, _ = oracle.bvh_nodes(lo, hi, 512)
    from gpuviz.spatial import query_record
    full = len(oracle.bvh_query(nodes, ids, query_record(bounds=((1, 1), (6, 6))), 2)[0])
    run = BVHRun(device, lo, hi, 512, out_capacity=full - short)
    _, stats = run.check(bounds=((1, 1), (6, 6)))
    assert stats["overflow"] == short


def test_stack_overflow_is_not_an_empty_result(device):
    rng = np.random.default_rng(33)
    lo, hi = boxes(rng, 4096, 2)
    run = BVHRun(device, lo, hi, 4096, stack_capacity=2)  # subtrees of 3 levels need 3 entries
    matches, stats = run.check(bounds=((0, 0), (10, 10)))
    assert stats["stack_overflow"] > 0
    full = BVHRun(device, lo, hi, 4096)
    all_matches, full_stats = full.check(bounds=((0, 0), (10, 10)))
    assert full_stats["stack_overflow"] == 0 and len(all_matches) == 4096 > len(matches)


def test_errors(device):
    graph = gpuviz.GPUCommandGraph(device, id="errors")
    def f2(name, n):
        return graph.import_gpu_data(name, gpuviz.GPUData.from_numpy(device, np.zeros((n, 2), np.float32)))

    lo, hi = f2("lo", 4), f2("hi", 4)
    for leaf_capacity, match in ((0, "power of two"), (3, "power of two"), (1 << 27, "power of two")):
        with pytest.raises(GraphValidationError, match=match):
            GPUBVH(id="b", bounds=(lo, hi), leaf_capacity=leaf_capacity)
    with pytest.raises(GraphTypeError, match="leaf_capacity must be an int"):
        GPUBVH(id="b", bounds=(lo, hi), leaf_capacity=4.0)
    with pytest.raises(GraphValidationError, match="bounds must be a \\(minimum, maximum\\) pair"):
        GPUBVH(id="b", bounds=lo, leaf_capacity=4)
    with pytest.raises(GraphValidationError, match="differ"):
        GPUBVH(id="b", bounds=(lo, f2("hi5", 5)), leaf_capacity=4).add_to_graph(graph)
    query = graph.import_gpu_data("query", filled(device, QUERY_WORDS))
    out = graph.import_gpu_data("out", filled(device, 4))
    bvh = GPUBVH(id="b", bounds=(lo, hi), leaf_capacity=4)
    with pytest.raises(GraphStateError, match="has not been added"):
        GPUBVHQuery(id="q", bvh=bvh, query=query, output=out).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="stack_capacity must be an int from 2 to 64"):
        GPUBVHQuery(id="q", bvh=bvh, query=query, output=out, stack_capacity=1)
    bvh.add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="bvh must be a GPUBVH"):
        GPUBVHQuery(id="q", bvh=object(), query=query, output=out).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="output and query share buffer"):
        GPUBVHQuery(id="q", bvh=bvh, query=query, output=query).add_to_graph(graph)
