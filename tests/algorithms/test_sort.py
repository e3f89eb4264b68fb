"""GPUSort, GPUBatchSort and GPUSegmentedSort against numpy's stable argsort.

Covers both algorithms (one-workgroup bitonic, radix passes), both radix
ranking paths (subgroups, portable), the never-hang look-back fallback,
boundary sizes around one workgroup and one tile, key distributions,
directions, key_bits, views at unaligned offsets, vectors with empty and
uneven chunks, segments with gaps and mixed widths, and every input error.
"""

import numpy as np
import pytest
import wgpu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuviz import (GPUBatchSort, GPUCommandGraph, GPUData, GPUSegmentedSort, GPUSort, GPUVector, GraphError,
                    GraphTypeError, GraphValidationError, ScanTuning, SortTuning, read_array)
from gpuviz.algorithms.sort import check_args, radix_shader, width_class
from gpuviz.graph.shaders import ShaderTemplateError
from gpuviz.oracles.algorithms import sort_order

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
TILE = SortTuning().tile  # 5376 rows
RADIX = SortTuning(small_max=1)  # radix passes at every size
PORTABLE = SortTuning(small_max=1, subgroups=False)
FALLBACK = SortTuning(small_max=1, spin_limit=0)  # count a predecessor's digits whenever it is late
SENTINEL = 0xDEADBEEF


def make_keys(rng, n, dist):
    if dist == "random":
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if dist == "equal":
        return np.full(n, 0x9E3779B9, np.uint32)
    if dist == "few":
        return (rng.integers(0, 3, n) * 0x01010101 + 0x80000000).astype(np.uint32)
    base = np.sort(rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    return base if dist == "sorted" else base[::-1].copy()


def expected(keys, values, direction="ascending", key_bits=32):
    order = sort_order(keys, key_bits, direction == "descending")
    return keys[order], None if values is None else values[order]


def read_u32(device, buffer, start, n):
    return np.frombuffer(device.queue.read_buffer(buffer), np.uint32)[start:start + n]


def run_graph(device, graph):
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    return compiled


def gpu_sort(device, keys, values=None, *, direction="ascending", key_bits=32, tuning=None, pad=(0, 0)):
    """Sort through GPUSort with the rows placed ``pad[0]`` words into their
    input buffers and ``pad[1]`` words into output buffers full of SENTINEL;
    returns sorted keys, values, the sort object and the raw output buffers."""
    n = len(keys)
    ins, outs = pad

    def buffer(data, lead):
        full = np.full(lead + n + 3, SENTINEL, np.uint32)
        if data is not None:
            full[lead:lead + n] = data
        return device.create_buffer_with_data(data=full, usage=USAGE)

    graph = GPUCommandGraph(device, id="sort-test")
    views = {}
    buffers = {"keys": buffer(keys, ins), "out_keys": buffer(None, outs)}
    if values is not None:
        buffers |= {"values": buffer(values, ins), "out_values": buffer(None, outs)}
    for name, buf in buffers.items():
        handle = graph.import_buffer(id=name, byte_length=buf.size, usage=USAGE, buffer=buf)
        lead = outs if name.startswith("out") else ins
        views[name] = graph.create_data_view(handle, format="uint32", length=n, byte_offset=4 * lead)
    sort = GPUSort(id="s", keys=views["keys"], output_keys=views["out_keys"], values=views.get("values"),
                   output_values=views.get("out_values"), direction=direction, key_bits=key_bits, tuning=tuning)
    sort.add_to_graph(graph)
    run_graph(device, graph)
    got_v = None if values is None else read_u32(device, buffers["out_values"], outs, n)
    return read_u32(device, buffers["out_keys"], outs, n), got_v, sort, buffers


def check_sort(device, keys, values=None, **kwargs):
    direction, key_bits = kwargs.get("direction", "ascending"), kwargs.get("key_bits", 32)
    got_k, got_v, sort, _ = gpu_sort(device, keys, values, **kwargs)
    want_k, want_v = expected(keys, values, direction, key_bits)
    np.testing.assert_array_equal(got_k, want_k)
    if values is not None:
        np.testing.assert_array_equal(got_v, want_v)
    return sort


# ------------------------------------------------------------------ GPUSort
@pytest.mark.parametrize("n", [0, 1, 2, 255, 256, 257, 1000, 2048])
def test_bitonic_sizes(device, n):
    rng = np.random.default_rng(n)
    sort = check_sort(device, make_keys(rng, n, "few"), np.arange(n, dtype=np.uint32), direction="descending")
    assert sort.algorithm == ("empty" if n == 0 else "bitonic")
    assert len(sort.node_ids) == (n > 0)


@pytest.mark.parametrize("n", [2, 255, 256, 257, TILE - 1, TILE, TILE + 1, 3 * TILE + 17])
def test_radix_sizes(device, n):
    rng = np.random.default_rng(n)
    sort = check_sort(device, make_keys(rng, n, "random"), np.arange(n, dtype=np.uint32), tuning=RADIX)
    assert sort.algorithm == "radix"
    assert sort.node_ids == ["s-clear", "s-histogram", "s-scatter-0", "s-scatter-1", "s-scatter-2", "s-scatter-3"]


@pytest.mark.parametrize("subgroups", [None, False], ids=["subgroups", "portable"])
def test_values_loaded_after_lookback(device, subgroups):
    """late_values=True loads a tile's values after its look-back instead of with its keys (the default)."""
    rng = np.random.default_rng(11)
    n = 2 * TILE + 300
    tuning = SortTuning(small_max=1, late_values=True, subgroups=subgroups)
    check_sort(device, make_keys(rng, n, "few"), rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),
               tuning=tuning, direction="descending")
    check_sort(device, make_keys(rng, n, "random"), np.arange(n, dtype=np.uint32), tuning=tuning)


