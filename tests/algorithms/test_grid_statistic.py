"""GPUGridStatistic against the oracle (gpuviz.oracles.algorithms.grid_statistic)
over grids of 1 cell, a workgroup's cells -1, +0, +1 and several
workgroups: every statistic (switched by a buffer write, one compile),
empty cells NaN, resampling (offset / scale, samples outside the grid),
views at unaligned offsets, no output counts, and the errors."""

import numpy as np
import pytest

from gpuviz.algorithms import GRID_STATISTICS, GPUGridStatistic
from gpuviz.errors import GraphValidationError
from gpuviz.oracles.algorithms import grid_statistic

from .conftest import gpu_data, new_graph, read, submit_encodings

WG = 256


def grids(cells, seed):
    rng = np.random.default_rng(seed)
    counts = np.where(rng.random(cells) < 0.3, 0, rng.integers(1, 50, cells)).astype(np.uint32)
    sums = rng.normal(size=cells).astype(np.float32) * 100
    mins, maxs = sums - np.float32(3), sums + np.float32(5)
    return counts, sums, mins.astype(np.float32), maxs.astype(np.float32)


def same(got, want):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


def build(device, grid_size, data, *, pad=0, output_counts=True):
    """Each input ``pad`` words into its buffer (pad 3: element offsets inside the bound range)."""
    graph = new_graph(device)
    cells = grid_size[0] * grid_size[1]

    def view(name, values, dtype):
        backing = gpu_data(device, np.concatenate([np.zeros(pad, dtype), np.asarray(values, dtype)]), dtype)
        handle = graph.import_gpu_data(name, backing).handle
        return backing, graph.create_data_view(handle, format=np.dtype(dtype).name, length=len(values),
                                               byte_offset=4 * pad)

    inputs = [view(n, a, a.dtype)[1] for n, a in zip(("counts", "sums", "mins", "maxs"), data)]
    out, out_view = view("out", np.full(cells, 9, np.float32), np.float32)
    counts, counts_view = view("out-counts", np.full(cells, 9, np.uint32), np.uint32)
    stat = GPUGridStatistic(id="stat", counts=inputs[0], sums=inputs[1], mins=inputs[2], maxs=inputs[3],
                            output=out_view, output_counts=counts_view if output_counts else None, grid_size=grid_size)
    stat.add_to_graph(graph)
    return graph, stat, out, counts


@pytest.mark.parametrize("grid_size", [(1, 1), (WG - 1, 1), (16, 16), (WG + 1, 1), (37, 29)])
def test_every_statistic(device, grid_size):
    data = grids(grid_size[0] * grid_size[1], sum(grid_size))
    graph, stat, out, counts = build(device, grid_size, data, pad=3)
    compiled = graph.compile()
    for operation in GRID_STATISTICS:
        stat.set_operation(operation)
        submit_encodings(device, compiled, 1)
        want, want_counts = grid_statistic(*data, grid_size, operation)
        same(np.asarray(read(device, out), np.float32)[3:], want)
        np.testing.assert_array_equal(np.asarray(read(device, counts))[3:], want_counts)
    assert stat.operation == "max"


@pytest.mark.parametrize("offset, scale", [((0.0, 0.0), (0.5, 0.5)), ((-4.0, 2.0), (1.0, 1.0)),
                                           ((3.0, -2.0), (0.25, 2.0))])
def test_sampling(device, offset, scale):
    """Resampled cells (zoomed integer axes), samples outside the grid empty."""
    grid_size = (24, 12)
    data = grids(24 * 12, 5)
    graph, stat, out, counts = build(device, grid_size, data, output_counts=False)
    stat.set_sampling(offset=offset, scale=scale)  # before compile: recorded, uploaded by the compile
    stat.set_operation("mean")
    submit_encodings(device, graph.compile(), 1)
    want, _ = grid_statistic(*data, grid_size, "mean", offset, scale)
    same(np.asarray(read(device, out), np.float32), want)
    assert (np.asarray(read(device, counts)) == 9).all()  # no output counts: untouched


def test_errors(device):
    data = grids(4, 1)
    with pytest.raises(GraphValidationError, match="operation must be one of"):
        GPUGridStatistic(id="s", counts=None, sums=None, mins=None, maxs=None, output=None, grid_size=(2, 2),
                         operation="median")
    with pytest.raises(GraphValidationError, match="grid_size"):
        GPUGridStatistic(id="s", counts=None, sums=None, mins=None, maxs=None, output=None, grid_size=(0, 2))
    graph, stat, _, _ = build(device, (2, 2), data)
    with pytest.raises(GraphValidationError, match="finite"):
        stat.set_sampling(offset=(np.nan, 0.0))
    graph = new_graph(device)
    u = graph.import_gpu_data("u", gpu_data(device, np.zeros(4, np.uint32)))
    f = graph.import_gpu_data("f", gpu_data(device, np.zeros(4, np.float32), np.float32))
    small = graph.import_gpu_data("small", gpu_data(device, np.zeros(2, np.float32), np.float32))
    with pytest.raises(GraphValidationError, match="sums must be float32"):
        GPUGridStatistic(id="s", counts=u, sums=u, mins=f, maxs=f, output=small, grid_size=(2, 2)).add_to_graph(graph)
    with pytest.raises(GraphValidationError, match="output has 2 rows"):
        GPUGridStatistic(id="s", counts=u, sums=f, mins=f, maxs=f, output=small, grid_size=(2, 2)).add_to_graph(graph)
