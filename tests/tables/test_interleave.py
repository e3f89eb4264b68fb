"""GPUInterleave: (x[i], y[i]) rows against the oracle (gpuviz.oracles.tables)
for data views of 1, workgroup-1, workgroup, workgroup+1 and several
workgroups of rows, vectors with empty and uneven chunks (each chunk in
place, nothing between chunks written), bit-exact NaN payloads and integer
columns, and the construction errors."""

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.errors import GraphTypeError, GraphValidationError
from gpuviz.formats import vector_format
from gpuviz.graph import GPUCommandGraph, GraphVectorView
from gpuviz.oracles.tables import interleave
from gpuviz.tables import GPUData, GPUInterleave, GPUVector, read_array

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
WG = 256
SENTINEL = 0xDEADBEEF


def run(device, graph):
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    return compiled


def columns(n, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        x, y = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
        x[::7] = np.float32(np.nan)
        y[3::11] = np.uint32(0x7FC01234).view(np.float32)  # a NaN payload: copied bit for bit
        return x, y
    return rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(dtype), rng.integers(0, 2 ** 32, n,
                                                                                      dtype=np.uint64).astype(dtype)


@pytest.mark.parametrize("n", [1, WG - 1, WG, WG + 1, 5 * WG + 17])
def test_data_views(device, n):
    x, y = columns(n, n)
    graph = GPUCommandGraph(device, id="t")
    out = GPUData.from_numpy(device, np.full(2 * n + 4, SENTINEL, np.uint32), USAGE)
    handle = graph.import_gpu_data("out", out).handle
    node = GPUInterleave(id="il", x=graph.import_gpu_data("x", GPUData.from_numpy(device, x, USAGE)),
                         y=graph.import_gpu_data("y", GPUData.from_numpy(device, y, USAGE)),
                         output=graph.create_data_view(handle, format="float32x2", length=n))
    assert node.add_to_graph(graph) == ["il"]
    run(device, graph)
    got = np.asarray(read_array(device, out)).view(np.uint32)
    np.testing.assert_array_equal(got[:2 * n].reshape(n, 2), interleave(x, y))
    assert (got[2 * n:] == SENTINEL).all()


@pytest.mark.parametrize("lengths", [[0, 1, WG - 1, WG + 1, 0, 700], [WG], [3, 0]])
def test_vectors_keep_chunks(device, lengths):
    """Each chunk of the output lies on its own offset of one buffer; the
    words between chunks keep their sentinel."""
    xs = [columns(n, 10 + k, np.uint32)[0] for k, n in enumerate(lengths)]
    ys = [columns(n, 20 + k, np.uint32)[1] for k, n in enumerate(lengths)]
    offsets = np.cumsum([0] + [2 * n + 6 for n in lengths])  # 24 bytes apart: not storage-aligned
    backing = GPUData.from_numpy(device, np.full(int(offsets[-1]), SENTINEL, np.uint32), USAGE)
    graph = GPUCommandGraph(device, id="t")
    handle = graph.import_gpu_data("out", backing).handle
    out = GraphVectorView("out", tuple(graph.create_data_view(handle, format="uint32x2", length=n,
                                                              byte_offset=4 * int(o))
                                       for n, o in zip(lengths, offsets[:-1])), vector_format("uint32x2"))
    x = graph.import_gpu_vector("x", GPUVector.from_numpy(device, xs, USAGE))
    y = graph.import_gpu_vector("y", GPUVector.from_numpy(device, ys, USAGE))
    GPUInterleave(id="il", x=x, y=y, output=out).add_to_graph(graph)
    run(device, graph)
    got = np.asarray(read_array(device, backing)).view(np.uint32)
    want = np.full(int(offsets[-1]), SENTINEL, np.uint32)
    for n, o, a, b in zip(lengths, offsets, xs, ys):
        want[o:o + 2 * n] = interleave(a, b).ravel()
    np.testing.assert_array_equal(got, want)


def test_zero_rows_add_no_node(device):
    graph = GPUCommandGraph(device, id="t")
    empty = GPUVector.from_numpy(device, [np.zeros(0, np.float32)], USAGE)
    x = graph.import_gpu_vector("x", empty)
    out = graph.import_gpu_vector("o", GPUVector.from_numpy(device, [np.zeros((0, 2), np.float32)], USAGE))
    assert GPUInterleave(id="il", x=x, y=x, output=out).add_to_graph(graph) == []


def test_errors(device):
    graph = GPUCommandGraph(device, id="t")
    f4 = graph.import_gpu_data("f4", GPUData.from_numpy(device, np.zeros(8, np.float32), USAGE))
    f4b = graph.import_gpu_data("f4b", GPUData.from_numpy(device, np.zeros(8, np.float32), USAGE))
    short = graph.import_gpu_data("short", GPUData.from_numpy(device, np.zeros(4, np.float32), USAGE))
    pairs = graph.import_gpu_data("pairs", GPUData.from_numpy(device, np.zeros((8, 2), np.float32), USAGE))
    with pytest.raises(GraphValidationError, match='GPUInterleave "il" x must have a 4-byte scalar'):
        GPUInterleave(id="il", x=pairs, y=f4, output=pairs)
    with pytest.raises(GraphValidationError, match="output must have an 8-byte two-component"):
        GPUInterleave(id="il", x=f4, y=f4b, output=f4)
    with pytest.raises(GraphValidationError, match="y has chunk lengths"):
        GPUInterleave(id="il", x=f4, y=short, output=pairs)
    big = graph.import_gpu_data("big", GPUData.from_numpy(device, np.zeros(16, np.float32), USAGE)).handle
    with pytest.raises(GraphValidationError, match="shares buffer"):
        GPUInterleave(id="il", x=graph.create_data_view(big, format="float32", length=8), y=f4b,
                      output=graph.create_data_view(big, format="float32x2", length=8))
    with pytest.raises(GraphTypeError):
        GPUInterleave(id="il", x=np.zeros(3), y=f4, output=pairs)


def test_views_of_another_graph(device):
    one, two = GPUCommandGraph(device, id="one"), GPUCommandGraph(device, id="two")
    x = one.import_gpu_data("x", GPUData.from_numpy(device, np.zeros(4, np.float32), USAGE))
    y = two.import_gpu_data("y", GPUData.from_numpy(device, np.zeros(4, np.float32), USAGE))
    out = two.import_gpu_data("o", GPUData.from_numpy(device, np.zeros((4, 2), np.float32), USAGE))
    with pytest.raises(GraphValidationError, match='x belongs to graph "one", not "two"'):
        GPUInterleave(id="il", x=x, y=y, output=out).add_to_graph(two)


@settings(max_examples=6, deadline=None)
@given(lengths=st.lists(st.sampled_from([0, 1, 2, WG - 1, WG, WG + 1, 600]), min_size=1, max_size=4),
       seed=st.integers(0, 2 ** 32 - 1))
def test_property_vectors(device, lengths, seed):
    xs = [columns(n, seed + k)[0] for k, n in enumerate(lengths)]
    ys = [columns(n, seed + 7 * k + 1)[1] for k, n in enumerate(lengths)]
    graph = GPUCommandGraph(device, id="t")
    out_data = GPUVector.from_numpy(device, [np.full((n, 2), 5, np.float32) for n in lengths], USAGE)
    node = GPUInterleave(id="il", x=graph.import_gpu_vector("x", GPUVector.from_numpy(device, xs, USAGE)),
                         y=graph.import_gpu_vector("y", GPUVector.from_numpy(device, ys, USAGE)),
                         output=graph.import_gpu_vector("o", out_data))
    if not node.add_to_graph(graph):
        assert sum(lengths) == 0
        return
    run(device, graph)
    for chunk, a, b in zip(out_data.chunks, xs, ys):
        if len(a):
            got = np.asarray(read_array(device, chunk)).view(np.uint32).reshape(-1, 2)
            np.testing.assert_array_equal(got, interleave(a, b))
