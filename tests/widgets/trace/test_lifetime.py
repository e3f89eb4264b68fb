"""TraceViewer's lifetime and threads: close() frees every GPU buffer and
ipywidget the viewer made, every public call after it raises
GraphStateError, and calls from two threads never tear a frame."""

import threading
import time

import pytest

from gpuviz import GraphStateError
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace import TraceViewer
from tests.widgets.closed import check_closed_refuses_everything
from tests.widgets.lifetime import (check_close_destroys_every_buffer, check_close_during_calls,
                                    check_cycles_leave_nothing, run_threads)

SIZE = (300, 160)


@pytest.fixture(scope="module")
def trace():
    return synthetic(spans=300, processes=2, threads_per_process=2, seed=4)


def make(trace, device):
    return TraceViewer(trace, size=SIZE, device=device)


def cycle(trace, device) -> TraceViewer:
    viewer = make(trace, device)
    viewer.draw_offscreen(width=SIZE[0], height=SIZE[1])
    viewer.close()
    return viewer


def test_close_destroys_every_buffer_even_while_the_viewer_is_held(trace, device):
    check_close_destroys_every_buffer(lambda: cycle(trace, device), name="TraceViewer")


def test_twenty_cycles_leave_no_live_buffer_and_no_registered_widget(trace, device):
    check_cycles_leave_nothing(lambda: cycle(trace, device), name="TraceViewer")


def test_every_public_method_and_setter_raises_graph_state_error_after_close(trace, device):
    viewer = cycle(trace, device)
    none = ((), {})
    check_closed_refuses_everything(viewer, name="TraceViewer", calls={
        "reset_view": none, "span_rect": ((0,), {}), "pick": ((1, 1), {}), "select": (([0],), {}),
        "select_region": (((0, 10),), {}), "on_select": ((lambda table: None,), {}), "focus": ((0,), {}),
        "clear_focus": none, "collapse": none, "expand": none, "summary": none,
        "draw": ((None, None, SIZE), {}), "frame_submitted": none,
        "draw_offscreen": ((), dict(width=8, height=8)),
        "handle_event": (({"event_type": "pointer_move", "x": 1.0, "y": 1.0},), {}),
        "zoom_to_span": ((0,), {}),
    }, values={"time_window": (0, 10), "first_row": 0, "focus_mode": "hide", "categories": None,
               "min_duration_ns": 0, "search": "x"})
    with pytest.raises(GraphStateError, match="TraceViewer is closed"):
        viewer.search_count  # a getter that reads the GPU back
    viewer.close()  # a second close is harmless



def test_setters_while_another_thread_draws(trace, device):
    viewer = make(trace, device)
    start, end = viewer.time_window
    iterations = 100

    def draw():
        for _ in range(iterations):
            viewer.draw_offscreen(width=SIZE[0], height=SIZE[1])

    def set_parameters():
        for i in range(iterations):
            viewer.time_window = (start + i * (end - start) // 400, end)
            viewer.focus_mode = ("dim", "hide")[i % 2]
            viewer.search = ("a", None)[i % 2]
            viewer.zoom_to_span(i % 50)
            (viewer.collapse if i % 2 else viewer.expand)()

    try:
        errors = run_threads(draw, set_parameters)
        assert errors == []
        assert viewer.focus_mode == "hide" and viewer.search is None
    finally:
        viewer.close()


def test_setters_from_another_thread_wait_for_the_frame_being_recorded(trace, device):
    """A frame holds the viewer's call lock from draw to submission: setters
    called from another thread meanwhile (an ipywidgets callback, a user's
    thread) apply after it, never between the frame's reads of the view."""
    viewer = make(trace, device)
    start, end = viewer.time_window
    recording, seen = threading.Event(), []
    draw = viewer.draw

    def state():
        return (viewer.time_window, viewer.first_row, viewer.focus_mode, viewer.min_duration_ns, viewer.search)

    def slow_draw(encoder, target_view, size):  # a frame that takes a while to record
        before = state()
        recording.set()
        time.sleep(0.3)
        seen.append((before, state()))
        draw(encoder, target_view, size)

    def set_view():
        recording.wait(timeout=60)
        viewer.time_window = (start + 1, end)
        viewer.first_row = 1
        viewer.focus_mode = "hide"
        viewer.min_duration_ns = 5
        viewer.search = "a"

    viewer.draw = slow_draw
    try:
        errors = run_threads(lambda: viewer.draw_offscreen(width=SIZE[0], height=SIZE[1]), set_view)
        assert errors == []
        assert seen and all(before == after for before, after in seen), seen
        assert state() == ((start + 1, end), 1, "hide", 5, "a")
    finally:
        del viewer.draw
        viewer.close()


def test_close_while_another_thread_draws_raises_only_graph_state_error(trace, device):
    viewer = make(trace, device)

    def calls(v):
        v.draw_offscreen(width=SIZE[0], height=SIZE[1])
        v.focus_mode = "dim"

    check_close_during_calls(viewer, calls, closed_error=GraphStateError)
    with pytest.raises(GraphStateError, match="TraceViewer is closed"):
        viewer.zoom_to_span(0)