"""GraphInspector in a real browser (JupyterLab on 127.0.0.1, Debian's
Chromium through playwright): it renders, updates after an interaction on
the widget it watches, keeps its sort and expanded rows across updates, and
fits a 360 px panel without horizontal scrolling. Screenshots go to
``tests/browser/output/``."""

import re
from pathlib import Path

import pytest

from . import lab

OUTPUT = Path(__file__).parent / "output"

pytestmark = pytest.mark.skipif(not lab.browser_available(),
                                reason="needs Debian's chromium and the playwright package (make test installs both)")

CELL = '''
import os
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
import numpy as np, pyarrow as pa, ipywidgets as widgets
from IPython.display import display
from gpuviz.widgets import DataAnalysis
rng = np.random.default_rng(3)
n = 4000
table = pa.table({"x_position_with_a_long_name": rng.random(n).astype(np.float32),
                  "y": rng.random(n).astype(np.float32), "v": rng.random(n),
                  "g": pa.array(rng.choice(["a", "b", "c"], n))})
analysis = DataAnalysis(table, x="x_position_with_a_long_name", y="y", value="v", group="g", bins=8,
                        max_bins=16, grid_size=(16, 16), size=(480, 320))
analysis.inspector.refresh_interval = 0.25
panel = widgets.Box([analysis.inspector], layout=widgets.Layout(width="360px", border="1px solid #ccc"))
panel.add_class("inspector-360")
display(analysis.canvas)
display(panel)
'''

_MEASURE = """() => {
  const box = document.querySelector('.inspector-360');
  const root = box.querySelector('.gpuviz-inspector');
  const right = box.getBoundingClientRect().right + 0.5;
  const wide = [...root.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > right)
    .map(e => e.className || e.tagName);
  return {boxWidth: box.getBoundingClientRect().width, boxScroll: box.scrollWidth, boxClient: box.clientWidth,
          rootScroll: root.scrollWidth, rootClient: root.clientWidth, wide: wide.slice(0, 5)};
}"""


def _frames(page) -> int:
    text = page.locator(".inspector-360 .gvi-sub").first.inner_text()
    return int(re.search(r"([\d,]+) frames", text).group(1).replace(",", ""))


def _fits(page) -> dict:
    size = page.evaluate(_MEASURE)
    assert abs(size["boxWidth"] - 360) < 1, size
    assert size["boxScroll"] <= size["boxClient"], size  # no horizontal scrolling in the panel
    assert size["rootScroll"] <= size["rootClient"], size
    assert size["wide"] == [], size  # nothing sticks out past the panel's right edge
    return size


def _wheel_until_updated(page, frames: int) -> int:
    canvas = page.locator(".jp-OutputArea-output img.renderview-view").first
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + 4, box["y"] + 4)  # jupyter_rfb takes wheel events only once the canvas has focus
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)
    for _ in range(3):
        page.mouse.wheel(0, -120)
    page.wait_for_function(
        """(before) => { const t = document.querySelector('.inspector-360 .gvi-sub').innerText;
                         return parseInt(t.match(/([\\d,]+) frames/)[1].replace(/,/g, '')) > before; }""",
        arg=frames, timeout=lab.budget_ms(120))
    return _frames(page)


def test_inspector_renders_updates_and_fits_a_360px_panel(tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    lab.write_notebook(tmp_path, "inspector.ipynb", [CELL])
    with lab.jupyterlab(tmp_path, log=OUTPUT / "jupyterlab-inspector.log") as url:
        with lab.notebook_page(url, "inspector.ipynb") as page:
            lab.run_all_cells(page)
            try:
                page.wait_for_selector(".inspector-360 .gpuviz-inspector .gvi-table tbody tr", timeout=300_000)
                page.wait_for_selector(".jp-OutputArea-output img.renderview-view", timeout=lab.budget_ms(300))
                lab.wait_settled(page, page.locator(".jp-OutputArea-output img.renderview-view").first)
                # the inspector shows the compiled graph's nodes (three or more) once the first frames are in
                page.wait_for_function("() => document.querySelectorAll('.inspector-360 .gvi-row').length >= 3",
                                       timeout=lab.budget_ms(60))
                rows = page.locator(".inspector-360 .gvi-row")
                assert rows.count() >= 3
                assert page.locator(".inspector-360 .gvi-timeline .gvi-seg").count() == rows.count()
                assert page.locator(".inspector-360 .gvi-memory .gvi-physical").count() == 1
                assert "compiled 1×" in page.locator(".inspector-360 .gvi-sub").first.inner_text()
                _fits(page)

                frames = _wheel_until_updated(page, _frames(page))  # a zoom on the canvas re-encodes the graph

                page.locator(".inspector-360 th[data-sort='cpu_us']").click()
                cpu = [float(t.replace(",", "")) for t in
                       page.locator(".inspector-360 .gvi-row td:nth-child(2)").all_inner_texts() if t != "—"]
                assert len(cpu) >= 3 and cpu == sorted(cpu, reverse=True), cpu
                node = page.locator(".inspector-360 .gvi-row").first.get_attribute("data-node")
                # by name: a live update may re-sort the rows between two calls
                page.locator(f".inspector-360 .gvi-row[data-node='{node}']").click()  # expand its declared uses
                details = page.locator(f".inspector-360 .gvi-row[data-node='{node}'] .gvi-details")
                assert details.count() == 1 and details.inner_text().strip()
                _fits(page)

                _wheel_until_updated(page, frames)  # a live update keeps the sort and the expanded row
                assert page.locator(".inspector-360 th[data-sort='cpu_us']").get_attribute("class").count("gvi-desc")
                assert page.locator(f".inspector-360 .gvi-row[data-node='{node}'] .gvi-details").count() == 1
                _fits(page)
            except Exception:
                page.screenshot(path=str(OUTPUT / "failed-inspector.png"), full_page=True)
                raise
            page.locator(".inspector-360").screenshot(path=str(OUTPUT / "inspector-360.png"))
