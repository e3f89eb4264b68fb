"""gpuviz.show and the GPU side panel in a real browser: JupyterLab and
Notebook 7 on 127.0.0.1, Debian's Chromium driven by playwright.

A GPUCanvas whose drawable clears to one colour (another once it receives
a pointer press) is shown with ``gpuviz.show``: the panel's view must
receive frames of that colour and send input back (the colour changes, the
kernel counts the press). Screenshots go to ``tests/browser/output/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from . import lab

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

SETUP = '''
from gpuviz.widgets.canvas import GPUCanvas
from gpuviz.widgets.show import show

class Flat:
    """Clears to red; to blue after a pointer press (counted)."""
    def __init__(self):
        self.colour, self.presses = (0.9, 0.2, 0.1, 1.0), 0
    def draw(self, encoder, view, size):
        encoder.begin_render_pass(color_attachments=[{"view": view, "load_op": "clear", "store_op": "store",
                                                      "clear_value": self.colour}]).end()
    def handle_event(self, event):
        if event["event_type"] == "pointer_down":
            self.presses += 1
            self.colour = (0.1, 0.3, 0.9, 1.0)
            return True
        return False

flat = Flat()
canvas = GPUCanvas(flat, size=(320, 200))
'''

# A one-node compiled graph held by the drawable (as gpuviz widgets hold theirs): the GPU panel lists it.
GRAPH = '''
import numpy as np
from gpuviz import GPUCommandGraph, GPUData
graph = GPUCommandGraph(canvas.device, id="copy-graph")
src = graph.import_gpu_data("values", GPUData.from_numpy(canvas.device, np.arange(64, dtype=np.uint32)))
dst = graph.import_gpu_data("out", GPUData.allocate(canvas.device, format="uint32", length=64))
def compile_copy(ctx):
    def encode(encoder, frame):
        encoder.copy_buffer_to_buffer(frame.buffer(src), src.byte_offset, frame.buffer(dst), dst.byte_offset,
                                      src.byte_length)
    return encode
graph.add_copy_node(id="copy", resources=[(src, "copy-source"), (dst, "copy-destination")], compile=compile_copy)
flat.compiled = graph.compile()
'''

RED, BLUE = (230, 51, 26), (26, 77, 230)


@contextlib.contextmanager
def _page(url: str, path: str):
    """A Chromium page on ``url + path`` once its notebook's kernel is idle."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=lab.CHROMIUM, args=lab.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{url}{path}?reset&token={lab.TOKEN}")
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=lab.budget_ms(90))
            page.wait_for_function("() => document.body.dataset.gpuvizExtension !== undefined || "
                                   "document.querySelector('.jp-NotebookPanel') !== null", timeout=lab.budget_ms(60))
            lab.pick_kernel_or_wait_idle(page, ".jp-Notebook-ExecutionIndicator[data-status='idle'], "
                                               "#jp-main-statusbar :text('Idle'), .jp-NotebookKernelStatus-idle, "
                                               "[data-status='idle']")
            yield page
        finally:
            browser.close()


# True once cell ``i``'s prompt shows it queued or run ("[*]:" or "[3]:"), not "[ ]:".
_CELL_STARTED = """i => {
    const prompt = document.querySelectorAll('.jp-Notebook .jp-Cell')[i]?.querySelector('.jp-InputPrompt');
    return prompt !== undefined && prompt !== null && /\\[(\\*|\\d+)\\]/.test(prompt.innerText);
}"""


def _run_cells(page, count: int, timeout: float = 300) -> None:
    """Run the notebook's ``count`` cells (keyboard: works in JupyterLab and
    Notebook 7): select a cell by its prompt, Shift+Enter, and wait until its
    prompt shows it queued or run; a key press the page was not ready for
    (the kernel still connecting) is pressed again. The notebook renders its
    cells lazily: wait until all ``count`` are in the page first."""
    page.wait_for_function("n => document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n", arg=count,
                           timeout=lab.budget_ms(60))
    cells = page.locator(".jp-Notebook .jp-Cell")
    for index in range(count):
        for attempt in range(3):
            lab.dismiss_kernel_dialog(page)  # it can open late and swallow the keys
            try:
                cells.nth(index).locator(".jp-InputPrompt").click(timeout=lab.budget_ms(10))
                page.keyboard.press("Escape")
                page.keyboard.press("Shift+Enter")
                page.wait_for_function(_CELL_STARTED, arg=index, timeout=lab.budget_ms(15))
                break
            except Exception:
                if attempt == 2:
                    raise
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-InputPrompt')].every(p => !p.innerText.includes('*'))",
        timeout=lab.budget_ms(timeout))


# The mean colour of the middle of an image's pixels, read in the page (what the
# view received, whatever covers the element on screen), or null before a real frame.
_FRAME_COLOUR = """img => {
    if (!img.complete || img.naturalWidth < 8 || img.naturalHeight < 8) { return null; }
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(c.width >> 2, c.height >> 2, c.width >> 1, c.height >> 1).data;
    const sum = [0, 0, 0];
    for (let i = 0; i < d.length; i += 4) { sum[0] += d[i]; sum[1] += d[i + 1]; sum[2] += d[i + 2]; }
    return sum.map(v => v / (d.length / 4));
}"""


