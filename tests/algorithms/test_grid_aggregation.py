"""GPUGridBinning and GPUGridAggregation against numpy: cell mapping (maximum
coordinate in the last cell, non-finite and out-of-bounds rows ignored),
every operation with empty cells, small (privatized) and large (global
atomics) grids, vectors with empty and uneven chunks, masks, bounds changed
without recompiling, GPU-resident bounds, and validation errors."""

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpuviz import (AggregationTuning, GPUCommandGraph, GPUData, GPUGridAggregation, GPUGridBinning, GraphStateError, GraphValidationError, read_array)
from gpuviz.oracles.algorithms import grid_aggregation as oracle

from .conftest import import_input

OPS = ["sum", "min", "max", "mean"]
# every test once with native float atomics and once with the compare-exchange loop
pytestmark = pytest.mark.usefixtures("float_add_path")


def grid(device, positions, *, grid_size, bounds, operation="count", weights=None, mask=None, tuning=None):
    graph = GPUCommandGraph(device, id="grid")
    n = grid_size[0] * grid_size[1]
    out = GPUData.allocate(device, format="uint32" if operation == "count" else "float32", length=n)
    if isinstance(bounds, np.ndarray):
        bounds = graph.import_gpu_data("bounds", GPUData.from_numpy(device, bounds))
    common = dict(id="g", positions=import_input(device, graph, "pos", positions), output=graph.import_gpu_data("out", out),
                  grid_size=grid_size, bounds=bounds, mask=import_input(device, graph, "mask", mask), tuning=tuning)
    if operation == "count":
        primitive = GPUGridBinning(**common)
    else:
        primitive = GPUGridAggregation(weights=import_input(device, graph, "w", weights), operation=operation, **common)
    primitive.add_to_graph(graph)
    compiled = graph.compile()

    def result():
        encoder = device.create_command_encoder()
        compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        return read_array(device, out)
    return primitive, compiled, result


def check(got, want, operation):
    if operation == "count":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_interior_cell_edges_are_exact(device):
    """x = 200 on a 3-column grid over (0, 300): column 2 whatever the division rounding."""
    pos = np.stack([np.arange(0, 301), np.full(301, 0.5)], -1).astype(np.float32)
    _, _, result = grid(device, pos, grid_size=(3, 1), bounds=(0, 0, 300, 1))
    assert result().tolist() == [100, 100, 101]


def test_boundary_positions(device):
    pos = np.array([[0, 0], [4, 2], [3.999, 1.999], [2, 1], [4.001, 1], [1, -0.001], [np.nan, 1], [1, np.inf],
                    [-np.inf, 0], [0, 2]], np.float32)
    _, _, result = grid(device, pos, grid_size=(4, 2), bounds=(0, 0, 4, 2))
    # (0,0) -> cell 0; max corner (4,2) and (3.999,1.999) -> last cell 7; (2,1) -> row 1 col 2 = 6; (0,2) -> 4
    assert result().tolist() == [1, 0, 0, 0, 1, 0, 1, 2]


@pytest.mark.parametrize("operation", OPS)
@pytest.mark.parametrize("grid_size", [(5, 3), (70, 40)])  # privatized vs global atomics
def test_operations_match_numpy(device, operation, grid_size):
    rng = np.random.default_rng(11)
    n = 6000
    pos = rng.uniform(-1.2, 1.2, (n, 2)).astype(np.float32)
    pos[::97] = np.nan
    weights = (rng.integers(-800, 800, n) / 8).astype(np.float32)
    weights[::31] = np.nan
    weights[1::53] = np.inf
    _, _, result = grid(device, pos, grid_size=grid_size, bounds=(-1, -1, 1, 1), operation=operation,
                        weights=weights)
    got = result()
    want = oracle(pos, (-1, -1, 1, 1), grid_size, operation, weights)
    check(got, want, operation)
    if operation != "sum" and grid_size == (70, 40):
        assert np.isnan(got).any()  # some cells stay empty


@settings(max_examples=16, deadline=None)
@given(lengths=st.lists(st.one_of(st.just(0), st.sampled_from([1, 255, 257, 4097]), st.integers(0, 2500)),
                        min_size=1, max_size=4),
       grid_size=st.sampled_from([(1, 1), (3, 7), (16, 16), (33, 40)]), operation=st.sampled_from(["count"] + OPS),
       masked=st.booleans(), privatize=st.booleans(), seed=st.integers(0, 2**16))
