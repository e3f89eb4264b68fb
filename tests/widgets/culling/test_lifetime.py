"""FrustumCulling's lifetime and threads: close() frees every GPU buffer and
ipywidget the widget made, every public call after it raises
GraphStateError, and calls from two threads never tear a frame."""


import pytest

from gpuviz import GraphStateError
from gpuviz.widgets import FrustumCulling
from tests.widgets.closed import check_closed_refuses_everything
from tests.widgets.lifetime import (check_close_destroys_every_buffer, check_close_during_calls,
                                    check_cycles_leave_nothing, run_threads)

SIZE = (64, 32)


def make(device, instances=500):
    return FrustumCulling(instances=instances, size=SIZE, device=device)


def cycle(device) -> FrustumCulling:
    widget = make(device)
    widget.draw_offscreen(width=SIZE[0], height=SIZE[1])
    widget.close()
    return widget


def test_close_destroys_every_buffer_even_while_the_widget_is_held(device):
    check_close_destroys_every_buffer(lambda: cycle(device), name="FrustumCulling")


def test_twenty_cycles_leave_no_live_buffer_and_no_registered_widget(device):
    check_cycles_leave_nothing(lambda: cycle(device), name="FrustumCulling")


def test_every_public_method_and_setter_raises_graph_state_error_after_close(device):
    widget = cycle(device)
    check_closed_refuses_everything(widget, name="FrustumCulling", calls={
        "set_camera": ((), dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0))),
        "frustum_planes": ((), {}), "visible_count": ((), {}), "visible_ids": ((), {}),
        "pick": ((1, 1), {}), "draw": ((None, None, SIZE), {}), "frame_submitted": ((), {}),
        "handle_event": (({"event_type": "pointer_move", "x": 1.0, "y": 1.0},), {}),
        "draw_offscreen": ((), dict(width=8, height=8)),
    }, values={"culling": False})
    widget.close()  # a second close is harmless



def test_setters_while_another_thread_draws(device):
    widget = make(device)
    widget.instances_dropdown.options = [("500", 500), ("2,000", 2000)]  # small scenes for the software driver
    iterations = 100

    def draw():
        for _ in range(iterations):
            widget.draw_offscreen(width=SIZE[0], height=SIZE[1])

    def set_parameters():
        for i in range(iterations):
            widget.culling = bool(i % 2)
            widget.set_camera(eye=(30.0 + i % 5, 20.0, 30.0), target=(0.0, 0.0, 0.0))
            widget.handle_event({"event_type": "pointer_move", "x": float(i % SIZE[0]), "y": 5.0})
            if i % 10 == 0:  # the selector's callback builds a new scene and graph
                widget.instances_dropdown.value = (500, 2000)[i // 10 % 2]

    try:
        errors = run_threads(draw, set_parameters)
        assert errors == []
        assert widget.culling is True and widget.camera["eye"] == (34.0, 20.0, 30.0)
        assert 0 < widget.visible_count() <= 2000
    finally:
        widget.close()


def test_close_while_another_thread_draws_raises_only_graph_state_error(device):
    widget = make(device)

    def calls(w):
        w.draw_offscreen(width=SIZE[0], height=SIZE[1])
        w.culling = not w.culling

    check_close_during_calls(widget, calls, closed_error=GraphStateError)
    with pytest.raises(GraphStateError, match="FrustumCulling is closed"):
        widget.frame_submitted()