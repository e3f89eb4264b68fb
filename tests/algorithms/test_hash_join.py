"""GPUHashJoin and GPUBatchHashJoin against a dict oracle: left sizes around
the scan tile, capacity exactly enough and one short, an incomplete index,
chunked left sides with empty and uneven chunks, and errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import EMPTY_KEY, GPUBatchHashIndex, GPUBatchHashJoin, GPUHashIndex, GPUHashJoin
from gpuviz.algorithms.hash_table import LOOKUP_STATS
from gpuviz.oracles import algorithms as oracles

from .conftest import TILE, gpu_data, gpu_vector, new_graph, read, run
from .test_hash_index import as_dict, crafted_chain, flat, key_view, random_keys, stats_data

SENTINEL = 0xDEADBEEF


def pairs_view(device, graph, name, rows):
    data = gpu_data(device, np.full(2 * rows, SENTINEL))
    handle = graph.import_gpu_data(name, data).handle
    return graph.create_data_view(handle, format="uint32x2", length=rows), data


def join_on_gpu(device, right, left, *, capacity=None, max_probe_length=None, values=None):
    graph = new_graph(device)
    words = 1 if flat(right).ndim == 1 else 2
    rview, _ = key_view(device, graph, "right", right)
    cls = GPUBatchHashIndex if isinstance(right, list) else GPUHashIndex
    extra = {} if isinstance(right, list) or values is None else {
        "values": graph.import_gpu_data("values", gpu_data(device, values))}
    index = cls(id="idx", keys=rview, key_words=words, max_probe_length=max_probe_length, **extra)
    index.add_to_graph(graph)
    lview, _ = key_view(device, graph, "left", left)
    capacity = capacity or max(len(left), 1)
    pairs, pairs_data = pairs_view(device, graph, "pairs", capacity)
    count = gpu_data(device, [SENTINEL])
    stats, stats_data_ = stats_data(device, graph, "stats")
    join = GPUHashJoin(id="j", left_keys=lview, index=index, pairs=pairs, count=graph.import_gpu_data("n", count),
                       capacity=capacity, stats=stats)
    ids = join.add_to_graph(graph)
    run(graph)
    return dict(pairs=read(device, pairs_data).reshape(-1, 2), count=int(read(device, count)[0]),
                stats=as_dict(read(device, stats_data_), LOOKUP_STATS), ids=ids)


def expected_pairs(right, left, values=None):
    table, _ = oracles.hash_index(flat(right), values)
    return oracles.hash_join(table, flat(left))


@settings(max_examples=10, deadline=None)
@given(n=st.one_of(st.sampled_from([0, 1, 5, TILE - 1, TILE, TILE + 1, 2 * TILE + 3]), st.integers(0, 3 * TILE)),
       words=st.sampled_from([1, 2]), right_rows=st.sampled_from([1, 300, 5000]), seed=st.integers(0, 2**16))
def test_matches_dict(device, n, words, right_rows, seed):
    rng = np.random.default_rng(seed)
    right = random_keys(rng, right_rows, words, 2 * right_rows)
    left = random_keys(rng, n, words, 3 * right_rows)
    if n > 3:
        left[rng.integers(0, n)] = EMPTY_KEY
    values = rng.integers(0, 1 << 32, right_rows, dtype=np.uint64).astype(np.uint32)
    got = join_on_gpu(device, right, left, values=values)
    exp = expected_pairs(right, left, values)
    assert got["count"] == len(exp) == got["stats"]["found_count"] == got["stats"]["written_count"]
    np.testing.assert_array_equal(got["pairs"][:len(exp)], exp)
    assert (got["pairs"][len(exp):] == SENTINEL).all()
    assert got["stats"]["overflow"] == 0 and got["stats"]["index_overflow"] == 0
    assert got["stats"]["invalid_count"] == int((left.reshape(n, words) == EMPTY_KEY).all(axis=1).sum())


@pytest.mark.parametrize("short", [0, 1, 500])
def test_capacity_exactly_enough_or_short(device, short):
    """The first ``capacity`` pairs in left order are written, the count is
    the exact requirement, and the shortfall is the overflow."""
    rng = np.random.default_rng(short)
    right = rng.permutation(2000).astype(np.uint32)
    left = rng.integers(0, 3000, TILE + 7).astype(np.uint32)
    exp = expected_pairs(right, left)
    capacity = len(exp) - short
    got = join_on_gpu(device, right, left, capacity=capacity)
    assert got["count"] == len(exp)
    assert (got["stats"]["written_count"], got["stats"]["overflow"]) == (capacity, short)
    np.testing.assert_array_equal(got["pairs"], exp[:capacity])


def test_incomplete_index_propagates(device):
    right = crafted_chain(300, 1024)
    left = np.concatenate([right, right[:10]])
    got = join_on_gpu(device, right, left, max_probe_length=32)
    assert got["stats"]["index_overflow"] == 300 - 32
    assert got["count"] == got["stats"]["found_count"] == 32 + 10


def test_empty_left_writes_a_zero_count(device):
    got = join_on_gpu(device, np.arange(10, dtype=np.uint32), np.zeros(0, np.uint32), capacity=4)
    assert got["count"] == 0 and got["ids"] == ["j-count-clear", "j-lookup", "j-scatter"]
    assert (got["pairs"] == SENTINEL).all()
    assert got["stats"] == dict.fromkeys(LOOKUP_STATS, 0)


@pytest.mark.parametrize("chunks", [[0, 5, TILE + 1, 0, 3], [0], [300]])
@pytest.mark.parametrize("words", [1, 2])
def test_batch_join_per_batch(device, chunks, words):
    """Each left chunk joins the shared (chunked) right index on its own:
    global left rows, its own capacity (the second batch one short), count
    and statistics."""
    rng = np.random.default_rng(len(chunks) + words)
    right = [random_keys(rng, n, words, 1000) for n in (400, 0, 123)]
    left = [random_keys(rng, n, words, 1500) for n in chunks]
    table, _ = oracles.hash_index(flat(right))
    expected, base = [], 0
    for chunk in left:
        expected.append(oracles.hash_join(table, chunk, row_base=base))
        base += len(chunk)
    capacities = [max(len(e), 1) for e in expected]
    if len(chunks) > 1 and len(expected[1]) > 1:
        capacities[1] -= 1
    graph = new_graph(device)
    rview, _ = key_view(device, graph, "right", right)
    index = GPUBatchHashIndex(id="idx", keys=rview, key_words=words)
    index.add_to_graph(graph)
    lview, _ = key_view(device, graph, "left", left)
    outs = gpu_vector(device, [np.full(2 * c, SENTINEL) for c in capacities])
    out_view = graph.import_gpu_vector("pairs", outs)
    pairs = [graph.create_data_view(v.handle, format="uint32x2", length=v.length // 2, byte_offset=v.byte_offset)
             for v in out_view.views]
    counts = gpu_data(device, np.full(len(chunks), SENTINEL))
    stats, stats_data_ = stats_data(device, graph, "stats", 8 * len(chunks))
    join = GPUBatchHashJoin(id="bj", left_keys=lview, index=index, pairs=pairs,
                            counts=graph.import_gpu_data("counts", counts), stats=stats)
    join.add_to_graph(graph)
    run(graph)
    got_counts = read(device, counts)
    words_ = read(device, stats_data_).reshape(len(chunks), 8)
    for b, (exp, cap, chunk) in enumerate(zip(expected, capacities, outs.chunks)):
        s = as_dict(words_[b], LOOKUP_STATS)
        got = read(device, chunk).reshape(-1, 2)
        assert got_counts[b] == len(exp) == s["found_count"]
        assert (s["written_count"], s["overflow"]) == (min(cap, len(exp)), len(exp) - min(cap, len(exp)))
        np.testing.assert_array_equal(got[:min(cap, len(exp))], exp[:cap])


def test_errors(device, graph):
    keys = graph.import_gpu_data("k", gpu_data(device, np.arange(100)))
    index = GPUHashIndex(id="h", keys=keys)
    index.add_to_graph(graph)
    pairs, _ = pairs_view(device, graph, "p", 10)
    count = graph.import_gpu_data("n", gpu_data(device, [0]))
    with pytest.raises(gpuviz.GraphValidationError, match='GPUHashJoin "j" capacity must be at least 1'):
        GPUHashJoin(id="j", left_keys=keys, index=index, pairs=pairs, count=count, capacity=0)
    with pytest.raises(gpuviz.GraphValidationError, match=r"pairs is shorter than needed \(needs 11 rows, got 10\)"):
        GPUHashJoin(id="j", left_keys=keys, index=index, pairs=pairs, count=count, capacity=11).add_to_graph(graph)
    flat_pairs = graph.import_gpu_data("fp", gpu_data(device, np.zeros(20)))
    with pytest.raises(gpuviz.GraphValidationError, match=r"pairs must be uint32x2 \(got uint32\)"):
        GPUHashJoin(id="j", left_keys=keys, index=index, pairs=flat_pairs, count=count,
                    capacity=10).add_to_graph(graph)
    wide = graph.create_data_view(flat_pairs.handle, format="uint32x2", length=10)
    with pytest.raises(gpuviz.GraphValidationError, match=r"left_keys must be uint32 \(got uint32x2\)"):
        GPUHashJoin(id="j", left_keys=wide, index=index, pairs=pairs, count=count, capacity=10).add_to_graph(graph)
    vec = graph.import_gpu_vector("lv", gpu_vector(device, [np.arange(3)]))
    with pytest.raises(gpuviz.GraphValidationError, match="use GPUBatchHashJoin"):
        GPUHashJoin(id="j", left_keys=vec, index=index, pairs=pairs, count=count, capacity=10)
    with pytest.raises(gpuviz.GraphValidationError, match="has 1 left chunks but 2 pairs outputs"):
        GPUBatchHashJoin(id="b", left_keys=vec, index=index, pairs=[pairs, pairs], counts=count)
    words = graph.import_gpu_data("w", gpu_data(device, np.zeros(16))).handle
    with pytest.raises(gpuviz.GraphValidationError, match='count shares buffer "w" with stats'):
        GPUHashJoin(id="j", left_keys=keys, index=index, pairs=pairs, capacity=10,
                    count=graph.create_data_view(words, format="uint32", length=1),
                    stats=graph.create_data_view(words, format="uint32", length=8, byte_offset=32)).add_to_graph(graph)


def test_bench_tiny(capsys):
    """``python -m gpuviz.bench hash`` at a tiny size: every row prints only
    after matching numpy (and hash_join after matching pandas)."""
    from gpuviz.bench import main

    assert main(["hash", "--sizes", "4K", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    for text in ("build (unique keys)", "lookup (50% hits)", "join ⋈ 256 rows", "flights (336776) ⋈ planes"):
        assert text in out
    assert "NOT PRINTED" not in out
