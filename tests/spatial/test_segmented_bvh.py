"""GPUSegmentedBVH against the numpy oracle: trees of 0, 1, uneven and 128
rows in one buffer (several capacity classes, several trees per class),
2-D and 3-D, NaN and inverted boxes, refit after moving boxes with no new
pipeline, and the named errors."""

import numpy as np
import pytest

import gpuviz
from gpuviz.errors import GraphValidationError
from gpuviz.oracles import spatial as oracle
from gpuviz.spatial import GPUSegmentedBVH, SEGMENTED_BVH_STATS
from gpuviz.spatial.bvh import NODE_WORDS

from .conftest import USAGE, as_dict, filled


def build(device, lo, hi, tree_rows):
    graph = gpuviz.GPUCommandGraph(device, id="segmented")
    dims = lo.shape[1]
    bufs = {"lo": gpuviz.GPUData.from_numpy(device, lo if len(lo) else np.zeros((0, dims), np.float32), USAGE),
            "hi": gpuviz.GPUData.from_numpy(device, hi if len(hi) else np.zeros((0, dims), np.float32), USAGE)}
    bounds = (graph.import_gpu_data("lo", bufs["lo"]), graph.import_gpu_data("hi", bufs["hi"]))
    sizes = GPUSegmentedBVH(id="sizes", bounds=bounds, tree_rows=tree_rows)  # leaf_count, node_count
    bufs.update(ids=filled(device, sizes.leaf_count), nodes=filled(device, NODE_WORDS * sizes.node_count),
                stats=filled(device, 8))
    tree = GPUSegmentedBVH(id="trees", bounds=bounds, tree_rows=tree_rows,
                           **{k: graph.import_gpu_data(k, bufs[k]) for k in ("ids", "nodes", "stats")})
    tree.add_to_graph(graph)
    return tree, bufs, graph.compile()


def run_and_check(device, tree, bufs, compiled, lo, hi, tree_rows):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    nodes, ids = oracle.segmented_bvh(lo, hi, tree_rows)
    got_nodes = gpuviz.read_array(device, bufs["nodes"]).view(np.float32).reshape(-1, 2, 4)[:, :, :3]
    np.testing.assert_array_equal(got_nodes, nodes)
    np.testing.assert_array_equal(gpuviz.read_array(device, bufs["ids"]), ids)
    stats = as_dict(gpuviz.read_array(device, bufs["stats"]), SEGMENTED_BVH_STATS)
    bad = ~(np.isfinite(lo).all(axis=1) & np.isfinite(hi).all(axis=1) & (lo <= hi).all(axis=1))
    assert (stats["count"], stats["invalid"], stats["trees"], stats["nodes"]) == \
        (len(lo), int(bad.sum()), len(tree_rows), tree.node_count)


@pytest.mark.parametrize("dims, tree_rows", [(2, [0, 1, 5, 128, 3, 64, 17, 5, 2, 128]), (3, [7, 7, 1, 100]),
                                             (2, [0]), (2, [1])])
def test_trees_match_the_oracle(device, dims, tree_rows):
    rng = np.random.default_rng(sum(tree_rows))
    n = sum(tree_rows)
    lo = rng.uniform(0, 10, (n, dims)).astype(np.float32)
    hi = (lo + rng.uniform(0, 1, (n, dims))).astype(np.float32)
    if n > 10:
        lo[3, 0], hi[8] = np.nan, lo[8] - 1
    tree, bufs, compiled = build(device, lo, hi, tree_rows)
    assert len(set(tree.leaf_capacities.tolist())) <= 8
    run_and_check(device, tree, bufs, compiled, lo, hi, tree_rows)


def test_refit_after_moving_boxes(device, compiled_pipelines):
    rng = np.random.default_rng(51)
    tree_rows = [30, 30, 30, 90, 4]
    n = sum(tree_rows)
    lo = rng.uniform(0, 10, (n, 2)).astype(np.float32)
    hi = (lo + 0.5).astype(np.float32)
    tree, bufs, compiled = build(device, lo, hi, tree_rows)
    run_and_check(device, tree, bufs, compiled, lo, hi, tree_rows)
    made = len(compiled_pipelines)
    lo, hi = lo * 2 - 3, hi * 2 - 3
    device.queue.write_buffer(bufs["lo"].buffer, 0, lo.tobytes())
    device.queue.write_buffer(bufs["hi"].buffer, 0, hi.tobytes())
    run_and_check(device, tree, bufs, compiled, lo, hi, tree_rows)
    assert len(compiled_pipelines) == made


def test_errors(device):
    graph = gpuviz.GPUCommandGraph(device, id="errors")
    lo = graph.import_gpu_data("lo", gpuviz.GPUData.from_numpy(device, np.zeros((4, 2), np.float32)))
    hi = graph.import_gpu_data("hi", gpuviz.GPUData.from_numpy(device, np.zeros((4, 2), np.float32)))
    with pytest.raises(GraphValidationError, match="must each be 0 to 128"):
        GPUSegmentedBVH(id="s", bounds=(lo, hi), tree_rows=[2, 129])
    with pytest.raises(GraphValidationError, match="must each be 0 to 128"):
        GPUSegmentedBVH(id="s", bounds=(lo, hi), tree_rows=[-1, 5])
    with pytest.raises(GraphValidationError, match="at least one tree"):
        GPUSegmentedBVH(id="s", bounds=(lo, hi), tree_rows=[])
    with pytest.raises(GraphValidationError, match="sequence of ints"):
        GPUSegmentedBVH(id="s", bounds=(lo, hi), tree_rows=5)
    with pytest.raises(GraphValidationError, match=r"sum\(tree_rows\) = 5"):
        GPUSegmentedBVH(id="s", bounds=(lo, hi), tree_rows=[2, 3]).add_to_graph(graph)
