"""What DataAnalysis shows agrees with itself: integer value columns bin
whole values, the range controls and the legend show one value range in
one format, labels do not collide or vanish, and the bins slider shows the
bins drawn."""

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.render.overlay import PlotOverlay
from gpuviz.widgets import DataAnalysis
from gpuviz.widgets.analysis.controls import range_text
from gpuviz.widgets.analysis.render import panel_rects

N = 2400
GROUPS = ["app", "card", "cash", "voucher"]
NOTES = ("p1\u2013p99", "min\u2013max", "log scale")  # the colour bar's normalisation notes


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(7)
    return pa.table({"x": rng.random(N).astype(np.float32), "y": rng.random(N).astype(np.float32),
                     "fare": rng.lognormal(2.0, 0.6, N), "tip": rng.lognormal(0.5, 0.8, N),
                     "hour": rng.integers(0, 24, N), "pay": rng.choice(GROUPS, N)})


def make(table, **kwargs):
    args = dict(x="x", y="y", value="fare", group="pay", bins=32, max_bins=64, grid_size=(16, 12), size=(720, 420))
    args.update(kwargs)
    return DataAnalysis(table, **args)


@pytest.fixture
def recorded(monkeypatch):
    """What the overlay is asked to draw: axis layouts and single texts, per overlay."""
    out = {"axes": [], "texts": []}
    axis, text = PlotOverlay.axis, PlotOverlay.text

    def record_axis(self, layout, **kwargs):
        out["axes"].append((self, layout))
        return axis(self, layout, **kwargs)

    def record_text(self, label, **kwargs):
        out["texts"].append((self, label, kwargs))
        return text(self, label, **kwargs)

    monkeypatch.setattr(PlotOverlay, "axis", record_axis)
    monkeypatch.setattr(PlotOverlay, "text", record_text)
    return out


def box(plot, label, x, y, anchor, max_width):
    """The logical box ``(x0, y0, x1, y1)`` of a one-line label."""
    width = plot.measure(label) if max_width is None else min(plot.measure(label), max_width)
    horizontal, vertical = anchor
    x0 = {"left": x, "center": x - width / 2, "right": x - width}[horizontal]
    y0 = {"top": y, "middle": y - plot.line_height / 2, "bottom": y - plot.line_height}[vertical]
    return (x0, y0, x0 + width, y0 + plot.line_height)


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_an_integer_value_column_gets_one_bin_per_value(table):
    widget = make(table, value="hour", bins=48)
    try:
        out = widget.results()
        assert widget.bins == 24 and widget.bins_slider.value == 24
        np.testing.assert_array_equal(out["edges"], np.arange(25) - 0.5)
        hours = table.column("hour").to_numpy()
        np.testing.assert_array_equal(out["histogram_counts"], np.bincount(hours, minlength=24))
        widget.set_bins(10)  # three hours a bin: the fewest whole values per bin giving at most 10 bins
        out = widget.results()
        assert widget.bins == 8
        np.testing.assert_array_equal(out["edges"], np.arange(0, 25, 3) - 0.5)
        np.testing.assert_array_equal(out["histogram_counts"], np.bincount(hours // 3, minlength=8))
    finally:
        widget.close()


def test_after_a_brush_the_range_controls_and_the_legend_show_one_range_in_one_format(table):
    widget = make(table, size=(720, 420))
    try:
        rect = panel_rects(*widget.canvas.get_logical_size(), True)["histogram"]
        x0, y0, w, h = rect
        y = y0 + h / 2
        widget.handle_event({"event_type": "pointer_down", "x": x0 + 0.17 * w, "y": y, "button": 1})
        widget.handle_event({"event_type": "pointer_move", "x": x0 + 0.6 * w, "y": y, "buttons": (1,)})
        widget.handle_event({"event_type": "pointer_up", "x": x0 + 0.61 * w, "y": y, "button": 1})
        lo, hi = widget.value_range
        assert widget.range_slider.min < lo < hi < widget.range_slider.max  # the brush took
        # the slider's own readout would show the browser's snapped handles: it has none
        assert widget.range_slider.readout is False
        text = range_text((lo, hi))
        assert widget.range_readout.value == text
        assert f"range {text}" in widget.legend.value
    finally:
        widget.close()


def test_the_colour_bar_note_never_overlaps_the_x_tick_labels_after_pans(table, recorded):
    widget = make(table, group=None, size=(960, 540))
    try:
        checked = 0
        for start in np.linspace(0.0, 0.3, 16):  # (at 0.08 the tick label "0.45" reached into the note)
            widget.set_bounds((float(start), 0.0, float(start) + 0.37, 1.0))
            recorded["axes"].clear()
            recorded["texts"].clear()
            widget.draw_offscreen(width=960, height=540)
            notes = [(plot, label, kw) for plot, label, kw in recorded["texts"] if label in NOTES]
            assert notes, "no colour-bar note was drawn"
            plot, label, kw = notes[-1]
            note = box(plot, label, kw["x"], kw["y"], kw.get("anchor", ("left", "top")), kw.get("max_width"))
            for owner, layout in recorded["axes"]:
                for text, x, y, anchor, max_width in layout.labels:
                    if owner is plot:
                        assert not overlaps(note, box(plot, text, x, y, anchor, max_width)), (start, text, label)
                        checked += 1
        assert checked
    finally:
        widget.close()


def test_four_group_labels_all_stay_on_a_520_px_canvas(table, recorded):
    widget = make(table, size=(520, 300))
    try:
        widget.draw_offscreen(width=520, height=300)
        group_axes = [layout for _plot, layout in recorded["axes"]
                      if layout.labels and set(t for t, *_ in layout.labels) <= set(GROUPS)]
        assert group_axes
        assert [t for t, *_ in group_axes[-1].labels] == GROUPS
    finally:
        widget.close()


def test_the_bins_slider_shows_the_bins_drawn_after_custom_edges_give_way(table):
    widget = make(table, value="fare", bins=32)
    try:
        widget.set_edges([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0])
        assert widget.bins == 7 and widget.bins_slider.value == 7 and widget.scale == "custom"
        widget.set_columns(value="tip")  # custom edges belong to fare: tip gets its default bins
        out = widget.results()
        assert widget.scale == "log"
        assert widget.bins == 32 and widget.bins_slider.value == 32 and len(out["histogram_counts"]) == 32
        assert "32 log bins" in widget.legend.value
    finally:
        widget.close()
