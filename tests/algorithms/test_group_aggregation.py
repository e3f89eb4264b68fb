"""GPUGroupAggregation against numpy: every operation on the privatized
(subgroup and portable) and global paths, masks, value filters, overflow
codes, non-finite values, vectors with empty and uneven chunks, strided
columns, parameter changes without recompiling, and validation errors."""

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings, strategies as st

from gpuviz import (AggregationTuning, GPUCommandGraph, GPUData, GPUGroupAggregation, GPUVector, GraphValidationError,
                    GraphStateError, read_array)
from gpuviz.oracles.algorithms import group_aggregation as oracle

from .conftest import import_input

OPS = ["count", "sum", "min", "max", "mean"]
# every test once with native float atomics and once with the compare-exchange loop
pytestmark = pytest.mark.usefixtures("float_add_path")
TUNINGS = {
    "default": None,
    "portable": AggregationTuning(subgroups=False),
    "subgroup-32": AggregationTuning(subgroup_max_keys=32),
    "global": AggregationTuning(privatize_max_keys=0),
    "one-row-tiles": AggregationTuning(rows_per_invocation=1, workgroups_per_chunk=0),
}
SENTINEL = 0xDEADBEEF
PAD = 3  # output rows start 12 bytes into their buffer


def _output(device, graph, groups, fmt):
    buffer = GPUData.from_numpy(device, np.full(groups + 2 * PAD, SENTINEL, np.uint32)).buffer
    handle = graph.import_buffer(id="out", byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
    return buffer, graph.create_data_view(handle, format=fmt, length=groups, byte_offset=PAD * 4)


def _read(device, buffer, groups, fmt):
    raw = np.frombuffer(device.queue.read_buffer(buffer), np.uint32)
    assert (raw[:PAD] == SENTINEL).all() and (raw[PAD + groups:] == SENTINEL).all(), "wrote outside the output"
    return raw[PAD:PAD + groups].view(fmt)


def _encode(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def build(device, codes, *, groups, operation, values=None, mask=None, filter_values=None, filter_range=None,
          tuning=None):
    graph = GPUCommandGraph(device, id="groups")
    fmt = "uint32" if operation == "count" else "float32"
    buffer, out = _output(device, graph, groups, fmt)
    agg = GPUGroupAggregation(id="agg", codes=import_input(device, graph, "codes", codes), output=out, operation=operation,
                              values=import_input(device, graph, "values", values), mask=import_input(device, graph, "mask", mask),
                              filter_values=import_input(device, graph, "filter", filter_values),
                              filter_range=filter_range, tuning=tuning)
    agg.add_to_graph(graph)
    compiled = graph.compile()

    def result():
        _encode(device, compiled)
        got = _read(device, buffer, groups, np.uint32 if operation == "count" else np.float32)
        overflow = int(np.frombuffer(device.queue.read_buffer(agg.overflow_buffer), np.uint32)[0])
        return got, overflow
    return agg, compiled, result


def check(got, want, operation):
    if operation == "count":
        np.testing.assert_array_equal(got, want)
    else:  # dyadic test values: sums are exact in float32 whatever the order
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def dyadic(rng, n):
    return (rng.integers(-800, 800, n) / 8).astype(np.float32)


def split(array, lengths):
    return np.split(array, np.cumsum(lengths)[:-1])


@pytest.mark.parametrize("path", TUNINGS)
@pytest.mark.parametrize("operation", OPS)
def test_operations_match_numpy(device, operation, path):
    rng = np.random.default_rng(5)
    n, groups = 5000, 7
    codes = rng.integers(0, groups + 2, n).astype(np.uint32)  # ~2/9 out of range
    values = dyadic(rng, n)
    values[::37], values[1::41], values[2::43] = np.nan, np.inf, -np.inf
    mask = (rng.random(n) < 0.8).astype(np.uint32) * rng.integers(1, 5, n).astype(np.uint32)
    _, _, result = build(device, codes, groups=groups, operation=operation,
                         values=None if operation == "count" else values, mask=mask, tuning=TUNINGS[path])
    want, want_overflow = oracle(codes, groups, operation, values, mask)
    got, overflow = result()
    check(got, want, operation)
    assert overflow == want_overflow > 0


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.one_of(st.just(0), st.sampled_from([1, 255, 256, 257, 4097]), st.integers(0, 3000)),
                        min_size=1, max_size=4),
       groups=st.sampled_from([1, 3, 16, 17, 300, 2000]), operation=st.sampled_from(OPS),
       masked=st.booleans(), path=st.sampled_from(sorted(TUNINGS)), seed=st.integers(0, 2**16))
