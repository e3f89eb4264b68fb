"""TraceViewer in a real browser: JupyterLab on 127.0.0.1 and Debian's
Chromium driven by playwright. A small notebook shows a TraceViewer of a
synthetic trace; a trusted drag must pan the window by the dragged pixels,
a click on a span must select that span (GPU picking), hovering it must
find it (the picking pass read back through the readback ring),
and the canvas image must change; nothing recompiles. Screenshots and the
JupyterLab log go to ``tests/browser/output/``."""

import json
import warnings
from pathlib import Path

import pytest

from . import lab

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

_SETUP = """\
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace import TraceViewer

trace = synthetic(spans=2000, processes=2, threads_per_process=3, seed=3)
viewer = TraceViewer(trace, size=(900, 480))
events = []  # what reached the widget (printed when a check fails)
_handle = viewer.handle_event
viewer.handle_event = lambda event: (events.append({k: event.get(k) for k in ("event_type", "x", "y", "buttons", "dy")}),
                                     _handle(event))[1]
hovers = []  # (span, pointer) at each frame that had a hover (a pointer_leave clears it)
_draw = viewer.draw
def _traced_draw(*args):
    _draw(*args)
    if viewer._pointer.hover is not None:
        hovers.append((viewer._pointer.hover, viewer._pointer.position))
viewer.draw = _traced_draw
import logging
logged = []  # wgpu / rendercanvas / gpuviz log records (a failed frame would show here)
class _Keep(logging.Handler):
    def emit(self, record):
        logged.append(record.name + ": " + record.getMessage()[:300])
for _name in ("wgpu", "rendercanvas", "gpuviz"):
    logging.getLogger(_name).addHandler(_Keep())
samples = []  # (pointer, span) of every readback sample as it resolves
_sampler = viewer._graph.sampler
_parse = _sampler._parse
def _traced_parse(key, data):
    sample = _parse(key, data)
    samples.append((key[3], sample.hover))
    return sample
_sampler._parse = _traced_parse
viewer
"""

_STATE = """\
import json
size = viewer.canvas.get_logical_size()
target = None
for s in range(trace.span_count):
    r = viewer.span_rect(s)
    if r is not None and r[2] - r[0] > 60 and r[3] < size[1] - 40:
        target = (s, r)
        break
print("STATE " + json.dumps({"size": list(size), "window": list(viewer.time_window),
                             "px_per_ns": viewer._geometry().px_per_ns, "target": target,
                             "selection": viewer.selection.column("id").to_pylist(),
                             "compile_count": viewer.compile_count, "hovers": hovers[-40:],
                             "events": [e for e in events if e["event_type"] not in ("before_draw",)][-12:],
                             "samples": samples[-30:], "logged": logged[-10:]}))
"""


def _hovers_at(state, at):
    """The hovers of the frames drawn while the pointer was at ``at`` (running the state
    cell can scroll the notebook under a resting pointer, so later frames may hover
    another span)."""
    return [span for span, pointer in state["hovers"]
            if pointer is not None and abs(pointer[0] - at[0]) <= 1.5 and abs(pointer[1] - at[1]) <= 1.5]


