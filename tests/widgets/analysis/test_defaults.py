"""DataAnalysis defaults: robust heatmap bounds (0.5 / 99.5 percentiles) with
the full extent one call or click away, integer axes binned one cell per
value (no empty stripes), and log bins by default for skewed positive data;
every one against numpy."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.device import request_device
from gpuviz.widgets.analysis.data import AnalysisData, ColumnStats, prepare_table, robust_range
from gpuviz.widgets.analysis.parameters import AnalysisParameters
from gpuviz.widgets.analysis.widget import DataAnalysis

GRID = (32, 32)


@pytest.fixture(scope="module")
def data():
    """A normal x with 0.3 % huge outliers, integer hours 0..23, a log-normal
    (skewed, positive) value, a uniform one, one with negatives, and groups."""
    rng = np.random.default_rng(5)
    n = 4000
    x = rng.normal(0.0, 1.0, n).astype(np.float32)
    x[rng.random(n) < 0.003] = np.float32(1e4)
    hour = rng.integers(0, 24, n)
    skewed = rng.lognormal(1.0, 1.0, n).astype(np.float32)
    flat = rng.uniform(1.0, 2.0, n).astype(np.float32)
    signed = rng.normal(0.0, 1.0, n).astype(np.float32)
    group = rng.choice(["a", "b", "c"], n)
    table = pa.table({"x": x, "hour": hour, "skewed": skewed, "flat": flat, "signed": signed, "g": group})
    host = {"x": x, "hour": hour.astype(np.float32), "skewed": skewed, "flat": flat, "signed": signed, "g": group}
    return table, host


def make(table, **kwargs):
    args = dict(x="x", y="hour", value="skewed", group="g", bins=16, max_bins=32, grid_size=GRID, size=(320, 200))
    args.update(kwargs)
    return DataAnalysis(table, **args)


def test_default_bounds_are_robust_percentiles_and_full_extent_is_one_call_away(data):
    table, host = data
    widget = make(table, y="signed")
    x, y = host["x"], host["signed"]
    want = (np.percentile(x, 0.5, method="lower"), np.percentile(y, 0.5, method="lower"),
            np.percentile(x, 99.5, method="higher"), np.percentile(y, 99.5, method="higher"))
    assert widget.bounds == pytest.approx(want) and widget.bounds[2] < 10  # the outliers at 1e4 are out of view
    r = widget.results()
    assert r["binning"] == {"x": "linear", "y": "linear"}
    counts = r["grid_counts"]
    np.testing.assert_array_equal(counts > 0, np.isfinite(r["grid"]))  # empty cells are NaN
    # the rows spread over the grid: most columns are used, and no corner holds most of them
    assert (counts.sum(axis=0) > 0).mean() > 0.8 and counts[:8, :8].sum() < 0.5 * counts.sum()
    inside = (x >= want[0]) & (x <= want[2]) & (y >= want[1]) & (y <= want[3])
    assert counts.sum() == inside.sum()

    widget.reset_view(full=True)
    assert widget.bounds == pytest.approx((x.min(), y.min(), x.max(), y.max()))
    full = widget.results()["grid_counts"]
    assert full.sum() == len(x) and full[:, :1].sum() > 0.95 * len(x)  # the old default: one column of rows
    widget.reset_button.click()
    assert widget.bounds == pytest.approx(want)
    widget.full_button.click()
    assert widget.bounds == pytest.approx((x.min(), y.min(), x.max(), y.max()))
    assert widget.compile_count == 1
    widget.close()


def _integer_rows_oracle(host, value, bounds, grid):
    """Displayed row j of an integer y axis shows hour ``start + floor(o + (j + .5) s) + .5``
    (float32, as the grid-select shader); x is an exact power-of-two linear axis."""
    w, h = grid
    x0, y0, x1, y1 = bounds
    start = np.floor(y0 + 0.5) - 0.5
    o, s = np.float32(y0 - start), np.float32((y1 - y0) / h)
    src = np.floor(o + (np.arange(h, dtype=np.float32) + np.float32(0.5)) * s)
    row_hour = start + src + 0.5
    px, hour, v = host["x"], host["hour"], host[value].astype(np.float64)
    ok = (px >= x0) & (px <= x1) & (hour >= start) & (hour <= start + h)
    col = np.minimum(np.floor((px[ok] - np.float32(x0)) / np.float32(x1 - x0) * np.float32(w)), w - 1).astype(int)
    counts, means = np.zeros((h, w)), np.full((h, w), np.nan)
    for j, hr in enumerate(row_hour):
        sel = hour[ok] == hr
        counts[j] = np.bincount(col[sel], minlength=w)
        with np.errstate(invalid="ignore"):
            means[j] = np.bincount(col[sel], v[ok][sel], minlength=w) / counts[j]
    return row_hour, counts, means


def test_an_integer_axis_bins_one_cell_per_value_without_empty_stripes(data):
    table, host = data
    widget = make(table, operation="mean")
    assert widget.bounds[1::2] == (-0.5, 23.5)  # whole numbers sit in the middle of their cells
    widget.set_bounds((-4.0, -0.5, 4.0, 23.5))
    r = widget.results()
    assert r["binning"] == {"x": "linear", "y": "integer"}
    row_hour, counts, means = _integer_rows_oracle(host, "skewed", r["bounds"], GRID)
    assert set(row_hour) == set(range(24)) and np.all(np.diff(row_hour) >= 0)  # every hour, in order
    rows_per_hour = np.bincount(row_hour.astype(int))
    assert rows_per_hour.max() - rows_per_hour.min() <= 1  # equal bands (32 rows over 24 hours)
    np.testing.assert_array_equal(r["grid_counts"], counts)
    np.testing.assert_allclose(r["grid"], means, rtol=1e-4, equal_nan=True)
    assert (r["grid_counts"].sum(axis=1) > 0).all()  # no empty stripes between hours

    # the old binning: 32 equal cells over 24 hours leave 8 rows empty
    edges = np.linspace(-0.5, 23.5, GRID[1] + 1)
    assert (np.histogram(host["hour"], edges)[0] == 0).sum() == 8

    widget.set_bounds((-4.0, 2.3, 4.0, 9.8))  # a zoomed view snaps to cells at k - 0.5 too
    r = widget.results()
    row_hour, counts, means = _integer_rows_oracle(host, "skewed", r["bounds"], GRID)
    assert r["binning"]["y"] == "integer" and set(row_hour) >= set(range(3, 10))
    np.testing.assert_array_equal(r["grid_counts"], counts)
    widget.close()


def test_axes_with_more_values_than_cells_stay_linear():
    stats = {"i": ColumnStats(0.0, 99.0, 1.0, 100, robust_lo=0.0, robust_hi=99.0, integer=True),
             "f": ColumnStats(0.0, 1.0, 0.1, 100, robust_lo=0.0, robust_hi=1.0)}
    data = AnalysisData(table=None, stats=stats, group=None, group_labels=[], chunk_lengths=(100,))
    p = AnalysisParameters(data, columns={"x": "i", "y": "f", "value": "f"}, bins=4, max_bins=8, operation="count")
    assert p.bounds == (-0.5, 0.0, 99.5, 1.0)
    cells = p.grid_cells((100, 10))
    assert cells["binning"] == {"x": "integer", "y": "linear"} and cells["bounds"] == (-0.5, 0.0, 99.5, 1.0)
    assert cells["offset"] == [0.0, 0.0] and cells["scale"] == [1.0, 1.0]
    assert p.grid_cells((99, 10))["binning"]["x"] == "linear"  # 100 values, 99 cells
    p.set_bounds((10.2, 0.0, 30.0, 1.0))
    cells = p.grid_cells((50, 10))
    assert cells["bounds"][::2] == (9.5, 59.5) and cells["offset"][0] == pytest.approx(0.7)
    assert cells["scale"][0] == pytest.approx(19.8 / 50)


def test_skewed_positive_values_default_to_log_bins(data):
    table, host = data
    widget = make(table, bins=20)
    v = host["skewed"]
    r = widget.results()
    assert r["scale"] == "log" and widget.scale_toggle.value == "log"
    np.testing.assert_allclose(r["edges"], np.geomspace(v.min(), v.max(), 21), rtol=1e-5)
    want, _ = np.histogram(v, r["edges"].astype(np.float64))
    np.testing.assert_array_equal(r["histogram_counts"], want)
    assert want.sum() == len(v) and (want > 0).sum() >= 18  # log bins spread log-normal data
    linear, _ = np.histogram(v, np.linspace(v.min(), v.max(), 21))
    assert linear[0] + linear[1] > 0.5 * len(v)  # what linear bins would have shown

    for name in ("flat", "signed"):  # symmetric, or not all positive: linear
        widget.set_columns(value=name)
        r = widget.results()
        assert r["scale"] == "linear" and widget.scale_toggle.value == "linear"
        np.testing.assert_array_equal(r["edges"], np.linspace(float(host[name].min()), float(host[name].max()), 21)
                                      .astype(np.float32))
    widget.set_columns(value="skewed")
    assert widget.scale == "log"
    widget.set_scale("linear")  # the toggle still offers both
    assert widget.results()["histogram_counts"].sum() == len(v) and widget.compile_count == 1
    widget.close()


def test_column_stats_at_upload_match_numpy():
    rng = np.random.default_rng(2)
    n = 5000
    values = {"lognormal": rng.lognormal(0.0, 1.0, n), "uniform": rng.uniform(1.0, 9.0, n),
              "signed": rng.lognormal(0.0, 1.0, n) - 0.5, "counts": rng.poisson(3.0, n).astype(np.float64)}
    values["lognormal"][::97] = np.nan
    table = pa.table({k: v.astype(np.float32) for k, v in values.items()} | {"key": np.zeros(n, np.int64)})
    data = prepare_table(request_device(), table, x="uniform", y="counts", value="lognormal")
    try:
        for name, v in values.items():
            f = v.astype(np.float32)
            f = f[np.isfinite(f)]
            stats = data.stats[name]
            assert (stats.robust_lo, stats.robust_hi) == (np.percentile(f, 0.5, method="lower"),
                                                          np.percentile(f, 99.5, method="higher"))
            assert (stats.lo, stats.hi, stats.finite) == (f.min(), f.max(), f.size)
        flags = {name: (s.integer, s.skewed) for name, s in data.stats.items()}
        assert flags == {"lognormal": (False, True), "uniform": (False, False), "signed": (False, False),
                         "counts": (True, False), "key": (True, False)}
    finally:
        data.table.destroy()


def test_parameter_defaults_and_refusals_without_a_gpu():
    stats = {"skewed": ColumnStats(0.1, 90.0, 0.1, 50, robust_lo=0.2, robust_hi=40.0, skewed=True),
             "flat": ColumnStats(2.0, 2.0, 2.0, 50, robust_lo=2.0, robust_hi=2.0),
             "spiky": ColumnStats(-1e6, 1e6, 1.0, 50, robust_lo=5.0, robust_hi=5.0)}
    data = AnalysisData(table=None, stats=stats, group="g", group_labels=["a", "b"], chunk_lengths=(50,))
    p = AnalysisParameters(data, columns={"x": "skewed", "y": "spiky", "value": "skewed"}, bins=4, max_bins=8,
                           operation="mean")
    assert p.scale == "log" and p.edges[0] == np.float32(0.1)
    assert p.bounds == (0.2, -1e6, 40.0, 1e6)  # a collapsed robust range falls back to the extent
    assert p.home_bounds(full=True) == (0.1, -1e6, 90.0, 1e6)
    p.set_columns(y="flat")
    assert p.bounds[1::2] == (1.5, 2.5)  # a constant column is padded
    p.set_columns(value="flat")
    assert p.scale == "linear"
    p.set_group_enabled([True, False])
    assert p.group_enabled.tolist() == [True, False]
    for bad in ([True], [1, 0], "ab"):
        with pytest.raises(ValueError, match="2 booleans"):
            p.set_group_enabled(bad)
    assert p.group_enabled.tolist() == [True, False]


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([1, 2, 3, 199, 200, 201, 1000, 1001, 4097]), seed=st.integers(0, 2**16),
       ties=st.booleans())
def test_robust_range_is_numpys_lower_and_higher_percentile(n, seed, ties):
    rng = np.random.default_rng(seed)
    values = (rng.integers(0, 5, n) if ties else rng.standard_cauchy(n)).astype(np.float32)
    assert robust_range(values) == (np.percentile(values, 0.5, method="lower"),
                                    np.percentile(values, 99.5, method="higher"))
