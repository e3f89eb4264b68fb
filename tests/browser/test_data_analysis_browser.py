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
                page.wait_for_selector(".jp-OutputArea-output img", timeout=lab.budget_ms(300))
                page.wait_for_selector(".widget-dropdown select", timeout=lab.budget_ms(300))
            except Exception:
                page.screenshot(path=str(OUTPUT / "failed.png"), full_page=True)
                raise
            canvas = page.locator(".jp-OutputArea-output img").first
            lab.wait_painted(page, canvas)  # jupyter_rfb draws only for a visible view
            lab.wait_settled(page, canvas, quiet_ms=1000)  # the first frames and the lossless redraw land
            before = _canvas_pixels(page, OUTPUT / "canvas-before.jpg")
            assert before.std() > 5, "the canvas shows no content"

            dropdown = page.locator(".widget-dropdown:has-text('heatmap') select").first
            dropdown.wait_for(timeout=120_000)
            options = dropdown.locator("option").all_inner_texts()
            current = dropdown.input_value()
            frames = lab.frame_count(canvas)
            dropdown.select_option(label=next(o for o in options if o != current))
            lab.wait_frames(page, canvas, frames, quiet_ms=1000)
            after_control = _canvas_pixels(page, OUTPUT / "canvas-after-control.jpg")
            assert np.abs(after_control - before).mean() > 1.0, "moving a control did not change the canvas"

            # start inside the heatmap's plot area (the left quarter: axes and the colour bar take the rest)
            frames = lab.frame_count(canvas)
            lab.drag(page, canvas, 2.0, at=(0.27, 0.5), reach=0.15)
            lab.wait_frames(page, canvas, frames, quiet_ms=1000)
            after_drag = _canvas_pixels(page, OUTPUT / "canvas-after-drag.jpg")
            assert np.abs(after_drag - after_control).mean() > 1.0, "dragging did not pan the heatmap"
            page.screenshot(path=str(OUTPUT / "jupyterlab.png"), full_page=True)


_RANGE_CHECK = """
import json
r = analysis.results()
d = table.column("distance").to_numpy().astype(np.float32)
finite = d[np.isfinite(d)]
lo, hi = float(finite.min()), float(finite.max())
inside = int(((finite >= np.float32(r["value_range"][0])) & (finite <= np.float32(r["value_range"][1]))).sum())
print("RANGECHECK " + json.dumps({
    "column": r["columns"]["value"], "value_range": [float(v) for v in r["value_range"]],
    "widget_range": [float(v) for v in analysis.value_range],
    "slider": [float(v) for v in analysis.range_slider.value],
    "extent": [lo, hi], "finite": int(finite.size), "inside": inside,
    "histogram": int(r["histogram_counts"].sum()), "groups": int(r["group_counts"].sum())}))
"""


def test_value_dropdown_resets_the_value_range(tmp_path):
    """Switching ``value`` in the page (fare -> distance) must reset the
    value-range filter to the new column's full finite range: the range
    slider's min/max/step change must not be echoed back as a stale range."""
    import json

    OUTPUT.mkdir(exist_ok=True)
    name = lab.copy_notebook(ROOT / "notebooks" / "04-data-analysis.ipynb", tmp_path)
    with (lab.jupyterlab(tmp_path, env={"GPUVIZ_ROWS": "20000"}, log=OUTPUT / "jupyterlab-range.log") as url,
          lab.notebook_page(url, name) as page):
        lab.run_all_cells(page)
        try:
            page.wait_for_selector(".widget-dropdown select", timeout=lab.budget_ms(300))
            dropdown = page.locator(".widget-dropdown:has(label:text-is('value')) select").first
            dropdown.wait_for(timeout=lab.budget_ms(120))
            assert dropdown.input_value() == "fare"  # the notebook's last cells put fare back
            canvas = page.locator(".jp-OutputArea-output img").first
            lab.wait_painted(page, canvas)  # jupyter_rfb draws only for a visible view
            lab.wait_settled(page, canvas)
            frames = lab.frame_count(canvas)
            dropdown.select_option(label="distance")
            # the kernel's reset redraws; any echo from the slider would follow within the quiet time
            lab.wait_frames(page, canvas, frames, quiet_ms=1500)
            text = lab.run_code(page, _RANGE_CHECK, "RANGECHECK", timeout=120)
        except Exception:
            page.screenshot(path=str(OUTPUT / "failed-range.png"), full_page=True)
            raise
        page.screenshot(path=str(OUTPUT / "jupyterlab-range.png"), full_page=True)
    state = json.loads(text[text.index("RANGECHECK ") + len("RANGECHECK "):].strip().splitlines()[0])
    assert state["column"] == "distance"
    lo, hi = state["extent"]
    assert state["value_range"] == pytest.approx([lo, hi], rel=1e-6), state
    assert state["widget_range"] == pytest.approx([lo, hi], rel=1e-6), state
    assert state["slider"] == pytest.approx([lo, hi], rel=1e-6), state
    assert state["inside"] == state["finite"] == state["histogram"] == state["groups"], state
