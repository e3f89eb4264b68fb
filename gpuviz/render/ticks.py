"""Axis ticks: where to put them and what to write there.

Pure Python and numpy, no GPU: :func:`nice_ticks` (linear, 1-2-5 steps),
:func:`log_ticks` (decades, 1-2-5 subdivisions), :func:`time_ticks`
(nanosecond axes with time-unit steps and an offset form) and
:func:`category_ticks` (category centres, thinned). Each returns a
:class:`Ticks`; the text layer draws its labels.

Positions are computed from integers (``i * m * 10**k`` rounded once), and
labels from the same integers as exact decimals, so neither carries float
noise. The step is chosen by counting the ticks each candidate step gives
and keeping the count closest to ``target`` (ties: more ticks).
"""

import math
import numbers
from bisect import bisect_left
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from ..errors import GraphTypeError, GraphValidationError
from .number_format import format_duration, format_durations, format_number, format_numbers

__all__ = ["Ticks", "nice_ticks", "log_ticks", "time_ticks", "category_ticks", "RESOLUTION", "LARGEST"]

#: A range narrower than this fraction of its magnitude is one value (float64
#: cannot place distinct, exactly labelled ticks inside it).
RESOLUTION = 1e-12
#: Largest magnitude accepted for a range bound (the span must stay finite).
LARGEST = 1e300


@dataclass(frozen=True, kw_only=True, eq=False)
class Ticks:
    """Tick positions and their labels for one axis.

    Attributes
    ----------
    positions : numpy.ndarray
        float64, strictly increasing, read-only; in the axis's data units
        (absolute, also in the offset form of :func:`time_ticks`). For
        category axes, category ``i`` spans ``[i, i + 1)`` and its tick is at
        ``i + 0.5``.
    labels : tuple of str
        One label per position, all in one format.
    step : float
        The spacing of the positions (data units; nanoseconds for time
        axes; categories for category axes; decades, in log10 units, for
        :func:`log_ticks`). 0 when there is a single tick for a single value.
    origin : float
        0, or the value that offset labels (``+250 µs``) are relative to.
    origin_label : str
        ``""``, or the origin's label (``12.003 s``) for the axis to show once.

    Notes
    -----
    A plain record: it does not map positions to pixels, draw anything, or
    measure text; reversed axes are the caller's mapping (positions are
    always increasing).
    """

    positions: np.ndarray
    labels: tuple
    step: float
    origin: float = 0.0
    origin_label: str = ""

    def __post_init__(self):
        positions = np.array(self.positions, dtype=np.float64).reshape(-1)
        positions.setflags(write=False)
        object.__setattr__(self, "positions", positions)
        object.__setattr__(self, "labels", tuple(self.labels))
        if len(self.labels) != len(positions):
            raise GraphValidationError(f"Ticks has {len(positions)} positions but {len(self.labels)} labels")

    def __len__(self):
        return len(self.labels)


