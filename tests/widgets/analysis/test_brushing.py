"""DataAnalysis brushing through canvas events: a drag across the histogram
sets the value range (whole bins), a click on a group bar toggles that group
in the mask that filters every panel; both are buffer writes (one
compilation), checked against numpy."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.widgets.analysis.brushing import Brushing, bins_value_range
from gpuviz.widgets.analysis.render import panel_rects
from gpuviz.widgets.analysis.widget import DataAnalysis

GRID = (16, 16)
SIZE = (400, 240)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    v = rng.normal(10.0, 3.0, n).astype(np.float32)
    g = rng.choice(["north", "south", "east", "west"], n).astype(object)
    g[rng.random(n) < 0.02] = None
    table = pa.Table.from_batches([pa.record_batch({"x": x[a:b], "y": y[a:b], "v": v[a:b],
                                                    "g": pa.array(g[a:b], type=pa.string())})
                                   for a, b in ((0, 1000), (1000, 1000), (1000, n))])
    return table, {"x": x, "y": y, "v": v, "g": g}


def make(table):
    widget = DataAnalysis(table, x="x", y="y", value="v", group="g", bins=12, max_bins=32, grid_size=GRID,
                          operation="count", size=SIZE)
    widget.set_bounds((0.0, 0.0, 1.0, 1.0))
    canvas = widget.canvas
    canvas.send = lambda msg, buffers=None: None
    canvas._rfb_handle_msg(canvas, {"type": "resize", "width": SIZE[0], "height": SIZE[1], "pixel_ratio": 1}, [])
    return widget


def send(widget, kind, x, y, *, buttons=(1,), **extra):
    canvas = widget.canvas
    message = {"type": kind, "x": x, "y": y, "button": 1 if buttons else 0, "buttons": list(buttons),
               "modifiers": [], "ntouches": 0, "touches": {}, "timestamp": 0, **extra}
    canvas._rfb_handle_msg(canvas, message, [])
    canvas._process_events()


def rect(name):
    return panel_rects(*SIZE, True)[name]


def slot_x(name, k, count):
    rx, _, rw, _ = rect(name)
    return rx + (k + 0.5) / count * rw


def check_views(r, host, *, value_range, enabled):
    """Histogram, group and heatmap counts against numpy for one value range and group mask."""
    v, g = host["v"], host["g"]
    lo, hi = np.float32(value_range[0]), np.float32(value_range[1])
    labels = sorted({s for s in g if s is not None})
    keep_group = np.array([s is None or enabled[labels.index(s)] for s in g])
    sel = (v >= lo) & (v <= hi) & keep_group
    np.testing.assert_array_equal(r["histogram_counts"], np.histogram(v[sel], r["edges"].astype(np.float64))[0])
    np.testing.assert_array_equal(r["group_counts"], [np.sum(sel & (g == s)) for s in labels])
    assert r["group_overflow"] == np.sum(sel & np.array([s is None for s in g]))
    assert r["grid_counts"].sum() == sel.sum()  # every point lies inside the unit bounds


def test_dragging_across_the_histogram_sets_the_value_range(data):
    table, host = data
    widget = make(table)
    full = widget.results()
    _, hy, _, hh = rect("histogram")
    mid = hy + hh / 2
    send(widget, "pointer_down", slot_x("histogram", 3, 12), mid)
    send(widget, "pointer_move", slot_x("histogram", 6, 12), mid)
    assert widget.value_range == bins_value_range(full["edges"], 3, 6)  # live while dragging
    send(widget, "pointer_move", slot_x("histogram", 8, 12), mid + hh)  # leaving the panel keeps brushing
    send(widget, "pointer_up", slot_x("histogram", 8, 12), mid + hh, buttons=())
    r = widget.results()
    assert r["value_range"] == bins_value_range(full["edges"], 3, 8) == widget.range_slider.value
    counts = r["histogram_counts"]
    np.testing.assert_array_equal(counts[3:9], full["histogram_counts"][3:9])  # whole bins kept
    assert counts[:3].sum() == 0 and counts[9:].sum() == 0
    check_views(r, host, value_range=r["value_range"], enabled=[True] * 4)
    # the browser snaps the kernel's range onto the slider's steps and sends it back: not a user's change
    slider, brushed = widget.range_slider, widget.value_range
    snapped = tuple(slider.min + round((v - slider.min) / slider.step) * slider.step for v in brushed)
    assert snapped != brushed
    slider.value = snapped
    assert widget.value_range == brushed
    slider.value = (snapped[0] + slider.step, snapped[1])  # a handle moved by one step is
    assert widget.value_range == pytest.approx((snapped[0] + slider.step, snapped[1]))
    widget.set_value_range(brushed)
    # a snap of an older range arriving after a newer one (a brush sends one range per move)
    older = bins_value_range(full["edges"], 3, 5)
    widget.set_value_range(older)
    widget.set_value_range(brushed)
    slider.value = tuple(slider.min + round((v - slider.min) / slider.step) * slider.step for v in older)
    assert widget.value_range == brushed and slider.value == pytest.approx(brushed)

    send(widget, "pointer_down", slot_x("histogram", 11, 12), mid)  # the last bin keeps its upper edge
    send(widget, "pointer_move", slot_x("histogram", 10, 12), mid)  # dragging leftwards
    send(widget, "pointer_up", slot_x("histogram", 10, 12), mid, buttons=())
    assert widget.value_range == (float(full["edges"][10]), float(full["edges"][12]))
    assert widget.results()["histogram_counts"][10:].tolist() == full["histogram_counts"][10:].tolist()

    send(widget, "double_click", slot_x("histogram", 5, 12), mid, buttons=())  # back to the whole extent
    assert widget.value_range == (float(host["v"].min()), float(host["v"].max()))
    np.testing.assert_array_equal(widget.results()["histogram_counts"], full["histogram_counts"])
    assert widget.bounds == (0.0, 0.0, 1.0, 1.0)  # brushing never pans the heatmap
    assert widget.compile_count == 1
    widget.close()


def test_clicking_a_group_bar_toggles_it_in_every_panel(data):
    table, host = data
    widget = make(table)
    full = widget.results()
    assert full["group_labels"] == ["east", "north", "south", "west"] and full["group_mask"].all()
    _, gy, _, gh = rect("groups")
    x, y = slot_x("groups", 1, 4), gy + gh / 2
    send(widget, "pointer_down", x, y)
    send(widget, "pointer_up", x + 1, y, buttons=())
    r = widget.results()
    assert r["group_mask"].tolist() == [True, False, True, True] and r["group_counts"][1] == 0
    assert np.isnan(r["group_means"][1]) and r["group_counts"][0] == full["group_counts"][0]
    check_views(r, host, value_range=r["value_range"], enabled=[True, False, True, True])
    assert "<s>north</s>" in widget.legend.value

    send(widget, "pointer_down", slot_x("groups", 3, 4), y)  # a second group, with a value range too
    send(widget, "pointer_up", slot_x("groups", 3, 4), y, buttons=())
    widget.set_value_range((8.0, 12.0))
    check_views(widget.results(), host, value_range=(8.0, 12.0), enabled=[True, False, True, False])

    send(widget, "pointer_down", x, y)  # a drag is no click: nothing toggles
    send(widget, "pointer_move", x + 40, y)
    send(widget, "pointer_up", x + 40, y, buttons=())
    assert widget.group_mask.tolist() == [True, False, True, False]
    send(widget, "double_click", x, y, buttons=())  # every group again
    assert widget.group_mask.all()
    widget.set_value_range(full["value_range"])
    r = widget.results()
    np.testing.assert_array_equal(r["group_counts"], full["group_counts"])
    np.testing.assert_array_equal(r["histogram_counts"], full["histogram_counts"])

    widget.set_group_mask([False, False, False, False])  # nothing left but the null group's rows
    check_views(widget.results(), host, value_range=full["value_range"], enabled=[False] * 4)
    with pytest.raises(ValueError, match="4 booleans"):
        widget.set_group_mask([True, False])
    with pytest.raises(ValueError, match="group index"):
        widget.toggle_group(4)
    assert widget.compile_count == 1
    widget.close()


def test_bin_ranges_keep_exactly_the_chosen_bins():
    edges = np.float32([0.0, 0.1, 0.2, 0.7, 1.0])
    values = np.float32(np.linspace(-0.1, 1.1, 2001))
    values = np.concatenate([values, edges])  # the edges themselves too
    for first in range(4):
        for last in range(first, 4):
            lo, hi = bins_value_range(edges, last, first)  # order does not matter
            kept = values[(values >= np.float32(lo)) & (values <= np.float32(hi))]
            bins = np.searchsorted(edges, kept, side="right") - 1
            bins[kept == edges[-1]] = 3
            assert bins.min() == first and bins.max() == last
            want = np.histogram(values, edges.astype(np.float64))[0][first:last + 1].sum()
            assert len(kept) == want


def test_brushing_ignores_other_buttons_and_panels():
    rects = panel_rects(*SIZE, True)
    brushing, edges = Brushing(), np.float32(np.arange(13))
    hx, hy, hw, hh = rects["histogram"]
    assert brushing.action({"event_type": "pointer_down", "x": hx + 5, "y": hy + 5, "button": 2}, rects=rects,
                           edges=edges, groups=4) is None
    assert brushing.action({"event_type": "pointer_move", "x": hx + 50, "y": hy + 5}, rects=rects, edges=edges,
                           groups=4) is None
    hm = rects["heatmap"]
    assert brushing.action({"event_type": "pointer_down", "x": hm[0] + 5, "y": hm[1] + 5, "button": 1},
                           rects=rects, edges=edges, groups=4) is None and not brushing.brushing
    gx, gy, _, _ = rects["groups"]
    brushing.action({"event_type": "pointer_down", "x": gx + 2, "y": gy + 2, "button": 1}, rects=rects, edges=edges,
                    groups=0)
    assert brushing.action({"event_type": "pointer_up", "x": gx + 2, "y": gy + 2}, rects=rects, edges=edges,
                           groups=0) is None  # no group column: no toggles