@pytest.mark.parametrize("tuning", [
    SortTuning(small_max=1, items=6, staging="plain"),
    SortTuning(small_max=1, items=6, staging="plain", ballots_first=True),
    SortTuning(small_max=1, staging="shared", ballots_first=True),
    SortTuning(small_max=1, items=6, staging="plain", subgroups=False),
    SortTuning(small_max=1, items=6, staging="plain", rank_lanes=128, ballots_first=True),  # portable fallback
    SortTuning(small_max=1, items=6, staging="auto", ballots_first=True, late_values=False),
    SortTuning(small_max=1, items=6, runtime_checks=True),
    SortTuning(small_max=1, items=6, runtime_checks=True, subgroups=False),
], ids=["plain", "plain-ballots-first", "shared-ballots-first", "plain-portable", "plain-lanes-fallback",
        "auto-early-values", "checked", "checked-portable"])
@pytest.mark.parametrize("dist", ["random", "few", "equal"])
def test_staging_and_ranking_variants(device, tuning, dist):
    """Plain (non-atomic) workgroup staging, ballots issued before the counter atomics, and the portable
    fallback when the ranking counters have no room for the device's subgroups."""
    rng = np.random.default_rng(7)
    n = 3 * tuning.tile + 77
    keys = make_keys(rng, n, dist)
    check_sort(device, keys, rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), tuning=tuning)
    check_sort(device, keys, None, tuning=tuning, direction="descending")


def test_staging_validation(device):
    for bad in (SortTuning(staging="atomic"), SortTuning(rank_lanes=12), SortTuning(runtime_checks="no"),
                SortTuning(pad_words=-1), SortTuning(radix_template=None), SortTuning(template_values=[("a", 1)]),
                SortTuning(template_values=(("a",),))):
        with pytest.raises(GraphValidationError, match="invalid sort tuning"):
            check_args("GPUSort", "s", "ascending", 32, bad, device)
    assert SortTuning(items=18).resolved_staging(device) in ("plain", "shared")


