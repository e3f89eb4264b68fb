"""GPUHistogram against numpy: equal-width domains (edges, hi in the last
bin, NaN/inf/out-of-domain ignored), literal and GPU-resident irregular
edges (validated by a graph pass), GPU domains, masks and value filters,
vectors with empty chunks, parameter changes without recompiling, errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpuviz import (AggregationTuning, GPUCommandGraph, GPUData, GPUHistogram, GPUVector, GraphStateError,
                    GraphValidationError, read_array)
from gpuviz.oracles.algorithms import histogram_edges as edges_oracle
from gpuviz.oracles.algorithms import histogram_uniform as uniform_oracle

from .conftest import import_input

TUNINGS = [None, AggregationTuning(privatize_max_keys=0)]


def _encode(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def histogram(device, x, *, bins, mask=None, filter_values=None, filter_range=None, tuning=None, **kwargs):
    """Build, compile; return (histogram, compiled, result())."""
    graph = GPUCommandGraph(device, id="hist")
    out = GPUData.allocate(device, format="uint32", length=bins)
    for key in ("domain", "edges"):
        if isinstance(kwargs.get(key), np.ndarray):  # GPU-resident parameter
            kwargs[key] = graph.import_gpu_data(key, GPUData.from_numpy(device, kwargs[key]))
    hist = GPUHistogram(id="h", input=import_input(device, graph, "x", x), output=graph.import_gpu_data("out", out),
                        mask=import_input(device, graph, "mask", mask),
                        filter_values=import_input(device, graph, "filter", filter_values), filter_range=filter_range,
                        tuning=tuning, **kwargs)
    hist.add_to_graph(graph)
    compiled = graph.compile()

    def result():
        _encode(device, compiled)
        return read_array(device, out)
    return hist, compiled, result


def test_interior_edges_are_exact_whatever_the_division_accuracy(device):
    """200 / 300 * 3 rounds below 2 with an approximate division: the edge table decides."""
    x = np.arange(0, 301, dtype=np.float32)
    _, _, result = histogram(device, x, bins=3, domain=(0, 300))
    assert result().tolist() == [100, 100, 101]
    # real-arithmetic edges: float32(0.7) = 0.69999999 is in bin 6, as numpy finds in float64
    # (numpy bins float32 input with float32-rounded edges and would put it in bin 7)
    x = np.float32([0.1, 0.2, 0.3, 0.7, 0.9, 1.0])
    _, _, result = histogram(device, x, bins=10, domain=(0, 1))
    np.testing.assert_array_equal(result(), np.histogram(x.astype(np.float64), 10, (0, 1))[0])


@pytest.mark.parametrize("tuning", TUNINGS)
def test_values_on_edges_nan_inf_and_out_of_domain(device, tuning):
    x = np.array([0, 1, 1.5, 2, 7.999, 8, 8.0001, -0.0001, -0.0, np.nan, np.inf, -np.inf, 3, 3, 3], np.float32)
    _, _, result = histogram(device, x, bins=8, domain=(0, 8), tuning=tuning)
    # [0,1) [1,2) ... [7,8]: 0 and -0 -> bin 0, 1 and 1.5 -> 1, 2 -> 2, 7.999 and 8 -> 7
    assert result().tolist() == [2, 2, 1, 3, 0, 0, 0, 2]


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.one_of(st.just(0), st.sampled_from([1, 255, 256, 257, 4097]), st.integers(0, 3000)),
                        min_size=1, max_size=4),
       bins=st.sampled_from([1, 2, 7, 256, 257, 1500]), lo=st.floats(-1e3, 1e3, width=32),
       width=st.floats(0.0009765625, 1e4, width=32), masked=st.booleans(), privatize=st.booleans(),
       seed=st.integers(0, 2**16))
def test_equal_width_matches_float32_oracle(device, lengths, bins, lo, width, masked, privatize, seed):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    hi = float(np.float32(lo) + np.float32(width))
    x = rng.uniform(lo - 0.2 * width, hi + 0.2 * width, n).astype(np.float32)
    x[rng.random(n) < 0.03] = np.nan
    x[rng.random(n) < 0.03] = lo
    x[rng.random(n) < 0.03] = hi
    mask = (rng.random(n) < 0.7).astype(np.uint32) if masked else None
    chunks = np.split(x, np.cumsum(lengths)[:-1])
    _, _, result = histogram(device, chunks, bins=bins, domain=(lo, hi),
                             mask=None if mask is None else np.split(mask, np.cumsum(lengths)[:-1]),
                             tuning=None if privatize else TUNINGS[1])
    keep = None if mask is None else mask != 0
    np.testing.assert_array_equal(result(), uniform_oracle(x, lo, hi, bins, keep))


def test_degenerate_domain_counts_matching_values_in_bin_zero(device):
    x = np.array([2, 2, 2.5, 1.5, np.nan], np.float32)
    _, _, result = histogram(device, x, bins=4, domain=(2, 2))
    assert result().tolist() == [2, 0, 0, 0]


def test_set_domain_without_recompiling(device):
    rng = np.random.default_rng(1)
    x = rng.normal(size=20000).astype(np.float32)
    hist, compiled, result = histogram(device, x, bins=64, domain=(-1, 1))
    for lo, hi in [(-1, 1), (-4, 4), (0, 0.5), (3, 3)]:
        hist.set_domain((lo, hi))
        np.testing.assert_array_equal(result(), uniform_oracle(x, lo, hi, 64))
    assert compiled.encode_count == 4


def test_literal_irregular_edges(device):
    edges = [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0]
    rng = np.random.default_rng(4)
    x = np.concatenate([10 ** rng.uniform(-6, 1.2, 10000), np.float32(edges), [np.nan, np.inf, 0]]).astype(np.float32)
    hist, compiled, result = histogram(device, x, bins=6, edges=edges)
    got = result()
    np.testing.assert_array_equal(got, edges_oracle(x, edges))
    assert got[-1] == edges_oracle(x, edges)[-1] and (x == np.float32(10.0)).sum() == 1  # last edge included
    hist.set_edges([0, 1, 2, 3, 4, 5, 1000])
    np.testing.assert_array_equal(result(), edges_oracle(x, [0, 1, 2, 3, 4, 5, 1000]))
    with pytest.raises(GraphValidationError, match=r"set_edges needs 7 edges \(got 3\)"):
        hist.set_edges([0, 1, 2])
    with pytest.raises(GraphValidationError, match="strictly increasing"):
        hist.set_edges([0, 1, 2, 2, 4, 5, 6])


def test_gpu_edges_are_validated_by_a_graph_pass(device):
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 12, 5000).astype(np.float32)
    x[:5] = [0, 10, 3, np.nan, -np.inf]
    edges = np.array([0, 1, 2, 4, 8, 10], np.float32)
    graph = GPUCommandGraph(device, id="gpu-edges")
    edge_data = GPUData.from_numpy(device, edges)
    out = GPUData.allocate(device, format="uint32", length=5)
    hist = GPUHistogram(id="h", input=graph.import_gpu_data("x", GPUData.from_numpy(device, x)),
                        output=graph.import_gpu_data("out", out), edges=graph.import_gpu_data("edges", edge_data))
    assert hist.add_to_graph(graph) == ("h-validate-edges", "h-clear", "h-accumulate")
    compiled = graph.compile()
    cases = [edges, [0, 1, 1, 4, 8, 10], [0, 1, 2, np.nan, 8, 10], [0, 1, 2, 4, 8, np.inf], [10, 8, 4, 2, 1, 0],
             [-1, 0, 0.5, 3, 9, 11]]
    for case in cases:
        case = np.asarray(case, np.float32)
        device.queue.write_buffer(edge_data.buffer, 0, case)
        _encode(device, compiled)
        valid = np.isfinite(case).all() and (np.diff(case) > 0).all()
        want = edges_oracle(x, case) if valid else np.zeros(5, np.uint32)
        np.testing.assert_array_equal(read_array(device, out), want)
    assert compiled.encode_count == len(cases)


def test_gpu_domain_view(device):
    # bin centres of 8 bins over (-1, 1), both ends, values outside: no value near an interior edge
    # (a GPU-resident domain uses the float32 estimate without the edge table)
    x = np.concatenate([np.arange(-15, 16, 2) / 16, [-1, 1, -1.5, 1.5, np.nan]]).astype(np.float32)
    for domain, bins in [(np.array([-1, 1], np.float32), 8), (np.array([1, -1], np.float32), 8),
                         (np.array([0, np.nan], np.float32), 8)]:
        _, _, result = histogram(device, x, bins=bins, domain=domain)
        lo, hi = domain
        want = uniform_oracle(x, lo, hi, bins) if lo <= hi else np.zeros(bins, np.uint32)
        np.testing.assert_array_equal(result(), want)


def test_value_filter_and_mask(device):
    rng = np.random.default_rng(3)
    n = 6000
    x = rng.normal(size=n).astype(np.float32)
    f = rng.uniform(0, 1, n).astype(np.float32)
    f[::11] = np.nan
    mask = (rng.random(n) < 0.5).astype(np.uint32)
    hist, _, result = histogram(device, x, bins=32, domain=(-2, 2), mask=mask, filter_values=f,
                                filter_range=(0.25, 0.5))
    for lo, hi in [(0.25, 0.5), (0.0, 1.0), (0.9, 0.1 + 0.8)]:
        hist.set_filter_range((lo, hi))
        with np.errstate(invalid="ignore"):
            keep = (mask != 0) & (f >= np.float32(lo)) & (f <= np.float32(hi))
        np.testing.assert_array_equal(result(), uniform_oracle(x, -2, 2, 32, keep))


def test_stridedimport_input(device):
    rows = np.arange(300, dtype=np.float32).reshape(100, 3)
    graph = GPUCommandGraph(device, id="strided")
    data = GPUData.from_numpy(device, rows)
    handle = graph.import_buffer(id="rows", byte_length=data.buffer.size, usage=data.buffer.usage, buffer=data.buffer)
    view = graph.create_data_view(handle, format="float32", length=100, byte_offset=8, byte_stride=12)
    out = GPUData.allocate(device, format="uint32", length=3)
    GPUHistogram(id="h", input=view, output=graph.import_gpu_data("out", out), domain=(0, 300)).add_to_graph(graph)
    _encode(device, graph.compile())
    np.testing.assert_array_equal(read_array(device, out), uniform_oracle(rows[:, 2], 0, 300, 3))


def test_validation_errors(device):
    graph = GPUCommandGraph(device, id="errors")
    x = graph.import_gpu_data("x", GPUData.from_numpy(device, np.zeros(10, np.float32)))
    codes = graph.import_gpu_data("codes", GPUData.from_numpy(device, np.zeros(10, np.uint32)))
    out = graph.import_gpu_data("out", GPUData.allocate(device, format="uint32", length=4))
    out_f = graph.import_gpu_data("out-f", GPUData.allocate(device, format="float32", length=4))
    cases = [
        (dict(input=x, output=out), "exactly one of domain= and edges="),
        (dict(input=x, output=out, domain=(0, 1), edges=[0, 1]), "exactly one of domain= and edges="),
        (dict(input=codes, output=out, domain=(0, 1)), r'GPUHistogram "h" input must be float32 \(got uint32\)'),
        (dict(input=x, output=out_f, domain=(0, 1)), r"output must be uint32 \(got float32\)"),
        (dict(input=x, output=out, domain=(1, 0)), "lo <= hi"),
        (dict(input=x, output=out, domain=(0, np.inf)), "finite"),
        (dict(input=x, output=out, domain=(-3e38, 3e38)), "finite width"),
        (dict(input=x, output=out, bin_count=5, domain=(0, 1)), r"wrong length \(needs 5 rows, got 4\)"),
        (dict(input=x, output=out, edges=[0, 1, 2]), r"wrong length \(needs 2 rows, got 4\)"),
        (dict(input=x, output=out, edges=[0, 1, 1, 2, 3]), r"strictly increasing in float32 \(edge 2"),
        (dict(input=x, output=out, edges=[0, 1, 2, 3, np.nan]), "finite"),
        (dict(input=x, output=out, edges=[0, 1, 2, 3, 4], bin_count=3), "bin_count 3 does not match 5 edges"),
    ]
    for kwargs, message in cases:
        with pytest.raises(GraphValidationError, match=message):
            GPUHistogram(id="h", **kwargs)
    hist = GPUHistogram(id="h", input=x, output=out, edges=[0, 1, 2, 3, 4])
    with pytest.raises(GraphStateError, match="no literal domain"):
        hist.set_domain((0, 1))
    with pytest.raises(GraphValidationError, match="lo <= hi"):
        GPUHistogram(id="h", input=x, output=out, domain=(0, 1)).set_domain((2, 1))


def test_domain_from_a_gpu_reduction_extent(device):
    """Extents from GPUReduction feed the domain without a readback; the CDF
    is an inclusive GPUScan of the counts, all in one graph."""
    from gpuviz.algorithms import GPUReduction, GPUScan

    rng = np.random.default_rng(12)
    x = rng.integers(3, 68, 3000).astype(np.float32)  # extent (3, 67): 16 bins of width 4, exact positions
    x[::50] = np.nan
    chunks = [x[:1000], x[1000:1000], x[1000:2999], x[2999:]]
    graph = GPUCommandGraph(device, id="extent-hist")
    values = graph.import_gpu_vector("x", GPUVector.from_numpy(device, chunks))
    extent = graph.create_data_view(graph.create_transient_buffer(id="extent", byte_length=8, usage=0x80),
                                    format="float32", length=2)
    counts, cdf = (GPUData.allocate(device, format="uint32", length=16) for _ in range(2))
    counts_view = graph.import_gpu_data("counts", counts)
    GPUReduction(id="r", input=values, output=extent, operation="extent").add_to_graph(graph)
    GPUHistogram(id="h", input=values, output=counts_view, domain=extent).add_to_graph(graph)
    GPUScan(id="cdf", input=counts_view, output=graph.import_gpu_data("cdf", cdf), mode="inclusive").add_to_graph(graph)
    _encode(device, graph.compile())
    finite = x[np.isfinite(x)]
    want = uniform_oracle(x, finite.min(), finite.max(), 16)
    np.testing.assert_array_equal(read_array(device, counts), want)
    np.testing.assert_array_equal(read_array(device, cdf), np.cumsum(want))
