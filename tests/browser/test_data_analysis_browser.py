"""End to end in a real browser: JupyterLab on 127.0.0.1, Debian's Chromium
driven by playwright, the data-analysis notebook run cell by cell, a control
moved and a drag on the canvas; the canvas image must change. Screenshots
are saved under ``tests/browser/output/``."""

from pathlib import Path

import numpy as np
import pytest

from . import lab

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")


def _canvas_pixels(page, path: Path) -> np.ndarray:
    import simplejpeg

    data = page.locator(".jp-OutputArea-output img").first.screenshot(path=str(path), type="jpeg", quality=95)
    return simplejpeg.decode_jpeg(data, colorspace="RGB").astype(np.int16)


def test_control_and_drag_change_the_canvas(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    name = lab.copy_notebook(ROOT / "notebooks" / "04-data-analysis.ipynb", tmp_path)
    with lab.jupyterlab(tmp_path, env={"GPUVIZ_ROWS": "20000"}, log=OUTPUT / "jupyterlab.log") as url:
        with lab.notebook_page(url, name) as page:
            lab.run_all_cells(page)
            # Generous: on the software driver a cold shader cache makes the
            # first compile of the notebook's graph take a minute or more.
            try:
                page.wait_for_selector(".jp-OutputArea-output img", timeout=300_000)
                page.wait_for_selector(".widget-dropdown select", timeout=300_000)
            except Exception:
                page.screenshot(path=str(OUTPUT / "failed.png"), full_page=True)
                raise
            page.wait_for_timeout(3000)  # let the first frames and the lossless redraw land
            before = _canvas_pixels(page, OUTPUT / "canvas-before.jpg")
            assert before.std() > 5, "the canvas shows no content"

            dropdown = page.locator(".widget-dropdown:has-text('heatmap') select").first
            dropdown.wait_for(timeout=120_000)
            options = dropdown.locator("option").all_inner_texts()
            current = dropdown.input_value()
            dropdown.select_option(label=next(o for o in options if o != current))
            page.wait_for_timeout(3000)
            after_control = _canvas_pixels(page, OUTPUT / "canvas-after-control.jpg")
            assert np.abs(after_control - before).mean() > 1.0, "moving a control did not change the canvas"

            lab.drag(page, page.locator(".jp-OutputArea-output img").first, 2.0)
            page.wait_for_timeout(3000)
            after_drag = _canvas_pixels(page, OUTPUT / "canvas-after-drag.jpg")
            assert np.abs(after_drag - after_control).mean() > 1.0, "dragging did not pan the heatmap"
            page.screenshot(path=str(OUTPUT / "jupyterlab.png"), full_page=True)
