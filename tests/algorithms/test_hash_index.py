"""GPUHashIndex, GPUBatchHashIndex and GPUHashIndexQuery against a dict:
random and adversarial keys, empty inputs, one row, capacity boundaries,
duplicates, 64-bit keys whose low words collide, chunked indexes and
queries with empty and uneven chunks, re-encoding and errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import (EMPTY_KEY, NOT_FOUND, GPUBatchHashIndex, GPUHashIndex, GPUHashIndexQuery)
from gpuviz.algorithms.hash_table import INDEX_STATS, LOOKUP_STATS
from gpuviz.oracles import algorithms as oracles

from .conftest import gpu_data, gpu_vector, new_graph, read, submit_encodings

SENTINEL = 0xDEADBEEF
WG = 256  # rows per insert / lookup workgroup


def key_view(device, graph, name, keys):
    """Keys (n,) -> a uint32 view; (n, 2) -> a uint32x2 view; a list of
    arrays -> a vector view of such chunks."""
    if isinstance(keys, list):
        words = 1 if not keys or keys[0].ndim == 1 else 2
        vec = gpu_vector(device, [k.reshape(-1) for k in keys])
        view = graph.import_gpu_vector(name, vec)
        if words == 1:
            return view, vec
        chunks = [graph.create_data_view(v.handle, format="uint32x2", length=v.length // 2,
                                         byte_offset=v.byte_offset) for v in view.views]
        return gpuviz.GraphVectorView(name, tuple(chunks), chunks[0].format if chunks else
                                      gpuviz.GPUVectorFormat.get("uint32x2")), vec
    keys = np.asarray(keys, np.uint32)
    data = gpu_data(device, keys.reshape(-1))
    view = graph.import_gpu_data(name, data)
    fmt = "uint32" if keys.ndim == 1 else "uint32x2"
    return graph.create_data_view(view.handle, format=fmt, length=len(keys)), data


def stats_data(device, graph, name, words=8):
    data = gpu_data(device, np.full(words, SENTINEL))
    return graph.import_gpu_data(name, data), data


def as_dict(words, fields):
    return dict(zip(fields, (int(w) for w in words)))


def build_and_query(device, keys, queries, *, values=None, capacity=None, max_load_factor=0.9,
                    max_probe_length=None, encodings=1, batch=None):
    """Build an index of ``keys`` (a list of chunks: GPUBatchHashIndex), look
    ``queries`` up (a list: chunked) and read everything back."""
    graph = new_graph(device)
    kview, _ = key_view(device, graph, "keys", keys)
    words = 1 if flat(keys).ndim == 1 else 2
    istats, istats_data = stats_data(device, graph, "index-stats")
    common = dict(keys=kview, capacity=capacity, key_words=words, max_load_factor=max_load_factor,
                  max_probe_length=max_probe_length, stats=istats)
    if isinstance(keys, list):
        index = GPUBatchHashIndex(id="idx", **common)
    else:
        vals = None if values is None else graph.import_gpu_data("values", gpu_data(device, values))
        index = GPUHashIndex(id="idx", values=vals, **common)
    index.add_to_graph(graph)
    qview, _ = key_view(device, graph, "queries", queries)
    lengths = [len(q) for q in queries] if isinstance(queries, list) else None
    if lengths is None:
        out_data = gpu_data(device, np.full(len(queries), SENTINEL))
        found_data = gpu_data(device, np.full(len(queries), SENTINEL))
        out, found = graph.import_gpu_data("out", out_data), graph.import_gpu_data("found", found_data)
    else:
        out_data = gpu_vector(device, [np.full(n, SENTINEL) for n in lengths])
        found_data = gpu_vector(device, [np.full(n, SENTINEL) for n in lengths])
        out, found = graph.import_gpu_vector("out", out_data), graph.import_gpu_vector("found", found_data)
    qstats, qstats_data = stats_data(device, graph, "query-stats")
    query = GPUHashIndexQuery(id="q", index=index, keys=qview, output=out, found=found, stats=qstats)
    query.add_to_graph(graph)
    compiled = graph.compile()
    submit_encodings(device, compiled, encodings)
    return dict(index=as_dict(read(device, istats_data), INDEX_STATS),
                query=as_dict(read(device, qstats_data), LOOKUP_STATS),
                out=read(device, out_data), found=read(device, found_data), compiled=compiled, graph=graph)


def flat(keys):
    if isinstance(keys, list):
        return np.concatenate(keys) if keys else np.zeros(0, np.uint32)
    return np.asarray(keys, np.uint32)


def check(result, keys, queries, values=None):
    keys, queries = flat(keys), flat(queries)
    table, counts = oracles.hash_index(keys, values)
    out, found = oracles.hash_lookup(table, queries)
    np.testing.assert_array_equal(result["out"], out)
    np.testing.assert_array_equal(result["found"], found)
    s = result["index"]
    for field, value in counts.items():
        assert s[field] == value, (field, s, counts)
    assert s["overflow"] == 0
    assert s["inserted_count"] + s["duplicate_count"] + s["invalid"] == len(keys)
    q = result["query"]
    assert q["found_count"] == found.sum()
    assert q["invalid_count"] == int(np.all(queries.reshape(len(queries), -1) == EMPTY_KEY, axis=1).sum())
    assert q["index_overflow"] == 0 and q["written_count"] == 0 and q["overflow"] == 0
    total = s["total_probe_length_low"] + (s["total_probe_length_high"] << 32)
    valid = len(keys) - s["invalid"]
    assert (s["max_probe_length"] >= 1) == (valid > 0)
    assert valid <= total <= valid * s["max_probe_length"]


def random_keys(rng, n, words, distinct):
    shape = (n,) if words == 1 else (n, 2)
    high = 1 << 32 if distinct is None else distinct
    return rng.integers(0, high, shape, dtype=np.uint64).astype(np.uint32)


@settings(max_examples=14, deadline=None)
@given(n=st.one_of(st.sampled_from([0, 1, WG - 1, WG, WG + 1, 3 * WG + 5]), st.integers(0, 2000)),
       words=st.sampled_from([1, 2]), distinct=st.sampled_from([None, 3, 700]),
       with_values=st.booleans(), seed=st.integers(0, 2**16))
def test_matches_dict(device, n, words, distinct, with_values, seed):
    rng = np.random.default_rng(seed)
    keys = random_keys(rng, n, words, distinct)
    if n > 2:
        keys[rng.integers(0, n)] = EMPTY_KEY  # an invalid row
    hits = keys[rng.integers(0, n, 300)] if n else keys[:0]
    queries = np.concatenate([hits, random_keys(rng, 300, words, distinct and 2 * distinct)])
    values = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) if with_values else None
    check(build_and_query(device, keys, queries, values=values), keys, queries, values)


@pytest.mark.parametrize("words", [1, 2])
def test_exactly_full_table(device, words):
    """capacity == rows (max_load_factor=1): every key is stored and found,
    and misses stop after the longest chain rather than looping."""
    rng = np.random.default_rng(3)
    n = 1024
    keys = np.unique(random_keys(rng, 3 * n, words, None), axis=0)[:n]
    keys = keys[rng.permutation(n)]
    queries = np.concatenate([keys, random_keys(rng, 500, words, None)])
    result = build_and_query(device, keys, queries, capacity=n, max_load_factor=1.0)
    check(result, keys, queries)
    assert result["index"]["inserted_count"] == n


def test_duplicates_lowest_row_wins_every_encoding(device):
    """Many rows per key racing: the lowest source row's value is stored,
    whatever the order, and encoding three times in one submit agrees."""
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 40, 5000).astype(np.uint32)
    values = np.arange(5000, dtype=np.uint32)[::-1].copy()
    queries = np.arange(60, dtype=np.uint32)
    result = build_and_query(device, keys, queries, values=values, encodings=3)
    check(result, keys, queries, values)
    assert result["index"]["duplicate_count"] == 5000 - 40


def test_multiples_of_capacity_spread_out(device):
    """The hash mixes: keys that are multiples of the capacity (one slot
    under an identity hash) keep short probe chains."""
    keys = (np.arange(2000, dtype=np.uint32) * 4096).astype(np.uint32)
    result = build_and_query(device, keys, keys, capacity=4096)
    check(result, keys, keys)
    assert result["index"]["max_probe_length"] < 40


def crafted_chain(n, capacity, slot=7):
    """``n`` distinct keys whose hash lands on one slot (hash flooding)."""
    keys = oracles.fmix32_inverse(np.arange(n, dtype=np.uint64) * capacity + slot)
    assert (oracles.hash_slot(keys, capacity) == slot).all()
    return keys[keys != EMPTY_KEY]


def test_hash_flooding_finishes_and_reports_long_chains(device):
    keys = crafted_chain(1500, 4096)
    queries = np.concatenate([keys, crafted_chain(1600, 4096)[1500:], np.arange(100, dtype=np.uint32)])
    result = build_and_query(device, keys, queries, capacity=4096)
    check(result, keys, queries)
    s = result["index"]
    assert s["max_probe_length"] == len(keys)
    assert s["total_probe_length_low"] == len(keys) * (len(keys) + 1) // 2
    assert result["query"]["max_probe_length"] == len(keys)


def test_probe_bound_overflows_and_queries_see_an_incomplete_index(device):
    keys = crafted_chain(600, 4096)
    result = build_and_query(device, keys, keys, capacity=4096, max_probe_length=64)
    s = result["index"]
    assert (s["inserted_count"], s["overflow"], s["max_probe_length"]) == (64, len(keys) - 64, 64)
    assert result["query"]["index_overflow"] == len(keys) - 64
    assert result["query"]["found_count"] == 64
    hit = result["found"] != 0
    np.testing.assert_array_equal(result["out"][hit], np.flatnonzero(hit))


def test_two_word_keys_whose_low_words_collide(device):
    rng = np.random.default_rng(9)
    high = rng.permutation(3000).astype(np.uint32)[:1500]
    keys = np.stack([np.full(1500, 5, np.uint32), high], axis=1)
    edge = [[EMPTY_KEY, 1], [1, EMPTY_KEY], [EMPTY_KEY, EMPTY_KEY], [5, high[0]]]
    keys = np.concatenate([keys, edge]).astype(np.uint32)
    queries = np.concatenate([keys, [[5, 4000], [6, high[1]], [high[1], 5]]]).astype(np.uint32)
    result = build_and_query(device, keys, queries)
    check(result, keys, queries)
    assert result["index"]["invalid"] == 1 and result["index"]["duplicate_count"] == 1


@pytest.mark.parametrize("chunks", [[0, 300, 0, 1, 513], [0, 0], [WG + 1], [5, 0]])
@pytest.mark.parametrize("words", [1, 2])
def test_batch_index_global_rows(device, chunks, words):
    """Chunks (empty and uneven) are inserted in place; values are global
    rows and a key repeated across chunks keeps its first global row."""
    rng = np.random.default_rng(sum(chunks))
    keys = [random_keys(rng, n, words, 400) for n in chunks]
    everything = flat(keys) if sum(chunks) else random_keys(rng, 0, words, 1)
    queries = [everything[::3], random_keys(rng, 0, words, 1), random_keys(rng, 77, words, 800)]
    check(build_and_query(device, keys, queries), keys, queries)


def test_rebuilds_from_new_contents_without_recompiling(device):
    keys = np.arange(100, dtype=np.uint32)
    graph = new_graph(device)
    kview, kdata = key_view(device, graph, "keys", keys)
    index = GPUHashIndex(id="idx", keys=kview)
    index.add_to_graph(graph)
    out = gpu_data(device, np.zeros(100))
    qview, _ = key_view(device, graph, "queries", keys)
    GPUHashIndexQuery(id="q", index=index, keys=qview, output=graph.import_gpu_data("out", out)).add_to_graph(graph)
    compiled = graph.compile()
    submit_encodings(device, compiled, 1)
    np.testing.assert_array_equal(read(device, out), np.arange(100))
    device.queue.write_buffer(kdata.buffer, 0, (keys[::-1] + 1000).astype(np.uint32).tobytes())
    submit_encodings(device, compiled, 1)
    np.testing.assert_array_equal(read(device, out), np.full(100, NOT_FOUND))
    device.queue.write_buffer(kdata.buffer, 0, keys[::-1].tobytes())
    submit_encodings(device, compiled, 1)
    np.testing.assert_array_equal(read(device, out), np.arange(100)[::-1])


def test_empty_index_finds_nothing(device):
    queries = np.arange(10, dtype=np.uint32)
    result = build_and_query(device, np.zeros(0, np.uint32), queries)
    check(result, np.zeros(0, np.uint32), queries)
    assert result["index"]["max_probe_length"] == 0


def test_errors(device, graph):
    keys = graph.import_gpu_data("k", gpu_data(device, np.arange(100)))
    with pytest.raises(gpuviz.GraphValidationError, match=r'GPUHashIndex "h" capacity 64 is below the 100 rows'):
        GPUHashIndex(id="h", keys=keys, capacity=64)
    keys120 = graph.create_data_view(graph.import_gpu_data("k120", gpu_data(device, np.arange(120))).handle,
                                     format="uint32", length=120)
    with pytest.raises(gpuviz.GraphValidationError, match=r"load factor 0\.938 \(120 rows in 128 slots\) is over "
                                                          r"the maximum 0\.9 \(raise capacity to 256\)"):
        GPUHashIndex(id="h", keys=keys120, capacity=128)
    assert GPUHashIndex(id="h", keys=keys120, capacity=128, max_load_factor=1.0).capacity == 128
    with pytest.raises(gpuviz.GraphValidationError,
                       match=r"capacity must be a power of two from 1 to 1073741824 \(got 300\)"):
        GPUHashIndex(id="h", keys=keys, capacity=300)
    with pytest.raises(gpuviz.GraphValidationError, match="key_words must be 1 or 2"):
        GPUHashIndex(id="h", keys=keys, key_words=3)
    with pytest.raises(gpuviz.GraphValidationError, match="max_probe_length must be an int from 1 to the capacity"):
        GPUHashIndex(id="h", keys=keys, max_probe_length=0)
    with pytest.raises(gpuviz.GraphValidationError, match=r"keys must be uint32x2 \(got uint32\)"):
        GPUHashIndex(id="h", keys=keys, key_words=2).add_to_graph(graph)
    vec = graph.import_gpu_vector("kv", gpu_vector(device, [np.arange(3)]))
    with pytest.raises(gpuviz.GraphValidationError, match="use GPUBatchHashIndex"):
        GPUHashIndex(id="h", keys=vec)
    with pytest.raises(gpuviz.GraphValidationError, match="use GPUHashIndex for one packed batch"):
        GPUBatchHashIndex(id="h", keys=keys)
    out = graph.import_gpu_data("o", gpu_data(device, np.zeros(100)))
    index = GPUHashIndex(id="h", keys=keys)
    with pytest.raises(gpuviz.GraphStateError, match='GPUHashIndexQuery "q" index "h" has not been added'):
        GPUHashIndexQuery(id="q", index=index, keys=keys, output=out).add_to_graph(graph)
    index.add_to_graph(graph)
    short = graph.import_gpu_data("s", gpu_data(device, np.zeros(99)))
    with pytest.raises(gpuviz.GraphValidationError, match=r"output is shorter than keys \(needs 100 rows, got 99\)"):
        GPUHashIndexQuery(id="q", index=index, keys=keys, output=short).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="output and keys share buffer"):
        GPUHashIndexQuery(id="q", index=index, keys=keys, output=keys).add_to_graph(graph)


def test_query_refuses_an_index_of_another_graph_or_destroyed_keys(device):
    a, b = new_graph(device, id="a"), new_graph(device, id="b")
    data = gpu_data(device, np.arange(5))
    index = GPUHashIndex(id="h", keys=a.import_gpu_data("k", data))
    index.add_to_graph(a)
    out = b.import_gpu_data("o", gpu_data(device, np.zeros(5)))
    keys_b = b.import_gpu_data("k", gpu_data(device, np.arange(5)))
    with pytest.raises(gpuviz.GraphStateError, match='index "h" belongs to graph "a", not "b"'):
        GPUHashIndexQuery(id="q", index=index, keys=keys_b, output=out).add_to_graph(b)
    data.buffer.destroy()
    out_a = a.import_gpu_data("o", gpu_data(device, np.zeros(5)))
    with pytest.raises(gpuviz.GraphStateError, match='index "h" keys buffer "k" was destroyed'):
        GPUHashIndexQuery(id="q", index=index, keys=a.import_gpu_data("k2", gpu_data(device, np.arange(5))),
                          output=out_a).add_to_graph(a)


def test_chunks_at_unaligned_offsets_of_one_buffer(device):
    """Key, output and found chunks that share one buffer each, starting at
    word offsets that are not binding-aligned (the kernels add each view's
    element offset), with guard words around them left untouched."""
    from .conftest import shared_vector

    rng = np.random.default_rng(21)
    lengths, starts = [5, 0, 300, 7], [3, 9, 11, 317]
    keys = [rng.integers(0, 200, n).astype(np.uint32) for n in lengths]
    queries = [rng.integers(0, 400, n).astype(np.uint32) for n in lengths]
    graph = new_graph(device)
    kvec = graph.import_gpu_vector("keys", shared_vector(device, keys, starts, fill=SENTINEL))
    index = GPUBatchHashIndex(id="idx", keys=kvec)
    index.add_to_graph(graph)
    out = shared_vector(device, [np.zeros(n) for n in lengths], starts, fill=SENTINEL)
    found = shared_vector(device, [np.zeros(n) for n in lengths], [s + 1 for s in starts], fill=SENTINEL)
    qvec = graph.import_gpu_vector("queries", shared_vector(device, queries, starts))
    GPUHashIndexQuery(id="q", index=index, keys=qvec, output=graph.import_gpu_vector("out", out),
                      found=graph.import_gpu_vector("found", found)).add_to_graph(graph)
    compiled = graph.compile()
    submit_encodings(device, compiled, 1)
    table, _ = oracles.hash_index(flat(keys))
    expected_out, expected_found = oracles.hash_lookup(table, flat(queries))
    np.testing.assert_array_equal(read(device, out), expected_out)
    np.testing.assert_array_equal(read(device, found), expected_found)
    for vector, first in ((out, starts), (found, [s + 1 for s in starts])):
        buffer = vector.chunks[0].buffer
        words = read(device, gpuviz.GPUData(buffer, format="uint32", length=buffer.size // 4))
        inside = np.zeros(words.size, bool)
        for start, n in zip(first, lengths):
            inside[start:start + n] = True
        assert (words[~inside] == SENTINEL).all()
