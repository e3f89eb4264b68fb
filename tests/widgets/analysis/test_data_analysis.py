"""DataAnalysis without a browser: numpy oracles for every view, controls
that never recompile, column overrides, the value-range mask, pan and zoom
through canvas events, offscreen images and bad input."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz import GraphValidationError
from gpuviz.oracles.widgets import analysis_grid, analysis_groups, analysis_selected
from gpuviz.widgets import DataAnalysis
from gpuviz.widgets.analysis.render import panel_rects

GRID = (32, 24)
UNIT = (0.0, 0.0, 1.0, 1.0)  # bounds on which float32 cell arithmetic is exact (power-of-two scaling)
HOT = (0.3, 0.7)  # the dense cluster


@pytest.fixture(scope="module")
def data():
    """Trip-like columns in three uneven record batches: a dense cluster in
    [0, 1]^2 plus a uniform background, a log-normal float64 fare, a distance
    with NaNs and nulls, integer hours and a string payment type with nulls."""
    rng = np.random.default_rng(11)
    n = 3000
    hot = rng.random(n) < 0.5
    px = np.where(hot, HOT[0] + rng.normal(0, 0.02, n), rng.random(n)).clip(0, 1).astype(np.float32)
    py = np.where(hot, HOT[1] + rng.normal(0, 0.02, n), rng.random(n)).clip(0, 1).astype(np.float32)
    fare = rng.lognormal(2.0, 0.6, n) - 1.0  # float64, a few negatives
    dist = rng.lognormal(1.0, 0.5, n).astype(np.float32)
    dist[rng.random(n) < 0.02] = np.nan
    hour = rng.integers(0, 24, n).astype(np.int64)
    pay = rng.choice(["card", "cash", "app"], n).astype(object)
    pay[rng.random(n) < 0.01] = None
    dist_nulls = rng.random(n) < 0.01
    cols = {"px": px, "py": py, "fare": fare, "dist": dist, "hour": hour, "pay": pay}
    cuts = [0, 700, 2100, n]
    batches = [pa.record_batch({
        "px": pa.array(px[a:b]), "py": pa.array(py[a:b]), "fare": pa.array(fare[a:b]),
        "dist": pa.array(dist[a:b], mask=dist_nulls[a:b]), "hour": pa.array(hour[a:b]),
        "pay": pa.array(pay[a:b], type=pa.string()), "name": pa.array([f"t{i}" for i in range(a, b)])})
        for a, b in zip(cuts[:-1], cuts[1:])]
    host = {k: np.asarray(v, np.float32) if k != "pay" else v for k, v in cols.items()}
    host["dist"] = np.where(dist_nulls, np.nan, host["dist"]).astype(np.float32)
    return pa.Table.from_batches(batches), host


def make(table, **kwargs):
    args = dict(x="px", y="py", value="fare", group="pay", bins=16, max_bins=64, grid_size=GRID, size=(400, 240))
    args.update(kwargs)
    return DataAnalysis(table, **args)


# ------------------------------------------------------------------ oracles
selected = analysis_selected


def grid_oracle(host, x, y, value, value_range, bounds, operation):
    return analysis_grid(host, x=x, y=y, value=value, value_range=value_range, bounds=bounds, operation=operation,
                         grid_size=GRID)


def group_oracle(host, value, value_range):
    return analysis_groups(host, group="pay", value=value, value_range=value_range)


def check_results(r, host, *, x, y, value, exact_grid=True):
    """Every view of ``r`` against the numpy oracles for its own parameters
    (with ``exact_grid=False`` the grid only by its total count and range)."""
    sel = selected(host, value, r["value_range"])
    want, _ = np.histogram(host[value][sel], r["edges"].astype(np.float64))
    np.testing.assert_array_equal(r["histogram_counts"], want)
    np.testing.assert_array_equal(r["cdf"], np.cumsum(want))
    grid = grid_oracle(host, x, y, value, r["value_range"], r["bounds"], r["operation"])
    if exact_grid:
        np.testing.assert_allclose(r["grid"], grid, rtol=1e-4, atol=1e-3, equal_nan=True)
    else:
        assert np.isfinite(r["grid"]).sum() == pytest.approx(np.isfinite(grid).sum(), abs=8)
        assert np.nanmin(r["grid"]) >= np.nanmin(grid) - 1e-3 and np.nanmax(r["grid"]) <= np.nanmax(grid) + 1e-3
    labels, counts, means, overflow = group_oracle(host, value, r["value_range"])
    assert r["group_labels"] == labels
    np.testing.assert_array_equal(r["group_counts"], counts)
    np.testing.assert_allclose(r["group_means"], means, rtol=1e-4)
    assert r["group_overflow"] == overflow


# -------------------------------------------------------------------- tests
def test_results_match_numpy_for_every_operation(data):
    table, host = data
    widget = make(table)
    widget.set_bounds(UNIT)
    assert widget.data.chunk_lengths == (700, 1400, 900)  # record batches kept
    for operation in ("count", "sum", "mean", "min", "max"):
        widget.set_operation(operation)
        r = widget.results()
        assert r["operation"] == operation and r["grid"].shape == (GRID[1], GRID[0])
        check_results(r, host, x="px", y="py", value="fare")
    fare = host["fare"]
    assert r["value_range"] == (float(fare.min()), float(fare.max()))
    np.testing.assert_array_equal(r["edges"], np.linspace(float(fare.min()), float(fare.max()), 17).astype(np.float32))
    assert r["histogram_counts"].sum() == len(fare)  # the maximum lands in the last real bin
    assert widget.compile_count == 1
    widget.close()


def test_every_control_changes_results_without_recompiling(data):
    table, host = data
    widget = make(table)
    compiled, buffers = widget.graph.compiled, [c.buffer for c in widget.data.table.column("dist").chunks]
    base = widget.results()

    widget.bins_slider.value = 40
    r = widget.results()
    assert len(r["histogram_counts"]) == 40 and len(r["edges"]) == 41
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)

    widget.scale_toggle.value = "log"
    r = widget.results()
    positive = host["fare"][host["fare"] > 0]
    np.testing.assert_allclose(r["edges"], np.geomspace(positive.min(), positive.max(), 41), rtol=1e-5)
    assert r["histogram_counts"].sum() == positive.size  # rows <= 0 fall outside log bins
    assert "40 log bins" in widget.legend.value and all(label in widget.legend.value for label in r["group_labels"])
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)

    widget.operation_dropdown.value = "max"
    r = widget.results()
    assert r["operation"] == "max" and not np.array_equal(r["grid"], base["grid"], equal_nan=True)

    lo, hi = float(np.quantile(host["fare"], 0.2)), float(np.quantile(host["fare"], 0.7))
    widget.range_slider.value = (lo, hi)
    r = widget.results()
    assert r["histogram_counts"].sum() < base["histogram_counts"].sum()
    assert r["value_range"] == pytest.approx(widget.range_slider.value)

    widget.y_dropdown.value = "dist"
    r = widget.results()
    assert r["columns"] == {"x": "px", "y": "dist", "value": "fare"}
    finite_dist = host["dist"][np.isfinite(host["dist"])]  # default bounds: robust percentiles
    assert r["bounds"][1] == pytest.approx(np.percentile(finite_dist, 0.5, method="lower"))
    assert r["bounds"] != base["bounds"]

    widget.set_bounds((0.1, 0.1, 0.2, 0.2))
    widget.reset_button.click()
    assert widget.results()["bounds"] == r["bounds"]

    widget.value_dropdown.value = "dist"
    r = widget.results()
    assert r["value_range"] == (float(np.nanmin(host["dist"])), float(np.nanmax(host["dist"])))
    assert widget.range_slider.value == pytest.approx(r["value_range"])
    check_results(r, host, x="px", y="dist", value="dist", exact_grid=False)

    assert widget.compile_count == 1 and widget.graph.compiled is compiled
    assert [c.buffer for c in widget.data.table.column("dist").chunks] == buffers  # never re-uploaded
    assert widget.frames >= 8 and widget.inspector.frames == widget.frames
    widget.close()


def test_irregular_edges_without_recompiling(data):
    table, host = data
    widget = make(table, bins=8, max_bins=8)
    thresholds = [0.0, 2.5, 5.0, 10.0, 20.0, 50.0]
    widget.set_edges(thresholds)
    r = widget.results()
    assert r["scale"] == "custom" and widget.scale_toggle.value is None and widget.bins_slider.value == 5
    np.testing.assert_array_equal(r["edges"], np.float32(thresholds))
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    assert r["histogram_counts"].sum() == np.sum((host["fare"] >= 0) & (host["fare"] <= 50))
    widget.set_edges([1.0, 50.0])  # one bin, the upper edge included
    assert widget.results()["histogram_counts"].tolist() == [np.sum((host["fare"] >= 1) & (host["fare"] <= 50))]
    for bad, message in (([1.0], "needs 2 to 9 edges"), (list(range(10)), "needs 2 to 9 edges"),
                         ([0.0, 2.0, 1.0], "strictly increasing"), ([0.0, np.nan], "finite")):
        with pytest.raises(ValueError, match=message):
            widget.set_edges(bad)
    widget.bins_slider.value = 4  # back to equal-width bins over the value's extent
    r = widget.results()
    assert r["scale"] == "linear" and widget.scale_toggle.value == "linear" and len(r["edges"]) == 5
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    assert widget.compile_count == 1
    widget.close()


def test_column_switch_matches_a_fresh_widget(data):
    table, host = data
    switched = make(table, operation="sum")
    switched.set_columns(x="py", y="hour", value="dist")
    fresh = make(table, x="py", y="hour", value="dist", operation="sum")
    a, b = switched.results(), fresh.results()
    for key in ("histogram_counts", "cdf", "edges", "group_counts"):
        np.testing.assert_array_equal(a[key], b[key])
    for key in ("bounds", "value_range", "columns", "group_overflow"):
        assert a[key] == b[key]
    np.testing.assert_allclose(a["grid"], b["grid"], rtol=1e-5, equal_nan=True)
    np.testing.assert_allclose(a["group_means"], b["group_means"], rtol=1e-5)
    assert np.isfinite(a["grid"]).sum() > 20
    switched.set_bounds((0.0, 0.0, 1.0, 32.0))  # exact cells: y = hour is an integer in [0, 32)
    check_results(switched.results(), host, x="py", y="hour", value="dist")
    assert switched.compile_count == 1
    switched.close()
    fresh.close()


def test_value_range_mask_updates_every_view(data):
    table, host = data
    widget = make(table, operation="count")
    widget.set_bounds(UNIT)
    full = widget.results()
    lo, hi = 5.0, 12.0
    widget.set_value_range((lo, hi))
    r = widget.results()
    sel = selected(host, "fare", (lo, hi))
    assert r["histogram_counts"].sum() == sel.sum() < full["histogram_counts"].sum()
    assert r["cdf"][-1] == sel.sum()
    assert np.nansum(r["grid"]) == sel.sum() < np.nansum(full["grid"])  # every point lies inside UNIT
    assert r["group_counts"].sum() + r["group_overflow"] == sel.sum() < full["group_counts"].sum() + full[
        "group_overflow"]
    check_results(r, host, x="px", y="py", value="fare")
    widget.set_value_range((100.0, 200.0))  # nothing inside: empty views, no NaN crash
    r = widget.results()
    assert r["histogram_counts"].sum() == 0 and np.isnan(r["grid"]).all() and np.isnan(r["group_means"]).all()
    widget.close()


def _canvas(widget, width=400, height=240):
    canvas = widget.canvas
    canvas.send = lambda msg, buffers=None: None
    canvas._rfb_handle_msg(canvas, {"type": "resize", "width": width, "height": height, "pixel_ratio": 1}, [])
    return canvas


def _event(canvas, kind, x, y, **extra):
    message = {"type": kind, "x": x, "y": y, "button": 1, "buttons": [1], "modifiers": [], "ntouches": 0,
               "touches": {}, "timestamp": 0, **extra}
    canvas._rfb_handle_msg(canvas, message, [])
    canvas._process_events()


def test_drag_pans_and_wheel_zooms_the_heatmap(data):
    table, host = data
    widget = make(table, operation="count")
    home = widget.bounds  # the x / y extents
    canvas = _canvas(widget)
    widget.set_bounds(UNIT)
    hx, hy, hw, hh = panel_rects(400, 240, True)["heatmap"]
    start = (hx + hw / 2, hy + hh / 2)
    _event(canvas, "pointer_down", *start)
    _event(canvas, "pointer_move", *start, button=0, buttons=[])  # what Chromium sends right after the press
    _event(canvas, "pointer_move", start[0] - hw / 4, start[1] + hh / 8)
    _event(canvas, "pointer_up", start[0] - hw / 4, start[1] + hh / 8, buttons=[])
    assert widget.bounds == pytest.approx((0.25, 0.125, 1.25, 1.125))
    frames = widget.frames
    canvas.force_draw()  # the pan re-encodes inside the canvas frame
    assert widget.frames == frames + 1
    r = widget.results()
    assert r["bounds"] == pytest.approx((0.25, 0.125, 1.25, 1.125))
    assert np.nansum(r["grid"]) < len(host["px"])  # part of the data left the view

    _event(canvas, "wheel", *start, dx=0, dy=-200)  # zoom in around the centre
    x0, y0, x1, y1 = widget.bounds
    assert x1 - x0 == pytest.approx(1.0015 ** -200) and (x0 + x1) / 2 == pytest.approx(0.75)
    _event(canvas, "wheel", hx + hw + 20, start[1], dx=0, dy=-200)  # outside the heatmap: ignored
    assert widget.bounds == (x0, y0, x1, y1)
    _event(canvas, "double_click", *start)
    assert widget.bounds == home
    _event(canvas, "pointer_move", *start)  # no drag in progress: nothing moves
    assert widget.bounds == home
    for _ in range(40):  # zooming out stops before float32 overflows; the view stays valid
        _event(canvas, "wheel", *start, dx=0, dy=5000)
    assert np.isfinite(np.float32(widget.bounds)).all() and widget.bounds[2] - widget.bounds[0] > 1e30
    assert np.nansum(widget.results()["grid"]) == len(host["px"])
    assert widget.compile_count == 1
    widget.close()


def _near(image, color, tol=12):
    return (np.abs(image[..., :3].astype(int) - np.array(color)).max(axis=-1) <= tol)


def test_offscreen_image_shows_the_data(data):
    table, host = data
    widget = make(table, operation="count", bins=24)
    widget.set_bounds(UNIT)
    image = widget.draw_offscreen(width=400, height=240)
    assert image.shape == (240, 400, 4) and image.dtype == np.uint8
    rects = panel_rects(400, 240, True)

    hx, hy, hw, hh = rects["heatmap"]
    heat = image[hy:hy + hh, hx:hx + hw, :3].astype(float)
    luminance = heat @ np.array([0.2126, 0.7152, 0.0722])
    py, px = np.unravel_index(np.argmax(luminance), luminance.shape)
    i = int((px + 0.5) / hw * GRID[0])
    j = int((1 - (py + 0.5) / hh) * GRID[1])  # row 0 (ymin) is drawn at the bottom
    counts = grid_oracle(host, "px", "py", "fare", widget.value_range, UNIT, "count")
    assert counts[j, i] == np.nanmax(counts)  # the brightest cell is the densest
    assert abs((i + 0.5) / GRID[0] - HOT[0]) < 0.1 and abs((j + 0.5) / GRID[1] - HOT[1]) < 0.1
    assert _near(image[hy:hy + hh, hx:hx + hw], (26, 26, 31), 3).sum() > 0  # empty cells

    x, y, w, h = rects["histogram"]
    hist = image[y:y + h, x:x + w]
    assert _near(hist, (84, 148, 219)).sum() > 0.05 * w * h  # bars
    assert _near(hist, (255, 158, 41), 30).sum() > w  # the CDF line
    x, y, w, h = rects["groups"]
    groups = image[y:y + h, x:x + w]
    for color in ((230, 89, 89), (89, 191, 115), (153, 115, 217)):  # three group bars
        assert _near(groups, color).sum() > 0.05 * w * h

    canvas = _canvas(widget)
    canvas.force_draw()
    np.testing.assert_array_equal(np.asarray(canvas._last_image), image)  # the canvas shows the same frame
    frames = widget.frames
    widget.operation_dropdown.value = "max"  # one encoding per change, at the canvas's size ...
    canvas.force_draw()  # ... so the canvas frame only copies the plot
    assert widget.frames == frames + 1 and canvas.frames_drawn == 2
    assert not np.array_equal(np.asarray(canvas._last_image), image)
    widget.close()


def test_inputs_through_arrow_variants(data):
    table, host = data
    batch = table.to_batches()[1]
    widget = DataAnalysis(batch, x="px", y="py", value="hour", grid_size=(8, 8), bins=24, max_bins=32)
    r = widget.results()
    assert "group_counts" not in r and r["histogram_counts"].sum() == batch.num_rows
    widget.close()
    coded = table.set_column(5, "pay", pc_dictionary(table.column("pay")))
    widget = make(coded)
    assert widget.results()["group_labels"] == ["app", "card", "cash"]
    widget.close()


class ArrowStream:
    """A DataFrame-like object known only through the Arrow C stream interface (polars, duckdb...)."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def test_arrow_stream_objects_are_accepted(data):
    table, _ = data
    widget = make(ArrowStream(table.select(["px", "py", "fare", "pay"])))
    assert widget.results()["histogram_counts"].sum() == table.num_rows
    widget.close()


