"""Axis ticks: exact labels for hand-picked ranges, and properties over
hypothesis ranges (inside or covering the range, strictly increasing, counts
near the target, 1-2-5 or time-unit steps, unique labels of one format that
parse back to their positions)."""

import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpuviz import (GraphTypeError, GraphValidationError, Ticks, category_ticks, log_ticks, nice_ticks,
                    time_ticks)
from gpuviz.render.ticks import TIME_STEPS

from .test_number_format import parse_duration, parse_number

NICE_TABLE = [
    ((0, 1), {}, ["0", "0.2", "0.4", "0.6", "0.8", "1"]),
    ((0, 100), {}, ["0", "20", "40", "60", "80", "100"]),
    ((-3.7, 12.2), {}, ["0", "5", "10"]),
    ((-3.7, 12.2), {"include_bounds": True}, ["-5", "0", "5", "10", "15"]),
    ((1e-6, 5e-6), {}, ["1e-6", "2e-6", "3e-6", "4e-6", "5e-6"]),
    ((1234567, 1234999), {}, ["1.2346M", "1.2347M", "1.2348M", "1.2349M"]),
    ((0, 7.387e-05), {}, ["0", "2e-5", "4e-5", "6e-5"]),
    ((0, 1e12), {}, ["0", "0.2T", "0.4T", "0.6T", "0.8T", "1T"]),
    ((0.1, 0.7), {}, ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]),
    ((0, 1.5), {}, ["0", "0.5", "1", "1.5"]),
    ((-1e-9, 1e-9), {}, ["-1e-9", "-0.5e-9", "0", "0.5e-9", "1e-9"]),
    ((0, 1), {"target": 10}, ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"]),
    ((-250, -40), {}, ["-250", "-200", "-150", "-100", "-50"]),
    ((0, 3e6), {"si": False}, ["0", "1e6", "2e6", "3e6"]),  # scientific: shorter than 1000000
    ((0, 3e5), {"si": False}, ["0", "1e5", "2e5", "3e5"]),
    ((0, 3000), {"si": False}, ["0", "1000", "2000", "3000"]),
    ((10, 0), {}, ["0", "2", "4", "6", "8", "10"]),  # reversed: the sorted range's ticks
]


@pytest.mark.parametrize("bounds, options, expected", NICE_TABLE)
def test_nice_ticks_table(bounds, options, expected):
    ticks = nice_ticks(bounds, **options)
    assert list(ticks.labels) == expected
    assert ticks.positions.dtype == np.float64 and not ticks.positions.flags.writeable
    assert nice_ticks(np.array(bounds), **options).labels == ticks.labels  # any (lo, hi) pair
    assert [float(parse_number(label)[0]) for label in expected] == ticks.positions.tolist()


def test_nice_ticks_positions_carry_no_float_noise():
    ticks = nice_ticks((0.1, 0.7))
    assert ticks.positions.tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]  # the doubles nearest the decimals
    assert ticks.step == 0.1 and ticks.origin == 0.0 and ticks.origin_label == ""


@pytest.mark.parametrize("value, label", [(5, "5"), (0, "0"), (-3.7, "-3.7"), (1234567, "1.23M"), (1e-7, "1e-7")])
def test_equal_bounds_give_one_tick(value, label):
    ticks = nice_ticks((value, value))
    assert ticks.labels == (label,) and ticks.positions.tolist() == [value] and ticks.step == 0.0


def test_a_range_below_float_resolution_is_one_value():
    ticks = nice_ticks((1e12, 1e12 + 1e-4))
    assert len(ticks) == 1 and ticks.labels == ("1T",)