def test_vectors_with_empty_and_uneven_chunks(device, lengths, groups, operation, masked, path, seed):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    codes = rng.integers(0, groups + 3, n).astype(np.uint32)
    values = dyadic(rng, n)
    values[rng.random(n) < 0.05] = np.nan
    mask = (rng.random(n) < 0.6).astype(np.uint32) if masked else None
    _, _, result = build(device, split(codes, lengths), groups=groups, operation=operation,
                         values=None if operation == "count" else split(values, lengths),
                         mask=None if mask is None else split(mask, lengths), tuning=TUNINGS[path])
    want, want_overflow = oracle(codes, groups, operation, values, mask)
    got, overflow = result()
    check(got, want, operation)
    assert overflow == want_overflow


def test_empty_groups_and_signed_zero(device):
    codes = np.array([0, 0, 2, 2, 5], np.uint32)
    values = np.array([-0.0, 0.0, 0.0, -0.0, np.nan], np.float32)
    results = {}
    for operation in ("sum", "min", "max", "mean"):
        _, _, result = build(device, codes, groups=4, operation=operation, values=values)
        results[operation], overflow = result()
        assert overflow == 1  # code 5 counts as overflow even with a NaN value
    assert results["sum"][1] == 0 and not np.signbit(results["sum"][1])  # empty sum: +0
    for operation in ("min", "max", "mean"):
        assert np.isnan(results[operation][[1, 3]]).all()  # empty: NaN
    assert np.signbit(results["min"][0]) and np.signbit(results["min"][2])  # min prefers -0
    assert not np.signbit(results["max"][0]) and not np.signbit(results["max"][2])  # max prefers +0


def test_all_rows_out_of_range_write_only_the_overflow_word(device):
    codes = np.full(1000, 0xFFFFFFFF, np.uint32)
    _, _, result = build(device, codes, groups=4, operation="count")
    got, overflow = result()
    assert (got == 0).all() and overflow == 1000


def test_filter_range_changes_without_recompiling(device):
    rng = np.random.default_rng(2)
    n, groups = 4000, 5
    codes = rng.integers(0, groups, n).astype(np.uint32)
    values = dyadic(rng, n)
    dist = rng.uniform(0, 10, n).astype(np.float32)
    dist[::13] = np.nan
    agg, compiled, result = build(device, codes, groups=groups, operation="mean", values=values, filter_values=dist,
                                  filter_range=(2.0, 5.0))
    for lo, hi in [(2.0, 5.0), (0.0, 1.5), (7.25, 7.25), (-np.inf, np.inf)]:
        agg.set_filter_range((lo, hi))
        got, _ = result()
        with np.errstate(invalid="ignore"):
            keep = (dist >= np.float32(lo)) & (dist <= np.float32(hi))
        check(got, oracle(codes, groups, "mean", values, keep=keep)[0], "mean")
    assert compiled.encode_count == 4 and compiled.stats.node_order == ["agg-clear", "agg-accumulate", "agg-reduce"]


def test_repeated_encodes_do_not_accumulate(device):
    codes = np.arange(100, dtype=np.uint32) % 3
    _, compiled, result = build(device, codes, groups=3, operation="sum", values=np.ones(100, np.float32))
    for _ in range(3):
        got, _ = result()
        np.testing.assert_array_equal(got, [34, 33, 33])


