"""GPUGridStatistic: one statistic per grid cell from the grids that
GPUGridBinning and GPUGridAggregation compute."""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphStateError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.compat import is_destroyed
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .grid_aggregation import check_grid_size
from .validation import chunks_of, refuse_overlaps

__all__ = ["GPUGridStatistic", "GRID_STATISTICS"]

#: Statistics, in the order of the kernel's ``op`` word.
GRID_STATISTICS = ("count", "sum", "mean", "min", "max")
_PARAMS_BYTES = 64  # grid_statistic.wgsl: Params


class GPUGridStatistic:
    """The chosen statistic of every cell of a ``w x h`` grid, from its count,
    sum, min and max grids (float32 output, NaN for an empty cell), and the
    row count behind every output cell.

    Parameters
    ----------
    id : str
        The node's ID (``"{id}"``).
    counts : GraphDataView
        uint32, ``w * h`` cells (GPUGridBinning's output).
    sums, mins, maxs : GraphDataView
        float32, ``w * h`` cells each (GPUGridAggregation's outputs of those
        operations, over the same points, bounds and filters).
    output : GraphDataView
        float32, ``w * h`` cells: count, sum, sum / count, min or max of the
        sampled cell; NaN where its count is 0 or the sample falls outside
        the grid.
    grid_size : (int, int)
    output_counts : GraphDataView, optional
        uint32, ``w * h``: the count of the sampled cell (0 outside).
    operation : {"count", "sum", "mean", "min", "max"}
        The initial statistic (:meth:`set_operation` changes it).

    Notes
    -----
    Output cell ``(i, j)`` samples source cell ``floor(offset + (i + 0.5) *
    scale)`` per axis (:meth:`set_sampling`; default offset 0, scale 1: the
    same cell). A caller whose source cells hold one whole number each
    resamples a zoomed integer axis this way without empty stripes.
    The statistic and the sampling live in a parameter buffer made when the
    graph compiles: changing them is a buffer write, never a recompilation.
    One pass over the output cells. Does not aggregate points (the grids
    come from GPUGridBinning / GPUGridAggregation), submit or read back.
    """

    def __init__(self, *, id: str, counts, sums, mins, maxs, output, grid_size, output_counts=None,
                 operation: str = "count"):
        self.id = check_id("GPUGridStatistic", id)
        self._owner = f'GPUGridStatistic "{id}"'
        self.grid_size = check_grid_size(self._owner, grid_size)
        self.counts, self.sums, self.mins, self.maxs = counts, sums, mins, maxs
        self.output, self.output_counts = output, output_counts
        self._params = np.zeros(_PARAMS_BYTES // 4, np.uint32)
        self._params[:4].view(np.float32)[:] = (0.0, 0.0, 1.0, 1.0)
        self._params[4] = self._operation(operation)
        self.params_buffer = None
        self._device = None
        self.node_ids: list = []

    def _operation(self, operation) -> int:
        if operation not in GRID_STATISTICS:
            raise GraphValidationError(f"{self._owner} operation must be one of {', '.join(GRID_STATISTICS)} "
                                       f"(got {operation!r})")
        return GRID_STATISTICS.index(operation)

    @property
    def operation(self) -> str:
        """The statistic the next encodings compute."""
        return GRID_STATISTICS[int(self._params[4])]

    def set_operation(self, operation, *, queue=None) -> None:
        """Compute ``operation`` from the next encoding on, without recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue) once the graph is compiled; before that it only
        records it. Submits and reads back nothing.
        """
        self._params[4] = self._operation(operation)
        self._write(queue)

    def set_sampling(self, *, offset=(0.0, 0.0), scale=(1.0, 1.0), queue=None) -> None:
        """Sample source cell ``floor(offset + (i + 0.5) * scale)`` per axis for
        output cell ``i`` from the next encoding on; writes as
        :meth:`set_operation` does, never recompiles."""
        values = np.asarray([*offset, *scale], np.float64)
        if values.shape != (4,) or not np.isfinite(values).all():
            raise GraphValidationError(f"{self._owner} sampling needs two finite offsets and two finite scales "
                                       f"(got offset {offset!r}, scale {scale!r})")
        self._params[:4].view(np.float32)[:] = values
        self._write(queue)

    def _write(self, queue) -> None:
        if self.params_buffer is None:
            return  # not compiled yet: the compile callback uploads the parameters
        if is_destroyed(self.params_buffer):
            raise GraphStateError(f"{self._owner} parameters cannot change: the graph it was compiled into "
                                  "was destroyed")
        (queue or self._device.queue).write_buffer(self.params_buffer, 0, self._params[:8].tobytes())

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the statistic node; returns its IDs."""
        name, id = "GPUGridStatistic", self.id
        cells = self.grid_size[0] * self.grid_size[1]
        views = {}
        for role, fmt in (("counts", "uint32"), ("sums", "float32"), ("mins", "float32"), ("maxs", "float32"),
                          ("output", "float32"), ("output_counts", "uint32")):
            value = getattr(self, role)
            if value is None:
                continue
            kind, chunks = chunks_of(name, id, role, value, graph, formats=(fmt,))
            if kind != "data":
                raise GraphValidationError(f"{self._owner} {role} must be a GraphDataView (got a vector view)")
            if chunks[0].length < cells:
                raise GraphValidationError(f"{self._owner} {role} has {chunks[0].length} rows; the "
                                           f"{self.grid_size[0]} x {self.grid_size[1]} grid needs {cells}")
            views[role] = chunks[0]
        inputs, outputs = ("counts", "sums", "mins", "maxs"), [r for r in ("output", "output_counts") if r in views]
        refuse_overlaps(name, id, reads={r: (views[r],) for r in inputs},
                        writes={r: (views[r],) for r in outputs}, separate=True)
        w, h = self.grid_size
        with_counts = "output_counts" in views

        def compile_statistic(ctx):
            device = self._device = ctx.device
            code = wgsl("algorithms/shaders/grid_statistic.wgsl", output_counts=with_counts)
            kernel = ComputeKernel(device, code=code, constants={"CELLS": cells, "GRID_W": w, "GRID_H": h},
                                   label=ctx.node_id)
            self._params[8:12] = [ComputeKernel.element_offset(views[r], device) for r in inputs]
            self._params[12:14] = [ComputeKernel.element_offset(views[r], device) if r in views else 0
                                   for r in ("output", "output_counts")]
            self.params_buffer = ctx.own(device.create_buffer_with_data(
                label=f"{ctx.node_id}-params", data=self._params.tobytes(),
                usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST))
            bindings = {0: self.params_buffer, 1: views["counts"], 2: views["sums"], 3: views["mins"],
                        4: views["maxs"], 5: views["output"]}
            if with_counts:
                bindings[6] = views["output_counts"]
            groups = ceil_div(cells, WORKGROUP)
            return lambda compute_pass, frame: kernel.dispatch(compute_pass, frame, bindings=bindings,
                                                               workgroups=groups)

        resources = [(views[r], "storage-read") for r in inputs] + [(views[r], "storage-write") for r in outputs]
        self.node_ids = [graph.add_compute_node(id=id, resources=resources, compile=compile_statistic)]
        return self.node_ids
