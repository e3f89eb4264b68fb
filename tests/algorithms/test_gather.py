"""GPUGather against the oracle (gpuviz.oracles.algorithms.gather): data
views of 1, workgroup-1, workgroup, workgroup+1 and several workgroups of
rows, vectors with empty and uneven chunks, indices past the table (the
hash lookup's NOT_FOUND among them), uint32 / int32 / float32 tables, a
rewritten table without recompiling, and the construction errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.algorithms import NOT_FOUND, GPUGather
from gpuviz.errors import GraphTypeError, GraphValidationError
from gpuviz.oracles.algorithms import gather

from .conftest import gpu_data, gpu_vector, new_graph, read, submit_encodings

WG = 256


def case(n, rows, seed, dtype=np.uint32):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, rows + 3, n).astype(np.uint32)  # some past the table
    indices[rng.random(n) < 0.1] = NOT_FOUND
    table = (rng.normal(size=rows) * 1000).astype(dtype) if dtype == np.float32 else \
        rng.integers(-1000 if dtype == np.int32 else 0, 1000, rows).astype(dtype)
    return indices, table


def build(device, indices, table, fill, vector):
    graph = new_graph(device)
    dtype = table.dtype
    if vector:
        idx = graph.import_gpu_vector("indices", gpu_vector(device, indices))
        out_data = gpu_vector(device, [np.full(len(a), 7, dtype) for a in indices], dtype)
        out = graph.import_gpu_vector("out", out_data)
    else:
        idx = graph.import_gpu_data("indices", gpu_data(device, indices))
        out_data = gpu_data(device, np.full(len(indices), 7, dtype), dtype)
        out = graph.import_gpu_data("out", out_data)
    table_data = gpu_data(device, table, dtype)
    GPUGather(id="g", indices=idx, table=graph.import_gpu_data("table", table_data), output=out,
              fill=fill).add_to_graph(graph)
    return graph, out_data, table_data


def read_out(device, out_data, dtype, vector):
    if vector:
        return np.concatenate([np.asarray(read(device, c)).view(dtype) for c in out_data.chunks])
    return np.asarray(read(device, out_data)).view(dtype)


@pytest.mark.parametrize("n", [1, WG - 1, WG, WG + 1, 7 * WG + 5])
def test_data_views(device, n):
    indices, table = case(n, 37, n)
    graph, out, _ = build(device, indices, table, 99, vector=False)
    submit_encodings(device, graph.compile(), 1)
    np.testing.assert_array_equal(read_out(device, out, np.uint32, False), gather(indices, table, 99))


@pytest.mark.parametrize("dtype, fill", [(np.int32, -5), (np.float32, np.nan), (np.uint32, NOT_FOUND)])
def test_formats_and_fill(device, dtype, fill):
    indices, table = case(3 * WG + 1, 10, 5, dtype)
    graph, out, _ = build(device, indices, table, fill, vector=False)
    submit_encodings(device, graph.compile(), 1)
    got, want = read_out(device, out, dtype, False), gather(indices, table, fill)
    np.testing.assert_array_equal(got, want)  # (NaN == NaN in assert_array_equal)


@pytest.mark.parametrize("lengths", [[0, 1, WG - 1, WG + 1, 0, 900], [3]])
def test_vectors_and_table_rewrite(device, lengths):
    """Each chunk in place; a new table takes effect at the next encoding (no recompilation)."""
    indices, table = case(sum(lengths), 20, len(lengths))
    cuts = np.cumsum(lengths)[:-1]
    graph, out, table_data = build(device, np.split(indices, cuts), table, 0, vector=True)
    compiled = graph.compile()
    submit_encodings(device, compiled, 1)
    np.testing.assert_array_equal(read_out(device, out, np.uint32, True), gather(indices, table, 0))
    table2 = (table * 3 + 1).astype(np.uint32)
    device.queue.write_buffer(table_data.buffer, 0, table2.tobytes())
    submit_encodings(device, compiled, 1)
    np.testing.assert_array_equal(read_out(device, out, np.uint32, True), gather(indices, table2, 0))
    assert compiled.encode_count == 2


def test_errors(device):
    graph = new_graph(device)
    u = graph.import_gpu_data("u", gpu_data(device, np.zeros(8, np.uint32)))
    t = graph.import_gpu_data("t", gpu_data(device, np.zeros(4, np.uint32)))
    f = graph.import_gpu_data("f", gpu_data(device, np.zeros(8, np.float32), np.float32))
    short = graph.import_gpu_data("s", gpu_data(device, np.zeros(4, np.uint32)))
    o = graph.import_gpu_data("o", gpu_data(device, np.zeros(8, np.uint32)))
    empty = graph.create_data_view(t.handle, format="uint32", length=0)
    with pytest.raises(GraphValidationError, match='GPUGather "g" output must be uint32'):
        GPUGather(id="g", indices=u, table=t, output=f).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="output has 4 rows but indices has 8"):
        GPUGather(id="g", indices=u, table=t, output=short).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="table has no rows"):
        GPUGather(id="g", indices=u, table=empty, output=short).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="share buffer|overlap"):
        GPUGather(id="g", indices=u, table=t, output=u).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="fill -1 does not fit uint32"):
        GPUGather(id="g", indices=u, table=t, output=o, fill=-1).add_to_graph(graph)
    with pytest.raises(GraphTypeError, match="fill must be an int"):
        GPUGather(id="g", indices=u, table=t, output=o, fill=1.5).add_to_graph(graph)


@settings(max_examples=6, deadline=None)
@given(lengths=st.lists(st.sampled_from([0, 1, WG - 1, WG, WG + 1, 700]), min_size=1, max_size=4),
       rows=st.integers(1, 300), seed=st.integers(0, 2 ** 32 - 1))
def test_property_vectors(device, lengths, rows, seed):
    indices, table = case(sum(lengths), rows, seed)
    cuts = np.cumsum(lengths)[:-1]
    graph, out, _ = build(device, np.split(indices, cuts), table, 12345, vector=True)
    submit_encodings(device, graph.compile(), 1)
    got = read_out(device, out, np.uint32, True) if sum(lengths) else np.zeros(0, np.uint32)
    np.testing.assert_array_equal(got, gather(indices, table, 12345))