def _wait_for_frame(page, selector: str, colour, path: Path, timeout_s: float = 120) -> np.ndarray:
    """Wait until ``selector``'s image holds a real frame near ``colour``; returns its mean colour."""
    image = page.locator(selector).first
    image.wait_for(timeout=lab.budget_ms(timeout_s))
    try:
        # polled each second with a resize event first (headless: the canvas measures itself then)
        page.wait_for_function(f"""([img, colour]) => {{
                window.dispatchEvent(new Event('resize'));
                const seen = ({_FRAME_COLOUR})(img);
                return seen !== null && seen.every((v, i) => Math.abs(v - colour[i]) < 20);
            }}""", arg=[image.element_handle(), list(colour)], polling=1000, timeout=lab.budget_ms(timeout_s))
    except Exception:
        seen = image.evaluate(_FRAME_COLOUR)
        page.screenshot(path=str(path.with_name(path.stem + "-page.png")), full_page=True)
        raise AssertionError(f"{selector} never showed a frame of {colour} (last mean colour {seen})") from None
    image.screenshot(path=str(path), type="jpeg", quality=90)
    return np.asarray(image.evaluate(_FRAME_COLOUR))


def _kernel_value(page, expression: str) -> object:
    """``expression`` evaluated in the kernel (a new cell), through JSON."""
    _kernel_value.calls += 1
    marker = f"VALUE{_kernel_value.calls}:"  # unique: an earlier output must not answer
    text = lab.run_code(page, f"import json; print('{marker}' + json.dumps({expression}))", marker)
    return json.loads(text.split(marker, 1)[1].strip().splitlines()[0])


_kernel_value.calls = 0


def _append_and_run(page, code: str) -> None:
    """Append a cell with ``code`` and run it, without waiting for its output."""
    page.locator(".jp-Notebook .jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")