@pytest.mark.parametrize("dist", ["random", "equal", "few", "sorted", "reverse"])
@pytest.mark.parametrize("direction", ["ascending", "descending"])
@pytest.mark.parametrize("tuning", [RADIX, PORTABLE, None], ids=["subgroups", "portable", "bitonic"])
def test_distributions_and_directions(device, dist, direction, tuning):
    rng = np.random.default_rng(len(dist))
    n = 2 * TILE + 123 if tuning is not None else 1500
    keys = make_keys(rng, n, dist)
    check_sort(device, keys, rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), direction=direction,
               tuning=tuning)


@pytest.mark.parametrize("key_bits", [1, 8, 31, 12])
@pytest.mark.parametrize("tuning", [RADIX, PORTABLE, None], ids=["subgroups", "portable", "bitonic"])
def test_key_bits_order_only_low_bits(device, key_bits, tuning):
    rng = np.random.default_rng(key_bits)
    n = TILE + 500 if tuning is not None else 700
    keys = make_keys(rng, n, "random")
    sort = check_sort(device, keys, np.arange(n, dtype=np.uint32), key_bits=key_bits, tuning=tuning,
                      direction="descending" if key_bits == 31 else "ascending")
    if tuning is not None:  # fewer digit passes for fewer bits
        assert sum(i.startswith("s-scatter") for i in sort.node_ids) == -(-key_bits // 8)


@pytest.mark.parametrize("shared_byte", [0, 1, 3], ids=["low", "middle", "top"])
@pytest.mark.parametrize("direction", ["ascending", "descending"])
@pytest.mark.parametrize("tuning", [RADIX, PORTABLE], ids=["subgroups", "portable"])
def test_trivial_passes_copy(device, shared_byte, direction, tuning):
    """A digit every key shares makes its pass the identity: the tiles copy instead of scattering."""
    rng = np.random.default_rng(shared_byte)
    n = 2 * TILE + 321
    keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    keys = (keys & ~np.uint32(0xFF << (8 * shared_byte))) | np.uint32(0xA5 << (8 * shared_byte))
    values = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    check_sort(device, keys, values, direction=direction, tuning=tuning)
    check_sort(device, keys, None, direction=direction, tuning=tuning)


def test_lookback_fallback_and_many_tiles(device):
    """Tiles that never wait (spin limit 0) count late predecessors' digits
    themselves; 2-row-per-lane tiles give long look-back chains."""
    rng = np.random.default_rng(7)
    for tuning, n in ((FALLBACK, 3 * TILE + 5), (SortTuning(small_max=1, items=2, spin_limit=0), 40 * 512 + 9),
                      (SortTuning(small_max=1, items=2), 40 * 512 + 9)):
        check_sort(device, make_keys(rng, n, "few"), np.arange(n, dtype=np.uint32), tuning=tuning,
                   direction="descending")


@pytest.mark.parametrize("tuning", [RADIX, None], ids=["radix", "bitonic"])
def test_keys_only_and_unaligned_views_leave_neighbours(device, tuning):
    rng = np.random.default_rng(11)
    n = TILE + 77 if tuning is not None else 300
    keys = make_keys(rng, n, "random")
    got, _, _, buffers = gpu_sort(device, keys, tuning=tuning, pad=(3, 5))
    np.testing.assert_array_equal(got, np.sort(keys, kind="stable"))
    raw = read_u32(device, buffers["out_keys"], 0, n + 8)
    assert (raw[:5] == SENTINEL).all() and (raw[5 + n:] == SENTINEL).all()
    np.testing.assert_array_equal(read_u32(device, buffers["keys"], 3, n), keys)  # input untouched
    values = np.arange(n, dtype=np.uint32)
    got_k, got_v, _, _ = gpu_sort(device, keys, values, tuning=tuning, pad=(1, 2))
    want_k, want_v = expected(keys, values)
    np.testing.assert_array_equal(got_k, want_k)
    np.testing.assert_array_equal(got_v, want_v)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 2 * TILE + 3), distinct=st.sampled_from([1, 2, 7, 300, 1 << 32]),
       direction=st.sampled_from(["ascending", "descending"]), key_bits=st.sampled_from([32, 9, 17]),
       radix=st.booleans(), seed=st.integers(0, 2**16))