def test_vectors_with_empty_and_uneven_chunks(device, lengths, grid_size, operation, masked, privatize, seed):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    pos = rng.uniform(-0.1, 1.1, (n, 2)).astype(np.float32)
    pos[rng.random(n) < 0.05] = 1.0  # exact maximum coordinates
    weights = (rng.integers(-80, 80, n) / 4).astype(np.float32)
    mask = (rng.random(n) < 0.6).astype(np.uint32) if masked else None
    cut = np.cumsum(lengths)[:-1]
    _, _, result = grid(device, np.split(pos, cut), grid_size=grid_size, bounds=(0, 0, 1, 1), operation=operation,
                        weights=None if operation == "count" else np.split(weights, cut),
                        mask=None if mask is None else np.split(mask, cut),
                        tuning=None if privatize else AggregationTuning(privatize_max_keys=0))
    keep = None if mask is None else mask != 0
    check(result(), oracle(pos, (0, 0, 1, 1), grid_size, operation, weights, keep), operation)


def test_set_bounds_without_recompiling(device):
    rng = np.random.default_rng(6)
    pos = rng.normal(size=(8000, 2)).astype(np.float32)
    weights = (rng.integers(0, 64, 8000) / 4).astype(np.float32)
    primitive, compiled, result = grid(device, pos, grid_size=(32, 24), bounds=(-1, -1, 1, 1), operation="mean",
                                       weights=weights)
    for bounds in [(-1, -1, 1, 1), (0, -3, 3, 0), (-0.5, 0.25, -0.5, 0.75), (-4, -4, 4, 4)]:
        primitive.set_bounds(bounds)
        check(result(), oracle(pos, bounds, (32, 24), "mean", weights), "mean")
    assert compiled.encode_count == 4


def test_set_bounds_after_the_graph_was_destroyed_is_a_state_error(device):
    """Issue 10 item 6: the parameter buffer died with the graph; writing it
    was wgpu's validation error."""
    pos = np.zeros((16, 2), np.float32)
    primitive, compiled, _result = grid(device, pos, grid_size=(4, 4), bounds=(-1, -1, 1, 1), operation="count")
    compiled.destroy()
    with pytest.raises(GraphStateError, match='GPUGridBinning "g" parameters cannot change: the graph it was '
                                              "compiled into was destroyed"):
        primitive.set_bounds((0, 0, 1, 1))


def test_gpu_bounds_view(device):
    # cell centres of an 8 x 8 grid over (-1, 1)^2 plus points outside: nothing near an interior edge
    # (GPU-resident bounds use the float32 estimate without edge tables)
    centres = (np.arange(-15, 16, 2) / 16).astype(np.float32)
    pos = np.concatenate([np.stack(np.meshgrid(centres, centres), -1).reshape(-1, 2), [[-1, -1], [1, 1], [1.5, 0]]])
    pos = pos.astype(np.float32)
    for bounds in [np.array([-1, -1, 1, 1], np.float32), np.array([1, -1, -1, 1], np.float32),
                   np.array([0, 0, np.inf, 1], np.float32)]:
        _, _, result = grid(device, pos, grid_size=(8, 8), bounds=bounds)
        valid = np.isfinite(bounds).all() and bounds[0] <= bounds[2] and bounds[1] <= bounds[3]
        want = oracle(pos, bounds, (8, 8)) if valid else np.zeros(64, np.uint32)
        np.testing.assert_array_equal(result(), want)


