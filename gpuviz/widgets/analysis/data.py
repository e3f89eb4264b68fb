"""Arrow ingestion for :class:`~gpuviz.widgets.DataAnalysis`: validation, one
upload of float32 columns and dense uint32 group codes, host-side column
statistics, and the histogram edge arithmetic.

Private to the widget. Everything here runs once at construction except
:func:`histogram_edges`, :func:`check_edges` and :func:`pad_edges`, which turn
a bin count and a scale (or user edges) into literal edges for
``GPUHistogram.set_edges``. Nothing here touches the GPU after the upload.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...arrow import table_to_gpu
from ...errors import GraphTypeError, GraphValidationError
from .lookup import NO_MATCH, encode_lookup, parse_lookup, run_lookup

__all__ = ["AnalysisData", "ColumnStats", "ROBUST_PERCENTILES", "SKEW_THRESHOLD", "prepare_table", "robust_range",
           "to_arrow_table", "histogram_edges", "check_edges", "pad_edges", "MAX_GROUPS"]

#: Most distinct values a group column may have (one bar each).
MAX_GROUPS = 256
_CODES = "__gpuviz_group_codes__"  # lengthened with "_" while the user's table has a column of that name
_F32_MAX = float(np.finfo(np.float32).max)


#: Percentiles of the finite values that give a column's default view (robust to outliers).
ROBUST_PERCENTILES = (0.5, 99.5)
#: Moment skewness from which positive data defaults to log histogram bins.
SKEW_THRESHOLD = 1.0
_SKEW_SAMPLE = 1 << 20  # finite values the skew test looks at, at most (evenly spaced)


@dataclass(frozen=True)
class ColumnStats:
    """Facts about one uploaded float32 column, computed on the host at upload.

    The column passes through host memory once on its way to the GPU (Arrow
    to float32), and it is never uploaded again, so these are computed there,
    once, from the very float32 values the GPU holds: no GPU pass or
    readback at construction, and nothing to recompute per frame.

    Attributes
    ----------
    lo, hi : float
        Smallest and largest finite value (float32-exact).
    positive_lo : float or None
        Smallest finite value > 0 (the lower end of log bins), None when none.
    finite : int
        Number of finite values.
    robust_lo, robust_hi : float
        The :data:`ROBUST_PERCENTILES` of the finite values (numpy's
        ``"lower"`` and ``"higher"`` methods: both are values of the column).
    integer : bool
        Every finite value is a whole number (counts, hours, minutes...).
    skewed : bool
        Every finite value is > 0, their moment skewness is at least
        :data:`SKEW_THRESHOLD` and their logarithms are less skewed than
        they are (log-normal-like data): the histogram defaults to log bins.
    overflow : int
        Values that are finite in the table but beyond float32's range
        (about ±3.4e38): infinite once uploaded, so excluded from every view
        like infinities; the widget's status line counts them.
    """

    lo: float
    hi: float
    positive_lo: float | None
    finite: int
    robust_lo: float = float("nan")
    robust_hi: float = float("nan")
    integer: bool = False
    skewed: bool = False
    overflow: int = 0


@dataclass
class AnalysisData:
    """What the widget uploaded: the GPU table and its host-side facts.

    Attributes
    ----------
    table : GPUTable
        One float32 column per usable numeric column (nulls became NaN) and,
        with a group column, its uint32 codes under :attr:`codes_column`; one
        chunk per Arrow record batch.
    stats : dict
        Column name -> :class:`ColumnStats` for every numeric column offered.
    group : str or None
        The group column's name.
    group_labels : list of str
        Label of each group code (sorted distinct values); nulls map to code
        ``len(group_labels)`` and are counted in the overflow word only.
    chunk_lengths : tuple of int
        Rows per record batch.
    codes_column : str
        The GPU table's name for the group codes: a name no column of the
        user's table has, and never offered as a column.
    lookup : LookupResult or None
        With ``lookup=``: what the GPU join found (the group column is then
        a column of the dimension table; its labels end with
        :data:`~gpuviz.widgets.analysis.lookup.NO_MATCH`).
    """

    table: object
    stats: dict
    group: str | None
    group_labels: list
    chunk_lengths: tuple
    codes_column: str = _CODES
    lookup: object = None

    @property
    def columns(self) -> list:
        """Numeric columns the x / y / value dropdowns offer."""
        return list(self.stats)

    @property
    def num_rows(self) -> int:
        return sum(self.chunk_lengths)


def to_arrow_table(obj) -> pa.Table:
    """A pyarrow Table from a Table, RecordBatch, pandas or polars DataFrame
    (or any object exporting the Arrow C stream interface)."""
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    if module == "polars" and hasattr(obj, "to_arrow"):
        out = obj.to_arrow()
        return pa.Table.from_batches([out]) if isinstance(out, pa.RecordBatch) else out
    if hasattr(obj, "__arrow_c_stream__"):
        return pa.table(obj)
    raise GraphTypeError(f"DataAnalysis expects a pyarrow Table or RecordBatch, or a pandas / polars DataFrame "
                    f"(got {type(obj).__name__})")


def _is_numeric(dtype) -> bool:
    return pa.types.is_integer(dtype) or pa.types.is_floating(dtype) or pa.types.is_boolean(dtype)


def _skewness(values: np.ndarray) -> float:
    """Moment skewness (float64; 0 for constant values)."""
    centred = values - values.mean()
    squared = centred * centred  # products, not ** 3: numpy's power is far slower
    var = float(np.mean(squared))
    return float(np.mean(squared * centred) / var ** 1.5) if var > 0 else 0.0


def robust_range(finite: np.ndarray) -> tuple:
    """The :data:`ROBUST_PERCENTILES` of ``finite`` (a non-empty array of
    finite values) as numpy's ``percentile(..., method="lower")`` and
    ``method="higher"`` give them, from one ``np.partition``: both are
    values of the array. Does not check finiteness."""
    n = finite.size
    k_lo = int(np.floor(ROBUST_PERCENTILES[0] / 100 * (n - 1)))
    k_hi = int(np.ceil(ROBUST_PERCENTILES[1] / 100 * (n - 1)))
    ranked = np.partition(finite, (k_lo, k_hi))
    return float(ranked[k_lo]), float(ranked[k_hi])


def _column_stats(column: pa.ChunkedArray, *, integer_type: bool = False, overflow: int = 0) -> ColumnStats:
    """The :class:`ColumnStats` of one float32 column: extent, robust
    percentiles (one ``np.partition`` of the finite values for both),
    integer-ness (known from an integer Arrow type, else checked on every
    value) and skew (moments of at most :data:`_SKEW_SAMPLE` evenly spaced
    finite values: a default's decision, not a statistic anyone reads)."""
    values = column.to_numpy()
    finite = values[np.isfinite(values)]
    n = int(finite.size)
    if n == 0:
        return ColumnStats(float("nan"), float("nan"), None, 0, overflow=overflow)
    lo, hi = float(finite.min()), float(finite.max())
    robust_lo, robust_hi = robust_range(finite)
    sample = finite[::max(1, n // _SKEW_SAMPLE)]
    integer = integer_type or bool(np.array_equal(np.floor(sample), sample)
                                   and np.array_equal(np.floor(finite), finite))
    skewed = False
    if lo > 0 and hi > lo:
        as64 = sample.astype(np.float64)
        skew = _skewness(as64)
        skewed = skew >= SKEW_THRESHOLD and abs(_skewness(np.log(as64))) < skew
    if lo > 0:
        positive_lo = lo
    else:
        positive_lo = float(np.min(finite, where=finite > 0, initial=np.inf)) if hi > 0 else None
    return ColumnStats(lo, hi, positive_lo, n, robust_lo=robust_lo, robust_hi=robust_hi, integer=integer,
                       skewed=bool(skewed), overflow=overflow)


def _as_float32(column: pa.ChunkedArray) -> tuple:
    """float32 with nulls as NaN, chunk for chunk (64-bit values are rounded),
    and the number of finite values that became infinite (beyond float32's
    range; only wider floats have them)."""
    if pa.types.is_boolean(column.type):
        column = pc.cast(column, pa.uint8())
    out = pc.cast(column, pa.float32(), safe=False)
    overflow = 0
    if pa.types.is_floating(column.type) and column.type.bit_width > 32:
        overflow = (pc.sum(pc.is_inf(out)).as_py() or 0) - (pc.sum(pc.is_inf(column)).as_py() or 0)
    return (pc.fill_null(out, pa.scalar(float("nan"), pa.float32())) if out.null_count else out), int(overflow)


def _group_codes(column: pa.ChunkedArray, name: str, *, reserved: int = 0) -> tuple:
    """Dense uint32 codes (sorted distinct values; null -> one past the last) and labels;
    ``reserved`` groups more are refused past :data:`MAX_GROUPS` too."""
    dtype = column.type
    if pa.types.is_dictionary(dtype):
        column = pc.cast(column, dtype.value_type)
        dtype = dtype.value_type
    if not (pa.types.is_integer(dtype) or pa.types.is_boolean(dtype) or pa.types.is_string(dtype)
            or pa.types.is_large_string(dtype)):
        raise GraphValidationError(
            f'DataAnalysis group column "{name}" has type {dtype}; a group column must hold integers, '
            f"booleans, strings or a dictionary of those")
    uniques = pc.unique(column).drop_null()
    if len(uniques) == 0:
        raise GraphValidationError(f'DataAnalysis group column "{name}" has no non-null values')
    if len(uniques) + reserved > MAX_GROUPS:
        raise GraphValidationError(
            f'DataAnalysis group column "{name}" has {len(uniques)} distinct values; at most '
            f"{MAX_GROUPS - reserved} groups are drawn (bin or recode it first)")
    uniques = uniques.take(pc.array_sort_indices(uniques))
    codes = pc.index_in(column, value_set=uniques)
    codes = pc.cast(pc.fill_null(codes, len(uniques)), pa.uint32())
    return codes, [str(v) for v in uniques.to_pylist()]


def prepare_table(device, obj, *, x, y, value, group=None, lookup=None, max_chunk_rows=None) -> AnalysisData:
    """Validate ``obj`` for the widget and upload it once.

    With ``lookup`` (see :class:`~gpuviz.widgets.DataAnalysis`), the group
    codes are uploaded as zeros and written on the GPU by a join with the
    dimension table (:func:`.lookup.run_lookup`), once.

    Raises GraphValidationError (a ValueError) naming the column and the
    available ones for a missing, duplicated, non-numeric or all-NaN
    x / y / value column, a missing or duplicated or unusable group column,
    or an empty table; nothing is uploaded then. Numeric columns without any
    finite value, and other columns whose name appears more than once, are
    left out of the dropdowns.
    """
    table = to_arrow_table(obj)
    names = table.column_names
    if table.num_rows == 0:
        raise GraphValidationError(f"DataAnalysis got an empty table (0 rows; columns: {', '.join(names) or 'none'})")
    repeats = {n: names.count(n) for n in set(names) if names.count(n) > 1}
    types = {field.name: field.type for field in table.schema if field.name not in repeats}
    numeric = [n for n in names if n in types and _is_numeric(types[n])]
    spec, group = parse_lookup(lookup, group=group, names=names, to_table=to_arrow_table)
    for role, name in (("x", x), ("y", y), ("value", value), ("group", group)):
        if role == "group" and (name is None or spec is not None):
            continue
        if not isinstance(name, str) or name not in names:
            raise GraphValidationError(
                f'DataAnalysis {role}= column "{name}" is not in the table (columns: {", ".join(names)})')
        if name in repeats:
            raise GraphValidationError(
                f'DataAnalysis {role}= column "{name}" appears {repeats[name]} times in the table; '
                f"rename the duplicates first")
        if role != "group" and name not in numeric:
            raise GraphValidationError(
                f'DataAnalysis {role}= column "{name}" has type {types[name]}, not a number '
                f"(numeric columns: {', '.join(numeric) or 'none'})")

    # One chunk layout for every column: record batches, each small enough for one storage binding.
    batches = [b for b in table.to_batches(max_chunksize=max_chunk_rows) if b.num_rows]
    table = pa.Table.from_batches(batches, schema=table.schema)
    columns, stats = {}, {}
    for name in numeric:
        dtype = types[name]
        column, overflow = _as_float32(table.column(name))
        column_stats = _column_stats(column, integer_type=pa.types.is_integer(dtype) or pa.types.is_boolean(dtype),
                                     overflow=overflow)
        if column_stats.finite:
            columns[name], stats[name] = column, column_stats
        elif name in (x, y, value):
            what = (f"{table.num_rows} rows: {overflow} finite beyond float32's range ±{_F32_MAX:.4g}, the rest "
                    f"NaN, null or infinity" if overflow else f"{table.num_rows} rows of NaN, null or infinity")
            raise GraphValidationError(f'DataAnalysis column "{name}" has no finite values ({what}); '
                                       f"pick another column")
    labels, codes = [], _CODES
    lengths = tuple(b.num_rows for b in batches)
    if group is not None:
        while codes in names:  # internal names never shadow (or get shadowed by) a user column
            codes += "_"
        if spec is None:
            columns[codes], labels = _group_codes(table.column(group), group)
        else:  # written on the GPU below
            fact_words, dimension_words = encode_lookup(spec, table.column(spec.fact_key))
            dimension_codes, labels = _group_codes(spec.dimension.column(group), group, reserved=1)
            dimension_codes = dimension_codes.to_numpy(zero_copy_only=False).astype(np.uint32)
            dimension_codes[dimension_codes == len(labels)] = len(labels) + 1  # null after "(no match)"
            labels.append(NO_MATCH)
            columns[codes] = pa.chunked_array([np.zeros(n, np.uint32) for n in lengths], type=pa.uint32())
    gpu_table = table_to_gpu(device, pa.table(columns))
    data = AnalysisData(table=gpu_table, stats=stats, group=group, group_labels=labels, chunk_lengths=lengths,
                        codes_column=codes)
    if spec is not None:
        try:
            data.lookup = run_lookup(device, spec, fact_words=fact_words, chunk_lengths=lengths,
                                     dimension_words=dimension_words, dimension_codes=dimension_codes,
                                     codes=gpu_table.column(codes), no_match=len(labels) - 1)
        except BaseException:
            gpu_table.destroy()
            raise
    return data


def histogram_edges(stats: ColumnStats, bins: int, max_bins: int, scale: str) -> tuple:
    """Literal edges for a histogram compiled with ``max_bins`` bins showing at most ``bins``.

    Returns ``(real, padded)``: the float32 edges over the column's finite
    extent (equal-width for ``"linear"``, geometric from the smallest
    positive value for ``"log"``), and the ``max_bins + 1`` edges handed to
    the GPU. Linear bins of an integer column (:attr:`ColumnStats.integer`,
    values within ±2**23, where half-integers are exact in float32) hold a
    whole number of values each, the fewest per bin that gives at most
    ``bins`` bins, with edges halfway between whole numbers: hours 0..23 get
    24 bins of one hour, not 48 of which every other is empty. Otherwise
    there are ``bins + 1`` real edges. In ``padded`` the real upper edge
    ``hi`` is nudged to the next float32 above it, so that ``hi`` (excluded
    from ``[e_i, e_i+1)`` once it is no longer the last edge) still lands in
    the last real bin; the unused top edges follow it one float32 step
    apart, so the padding bins cover ``(hi, hi + a few ulp]``, where no value
    of the column lies. With ``max_bins`` real bins the two arrays are equal.
    """
    lo, hi = stats.lo, stats.hi
    per_bin = math.ceil((hi - lo + 1) / bins) if scale == "linear" and stats.integer else 0
    if per_bin and max(abs(lo), abs(hi)) + per_bin < 2 ** 23:
        real = (lo - 0.5 + per_bin * np.arange(math.ceil((hi - lo + 1) / per_bin) + 1)).astype(np.float32)
        return real, pad_edges(real, max_bins)
    if scale == "log":
        if stats.positive_lo is None:
            raise GraphValidationError("DataAnalysis log bins need positive values (the value column has none)")
        lo, hi = stats.positive_lo, stats.hi
        if hi <= lo:
            lo, hi = lo / 2, hi * 2
        real = np.geomspace(lo, hi, bins + 1)
    else:
        if hi <= lo:
            pad = max(0.5, abs(lo) * 1e-3)
            lo, hi = lo - pad, hi + pad
        real = np.linspace(lo, hi, bins + 1)
    real = np.clip(real, -_F32_MAX, _F32_MAX).astype(np.float32)
    real[0], real[-1] = np.float32(lo), np.float32(hi)
    up = np.float32(np.inf)
    for i in range(1, len(real)):  # float32 rounding may merge neighbours: keep them strictly increasing
        if real[i] <= real[i - 1]:
            real[i] = np.nextafter(real[i - 1], up)
    return real, pad_edges(real, max_bins)


def check_edges(edges, max_bins: int) -> np.ndarray:
    """User-given irregular edges as float32: 2 to ``max_bins + 1`` finite,
    strictly increasing values (GraphValidationError otherwise)."""
    try:
        values = np.asarray(edges, np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise GraphValidationError(f"DataAnalysis edges must be numbers (got {edges!r})") from None
    if not 2 <= len(values) <= max_bins + 1:
        raise GraphValidationError(f"DataAnalysis needs 2 to {max_bins + 1} edges (max_bins={max_bins}; "
                                   f"got {len(values)})")
    with np.errstate(over="ignore"):
        real = values.astype(np.float32)
    if not np.isfinite(real).all() or (np.diff(real) <= 0).any():
        raise GraphValidationError(f"DataAnalysis edges must be finite and strictly increasing in float32 "
                                   f"(got {values.tolist()})")
    return real


def pad_edges(real: np.ndarray, max_bins: int) -> np.ndarray:
    """``real`` (``bins + 1`` float32 edges) as the ``max_bins + 1`` edges of
    the compiled histogram; see :func:`histogram_edges`."""
    bins = len(real) - 1
    padded = np.empty(max_bins + 1, np.float32)
    padded[:bins + 1] = real
    edge, up = real[-1], np.float32(np.inf)
    for i in range(bins, max_bins + 1) if bins < max_bins else ():
        edge = np.nextafter(edge, up)
        padded[i] = edge
    if not np.isfinite(padded).all():
        raise GraphValidationError(f"DataAnalysis histogram edges overflow float32 above {float(real[-1])!r}")
    return padded
