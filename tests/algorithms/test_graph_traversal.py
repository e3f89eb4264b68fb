"""GPUGraphTraversal against a python BFS oracle: random graphs (hypothesis),
disconnected, cyclic, self-loop, duplicate-edge and high-degree graphs, each
direction, GPU-resident seed count and active depth, out-of-range IDs,
frontier overflow, partitioned == packed input, and named errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpuviz.algorithms.graph_traversal import UNREACHED, GPUGraphTraversal
from gpuviz.errors import GraphTypeError, GraphValidationError, ViewRangeError
from gpuviz.oracles.algorithms import bfs, csr
from gpuviz.tables import GPUData

from .conftest import gpu_data, gpu_vector, new_graph, read, shared_vector

SENTINEL = 0xDEADBEEF


# ------------------------------------------------------------------ inputs
def random_graph(rng, n, m, *, bad=0.0):
    src = rng.integers(0, max(n, 1), m)
    dst = rng.integers(0, max(n, 1), m)
    dst = np.where(rng.random(m) < bad, n + rng.integers(0, 100, m), dst)
    return src, dst


# ------------------------------------------------------------------ running
class Traversal:
    """One compiled traversal over uploaded numpy arrays (packed or
    partitioned), with its parameter buffers kept for later writes."""

    def __init__(self, device, n, src, dst, seeds, *, parts=None, direction="forward", max_depth=3,
                 seed_count=None, active_depth=None, depths=True, capacity=None, shared_output=False):
        self.device, self.n = device, n
        keep = np.asarray(dst, np.int64) < n  # an out-of-range target has no reverse row
        fwd, rev = csr(n, src, dst), csr(n, np.asarray(dst)[keep], np.asarray(src)[keep])
        self.fwd, self.rev = fwd, rev
        graph = new_graph(device)
        self.seeds = gpu_data(device, seeds if len(seeds) else [0])
        seeds_view = graph.create_data_view(graph.import_gpu_data("seeds", self.seeds).handle, format="uint32",
                                            length=len(seeds))
        self.params = gpu_data(device, [0 if seed_count is None else seed_count,
                                        0 if active_depth is None else active_depth, SENTINEL, SENTINEL])
        handle = graph.import_gpu_data("params", self.params).handle
        word = lambda k: graph.create_data_view(handle, format="uint32", length=1, byte_offset=4 * k)  # noqa: E731
        self.overflow = gpu_data(device, [SENTINEL, SENTINEL])
        kw = dict(seed_count=word(0) if seed_count is not None else None,
                  active_depth=word(1) if active_depth is not None else None,
                  overflow=graph.import_gpu_data("overflow", self.overflow), direction=direction,
                  max_depth=max_depth, frontier_capacity=capacity)
        if parts is None:
            self.out = gpu_data(device, np.full(n, SENTINEL))
            self.dep = gpu_data(device, np.full(n, SENTINEL)) if depths else None
            csrs = [graph.import_gpu_data(name, gpu_data(device, a)) for name, a in
                    (("o", fwd[0]), ("nb", fwd[1]), ("ro", rev[0]), ("rn", rev[1]))]
            out = graph.import_gpu_data("out", self.out)
            dep = graph.import_gpu_data("dep", self.dep) if depths else None
        else:
            lengths = parts
            bounds = np.cumsum([0, *lengths])
            chunks = {name: [] for name in ("o", "nb", "ro", "rn")}
            for a, b in zip(bounds[:-1], bounds[1:]):
                for (offsets, neighbors), (oname, nname) in ((fwd, ("o", "nb")), (rev, ("ro", "rn"))):
                    local = offsets[a:b + 1]
                    chunks[oname].append(local - local[0])
                    chunks[nname].append(neighbors[local[0]:local[-1]])
            csrs = [graph.import_gpu_vector(name, gpu_vector(device, chunks[name])) for name in ("o", "nb", "ro", "rn")]
            if shared_output:
                starts = [5 * (k + 1) + int(bounds[k]) for k in range(len(lengths))]
                self.out = shared_vector(device, [np.full(m, SENTINEL) for m in lengths], starts, fill=SENTINEL)
            else:
                self.out = gpu_vector(device, [np.full(m, SENTINEL) for m in lengths])
            self.dep = gpu_vector(device, [np.full(m, SENTINEL) for m in lengths]) if depths else None
            out = graph.import_gpu_vector("out", self.out)
            dep = graph.import_gpu_vector("dep", self.dep) if depths else None
        self.traversal = GPUGraphTraversal(id="t", offsets=csrs[0], neighbors=csrs[1], reverse_offsets=csrs[2],
                                           reverse_neighbors=csrs[3], seeds=seeds_view, output=out, depths=dep, **kw)
        self.node_ids = self.traversal.add_to_graph(graph)
        self.compiled = graph.compile()

    def run(self, times=1, buffers=None):
        encoder = self.device.create_command_encoder()
        for _ in range(times):
            self.compiled.encode(encoder, buffers=buffers)
        self.device.queue.submit([encoder.finish()])
        out = read(self.device, self.out)
        dep = read(self.device, self.dep) if self.dep is not None else None
        return out, dep, read(self.device, self.overflow)

    def write(self, *, seeds=None, seed_count=None, active_depth=None):
        queue = self.device.queue
        if seeds is not None:
            queue.write_buffer(self.seeds.buffer, self.seeds.byte_offset, np.asarray(seeds, np.uint32).tobytes())
        for k, value in ((0, seed_count), (1, active_depth)):
            if value is not None:
                queue.write_buffer(self.params.buffer, self.params.byte_offset + 4 * k, np.uint32(value).tobytes())


def check(t, seeds, *, direction="forward", depth=3, seed_count=None, result=None):
    """The traversal's output, depths and overflow equal the oracle's."""
    out, dep, overflow = result or t.run()
    expected, oob = bfs(t.n, t.fwd, t.rev, seeds, direction=direction, depth=depth, seed_count=seed_count)
    np.testing.assert_array_equal(out, (expected != UNREACHED).astype(np.uint32))
    if dep is not None:
        np.testing.assert_array_equal(dep, expected)
    assert overflow.tolist() == [oob, 0]
    return expected


# ------------------------------------------------------------------ tests
@settings(max_examples=14, deadline=None)
@given(n=st.one_of(st.sampled_from([1, 2, 255, 256, 257, 1023, 1025]), st.integers(1, 1500)),
       degree=st.sampled_from([0.0, 0.5, 1.0, 3.0]), direction=st.sampled_from(["forward", "backward", "both"]),
       max_depth=st.integers(0, 5), seeds=st.integers(0, 40), bad=st.sampled_from([0.0, 0.05]),
       seed=st.integers(0, 2**16))
def test_matches_bfs_oracle(device, n, degree, direction, max_depth, seeds, bad, seed):
    rng = np.random.default_rng(seed)
    src, dst = random_graph(rng, n, int(degree * n), bad=bad if direction == "forward" else 0.0)
    seed_ids = rng.integers(0, n + 2, seeds).astype(np.uint32)  # some out of range, some repeated
    t = Traversal(device, n, src, dst, seed_ids, direction=direction, max_depth=max_depth)
    check(t, seed_ids, direction=direction, depth=max_depth)


GRAPHS = {
    # two components and isolated nodes: nothing crosses between them
    "disconnected": (12, [0, 1, 2, 6, 7, 8], [1, 2, 0, 7, 8, 6]),
    # a ring longer than max_depth, and a 2-cycle
    "cyclic": (10, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 7]),
    "self-loops": (6, [0, 0, 1, 1, 2, 3], [0, 1, 1, 2, 2, 3]),
    "duplicate-edges": (6, [0, 0, 0, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 3, 3, 1]),
    # shared descendants: 0 -> {1, 2} -> 3 -> {4, 5} <- 2
    "diamond": (6, [0, 0, 1, 2, 3, 3, 2], [1, 2, 3, 3, 4, 5, 5]),
}


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
def test_structured_graphs(device, name, direction):
    n, src, dst = GRAPHS[name]
    seeds = np.array([0, 6 % n, 0], np.uint32)
    t = Traversal(device, n, src, dst, seeds, direction=direction, max_depth=3)
    expected = check(t, seeds, direction=direction, depth=3)
    if name == "disconnected" and direction == "forward":
        assert expected.tolist()[:3] == [0, 1, 2] and expected[9:].tolist() == [UNREACHED] * 3


def test_high_degree_node(device):
    """One node with 100K neighbours (spread over ~100 workgroups), each of
    which links on; duplicates and a self loop on the hub."""
    hub_degree = 100_000
    n = hub_degree + 1000
    rng = np.random.default_rng(5)
    hub_targets = np.arange(1, hub_degree + 1)
    second = rng.integers(1, hub_degree + 1, 2000)
    src = np.concatenate([np.zeros(hub_degree + 2, np.int64), second])
    dst = np.concatenate([hub_targets, [0, 5], hub_degree + 1 + rng.integers(0, 999, 2000)])
    seeds = np.array([0], np.uint32)
    t = Traversal(device, n, src, dst, seeds, direction="forward", max_depth=2)
    expected = check(t, seeds, depth=2)
    assert (expected[1:hub_degree + 1] == 1).all()


def test_seed_count_and_active_depth_change_by_buffer_writes(device, compiled_pipelines):
    """One compiled graph: new seeds, seed counts (0 included) and active
    depths (0 and past max_depth, which clamps) take effect by buffer writes
    alone, with no new pipeline."""
    rng = np.random.default_rng(8)
    n = 600
    src, dst = random_graph(rng, n, 700)
    seeds = rng.integers(0, n, 8).astype(np.uint32)
    t = Traversal(device, n, src, dst, seeds, seed_count=8, active_depth=2, max_depth=4)
    made = len(compiled_pipelines)
    check(t, seeds, depth=2)
    for seed_count, active in ((0, 4), (3, 0), (8, 99), (5, 1), (1000, 2)):
        t.write(seed_count=seed_count, active_depth=active)
        check(t, seeds, depth=min(active, 4), seed_count=seed_count)
    seeds = rng.integers(0, n, 8).astype(np.uint32)
    t.write(seeds=seeds, seed_count=8, active_depth=3)
    check(t, seeds, depth=3)
    out, dep, overflow = t.run()
    if made:
        assert len(compiled_pipelines) == made, "encoding must not build pipelines"
    t.write(seed_count=0)
    out, dep, overflow = t.run()
    assert not out.any() and (dep == UNREACHED).all() and overflow.tolist() == [0, 0]


def test_repeated_encodings_restart_from_scratch(device):
    """Encoding twice into one submission gives the result of one (the
    clear pass resets claims, counters and outputs)."""
    rng = np.random.default_rng(9)
    src, dst = random_graph(rng, 300, 600)
    seeds = np.array([1, 2, 3], np.uint32)
    t = Traversal(device, 300, src, dst, seeds, max_depth=3)
    check(t, seeds, depth=3, result=t.run(times=2))


def test_out_of_range_ids_are_ignored_and_counted(device):
    n = 5
    src, dst = [0, 0, 1, 1, 2], [1, 9, 2, 5, 0]  # 9 and 5 are out of range
    seeds = np.array([0, 7, 5, 0xFFFFFFFF], np.uint32)
    t = Traversal(device, n, src, dst, seeds, max_depth=2)
    out, dep, overflow = t.run()
    assert dep.tolist() == [0, 1, 2, UNREACHED, UNREACHED]
    # 3 seeds, edge 0->9 at level 0 and 1->5 at level 1
    assert overflow.tolist() == [5, 0]
    check(t, seeds, depth=2, result=(out, dep, overflow))


def test_frontier_overflow_is_reported(device):
    """A star of 100 leaves with capacity 10: 90 leaves cannot be stored,
    are counted, and are not published; 15 of 20 seeds overflow likewise."""
    n = 101
    src, dst = np.zeros(100, np.int64), np.arange(1, 101)
    t = Traversal(device, n, src, dst, np.array([0], np.uint32), max_depth=1, capacity=10)
    out, dep, overflow = t.run()
    assert overflow.tolist() == [0, 90]
    assert out.sum() == 11 and out[0] == 1 and (dep[out == 1] <= 1).all()
    assert sorted(dep.tolist()).count(1) == 10
    seeds = np.arange(20, 40, dtype=np.uint32)
    t = Traversal(device, n, src, dst, seeds, max_depth=1, capacity=5)
    out, dep, overflow = t.run()
    assert overflow.tolist() == [0, 15] and out.sum() == 5


@pytest.mark.parametrize("capacity, dropped", [(100, 0), (99, 1), (101, 0)])
def test_exact_frontier_capacity(device, capacity, dropped):
    n = 101
    t = Traversal(device, n, np.zeros(100, np.int64), np.arange(1, 101), np.array([0], np.uint32), max_depth=1,
                  capacity=capacity)
    out, dep, overflow = t.run()
    assert overflow.tolist() == [0, dropped] and out.sum() == n - dropped


def test_partitioned_capacity_is_per_partition(device):
    """Capacity 10 bounds each partition's frontier: 59 leaves in partition 0
    and 41 in partition 1 store 10 each."""
    n = 101
    t = Traversal(device, n, np.zeros(100, np.int64), np.arange(1, 101), np.array([0], np.uint32), max_depth=1,
                  capacity=10, parts=[60, 41])
    out, dep, overflow = t.run()
    assert overflow.tolist() == [0, 49 + 31]
    assert out[:60].sum() == 11 and out[60:].sum() == 10 and (dep[out == 1] <= 1).all()


@pytest.mark.parametrize("parts", [[40, 0, 35, 25], [0, 100], [100], [1, 1, 98, 0]])
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
def test_partitioned_equals_packed(device, parts, direction):
    """Per-partition CSR chunks with global neighbour IDs (edges crossing
    partitions freely, empty partitions kept) give the packed result."""
    rng = np.random.default_rng(sum(parts) + len(parts))
    n = sum(parts)
    src, dst = random_graph(rng, n, 250)
    seeds = rng.integers(0, n + 3, 6).astype(np.uint32)
    packed = Traversal(device, n, src, dst, seeds, direction=direction, max_depth=4).run()
    part = Traversal(device, n, src, dst, seeds, direction=direction, max_depth=4, parts=parts,
                     shared_output=len(parts) > 2)
    result = part.run()
    for a, b in zip(result, packed):
        np.testing.assert_array_equal(a, b)
    check(part, seeds, direction=direction, depth=4, result=result)
    if len(parts) > 2:  # words around the shared output chunks stay untouched
        buffer = part.out.chunks[0].buffer
        words = read(device, GPUData(buffer, format="uint32", length=buffer.size // 4))
        starts = [5 * (k + 1) + int(sum(parts[:k])) for k in range(len(parts))]
        inside = np.zeros(words.size, bool)
        for start, m in zip(starts, parts):
            inside[start:start + m] = True
        assert (words[~inside] == SENTINEL).all()


@settings(max_examples=10, deadline=None)
@given(parts=st.lists(st.one_of(st.just(0), st.integers(1, 300)), min_size=1, max_size=5),
       direction=st.sampled_from(["forward", "backward", "both"]), max_depth=st.integers(0, 4),
       seed=st.integers(0, 2**16))
def test_partitioned_matches_oracle(device, parts, direction, max_depth, seed):
    """Random partitions (empty and uneven chunks) against the oracle."""
    n = sum(parts)
    if n == 0:
        parts = parts + [1]
        n = 1
    rng = np.random.default_rng(seed)
    src, dst = random_graph(rng, n, int(rng.integers(0, 3 * n + 1)))
    seeds = rng.integers(0, n + 2, int(rng.integers(0, 12))).astype(np.uint32)
    t = Traversal(device, n, src, dst, seeds, direction=direction, max_depth=max_depth, parts=parts)
    check(t, seeds, direction=direction, depth=max_depth)


def test_replacing_one_partition_by_override(device):
    """One partition's neighbour chunk replaced per encoding (a buffer
    override of that batch only, no recompile) gives the new graph's result."""
    rng = np.random.default_rng(21)
    parts = [50, 0, 70, 30]
    n = sum(parts)
    src, dst = random_graph(rng, n, 400)
    seeds = rng.integers(0, n, 5).astype(np.uint32)
    t = Traversal(device, n, src, dst, seeds, max_depth=3, parts=parts)
    offsets, neighbors = t.fwd
    a, b = int(offsets[50]), int(offsets[120])  # partition 2's edges in the packed CSR
    fresh = rng.integers(0, n, b - a).astype(np.uint32)
    replacement = gpu_data(device, fresh).buffer
    before = check(t, seeds, depth=3)
    t.fwd = (offsets, np.concatenate([neighbors[:a], fresh, neighbors[b:]]))
    after = check(t, seeds, depth=3, result=t.run(buffers={"nb-buffer-2": replacement}))
    assert not np.array_equal(before, after), "the replaced batch must change what is reached"
    t.fwd = (offsets, neighbors)
    check(t, seeds, depth=3)  # without the override: the original batch again


