"""GPUGridBinning and GPUGridAggregation: counts and float32 statistics of
points in a row-major two-dimensional grid, on the keyed-aggregation engine
(:mod:`.keyed_aggregation`); a cell is the key of a row
(``shaders/grid_keys.wgsl``)."""

from __future__ import annotations

import numpy as np

from ..graph.checks import check_id
from ..errors import GraphStateError, GraphValidationError
from ..graph.resources import GraphDataView
from .bin_edges import edge_table, finite_range
from .keyed_aggregation import KeyedAggregation, KeySpec, param_view

__all__ = ["GPUGridBinning", "GPUGridAggregation"]


def check_grid_size(owner, grid_size) -> tuple:
    """``(w, h)`` of a grid of at least one cell, else GraphValidationError
    naming ``owner``; never rounds."""
    try:
        w, h = (int(v) for v in grid_size)
        ok = all(int(v) == v for v in grid_size) and w >= 1 and h >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise GraphValidationError(f"{owner} grid_size must be two positive integers (got {grid_size!r})")
    return w, h


def _bounds(owner, bounds, grid_size):
    """The key parameters: for literal bounds the bounds, then the column
    and row edge tables (float32); GPU-resident bounds: their view."""
    if isinstance(bounds, GraphDataView):
        return param_view(owner, "bounds", bounds, 4)
    try:
        xmin, ymin, xmax, ymax = bounds
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} bounds must be (xmin, ymin, xmax, ymax) (got {bounds!r})") from None
    (x0, x1), (y0, y1) = finite_range(owner, "bounds x", (xmin, xmax)), finite_range(owner, "bounds y", (ymin, ymax))
    w, h = grid_size
    return np.concatenate([np.float32([x0, y0, x1, y1]), edge_table(x0, x1, w), edge_table(y0, y1, h)])


class _GridAggregation(KeyedAggregation):
    """What GPUGridBinning and GPUGridAggregation share: the grid, its bounds
    and :meth:`set_bounds`."""

    def __init__(self, *, id, positions, weights, output, grid_size, bounds, operation, mask, filter_values,
                 filter_range, tuning):
        owner = f'{type(self).__name__} "{check_id(type(self).__name__, id)}"'
        self.grid_size = check_grid_size(owner, grid_size)
        parameters = _bounds(owner, bounds, self.grid_size)
        spec = KeySpec(template="algorithms/shaders/grid_keys.wgsl", keys_name="positions",
                       key_formats=("float32x2",), values_name="weights",
                       constants={"GRID_W": self.grid_size[0], "TABLE": int(not isinstance(parameters, GraphDataView))})
        super().__init__(id=id, spec=spec, keys=positions, values=weights, output=output,
                         key_count=self.grid_size[0] * self.grid_size[1], operation=operation, mask=mask,
                         filter_values=filter_values, filter_range=filter_range, tuning=tuning, parameters=parameters)

    def set_bounds(self, bounds, *, queue=None) -> None:
        """New ``(xmin, ymin, xmax, ymax)`` for the next encodings, without
        recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue) once the graph is compiled; before that it only
        records them. Submits and reads back nothing.
        """
        if self._parameters_view is not None:
            raise GraphStateError(f"{self._owner} has GPU-resident bounds: set_bounds does not apply")
        self._write_parameters(_bounds(self._owner, bounds, self.grid_size), queue)


