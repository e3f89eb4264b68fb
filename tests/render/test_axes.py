"""Axis layout (pure) and its drawing through PlotOverlay / RectLayer: real
offscreen renders read back and checked for where the ink is."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.errors import GraphStateError, GraphValidationError
from gpuviz.render.axes import Axis
from gpuviz.render.overlay import PlotOverlay
from gpuviz.render.shapes import RectLayer
from tests.render.test_text import ink_box, render


def char_measure(text):
    """A stand-in text width: 6 px per character (layout tests need no font)."""
    return 6.0 * len(text)


def dark_ink(image, threshold=60):
    """Pixels brighter than a black background by ``threshold``."""
    return image[..., :3].max(axis=2) > threshold


# -- layout -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(lo=st.floats(-1e6, 1e6), span=st.floats(1e-3, 1e6), length=st.floats(40, 900),
       side=st.sampled_from(["bottom", "left", "right", "top"]))
def test_linear_ticks_lie_inside_map_monotonically_and_never_collide(lo, span, length, side):
    hi = lo + span
    if hi - lo < abs(lo) * 1e-9:
        return
    axis = Axis(side=side, domain=(lo, hi))
    rect = (10.0, 20.0, length, length)
    layout = axis.layout(rect, measure=char_measure, line_height=13.0)
    assert len(layout.values) >= 1
    assert np.all(layout.values >= lo - 1e-9 * max(1, abs(lo))) and np.all(layout.values <= hi + 1e-9 * max(1, abs(hi)))
    step = np.diff(layout.pixels)
    if axis.horizontal:
        assert np.all(step > 0)
        assert np.all((layout.pixels >= 10.0 - 1e-6) & (layout.pixels <= 10.0 + length + 1e-6))
        widths = np.array([char_measure(t) for t, *_ in layout.labels])
        assert np.all(step >= (widths[1:] + widths[:-1]) / 2)  # labels do not overlap
    else:
        assert np.all(step < 0)  # low values at the bottom
        assert np.all(-step >= 13.0)
    assert len(layout.segments) == 1 + len(layout.values)  # the line, one tick mark each


def test_vertical_axis_puts_the_low_end_at_the_bottom_and_labels_outside():
    axis = Axis(side="left", domain=(0.0, 100.0), title="count")
    layout = axis.layout((50.0, 10.0, 200.0, 100.0), measure=char_measure, line_height=13.0)
    assert layout.values[0] == 0.0 and layout.pixels[0] == pytest.approx(110.0)
    assert layout.values[-1] == 100.0 and layout.pixels[-1] == pytest.approx(10.0)
    for _text, x, _y, anchor, _w in layout.labels:
        assert x < 50.0 and anchor == ("right", "middle")
    assert layout.thickness == pytest.approx(4 + 2 + max(char_measure(t) for t, *_ in layout.labels))
    assert layout.title[0] == "count" and layout.title[2] < 10.0  # above the plot's top


def test_log_axis_places_decades_evenly():
    axis = Axis(side="bottom", domain=(1.0, 1e4), scale="log")
    layout = axis.layout((0.0, 0.0, 400.0, 100.0), measure=char_measure, line_height=13.0)
    decades = [(v, p) for v, p in zip(layout.values, layout.pixels) if np.log10(v) % 1 == 0]
    assert [v for v, _ in decades] == [1.0, 10.0, 100.0, 1000.0, 10000.0]
    np.testing.assert_allclose(np.diff([p for _, p in decades]), 100.0)
    assert [t for t, *_ in layout.labels][:1] == ["1"]


def test_category_axis_thins_and_truncates_to_the_band():
    names = [f"group {i}" for i in range(40)]
    axis = Axis(side="bottom", scale="category", categories=names)
    layout = axis.layout((0.0, 0.0, 240.0, 50.0), measure=char_measure, line_height=13.0)
    assert 1 < len(layout.labels) < 40
    texts = [t for t, *_ in layout.labels]
    assert texts == [names[int(v - 0.5)] for v in layout.values]
    band = layout.labels[0][4]
    assert band is not None and band >= 8.0
    np.testing.assert_allclose(layout.pixels, (layout.values) * 6.0)


def test_edges_axis_draws_irregular_bins_at_equal_width():
    edges = [0.0, 1.0, 2.0, 5.0, 10.0, 100.0]
    axis = Axis(side="bottom", scale="edges", edges=edges)
    np.testing.assert_allclose(axis.to_pixel(edges, (0.0, 0.0, 500.0, 10.0)), [0, 100, 200, 300, 400, 500])
    assert axis.to_pixel([7.5], (0.0, 0.0, 500.0, 10.0))[0] == pytest.approx(350.0)


def test_bad_axes_raise_named_errors():
    with pytest.raises(GraphValidationError, match="side"):
        Axis(side="middle")
    with pytest.raises(GraphValidationError, match="log domain"):
        Axis(side="left", domain=(0.0, 1.0), scale="log")
    with pytest.raises(GraphValidationError, match="increasing edges"):
        Axis(side="bottom", scale="edges", edges=[1.0, 1.0])
    with pytest.raises(GraphValidationError, match="finite"):
        Axis(side="bottom", domain=(0.0, float("inf")))


# -- drawing ------------------------------------------------------------------------


def test_rect_layer_hairlines_are_one_physical_pixel(device):
    layer = RectLayer(device, pixel_ratio=2.0)
    layer.add(10.0, 5.0, 10.0, 40.0, color=(1.0, 0.0, 0.0))  # a vertical hairline
    layer.add(20.0, 30.0, 60.0, 30.2, color=(0.0, 0.0, 1.0))  # a sub-pixel horizontal one
    layer.add(5.0, 44.0, 15.0, 47.0, color=(0.0, 1.0, 0.0, 0.5))
    with pytest.raises(GraphStateError, match="upload"):
        layer.draw(None)
    image = render(device, [layer], size=(160, 100), background=(0.0, 0.0, 0.0, 1.0))
    red = image[..., 0] > 200
    assert ink_box(red) == (20, 10, 21, 80)
    blue = image[..., 2] > 200
    assert ink_box(blue) == (40, 60, 120, 61)
    green = image[88:94, 10:30, 1]
    assert np.all(np.abs(green.astype(int) - 128) <= 2)  # 50 % over black, premultiplied
    layer.destroy()


def test_axis_drawn_has_ink_where_its_labels_are_and_in_order(device):
    overlay = PlotOverlay(device, font_size=12)
    plot = (60.0, 20.0, 300.0, 120.0)
    bottom = Axis(side="bottom", domain=(0.0, 1000.0), title="distance")
    left = Axis(side="left", domain=(0.0, 50.0), title="count")
    lb = bottom.layout(plot, measure=overlay.measure, line_height=overlay.line_height)
    ll = left.layout(plot, measure=overlay.measure, line_height=overlay.line_height)
    overlay.axis(lb)
    overlay.axis(ll)
    overlay.upload(device.queue, target_size=(400, 200))
    image = render(device, overlay._layers, size=(400, 200), background=(0.0, 0.0, 0.0, 1.0))
    ink = dark_ink(image)
    assert not ink[21:140, 61:360].any()  # nothing inside the plot area (no grid asked for)
    band = ink[141 + 6:141 + 6 + int(overlay.line_height)]  # the x tick label row under the axis
    assert band.any()
    assert ink[21:139, :54].any()  # y tick labels left of the axis
    # each x label's ink sits centred on its tick, in increasing order, as wide as measured
    centres = []
    for text, x, y, _anchor, _w in lb.labels:
        x0, x1 = int(x - overlay.measure(text) / 2) - 2, int(x + overlay.measure(text) / 2) + 3
        box = ink_box(ink[int(y):int(y + overlay.line_height), max(x0, 0):x1])
        assert box is not None, text
        width = box[2] - box[0]
        assert abs(width - overlay.measure(text)) <= 3, (text, width, overlay.measure(text))
        centres.append(max(x0, 0) + (box[0] + box[2]) / 2)
    assert np.all(np.diff(centres) > 0)
    np.testing.assert_allclose(centres, [x for _t, x, *_ in lb.labels], atol=1.5)
    overlay.destroy()


def test_two_known_strings_render_at_their_measured_widths_and_places(device):
    overlay = PlotOverlay(device, font_size=14)
    a = overlay.text("1", x=20, y=10, color=(1, 1, 1, 1))
    b = overlay.text("1000000", x=200, y=10, anchor=("right", "top"), color=(1, 1, 1, 1))
    overlay.upload(device.queue, target_size=(240, 40))
    image = render(device, overlay._layers, size=(240, 40), background=(0.0, 0.0, 0.0, 1.0))
    ink = dark_ink(image)
    left, right = ink_box(ink[:, :100]), ink_box(ink[:, 100:])
    assert left[0] >= 20 and left[2] <= a[2] + 1
    assert 100 + right[2] <= 201 and 100 + right[0] >= b[0] - 1
    assert (right[2] - right[0]) > 5 * (left[2] - left[0])  # seven digits against one
    overlay.destroy()


def test_tooltip_box_stays_inside_the_frame(device):
    overlay = PlotOverlay(device)
    box = overlay.tooltip(["value 12.5", "rows 3"], x=230, y=90, bounds=(0, 0, 240, 100))
    assert box[0] >= 0 and box[1] >= 0 and box[2] <= 240 and box[3] <= 100
    assert box[2] <= 230 and box[3] <= 90  # flipped to the cursor's left and above it
    assert overlay.tooltip([], x=5, y=5, bounds=(0, 0, 240, 100)) is None
    overlay.upload(device.queue, target_size=(240, 100))
    image = render(device, overlay._layers, size=(240, 100), background=(1.0, 1.0, 1.0, 1.0))
    x0, y0, x1, y1 = (round(v) for v in box)
    inner = image[y0 + 2:y1 - 2, x0 + 2:x1 - 2, :3]
    assert (inner.max(axis=2) < 40).mean() > 0.6  # the dark box
    assert (inner.min(axis=2) > 150).any()  # light text on it
    overlay.destroy()


def test_rect_layer_add_many_snaps_exactly_like_add(device):
    rng = np.random.default_rng(3)
    rects = rng.uniform(-5, 300, (200, 4))
    rects[::7, 2] = rects[::7, 0]  # hairlines
    colors = rng.uniform(0, 1, (200, 4))
    one, many = RectLayer(device, pixel_ratio=1.5), RectLayer(device, pixel_ratio=1.5)
    for r, c in zip(rects, colors):
        one.add(*r, color=c)
    many.add_many(rects, colors=colors)
    np.testing.assert_array_equal(one.instances(), many.instances())
    with pytest.raises(GraphValidationError, match="colour"):
        many.add_many(rects, colors=colors[:3])
    one.destroy()
    many.destroy()


def test_integer_axes_never_tick_between_whole_numbers():
    for lo, hi, length in ((-0.5, 23.5, 900.0), (-0.5, 3.5, 400.0), (4.5, 6.5, 300.0)):
        plain = Axis(side="bottom", domain=(lo, hi)).layout((0, 0, length, 10), measure=char_measure,
                                                              line_height=13.0)
        whole = Axis(side="bottom", domain=(lo, hi), integer=True).layout((0, 0, length, 10), measure=char_measure,
                                                                          line_height=13.0)
        if hi - lo < 5:
            assert np.any(plain.values % 1 != 0)  # what a linear axis writes on a short span
        assert np.all(whole.values % 1 == 0) and len(whole.values) >= 2


def test_rect_instances_keep_queue_order_across_add_and_add_many(device):
    """Single rectangles and add_many blocks come out in the order queued
    (later ones draw over earlier ones), each with its own colour, snapped
    as add snaps them; clear forgets them all."""
    layer = RectLayer(device, pixel_ratio=2.0)
    layer.add(1.0, 2.0, 3.0, 4.0, color=(1.0, 0.0, 0.0))
    layer.add_many([(0.0, 0.0, 1.0, 1.0), (2.2, 0.0, 2.2, 5.0)], colors=[(0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 0.5)])
    layer.add(3.0, 4.0, 1.0, 2.0, color=(1.0, 0.0, 0.0))  # the same colour again (cached), corners swapped
    layer.add(0.0, 0.0, 0.2, 0.2, color=[0.2, 0.4, 0.6])  # a list colour (not cached)
    got = layer.instances()
    np.testing.assert_array_equal(got["rect"], [[2, 4, 6, 8], [0, 0, 2, 2], [4, 0, 5, 10], [2, 4, 6, 8], [0, 0, 1, 1]])
    np.testing.assert_array_equal(got["color"], [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 128],
                                                 [255, 0, 0, 255], [51, 102, 153, 255]])
    with pytest.raises(GraphValidationError, match="color"):
        layer.add(0.0, 0.0, 1.0, 1.0, color=(1.5, 0.0, 0.0))
    with pytest.raises(GraphValidationError, match="finite"):
        layer.add(float("nan"), 0.0, 1.0, 1.0, color=(1.0, 0.0, 0.0))
    layer.clear()
    assert len(layer.instances()) == 0
    layer.destroy()


def test_an_axis_queued_again_reuses_its_items_and_matches_a_fresh_layout(device):
    """PlotOverlay.axis with the same AxisLayout object again (a cached
    layout) queues exactly what laying out an equal axis afresh queues."""
    axis = Axis(side="left", domain=(0.0, 37.0), title="count")
    reused = PlotOverlay(device, pixel_ratio=2.0)
    layout = axis.layout((40.0, 30.0, 200.0, 120.0), measure=reused.measure, line_height=reused.line_height)
    reused.axis(layout)
    reused.axis(layout)  # a hit: extended from what the first call queued
    fresh = PlotOverlay(device, pixel_ratio=2.0)
    for _ in range(2):
        fresh.axis(axis.layout((40.0, 30.0, 200.0, 120.0), measure=fresh.measure, line_height=fresh.line_height))
    assert reused.labels.label_count == fresh.labels.label_count == 2 * (len(layout.labels) + 1)
    np.testing.assert_array_equal(reused.rects.instances(), fresh.rects.instances())
    np.testing.assert_array_equal(reused.labels.instances(), fresh.labels.instances())
    reused.axis(layout, text_color=(1.0, 0.0, 0.0, 1.0))  # other colours: queued afresh, in that colour
    colours = reused.labels.instances()["color"]
    assert len(colours) == 3 * len(fresh.labels.instances()) // 2
    assert (colours == [255, 0, 0, 255]).all(axis=1).sum() > 0  # the tick labels (the title keeps TEXT_COLOR)
    reused.destroy()
    fresh.destroy()


def test_category_labels_cut_alike_are_thinned_until_told_apart():
    names = ["4 Cycle", "Reciprocating", "Turbo-fan", "Turbo-jet", "Turbo-prop", "Turbo-shaft", "(no match)"]
    axis = Axis(side="bottom", scale="category", categories=names)
    layout = axis.layout((0.0, 0.0, 280.0, 50.0), measure=char_measure, line_height=13.0)
    band = layout.labels[0][4]
    shown = [label if char_measure(label) <= band else None for label, *_ in layout.labels]
    # at 40 px a band, every name would read "Tur…" or alike: every other one is shown, and whole
    assert 1 < len(shown) < len(names) and None not in shown
    assert [t for t, *_ in layout.labels] == names[::2]


def test_short_category_labels_all_stay():
    names = ["card", "cash", "app", "voucher"]
    layout = Axis(side="bottom", scale="category", categories=names).layout(
        (0.0, 0.0, 120.0, 50.0), measure=char_measure, line_height=13.0)
    assert [t for t, *_ in layout.labels] == names  # "vou…" still differs from the others
