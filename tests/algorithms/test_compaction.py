"""GPUCompaction against numpy: densities, tile boundaries, vectors, counts
written into DrawCommandBuffer records, zero length and errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import GPUCompaction, ReductionTuning, ScanTuning
from gpuviz.render import DrawCommandBuffer
from gpuviz.tables import GPUData

from .conftest import TILE, gpu_data, gpu_vector, new_graph, read, run, shared_vector

SENTINEL = 0xDEADBEEF


def flags_for(rng, n, density):
    return (rng.random(n) < density).astype(np.uint32) * rng.integers(1, 4, n).astype(np.uint32)


def compact_on_gpu(device, x, flags, *, tuning=None):
    graph = new_graph(device)
    out = gpu_data(device, np.full(len(x), SENTINEL, np.uint32))
    count = gpu_data(device, [SENTINEL, SENTINEL, SENTINEL])
    count_view = graph.create_data_view(graph.import_gpu_data("count", count).handle, format="uint32", length=1,
                                        byte_offset=4)
    GPUCompaction(id="c", input=graph.import_gpu_data("x", gpu_data(device, x)),
                  flags=graph.import_gpu_data("f", gpu_data(device, flags)),
                  output=graph.import_gpu_data("y", out), count=count_view, tuning=tuning).add_to_graph(graph)
    run(graph)
    return read(device, out), read(device, count)


@settings(max_examples=12, deadline=None)
@given(n=st.one_of(st.sampled_from([0, 1, 5, TILE - 1, TILE, TILE + 1, 3 * TILE + 2]), st.integers(0, 3 * TILE)),
       density=st.sampled_from([0.0, 0.01, 0.5, 1.0]), seed=st.integers(0, 2**16))
def test_matches_numpy(device, n, density, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    flags = flags_for(rng, n, density)
    out, count = compact_on_gpu(device, x, flags)
    expected = x[flags != 0]
    assert count.tolist() == [SENTINEL, expected.size, SENTINEL]
    np.testing.assert_array_equal(out[:expected.size], expected)
    assert (out[expected.size:] == SENTINEL).all()


@pytest.mark.parametrize("tuning", [ScanTuning(subgroups=False), ScanTuning(spin_limit=0)])
def test_portable_and_fallback_paths(device, tuning):
    rng = np.random.default_rng(11)
    n = 5 * TILE + 3
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    flags = flags_for(rng, n, 0.3)
    out, count = compact_on_gpu(device, x, flags, tuning=tuning)
    expected = x[flags != 0]
    assert count[1] == expected.size
    np.testing.assert_array_equal(out[:expected.size], expected)


@pytest.mark.parametrize("chunks", [[3, 0, 5], [TILE + 3, 0, 1, 2 * TILE - 1], [0, 0], [7]])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("output_buffers", ["one-per-chunk", "shared"])
def test_vectors_fill_output_chunks_as_one_sequence(device, chunks, density, output_buffers):
    """Survivors fill the output chunks in order, whether each chunk has its
    own buffer (one binding each) or all share one buffer with guard words
    between them (one binding, a different offset per chunk), and nothing is
    written outside the chunks."""
    rng = np.random.default_rng(len(chunks))
    xs = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for n in chunks]
    fs = [flags_for(rng, n, density) for n in chunks]
    graph = new_graph(device)
    starts = [3 * (k + 1) + sum(chunks[:k]) for k in range(len(chunks))]
    if output_buffers == "shared":
        yv = shared_vector(device, [np.full(n, SENTINEL) for n in chunks], starts, fill=SENTINEL)
    else:
        yv = gpu_vector(device, [np.full(n, SENTINEL) for n in chunks])
    count = gpu_data(device, [SENTINEL])
    GPUCompaction(id="v", input=graph.import_gpu_vector("x", gpu_vector(device, xs)),
                  flags=graph.import_gpu_vector("f", gpu_vector(device, fs)),
                  output=graph.import_gpu_vector("y", yv), count=graph.import_gpu_data("n", count)).add_to_graph(graph)
    run(graph)
    expected = np.concatenate(xs)[np.concatenate(fs) != 0]
    got = read(device, yv)
    assert read(device, count).tolist() == [expected.size]
    np.testing.assert_array_equal(got[:expected.size], expected)
    assert (got[expected.size:] == SENTINEL).all()
    if output_buffers == "shared":
        buffer = yv.chunks[0].buffer
        words = read(device, GPUData(buffer, format="uint32", length=buffer.size // 4))
        inside = np.zeros(words.size, bool)
        for start, n in zip(starts, chunks):
            inside[start:start + n] = True
        assert (words[~inside] == SENTINEL).all(), "words between and after the chunks must stay untouched"


@pytest.mark.parametrize("kind", ["draw", "draw-indexed"])
def test_count_into_draw_command_record(device, kind):
    """The count lands in record 1's instanceCount word (byte offset 4 of the
    record, not 16-byte aligned) and no other word of the buffer changes."""
    dcb = DrawCommandBuffer(device, type=kind, capacity=3)
    for i in range(3):
        if kind == "draw":
            dcb.write(i, vertex_count=6, instance_count=99, first_vertex=i, first_instance=7)
        else:
            dcb.write(i, index_count=36, instance_count=99, first_index=i, base_vertex=0, first_instance=7)
    before = np.frombuffer(device.queue.read_buffer(dcb.buffer), np.uint32).copy()
    rng = np.random.default_rng(4)
    n = 2 * TILE + 17
    ids = np.arange(n, dtype=np.uint32)
    flags = flags_for(rng, n, 0.25)
    graph = new_graph(device)
    out = gpu_data(device, np.zeros(n))
    count = graph.import_gpu_data("instances", dcb.get_instance_count_data(1))
    assert count.byte_offset == dcb.instance_count_byte_offset(1) == dcb.record_byte_offset(1) + 4
    GPUCompaction(id="visible", input=graph.import_gpu_data("ids", gpu_data(device, ids)),
                  flags=graph.import_gpu_data("f", gpu_data(device, flags)), output=graph.import_gpu_data("y", out),
                  count=count).add_to_graph(graph)
    run(graph)
    after = np.frombuffer(device.queue.read_buffer(dcb.buffer), np.uint32)
    word = dcb.instance_count_byte_offset(1) // 4
    expected = before.copy()
    expected[word] = np.count_nonzero(flags)
    np.testing.assert_array_equal(after, expected)
    np.testing.assert_array_equal(read(device, out)[:expected[word]], ids[flags != 0])
    dcb.destroy()


def test_zero_length_only_clears_the_count(device, graph):
    count = gpu_data(device, [5, 6])
    empty = [graph.import_gpu_data(name, gpu_data(device, [])) for name in ("x", "f", "y")]
    count_view = graph.create_data_view(graph.import_gpu_data("n", count).handle, format="uint32", length=1,
                                        byte_offset=4)
    ids = GPUCompaction(id="z", input=empty[0], flags=empty[1], output=empty[2], count=count_view).add_to_graph(graph)
    assert ids == ["z-count-clear"]
    run(graph)
    assert read(device, count).tolist() == [5, 0]


def test_errors(device, graph):
    x = graph.import_gpu_data("x", gpu_data(device, np.ones(100)))
    f = graph.import_gpu_data("f", gpu_data(device, np.ones(100)))
    y = graph.import_gpu_data("y", gpu_data(device, np.ones(99)))
    ok = graph.import_gpu_data("ok", gpu_data(device, np.ones(100)))
    n = graph.import_gpu_data("n", gpu_data(device, [0]))
    fl = graph.import_gpu_data("fl", gpu_data(device, np.ones(100), np.float32))
    with pytest.raises(gpuviz.GraphValidationError, match=r'GPUCompaction "c" output is shorter than input \(needs 100 '
                                                          r"rows, got 99\)"):
        GPUCompaction(id="c", input=x, flags=f, output=y, count=n).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="flags must be uint32"):
        GPUCompaction(id="c", input=x, flags=fl, output=ok, count=n).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphTypeError, match='GPUCompaction "c" tuning must be a ScanTuning'):
        GPUCompaction(id="c", input=x, flags=f, output=ok, count=n, tuning=ReductionTuning())
    with pytest.raises(gpuviz.GraphValidationError, match='flags share buffer "ok" with output'):
        GPUCompaction(id="c", input=x, flags=ok, output=ok, count=n).add_to_graph(graph)
    empty = graph.create_data_view(n.handle, format="uint32", length=0)
    with pytest.raises(gpuviz.GraphValidationError, match="count is shorter than needed"):
        GPUCompaction(id="c", input=x, flags=f, output=ok, count=empty).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="count overlaps output"):
        GPUCompaction(id="c", input=x, flags=f, output=ok,
                      count=graph.create_data_view(ok.handle, format="uint32", length=1, byte_offset=8)).add_to_graph(graph)