def test_strided_columns_of_one_buffer(device):
    """codes and values interleaved in one buffer (stride 8 bytes) are read in place."""
    rng = np.random.default_rng(9)
    n, groups = 777, 6
    codes = rng.integers(0, groups, n).astype(np.uint32)
    values = dyadic(rng, n)
    rows = np.empty((n, 2), np.uint32)
    rows[:, 0], rows[:, 1] = codes, values.view(np.uint32)
    graph = GPUCommandGraph(device, id="strided")
    data = GPUData.from_numpy(device, rows)
    handle = graph.import_buffer(id="rows", byte_length=data.buffer.size, usage=data.buffer.usage, buffer=data.buffer)
    codes_view = graph.create_data_view(handle, format="uint32", length=n, byte_stride=8)
    values_view = graph.create_data_view(handle, format="float32", length=n, byte_offset=4, byte_stride=8)
    out = GPUData.allocate(device, format="float32", length=groups)
    GPUGroupAggregation(id="g", codes=codes_view, values=values_view, output=graph.import_gpu_data("out", out),
                        operation="mean").add_to_graph(graph)
    _encode(device, graph.compile())
    check(read_array(device, out), oracle(codes, groups, "mean", values)[0], "mean")


def test_caller_overflow_view(device):
    graph = GPUCommandGraph(device, id="ovf")
    codes = graph.import_gpu_data("codes", GPUData.from_numpy(device, np.array([0, 9, 9, 1], np.uint32)))
    out = GPUData.allocate(device, format="uint32", length=2)
    words = GPUData.from_numpy(device, np.full(4, 7, np.uint32))
    handle = graph.import_buffer(id="words", byte_length=16, usage=words.buffer.usage, buffer=words.buffer)
    agg = GPUGroupAggregation(id="g", codes=codes, output=graph.import_gpu_data("out", out),
                              overflow=graph.create_data_view(handle, format="uint32", length=1, byte_offset=8))
    agg.add_to_graph(graph)
    assert agg.overflow_buffer is None
    _encode(device, graph.compile())
    assert read_array(device, out).tolist() == [1, 1]
    assert read_array(device, words).tolist() == [7, 7, 2, 7]


def test_validation_errors(device):
    graph = GPUCommandGraph(device, id="errors")
    codes = graph.import_gpu_data("codes", GPUData.from_numpy(device, np.zeros(10, np.uint32)))
    floats = graph.import_gpu_data("floats", GPUData.from_numpy(device, np.zeros(10, np.float32)))
    short = graph.import_gpu_data("short", GPUData.from_numpy(device, np.zeros(9, np.float32)))
    out_u = graph.import_gpu_data("out-u", GPUData.allocate(device, format="uint32", length=4))
    out_f = graph.import_gpu_data("out-f", GPUData.allocate(device, format="float32", length=4))
    vector = graph.import_gpu_vector("vec", GPUVector.from_numpy(device, [np.zeros(4, np.float32),
                                                                           np.zeros(6, np.float32)]))
    cases = [
        (dict(codes=floats, output=out_u), r'GPUGroupAggregation "g" codes must be uint32 \(got float32\)'),
        (dict(codes=codes, output=out_u, operation="median"), "unknown operation 'median'"),
        (dict(codes=codes, output=out_f, operation="sum"), "operation 'sum' needs values"),
        (dict(codes=codes, output=out_u, values=floats), "operation 'count' takes no values"),
        (dict(codes=codes, output=out_u, operation="sum", values=floats), r"output must be float32 \(got uint32\)"),
        (dict(codes=codes, output=out_u, group_count=5), r"output has the wrong length \(needs 5 rows, got 4\)"),
        (dict(codes=codes, output=out_f, operation="mean", values=short),
         r"values chunk lengths \[9\] do not match codes chunk lengths \[10\]"),
        (dict(codes=codes, output=out_f, operation="mean", values=vector),
         r"values chunk lengths \[4, 6\] do not match codes chunk lengths \[10\]"),
        (dict(codes=codes, output=codes, group_count=10), "must not share a buffer with an input"),
        (dict(codes=codes, output=out_u, filter_range=(0, 1)), "filter_range needs filter_values"),
        (dict(codes=codes, output=out_u, filter_values=floats, filter_range=(2, 1)), "lo <= hi"),
    ]
    for kwargs, message in cases:
        with pytest.raises(GraphValidationError, match=message):
            GPUGroupAggregation(id="g", **kwargs)
    agg = GPUGroupAggregation(id="g", codes=codes, output=out_u)
    with pytest.raises(GraphStateError, match="no filter_values"):
        agg.set_filter_range((0, 1))
    agg.add_to_graph(graph)
    with pytest.raises(GraphStateError, match="already in graph"):
        agg.add_to_graph(graph)
    other = GPUCommandGraph(device, id="other")
    with pytest.raises(GraphValidationError, match='belongs to graph "errors", not "other"'):
        GPUGroupAggregation(id="h", codes=codes, output=out_u).add_to_graph(other)


