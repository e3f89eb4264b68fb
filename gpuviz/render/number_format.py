"""Short labels for numbers and durations: one format per axis.

The rules, in one place (the tick functions of :mod:`gpuviz.render.ticks`
label through them):

- **One format per call.** :func:`format_numbers` gives every value the same
  notation (plain, one SI prefix, or one scientific exponent) and the same
  number of decimals, taken from the step between values; trailing zeros
  are then trimmed, so an axis reads ``0, 0.5, 1, 1.5``, never
  ``0.0, 0.5, 1.0, 1.5`` and never ``7.387e-05 ... 0.9998``.
- **Exact.** Values are read as decimals (``Decimal(repr(x))``, the shortest
  text that round-trips), so ``0.1 + 0.2`` on a 0.1 step is ``0.3``, not
  ``0.30000000000000004``. :class:`decimal.Decimal` values are used as given.
- **Large numbers** (largest magnitude >= 10 000): with ``si=True`` the
  shortest of plain digits and the SI prefixes k, M, G, T, P, E (ties go to
  the larger prefix), e.g. ``0, 0.5M, 1M, 1.5M``; scientific notation
  (``1e21``) only past the last prefix (>= 1e21) where it is shorter. Below 10 000 numbers are written
  out (``0, 500, 1000, 1500``). With ``si=False``: plain or scientific,
  whichever is shorter (ties: plain).
- **Small numbers.** Plain decimals while the largest magnitude is at least
  0.001 (``0.001, 0.0015``); below, scientific with one exponent for all
  values (``0, 2e-5, 4e-5, 6e-5``; zero is ``0``). Plain numbers get no small
  SI prefixes (m, µ, n): without a unit, ``250m`` reads as 250 metres or
  minutes. Durations (below) do use them, because their unit is known.
- **Durations** (:func:`format_durations`, values in nanoseconds) carry a unit
  chosen from the largest magnitude: ns, µs, ms, s (``250 µs``, ``1.5 ms``);
  min or h only when the step is a whole number of minutes or hours.
- Characters used: ``0-9 . - + e``, the prefix letters, ``µ`` (U+00B5), a
  space, and the unit names. The minus sign is ASCII ``-``, so labels parse
  back with ``float()`` after the suffix is removed.
"""

import decimal
import numbers
from decimal import Decimal

from ..errors import GraphTypeError, GraphValidationError

__all__ = ["format_number", "format_numbers", "format_duration", "format_durations",
           "LARGE_PREFIXES", "SMALLEST_PLAIN", "SMALLEST_PREFIXED", "SMALLEST_SCIENTIFIC", "TIME_UNITS"]

