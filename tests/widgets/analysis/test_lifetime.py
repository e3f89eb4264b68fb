"""DataAnalysis's lifetime and threads: close() frees every GPU buffer and
ipywidget the widget made, and calls from two threads never tear a frame."""

import threading

import numpy as np
import pyarrow as pa
import pytest

from gpuviz import GraphStateError
from gpuviz.widgets import DataAnalysis
from tests.widgets.lifetime import (check_close_destroys_every_buffer, check_close_during_calls,
                                    check_cycles_leave_nothing, run_threads)

SIZE = (96, 64)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(5)
    n = 2000
    return pa.table({"x": rng.random(n).astype(np.float32), "y": rng.random(n), "v": rng.lognormal(1.0, 0.5, n),
                     "hour": rng.integers(0, 24, n), "pay": rng.choice(["card", "cash", "app"], n)})


def make(table, **kwargs):
    args = dict(x="x", y="y", value="v", group="pay", bins=8, max_bins=32, grid_size=(16, 12), size=SIZE)
    args.update(kwargs)
    return DataAnalysis(table, **args)


def cycle(table) -> DataAnalysis:
    widget = make(table)
    widget.draw_offscreen(width=SIZE[0], height=SIZE[1])
    widget.close()
    return widget


def test_close_destroys_every_buffer_even_while_the_widget_is_held(table):
    widget = check_close_destroys_every_buffer(lambda: cycle(table), name="DataAnalysis")
    assert widget.graph is None


def test_twenty_cycles_leave_no_live_buffer_and_no_registered_widget(table):
    check_cycles_leave_nothing(lambda: cycle(table), name="DataAnalysis")


def test_every_public_method_raises_graph_state_error_after_close(table):
    widget = cycle(table)
    calls = [lambda: widget.set_bins(4), lambda: widget.set_operation("sum"),
             lambda: widget.set_value_range((1.0, 2.0)), lambda: widget.results(),
             lambda: widget.draw_offscreen(width=8, height=8), lambda: widget.reset_view(),
             lambda: widget.handle_event({"event_type": "pointer_move", "x": 1.0, "y": 1.0}),
             lambda: widget.draw(None, None, SIZE), lambda: widget.hover]
    for call in calls:
        with pytest.raises(GraphStateError, match="closed"):
            call()
    widget.close()  # a second close is harmless



def test_setters_while_another_thread_draws(table):
    widget = make(table)
    iterations = 100
    done = threading.Event()

    def draw():
        try:
            for _ in range(iterations):
                widget.draw_offscreen(width=SIZE[0], height=SIZE[1])
        finally:
            done.set()

    def set_parameters():
        for i in range(iterations):
            widget.set_bins(4 + i % 8)
            widget.set_operation(("count", "sum", "mean", "min", "max")[i % 5])
            widget.set_value_range((0.5 + 0.01 * (i % 7), 20.0))
            widget.scale_toggle.value = ("linear", "log")[i % 2]  # an ipywidgets callback, as a browser's
            assert widget.status.value == "", widget.status.value  # (a refused value would show there)

    try:
        errors = run_threads(draw, set_parameters)
        assert errors == []
        assert widget.bins == 4 + (iterations - 1) % 8 and widget.scale == "log"
        assert widget.results()["histogram_counts"].sum() > 0
    finally:
        widget.close()


def test_close_while_another_thread_draws_raises_only_graph_state_error(table):
    widget = make(table)
    check_close_during_calls(widget, lambda w: w.draw_offscreen(width=SIZE[0], height=SIZE[1]),
                             closed_error=GraphStateError)
    with pytest.raises(GraphStateError, match="closed"):
        widget.set_bins(4)