def test_property_matches_numpy(device, n, distinct, direction, key_bits, radix, seed):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, distinct, n, dtype=np.uint64).astype(np.uint32) * np.uint32(2654435761 % (1 << 32))
    check_sort(device, keys, np.arange(n, dtype=np.uint32), direction=direction, key_bits=key_bits,
               tuning=RADIX if radix else None)


def test_workgroup_padding_is_honoured(device):
    """pad_words (the profiler's "+1 KB workgroup memory") declares and touches unused workgroup words and is
    counted against the device's workgroup storage; the sort stays right."""
    tuning = SortTuning(small_max=1, items=6, pad_words=256)
    code, _ = radix_shader(tuning, subgroups=False, has_values=True, staging="shared")
    assert "var<workgroup> s_pad: array<u32, 256>;" in code and "s_pad[lid] = tile;" in code
    assert "s_pad" not in radix_shader(SortTuning(items=6), subgroups=False, has_values=True, staging="shared")[0]
    assert tuning.shared_words("shared") == SortTuning(items=6).shared_words("shared") + 256
    rng = np.random.default_rng(3)
    n = 2 * tuning.tile + 5
    check_sort(device, make_keys(rng, n, "random"), np.arange(n, dtype=np.uint32), tuning=tuning)


def test_radix_template_refuses_unknown_staging():
    with pytest.raises(ShaderTemplateError, match='staging must be "shared" or "plain" \\(got "atomic"\\)'):
        radix_shader(SortTuning(), subgroups=False, has_values=True, staging="atomic")


def test_width_class():
    assert [width_class(n) for n in (1, 2, 3, 255, 256, 257, 2048)] == [2, 2, 4, 256, 256, 512, 2048]


@pytest.mark.parametrize("cls", [GPUSort, GPUBatchSort, GPUSegmentedSort])
@pytest.mark.parametrize("bad", [ScanTuning(), 0, "fast"], ids=["scan-tuning", "zero", "str"])
def test_tuning_is_type_checked(device, cls, bad):
    """A tuning that is not a SortTuning raises at construction (a falsy one used to become the default)."""
    extra = {"offsets": [0], "lengths": [1]} if cls is GPUSegmentedSort else {}
    with pytest.raises(GraphTypeError) as err:
        cls(id="t", keys=None, output_keys=None, tuning=bad, **extra)
    assert f'{cls.__name__} "t" tuning must be a SortTuning (got {type(bad).__name__})' in str(err.value)
    assert isinstance(err.value, GraphError) and isinstance(err.value, TypeError)


# ------------------------------------------------------------- GPUBatchSort
def batch_sort(device, chunks, values=True, **kwargs):
    vk = GPUVector.from_numpy(device, chunks, format="uint32")
    vv = GPUVector.from_numpy(device, [np.arange(len(c), dtype=np.uint32) + 7 * i for i, c in enumerate(chunks)],
                              format="uint32")
    out = lambda: GPUVector([GPUData.allocate(device, format="uint32", length=len(c)) for c in chunks])
    ok, ov = out(), out()
    graph = GPUCommandGraph(device, id="batch-test")
    views = {name: graph.import_gpu_vector(name, v) for name, v in (("k", vk), ("v", vv), ("ok", ok), ("ov", ov))}
    sort = GPUBatchSort(id="b", keys=views["k"], output_keys=views["ok"], values=views["v"] if values else None,
                        output_values=views["ov"] if values else None, **kwargs)
    sort.add_to_graph(graph)
    run_graph(device, graph)
    return sort, ok, ov, vv