def test_pandas_frames_go_through_arrow(data):
    _, host = data
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"a": host["px"], "b": host["py"], "c": host["fare"].astype(np.float64)})
    widget = DataAnalysis(frame, x="a", y="b", value="c", grid_size=(8, 8), max_bins=16, bins=8)
    assert widget.results()["histogram_counts"].sum() == len(frame)
    widget.close()


def pc_dictionary(column):
    return pa.chunked_array([chunk.dictionary_encode() for chunk in column.chunks])


@pytest.mark.parametrize("kwargs, message", [
    (dict(value="nope"), 'value= column "nope" is not in the table \\(columns: px, py, fare, dist, hour, pay, name\\)'),
    (dict(x="name"), 'x= column "name" has type string, not a number \\(numeric columns: px, py, fare, dist, hour\\)'),
    (dict(group="fare"), 'group column "fare" has type double; a group column must hold integers'),
    (dict(group="missing"), 'group= column "missing" is not in the table'),
    (dict(bins=65), "bins must be an integer from 1 to 64"),
    (dict(operation="median"), "operation must be one of count, sum, mean, min, max"),
    (dict(grid_size=(0, 4)), "grid_size must be two positive integers"),
])
def test_bad_arguments_raise_clear_value_errors(data, kwargs, message):
    table, _ = data
    with pytest.raises(ValueError, match=message):
        make(table, **kwargs)


