"""GPUReduction against numpy: operations x formats, edge values, vectors,
the portable path, empty inputs and errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import GPUReduction, ScanTuning, reduction
from gpuviz.algorithms.reduction import ReductionTuning
from gpuviz.graph import shaders
from gpuviz.oracles import algorithms as oracles

from .conftest import gpu_data, gpu_vector, new_graph, read, run, shared_vector, submit_encodings, write_chunks

BLOCK = 8192
DTYPES = {"uint32": np.uint32, "sint32": np.int32, "float32": np.float32}


def reduce_on_gpu(device, chunks, fmt, operation, *, vector=False, tuning=None):
    dtype = DTYPES[fmt]
    graph = new_graph(device)
    out = gpu_data(device, np.full(2, 7, dtype), dtype)
    source = (graph.import_gpu_vector("x", gpu_vector(device, chunks, dtype)) if vector
              else graph.import_gpu_data("x", gpu_data(device, chunks[0], dtype)))
    GPUReduction(id="r", input=source, output=graph.import_gpu_data("y", out), operation=operation,
                 tuning=tuning).add_to_graph(graph)
    run(graph)
    return read(device, out)


def oracle(x, fmt, operation):
    return oracles.reduction(x, operation, DTYPES[fmt])


def check(got, expected, fmt, operation):
    expected = np.asarray(expected, DTYPES[fmt])
    got = got[:expected.size]
    if fmt == "float32" and operation == "sum":
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, expected)


def values(rng, fmt, n):
    if fmt == "float32":
        return rng.normal(scale=1000, size=n).astype(np.float32)
    info = np.iinfo(DTYPES[fmt])
    return rng.integers(info.min, info.max, n, dtype=np.int64, endpoint=True).astype(DTYPES[fmt])


OPERATIONS = ["sum", "min", "max", "extent"]


@pytest.mark.parametrize("fmt", list(DTYPES))
@pytest.mark.parametrize("operation", OPERATIONS)
def test_operations(device, fmt, operation):
    # seeded by position, not hash(): str hashes differ between processes
    rng = np.random.default_rng([list(DTYPES).index(fmt), OPERATIONS.index(operation)])
    for n in (1, 5, BLOCK + 3, 3 * BLOCK):
        x = values(rng, fmt, n)
        check(reduce_on_gpu(device, [x], fmt, operation), oracle(x, fmt, operation), fmt, operation)


def test_integer_edge_values(device):
    u = np.array([0, 0xFFFFFFFF, 1, 0xFFFFFFFF], np.uint32)
    assert reduce_on_gpu(device, [u], "uint32", "sum").tolist()[0] == (2 * 0xFFFFFFFF + 1) % (1 << 32)
    assert reduce_on_gpu(device, [u], "uint32", "extent").tolist() == [0, 0xFFFFFFFF]
    s = np.array([-2**31, 2**31 - 1, 0, -1], np.int32)
    assert reduce_on_gpu(device, [s], "sint32", "extent").tolist() == [-2**31, 2**31 - 1]
    assert reduce_on_gpu(device, [s], "sint32", "sum").tolist()[0] == -2


def test_float_non_finite_values_are_ignored_by_min_max_extent(device):
    x = np.array([np.nan, np.inf, -np.inf, 2.5, -1.0, np.nan], np.float32)
    assert reduce_on_gpu(device, [x], "float32", "extent").tolist() == [-1.0, 2.5]
    assert reduce_on_gpu(device, [x], "float32", "min").tolist()[0] == -1.0
    assert reduce_on_gpu(device, [x], "float32", "max").tolist()[0] == 2.5
    only_bad = np.array([np.nan, np.inf, -np.inf], np.float32)
    assert reduce_on_gpu(device, [only_bad], "float32", "extent").tolist() == [0.0, 0.0]
    assert np.isnan(reduce_on_gpu(device, [x], "float32", "sum")[0])
    assert reduce_on_gpu(device, [np.array([np.inf, 1], np.float32)], "float32", "sum")[0] == np.inf


@settings(max_examples=6, deadline=None)
@given(chunks=st.lists(st.sampled_from([0, 1, 7, BLOCK - 1, BLOCK + 1]), min_size=1, max_size=4),
       seed=st.integers(0, 1000))
def test_vectors(device, chunks, seed):
    rng = np.random.default_rng(seed)
    xs = [values(rng, "sint32", n) for n in chunks]
    got = reduce_on_gpu(device, xs, "sint32", "extent", vector=True)
    flat = np.concatenate(xs)
    check(got, oracle(flat, "sint32", "extent"), "sint32", "extent")
    got = reduce_on_gpu(device, xs, "sint32", "sum", vector=True)
    check(got, oracle(flat, "sint32", "sum"), "sint32", "sum")


@pytest.mark.parametrize("subgroups", [None, False], ids=["default", "portable"])
def test_portable_path(device, monkeypatch, subgroups):
    """ReductionTuning(subgroups=False) builds the workgroup-memory variant
    (checked on the template values, so ignoring the knob fails) and matches
    numpy."""
    variants = []

    def spy(name, **values):
        variants.append(values["subgroups"])
        return shaders.wgsl(name, **values)

    monkeypatch.setattr(reduction, "wgsl", spy)
    rng = np.random.default_rng(9)
    x = values(rng, "float32", 2 * BLOCK + 5)
    x[[3, 100]] = [np.nan, -np.inf]
    got = reduce_on_gpu(device, [x], "float32", "extent", tuning=ReductionTuning(subgroups=subgroups))
    check(got, oracle(x, "float32", "extent"), "float32", "extent")
    expected = subgroups is None and gpuviz.device_capabilities(device).subgroups
    assert variants and set(variants) == {expected}


@pytest.mark.parametrize("group_blocks", [1, 2, 4, 16])
def test_blocks_per_workgroup(device, group_blocks):
    """Workgroups of several blocks, with partial last groups and partial
    last blocks."""
    rng = np.random.default_rng(group_blocks)
    tuning = ReductionTuning(group_blocks=group_blocks)
    for n in (group_blocks * BLOCK - 1, group_blocks * BLOCK + 1, 3 * group_blocks * BLOCK + 5):
        x = values(rng, "uint32", n)
        check(reduce_on_gpu(device, [x], "uint32", "sum", tuning=tuning), oracle(x, "uint32", "sum"), "uint32", "sum")
        y = values(rng, "float32", n)
        check(reduce_on_gpu(device, [y], "float32", "extent", tuning=tuning), oracle(y, "float32", "extent"),
              "float32", "extent")


def test_final_pass_rounds(device):
    """257 and 1025 partials: the final pass's guarded second and fifth loads."""
    rng = np.random.default_rng(5)
    tuning = ReductionTuning(group_blocks=1)
    for blocks in (257, 1025):
        x = values(rng, "sint32", blocks * BLOCK - 3)
        check(reduce_on_gpu(device, [x], "sint32", "max", tuning=tuning), oracle(x, "sint32", "max"), "sint32", "max")