def test_buffers_are_made_when_the_graph_compiles(device):
    """add_to_graph creates no buffer: the parameter buffer and the own
    overflow word come from node compile callbacks, and a filter range set
    in between reaches the parameter buffer they start from."""
    graph = GPUCommandGraph(device, id="lazy")
    out = GPUData.allocate(device, format="uint32", length=2)
    agg = GPUGroupAggregation(id="agg", codes=import_input(device, graph, "codes", np.uint32([0, 1, 1, 7])),
                              output=graph.import_gpu_data("out", out),
                              filter_values=import_input(device, graph, "f", np.float32([1, 2, 3, 4])),
                              filter_range=(0, 10))
    agg.add_to_graph(graph)
    assert agg.params_buffer is None and agg.overflow_buffer is None
    assert not any(i.endswith(("-params", "-overflow")) for i in graph.buffers)
    agg.set_filter_range((1.5, 4.0))  # rows 1, 2, 3
    compiled = graph.compile()
    assert agg.params_buffer is not None and agg.overflow_buffer.size == 4
    _encode(device, compiled)
    assert read_array(device, out).tolist() == [0, 2]
    assert int(np.frombuffer(device.queue.read_buffer(agg.overflow_buffer), np.uint32)[0]) == 1


def test_tuning_is_type_checked(device):
    from gpuviz import GraphTypeError, ScanTuning

    graph = GPUCommandGraph(device, id="tuning")
    codes = graph.import_gpu_data("codes", GPUData.from_numpy(device, np.zeros(4, np.uint32)))
    out = graph.import_gpu_data("out", GPUData.allocate(device, format="uint32", length=2))
    with pytest.raises(GraphTypeError, match=r'GPUGroupAggregation "g" tuning must be an AggregationTuning '
                                             r'\(got ScanTuning\)'):
        GPUGroupAggregation(id="g", codes=codes, output=out, tuning=ScanTuning())


def test_params_buffer_is_destroyed_with_the_compiled_graph(device):
    agg, compiled, result = build(device, np.zeros(10, np.uint32), groups=1, operation="count")
    assert result()[0].tolist() == [10]
    compiled.destroy()
    with pytest.raises(Exception):
        device.queue.write_buffer(agg.params_buffer, 0, np.zeros(4, np.uint8))
    assert agg.params_buffer.usage & wgpu.BufferUsage.COPY_DST


@pytest.mark.parametrize("operation", ["sum", "mean"])
def test_privatized_flush_without_partials(device, monkeypatch, operation):
    """Past the partials budget, privatized sum / mean flush each workgroup's totals with global float adds."""
    from gpuviz.algorithms import keyed_aggregation

    monkeypatch.setattr(keyed_aggregation, "MAX_PARTIAL_WORDS", 0)
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 40, 30000).astype(np.uint32)
    values = dyadic(rng, 30000)
    agg, compiled, result = build(device, codes, groups=37, operation=operation, values=values)
    assert agg.privatized and not agg.uses_partials
    got, overflow = result()
    want, want_overflow = oracle(codes, 37, operation, values)
    check(got, want, operation)
    assert overflow == want_overflow
    assert compiled.stats.node_order[-1] == ("agg-finalize" if operation == "mean" else "agg-accumulate")