def _open_gpu_panel(page) -> None:
    tab = page.locator(".lm-TabBar-tab[data-id='gpuviz-gpu-panel'], .lm-TabBar-tab[title^='GPU']").first
    tab.click()
    page.wait_for_selector("#gpuviz-gpu-panel", state="visible", timeout=lab.budget_ms(30))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One Jupyter server for JupyterLab (/lab) and Notebook 7 (/notebooks) pages."""
    OUTPUT.mkdir(exist_ok=True)
    root = tmp_path_factory.mktemp("panel")
    with lab.jupyterlab(root, log=OUTPUT / "panel-lab.log") as url:
        yield url, root


def test_split_right_panel_gets_frames_and_input_and_gpu_panel_lists_it(server):
    url, root = server
    name = lab.write_notebook(root, "lab.ipynb",
                              [SETUP, GRAPH, 'show(canvas, where="split-right", title="flat canvas")'])
    with _page(url, f"/lab/tree/{name}") as page:
        _run_cells(page, 3)
        panel = page.locator("#jp-main-dock-panel .gpuviz-ShowPanel")
        panel.wait_for(timeout=lab.budget_ms(120))
        assert panel.get_attribute("data-gpuviz-area") == "main"
        # split-right: the panel sits beside the notebook, both visible
        notebook_box = page.locator(".jp-NotebookPanel").first.bounding_box()
        panel_box = panel.bounding_box()
        assert panel_box["x"] >= notebook_box["x"] + notebook_box["width"] - 5, (notebook_box, panel_box)
        link = page.locator(".gpuviz-ShowLink[data-gpuviz-status='shown']")
        assert "flat canvas" in link.first.inner_text()
        _wait_for_frame(page, ".gpuviz-ShowPanel img", RED, OUTPUT / "panel-before.jpg")

        page.locator(".gpuviz-ShowPanel img").first.click()
        _wait_for_frame(page, ".gpuviz-ShowPanel img", BLUE, OUTPUT / "panel-after-click.jpg")
        assert _kernel_value(page, "flat.presses") >= 1

        model_id = _kernel_value(page, "canvas.model_id")
        _open_gpu_panel(page)
        row = page.locator(f"#gpuviz-gpu-panel [data-gpuviz-model='{model_id}']")
        row.wait_for(timeout=lab.budget_ms(60))
        text = row.inner_text()
        assert "GPUCanvas" in text and "flat canvas" in text, text
        assert re.search(r"\b3\d\d×\d{3}\b", text), f"no canvas size listed: {text}"  # the view's CSS size
        assert model_id[:8] in text, text
        graph = page.locator("#gpuviz-gpu-panel [data-gpuviz-graph='copy-graph']")
        graph.wait_for(timeout=lab.budget_ms(30))
        assert "1 node ·" in graph.inner_text() and "1 pass ·" in graph.inner_text(), graph.inner_text()
        assert re.search(r"last frame \d+\.\d+ ms \(kernel frame\)", text), text  # the canvas's measured cost
        # opening the graph shows an inspector of it in a second panel
        graph.locator("button:has-text('open')").click()
        page.wait_for_function("() => document.querySelectorAll('.gpuviz-ShowPanel').length === 2",
                               timeout=lab.budget_ms(60))
        models = page.eval_on_selector_all(".gpuviz-ShowPanel", "els => els.map(e => e.dataset.gpuvizModel)")
        assert len(set(models)) == 2 and model_id in models, models
        tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab").all_inner_texts()
        assert any("inspector · copy-graph" in tab for tab in tabs), tabs
        page.screenshot(path=str(OUTPUT / "panel-lab.png"))

        # the same widget inline at once: a second view of the same model
        lab.run_code(page, "display(canvas); print('INLINE')", "INLINE")
        _wait_for_frame(page, ".jp-OutputArea-output img", BLUE, OUTPUT / "panel-inline.jpg")
        assert page.locator(".gpuviz-ShowPanel img").count() == 1

        # the other places: the right side panel, a tab beside the notebook, a split below it
        # (the new tab is brought forward, hiding the notebook: wait for the panels, not for the output)
        _append_and_run(page, 'show(canvas, where="right", title="right view"); show(canvas, where="split-bottom", '
                              'title="bottom view"); show(canvas, where="tab", title="tab view")')
        page.wait_for_function("() => document.querySelectorAll('.gpuviz-ShowPanel').length === 5",
                               timeout=lab.budget_ms(60))
        right = page.locator(".gpuviz-ShowPanel[data-gpuviz-area='right']")
        assert right.count() == 1 and page.locator("#jp-right-stack .gpuviz-ShowPanel").count() == 1
        notebook_bar = page.locator(".lm-TabBar:has(.lm-TabBar-tab:has-text('lab.ipynb'))")
        assert notebook_bar.locator(".lm-TabBar-tab:has-text('tab view')").count() == 1
        bottom_tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab:has-text('bottom view')")
        assert bottom_tab.bounding_box()["y"] > notebook_bar.bounding_box()["y"] + 100, "split-bottom is not below"
        _wait_for_frame(page, ".gpuviz-ShowPanel[data-gpuviz-area='right'] img", BLUE, OUTPUT / "panel-right.jpg")
        page.screenshot(path=str(OUTPUT / "panel-lab-places.png"))


def test_notebook7_falls_back_to_the_right_panel(server):
    url, root = server
    name = lab.write_notebook(root, "notebook7.ipynb",
                              [SETUP, 'show(canvas, where="split-right", title="flat canvas")'])
    with _page(url, f"/notebooks/{name}") as page:
        assert page.locator("#main-panel, .jp-NotebookPanel").count()
        _run_cells(page, 2)
        panel = page.locator(".gpuviz-ShowPanel")
        panel.wait_for(timeout=lab.budget_ms(120))
        assert panel.get_attribute("data-gpuviz-area") == "right"
        link = page.locator(".gpuviz-ShowLink[data-gpuviz-status='shown']").first
        assert "right panel" in link.inner_text() and "no split-right here" in link.inner_text()
        _wait_for_frame(page, ".gpuviz-ShowPanel img", RED, OUTPUT / "panel-nb7-before.jpg")
        page.locator(".gpuviz-ShowPanel img").first.click()
        _wait_for_frame(page, ".gpuviz-ShowPanel img", BLUE, OUTPUT / "panel-nb7-after-click.jpg")
        page.screenshot(path=str(OUTPUT / "panel-notebook7.png"))


def test_without_the_extension_show_displays_inline_with_a_note(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    config = tmp_path / "config"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config))
    jupyter = Path(sys.executable).with_name("jupyter")
    subprocess.run([str(jupyter), "labextension", "disable", "--level=user", "gpuviz"], env=env, check=True,
                   capture_output=True)
    listing = subprocess.run([str(jupyter), "labextension", "list"], env=env, capture_output=True, text=True)
    assert "gpuviz" in listing.stderr + listing.stdout and "disabled" in (listing.stderr + listing.stdout)
    root = tmp_path / "root"
    name = lab.write_notebook(root, "panel.ipynb", [SETUP, 'show(canvas, where="split-right", title="flat canvas")'])
    with lab.jupyterlab(root, env={"JUPYTER_CONFIG_DIR": str(config)}, log=OUTPUT / "panel-fallback.log") as url:
        with _page(url, f"/lab/tree/{name}") as page:
            _run_cells(page, 2)
            note = page.locator(".jp-OutputArea-output:has-text('no gpuviz extension in this front end')")
            try:
                note.wait_for(timeout=lab.budget_ms(120))
            finally:
                page.screenshot(path=str(OUTPUT / "panel-fallback.png"))
            _wait_for_frame(page, ".jp-OutputArea-output img", RED, OUTPUT / "panel-fallback.jpg")
            assert page.locator(".gpuviz-ShowPanel").count() == 0
            assert page.locator("body[data-gpuviz-extension]").count() == 0