def test_chunks_at_different_offsets_share_one_pipeline(device, compiled_pipelines):
    """View offsets are uniforms: the block pass compiles one pipeline for
    vector chunks at different element offsets of one buffer (the final
    pass is the second). Every chunk starts mid-range (element 4 of 32-byte
    ranges): a chunk at the very start of its range is another structure."""
    rng = np.random.default_rng(4)
    xs = [values(rng, "sint32", n) for n in (BLOCK, 8, 20)]
    graph = new_graph(device)
    out = gpu_data(device, np.zeros(2, np.int32), np.int32)
    source = graph.import_gpu_vector("x", shared_vector(device, xs, [4, BLOCK + 12, BLOCK + 28], np.int32))
    GPUReduction(id="r", input=source, output=graph.import_gpu_data("y", out), operation="extent",
                 tuning=ReductionTuning(single_pass=False)).add_to_graph(graph)
    run(graph)
    check(read(device, out), oracle(np.concatenate(xs), "sint32", "extent"), "sint32", "extent")
    assert len(compiled_pipelines) == 4 and len({id(p) for p in compiled_pipelines}) == 2


def test_empty_writes_zeros(device):
    for fmt, op in (("uint32", "min"), ("float32", "extent"), ("sint32", "sum")):
        assert reduce_on_gpu(device, [np.zeros(0)], fmt, op).tolist()[: 2 if op == "extent" else 1] == [0] * (
            2 if op == "extent" else 1)


