"""format_number(s) and format_duration(s): exact tables of the documented
choices, and properties of one-format labels (shared notation, decimals from
the step, exact round trip, no float noise)."""

import math
import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz import (GraphTypeError, GraphValidationError, format_duration, format_durations, format_number,
                    format_numbers)

SCALE = {"": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
NUMBER = re.compile(r"^(-?\d+(?:\.(\d+))?)(?:([kMGTPE])|e(-?\d+))?$")
UNITS = {"ns": 1, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9}
DURATION = re.compile(r"^([+-]?\d+(?:\.(\d+))?) (ns|µs|ms|s|min|h)$")


def parse_number(label):
    """(value as Decimal, scale exponent, suffix, decimals shown)."""
    match = NUMBER.match(label)
    assert match, f"label {label!r} is not in the documented number format"
    mantissa, decimals, prefix, exponent = match.groups()
    scale = SCALE[prefix] if prefix else int(exponent) if exponent else 0
    suffix = prefix or (f"e{exponent}" if exponent else "")
    return Decimal(mantissa).scaleb(scale), scale, suffix, len(decimals or "")


def parse_duration(label):
    """(value in ns as Decimal, unit, decimals shown)."""
    match = DURATION.match(label)
    assert match, f"label {label!r} is not in the documented duration format"
    number, decimals, unit = match.groups()
    return Decimal(number) * UNITS[unit], unit, len(decimals or "")


NUMBER_TABLE = [
    # (values, step, si, expected)
    ([0, 0.5, 1, 1.5], 0.5, True, ("0", "0.5", "1", "1.5")),
    ([0.1 + 0.2, 0.1, 0.7000000000000001], 0.1, True, ("0.3", "0.1", "0.7")),
    ([0, 500, 1000, 1500], 500, True, ("0", "500", "1000", "1500")),  # below 10 000: written out
    ([0, 2000, 4000, 10000], 2000, True, ("0", "2k", "4k", "10k")),
    ([0, 5e5, 1e6, 1.5e6], 5e5, True, ("0", "0.5M", "1M", "1.5M")),
    ([1234600, 1234900], 100, True, ("1.2346M", "1.2349M")),  # tie with plain: the prefix
    ([12345900, 12345950], 50, True, ("12345900", "12345950")),  # plain is shorter
    ([100000, 150000], 10000, True, ("100k", "150k")),
    ([0, 2e11, 1e12], 2e11, True, ("0", "0.2T", "1T")),
    ([1e12, 2e12], 2e11, False, ("1e12", "2e12")),
    ([1234600, 1234900], 100, False, ("1234600", "1234900")),
    ([0, 2e-5, 4e-5, 6e-5], 2e-5, True, ("0", "2e-5", "4e-5", "6e-5")),  # below 0.001: one exponent
    ([0.001, 0.0015], 0.0005, True, ("0.001", "0.0015")),
    ([-1e-9, -5e-10, 0, 5e-10], 5e-10, True, ("-1e-9", "-0.5e-9", "0", "0.5e-9")),
    ([-0.0, 0.0], 1, True, ("0", "0")),
    ([-2.5, 2.5], 0.5, True, ("-2.5", "2.5")),
]


@pytest.mark.parametrize("values, step, si, expected", NUMBER_TABLE)
def test_format_numbers_table(values, step, si, expected):
    assert format_numbers(values, step=step, si=si) == expected


@pytest.mark.parametrize("value, expected", [
    (1234567, "1.23M"), (12345, "12.3k"), (1500, "1500"), (1.5e3, "1500"), (20e6, "20M"), (3.2e9, "3.2G"),
    (0.00123, "0.00123"), (1.23e-7, "1.23e-7"), (0.25, "0.25"), (1e12, "1T"), (2.5e20, "250E"), (3e22, "3e22"),
    (-0.0, "0"), (0, "0"), (np.float32(0.5), "0.5"), (np.int64(7), "7"), (Decimal("0.1"), "0.1"),
    (1e300, "1e300"), (-45678.9, "-45.7k"),
])
def test_format_number_table(value, expected):
    assert format_number(value) == expected


def test_format_number_step_and_digits():
    assert format_number(0.123456, step=0.001) == "0.123"
    assert format_number(0.123456, digits=5) == "0.12346"
    assert format_number(1234567, si=False) == "1.23e6"  # shorter than 1230000
    assert format_numbers([]) == ()


@pytest.mark.parametrize("values, step, expected", [
    ([0, 250e3, 500e3], 250e3, ("0 µs", "250 µs", "500 µs")),
    ([0, 500e3, 1.5e6], 500e3, ("0 ms", "0.5 ms", "1.5 ms")),
    ([0, 30e9, 60e9, 90e9], 30e9, ("0 s", "30 s", "60 s", "90 s")),  # 30 s steps are not whole minutes
    ([0, 900e9, 1800e9], 900e9, ("0 min", "15 min", "30 min")),
    ([0, 7200e9], 3600e9, ("0 h", "2 h")),
    ([0, 0.5, 1], 0.5, ("0 ns", "0.5 ns", "1 ns")),
    ([-200e3, 0, 200e3], 200e3, ("-200 µs", "0 µs", "200 µs")),
])
def test_format_durations_table(values, step, expected):
    assert format_durations(values, step_ns=step) == expected


def test_format_duration_single_and_signed():
    assert format_duration(1.25e6) == "1.25 ms"
    assert format_duration(12e9) == "12 s"
    assert format_duration(5400e9) == "5400 s"  # without a step, seconds are the largest unit
    assert format_duration(5400e9, step_ns=60e9) == "90 min"
    assert format_durations([0, 300e3, -100e3], step_ns=100e3, signed=True) == ("+0 µs", "+300 µs", "-100 µs")


@pytest.mark.parametrize("call, error", [
    (lambda: format_number(float("nan")), GraphValidationError),
    (lambda: format_number(float("inf")), GraphValidationError),
    (lambda: format_numbers([1, float("-inf")]), GraphValidationError),
    (lambda: format_number(Decimal("NaN")), GraphValidationError),
    (lambda: format_number("1.5"), GraphTypeError),
    (lambda: format_number(True), GraphTypeError),
    (lambda: format_number(1, step=0), GraphValidationError),
    (lambda: format_number(1, step=-1), GraphValidationError),
    (lambda: format_number(1, step=float("nan")), GraphValidationError),
    (lambda: format_number(1, digits=0), GraphValidationError),
    (lambda: format_number(1, digits=2.5), GraphTypeError),
    (lambda: format_duration(float("nan")), GraphValidationError),
    (lambda: format_duration(None), GraphTypeError),
])
def test_bad_input_is_refused(call, error):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(("format_number", "format_duration"))


@st.composite
def stepped_values(draw):
    """Distinct multiples of a 1-2-5 step, as an axis would have."""
    mantissa, exponent = draw(st.sampled_from((1, 2, 5))), draw(st.integers(-15, 18))
    start = draw(st.integers(-10**6, 10**6))
    count = draw(st.integers(1, 12))
    ints = [start + i for i in range(count)]
    step = Decimal(mantissa).scaleb(exponent)
    return [float(i * step) for i in ints], float(step), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(stepped_values())
def test_one_format_and_exact_round_trip(case):
    values, step, si = case
    labels = format_numbers(values, step=step, si=si)
    parsed = [parse_number(label) for label in labels]
    assert len(set(labels)) == len(labels), labels
    assert len({p[2] for p, label in zip(parsed, labels) if label != "0"}) <= 1, f"mixed notations {labels}"
    for value, (number, scale, _suffix, decimals) in zip(values, parsed):
        assert math.isclose(float(number), value, rel_tol=1e-12, abs_tol=step * 1e-9), (value, labels)
        # no float noise: never more decimals than the step needs at this scale
        assert decimals <= max(0, scale - Decimal(repr(step)).adjusted()), labels


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e20, 1e20, allow_nan=False), st.integers(1, 8))
def test_format_number_keeps_the_significant_digits(value, digits):
    number, _scale, _suffix, _decimals = parse_number(format_number(value, digits=digits))
    assert abs(float(number) - value) <= 0.5 * 10 ** (math.floor(math.log10(abs(value) or 1)) - digits + 1) * 1.0001


@settings(max_examples=200, deadline=None)
@given(st.sampled_from((1, 2, 5)), st.integers(-3, 13), st.integers(-1000, 1000), st.integers(1, 10))
def test_durations_share_one_unit_and_round_trip(mantissa, exponent, start, count):
    step = Decimal(mantissa).scaleb(exponent)
    values = [(start + i) * step for i in range(count)]
    labels = format_durations(values, step_ns=step)
    parsed = [parse_duration(label) for label in labels]
    assert len({unit for _, unit, _ in parsed}) == 1 and len(set(labels)) == len(labels), labels
    assert [ns for ns, _, _ in parsed] == values
