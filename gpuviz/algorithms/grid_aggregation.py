"""GPUGridBinning and GPUGridAggregation: counts and float32 statistics of
points in a row-major two-dimensional grid.

Built on the keyed-aggregation engine of :mod:`.group_aggregation`: a cell
is the key of a row (``shaders/grid_keys.wgsl``).
"""

from __future__ import annotations

from ..graph import ComputeKernel
from ..graph.errors import GraphStateError, GraphValidationError
from ..graph.resources import GraphDataView
import numpy as np

from .group_aggregation import _edge_table, _KeyedAggregation, _finite_range, _param_view

__all__ = ["GPUGridBinning", "GPUGridAggregation"]

_GRID_NOTES = """
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
"""


def _grid_size(owner, grid_size):
    try:
        w, h = (int(v) for v in grid_size)
        ok = all(int(v) == v for v in grid_size) and w >= 1 and h >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise GraphValidationError(f"{owner} grid_size must be two positive integers (got {grid_size!r})")
    return w, h


def _bounds(owner, bounds, grid_size):
    """(parameter floats, None) for literal bounds: the bounds, then the
    column and row edge tables; (None, view) for GPU-resident bounds."""
    if isinstance(bounds, GraphDataView):
        return None, _param_view(owner, "bounds", bounds, 4)
    try:
        xmin, ymin, xmax, ymax = bounds
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} bounds must be (xmin, ymin, xmax, ymax) (got {bounds!r})") from None
    (x0, x1), (y0, y1) = _finite_range(owner, "bounds x", (xmin, xmax)), _finite_range(owner, "bounds y", (ymin, ymax))
    w, h = grid_size
    return np.concatenate([np.float32([x0, y0, x1, y1]), _edge_table(x0, x1, w), _edge_table(y0, y1, h)]), None


class _Grid(_KeyedAggregation):
    _snippet = "grid_keys.wgsl"
    _key_formats = ("float32x2",)
    _key_name = "positions"

    def _grid_setup(self, *, id, positions, weights, output, grid_size, bounds, operation, mask, filter_values,
                    filter_range, tuning):
        owner = f'{self._kind} "{id}"'
        self.grid_size = _grid_size(owner, grid_size)
        aux_floats, aux_view = _bounds(owner, bounds, self.grid_size)
        self._setup(id=id, keys=positions, values=weights, output=output,
                    key_count=self.grid_size[0] * self.grid_size[1], operation=operation, mask=mask,
                    filter_values=filter_values, filter_range=filter_range, tuning=tuning, aux_floats=aux_floats,
                    aux_view=aux_view)

    def _role_name(self, role):
        return "weights" if role == "values" else role

    def set_bounds(self, bounds, *, queue=None) -> None:
        """New ``(xmin, ymin, xmax, ymax)`` for the next encodings, without
        recompiling. Writes the parameter buffer with ``queue.write_buffer``
        (default: the graph device's queue); before ``add_to_graph`` it only
        records them."""
        if self._aux_view is not None:
            raise GraphStateError(f"{self._owner} has GPU-resident bounds: set_bounds does not apply")
        floats, _ = _bounds(self._owner, bounds, self.grid_size)
        self._write_aux(floats, queue)

    def _key_constants(self, device):
        offset = 0 if self._aux_view is None else ComputeKernel.element_offset(self._aux_view, device)
        return {"GRID_W": self.grid_size[0], "AUX_OFFSET": offset, "TABLE": int(self._aux_view is None)}


class GPUGridBinning(_Grid):
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
    -----""" + _GRID_NOTES + """
    Each encoding clears the output first; counts are exact. Small grids
    (``tuning.privatize_max_keys`` cells) count in workgroup memory first,
    larger ones with global atomics. Does not submit, map or read back.
    """

    _kind = "GPUGridBinning"

    def __init__(self, *, id, positions, output, grid_size, bounds, mask=None, filter_values=None,
                 filter_range=None, tuning=None):
        self._grid_setup(id=id, positions=positions, weights=None, output=output, grid_size=grid_size,
                         bounds=bounds, operation="count", mask=mask, filter_values=filter_values,
                         filter_range=filter_range, tuning=tuning)


class GPUGridAggregation(_Grid):
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
    mask, filter_values, filter_range, tuning :
        As in :class:`GPUGroupAggregation`.

    Notes
    -----""" + _GRID_NOTES + """
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
    ``"{id}-finalize"`` after every chunk. Does not submit, map or read back.
    """

    _kind = "GPUGridAggregation"

    def __init__(self, *, id, positions, weights, output, grid_size, bounds, operation="sum", mask=None,
                 filter_values=None, filter_range=None, tuning=None):
        if operation == "count":
            raise GraphValidationError(f'GPUGridAggregation "{id}" has no "count" operation: use GPUGridBinning')
        self._grid_setup(id=id, positions=positions, weights=weights, output=output, grid_size=grid_size,
                         bounds=bounds, operation=operation, mask=mask, filter_values=filter_values,
                         filter_range=filter_range, tuning=tuning)