def test_zero_nodes_adds_nothing(device):
    graph = new_graph(device)
    out = gpu_data(device, [SENTINEL])
    t = GPUGraphTraversal(id="t", offsets=graph.import_gpu_data("o", gpu_data(device, [0])),
                          neighbors=graph.import_gpu_data("n", gpu_data(device, [0])),
                          seeds=graph.import_gpu_data("s", gpu_data(device, [0, 1])),
                          output=graph.import_gpu_data("out", out), max_depth=3)
    assert t.add_to_graph(graph) == [] and graph.nodes == ()
    # partitioned: every partition empty (offsets chunks of one row, or none)
    graph = new_graph(device)
    vec = lambda name, chunks: graph.import_gpu_vector(name, gpu_vector(device, chunks))  # noqa: E731
    t = GPUGraphTraversal(id="t", offsets=vec("o", [[0], []]), neighbors=vec("n", [[], []]),
                          seeds=graph.import_gpu_data("s", gpu_data(device, [0])), output=vec("out", [[], []]),
                          max_depth=2)
    assert t.add_to_graph(graph) == [] and graph.nodes == ()


# ------------------------------------------------------------------ errors
def _views(device, graph, **over):
    arrays = {"offsets": [0, 1, 2], "neighbors": [1, 0], "seeds": [0], "output": [0, 0]}
    views = {}
    for name, value in arrays.items():
        views[name] = over.pop(name) if name in over else graph.import_gpu_data(name, gpu_data(device, value))
    return {**views, **over}