def test_drag_and_click_in_the_browser(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    name = lab.write_notebook(tmp_path, "trace_viewer.ipynb", [_SETUP, 'print("ready")'])
    with (lab.jupyterlab(tmp_path, log=OUTPUT / "jupyterlab-trace-viewer.log") as url,
          lab.notebook_page(url, name) as page):
        lab.run_all_cells(page)
        try:
            canvas = page.locator(".jp-OutputArea-output img").first
            canvas.wait_for(timeout=lab.budget_ms(300))
            lab.wait_settled(page, canvas)  # the first frames and the resize from the page land
            before = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
            lab.wait_painted(page, canvas)
            first_image = canvas.screenshot()
            box = canvas.bounding_box()
            sx = box["width"] / before["size"][0]
            sy = box["height"] / before["size"][1]
            # a first click on the status line (selects nothing) gives the canvas the pointer
            page.mouse.click(box["x"] + 600 * sx, box["y"] + (before["size"][1] - 6) * sy)
            lab.wait_settled(page, canvas)
            # drag 120 logical pixels to the left in the tracks
            y = box["y"] + 300 * sy
            frames = lab.frame_count(canvas)
            page.mouse.move(box["x"] + 600 * sx, y)
            page.mouse.down()
            page.mouse.move(box["x"] + 540 * sx, y, steps=5)
            page.mouse.move(box["x"] + 480 * sx, y, steps=5)
            page.mouse.up()
            lab.wait_frames(page, canvas, frames)  # the panned frames have drawn
            dragged = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
            lab.wait_painted(page, canvas)
            dragged_image = canvas.screenshot()
            # (no wheel here: playwright's wheel scrolls JupyterLab's notebook panel and no wheel
            # event reached the canvas; the handler's zoom is covered by tests/widgets/trace)
            zoomed = dragged
            box = canvas.bounding_box()
            s, (x0, y0, x1, y1) = zoomed["target"]
            frames = lab.frame_count(canvas)
            page.mouse.click(box["x"] + (x0 + x1) / 2 * sx, box["y"] + (y0 + y1) / 2 * sy)
            lab.wait_frames(page, canvas, frames)  # the selection's frame has drawn
            clicked = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
            lab.wait_painted(page, canvas)
            clicked_image = canvas.screenshot()
            # hover: the frame's picking pass at the pointer, read back by the event loop's trailing poll
            hover_at = ((x0 + x1) / 2 + 4, (y0 + y1) / 2)
            attempts, states = [], []
            for attempt in range(2):
                lab.wait_painted(page, canvas)
                box = canvas.bounding_box()
                if attempt:  # the retry comes from the header row (no span: the hover clears)
                    page.mouse.move(box["x"] + hover_at[0] * sx, box["y"] + 10 * sy)
                    lab.wait_settled(page, canvas)
                frames = lab.frame_count(canvas)
                page.mouse.move(box["x"] + hover_at[0] * sx, box["y"] + hover_at[1] * sy, steps=3)
                # the hover's frames (the tooltip once its sample is read back); the assertions below
                # tell a missing hover apart, so a hover that never redraws only ends the wait
                lab.wait_frames(page, canvas, frames, count=2, quiet_ms=800, timeout=30, required=False)
                hovered_image = canvas.screenshot()  # before running code: that moves the pointer away
                hovered = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
                attempts.append(_hovers_at(hovered, hover_at))
                states.append({k: hovered[k] for k in ("hovers", "samples", "logged", "events")})
                if attempts[-1] and attempts[-1][-1] == s:
                    break
        except Exception:
            page.screenshot(path=str(OUTPUT / "failed-trace-viewer.png"), full_page=True)
            raise
        page.screenshot(path=str(OUTPUT / "jupyterlab-trace-viewer.png"), full_page=True)
    (OUTPUT / "trace-viewer-events.json").write_text(json.dumps(clicked["events"], indent=0))
    shift = dragged["window"][0] - before["window"][0]
    assert shift == pytest.approx(120 / before["px_per_ns"], rel=0.1), (
        shift * before["px_per_ns"], [(e["event_type"], e["x"], e["buttons"]) for e in dragged["events"]])
    assert clicked["selection"] == [s], (zoomed, clicked)
    assert first_image != dragged_image and dragged_image != clicked_image
    assert clicked["compile_count"] == 1, clicked
    (OUTPUT / "trace-viewer-hover-attempts.json").write_text(json.dumps({"span": s, "attempts": attempts, "states": states}))
    if len(attempts) > 1:
        # Seen in about one run in ten here, never offline: moving from the clicked span across
        # another one onto the target, the sample drawn for the target came back with the
        # crossed span. A known bug (see docs/jupyter.md), kept visible here, not hidden.
        warnings.warn(f"first hover read {attempts[0]} for span {s} (samples {states[0]['samples'][-4:]}, "
                      f"log {states[0]['logged']}); the second attempt read {attempts[1]}")
    assert attempts[-1] and attempts[-1][-1] == s, (hover_at, attempts, hovered["samples"], hovered["events"][-4:])
    assert hovered_image != clicked_image  # the tooltip
    (OUTPUT / "trace-viewer-hover.png").write_bytes(hovered_image)