#: SI prefixes for large plain numbers: exponent of ten -> letter.
LARGE_PREFIXES = {3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
#: Below this largest magnitude, numbers are written in scientific notation.
SMALLEST_PLAIN = Decimal("0.001")
#: From this largest magnitude on, SI prefixes are considered.
SMALLEST_PREFIXED = Decimal(10000)
#: With SI prefixes, scientific notation is considered from here (past E).
SMALLEST_SCIENTIFIC = Decimal(10) ** 21
#: Duration units: name -> nanoseconds. min and h are used only for steps
#: that are whole minutes or hours.
TIME_UNITS = {"ns": Decimal(1), "µs": Decimal(10**3), "ms": Decimal(10**6), "s": Decimal(10**9),
              "min": Decimal(60 * 10**9), "h": Decimal(3600 * 10**9)}

#: Enough digits for any float64 written out in full.
_CONTEXT = decimal.Context(prec=800)


def exact(name, value, *, what="value") -> Decimal:
    """``value`` (a real number or a Decimal) as a finite Decimal; refuses
    bools, non-numbers (GraphTypeError) and NaN or infinity
    (GraphValidationError). Does not round."""
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        result = Decimal(repr(float(value)))
    else:
        raise GraphTypeError(f"{name} {what} {value!r} is not a real number (got {type(value).__name__})")
    if not result.is_finite():
        raise GraphValidationError(f"{name} {what} {value!r} is not finite")
    return result


def check_digits(name, digits) -> int:
    """``digits`` as an int in 1..17 (GraphTypeError / GraphValidationError
    otherwise); does not round or clamp."""
    if not isinstance(digits, numbers.Integral) or isinstance(digits, bool):
        raise GraphTypeError(f"{name} digits {digits!r} is not an integer")
    if not 1 <= digits <= 17:
        raise GraphValidationError(f"{name} digits must be in 1..17 (got {digits})")
    return int(digits)


def _step(name, step, largest, digits) -> Decimal:
    """The precision step: the given one, or ``digits`` significant digits of
    the largest magnitude."""
    if step is None:
        return Decimal(1).scaleb((largest.adjusted() if largest else 0) - digits + 1)
    result = exact(name, step, what="step")
    if result <= 0:
        raise GraphValidationError(f"{name} step must be positive (got {step!r})")
    return result


def _decimals(step: Decimal, exponent: int) -> int:
    """Decimals that show every multiple of ``step`` after scaling by 10**-exponent."""
    return max(0, -step.scaleb(-exponent).normalize().as_tuple().exponent)


def _fixed(value: Decimal, exponent: int, decimals: int) -> str:
    """``value`` / 10**exponent with ``decimals`` decimals, trailing zeros trimmed."""
    text = format(value.scaleb(-exponent, _CONTEXT).quantize(Decimal(1).scaleb(-decimals), context=_CONTEXT), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _render(values, exponent: int, suffix: str, step: Decimal):
    decimals = _decimals(step, exponent)
    labels = []
    for value in values:
        text = _fixed(value, exponent, decimals)
        labels.append(text if text == "0" else text + suffix)
    return labels


def format_numbers(values, *, step=None, si=True, digits=3) -> tuple:
    """Labels for ``values`` that share one format.

    Parameters
    ----------
    values : iterable of real numbers or decimal.Decimal
        Finite values (ints, floats, numpy scalars; Decimals are used exactly).
    step : real number, optional
        The spacing the labels must resolve (an axis's tick step): it sets
        the decimals. Without it, ``digits`` significant digits of the
        largest magnitude.
    si : bool
        Allow the SI prefixes k, M, G, T, P, E for magnitudes >= 10 000.
    digits : int
        Significant digits when ``step`` is not given.

    Returns
    -------
    tuple of str
        One label per value, in order: same notation, same decimals before
        trimming (see the module docstring for the rules).

    Raises
    ------
    GraphTypeError
        A value or the step is not a real number.
    GraphValidationError
        A value or the step is NaN or infinite, or the step is not positive.

    Notes
    -----
    Does not choose tick positions (see :func:`nice_ticks`), does not
    deduplicate, and never uses small SI prefixes (m, µ, n): a plain number
    has no unit to attach them to.
    """
    decs = [exact("format_numbers", v) for v in values]
    if not decs:
        return ()
    largest = max(abs(d) for d in decs)
    step = _step("format_numbers", step, largest, check_digits("format_numbers", digits))
    if largest == 0:
        return ("0",) * len(decs)
    if largest < SMALLEST_PLAIN:
        exponent = largest.adjusted()
        return tuple(_render(decs, exponent, f"e{exponent}", step))
    candidates = [(0, "")]  # (exponent, suffix), in order of preference on ties
    if largest >= SMALLEST_PREFIXED:
        if si:
            top = min(18, 3 * (largest.adjusted() // 3))
            candidates = [(e, LARGE_PREFIXES[e]) for e in range(top, 2, -3)] + candidates
        if not si or largest >= SMALLEST_SCIENTIFIC:
            candidates.append((largest.adjusted(), f"e{largest.adjusted()}"))
    best = None
    for rank, (exponent, suffix) in enumerate(candidates):
        labels = _render(decs, exponent, suffix, step)
        key = (max(map(len, labels)), rank)
        if best is None or key < best[0]:
            best = (key, labels)
    return tuple(best[1])


def format_number(value, *, step=None, si=True, digits=3) -> str:
    """A short label for one number: ``1.5k``, ``20M``, ``3.2G``, ``0.0015``,
    ``2.5e-6``.

    Parameters
    ----------
    value : real number or decimal.Decimal
        A finite value.
    step : real number, optional
        The resolution to show (e.g. the axis step of a tooltip's value);
        without it, ``digits`` significant digits.
    si : bool
        Allow SI prefixes k..E for magnitudes >= 10 000.
    digits : int
        Significant digits when ``step`` is not given.

    Returns
    -------
    str
        ``format_numbers([value], step=step, si=si, digits=digits)[0]``.

    Notes
    -----
    One value has no neighbours, so this cannot keep a format shared with
    other labels: label an axis with :func:`format_numbers` or the tick
    functions instead. Never uses small SI prefixes (m, µ, n).
    """
    return format_numbers([value], step=step, si=si, digits=digits)[0]


def _time_unit(largest: Decimal, step: Decimal) -> str:
    for name in ("h", "min"):
        unit = TIME_UNITS[name]
        if step >= unit and step % unit == 0:
            return name
    for name in ("s", "ms", "µs"):
        if largest >= TIME_UNITS[name]:
            return name
    return "ns"


def format_durations(values_ns, *, step_ns=None, signed=False, digits=3) -> tuple:
    """Labels with a unit for durations in nanoseconds, sharing one unit.

    Parameters
    ----------
    values_ns : iterable of real numbers or decimal.Decimal
        Finite durations or times, in nanoseconds.
    step_ns : real number, optional
        The spacing to resolve, in nanoseconds (a tick step); it sets the
        decimals and allows min / h when it is a whole number of them.
        Without it, ``digits`` significant digits of the largest magnitude.
    signed : bool
        Prefix non-negative labels with ``+`` (offsets from an origin).
    digits : int
        Significant digits when ``step_ns`` is not given.

    Returns
    -------
    tuple of str
        ``"250 µs"``, ``"1.5 ms"``, ``"30 s"``, ``"15 min"``: the unit is
        the largest of ns, µs, ms, s not above the largest magnitude (min
        or h only for whole-minute or whole-hour steps), the decimals come
        from the step, trailing zeros are trimmed.

    Raises
    ------
    GraphTypeError, GraphValidationError
        As :func:`format_numbers`.

    Notes
    -----
    Does not write compound forms (``1 h 2 min``), clock times or dates,
    and does not convert from other units: pass nanoseconds.
    """
    decs = [exact("format_durations", v) for v in values_ns]
    if not decs:
        return ()
    largest = max(abs(d) for d in decs)
    step = _step("format_durations", step_ns, largest, check_digits("format_durations", digits))
    unit = _time_unit(largest if largest else step, step)
    scale = TIME_UNITS[unit]
    decimals = max(0, -(step / scale).normalize().as_tuple().exponent)
    labels = []
    for value in decs:
        text = _fixed(value / scale, 0, decimals)
        sign = "+" if signed and not text.startswith("-") else ""
        labels.append(f"{sign}{text} {unit}")
    return tuple(labels)


def format_duration(value_ns, *, step_ns=None, digits=3) -> str:
    """One duration in nanoseconds as a short label with its unit
    (``1.25 ms``, ``250 µs``, ``12 s``).

    Parameters
    ----------
    value_ns : real number or decimal.Decimal
        A finite duration in nanoseconds.
    step_ns : real number, optional
        The resolution to show, in nanoseconds; without it ``digits``
        significant digits.
    digits : int
        Significant digits when ``step_ns`` is not given.

    Returns
    -------
    str
        ``format_durations([value_ns], step_ns=step_ns, digits=digits)[0]``.

    Notes
    -----
    Seconds are the largest unit unless the step is whole minutes or hours;
    this never writes ``1 h 2 min`` or clock times.
    """
    return format_durations([value_ns], step_ns=step_ns, digits=digits)[0]