@pytest.mark.parametrize("case", ["format", "unpacked", "short-output", "short-depths", "chunks", "chunk-count",
                                  "kind", "shares-buffer", "no-reverse", "overflow-rows", "partitions"])
def test_named_errors(device, case):
    graph = new_graph(device)
    over, error = {}, GraphValidationError
    if case == "format":
        over["offsets"] = graph.import_gpu_data("f", gpu_data(device, [0.0, 1.0, 2.0], np.float32))
    elif case == "unpacked":
        h = graph.import_gpu_data("u", gpu_data(device, [0, 9, 1, 9, 2, 9])).handle
        over["offsets"] = graph.create_data_view(h, format="uint32", length=3, byte_stride=8)
        error = ViewRangeError
    elif case == "short-output":
        over["output"] = graph.import_gpu_data("short", gpu_data(device, [0]))
    elif case == "short-depths":
        over["depths"] = graph.import_gpu_data("short", gpu_data(device, [0]))
    elif case in ("chunks", "chunk-count", "kind"):
        v = lambda name, chunks: graph.import_gpu_vector(name, gpu_vector(device, chunks))  # noqa: E731
        over["output"] = v("out-v", [[0], [0]])
        over["offsets"] = v("o-v", [[0, 1], [0, 1, 1]] if case == "chunks" else [[0, 1]] if case == "chunk-count"
                            else [[0, 1], [0, 1]])
        over["neighbors"] = v("n-v", [[1], [0]]) if case != "kind" else graph.import_gpu_data("n-d", gpu_data(
            device, [1, 0]))
    elif case == "shares-buffer":
        h = graph.import_gpu_data("both", gpu_data(device, [0, 1, 2, 1, 0, 0, 0])).handle
        over["offsets"] = graph.create_data_view(h, format="uint32", length=3)
        over["output"] = graph.create_data_view(h, format="uint32", length=2, byte_offset=20)
    elif case == "no-reverse":
        with pytest.raises(GraphValidationError, match='^GPUGraphTraversal "t" direction "both" needs'):
            GPUGraphTraversal(id="t", max_depth=1, direction="both", **_views(device, graph))
        return
    elif case == "overflow-rows":
        over["overflow"] = graph.import_gpu_data("ov", gpu_data(device, [0]))
    elif case == "partitions":  # 65 > 64 partitions
        over["output"] = graph.import_gpu_vector("out-v", shared_vector(device, [[0]] * 65, range(0, 130, 2)))
        over["offsets"] = graph.import_gpu_vector("o-v", shared_vector(device, [[0, 0]] * 65, range(0, 195, 3)))
        over["neighbors"] = graph.import_gpu_vector("n-v", shared_vector(device, [[]] * 65, [0] * 65))
    t = GPUGraphTraversal(id="t", max_depth=2, **_views(device, graph, **over))
    with pytest.raises(error, match='^GPUGraphTraversal "t" ') as info:
        t.add_to_graph(graph)
    expected = {"format": "must be uint32", "unpacked": "must be packed", "short-output": "output is shorter",
                "short-depths": "depths is shorter", "chunks": "offsets chunk 1 has 3 rows",
                "chunk-count": "one chunk per partition", "kind": "neighbors is a data view",
                "shares-buffer": "share buffer", "overflow-rows": "overflow is shorter", "partitions": "65 partitions"}
    assert expected[case] in str(info.value)


