"""GPUMask truth tables, canonical output, vectors and errors."""

import itertools

import numpy as np
import pytest

import gpuviz
from gpuviz.algorithms import GPUMask
from gpuviz.tables import GPUData

from .conftest import gpu_data, gpu_vector, new_graph, read, run, shared_vector

ORACLES = {
    "and": lambda bs: np.logical_and.reduce(bs),
    "or": lambda bs: np.logical_or.reduce(bs),
    "xor": lambda bs: np.logical_xor.reduce(bs),
    "difference": lambda bs: bs[0] & ~np.logical_or.reduce(bs[1:]) if len(bs) > 1 else bs[0],
    "not": lambda bs: ~bs[0],
}


@pytest.mark.parametrize("operation, inputs", [("and", 3), ("or", 3), ("xor", 3), ("difference", 3), ("not", 1),
                                               ("and", 2), ("difference", 2)])
def test_truth_tables(device, operation, inputs):
    """Every combination of zero/nonzero inputs (nonzero as 1, 7 and 2**32-1)."""
    combos = np.array(list(itertools.product([0, 1], repeat=inputs)), bool)
    rows = np.repeat(combos, 3, axis=0)
    values = [np.where(rows[:, k], np.tile([1, 7, 0xFFFFFFFF], len(combos)), 0).astype(np.uint32)
              for k in range(inputs)]
    graph = new_graph(device)
    out = gpu_data(device, np.full(len(rows), 5, np.uint32))
    GPUMask(id="m", inputs=[graph.import_gpu_data(f"in{k}", gpu_data(device, v)) for k, v in enumerate(values)],
            output=graph.import_gpu_data("out", out), operation=operation).add_to_graph(graph)
    run(graph)
    expected = ORACLES[operation]([rows[:, k] for k in range(inputs)]).astype(np.uint32)
    np.testing.assert_array_equal(read(device, out), expected)


@pytest.mark.parametrize("n", [1, 3, 1023, 1024, 1025, 5000])
def test_lengths(device, n):
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, 3, n).astype(np.uint32), rng.integers(0, 2, n).astype(np.uint32)
    graph = new_graph(device)
    out = gpu_data(device, np.full(n + 2, 9, np.uint32))
    GPUMask(id="m", inputs=[graph.import_gpu_data("a", gpu_data(device, a)),
                            graph.import_gpu_data("b", gpu_data(device, b))],
            output=graph.create_data_view(graph.import_gpu_data("o", out).handle, format="uint32", length=n),
            operation="or").add_to_graph(graph)
    run(graph)
    got = read(device, out)
    np.testing.assert_array_equal(got[:n], ((a != 0) | (b != 0)).astype(np.uint32))
    assert got[n:].tolist() == [9, 9]


def test_vectors_keep_chunks(device, compiled_pipelines):
    """Every chunk is composed in place (nothing written between chunks), and
    chunks that differ only in their offsets share one pipeline (offsets are
    uniforms)."""
    # whole vec4 words at element offset 4 of their bound ranges (a view at the
    # very start of its range, like b's, is another structure: offset folded to 0)
    chunks = [8, 0, 1032, 4]
    rng = np.random.default_rng(1)
    a = [rng.integers(0, 2, c).astype(np.uint32) for c in chunks]
    b = [rng.integers(0, 2, c).astype(np.uint32) for c in chunks]
    out_starts = [4, 16, 20, 1060]
    out = shared_vector(device, [np.zeros(c) for c in chunks], out_starts, fill=9)
    graph = new_graph(device)
    ids = GPUMask(id="vm", inputs=[graph.import_gpu_vector("a", shared_vector(device, a, [4, 12, 12, 1052])),
                                   graph.import_gpu_vector("b", gpu_vector(device, b))],
                  output=graph.import_gpu_vector("o", out), operation="xor").add_to_graph(graph)
    assert ids == ["vm-mask"]
    run(graph)
    assert len(compiled_pipelines) == 3 and len({id(p) for p in compiled_pipelines}) == 1
    words = read(device, GPUData(out.chunks[0].buffer, format="uint32", length=out.chunks[0].buffer.size // 4))
    inside = np.zeros(words.size, bool)
    for start, n in zip(out_starts, chunks):
        inside[start:start + n] = True
    np.testing.assert_array_equal(words[inside], (np.concatenate(a) != np.concatenate(b)).astype(np.uint32))
    assert (words[~inside] == 9).all(), "words between and after the chunks must stay untouched"


def test_empty_adds_no_nodes(device, graph):
    x = graph.import_gpu_data("x", gpu_data(device, []))
    y = graph.import_gpu_data("y", gpu_data(device, []))
    assert GPUMask(id="e", inputs=[x], output=y, operation="not").add_to_graph(graph) == []


def test_errors(device, graph):
    a = graph.import_gpu_data("a", gpu_data(device, np.ones(10)))
    b = graph.import_gpu_data("b", gpu_data(device, np.ones(9)))
    out = graph.import_gpu_data("out", gpu_data(device, np.ones(10)))
    with pytest.raises(gpuviz.GraphValidationError, match='"not" takes exactly one input'):
        GPUMask(id="m", inputs=[a, a], output=out, operation="not").add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="operation must be one of"):
        GPUMask(id="m", inputs=[a], output=out, operation="nand")
    with pytest.raises(gpuviz.GraphValidationError, match="inputs\\[1\\] has 9 rows but inputs\\[0\\] has 10"):
        GPUMask(id="m", inputs=[a, b], output=out).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match='output shares buffer "a" with an input'):
        GPUMask(id="m", inputs=[a], output=a, operation="not").add_to_graph(graph)