def _bound(name, value, what):
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise GraphTypeError(f"{name} {what} {value!r} is not a real number (got {type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise GraphValidationError(f"{name} range bound {what}={value!r} is not finite")
    if abs(value) > LARGEST:
        raise GraphValidationError(f"{name} range bound {what}={value!r} is beyond +-{LARGEST:g}")
    return value


def _range(name, domain, target):
    try:
        lo, hi = domain
    except (TypeError, ValueError):
        raise GraphTypeError(f"{name} domain must be a (lo, hi) pair (got {domain!r})") from None
    lo, hi = _bound(name, lo, "lo"), _bound(name, hi, "hi")
    if not isinstance(target, numbers.Integral) or isinstance(target, bool):
        raise GraphTypeError(f"{name} target {target!r} is not an integer")
    if not 1 <= target <= 1000:
        raise GraphValidationError(f"{name} target must be in 1..1000 (got {target})")
    lo, hi = min(lo, hi), max(lo, hi)
    degenerate = hi - lo <= RESOLUTION * max(abs(lo), abs(hi)) or hi - lo < 1e-290
    return lo, hi, degenerate


def _value(n: int, k: int) -> float:
    """n * 10**k, correctly rounded to float64 (int / int division is)."""
    return float(n * 10**k) if k >= 0 else n / 10**-k


def _index_range(lo, hi, n, k, include_bounds):
    """First and last integer ``i`` with ``i * n * 10**k`` inside [lo, hi]
    (or the smallest run covering it)."""
    step = _value(n, k)

    def pos(i):
        return _value(i * n, k)

    if include_bounds:
        first, last = math.floor(lo / step), math.ceil(hi / step)
        while pos(first) > lo:
            first -= 1
        while pos(first + 1) <= lo:
            first += 1
        while pos(last) < hi:
            last += 1
        while pos(last - 1) >= hi:
            last -= 1
    else:
        first, last = math.ceil(lo / step), math.floor(hi / step)
        while pos(first) < lo:
            first += 1
        while pos(first - 1) >= lo:
            first -= 1
        while pos(last) > hi:
            last -= 1
        while pos(last + 1) <= hi:
            last += 1
    return first, last


def _pick(lo, hi, steps, target, include_bounds):
    """The (n, k, first, last) whose tick count is closest to ``target``."""
    best = None
    for n, k in steps:
        first, last = _index_range(lo, hi, n, k, include_bounds)
        count = last - first + 1
        key = (abs(count - target), -count)
        if best is None or key < best[0]:
            best = (key, (n, k, first, last))
    return best[1]


def _exponent(value: float) -> int:
    """floor(log10(value)) for value > 0, exactly."""
    return Decimal(repr(value)).adjusted()


def _single(value, label):
    return Ticks(positions=[value], labels=[label], step=0.0)


def nice_ticks(domain, *, target=5, include_bounds=False, si=True) -> Ticks:
    """Linear ticks at multiples of a 1-2-5 step (1, 2 or 5 times 10**k).

    Parameters
    ----------
    domain : (lo, hi) pair of real numbers
        The range, as ``domain=`` of :class:`GPUHistogram`; a reversed
        range gives the ticks of the sorted range.
    target : int
        The tick count to aim for (1..1000); the step whose count is
        closest wins, so counts stay within about [target / 2, 2 * target + 1].
    include_bounds : bool
        False: ticks lie inside [lo, hi]. True: the ticks cover it (the first
        at or below ``lo``, the last at or above ``hi``), for axes that
        extend to round numbers.
    si : bool
        Passed to :func:`format_numbers` (k, M, G... prefixes).

    Returns
    -------
    Ticks
        Positions, the step, and labels in one format (``0, 0.5, 1, 1.5``).

    Raises
    ------
    GraphTypeError
        ``domain`` is not a pair, a bound or ``target`` is not a real number
        / an integer.
    GraphValidationError
        A bound is NaN, infinite or beyond +-1e300; ``target`` outside 1..1000.

    Notes
    -----
    ``lo == hi`` (or a range narrower than :data:`RESOLUTION` of its
    magnitude, or than 1e-290) gives one tick at ``lo`` labelled by :func:`format_number`,
    with step 0. Does not pad the range, add minor ticks or an offset label.
    """
    lo, hi, degenerate = _range("nice_ticks", domain, target)
    if degenerate:
        return _single(lo, format_number(lo, si=si))
    k0 = _exponent((hi - lo) / target)
    n, k, first, last = _pick(lo, hi, [(m, k) for k in (k0 - 1, k0, k0 + 1) for m in (1, 2, 5)], target,
                              include_bounds)
    indices = range(first, last + 1)
    labels = format_numbers([Decimal(i * n).scaleb(k) for i in indices], step=Decimal(n).scaleb(k), si=si)
    return Ticks(positions=[_value(i * n, k) for i in indices], labels=labels, step=_value(n, k))


def log_ticks(domain, *, target=5) -> Ticks:
    """Ticks for a log axis: decades, with 2 and 5 between them when the
    range holds few decades.

    Parameters
    ----------
    domain : (lo, hi) pair of positive real numbers
        The range; a reversed range gives the ticks of the sorted range.
    target : int
        The tick count to aim for (1..1000).

    Returns
    -------
    Ticks
        With fewer than ``target`` decades in range and at most
        ``2 * target + 1`` of the values 1, 2, 5 x 10**j: those (e.g. 0.5, 1,
        2, 5, 10, 20); otherwise every decade, or every 2nd, 5th, 10th...
        so that at most ``2 * target + 1`` remain (``step`` is that stride,
        in decades). Labels are per value (``1, 10, 100, 1000, 10k, 100k,
        1M``, ``0.01, 0.001, 1e-4``): on a log axis a shared prefix would
        write ``0.000001M``. A range within one decade gets
        :func:`nice_ticks` (linear steps read better there).

    Raises
    ------
    GraphValidationError
        A bound is not positive, or as :func:`nice_ticks`.

    Notes
    -----
    Does not take logarithms of the data, draw minor ticks, or accept zero
    or negative ranges (a symlog axis is not offered).
    """
    lo, hi, degenerate = _range("log_ticks", domain, target)
    if lo <= 0:
        raise GraphValidationError(f"log_ticks range ({lo!r}, {hi!r}) must be positive")
    if degenerate:
        return _single(lo, format_number(lo))
    if math.log10(hi) - math.log10(lo) < 1:
        return nice_ticks((lo, hi), target=target)
    first, last = _exponent(lo), _exponent(hi)
    decades = [j for j in range(first, last + 1) if lo <= _value(1, j) <= hi]
    sub = [(m, j) for j in range(first, last + 1) for m in (1, 2, 5) if lo <= _value(m, j) <= hi]
    limit = 2 * target + 1
    if len(decades) < target and len(sub) <= limit:
        chosen, stride = sub, 1
    else:
        stride = next(s for s in (m * 10**e for e in range(400) for m in (1, 2, 5))
                      if len([j for j in decades if j % s == 0]) <= limit)
        chosen = [(1, j) for j in decades if j % stride == 0]
    return Ticks(positions=[_value(m, j) for m, j in chosen],
                 labels=[format_number(Decimal(m).scaleb(j)) for m, j in chosen], step=float(stride))


def _time_ladder():
    """Time steps as (n, k) = n * 10**k ns, increasing."""
    steps = [(m, k) for k in range(-6, 9) for m in (1, 2, 5)]  # ... 1 ns ... 500 ms: 1-2-5
    steps += [(1, 9), (2, 9), (5, 9), (1, 10), (15, 9), (3, 10)]  # 1, 2, 5, 10, 15, 30 s
    steps += [(m * 6, 10) for m in (1, 2, 5, 10, 15, 30)]  # 1, 2, 5, 10, 15, 30 min
    steps += [(m * 36, 11) for m in (1, 2, 3, 6, 12, 24)]  # 1, 2, 3, 6, 12, 24 h
    steps += [(m * 36, 11 + e) for e in range(1, 14) for m in (1, 2, 5) if m * 10**e > 24]  # 50 h, 100 h, ...
    return sorted(steps, key=lambda s: _value(*s))


TIME_STEPS = _time_ladder()
_TIME_STEP_VALUES = [_value(n, k) for n, k in TIME_STEPS]
#: Absolute labels with more significant digits than this switch
#: :func:`time_ticks` to the offset form.
OFFSET_DIGITS = 4


def time_ticks(window_ns, *, target=5, include_bounds=False, offset=None) -> Ticks:
    """Ticks for a time axis in nanoseconds, at time-unit steps.

    Parameters
    ----------
    window_ns : (lo, hi) pair of real numbers
        The window in nanoseconds (|value| <= 1e24; a reversed window gives
        the ticks of the sorted one).
    target : int
        The tick count to aim for (1..1000).
    include_bounds : bool
        As in :func:`nice_ticks`.
    offset : bool, optional
        Offset form: labels ``+250 µs`` relative to ``origin`` (a round
        value at or below the first tick, labelled in ``origin_label``, e.g.
        ``12.003 s``). None (default): used when absolute labels would need
        more than :data:`OFFSET_DIGITS` significant digits (a narrow window
        far from zero, 12.0000 s..12.0005 s); True / False force it.

    Returns
    -------
    Ticks
        Steps of 1, 2, 5, 10, 20, 50, 100, 200, 500 ns / µs / ms; 1, 2, 5,
        10, 15, 30 s and min; 1, 2, 3, 6, 12, 24 h (then 50, 100, 200...
        h; below 1 ns, 1-2-5 fractions). Labels from
        :func:`format_durations` share one unit (``0 µs, 0.2 µs ... 1 µs``;
        ``3 ms, 3.1 ms``; ``0 s, 30 s, 60 s, 90 s``).

    Raises
    ------
    GraphTypeError, GraphValidationError
        As :func:`nice_ticks`.

    Notes
    -----
    Positions are float64 nanoseconds, so absolute times beyond 2**53 ns
    (104 days, e.g. Unix-epoch timestamps) are not resolved below a
    microsecond: pass times relative to the trace's start. Does not write
    clock times, dates or time zones.
    """
    lo, hi, degenerate = _range("time_ticks", window_ns, target)
    if max(abs(lo), abs(hi)) > 1e24:
        raise GraphValidationError(f"time_ticks window ({lo!r}, {hi!r}) ns is beyond +-1e24 ns")
    if offset not in (None, True, False):
        raise GraphTypeError(f"time_ticks offset {offset!r} is not None, True or False")
    if degenerate or hi - lo < 1e-5:
        return _single(lo, format_duration(lo))
    at = bisect_left(_TIME_STEP_VALUES, (hi - lo) / target)
    n, k, first, last = _pick(lo, hi, TIME_STEPS[max(0, at - 3):at + 3], target, include_bounds)
    step = Decimal(n).scaleb(k)
    values = [Decimal(i * n).scaleb(k) for i in range(first, last + 1)]
    positions = [_value(i * n, k) for i in range(first, last + 1)]
    largest = max(abs(values[0]), abs(values[-1]))
    if offset is None:
        offset = largest != 0 and largest.adjusted() - step.adjusted() + 1 > OFFSET_DIGITS
    if not offset:
        return Ticks(positions=positions, labels=format_durations(values, step_ns=step), step=float(step))
    granule = _exponent(hi - lo) + 1  # the origin is a multiple of 10**granule ns at or below the first tick
    origin = Decimal(math.floor(values[0].scaleb(-granule))).scaleb(granule)
    return Ticks(positions=positions, labels=format_durations([v - origin for v in values], step_ns=step, signed=True),
                 step=float(step), origin=float(origin),
                 origin_label=format_durations([origin], step_ns=Decimal(1).scaleb(granule))[0])


def category_ticks(labels, *, max_labels=20) -> Ticks:
    """Ticks at category centres, every ``stride``-th when there are many.

    Parameters
    ----------
    labels : sequence
        One entry per category, in axis order; each is written with ``str``.
    max_labels : int
        At most this many ticks (>= 1): with ``n`` categories every
        ``ceil(n / max_labels)``-th is kept, starting at the first. Derive it
        from the axis length and a label width to avoid overlap.

    Returns
    -------
    Ticks
        Category ``i`` spans ``[i, i + 1)``; its tick is at ``i + 0.5``.
        ``step`` is the stride. No categories give empty ticks (step 1).

    Raises
    ------
    GraphTypeError
        ``max_labels`` is not an integer, or ``labels`` has no length.
    GraphValidationError
        ``max_labels`` < 1.

    Notes
    -----
    Does not measure, truncate (the text layer's ellipsis does) or
    deduplicate labels, and does not sort categories.
    """
    if not isinstance(max_labels, numbers.Integral) or isinstance(max_labels, bool):
        raise GraphTypeError(f"category_ticks max_labels {max_labels!r} is not an integer")
    if max_labels < 1:
        raise GraphValidationError(f"category_ticks max_labels must be >= 1 (got {max_labels})")
    try:
        count = len(labels)
    except TypeError:
        raise GraphTypeError(f"category_ticks labels must be a sequence (got {type(labels).__name__})") from None
    stride = max(1, -(-count // int(max_labels)))
    kept = range(0, count, stride)
    return Ticks(positions=[i + 0.5 for i in kept], labels=[str(labels[i]) for i in kept], step=float(stride))