def test_construction_errors(device):
    graph = new_graph(device)
    views = _views(device, graph)
    with pytest.raises(GraphValidationError, match='direction must be one of'):
        GPUGraphTraversal(id="t", max_depth=1, direction="sideways", **views)
    with pytest.raises(GraphTypeError, match='max_depth must be an int'):
        GPUGraphTraversal(id="t", max_depth=1.0, **views)
    with pytest.raises(GraphValidationError, match=r'max_depth must be in \[0, 1024\]'):
        GPUGraphTraversal(id="t", max_depth=-1, **views)
    with pytest.raises(GraphValidationError, match='frontier_capacity must be >= 1'):
        GPUGraphTraversal(id="t", max_depth=1, frontier_capacity=0, **views)


def test_seed_vector_and_long_outputs(device):
    """Seeds as a vector (an empty chunk kept; seed_count counts across
    chunks), output and depths longer than the node count (rows past it
    untouched), malformed offsets clamped to the neighbour rows."""
    n = 8
    offsets = np.array([0, 2, 1, 3, 3, 50, 6, 6, 6], np.uint32)  # 1 > 2 - 1 and 50 past the 6 neighbours
    neighbors = np.array([1, 2, 3, 4, 5, 7], np.uint32)
    graph = new_graph(device)
    out = gpu_data(device, np.full(n + 3, SENTINEL))
    dep = gpu_data(device, np.full(n + 3, SENTINEL))
    count = gpu_data(device, [4])
    seeds = graph.import_gpu_vector("s", gpu_vector(device, [[0], [], [4, 9], [6, 2]]))
    GPUGraphTraversal(id="t", offsets=graph.import_gpu_data("o", gpu_data(device, offsets)),
                      neighbors=graph.import_gpu_data("nb", gpu_data(device, neighbors)), seeds=seeds,
                      seed_count=graph.import_gpu_data("c", count), output=graph.import_gpu_data("out", out),
                      depths=graph.import_gpu_data("d", dep), max_depth=2).add_to_graph(graph)
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    # node 0 -> 1, 2; node 1's range [2, 1) is empty; node 4 -> neighbours[3:6] = 4, 5, 7 (clamped end)
    clamped = np.array([0, 2, 2, 3, 3, 6, 6, 6, 6], np.uint32)
    expected, _ = bfs(n, (clamped, neighbors), None, [0, 4, 9, 6], depth=2)
    got = read(device, dep)
    assert got[:n].tolist() == expected.tolist() and got[n:].tolist() == [SENTINEL] * 3
    assert read(device, out)[:n].tolist() == (expected != UNREACHED).astype(np.uint32).tolist()
    assert read(device, out)[n:].tolist() == [SENTINEL] * 3


def test_large_frontier(device):
    """A 280K-entry frontier: more than 1024 block sums, so the block scan
    takes several steps and edges' source search spans many blocks."""
    rng = np.random.default_rng(13)
    n = 400_000
    src, dst = random_graph(rng, n, n)
    seeds = rng.permutation(n)[:280_000].astype(np.uint32)
    t = Traversal(device, n, src, dst, seeds, max_depth=2)
    check(t, seeds, depth=2)


def test_benchmark_runs_tiny(device, capsys):
    """The benchmark's cases build, verify against their oracle and print."""
    from gpuviz.bench.tables import Report
    from gpuviz.bench.topology_traversal import bench_traversal

    table = bench_traversal(device, [4096], 2, variants=True, peers=None, report=Report())
    assert [row["case"] for row in table.rows][:3] == ["forward, mask", "forward, mask + depths",
                                                      "both directions, mask"]
    assert len(table.rows) == 6 and all(row["gpu_s"] > 0 and row["reached"] > 0 for row in table.rows)
    assert "GPUGraphTraversal" in capsys.readouterr().out
