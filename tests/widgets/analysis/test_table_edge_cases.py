"""DataAnalysis on tables that are legal but unusual: a column named like an
internal one, constant columns beyond float32's resolution, values beyond
float32's range, duplicate column names, and malformed canvas events."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz import GraphTypeError, GraphValidationError
from gpuviz.widgets import DataAnalysis

N = 1500
F32_MAX = float(np.finfo(np.float32).max)


def make(table, **kwargs):
    args = dict(x="x", y="y", value="v", bins=8, max_bins=32, grid_size=(16, 12), size=(320, 200))
    args.update(kwargs)
    return DataAnalysis(table, **args)


@pytest.fixture(scope="module")
def columns():
    rng = np.random.default_rng(33)
    return {"x": rng.random(N).astype(np.float32), "y": rng.random(N).astype(np.float32),
            "v": rng.normal(10.0, 2.0, N), "g": rng.choice(["card", "cash", "app"], N)}


def test_a_user_column_named_like_the_group_codes_keeps_its_values(columns):
    name = "__gpuviz_group_codes__"
    table = pa.table({"x": columns["x"], "y": columns["y"], name: columns["v"], "g": columns["g"]})
    widget = make(table, value=name, group="g")
    try:
        out = widget.results()
        labels = out["group_labels"]
        values = columns["v"].astype(np.float32)
        counts = [int(np.sum(columns["g"] == label)) for label in labels]
        means = [float(values[columns["g"] == label].astype(np.float64).mean()) for label in labels]
        assert out["group_counts"].tolist() == counts
        np.testing.assert_allclose(out["group_means"], means, rtol=1e-5)
        assert out["histogram_counts"].sum() == N
        assert name in widget.value_dropdown.options
    finally:
        widget.close()


@pytest.mark.parametrize("constant", [np.int64(30_000_001), np.float64(1e30), np.int64(2 ** 62 + 7),
                                      np.float64(-3e38)], ids=["30000001", "1e30", "int64-2^62", "-3e38"])
def test_reset_view_on_a_constant_column_beyond_float32_resolution(columns, constant):
    table = pa.table({"x": np.full(N, constant), "y": columns["y"], "v": columns["v"]})
    widget = make(table)
    try:
        stored = float(np.float32(constant))  # the value as uploaded
        for full in (False, True):
            widget.reset_view(full=full)
            x0, _y0, x1, _y1 = widget.bounds
            assert x0 < stored < x1
            out = widget.results()
            rows = out["grid_counts"].sum()
            if not full:  # (the robust y range leaves the extreme rows out)
                assert rows > 0.9 * N
            elif out["binning"]["x"] == "linear":
                assert rows == N
            else:  # an integer-binned axis shows each value over a band of displayed cells
                assert rows >= N
        for button in (widget.reset_button, widget.full_button):
            button.click()
            assert widget.status.value == ""
    finally:
        widget.close()


def test_values_beyond_float32_range_are_counted_as_overflow(columns):
    values = columns["v"].copy()
    values[:7] = 1e39
    values[7:10] = -1e39
    values[10] = np.inf  # an infinity is not an overflow
    table = pa.table({"x": columns["x"], "y": columns["y"], "v": values, "w": columns["v"]})
    widget = make(table)
    try:
        assert "overflow" in widget.status.value and "10 of <i>v</i>" in widget.status.value
        assert widget.results()["histogram_counts"].sum() == N - 11
        widget.set_columns(value="w")
        assert widget.status.value == ""
        widget.value_dropdown.value = "v"  # the status line of the controls says it again
        assert "10 of <i>v</i>" in widget.status.value
    finally:
        widget.close()


def test_a_column_with_only_values_beyond_float32_range_is_refused_saying_so(columns):
    values = np.where(np.arange(N) % 2 == 0, 1e39, np.nan)
    table = pa.table({"x": columns["x"], "y": columns["y"], "v": values})
    with pytest.raises(GraphValidationError, match=f"{N // 2} finite beyond float32's range"):
        make(table)


def test_duplicate_column_names_raise_named_errors_or_are_left_out(columns):
    arrays = [pa.array(columns["x"]), pa.array(columns["y"]), pa.array(columns["v"]), pa.array(columns["v"])]
    with pytest.raises(GraphValidationError, match='value= column "v" appears 2 times'):
        make(pa.table(arrays, names=["x", "y", "v", "v"]))
    with pytest.raises(GraphValidationError, match='group= column "g" appears 2 times'):
        make(pa.table(arrays + [pa.array(columns["g"])] * 2, names=["x", "y", "v", "w", "g", "g"]), group="g")
    widget = make(pa.table(arrays + [pa.array(columns["y"])], names=["x", "y", "v", "z", "z"]))
    try:
        assert "z" not in widget.value_dropdown.options
        assert widget.results()["histogram_counts"].sum() == N
    finally:
        widget.close()


def test_events_with_non_numeric_coordinates_raise_named_errors(columns):
    widget = make(pa.table({k: columns[k] for k in ("x", "y", "v")}))
    try:
        with pytest.raises(GraphTypeError, match='event "x" must be a number'):
            widget.handle_event({"event_type": "pointer_move", "x": "12", "y": 4.0})
        with pytest.raises(GraphTypeError, match='event "dy" must be a number'):
            widget.handle_event({"event_type": "wheel", "x": 12.0, "y": 4.0, "dy": None})
        with pytest.raises(GraphValidationError, match='event "y" must be finite'):
            widget.handle_event({"event_type": "pointer_down", "x": 12.0, "y": float("nan"), "button": 1})
        assert widget.handle_event({"event_type": "pointer_move", "x": np.float32(12), "y": 4}) in (True, False)
    finally:
        widget.close()
