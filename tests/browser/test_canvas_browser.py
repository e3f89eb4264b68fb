"""GPUCanvas in a real browser (JupyterLab on 127.0.0.1, Debian's Chromium
through playwright): the "compiling…" placeholder until the first frame, the
pending indicator on a slow frame, half-size frames while dragging and the
full-size frame once the pointer is released."""

from pathlib import Path

import pytest

from . import lab
from .fps import SCENE

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

SLOW = '''
import time
class Slow:
    """Every frame takes 0.8 s (the first 3 s): a compile, then slow frames."""
    def __init__(self):
        self.first = True
    def draw(self, encoder, target, size):
        time.sleep(3.0 if self.first else 0.8)
        self.first = False
        rp = encoder.begin_render_pass(color_attachments=[{"view": target, "load_op": "clear", "store_op": "store",
                                                           "clear_value": (0.2, 0.6, 0.3, 1)}])
        rp.end()
slow = GPUCanvas(Slow(), size=(200, 120), placeholder="compiling…")
slow
'''

_WATCH = """() => {
  window.gvSeen = {placeholder: [], pending: [], widths: []};
  const note = () => {
    for (const p of document.querySelectorAll('.gpuviz-canvas-placeholder'))
      window.gvSeen.placeholder.push([p.style.display !== 'none', p.textContent]);
    for (const p of document.querySelectorAll('.gpuviz-canvas-pending'))
      window.gvSeen.pending.push(p.style.display !== 'none');
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                     characterData: true, attributeFilter: ['style']});
  note();
}"""


def _run_all(page) -> None:
    """Run All, again if the kernel missed it (on a loaded machine the first click may come too early)."""
    for _ in range(3):
        lab.run_all_cells(page)
        if page.locator(".jp-InputPrompt:has-text('[ ]')").count() == 0:
            return


def test_placeholder_pending_and_reduced_frames(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    lab.write_notebook(tmp_path, "canvas.ipynb", [SCENE, SLOW])
    env = {"FPS_KIND": "gpuviz", "FPS_W": "480", "FPS_H": "300", "FPS_CANVAS_KWARGS": "{'interaction_scale': 0.5}"}
    with lab.jupyterlab(tmp_path, env=env, log=OUTPUT / "jupyterlab-canvas.log") as url:
        with lab.notebook_page(url, "canvas.ipynb") as page:
            page.evaluate(_WATCH)
            _run_all(page)
            try:
                views = page.locator(".gpuviz-canvas img.renderview-view")
                page.wait_for_function("() => document.querySelectorAll('.gpuviz-canvas').length == 2",
                                       timeout=300_000)
                slow = page.locator(".gpuviz-canvas").last
                slow.scroll_into_view_if_needed()  # jupyter_rfb draws only for a visible view
                # the slow canvas's placeholder shows while its first frame (3 s) is drawn, then goes
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.gpuviz-canvas-placeholder')].every(p => p.style.display"
                    " === 'none') && [...document.querySelectorAll('.gpuviz-canvas img')].every(i => i.naturalWidth"
                    " > 1)", timeout=120_000)
                seen = page.evaluate("window.gvSeen.placeholder")
                assert [True, "compiling…"] in seen, seen

                # a redraw of the slow canvas: predicted at 0.8 s, so the pending indicator shows, then goes
                lab.run_code(page, "slow.request_draw(); print('ASKED')", "ASKED")
                slow.scroll_into_view_if_needed()
                page.wait_for_function("() => window.gvSeen.pending.includes(true)", timeout=60_000)
                page.wait_for_function(
                    "() => [...document.querySelectorAll('.gpuviz-canvas-pending')].every(p => p.style.display"
                    " === 'none')", timeout=60_000)

                # a drag on the first canvas: half-size frames, then one full-size frame after release
                rings = views.first
                lab.wait_painted(page, rings)
                lab.wait_settled(page, rings)
                rings.evaluate("img => { window.gvWidths = []; img.addEventListener('load', "
                               "() => window.gvWidths.push(img.naturalWidth)); }")
                lab.drag_in_page(page, rings, 3.0)
                css = rings.evaluate("img => img.clientWidth")
                ratio = page.evaluate("window.devicePixelRatio")
                # after the release: the full-size settle frame arrives
                page.wait_for_function("full => window.gvWidths.length > 0 && window.gvWidths.at(-1) === full",
                                       arg=int(css * ratio), timeout=lab.budget_ms(60))
                lab.wait_settled(page, rings)
                widths = page.evaluate("window.gvWidths")
                assert widths.count(int(css * ratio * 0.5)) >= 3, (widths, css)  # css: inside the 1 px border
                assert widths[-1] == int(css * ratio), widths  # the last frame is full size
                state = lab.run_code(page, "print('STATE', canvas.reduced_frames, canvas.settle_frames, "
                                           "canvas.render_scale, 'received' in canvas._frame_feedback, "
                                           "canvas._frame_feedback.get('index') == canvas._rfb_frame_index)", "STATE ")
                reduced, settle, scale, own, all_confirmed = state.split("STATE", 1)[1].split()
                assert int(reduced) >= 3 and int(settle) >= 1 and float(scale) == 1.0, state
                # canvas.js confirmed the frames itself (custom messages, with their arrival time), every one
                assert own == "True" and all_confirmed == "True", state
            except Exception:
                page.screenshot(path=str(OUTPUT / "failed-canvas.png"), full_page=True)
                raise
            page.screenshot(path=str(OUTPUT / "canvas.png"), full_page=True)
