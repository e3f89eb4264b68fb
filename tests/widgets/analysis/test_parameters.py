"""AnalysisParameters without a GPU: defaults from column extents, the rules
that tie parameters together, and refusals that leave the state unchanged."""

import threading

import numpy as np
import pytest

from gpuviz import GraphValidationError
from gpuviz.widgets.analysis.data import AnalysisData, ColumnStats
from gpuviz.widgets.analysis.parameters import AnalysisParameters

STATS = {"a": ColumnStats(0.0, 4.0, 0.5, 10), "b": ColumnStats(-2.0, 2.0, 1.0, 10),
         "flat": ColumnStats(3.0, 3.0, 3.0, 10), "neg": ColumnStats(-5.0, -1.0, None, 10)}


def make(**columns):
    data = AnalysisData(table=None, stats=STATS, group=None, group_labels=[], chunk_lengths=(10,))
    return AnalysisParameters(data, columns={"x": "a", "y": "b", "value": "a", **columns}, bins=4, max_bins=8,
                              operation="mean")


def test_defaults_are_the_column_extents():
    p = make(y="flat")
    assert p.value_range == (0.0, 4.0) and p.scale == "linear"
    assert p.bounds == (0.0, 3.0 - 0.5, 4.0, 3.0 + 0.5)  # a constant column gets a pad
    np.testing.assert_array_equal(p.edges, np.float32([0, 1, 2, 3, 4]))
    assert len(p.padded_edges) == 9 and p.padded_edges[4] > 4.0  # hi nudged up: it stays in the last real bin


def test_new_columns_reset_what_depends_on_them():
    p = make()
    p.set_bounds((1, 1, 2, 2))
    p.set_value_range((1, 2))
    p.set_columns(value="b")  # value only: bounds stay
    assert p.bounds == (1, 1, 2, 2) and p.value_range == (-2.0, 2.0) and p.edges[0] == -2.0
    p.set_columns(x="b")
    assert p.bounds == (-2.0, -2.0, 2.0, 2.0)
    p.set_scale("log")
    p.set_columns(value="neg")  # no positive values: log bins give way to linear ones
    assert p.scale == "linear" and p.edges[0] == -5.0


def test_bins_replace_custom_edges():
    p = make()
    p.set_edges([0, 1, 3])
    assert (p.bins, p.scale) == (2, "custom") and len(p.padded_edges) == 9
    p.set_bins(3)
    assert (p.bins, p.scale) == (3, "linear") and len(p.edges) == 4


def state(p):
    return (dict(p.columns), p.bins, p.scale, p.operation, p.value_range, p.bounds, p.edges.tolist())


@pytest.mark.parametrize("call", [
    lambda p: p.set_columns(x="missing"), lambda p: p.set_bins(9), lambda p: p.set_bins(True),
    lambda p: p.set_scale("sqrt"), lambda p: p.set_edges([1, 1]), lambda p: p.set_operation("median"),
    lambda p: p.set_value_range((2, 1)), lambda p: p.set_bounds((0, 0, 0, 1)),
    lambda p: p.set_bounds((0, 0, 1e39, 1))])
def test_refused_values_change_nothing(call):
    p = make()
    before = state(p)
    with pytest.raises(GraphValidationError, match="^DataAnalysis "):
        call(p)
    assert state(p) == before


def test_refused_log_bins_keep_the_scale():
    p = make(value="neg")
    before = state(p)
    with pytest.raises(GraphValidationError, match="log bins need positive values"):
        p.set_scale("log")
    assert state(p) == before


class _Owner:
    """The setters AnalysisControls calls, on bare parameters (no GPU), and the lock its callbacks hold."""

    def __init__(self, params):
        self.params, self.controls, self.ranges = params, None, []
        self.call_lock = threading.RLock()

    def set_columns(self, **columns):
        self.params.set_columns(**columns)
        self.controls.sync()

    def set_value_range(self, value_range):
        self.ranges.append(tuple(value_range))
        self.params.set_value_range(value_range)
        self.controls.sync()


def _fare_controls():
    from gpuviz.widgets.analysis.controls import AnalysisControls

    stats = {"fare": ColumnStats(1.98, 120.0, 1.98, 10), "distance": ColumnStats(0.163, 30.97, 0.163, 10)}
    data = AnalysisData(table=None, stats=stats, group=None, group_labels=[], chunk_lengths=(10,))
    params = AnalysisParameters(data, columns={"x": "fare", "y": "distance", "value": "fare"}, bins=4, max_bins=8,
                                operation="mean")
    owner = _Owner(params)
    owner.controls = AnalysisControls(owner, params, data)
    return owner, params, owner.controls


def test_the_range_sliders_echo_of_its_old_handles_is_ignored():
    """Issue 11: after a new value column the browser's slider answers the new
    min / max / step with its old handles clamped into the new bounds (and
    snapped to a step), after the reset. That late value must not become the
    value range; a real move afterwards must."""
    owner, params, controls = _fare_controls()
    slider = controls.range_slider
    assert slider.value == pytest.approx((1.98, 120.0))

    controls.value_dropdown.value = "distance"  # the dropdown, as the browser sets it
    assert params.value_range == (0.163, 30.97) and slider.value == pytest.approx((0.163, 30.97))
    slider.value = (1.98 + 0.003, 30.97)  # echo 1: the old handles snapped to a step grid
    slider.value = (1.98, 30.97)  # echo 2: the old handles clamped into the new bounds
    assert owner.ranges == [] and params.value_range == (0.163, 30.97)
    assert slider.value == pytest.approx((0.163, 30.97))  # shown again, so the browser follows

    slider.value = (5.0, 20.0)  # the user's move ends the watch
    assert owner.ranges == [(5.0, 20.0)] and params.value_range == (5.0, 20.0)
    slider.value = (1.98, 30.97)  # now the same numbers are a real move
    assert owner.ranges[-1] == (1.98, 30.97) and params.value_range == (1.98, 30.97)


def test_the_range_slider_sends_bounds_step_and_value_in_one_message():
    """Bounds, step and value reach the browser together (``hold_sync``), so
    its slider never sees the new bounds with the old handles."""
    _owner, _params, controls = _fare_controls()
    sent = []
    controls.range_slider.send_state = lambda key=None: sent.append(set(key) if key is not None else None)
    controls.value_dropdown.value = "distance"
    assert len(sent) == 1 and {"min", "max", "step", "value"} <= sent[0]
