"""The view parameters of :class:`~gpuviz.widgets.DataAnalysis` on the host.

What the controls set (columns, bins, scale, edges, heatmap operation, value
range, heatmap bounds), validated, with the rules that tie them together: a
new x / y resets the bounds, a new value column resets the value range and
the histogram edges, a bin count replaces custom edges. Host-side only: the
graph takes these values with
:meth:`~gpuviz.widgets.analysis.graph.DataAnalysisGraph.write_parameters`.
"""

from __future__ import annotations

import numpy as np

from ...errors import GraphValidationError
from .data import check_edges, histogram_edges, pad_edges
from .graph import OPERATIONS

__all__ = ["AnalysisParameters", "check_int", "check_operation"]


class AnalysisParameters:
    """Validated view parameters of one DataAnalysis, and their defaults.

    Parameters
    ----------
    data : AnalysisData
        Its column statistics give the defaults (extents) and the log-bin floor.
    columns : dict
        Initial ``{"x": name, "y": name, "value": name}``.
    bins, max_bins : int
        Histogram bins shown and compiled (``1 <= bins <= max_bins``, checked by the caller).
    operation : str
        Initial heatmap statistic, one of :data:`OPERATIONS`.

    Attributes
    ----------
    columns : dict
    bins, max_bins : int
    scale : {"linear", "log", "custom"}
    operation : str
    value_range : (float, float)
    bounds : (float, float, float, float)
    edges : numpy.ndarray
        The ``bins + 1`` real float32 edges.
    padded_edges : numpy.ndarray
        The ``max_bins + 1`` edges the compiled histogram reads.

    Notes
    -----
    Setters raise GraphValidationError (a ValueError) and leave the
    parameters as they were for a refused value. Does not touch the GPU.
    """

    def __init__(self, data, *, columns: dict, bins: int, max_bins: int, operation: str):
        self.data = data
        self.columns = dict(columns)
        self.bins, self.max_bins, self.scale, self.operation = bins, max_bins, "linear", operation
        self.value_range = self.extent(self.columns["value"])
        self.bounds = self.home_bounds()
        self.edges, self.padded_edges = histogram_edges(data.stats[self.columns["value"]], bins, max_bins, "linear")

    def extent(self, name) -> tuple:
        """The finite ``(lo, hi)`` of an uploaded column."""
        stats = self.data.stats[name]
        return (stats.lo, stats.hi)

    def home_bounds(self) -> tuple:
        """The x / y columns' extents (padded when a column is constant)."""
        (x0, x1), (y0, y1) = self.extent(self.columns["x"]), self.extent(self.columns["y"])
        pad_x = 0.0 if x1 > x0 else max(0.5, abs(x0) * 1e-3)
        pad_y = 0.0 if y1 > y0 else max(0.5, abs(y0) * 1e-3)
        return (x0 - pad_x, y0 - pad_y, x1 + pad_x, y1 + pad_y)

    def set_columns(self, *, x=None, y=None, value=None) -> None:
        """New column roles: a new x or y resets :attr:`bounds` home; a new value
        resets :attr:`value_range` and the edges to its extent (custom edges,
        and log bins of a column without positive values, become linear)."""
        new = dict(self.columns)
        for role, name in (("x", x), ("y", y), ("value", value)):
            if name is None:
                continue
            if name not in self.data.stats:
                raise GraphValidationError(f'DataAnalysis {role}= column "{name}" is not an uploaded numeric column '
                                           f"(columns: {', '.join(self.data.columns)})")
            new[role] = name
        old, self.columns = self.columns, new
        if (new["x"], new["y"]) != (old["x"], old["y"]):
            self.bounds = self.home_bounds()
        if new["value"] != old["value"]:
            self.value_range = self.extent(new["value"])
            no_log = self.scale == "log" and self.data.stats[new["value"]].positive_lo is None
            if self.scale == "custom" or no_log:
                self.scale = "linear"
            self._compute_edges()

    def set_bins(self, bins) -> None:
        """``bins`` (1 to ``max_bins``) new edges of the current scale (custom becomes linear)."""
        check_int("bins", bins, 1, self.max_bins)
        self.bins = int(bins)
        if self.scale == "custom":
            self.scale = "linear"
        self._compute_edges()

    def set_scale(self, scale) -> None:
        """``"linear"`` or ``"log"`` edges (log needs a positive value in the column)."""
        if scale not in ("linear", "log"):
            raise GraphValidationError(f'DataAnalysis scale must be "linear" or "log" (got {scale!r})')
        previous, self.scale = self.scale, scale
        try:
            self._compute_edges()
        except GraphValidationError:
            self.scale = previous
            raise

    def set_edges(self, edges) -> None:
        """User edges (see :func:`~.data.check_edges`); the scale becomes ``"custom"``."""
        real = check_edges(edges, self.max_bins)
        self.padded_edges = pad_edges(real, self.max_bins)
        self.bins, self.scale, self.edges = len(real) - 1, "custom", real

    def set_operation(self, operation) -> None:
        """The heatmap statistic, one of :data:`OPERATIONS`."""
        check_operation(operation)
        self.operation = operation

    def set_value_range(self, value_range) -> None:
        """``(lo, hi)`` with ``lo <= hi``, inclusive."""
        try:
            lo, hi = (float(v) for v in value_range)
        except (TypeError, ValueError):
            raise GraphValidationError(f"DataAnalysis value range needs two numbers (got {value_range!r})") from None
        if not lo <= hi:
            raise GraphValidationError(f"DataAnalysis value range needs lo <= hi (got {lo}, {hi})")
        self.value_range = (lo, hi)

    def set_bounds(self, bounds) -> None:
        """``(xmin, ymin, xmax, ymax)``, finite in float32 with ``xmin < xmax`` and ``ymin < ymax``."""
        try:
            x0, y0, x1, y1 = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise GraphValidationError(f"DataAnalysis bounds need four numbers (got {bounds!r})") from None
        with np.errstate(over="ignore", invalid="ignore"):
            b32 = np.array([x0, y0, x1, y1], np.float32)
            ok = np.isfinite(b32).all() and np.isfinite(b32[2:] - b32[:2]).all() and (b32[:2] < b32[2:]).all()
        if not ok:
            raise GraphValidationError(f"DataAnalysis bounds need finite float32 xmin < xmax and ymin < ymax "
                                       f"(got {bounds!r})")
        self.bounds = (x0, y0, x1, y1)

    def _compute_edges(self) -> None:
        """Linear or log edges of the current value column, bin count and scale."""
        self.edges, self.padded_edges = histogram_edges(self.data.stats[self.columns["value"]], self.bins,
                                                        self.max_bins, self.scale)


def check_int(name, value, lo, hi) -> None:
    """GraphValidationError unless ``value`` is an integer (not a bool) in ``[lo, hi]``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not lo <= value <= hi:
        raise GraphValidationError(f"DataAnalysis {name} must be an integer from {lo} to {hi} (got {value!r})")


def check_operation(operation) -> None:
    """GraphValidationError unless ``operation`` is one of :data:`OPERATIONS`."""
    if operation not in OPERATIONS:
        raise GraphValidationError(f"DataAnalysis operation must be one of {', '.join(OPERATIONS)} "
                                   f"(got {operation!r})")