def test_bad_tables_raise_clear_value_errors(data):
    table, _ = data
    with pytest.raises(ValueError, match="empty table \\(0 rows; columns: px, py"):
        make(table.slice(0, 0))
    nan = table.append_column("void", pa.array(np.full(table.num_rows, np.nan, np.float32)))
    with pytest.raises(GraphValidationError, match='column "void" has no finite values'):
        make(nan, value="void")
    with pytest.raises(TypeError, match="expects a pyarrow Table"):
        DataAnalysis([1, 2, 3], x="a", y="b", value="c")
    widget = make(nan)  # an all-NaN column is simply not offered
    assert "void" not in widget.x_dropdown.options and "name" not in widget.value_dropdown.options
    with pytest.raises(ValueError, match='column "void" is not an uploaded numeric column'):
        widget.set_columns(value="void")
    widget.close()


def test_log_scale_without_positive_values_is_refused_in_the_widget(data):
    table, host = data
    negative = table.append_column("neg", pa.array(-np.abs(host["fare"]) - 1))
    widget = make(negative, value="neg")
    with pytest.raises(ValueError, match="log bins need positive values"):
        widget.set_scale("log")
    widget.scale_toggle.value = "log"  # through the control: a message, and the toggle goes back
    assert "log bins need positive values" in widget.status.value
    assert widget.scale_toggle.value == "linear" and widget.scale == "linear"
    widget.bins_slider.value = 8
    assert widget.status.value == "" and len(widget.results()["histogram_counts"]) == 8
    assert widget.compile_count == 1
    widget.close()


def test_inspector_samples_the_group_overflow_count(data):
    table, host = data
    widget = make(table)
    widget.inspector.count_interval = 0
    operations = ("count", "sum", "mean", "min", "max") * 40
    for operation in operations:  # every change encodes, samples the count and polls (never waiting)
        widget.set_operation(operation)
        if widget.inspector.counts:
            break
        widget.device.queue.read_buffer(widget.graph.group_overflow_buffer)  # lets earlier maps complete
    expected = widget.results()["group_overflow"]
    assert expected > 0
    assert widget.inspector.counts == {"rows with an unknown group": expected}
    assert f"rows with an unknown group: <b>{expected:,}</b>" in widget.inspector.to_html()
    widget.close()
