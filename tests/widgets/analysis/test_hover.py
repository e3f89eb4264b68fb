"""DataAnalysis hover: the value under the cursor read back through a
GPUReadbackRing without waiting (heatmap cell value and rows, histogram bin
count and CDF, group rows and mean), the tooltip text the drawing gets, its
refresh after a change, and the cursor over interactive areas; every value
against results()."""

import time

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.graph.readback_slot import ReadbackSlot
from gpuviz.render.number_format import format_number
from gpuviz.widgets.analysis.render import panel_rects
from gpuviz.widgets.analysis.widget import DataAnalysis

GRID = (16, 12)
SIZE = (400, 240)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(8)
    n = 2500
    return pa.table({"x": rng.random(n).astype(np.float32), "y": rng.random(n).astype(np.float32),
                     "v": rng.normal(5.0, 2.0, n).astype(np.float32), "g": rng.choice(["p", "q", "r"], n)})


@pytest.fixture
def widget(table):
    widget = DataAnalysis(table, x="x", y="y", value="v", group="g", bins=10, max_bins=16, grid_size=GRID,
                          operation="mean", size=SIZE)
    widget.set_bounds((0.0, 0.0, 1.0, 1.0))
    canvas = widget.canvas
    canvas.send = lambda msg, buffers=None: None
    canvas._rfb_handle_msg(canvas, {"type": "resize", "width": SIZE[0], "height": SIZE[1], "pixel_ratio": 1}, [])
    yield widget
    widget.close()


def move(widget, x, y, kind="pointer_move"):
    canvas = widget.canvas
    canvas._rfb_handle_msg(canvas, {"type": kind, "x": x, "y": y, "button": 0, "buttons": [], "modifiers": [],
                                    "ntouches": 0, "touches": {}, "timestamp": 0}, [])
    canvas._process_events()


def settle(widget, panel, index):
    """Draw canvas frames until the hover sample of (panel, index) arrived."""
    for _ in range(400):
        widget.canvas.force_draw()
        hover = widget.hover
        if hover is not None and (hover["panel"], hover["index"]) == (panel, index):
            return hover
        time.sleep(0.005)
    raise AssertionError(f"no hover sample for {panel} {index}")


def at(name, u, v):
    rx, ry, rw, rh = panel_rects(*SIZE, True)[name]
    return rx + u * rw, ry + (1 - v) * rh


def test_heatmap_tooltip_matches_results(widget, monkeypatch):
    waits = []
    read = ReadbackSlot.read

    def recording_read(self, *, wait=True, timeout=None):
        if self.ring.label == "data-analysis-hover":
            waits.append(wait)
        return read(self, wait=wait, timeout=timeout)

    monkeypatch.setattr(ReadbackSlot, "read", recording_read)
    r = widget.results()
    i, j = 5, 7  # the cell at (5.5 / 16, 7.5 / 12) of the unit bounds
    move(widget, *at("heatmap", (i + 0.5) / GRID[0], (j + 0.5) / GRID[1]))
    assert widget.hover is None  # the sample is in flight: the event did not wait for it
    assert widget.canvas.cursor == "crosshair"
    hover = settle(widget, "heatmap", j * GRID[0] + i)
    value, rows = hover["values"]
    assert value == r["grid"][j, i] and rows == r["grid_counts"][j, i] > 0
    x, y, lines = widget._hover  # what the drawing shows
    assert lines == hover["lines"] and (x, y) == pytest.approx(at("heatmap", (i + .5) / 16, (j + .5) / 12))
    assert lines[0] == f"x {format_number(5 / 16, digits=4)} … {format_number(6 / 16, digits=4)}"
    assert lines[1] == f"y {format_number(7 / 12, digits=4)} … {format_number(8 / 12, digits=4)}"
    assert lines[2] == f"mean v: {format_number(float(value), digits=4)}" and lines[3] == f"rows: {rows:,}"
    assert waits and not any(waits)  # every hover read was non-blocking

    widget.set_operation("max")  # a change refreshes the sample of the same cell
    r = widget.results()
    hover = settle(widget, "heatmap", j * GRID[0] + i)
    for _ in range(50):
        if widget.hover["values"][0] == r["grid"][j, i]:
            break
        widget.canvas.force_draw()
        time.sleep(0.005)
    assert widget.hover["values"] == [r["grid"][j, i], r["grid_counts"][j, i]]
    assert widget.hover["lines"][2].startswith("max v: ")

    move(widget, 2, 2)  # outside every panel: no tooltip, default cursor
    assert widget.hover is None and widget._hover is None and widget.canvas.cursor == "default"
    assert widget.compile_count == 1


def test_histogram_and_group_tooltips_match_results(widget):
    r = widget.results()
    b = 3
    move(widget, *at("histogram", (b + 0.5) / 10, 0.5))
    assert widget.canvas.cursor == "ew-resize"
    hover = settle(widget, "histogram", b)
    count, cdf, total = hover["values"]
    assert (count, cdf, total) == (r["histogram_counts"][b], r["cdf"][b], r["cdf"][-1])
    e = r["edges"]
    assert hover["lines"] == [f"v [{format_number(float(e[b]), digits=4)}, {format_number(float(e[b + 1]), digits=4)})",
                              f"rows: {count:,}", f"CDF: {cdf / total:.3f}"]

    move(widget, *at("groups", 2.5 / 3, 0.5))
    assert widget.canvas.cursor == "pointer"
    hover = settle(widget, "groups", 2)
    rows, mean = hover["values"]
    assert rows == r["group_counts"][2] and mean == r["group_means"][2]
    assert hover["lines"] == ["g = r", f"mean v: {format_number(float(mean), digits=4)}", f"rows: {rows:,}"]

    widget.toggle_group(2)  # hidden groups read 0 rows, and say how to show them again
    for _ in range(100):
        widget.canvas.force_draw()
        if widget.hover is not None and widget.hover["values"][0] == 0:
            break
        time.sleep(0.005)
    assert widget.hover["values"][0] == 0 and np.isnan(widget.hover["values"][1])
    assert widget.hover["lines"][0] == "g = r (hidden: click to show)" and widget.hover["lines"][1] == "mean v: empty"
    move(widget, 0, 0, kind="pointer_leave")
    assert widget.hover is None


def test_a_wheel_zoom_refreshes_the_sample_under_the_cursor(widget):
    i, j = 8, 6
    point = at("heatmap", (i + 0.5) / GRID[0], (j + 0.5) / GRID[1])
    move(widget, *point)
    before = settle(widget, "heatmap", j * GRID[0] + i)["values"]
    canvas = widget.canvas
    canvas._rfb_handle_msg(canvas, {"type": "wheel", "x": point[0], "y": point[1], "dx": 0, "dy": 400,
                                    "buttons": [], "modifiers": [], "timestamp": 0}, [])
    canvas._process_events()  # zoom out around the cursor: the cell under it now holds more rows
    for _ in range(200):  # canvas frames only: the zoom's frame, then the refreshed sample
        canvas.force_draw()
        if widget.hover["values"] != before:
            break
        time.sleep(0.005)
    r = widget.results()
    assert widget.hover["values"] == [r["grid"][j, i], r["grid_counts"][j, i]]
    assert widget.hover["values"][1] > before[1] and widget.compile_count == 1
