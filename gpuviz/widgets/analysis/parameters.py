"""The view parameters of :class:`~gpuviz.widgets.DataAnalysis` on the host.

What the controls set (columns, bins, scale, edges, heatmap operation, value
range, heatmap bounds), validated, with the rules that tie them together: a
new x / y resets the bounds, a new value column resets the value range and
the histogram edges, a bin count replaces custom edges.

Defaults (decided here, once per column, from :class:`~.data.ColumnStats`
computed at upload): heatmap bounds are the 0.5 and 99.5 percentiles of the
finite x / y values, so a few outliers cannot push the rows into a corner
(``home_bounds(full=True)`` is the full finite extent); an integer column's
bounds end half a unit beyond its values, so its cells are centred on whole
numbers; the value range is the value column's full finite extent (no row
is hidden by default); the histogram scale is log for skewed positive data
(``ColumnStats.skewed``), else linear. Host-side only: the
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
        Histogram bins asked for and compiled (``1 <= bins <= max_bins``, checked by the caller).
    operation : str
        Initial heatmap statistic, one of :data:`OPERATIONS`.

    Attributes
    ----------
    columns : dict
    bins : int
        Histogram bins shown: ``len(edges) - 1``.
    regular_bins : int
        The bin count last asked for (constructor, :meth:`set_bins`): linear
        and log edges use it. Custom edges show their own count, and linear
        bins of an integer column may be fewer (whole values per bin, see
        :func:`~.data.histogram_edges`); the count comes back when custom
        edges give way to a new value column or scale.
    max_bins : int
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
        self.bins = self.regular_bins = bins
        self.max_bins, self.operation = max_bins, operation
        self.scale = self.default_scale(self.columns["value"])
        self.value_range = self.extent(self.columns["value"])
        self.bounds = self.home_bounds()
        self.group_enabled = np.ones(len(data.group_labels), bool)
        self._compute_edges()

    def extent(self, name) -> tuple:
        """The finite ``(lo, hi)`` of an uploaded column."""
        stats = self.data.stats[name]
        return (stats.lo, stats.hi)

    def default_scale(self, name) -> str:
        """``"log"`` for a skewed positive column (:attr:`ColumnStats.skewed`), else ``"linear"``."""
        return "log" if self.data.stats[name].skewed else "linear"

    def axis_extent(self, name, *, full: bool = False) -> tuple:
        """The default view of one position column: the robust percentiles of
        its finite values (:data:`~.data.ROBUST_PERCENTILES`), or with
        ``full`` its finite extent; an integer column's view ends half a
        unit beyond its extreme values (cell edges at ``k - 0.5``), a
        collapsed robust range falls back to the extent, and a constant
        column gets a pad. The ends are float32 values, rounded outward and
        at least one float32 step apart: where half a unit is below
        float32's resolution (a constant 30,000,001 or 1e30) the view is the
        neighbouring float32 values, which :meth:`set_bounds` accepts."""
        stats = self.data.stats[name]
        lo, hi = (stats.lo, stats.hi) if full else (stats.robust_lo, stats.robust_hi)
        if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
            lo, hi = stats.lo, stats.hi
        if stats.integer:
            lo, hi = lo - 0.5, hi + 0.5
        elif hi <= lo:
            pad = max(0.5, abs(lo) * 1e-3)
            lo, hi = lo - pad, hi + pad
        return _float32_span(lo, hi)

    def home_bounds(self, *, full: bool = False) -> tuple:
        """Default heatmap bounds: :meth:`axis_extent` of the x and y columns
        (robust percentiles; their finite extents with ``full``)."""
        (x0, x1), (y0, y1) = (self.axis_extent(self.columns[r], full=full) for r in ("x", "y"))
        return (x0, y0, x1, y1)

    def set_group_enabled(self, enabled) -> None:
        """Which groups every view keeps: one bool per group label (at least one True is not required)."""
        mask = np.asarray(enabled)
        if mask.shape != self.group_enabled.shape or mask.dtype != bool:
            raise GraphValidationError(f"DataAnalysis group mask needs {len(self.group_enabled)} booleans, one per "
                                       f"group (got {enabled!r})")
        self.group_enabled = mask.copy()

    def set_columns(self, *, x=None, y=None, value=None) -> None:
        """New column roles: a new x or y resets :attr:`bounds` home; a new value
        resets :attr:`value_range` to its extent and the scale to its default
        (:meth:`default_scale`: log bins for skewed positive data, else
        linear; custom edges are dropped)."""
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
            self.scale = self.default_scale(new["value"])
            self._compute_edges()

    def set_bins(self, bins) -> None:
        """``bins`` (1 to ``max_bins``) new edges of the current scale (custom
        becomes linear); integer columns may get fewer (see :attr:`regular_bins`)."""
        check_int("bins", bins, 1, self.max_bins)
        self.regular_bins = int(bins)
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
        """User edges (see :func:`~.data.check_edges`); the scale becomes
        ``"custom"`` (:attr:`regular_bins` is kept for the next linear or log edges)."""
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

    def grid_cells(self, grid_size) -> dict:
        """How the ``(w, h)`` heatmap cells cover the current bounds, per axis.

        An axis is ``"integer"`` when its column holds whole numbers only and
        the bounds show at most as many of them as the axis has cells: the
        grid primitives then bin one cell per value (cell ``c`` covers
        ``[a + c - 0.5, a + c + 0.5)`` from the whole number ``a`` nearest
        the lower bound) and each displayed cell shows the value cell under
        its centre, so every value spans an equal band of displayed cells,
        with no empty stripes between them. Otherwise the axis is
        ``"linear"``: displayed and binned cells are the same, equal-width
        over the bounds.

        Returns
        -------
        dict
            ``bounds`` (the grid primitives' ``(xmin, ymin, xmax, ymax)``),
            ``offset`` and ``scale`` (per axis: displayed cell ``i`` shows
            binned cell ``floor(offset + (i + 0.5) * scale)``, in float32 as
            the grid-select shader computes it) and ``binning``
            (``{"x": ..., "y": ...}``).
        """
        x0, y0, x1, y1 = self.bounds
        out = {"bounds": [], "offset": [], "scale": [], "binning": {}}
        for role, lo, hi, cells in (("x", x0, x1, grid_size[0]), ("y", y0, y1, grid_size[1])):
            start = np.floor(lo + 0.5) - 0.5  # the cell edge k - 0.5 at or below lo
            if self.data.stats[self.columns[role]].integer and hi - start <= cells:
                out["bounds"].append((start, start + cells))
                out["offset"].append(lo - start)
                out["scale"].append((hi - lo) / cells)
                out["binning"][role] = "integer"
            else:
                out["bounds"].append((lo, hi))
                out["offset"].append(0.0)
                out["scale"].append(1.0)
                out["binning"][role] = "linear"
        (a0, a1), (b0, b1) = out["bounds"]
        out["bounds"] = (a0, b0, a1, b1)
        return out

    def _compute_edges(self) -> None:
        """Linear or log edges of the current value column, bin count and scale."""
        self.edges, self.padded_edges = histogram_edges(self.data.stats[self.columns["value"]], self.regular_bins,
                                                        self.max_bins, self.scale)
        self.bins = len(self.edges) - 1


def _float32_span(lo: float, hi: float) -> tuple:
    """``(lo, hi)`` unchanged when they stay finite and ordered in float32;
    otherwise as float32 values rounded outward (clamped to float32's finite
    range), apart by at least one float32 step."""
    top = np.float32(np.finfo(np.float32).max)
    with np.errstate(over="ignore"):
        a, b = np.float32([lo, hi])
    if np.isfinite(a) and np.isfinite(b) and a < b:
        return (lo, hi)
    a, b = np.clip([a, b], -top, top)
    if float(a) > lo:  # (compared in float64: NumPy would compare a Python float with a float32 in float32)
        a = np.nextafter(a, -top)
    if float(b) < hi:
        b = np.nextafter(b, top)
    if not a < b:  # one value: a step either side of it (centred), or two below float32's largest
        a, b = np.nextafter(a, -top), np.nextafter(b, top)
        if not a < b:
            a = np.nextafter(a, -top)
    return (float(a), float(b))


def check_int(name, value, lo, hi) -> None:
    """GraphValidationError unless ``value`` is an integer (not a bool) in ``[lo, hi]``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not lo <= value <= hi:
        raise GraphValidationError(f"DataAnalysis {name} must be an integer from {lo} to {hi} (got {value!r})")


def check_operation(operation) -> None:
    """GraphValidationError unless ``operation`` is one of :data:`OPERATIONS`."""
    if operation not in OPERATIONS:
        raise GraphValidationError(f"DataAnalysis operation must be one of {', '.join(OPERATIONS)} "
                                   f"(got {operation!r})")