LOG_TABLE = [
    ((1, 1e6), {}, ["1", "10", "100", "1000", "10k", "100k", "1M"]),
    ((0.5, 20), {}, ["0.5", "1", "2", "5", "10", "20"]),
    ((1, 1000), {}, ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"]),
    ((1e-6, 1), {}, ["1e-6", "1e-5", "1e-4", "0.001", "0.01", "0.1", "1"]),
    ((1e-15, 1e15), {}, ["1e-15", "1e-10", "1e-5", "1", "100k", "10G", "1P"]),  # every 5th decade
    ((2, 8), {}, ["2", "4", "6", "8"]),  # within one decade: linear
    ((1e6, 1), {}, ["1", "10", "100", "1000", "10k", "100k", "1M"]),
]


@pytest.mark.parametrize("bounds, options, expected", LOG_TABLE)
def test_log_ticks_table(bounds, options, expected):
    ticks = log_ticks(bounds, **options)
    assert list(ticks.labels) == expected
    assert [float(parse_number(label)[0]) for label in expected] == ticks.positions.tolist()


def test_log_ticks_stride_is_the_step():
    assert log_ticks((1, 1e6)).step == 1.0 and log_ticks((1e-15, 1e15)).step == 5.0


TIME_TABLE = [
    ((0, 1e3), {}, ["0 µs", "0.2 µs", "0.4 µs", "0.6 µs", "0.8 µs", "1 µs"], 0.0, ""),
    ((3e6, 3.5e6), {}, ["3 ms", "3.1 ms", "3.2 ms", "3.3 ms", "3.4 ms", "3.5 ms"], 0.0, ""),
    ((0, 90e9), {}, ["0 s", "30 s", "60 s", "90 s"], 0.0, ""),
    ((12.0000e9, 12.0005e9), {}, ["+0 µs", "+100 µs", "+200 µs", "+300 µs", "+400 µs", "+500 µs"], 12e9, "12 s"),
    ((12.00325e9, 12.00375e9), {}, ["+300 µs", "+400 µs", "+500 µs", "+600 µs", "+700 µs"], 12.003e9, "12.003 s"),
    ((12.0000e9, 12.0005e9), {"offset": False},
     ["12 s", "12.0001 s", "12.0002 s", "12.0003 s", "12.0004 s", "12.0005 s"], 0.0, ""),
    ((3e6, 3.5e6), {"offset": True}, ["+0 µs", "+100 µs", "+200 µs", "+300 µs", "+400 µs", "+500 µs"], 3e6, "3 ms"),
    ((0, 600e9), {}, ["0 min", "2 min", "4 min", "6 min", "8 min", "10 min"], 0.0, ""),
    ((0, 7200e9), {}, ["0 min", "30 min", "60 min", "90 min", "120 min"], 0.0, ""),
    ((0, 86400e9), {}, ["0 h", "6 h", "12 h", "18 h", "24 h"], 0.0, ""),
    ((0, 60e9), {}, ["0 s", "15 s", "30 s", "45 s", "60 s"], 0.0, ""),
    ((-5e5, 5e5), {}, ["-400 µs", "-200 µs", "0 µs", "200 µs", "400 µs"], 0.0, ""),
    ((0, 3), {}, ["0 ns", "1 ns", "2 ns", "3 ns"], 0.0, ""),
    ((0, 2), {}, ["0 ns", "0.5 ns", "1 ns", "1.5 ns", "2 ns"], 0.0, ""),
    ((1000e9, 1001e9), {}, ["+0 s", "+0.2 s", "+0.4 s", "+0.6 s", "+0.8 s", "+1 s"], 1000e9, "1000 s"),
]


@pytest.mark.parametrize("window, options, expected, origin, origin_label", TIME_TABLE)
def test_time_ticks_table(window, options, expected, origin, origin_label):
    ticks = time_ticks(window, **options)
    assert list(ticks.labels) == expected
    assert (ticks.origin, ticks.origin_label) == (origin, origin_label)
    assert [float(parse_duration(label)[0]) + origin for label in expected] == ticks.positions.tolist()


def test_time_ticks_equal_bounds():
    ticks = time_ticks((1.25e6, 1.25e6))
    assert ticks.labels == ("1.25 ms",) and ticks.step == 0.0


def test_category_ticks_centres_and_thinning():
    ticks = category_ticks(["EWR", "JFK", "LGA"])
    assert ticks.positions.tolist() == [0.5, 1.5, 2.5] and ticks.labels == ("EWR", "JFK", "LGA") and ticks.step == 1
    many = category_ticks(list(range(100)), max_labels=8)
    assert many.step == 13 and many.labels == tuple(str(i) for i in range(0, 100, 13))
    assert len(category_ticks([])) == 0
    assert category_ticks(np.array([3, 1])).labels == ("3", "1")


@pytest.mark.parametrize("call, error", [
    (lambda: nice_ticks((float("nan"), 1)), GraphValidationError),
    (lambda: nice_ticks((0, float("inf"))), GraphValidationError),
    (lambda: nice_ticks((-1e301, 0)), GraphValidationError),
    (lambda: nice_ticks(("0", 1)), GraphTypeError),
    (lambda: nice_ticks((None, 1)), GraphTypeError),
    (lambda: nice_ticks((0, 1), target=0), GraphValidationError),
    (lambda: nice_ticks((0, 1), target=2.5), GraphTypeError),
    (lambda: log_ticks((0, 10)), GraphValidationError),
    (lambda: log_ticks((-10, -1)), GraphValidationError),
    (lambda: log_ticks((float("nan"), 10)), GraphValidationError),
    (lambda: time_ticks((0, float("nan"))), GraphValidationError),
    (lambda: time_ticks((0, 1e25)), GraphValidationError),
    (lambda: time_ticks((0, 1), offset="auto"), GraphTypeError),
    (lambda: nice_ticks(1.0), GraphTypeError),
    (lambda: nice_ticks((0, 1, 2)), GraphTypeError),
    (lambda: time_ticks(5), GraphTypeError),
    (lambda: category_ticks(["a"], max_labels=0), GraphValidationError),
    (lambda: category_ticks(["a"], max_labels=1.5), GraphTypeError),
    (lambda: category_ticks(iter("ab")), GraphTypeError),
    (lambda: Ticks(positions=[0, 1], labels=["0"], step=1.0), GraphValidationError),
])
def test_bad_input_is_refused(call, error):
    with pytest.raises(error) as info:
        call()
    assert str(info.value).split()[0] in ("nice_ticks", "log_ticks", "time_ticks", "category_ticks", "Ticks")


# ------------------------------------------------------------------ properties
@st.composite
def ranges(draw):
    """(lo, hi) over magnitudes 1e-9..1e12, crossing zero or not, either order,
    wider than float resolution."""
    exponent = draw(st.integers(-9, 12))
    a = draw(st.floats(-10, 10, allow_nan=False)) * 10.0**exponent
    b = draw(st.floats(-10, 10, allow_nan=False)) * 10.0**exponent
    if draw(st.booleans()):  # a narrow window far from zero
        b = a + draw(st.floats(1e-9, 1e-3)) * abs(a or 1)
    assume(abs(b - a) > max(1e-10 * max(abs(a), abs(b)), 1e-280))
    return a, b


def is_one_two_five(step):
    digits = Decimal(repr(float(step))).normalize().as_tuple().digits
    return digits in ((1,), (2,), (5,))


def check_common(ticks, lo, hi, include_bounds):
    positions = ticks.positions
    assert np.all(np.diff(positions) > 0), positions
    if include_bounds:
        assert positions[0] <= lo and positions[-1] >= hi
        assert len(positions) < 2 or (positions[1] > lo and positions[-2] < hi), "covering, but not minimally"
    else:
        assert lo <= positions[0] and positions[-1] <= hi
    assert len(set(ticks.labels)) == len(ticks.labels), ticks.labels
    ulp = np.spacing(np.abs(positions).max())
    assert np.all(np.abs(np.diff(positions) - ticks.step) <= 1e-9 * ticks.step + 2 * ulp), positions


@settings(max_examples=400, deadline=None)
@given(ranges(), st.integers(2, 12), st.booleans(), st.booleans())
def test_nice_ticks_properties(bounds, target, include_bounds, si):
    lo, hi = min(bounds), max(bounds)
    ticks = nice_ticks(bounds, target=target, include_bounds=include_bounds, si=si)
    check_common(ticks, lo, hi, include_bounds)
    assert target / 2 <= len(ticks) <= 2 * target + 1, (bounds, ticks.labels)
    assert is_one_two_five(ticks.step), ticks.step
    parsed = [parse_number(label) for label in ticks.labels]
    assert len({suffix for (_, _, suffix, _), label in zip(parsed, ticks.labels) if label != "0"}) <= 1, ticks.labels
    step_exponent = Decimal(repr(ticks.step)).adjusted()
    for position, (value, scale, _suffix, decimals) in zip(ticks.positions, parsed):
        assert abs(float(value) - position) <= 1e-6 * ticks.step, (position, ticks.labels)  # far inside half a step
        assert decimals <= max(0, scale - step_exponent), f"float noise in {ticks.labels}"
        assert value % Decimal(repr(ticks.step)) == 0, (value, ticks.step)  # a multiple of the step


@settings(max_examples=300, deadline=None)
@given(st.floats(-12, 12), st.floats(-12, 12), st.integers(2, 12))
def test_log_ticks_properties(a, b, target):
    assume(abs(a - b) > 1e-9)
    lo, hi = 10.0 ** min(a, b), 10.0 ** max(a, b)
    ticks = log_ticks((10.0**a, 10.0**b), target=target)
    positions = ticks.positions
    assert np.all(np.diff(positions) > 0) and lo <= positions[0] and positions[-1] <= hi
    assert 1 <= len(ticks) <= 2 * target + 1
    assert len(set(ticks.labels)) == len(ticks.labels)
    for position, label in zip(positions, ticks.labels):
        assert float(parse_number(label)[0]) == pytest.approx(position, rel=1e-12)
    if abs(a - b) >= 1:
        assert all(is_one_two_five(p) for p in positions), positions
        assert len(ticks) >= 2 or math.floor(max(a, b)) == math.ceil(min(a, b)), ticks.labels


@st.composite
def windows(draw):
    """Time windows in ns: 1 ns .. 10 days wide, anywhere in +-1e13 ns."""
    span = 10.0 ** draw(st.floats(0, 15))
    start = draw(st.floats(-1e13, 1e13, allow_nan=False))
    return (start, start + span) if draw(st.booleans()) else (start + span, start)


TIME_STEP_VALUES = {n * 10.0**k for n, k in TIME_STEPS} | {float(Decimal(n).scaleb(k)) for n, k in TIME_STEPS}


@settings(max_examples=400, deadline=None)
@given(windows(), st.integers(3, 12), st.booleans())
def test_time_ticks_properties(window, target, include_bounds):
    lo, hi = min(window), max(window)
    assume(hi - lo > 1e-10 * max(abs(lo), abs(hi)))
    ticks = time_ticks(window, target=target, include_bounds=include_bounds)
    check_common(ticks, lo, hi, include_bounds)
    assert target / 2 <= len(ticks) <= 2 * target + 1, (window, ticks.labels)
    assert ticks.step in TIME_STEP_VALUES, ticks.step
    parsed = [parse_duration(label) for label in ticks.labels]
    assert len({unit for _, unit, _ in parsed}) == 1, ticks.labels
    if ticks.origin_label:
        assert all(label.startswith("+") for label in ticks.labels) and ticks.origin <= ticks.positions[0]
        assert float(parse_duration(ticks.origin_label)[0]) == ticks.origin
    for position, (offset, _unit, _decimals) in zip(ticks.positions, parsed):
        assert abs(float(offset) + ticks.origin - position) <= max(1e-6 * ticks.step, 1e-15 * abs(position))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(1, 50))
def test_category_ticks_properties(count, max_labels):
    ticks = category_ticks([f"c{i}" for i in range(count)], max_labels=max_labels)
    assert len(ticks) <= max_labels and len(ticks) == len(range(0, count, int(ticks.step)))
    assert ticks.positions.tolist() == [i + 0.5 for i in range(0, count, int(ticks.step))]
    if count:
        assert ticks.labels[0] == "c0" and len(ticks) >= min(count, max_labels) / 2