@pytest.mark.parametrize("direction", ["ascending", "descending"])
def test_batch_sort_keeps_chunks(device, direction):
    rng = np.random.default_rng(5)
    lengths = [0, 1, 300, 0, TILE + 9, 2, 2048, 0]
    chunks = [make_keys(rng, n, "few" if i % 2 else "random") for i, n in enumerate(lengths)]
    sort, ok, ov, vv = batch_sort(device, chunks, direction=direction)
    assert sort.algorithms == ["empty", "bitonic", "bitonic", "empty", "radix", "bitonic", "bitonic", "empty"]
    assert [c.length for c in ok.chunks] == lengths
    got_k, got_v = read_array(device, ok), read_array(device, ov)
    start = 0
    for chunk, vals in zip(chunks, (read_array(device, c) for c in vv.chunks)):
        want_k, want_v = expected(chunk, vals, direction)
        np.testing.assert_array_equal(got_k[start:start + len(chunk)], want_k)
        np.testing.assert_array_equal(got_v[start:start + len(chunk)], want_v)
        start += len(chunk)
    # one packed global sort would differ: rows stay in their chunk
    assert not np.array_equal(got_k, expected(np.concatenate(chunks), None, direction)[0])


def test_batch_sort_keys_only_with_radix_everywhere(device):
    rng = np.random.default_rng(6)
    chunks = [make_keys(rng, n, "random") for n in (500, 0, 1300)]
    sort, ok, _, _ = batch_sort(device, chunks, values=False, key_bits=8, tuning=RADIX)
    assert sort.algorithms == ["radix", "empty", "radix"]
    assert sum(i.endswith("-scatter-0") for i in sort.node_ids) == 2
    np.testing.assert_array_equal(read_array(device, ok),
                                  np.concatenate([expected(c, None, key_bits=8)[0] for c in chunks]))


# --------------------------------------------------------- GPUSegmentedSort
def segmented(device, keys, offsets, lengths, **kwargs):
    n = len(keys)
    values = np.arange(n, dtype=np.uint32)
    bufs = {"k": device.create_buffer_with_data(data=keys, usage=USAGE),
            "v": device.create_buffer_with_data(data=values, usage=USAGE),
            "ok": device.create_buffer_with_data(data=np.full(n, SENTINEL, np.uint32), usage=USAGE),
            "ov": device.create_buffer_with_data(data=np.full(n, SENTINEL, np.uint32), usage=USAGE)}
    graph = GPUCommandGraph(device, id="segmented-test")
    views = {name: graph.create_data_view(graph.import_buffer(id=name, byte_length=4 * n, usage=USAGE, buffer=b),
                                          format="uint32", length=n) for name, b in bufs.items()}
    sort = GPUSegmentedSort(id="g", keys=views["k"], values=views["v"], output_keys=views["ok"],
                            output_values=views["ov"], offsets=offsets, lengths=lengths, **kwargs)
    sort.add_to_graph(graph)
    run_graph(device, graph)
    want_k, want_v = np.full(n, SENTINEL, np.uint32), np.full(n, SENTINEL, np.uint32)
    for o, m in zip(offsets, lengths):
        want_k[o:o + m], want_v[o:o + m] = expected(keys[o:o + m], values[o:o + m], kwargs.get("direction",
                                                                                                "ascending"),
                                                    kwargs.get("key_bits", 32))
    np.testing.assert_array_equal(read_u32(device, bufs["ok"], 0, n), want_k)  # gaps keep SENTINEL
    np.testing.assert_array_equal(read_u32(device, bufs["ov"], 0, n), want_v)
    return sort


def layout(rng, lengths, max_gap=9):
    offsets, pos = [], 0
    for m in lengths:
        pos += int(rng.integers(0, max_gap + 1))
        offsets.append(pos)
        pos += m
    order = rng.permutation(len(lengths))  # any order is allowed
    return [offsets[i] for i in order], [lengths[i] for i in order], pos


@pytest.mark.parametrize("direction", ["ascending", "descending"])
def test_segmented_sort_mixed_widths_with_gaps(device, direction):
    rng = np.random.default_rng(8)
    lengths = [int(m) for m in rng.integers(0, 257, 150)] + [1, 1, 2, 3, 256, 129, 0, 0]
    offsets, lengths, total = layout(rng, lengths)
    keys = make_keys(rng, total + 5, "few")
    sort = segmented(device, keys, offsets, lengths, direction=direction)
    assert len(sort.node_ids) == 8  # width classes 2, 4, ..., 256
    assert sort.node_ids == [f"g-width-{w}" for w in (2, 4, 8, 16, 32, 64, 128, 256)]


