"""Brushing in a real browser: JupyterLab on 127.0.0.1 and Debian's Chromium
driven by playwright. A small notebook (written here, so it does not depend
on notebook 04's cells) shows a DataAnalysis; a trusted mouse drag across
its histogram must set the value range to the bins it covered, and a click
on a group bar must hide that group, both without recompiling. Screenshots
and the JupyterLab log go to ``tests/browser/output/``."""

from pathlib import Path

import pytest

from . import lab

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

_SETUP = """\
import json
import numpy as np
import pyarrow as pa
from gpuviz.widgets.analysis.widget import DataAnalysis
from gpuviz.widgets.analysis.render import panel_rects

rng = np.random.default_rng(4)
n = 20_000
table = pa.table({"x": rng.random(n).astype(np.float32), "y": rng.random(n).astype(np.float32),
                  "v": rng.normal(10.0, 3.0, n).astype(np.float32), "g": rng.choice(["a", "b", "c", "d"], n)})
analysis = DataAnalysis(table, x="x", y="y", value="v", group="g", bins=20, max_bins=64, grid_size=(64, 64),
                        operation="count", size=(720, 420))
analysis
"""

_LAYOUT = """\
size = analysis.canvas.get_logical_size()
print("LAYOUT " + json.dumps({"size": list(size), "rects": panel_rects(*size, True), "bins": analysis.bins}))
"""

_STATE = """\
from gpuviz.widgets.analysis.brushing import bins_value_range
r = analysis.results()
print("STATE " + json.dumps({
    "value_range": list(r["value_range"]), "expected": list(bins_value_range(r["edges"], 4, 10)),
    "nonzero": [int(b) for b in np.nonzero(r["histogram_counts"])[0]],
    "group_mask": [bool(m) for m in r["group_mask"]], "group_counts": [int(c) for c in r["group_counts"]],
    "compile_count": analysis.compile_count}))
"""


def test_dragging_the_histogram_and_clicking_a_bar_filter_in_the_browser(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    name = lab.write_notebook(tmp_path, "brushing.ipynb", [_SETUP, 'print("ready")'])
    with (lab.jupyterlab(tmp_path, log=OUTPUT / "jupyterlab-brushing.log") as url,
          lab.notebook_page(url, name) as page):
        lab.run_all_cells(page)
        try:
            canvas = page.locator(".jp-OutputArea-output img").first
            canvas.wait_for(timeout=lab.budget_ms(300))
            lab.wait_settled(page, canvas)  # the first frames and the resize from the page land
            layout = lab.marked_json(lab.run_code(page, _LAYOUT, "LAYOUT", timeout=120), "LAYOUT ")
            lab.wait_painted(page, canvas)  # run_code scrolled to the new cell
            box = canvas.bounding_box()
            sx, sy = box["width"] / layout["size"][0], box["height"] / layout["size"][1]

            def page_point(rect, u, v):
                x, y, w, h = rect
                return box["x"] + (x + u * w) * sx, box["y"] + (y + v * h) * sy

            hist, bins = layout["rects"]["histogram"], layout["bins"]
            frames = lab.frame_count(canvas)
            page.mouse.move(*page_point(hist, 4.5 / bins, 0.5))
            page.mouse.down()
            page.mouse.move(*page_point(hist, 7.5 / bins, 0.6), steps=6)
            page.mouse.move(*page_point(hist, 10.5 / bins, 0.5), steps=6)
            page.mouse.up()
            page.mouse.click(*page_point(layout["rects"]["groups"], 2.5 / 4, 0.5))  # group "c"
            lab.wait_frames(page, canvas, frames)  # the brushed, filtered frames have drawn
            state = lab.marked_json(lab.run_code(page, _STATE, "STATE", timeout=120), "STATE ")
        except Exception:
            page.screenshot(path=str(OUTPUT / "failed-brushing.png"), full_page=True)
            raise
        page.screenshot(path=str(OUTPUT / "jupyterlab-brushing.png"), full_page=True)
    assert state["value_range"] == state["expected"], state  # exactly: no step-snapped echo from the slider
    assert state["nonzero"] == list(range(4, 11)), state  # exactly the brushed bins keep rows
    assert state["group_mask"] == [True, True, False, True] and state["group_counts"][2] == 0, state
    assert min(state["group_counts"][:2] + state["group_counts"][3:]) > 0, state
    assert state["compile_count"] == 1, state