class GPUGridBinning(_GridAggregation):
    """Count float32x2 points per cell of a ``w x h`` grid (uint32 output).

    Parameters
    ----------
    id : str
        Prefix of node and resource IDs.
    positions : GraphDataView or GraphVectorView
        ``float32x2`` points (packed or strided; vectors read in place).
    output : GraphDataView
        Packed ``uint32``, ``w * h`` rows, row-major.
    grid_size : (int, int)
        ``(w, h)``; compiled in.
    bounds : (xmin, ymin, xmax, ymax) or GraphDataView
        A tuple is a parameter (:meth:`set_bounds`, no recompilation); a view
        of four packed float32 is read on the GPU each encoding (invalid
        bounds give an empty grid).
    mask, filter_values, filter_range, tuning :
        As in :class:`GPUGroupAggregation`.

    Notes
    -----
    Cells: with ``bounds = (xmin, ymin, xmax, ymax)`` and ``grid_size = (w, h)``,
    column ``i`` covers ``[xmin + i * (xmax - xmin) / w, xmin + (i + 1) * ...)``,
    row ``j`` likewise in y, and output row ``j * w + i`` holds the cell
    (row-major, ``j = 0`` at ``ymin``), in real arithmetic. The maximum
    coordinate belongs to the last column / row; a degenerate axis
    (``min == max``) maps matching coordinates to column / row 0. Rows with a
    non-finite or out-of-bounds position are ignored. Literal bounds are
    exact on any adapter (the primitive stores the column and row edges
    rounded up to float32 and corrects each float32 estimate against them);
    GPU-resident bounds use the float32 estimate only, so a coordinate within
    a rounding step of an interior cell edge may land in either neighbour.

    Each encoding clears the output first; counts are exact. Small grids
    (``tuning.privatize_max_keys`` cells) count in workgroup memory first,
    larger ones with global atomics.

    Does not submit, map or read back; :meth:`set_bounds` and
    :meth:`set_filter_range` write the parameter buffer with
    ``queue.write_buffer`` and nothing else.
    """

    def __init__(self, *, id, positions, output, grid_size, bounds, mask=None, filter_values=None,
                 filter_range=None, tuning=None):
        super().__init__(id=id, positions=positions, weights=None, output=output, grid_size=grid_size,
                         bounds=bounds, operation="count", mask=mask, filter_values=filter_values,
                         filter_range=filter_range, tuning=tuning)


class GPUGridAggregation(_GridAggregation):
    """Sum, min, max or mean of float32 weights per cell of a ``w x h`` grid.

    Parameters
    ----------
    id : str
        Prefix of node and resource IDs.
    positions : GraphDataView or GraphVectorView
        ``float32x2`` points.
    weights : GraphDataView or GraphVectorView
        ``float32``, aligned with ``positions`` (same chunk lengths).
    output : GraphDataView
        Packed ``float32``, ``w * h`` rows, row-major.
    grid_size : (int, int)
    bounds : (xmin, ymin, xmax, ymax) or GraphDataView
        As in :class:`GPUGridBinning` (:meth:`set_bounds`).
    operation : {"sum", "min", "max", "mean"}
        Counts are :class:`GPUGridBinning`'s.
    mask, filter_values, filter_range, tuning :
        As in :class:`GPUGroupAggregation`.

    Notes
    -----
    Cells, bounds and ignored positions are as in :class:`GPUGridBinning`:
    row-major ``j * w + i`` from ``(xmin, ymin)``, the maximum coordinate in
    the last column / row, literal bounds exact and GPU-resident ones within
    a float32 rounding step of interior edges.

    Rows with a non-finite weight are ignored too. Empty cells hold +0.0 for
    sum and NaN for min, max and mean. Sum and mean add with native float
    atomics where the device has them (``tuning.float_atomics``; one
    ``atomicAdd`` per row on large grids), else with a compare-exchange loop
    on float32 bits: the accumulation order, hence the rounding, is not
    deterministic between encodings (native adds may also flush subnormal
    values to zero). Sum keeps no counts. Min and max use an
    order-preserving uint32 encoding with atomicMin / atomicMax and are
    deterministic (min prefers -0, max +0). Mean keeps a graph-owned
    transient uint32 count per cell (``"{id}-counts"``) and divides in
    ``"{id}-finalize"`` after every chunk.

    Does not submit, map or read back; :meth:`set_bounds` and
    :meth:`set_filter_range` write the parameter buffer with
    ``queue.write_buffer`` and nothing else.
    """

    def __init__(self, *, id, positions, weights, output, grid_size, bounds, operation="sum", mask=None,
                 filter_values=None, filter_range=None, tuning=None):
        if operation == "count":
            raise GraphValidationError(f'GPUGridAggregation "{id}" has no "count" operation: use GPUGridBinning')
        super().__init__(id=id, positions=positions, weights=weights, output=output, grid_size=grid_size,
                         bounds=bounds, operation=operation, mask=mask, filter_values=filter_values,
                         filter_range=filter_range, tuning=tuning)