def test_segmented_sort_checked_build(device):
    """The one-workgroup kernel compiled with wgpu's runtime checks sorts the same (default: trusted)."""
    rng = np.random.default_rng(12)
    offsets, lengths, total = layout(rng, [int(m) for m in rng.integers(0, 257, 40)] + [1, 256])
    keys = make_keys(rng, total + 3, "random")
    segmented(device, keys, offsets, lengths, tuning=SortTuning(runtime_checks=True))


def test_segmented_sort_long_segments(device):
    """Segments above 256 rows sort one per workgroup up to small_max, and by
    radix passes beyond it."""
    rng = np.random.default_rng(9)
    offsets, lengths, total = layout(rng, [700, 5, 300, TILE + 40, 1200, 0])
    keys = make_keys(rng, total, "random")
    sort = segmented(device, keys, offsets, lengths, key_bits=20, tuning=SortTuning(small_max=1000))
    assert "g-width-512" in sort.node_ids and "g-width-1024" in sort.node_ids
    assert sum(i.endswith("-histogram") for i in sort.node_ids) == 2  # the TILE + 40 and 1200 rows segments


def test_segmented_sort_many_small_segments_share_nodes(device):
    rng = np.random.default_rng(10)
    offsets, lengths, total = layout(rng, [int(m) for m in rng.integers(2, 9, 3000)], max_gap=1)
    sort = segmented(device, make_keys(rng, total, "random"), offsets, lengths)
    assert sort.node_ids == ["g-width-2", "g-width-4", "g-width-8"]


# ------------------------------------------------------------------ errors
def _graph_with(device, spec):
    """A graph importing one buffer per (name, format, length) and views of them."""
    graph = GPUCommandGraph(device, id="errors")
    views = {}
    for name, fmt, n in spec:
        buf = device.create_buffer(size=max(16, 8 * n), usage=USAGE)
        handle = graph.import_buffer(id=name, byte_length=buf.size, usage=USAGE, buffer=buf)
        views[name] = graph.create_data_view(handle, format=fmt, length=n)
    return graph, views


BASE = [("k", "uint32", 64), ("v", "uint32", 64), ("ok", "uint32", 64), ("ov", "uint32", 64)]


@pytest.mark.parametrize("change, kwargs, message", [
    (("ov", "uint32", 63), {}, 'GPUSort "bad" output_values has 63 rows but keys has 64'),
    (("k", "float32", 64), {}, 'GPUSort "bad" keys must be uint32 (got float32)'),
    (("v", "sint32", 64), {}, 'GPUSort "bad" values must be uint32 (got sint32)'),
    (None, {"key_bits": 0}, 'GPUSort "bad" key_bits must be an integer in 1..32 (got 0)'),
    (None, {"key_bits": 33}, 'GPUSort "bad" key_bits must be an integer in 1..32 (got 33)'),
    (None, {"key_bits": True}, "key_bits must be an integer in 1..32"),
    (None, {"direction": "up"}, 'GPUSort "bad" direction must be "ascending" or "descending"'),
    (None, {"output_values": None}, 'GPUSort "bad" has values but no output_values'),
    (None, {"tuning": SortTuning(small_max=5000)}, "invalid sort tuning"),
])
def test_bad_input_errors(device, change, kwargs, message):
    spec = [change if change and change[0] == s[0] else s for s in BASE]
    graph, v = _graph_with(device, spec)
    args = dict(id="bad", keys=v["k"], values=v["v"], output_keys=v["ok"], output_values=v["ov"]) | kwargs
    with pytest.raises(GraphValidationError) as err:
        GPUSort(**args).add_to_graph(graph)
    assert message in str(err.value)
    assert isinstance(err.value, GraphError) and isinstance(err.value, ValueError)


