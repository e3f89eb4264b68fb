"""DataAnalysis renders one frame per parameter change and never renders a
frame inside another: a change made while a frame is encoded or drawn (an
observer of a trait that frame sets) is drawn by the next frame, and a
change made by an observer of the legend (set before the frame) is drawn by
the same one. Every picture is checked against the numpy oracles."""

import asyncio

import numpy as np
import pytest

from .test_data_analysis import _canvas, check_results, data, group_oracle, make  # noqa: F401 (data: the fixture)


class FrameProbe:
    """Counts the widget's graph encodings and records every encoding that
    starts while another one is in progress (re-entrant rendering)."""

    def __init__(self, widget):
        self.encodes, self.nested, self._depth = 0, 0, 0
        compiled_encode, widget_encode = widget.graph.compiled.encode, widget._encode

        def encode(*args, **kwargs):
            self.encodes += 1
            return compiled_encode(*args, **kwargs)

        def frame_encode(*args, **kwargs):
            self.nested += self._depth > 0
            self._depth += 1
            try:
                return widget_encode(*args, **kwargs)
            finally:
                self._depth -= 1

        widget.graph.compiled.encode = encode
        widget._encode = frame_encode


CHANGES = [
    ("bins", lambda w: w.set_bins(9)),
    ("scale", lambda w: w.set_scale("linear")),
    ("operation", lambda w: w.set_operation("max")),
    ("value range", lambda w: w.set_value_range((1.0, 12.0))),
    ("bounds", lambda w: w.set_bounds((0.0, 0.0, 1.0, 1.0))),
    ("group", lambda w: w.toggle_group(1)),
    ("colour scale", lambda w: w.set_colour_scale("linear")),
    ("slider", lambda w: setattr(w.bins_slider, "value", 11)),
]


@pytest.mark.parametrize("name, change", CHANGES, ids=[c[0] for c in CHANGES])
def test_one_parameter_change_encodes_the_graph_once(data, name, change):
    table, host = data
    widget = make(table)
    probe = FrameProbe(widget)
    canvas = _canvas(widget)
    frames = widget.frames
    change(widget)
    assert (probe.encodes, widget.frames - frames) == (1, 1)
    canvas.force_draw()  # the canvas frame presents the encoded plot: no second encoding
    r = widget.results()
    assert probe.encodes == 1 and probe.nested == 0
    if name == "group":  # the hidden group is gone from every view; the others keep their rows
        _labels, counts, _means, _overflow = group_oracle(host, "fare", r["value_range"])
        np.testing.assert_array_equal(r["group_counts"], np.where(r["group_mask"], counts, 0))
        assert r["histogram_counts"].sum() == counts[r["group_mask"]].sum() + r["group_overflow"]
    else:
        check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    widget.close()


def test_a_legend_observer_change_is_drawn_by_the_same_single_frame(data):
    table, host = data
    widget = make(table, operation="mean")
    probe = FrameProbe(widget)
    seen = []

    def observer(change):  # e.g. an app that keeps the heatmap on counts whenever the bins change
        seen.append(change["new"])
        if widget.operation != "count":
            widget.set_operation("count")
    widget.legend.observe(observer, names="value")
    widget.set_bins(5)
    assert seen and probe.nested == 0
    assert probe.encodes == 1  # the old code rendered the observer's change inside the first frame: two
    r = widget.results()  # nothing left to render
    assert probe.encodes == 1 and (r["operation"], len(r["histogram_counts"])) == ("count", 5)
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    assert "count of" in widget.legend.value and f"5 {r['scale']} bins" in widget.legend.value
    widget.close()


def test_a_change_made_during_an_encode_is_drawn_by_the_next_frame(data):
    table, host = data
    widget = make(table, operation="mean")
    probe = FrameProbe(widget)
    widget.inspector.refresh_interval = 0.0  # every encoding's report reaches the inspector's snapshot

    reported = widget.inspector.frames

    def observer(_change):  # the report of a recorded encoding (record_encode, after the graph)
        if widget.inspector.frames > reported and widget.operation != "max":
            widget.set_operation("max")
    widget.inspector.observe(observer, names="snapshot")
    widget.set_bins(7)
    assert probe.nested == 0 and probe.encodes == 1  # the old code encoded the change inside the encoding
    assert widget.operation == "max" and widget._dirty  # taken, not drawn yet: the next frame draws it
    r = widget.results()  # renders what is pending first
    assert probe.encodes == 2 and probe.nested == 0 and not widget._dirty
    assert (r["operation"], len(r["histogram_counts"])) == ("max", 7)
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    widget.close()


def test_a_change_made_inside_a_canvas_draw_asks_for_the_next_draw(data):
    table, host = data
    widget = make(table, operation="mean")
    canvas = _canvas(widget)
    canvas.force_draw()
    probe = FrameProbe(widget)
    widget.inspector.refresh_interval = 0.0
    requests = []
    request_draw = canvas.request_draw
    canvas.request_draw = lambda *a: (requests.append(a), request_draw(*a))

    reported = widget.inspector.frames

    def observer(_change):
        if widget.inspector.frames > reported and widget.operation != "sum":
            widget.set_operation("sum")
    widget.inspector.observe(observer, names="snapshot")
    widget.set_bounds((0.0, 0.0, 1.0, 1.0), frame=False)  # what a pan event does; the draw encodes it
    requests.clear()
    canvas.force_draw()
    assert probe.encodes == 1 and probe.nested == 0 and requests  # the observer's change: the next draw
    canvas.force_draw()
    assert probe.encodes == 2 and not widget._dirty
    r = widget.results()
    assert probe.encodes == 2 and r["operation"] == "sum" and r["bounds"] == (0.0, 0.0, 1.0, 1.0)
    check_results(r, host, x="px", y="py", value="fare")
    widget.close()


def test_changes_faster_than_a_live_canvas_shows_frames_are_encoded_together(data):
    """On a page (an event loop runs and the canvas draws): the first change
    encodes at once, later ones wait for the canvas frame that shows it, which
    encodes them all; without a loop (scripts, the tests above) every change
    encodes at once."""
    table, host = data
    widget = make(table, operation="mean")
    canvas = _canvas(widget)
    canvas._has_visible_views = True  # jupyter_rfb draws only for a visible view
    sent = []
    canvas.send = lambda msg, buffers=None: sent.append(msg) if msg.get("type") == "framebufferdata" else None
    probe = FrameProbe(widget)

    async def drag():
        async def frames(count):
            for _ in range(500):
                if len(sent) >= count:
                    return
                await asyncio.sleep(0.01)
        canvas.request_draw()  # (the one asked for at construction found no loop)
        await frames(1)  # the first frame: the canvas is on the page
        assert sent
        before = (probe.encodes, len(sent))
        for bins in (5, 6, 7, 8, 9):  # a slider drag's values, arriving before the next frame
            widget.set_bins(bins)
        assert probe.encodes == before[0] + 1  # the first one; the rest wait for the frame that shows it
        await frames(before[1] + 1)
        assert probe.encodes == before[0] + 2 and not widget._dirty  # that frame encoded the other four
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert probe.encodes == before[0] + 2
        r = widget.results()
        widget.graph.overlay.settle()  # every readback map resolves on this loop, before it closes
        while canvas._producing():
            await asyncio.sleep(0.01)
        return r

    r = asyncio.run(drag())
    assert probe.nested == 0 and len(r["histogram_counts"]) == 9
    check_results(r, host, x="px", y="py", value="fare", exact_grid=False)
    widget.close()
