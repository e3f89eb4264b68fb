"""PanZoom without a canvas: the bounds each event asks for."""

import pytest

from gpuviz.widgets.analysis.interaction import ZOOM_PER_WHEEL_UNIT, PanZoom

RECT = (10, 20, 200, 100)  # heatmap panel: x, y, w, h in canvas pixels
BOUNDS = (0.0, 0.0, 4.0, 2.0)
HOME = (-1.0, -1.0, 1.0, 1.0)


def ask(pan_zoom, kind, x, y, bounds=BOUNDS, **extra):
    return pan_zoom.bounds_after({"event_type": kind, "x": x, "y": y, **extra}, rect=RECT, bounds=bounds, home=HOME)


def test_a_drag_moves_the_grabbed_point_with_the_pointer():
    pz = PanZoom()
    assert ask(pz, "pointer_down", 110, 70, button=1) is None
    # a quarter of the panel left and a fifth up: the view moves right and down by that much of the bounds
    assert ask(pz, "pointer_move", 60, 50) == pytest.approx((1.0, -0.4, 5.0, 1.6))
    assert ask(pz, "pointer_move", 310, 70) == pytest.approx((-4.0, 0.0, 0.0, 2.0))  # outside the panel: still panning
    assert ask(pz, "pointer_up", 310, 70) is None
    assert ask(pz, "pointer_move", 60, 50) is None  # no drag in progress


def test_drags_start_only_inside_with_the_primary_button():
    pz = PanZoom()
    ask(pz, "pointer_down", 5, 70, button=1)  # left of the panel
    assert ask(pz, "pointer_move", 60, 50) is None
    ask(pz, "pointer_down", 110, 70, button=2)
    assert ask(pz, "pointer_move", 60, 50) is None


def test_the_wheel_zooms_around_the_pointer_and_a_double_click_goes_home():
    pz = PanZoom()
    factor = ZOOM_PER_WHEEL_UNIT ** 100
    x0, y0, x1, y1 = ask(pz, "wheel", 60, 95, dy=100)  # pointer at (1.0, 0.5) in data space
    assert (x1 - x0, y1 - y0) == pytest.approx((4.0 * factor, 2.0 * factor))
    assert (1.0 - x0) / (x1 - x0) == pytest.approx(0.25) and (0.5 - y0) / (y1 - y0) == pytest.approx(0.25)
    assert ask(pz, "wheel", 300, 95, dy=100) is None  # outside the panel
    assert ask(pz, "double_click", 60, 95) == HOME
    assert ask(pz, "key_down", 60, 95) is None