def test_errors(device, graph):
    x = graph.import_gpu_data("x", gpu_data(device, np.ones(10), np.float32))
    one = graph.import_gpu_data("one", gpu_data(device, np.ones(1), np.float32))
    ints = graph.import_gpu_data("ints", gpu_data(device, np.ones(2), np.uint32))
    halves = graph.import_gpu_data("halves", gpu_data(device, np.ones(2), np.float16))
    with pytest.raises(gpuviz.GraphValidationError, match="output is shorter than needed \\(needs 2 rows, got 1\\)"):
        GPUReduction(id="r", input=x, output=one, operation="extent").add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="output must be float32 \\(got uint32\\)"):
        GPUReduction(id="r", input=x, output=ints, operation="sum").add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="input must be uint32 or sint32 or float32"):
        GPUReduction(id="r", input=halves, output=one).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="operation must be one of"):
        GPUReduction(id="r", input=x, output=one, operation="mean")
    with pytest.raises(gpuviz.GraphTypeError, match='GPUReduction "r" tuning must be a ReductionTuning '
                                                    r"\(got ScanTuning\)"):
        GPUReduction(id="r", input=x, output=one, tuning=ScanTuning(subgroups=False))
    with pytest.raises(gpuviz.GraphValidationError, match='GPUReduction "r" group_blocks must be 1 to 64 '
                                                          r"\(got 65\)"):
        GPUReduction(id="r", input=x, output=one, tuning=ReductionTuning(group_blocks=65)).add_to_graph(graph)


@pytest.mark.parametrize("single_pass", [True, False], ids=["single-pass", "two-pass"])
@pytest.mark.parametrize("subgroups", [None, False], ids=["default", "portable"])
def test_single_pass(device, subgroups, single_pass):
    """ReductionTuning(single_pass=True): the last-arriving workgroup reduces
    the partials (False: a second, one-workgroup dispatch does); every
    operation and format, a partial last block, several rounds of the
    finishing loop (257 partials) and a vector of uneven and empty chunks."""
    rng = np.random.default_rng(21)
    tuning = ReductionTuning(single_pass=single_pass, subgroups=subgroups)
    for fmt in DTYPES:
        for operation in ("sum", "min", "max", "extent"):
            for n in (1, 3 * 4 * BLOCK + 7):
                x = values(rng, fmt, n)
                check(reduce_on_gpu(device, [x], fmt, operation, tuning=tuning), oracle(x, fmt, operation),
                      fmt, operation)
    x = values(rng, "sint32", 257 * BLOCK - 3)
    check(reduce_on_gpu(device, [x], "sint32", "max", tuning=ReductionTuning(group_blocks=1, single_pass=single_pass,
                                                                           subgroups=subgroups)),
          oracle(x, "sint32", "max"), "sint32", "max")
    xs = [values(rng, "float32", k) for k in (BLOCK * 4 + 1, 0, 5, BLOCK * 9)]
    xs[0][[2, 9]] = [np.nan, np.inf]
    check(reduce_on_gpu(device, xs, "float32", "extent", vector=True, tuning=tuning),
          oracle(np.concatenate(xs), "float32", "extent"), "float32", "extent")


def test_single_pass_reuses_its_state(device):
    """The single pass's state is never cleared: the arrival counter and the
    parity-tagged partials of one encoding must not leak into the next, in
    separate submits and several times in one encoder, with changing data."""
    rng = np.random.default_rng(22)
    lengths = [4 * BLOCK + 3, 0, 2 * BLOCK - 1, 5]
    xs = [np.zeros(k, np.int32) for k in lengths]
    graph = new_graph(device)
    src = gpu_vector(device, xs, np.int32)
    out = gpu_data(device, np.zeros(2, np.int32), np.int32)
    GPUReduction(id="r", input=graph.import_gpu_vector("x", src), output=graph.import_gpu_data("y", out),
                 operation="extent", tuning=ReductionTuning(single_pass=True)).add_to_graph(graph)
    compiled = graph.compile()
    for per_submit in (1, 1, 2, 1, 3):
        xs = [values(rng, "sint32", k) for k in lengths]
        write_chunks(device, src, xs)
        submit_encodings(device, compiled, per_submit)
        check(read(device, out), oracle(np.concatenate(xs), "sint32", "extent"), "sint32", "extent")


def test_single_pass_is_chosen_by_size(device, monkeypatch):
    """single_pass=None: one dispatch up to SINGLE_PASS_MAX_ROWS rows, two above."""
    def node_count(n):
        graph = new_graph(device)
        src = gpu_data(device, np.ones(n, np.uint32), np.uint32)
        out = gpu_data(device, np.zeros(1, np.uint32), np.uint32)
        reducer = GPUReduction(id="r", input=graph.import_gpu_data("x", src), output=graph.import_gpu_data("y", out),
                               operation="sum")
        reducer.add_to_graph(graph)
        return len(reducer.node_ids)

    assert node_count(1000) == 1
    monkeypatch.setattr(reduction, "SINGLE_PASS_MAX_ROWS", 999)
    assert node_count(1000) == 2
