"""FrustumCulling in a real browser: JupyterLab on 127.0.0.1 and Debian's
Chromium driven by playwright. A small notebook shows a FrustumCulling of a
generated city; a left drag across the canvas must orbit the
camera (the eye turns about the target at the same distance, the target
stays), the visible count must follow the new frustum (numpy oracle in the
kernel), the canvas image must change, and nothing recompiles.
Screenshots and the JupyterLab log go to ``tests/browser/output/``."""

import math
from pathlib import Path

import pytest

from . import lab

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

_SETUP = """\
from gpuviz.widgets.culling.widget import FrustumCulling

culling = FrustumCulling(instances=20000, seed=1, size=(720, 360))
events = []  # what reached the widget (printed when a check fails)
_handle = culling.handle_event
culling.handle_event = lambda event: (events.append({k: event.get(k) for k in ("event_type", "x", "y", "buttons")}),
                                      _handle(event))[1]
culling
"""

_STATE = """\
import json
import time
import numpy as np
from gpuviz.widgets.culling.scene import city_spheres
s = city_spheres(20000, seed=1).astype(np.float64)
p = culling.frustum_planes().astype(np.float64)
oracle = int(((s[:, :3] @ p[:, :3].T + p[:, 3] + s[:, 3:4]) >= 0).all(1).sum())
cam = culling.camera
print("STATE " + json.dumps({"size": list(culling.canvas.get_logical_size()), "eye": list(cam["eye"]),
                             "target": list(cam["target"]), "visible": int(culling.visible_count()),
                             "oracle": oracle, "compile_count": culling.compile_count,
                             "last_event": culling.canvas.interaction.last_event, "now": time.perf_counter(),
                             "reduced": culling.canvas.reduced_frames,
                             "events": [e for e in events if e["event_type"] != "before_draw"][-12:]}))
"""


def culling_busy(state) -> bool:
    """A drag still being delivered: its last event is under a second old in the kernel's clock."""
    return state["now"] - state["last_event"] < 1.0


def _around(eye, target) -> tuple:
    """(distance, azimuth in degrees) of the eye about the target."""
    d = [e - t for e, t in zip(eye, target)]
    return math.sqrt(sum(v * v for v in d)), math.degrees(math.atan2(d[2], d[0]))


def test_drag_orbits_the_camera_in_the_browser(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    name = lab.write_notebook(tmp_path, "culling.ipynb", [_SETUP, 'print("ready")'])
    with (lab.jupyterlab(tmp_path, log=OUTPUT / "jupyterlab-culling.log") as url,
          lab.notebook_page(url, name) as page):
        lab.run_all_cells(page)
        try:
            canvas = page.locator(".gpuviz-canvas img").first
            canvas.wait_for(timeout=lab.budget_ms(300))
            page.wait_for_function(  # the first frame is showing, not the placeholder
                "() => [...document.querySelectorAll('.gpuviz-canvas-placeholder')].every(p => p.style.display"
                " === 'none') && [...document.querySelectorAll('.gpuviz-canvas img')].every(i => i.naturalWidth"
                " > 1)", timeout=lab.budget_ms(300))
            lab.wait_settled(page, canvas)
            before = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
            lab.wait_painted(page, canvas)
            first_image = canvas.screenshot()
            # a left drag across the canvas from its centre (the orbit follows a drag in either view):
            # trusted press and release, moves dispatched in the page (lab.drag_in_page, as the canvas test)
            moves = lab.drag_in_page(page, canvas, 1.5)
            for _ in range(10):  # the events reach the kernel behind the frames it is drawing: wait for them
                lab.wait_settled(page, canvas, quiet_ms=1000)
                dragged = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
                if dragged["eye"] != before["eye"] and not culling_busy(dragged):
                    break
            lab.wait_painted(page, canvas)
            lab.wait_settled(page, canvas)
            dragged_image = canvas.screenshot()
        except Exception:
            page.screenshot(path=str(OUTPUT / "failed-culling.png"), full_page=True)
            raise
        page.screenshot(path=str(OUTPUT / "jupyterlab-culling.png"), full_page=True)
        (OUTPUT / "culling-canvas-before.png").write_bytes(first_image)
        (OUTPUT / "culling-canvas-dragged.png").write_bytes(dragged_image)
    events = [(e["event_type"], e["x"], e["buttons"]) for e in dragged["events"]]
    distance0, azimuth0 = _around(before["eye"], before["target"])
    distance1, azimuth1 = _around(dragged["eye"], dragged["target"])
    assert dragged["target"] == pytest.approx(before["target"]), "an orbit keeps the target"
    assert distance1 == pytest.approx(distance0, rel=1e-4), "an orbit keeps the distance"
    turned = (azimuth1 - azimuth0 + 180) % 360 - 180
    assert abs(turned) > 5, (turned, moves, events, before, dragged)
    for state in (before, dragged):
        assert state["visible"] == pytest.approx(state["oracle"], abs=2), state  # float32 vs float64 at a plane
    assert before["visible"] != dragged["visible"], "the frustum moved over the city"
    assert first_image != dragged_image
    assert dragged["compile_count"] == 1, dragged