def test_validation_errors(device):
    graph = GPUCommandGraph(device, id="errors")
    pos = graph.import_gpu_data("pos", GPUData.from_numpy(device, np.zeros((10, 2), np.float32)))
    flat = graph.import_gpu_data("flat", GPUData.from_numpy(device, np.zeros(10, np.float32)))
    short = graph.import_gpu_data("short", GPUData.from_numpy(device, np.zeros(9, np.float32)))
    out_u = graph.import_gpu_data("out-u", GPUData.allocate(device, format="uint32", length=6))
    out_f = graph.import_gpu_data("out-f", GPUData.allocate(device, format="float32", length=6))
    base = dict(id="g", grid_size=(3, 2), bounds=(0, 0, 1, 1))
    binning = [
        (dict(positions=flat, output=out_u), r'GPUGridBinning "g" positions must be float32x2 \(got float32\)'),
        (dict(positions=pos, output=out_f), r"output must be uint32 \(got float32\)"),
        (dict(positions=pos, output=out_u, grid_size=(4, 2)), r"wrong length \(needs 8 rows, got 6\)"),
        (dict(positions=pos, output=out_u, grid_size=(0, 2)), "grid_size must be two positive integers"),
        (dict(positions=pos, output=out_u, bounds=(0, 0, 1)), r"bounds must be \(xmin, ymin, xmax, ymax\)"),
        (dict(positions=pos, output=out_u, bounds=(1, 0, 0, 1)), "bounds x must be finite"),
        (dict(positions=pos, output=out_u, bounds=(0, 0, 1, np.nan)), "bounds y must be finite"),
    ]
    for kwargs, message in binning:
        with pytest.raises(GraphValidationError, match=message):
            GPUGridBinning(**{**base, **kwargs})
    aggregation = [
        (dict(positions=pos, weights=flat, output=out_f, operation="count"), "use GPUGridBinning"),
        (dict(positions=pos, weights=flat, output=out_f, operation="median"), "unknown operation"),
        (dict(positions=pos, weights=short, output=out_f),
         r"weights chunk lengths \[9\] do not match positions chunk lengths \[10\]"),
        (dict(positions=pos, weights=flat, output=out_u), r"output must be float32 \(got uint32\)"),
    ]
    for kwargs, message in aggregation:
        with pytest.raises(GraphValidationError, match=message):
            GPUGridAggregation(**{**base, **kwargs})
    bounds_view = graph.import_gpu_data("b", GPUData.from_numpy(device, np.zeros(4, np.float32)))
    primitive = GPUGridBinning(id="g", positions=pos, output=out_u, grid_size=(3, 2), bounds=bounds_view)
    with pytest.raises(GraphStateError, match="GPU-resident bounds"):
        primitive.set_bounds((0, 0, 1, 1))


@pytest.mark.parametrize("float_atomics", [None, True, False])
@pytest.mark.parametrize("operation", OPS)
def test_float_atomics_tuning(device, operation, float_atomics):
    """Explicit tunings override the auto choice; both ways of adding floats give the oracle (dyadic weights:
    sums are exact whatever the order); only global sum / mean use native float atomics."""
    import gpuviz

    if float_atomics and not gpuviz.device_capabilities(device).float32_atomics:
        pytest.skip("device lacks shader-float32-atomic")
    rng = np.random.default_rng(21)
    pos = rng.normal(0, 0.4, (20000, 2)).astype(np.float32)  # dense centre: many rows per cell
    weights = (rng.integers(-64, 64, 20000) / 4).astype(np.float32)
    tuning = AggregationTuning(float_atomics=float_atomics)
    primitive, _, result = grid(device, pos, grid_size=(48, 40), bounds=(-1, -1, 1, 1), operation=operation,
                                weights=weights, tuning=tuning)
    check(result(), oracle(pos, (-1, -1, 1, 1), (48, 40), operation, weights), operation)
    native = gpuviz.device_capabilities(device).float32_atomics if float_atomics is None else float_atomics
    if float_atomics is None and os.environ.get("GPUVIZ_FLOAT_ATOMICS") == "0":
        native = False
    assert primitive.uses_float_atomics == (native and operation in ("sum", "mean"))


def test_float_atomics_true_needs_the_device_feature(device, monkeypatch):
    import dataclasses

    import gpuviz
    from gpuviz.algorithms import keyed_aggregation

    caps = dataclasses.replace(gpuviz.device_capabilities(device), float32_atomics=False)
    monkeypatch.setattr(keyed_aggregation, "device_capabilities", lambda _device: caps)
    pos = np.zeros((4, 2), np.float32)
    with pytest.raises(GraphValidationError, match='GPUGridAggregation "g" tuning float_atomics=True needs the '
                                                   'device feature shader-float32-atomic'):
        grid(device, pos, grid_size=(40, 40), bounds=(0, 0, 1, 1), operation="mean", weights=np.ones(4, np.float32),
             tuning=AggregationTuning(float_atomics=True))
    primitive, _, result = grid(device, pos, grid_size=(40, 40), bounds=(0, 0, 1, 1), operation="mean",
                                weights=np.ones(4, np.float32))  # auto: falls back to compare-exchange
    assert not primitive.uses_float_atomics and result()[0] == 1


@pytest.mark.parametrize("cls", [GPUGridBinning, GPUGridAggregation])
def test_docstrings_are_literal_and_say_what_is_not_done(cls):
    doc = cls.__doc__
    assert doc is not None and "Does not submit, map or read back" in doc and "Parameters" in doc
    assert "row-major" in doc