def test_output_overlapping_input_or_other_output_errors(device):
    graph = GPUCommandGraph(device, id="overlap")
    buf = device.create_buffer(size=4 * 256, usage=USAGE)
    h = graph.import_buffer(id="parent", byte_length=buf.size, usage=USAGE, buffer=buf)
    view = lambda start: graph.create_data_view(h, format="uint32", length=64, byte_offset=4 * start)
    other = device.create_buffer(size=4 * 256, usage=USAGE)
    h2 = graph.import_buffer(id="other", byte_length=other.size, usage=USAGE, buffer=other)
    view2 = lambda start: graph.create_data_view(h2, format="uint32", length=64, byte_offset=4 * start)
    with pytest.raises(GraphValidationError, match='GPUSort "o" output_keys and keys share buffer "parent"'):
        GPUSort(id="o", keys=view(0), output_keys=view(32)).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match='output_keys and output_values overlap in buffer "other"'):
        GPUSort(id="o2", keys=view(0), values=view(64), output_keys=view2(0),
                output_values=view2(32)).add_to_graph(graph)
    third = device.create_buffer(size=4 * 64, usage=USAGE)
    h3 = graph.import_buffer(id="third", byte_length=third.size, usage=USAGE, buffer=third)
    with pytest.raises(GraphValidationError, match='output_values and values share buffer "other"'):
        GPUSort(id="o3", keys=view(0), values=view2(0), output_keys=graph.create_data_view(h3, format="uint32", length=64),
                output_values=view2(128)).add_to_graph(graph)
    assert graph.nodes == ()  # nothing was added by the failed sorts


def test_batch_and_segmented_errors(device):
    graph = GPUCommandGraph(device, id="errors-2")
    vec = lambda name, lengths: graph.import_gpu_vector(name, GPUVector(
        [GPUData.allocate(device, format="uint32", length=m) for m in lengths]))
    keys, out_bad = vec("k", [3, 0, 5]), vec("o", [3, 5, 0])
    with pytest.raises(GraphValidationError, match=r'GPUBatchSort "b" output_keys chunk lengths \[3, 5, 0\] do not '
                                                   r"match keys chunk lengths \[3, 0, 5\]"):
        GPUBatchSort(id="b", keys=keys, output_keys=out_bad).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match='GPUSort "v" sorts one packed domain'):
        GPUSort(id="v", keys=keys, output_keys=vec("o2", [3, 0, 5])).add_to_graph(graph)
    _, v = _graph_with(device, BASE)
    g2 = v["k"].handle  # noqa: F841 - views belong to another graph
    with pytest.raises(GraphValidationError, match="belongs to graph"):
        GPUSort(id="w", keys=v["k"], output_keys=v["ok"]).add_to_graph(graph)
    graph3, v = _graph_with(device, BASE)
    seg = lambda offsets, lengths: GPUSegmentedSort(id="g", keys=v["k"], output_keys=v["ok"], offsets=offsets,
                                                    lengths=lengths).add_to_graph(graph3)
    with pytest.raises(GraphValidationError, match='GPUSegmentedSort "g" segments 0 and 1 overlap'):
        seg([0, 10], [12, 4])
    with pytest.raises(GraphValidationError, match=r"segment 1 \(offset 60, length 5\) lies outside the 64 parent"):
        seg([0, 60], [4, 5])
    with pytest.raises(GraphValidationError, match="has 2 offsets but 1 lengths"):
        seg([0, 5], [4])
    with pytest.raises(GraphValidationError, match="offsets and lengths must be sequences of integers"):
        seg([0.5], [4])


def test_domain_larger_than_a_storage_binding_errors(device):
    limit = int(device.limits["max-storage-buffer-binding-size"])
    rows = limit // 4 + 1
    if 4 * rows > int(device.limits["max-buffer-size"]):
        pytest.skip("the device's buffers cannot exceed its storage binding size")
    graph = GPUCommandGraph(device, id="huge")
    views = [graph.create_data_view(graph.import_buffer(id=name, byte_length=4 * rows, usage=USAGE), format="uint32",
                                    length=rows) for name in ("k", "ok")]
    with pytest.raises(GraphValidationError, match=f'GPUSort "big" domain of {rows} rows needs storage bindings of'):
        GPUSort(id="big", keys=views[0], output_keys=views[1]).add_to_graph(graph)
