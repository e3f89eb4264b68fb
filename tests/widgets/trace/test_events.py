"""The viewer's input handlers are functions from (view state, pointer
state, event) to new states: no viewer, no GPU. Wheel zooms at the cursor,
a drag pans time and rows, keys zoom and pan, a gutter click toggles a
process or thread, a click asks the viewer to pick, a shift-drag draws a
band and asks for a region; the state given is never changed in place."""

import numpy as np
import pytest

from gpuviz.trace.index import TraceIndex
from gpuviz.trace.interaction import TraceViewState
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace.events import PointerState, handle
from gpuviz.widgets.trace.geometry import GUTTER, PROCESS_COLUMN, ROW_HEIGHT, TRACKS_TOP, Geometry

SIZE = (900, 480)


@pytest.fixture(scope="module")
def index():
    return TraceIndex.of(synthetic(spans=600, processes=2, threads_per_process=3, seed=8))


def fresh(index):
    return TraceViewState(window=index.extent, width=1, rows=(0, 0),
                          process_expanded=np.ones(index.process_count, bool),
                          thread_expanded=np.ones(index.thread_count, bool), focus_depth=0)


def run(index, state, events, pointer=None):
    pointer, size, out = pointer or PointerState(), SIZE, None
    for event in events:
        layout = index.row_layout(process_expanded=state.process_expanded, thread_expanded=state.thread_expanded)
        out = handle(state, pointer, event, size=size, layout=layout, extent=index.extent)
        state, pointer, size = out.state, out.pointer, out.size
    return out


def test_wheel_zooms_at_the_cursor_and_keeps_the_time_under_it(index):
    state = fresh(index)
    x = 600.0
    at = Geometry.of(state, SIZE).t_of(x)
    out = run(index, state, [{"event_type": "wheel", "x": x, "y": 200.0, "dy": -100.0}])
    w0, w1 = out.state.window
    assert w1 - w0 < state.window[1] - state.window[0] and out.redraw
    assert abs(Geometry.of(out.state, SIZE).t_of(x) - at) <= 2
    assert state.window == index.extent  # the given state is unchanged


def test_drag_pans_time_and_rows(index):
    state = fresh(index)
    out = run(index, state, [
        {"event_type": "pointer_down", "x": 500.0, "y": 300.0, "button": 1, "buttons": (1,)},
        {"event_type": "pointer_move", "x": 400.0, "y": 300.0 - 2 * ROW_HEIGHT, "buttons": (1,)},
        {"event_type": "pointer_up", "x": 400.0, "y": 300.0 - 2 * ROW_HEIGHT, "buttons": ()}])
    shift = int(round(100 / Geometry.of(state, SIZE).px_per_ns))
    assert out.state.window == (state.window[0] + shift, state.window[1] + shift)
    assert out.state.rows[0] == 2 and out.pointer.drag is None and out.request is None


def test_keys_zoom_pan_and_escape(index):
    state = fresh(index)
    zoomed = run(index, state, [{"event_type": "key_down", "key": "w"}]).state
    assert zoomed.window[1] - zoomed.window[0] < state.window[1] - state.window[0]
    panned = run(index, zoomed, [{"event_type": "key_down", "key": "d"}]).state
    assert panned.window[0] > zoomed.window[0]
    escape = run(index, state, [{"event_type": "key_down", "key": "Escape"}])
    assert escape.request == ("clear_selection",) and escape.state is state
    assert not run(index, state, [{"event_type": "key_down", "key": "q"}]).redraw


def test_gutter_clicks_toggle_a_process_and_a_thread(index):
    state = fresh(index)
    click = {"event_type": "pointer_down", "button": 1, "buttons": (1,)}
    y = TRACKS_TOP + 1.0
    out = run(index, state, [{**click, "x": 10.0, "y": y}, {"event_type": "pointer_up", "x": 10.0, "y": y}])
    assert not out.state.process_expanded[0] and state.process_expanded[0]
    x = PROCESS_COLUMN + 10.0
    out = run(index, state, [{**click, "x": x, "y": y}, {"event_type": "pointer_up", "x": x, "y": y}])
    assert out.state.thread_expanded.sum() == index.thread_count - 1


def test_a_click_asks_to_pick_and_a_shift_drag_for_a_region(index):
    state = fresh(index)
    x, y = GUTTER + 100.0, TRACKS_TOP + 30.0
    out = run(index, state, [{"event_type": "pointer_down", "x": x, "y": y, "button": 1, "buttons": (1,)},
                             {"event_type": "pointer_up", "x": x, "y": y}])
    assert out.request == ("select_at", x, y) and out.state is state
    shift = {"modifiers": ("Shift",), "button": 1}
    moved = run(index, state, [{"event_type": "pointer_down", "x": x, "y": y, "buttons": (1,), **shift},
                               {"event_type": "pointer_move", "x": x + 80, "y": y + 40, "buttons": (1,), **shift}])
    assert moved.pointer.band == (x, y, x + 80, y + 40) and moved.state is state
    out = run(index, state, [{"event_type": "pointer_up", "x": x + 80, "y": y + 40, **shift}], moved.pointer)
    assert out.request[0] == "select_region" and out.pointer.band is None and out.state is state


def test_hover_moves_and_leaving_clear_the_pointer(index):
    state = fresh(index)
    out = run(index, state, [{"event_type": "pointer_move", "x": 500.0, "y": 200.0, "buttons": ()}])
    assert out.pointer.position == (500.0, 200.0) and out.state is state and out.redraw
    out = run(index, state, [{"event_type": "pointer_leave"}], PointerState(position=(1.0, 2.0), hover=7))
    assert out.pointer == PointerState()
    out = run(index, state, [{"event_type": "resize", "width": 10, "height": 10}])
    assert out.size == (int(GUTTER) + 40, int(TRACKS_TOP + 2 * ROW_HEIGHT))
