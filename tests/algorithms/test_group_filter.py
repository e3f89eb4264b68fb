"""GPUGroupFilter against the oracle (gpuviz.oracles.algorithms.group_filter):
data views of 1, workgroup-1, workgroup, workgroup+1 and several workgroups
of rows, vectors with empty and uneven chunks, codes at and past the table's
last word, a rewritten table without recompiling, aggregations that read the
output dropping the disabled groups, and the construction errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.algorithms import GPUGroupAggregation, GPUGroupFilter
from gpuviz.errors import GraphValidationError
from gpuviz.oracles.algorithms import group_filter

from .conftest import gpu_data, gpu_vector, new_graph, read, submit_encodings

WG = 256


def case(n, groups, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n).astype(np.float32)
    codes = rng.integers(0, groups + 3, n).astype(np.uint32)  # some past the table (null codes)
    enabled = rng.integers(0, 2, groups + 1).astype(np.uint32)
    return values, codes, enabled


def build(device, values, codes, enabled, vector):
    graph = new_graph(device)
    imp = (lambda name, a: graph.import_gpu_vector(name, gpu_vector(device, a, a[0].dtype))) if vector else \
        (lambda name, a: graph.import_gpu_data(name, gpu_data(device, a, a.dtype)))
    v, c = imp("values", values), imp("codes", codes)
    out_arrays = [np.full(len(a), 7, np.float32) for a in values] if vector else np.full(len(values), 7, np.float32)
    out_data = gpu_vector(device, out_arrays, np.float32) if vector else gpu_data(device, out_arrays, np.float32)
    out = graph.import_gpu_vector("out", out_data) if vector else graph.import_gpu_data("out", out_data)
    table = gpu_data(device, enabled)
    f = GPUGroupFilter(id="gf", values=v, codes=c, enabled=graph.import_gpu_data("enabled", table), output=out)
    f.add_to_graph(graph)
    return graph, out_data, table


def read_out(device, out_data, vector):
    if vector:
        return np.concatenate([np.asarray(read(device, chunk), np.float32) for chunk in out_data.chunks])
    return np.asarray(read(device, out_data), np.float32)


def same(got, want):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


@pytest.mark.parametrize("n", [1, WG - 1, WG, WG + 1, 7 * WG + 5])
def test_data_views(device, n):
    values, codes, enabled = case(n, 5, n)
    graph, out, _ = build(device, values, codes, enabled, vector=False)
    submit_encodings(device, graph.compile(), 1)
    same(read_out(device, out, False), group_filter(values, codes, enabled))


@pytest.mark.parametrize("lengths", [[0, 1, WG - 1, WG + 1, 0, 900], [3]])
def test_vectors_and_table_rewrite(device, lengths):
    """Each chunk in place; a new table takes effect at the next encoding (no recompilation)."""
    values, codes, enabled = case(sum(lengths), 4, len(lengths))
    cuts = np.cumsum(lengths)[:-1]
    graph, out, table = build(device, np.split(values, cuts), np.split(codes, cuts), enabled, vector=True)
    compiled = graph.compile()
    submit_encodings(device, compiled, 1)
    same(read_out(device, out, True), group_filter(values, codes, enabled))
    flipped = (1 - enabled).astype(np.uint32)
    device.queue.write_buffer(table.buffer, 0, flipped.tobytes())
    submit_encodings(device, compiled, 1)
    same(read_out(device, out, True), group_filter(values, codes, flipped))


def test_aggregations_drop_disabled_groups(device):
    """Read as filter values, the output removes the disabled groups from a count."""
    values, codes, enabled = case(3 * WG, 4, 3)
    codes = np.minimum(codes, 3).astype(np.uint32)
    graph = new_graph(device)
    v = graph.import_gpu_data("values", gpu_data(device, values, np.float32))
    c = graph.import_gpu_data("codes", gpu_data(device, codes))
    out = graph.import_gpu_data("out", gpu_data(device, np.zeros(len(values), np.float32), np.float32))
    counts = gpu_data(device, np.zeros(4, np.uint32))
    GPUGroupFilter(id="gf", values=v, codes=c, enabled=graph.import_gpu_data("en", gpu_data(device, enabled)),
                   output=out).add_to_graph(graph)
    GPUGroupAggregation(id="count", codes=c, output=graph.import_gpu_data("counts", counts), operation="count",
                        filter_values=out, filter_range=(-np.inf, np.inf)).add_to_graph(graph)
    submit_encodings(device, graph.compile(), 1)
    want = np.bincount(codes[enabled[codes] != 0], minlength=4)
    np.testing.assert_array_equal(read(device, counts), want)


def test_errors(device):
    graph = new_graph(device)
    f = graph.import_gpu_data("f", gpu_data(device, np.zeros(8, np.float32), np.float32))
    u = graph.import_gpu_data("u", gpu_data(device, np.zeros(8, np.uint32)))
    short = graph.import_gpu_data("s", gpu_data(device, np.zeros(4, np.uint32)))
    o = graph.import_gpu_data("o", gpu_data(device, np.zeros(8, np.float32), np.float32))
    with pytest.raises(GraphValidationError, match='GPUGroupFilter "gf" values must be float32'):
        GPUGroupFilter(id="gf", values=u, codes=u, enabled=u, output=o).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="codes has 4 rows"):
        GPUGroupFilter(id="gf", values=f, codes=short, enabled=u, output=o).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="share buffer"):
        GPUGroupFilter(id="gf", values=f, codes=u, enabled=short, output=f).add_to_graph(graph)


@settings(max_examples=6, deadline=None)
@given(lengths=st.lists(st.sampled_from([0, 1, WG - 1, WG, WG + 1, 700]), min_size=1, max_size=4),
       groups=st.integers(1, 40), seed=st.integers(0, 2 ** 32 - 1))
def test_property_vectors(device, lengths, groups, seed):
    values, codes, enabled = case(sum(lengths), groups, seed)
    if not sum(lengths):
        return
    cuts = np.cumsum(lengths)[:-1]
    graph, out, _ = build(device, np.split(values, cuts), np.split(codes, cuts), enabled, vector=True)
    submit_encodings(device, graph.compile(), 1)
    same(read_out(device, out, True), group_filter(values, codes, enabled))
