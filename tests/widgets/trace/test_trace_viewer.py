"""TraceViewer without a browser: pixels at span_rect, GPU picking, pan /
zoom arithmetic and events, collapse / filters / search / focus change the
image without recompiling, selection and GPU summary against pandas, bad
input."""

import re

import numpy as np
import pyarrow as pa
import pytest

from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.trace.model import Trace
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace import TraceViewer
from gpuviz.widgets.trace.geometry import GUTTER, ROW_HEIGHT, TRACKS_TOP, name_colour

W, H = 900, 480


@pytest.fixture(scope="module")
def trace():
    return synthetic(spans=1500, processes=2, threads_per_process=3, seed=3)


@pytest.fixture(scope="module")
def viewer(trace):
    v = TraceViewer(trace, size=(W, H))
    yield v
    v.close()


@pytest.fixture(autouse=True)
def _reset(request):
    yield
    if "viewer" in request.fixturenames:
        v = request.getfixturevalue("viewer")
        if v._graph is not None:
            v.select([])
            v.clear_focus()
            v.expand()
            v.categories = None
            v.search = None
            v.min_duration_ns = 0
            v.focus_mode = "dim"
            v.reset_view()
        v.first_row = 0


def draw(v):
    return v.draw_offscreen(width=W, height=H).astype(np.int32)


def colour_of(v, s):
    name = v.trace.spans.column("name")[s].as_py()
    return np.array([int(c * 255) for c in name_colour(name)])


def share_of_colour(image, rect, rgb, tol=16):
    """Share of pixels on the rect's first row (above any label) within tol of rgb."""
    x0, y0, x1, _ = rect
    row = image[int(y0) + 1, int(np.ceil(x0)) + 1:max(int(x1) - 1, int(np.ceil(x0)) + 2), :3]
    return float((np.abs(row - rgb).max(axis=1) <= tol).mean())


def wide_span(v, *, min_px=60, lane=None):
    """A span drawn at least min_px wide in the current view."""
    for s in range(v.index.n):
        if lane is not None and v.index.lane[s] != lane:
            continue
        r = v.span_rect(s)
        if r is not None and r[2] - r[0] >= min_px and r[3] < H - 30:
            return s, r
    raise AssertionError("no wide span")


def test_span_pixels_at_rect_and_pick_at_centre(viewer):
    s, r = wide_span(viewer)
    img = draw(viewer)
    assert share_of_colour(img, r, colour_of(viewer, s)) > 0.8
    # just outside the rect's bottom edge: the one-pixel row gap, not the span
    cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
    assert viewer.pick(cx, cy) == s
    assert viewer.pick(GUTTER / 2, cy) is None  # the gutter draws no span
    assert viewer.pick(-5, 10) is None and viewer.pick(W + 3, 10) is None
    assert viewer.compile_count == 1


def test_pan_and_zoom_move_the_span_by_the_expected_pixels(viewer):
    s, r = wide_span(viewer, min_px=40)
    start = int(viewer.index.start[s])
    w0, w1 = start - 5_000, start + 400_000
    viewer.time_window = (w0, w1)
    px = (W - GUTTER) / (w1 - w0)
    r1 = viewer.span_rect(s)
    assert r1[0] == pytest.approx(GUTTER + 5_000 * px, abs=1e-6)
    viewer.time_window = (w0 - 20_000, w1 - 20_000)  # pan: the span moves right by 20 µs of pixels
    r2 = viewer.span_rect(s)
    assert r2[0] - r1[0] == pytest.approx(20_000 * px, abs=1e-6)
    img = draw(viewer)
    assert share_of_colour(img, r2, colour_of(viewer, s)) > 0.8
    assert viewer.pick((r2[0] + min(r2[2], W)) / 2, (r2[1] + r2[3]) / 2) == s
    # zoom x2 about the window start: distances from it double
    a, b = viewer.time_window
    viewer.time_window = (a, a + (b - a) // 2)
    r3 = viewer.span_rect(s)
    assert r3[0] - GUTTER == pytest.approx(2 * (r2[0] - GUTTER), rel=1e-9, abs=1e-6)
    assert viewer.compile_count == 1


def test_events_drag_wheel_keys_and_clicks(viewer):
    g = viewer._geometry()
    w0, w1 = viewer.time_window
    ev = viewer.handle_event
    ev({"event_type": "pointer_down", "x": 500.0, "y": 200.0, "button": 1, "buttons": (1,)})
    ev({"event_type": "pointer_move", "x": 400.0, "y": 200.0, "button": 1, "buttons": (1,)})
    ev({"event_type": "pointer_up", "x": 400.0, "y": 200.0, "button": 1, "buttons": ()})
    shift = viewer.time_window[0] - w0
    assert shift == pytest.approx(100 / g.px_per_ns, abs=1)  # dragged 100 px left: later times come in
    # wheel up at x: the time under the cursor stays under it
    viewer.reset_view()
    g = viewer._geometry()
    t_at = g.t_of(600.0)
    ev({"event_type": "wheel", "x": 600.0, "y": 200.0, "dx": 0.0, "dy": -100.0, "modifiers": ()})
    g2 = viewer._geometry()
    assert g2.window[1] - g2.window[0] < g.window[1] - g.window[0]
    assert g2.t_of(600.0) == pytest.approx(t_at, abs=2 / g2.px_per_ns)
    before = viewer.time_window
    assert ev({"event_type": "key_down", "key": "w"}) and viewer.time_window[1] - viewer.time_window[0] < \
        before[1] - before[0]
    before = viewer.time_window
    ev({"event_type": "key_down", "key": "d"})
    assert viewer.time_window[0] > before[0]
    ev({"event_type": "key_down", "key": "a"})
    assert viewer.time_window == before
    # click on a span selects it (GPU pick); Escape clears; double click zooms to it
    viewer.reset_view()
    s, r = wide_span(viewer)
    cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
    seen = []
    viewer.on_select(lambda table: seen.append(table.column("id").to_pylist()))
    ev({"event_type": "pointer_down", "x": cx, "y": cy, "button": 1, "buttons": (1,)})
    ev({"event_type": "pointer_up", "x": cx, "y": cy, "button": 1, "buttons": ()})
    assert viewer.selection.column("id").to_pylist() == [s] and seen[-1] == [s]
    ev({"event_type": "key_down", "key": "Escape"})
    assert viewer.selection.num_rows == 0 and seen[-1] == []
    ev({"event_type": "double_click", "x": cx, "y": cy, "button": 1})
    a, b = viewer.time_window
    assert a < viewer.index.start[s] and b > viewer.index.end[s] and (b - a) < 1.5 * (viewer.index.end[s] - viewer.index.start[s])
    # hover shows the span under the pointer (tooltip lines)
    viewer.reset_view()
    ev({"event_type": "pointer_move", "x": cx, "y": cy, "buttons": ()})
    draw(viewer)  # the frame's picking pass at the pointer, read back through the ring
    assert viewer._pointer.hover == s
    # ... and draws its tooltip (name, category, start, duration, thread) beside the pointer
    def dark_share(image):  # the tooltip box is near black (92 % opaque) over the spans
        box = image[int(cy) + 14:int(cy) + 40, int(cx) + 14:int(cx) + 120, :3]
        return (box.max(axis=2) <= 26).mean()
    with_tip = dark_share(draw(viewer))
    ev({"event_type": "pointer_leave", "x": cx, "y": cy})
    without = dark_share(draw(viewer))
    assert with_tip > without + 0.3, (with_tip, without)
    ev({"event_type": "pointer_move", "x": cx, "y": cy, "buttons": ()})
    from gpuviz.widgets.trace.decorations import span_lines
    lines = span_lines(viewer.index, s)
    assert lines[0] == viewer.index.names[viewer.index.name_id[s]] and lines[1].startswith("category: ")
    # a click in the minimap centres the window there
    viewer.time_window = (viewer.index.extent[0], viewer.index.extent[0] + 1_000_000)
    t0, t1 = viewer.index.extent
    x = GUTTER + 0.75 * (W - 4 - GUTTER)
    ev({"event_type": "pointer_down", "x": x, "y": 15.0, "button": 1, "buttons": (1,)})
    ev({"event_type": "pointer_up", "x": x, "y": 15.0, "button": 1, "buttons": ()})
    a, b = viewer.time_window
    assert b - a == 1_000_000 and (a + b) / 2 == pytest.approx(t0 + 0.75 * (t1 - t0), abs=1)
    viewer.reset_view()
    # a click on a process name in the gutter collapses it
    p = int(viewer.index.process[s])
    y = TRACKS_TOP + viewer._layout().process_row[p] * ROW_HEIGHT + 4
    ev({"event_type": "pointer_down", "x": 10.0, "y": y, "button": 1, "buttons": (1,)})
    ev({"event_type": "pointer_up", "x": 10.0, "y": y, "button": 1, "buttons": ()})
    assert not viewer._state.process_expanded[p]
    assert viewer.compile_count == 1


def test_collapse_filters_search_focus_change_the_image_never_recompile(viewer, trace):
    base = draw(viewer)
    s, r = wide_span(viewer, lane=1)
    p, t = int(viewer.index.process[s]), int(viewer.index.thread[s])
    viewer.collapse(thread=t)
    assert viewer.span_rect(s) is None  # lane 1 of a collapsed thread
    collapsed = draw(viewer)
    assert (collapsed != base).any()
    viewer.expand(thread=t)
    viewer.collapse(process=p)
    # a collapsed process: every span of it on its one summary row
    rows = viewer._rows()[viewer.index.process == p]
    assert len(np.unique(rows)) == 1 and rows[0] == viewer._layout().process_row[p]
    assert (draw(viewer) != base).any()
    viewer.expand()
    assert (draw(viewer) == base).all()  # expansion is fully undone
    # categories: hiding the span's category hides it
    cats = set(viewer.index.categories)
    cat = viewer.index.categories[viewer.index.category_id[s]]
    viewer.categories = cats - {cat}
    assert viewer.span_rect(s) is None
    img = draw(viewer)
    assert share_of_colour(img, r, colour_of(viewer, s)) < 0.2
    viewer.categories = None
    # min duration above the span's duration hides it
    viewer.min_duration_ns = int(viewer.index.duration[s]) + 1
    assert viewer.span_rect(s) is None
    viewer.min_duration_ns = 0
    # search: highlight dims the others, filter hides them
    name = viewer.index.names[viewer.index.name_id[s]]
    viewer.search = name
    matches = np.array([n == name or name.casefold() in n.casefold() for n in
                        viewer.trace.spans.column("name").to_pylist()])
    assert viewer.search_count == int((viewer._visible() & matches).sum()) > 0
    highlighted = draw(viewer)
    assert share_of_colour(highlighted, r, colour_of(viewer, s)) > 0.8
    other, ro = next((k, viewer.span_rect(k)) for k in range(viewer.index.n)
                     if not matches[k] and viewer.span_rect(k) and viewer.span_rect(k)[2] - viewer.span_rect(k)[0] > 30)
    assert share_of_colour(highlighted, ro, colour_of(viewer, other)) < 0.2  # dimmed
    viewer.search = (re.compile("^" + re.escape(name) + "$"), "filter")
    assert viewer.span_rect(other) is None and viewer.span_rect(s) is not None
    viewer.search = None
    # focus "hide" over links keeps the seed and its linked spans only
    linked = int(viewer.index.link_source[0])
    target = int(viewer.index.link_target[0])
    viewer.focus(linked, depth=1)
    viewer.focus_mode = "hide"
    assert viewer._visible()[viewer.index.focus_set([linked], depth=1) == False].sum() == 0  # noqa: E712
    assert viewer.index.focus_set([linked], depth=1)[target]
    hidden = draw(viewer)
    assert (hidden != base).any()
    viewer.clear_focus()
    assert viewer.compile_count == 1


def test_selection_and_summary_against_pandas(viewer, trace):
    df = trace.spans.to_pandas()
    ids = [3, 10, 11, 400, 401, 402, 1000]
    viewer.select(ids)
    sel = viewer.selection
    assert sel.column("id").to_pylist() == sorted(ids)
    assert sel.equals(trace.spans.take(sorted(ids)))
    got = viewer.summary().set_index("name")
    picked = df.loc[sorted(ids)]
    child = df[df.parent.isin(sorted(ids))]
    expect = picked.groupby("name").duration_ns.agg(["count", "sum", "mean", "max"])
    child_sum = child.groupby(df.loc[child.parent, "name"].to_numpy()).duration_ns.sum()
    expect["self"] = expect["sum"] - child_sum.reindex(expect.index).fillna(0)
    assert set(got.index) == set(expect.index)
    for name, row in expect.iterrows():
        assert got.loc[name, "count"] == row["count"]
        np.testing.assert_allclose(got.loc[name, ["total_ns", "mean_ns", "max_ns", "self_ns"]].to_numpy(float),
                                   [row["sum"], row["mean"], row["max"], row["self"]], rtol=1e-5, atol=1)
    # without a selection: the spans in the view
    viewer.select([])
    start = int(df.start_ns.min())
    viewer.time_window = (start, start + 2_000_000)
    got = viewer.summary().set_index("name")
    vis = df[viewer._visible()]
    expect = vis.groupby("name").duration_ns.agg(["count", "sum"])
    assert dict(got["count"]) == dict(expect["count"])
    np.testing.assert_allclose(got.loc[expect.index, "total_ns"], expect["sum"], rtol=1e-5)
    with pytest.raises(GraphValidationError, match="span ID 99999"):
        viewer.select([1, 99999])
    with pytest.raises(GraphValidationError):
        viewer.span_rect(-1)
    with pytest.raises(GraphValidationError):
        viewer.focus(10**9)
    assert viewer.compile_count == 1


def test_links_of_the_selection_are_drawn(viewer):
    src, dst = int(viewer.index.link_source[0]), int(viewer.index.link_target[0])
    rows = viewer._rows()
    viewer.first_row = max(int(min(rows[src], rows[dst])) - 2, 0)
    viewer.time_window = (int(viewer.index.start[src]) - 20_000, int(viewer.index.end[dst]) + 20_000)
    base = draw(viewer)
    viewer.select([src])
    img = draw(viewer)
    link = np.array([255, 199, 64])  # the link colour (1.0, 0.78, 0.25)
    near = (np.abs(img[..., :3] - link).max(axis=2) <= 20).sum()
    near_base = (np.abs(base[..., :3] - link).max(axis=2) <= 20).sum()
    assert near > near_base + 20


def test_window_checks_and_outside_window(viewer):
    for bad in [(5, 5), (10, 2), "x", (1.5, 3)]:
        with pytest.raises((GraphValidationError, GraphTypeError)):
            viewer.time_window = bad
    end = viewer.index.extent[1]
    viewer.time_window = (end + 10**9, end + 2 * 10**9)
    assert all(viewer.span_rect(s) is None for s in range(0, viewer.index.n, 7))
    img = draw(viewer)
    assert viewer.pick(500, 200) is None
    tracks = img[int(TRACKS_TOP) + 2:H - 30, int(GUTTER) + 2:, :3]
    chroma = tracks.max(axis=2) - tracks.min(axis=2)
    assert (chroma > 40).sum() == 0  # greys only: background, bands, grid; no span colour


def _tiny(starts, durations):
    return Trace.from_arrow(spans=pa.table({"name": [f"s{i}" for i in range(len(starts))],
                                            "start_ns": pa.array(starts, pa.int64()),
                                            "duration_ns": pa.array(durations, pa.int64())}))


def test_empty_one_span_and_zero_duration_traces():
    empty = TraceViewer(Trace.from_arrow(spans=pa.table({"name": pa.array([], pa.string()),
                                                         "start_ns": pa.array([], pa.int64()),
                                                         "duration_ns": pa.array([], pa.int64())})), size=(600, 300))
    try:
        img = empty.draw_offscreen(width=600, height=300)
        assert img.shape == (300, 600, 4)
        assert empty.pick(300, 150) is None
        assert len(empty.summary()) == 0 and empty.selection.num_rows == 0
        with pytest.raises(GraphValidationError):
            empty.select([0])
    finally:
        empty.close()
    one = TraceViewer(_tiny([1_000], [500]), size=(600, 300))
    try:
        r = one.span_rect(0)
        assert r[0] == pytest.approx(GUTTER) and r[2] == pytest.approx(600)
        img = one.draw_offscreen(width=600, height=300)
        assert share_of_colour(img.astype(int), r, colour_of(one, 0)) > 0.8
        assert one.pick((r[0] + r[2]) / 2, (r[1] + r[3]) / 2) == 0
    finally:
        one.close()
    zero = TraceViewer(_tiny([0, 100, 100, 400], [0, 0, 300, 0]), size=(600, 300))
    try:
        for s in range(4):
            r = zero.span_rect(s)
            assert r is not None and r[2] - r[0] >= 1.0
        r = zero.span_rect(3)
        img = zero.draw_offscreen(width=600, height=300).astype(int)
        # a 1 ns span is sub-pixel: drawn as a merged one-column rect (its name's colour, 8 % darker);
        # merged rects carry no span ID: picking there asks the region pass for the longest span there
        x, y = int(np.ceil(r[0] - 0.5)), int(r[1]) + 3  # the first pixel whose centre the rect covers
        assert np.abs(img[y, x, :3] - 0.92 * colour_of(zero, 3)).max() <= 12  # + the process band tint
        assert zero.pick(x + 0.5, y) == 3
        summary = zero.summary().set_index("name")
        assert summary.loc["s0", "total_ns"] == 0 and summary.loc["s2", "total_ns"] == 300
    finally:
        zero.close()
    with pytest.raises(GraphStateError):
        zero.pick(1, 1)


def test_pick_over_merged_sub_pixel_spans_returns_the_longest_there(viewer):
    from gpuviz.trace.interaction import column_bounds
    img = draw(viewer)
    frame = viewer._graph.frame
    merged = frame.read_back()["merged"]
    g = viewer._geometry()
    w0, w1 = viewer.time_window
    columns = min(int(g.plot_width), w1 - w0)
    px = g.plot_width / columns
    bounds = column_bounds((0, w1 - w0), columns)
    h, rows = viewer.index, viewer._rows()
    checked = 0
    for row, c0, c1, _ in merged[:: max(len(merged) // 12, 1)]:
        x = GUTTER + (c0 + 0.5) * px
        y = TRACKS_TOP + (int(row) - viewer.first_row) * ROW_HEIGHT + ROW_HEIGHT / 2
        if y >= g.bottom or np.abs(img[int(y), int(x), :3] - img[int(TRACKS_TOP) + 1, -2, :3]).max() == 0:
            continue
        if viewer._graph.pick((int(x), int(y))) is not None:
            continue  # a span drawn one by one covers this pixel: the picking target has its ID
        t0, t1 = w0 + int(bounds[c0]), w0 + int(bounds[c0 + 1])  # the frame column's exact ns
        there = np.flatnonzero(viewer._visible() & (rows == row) & (h.start < t1) & (h.end > t0))
        inside = there[(h.start[there] >= t0) & (h.end[there] <= t1)]  # the merged ones
        assert len(inside)  # the GPU merged something into this column
        got = viewer.pick(x, y)
        assert got in set(inside.tolist()) and h.duration[got] == h.duration[inside].max()
        checked += 1
    assert checked >= 3, (checked, len(merged))


def test_bad_arguments():
    with pytest.raises(GraphTypeError):
        TraceViewer(42)
    with pytest.raises(GraphValidationError):
        TraceViewer(_tiny([0], [1]), size=(10, 10))
    with pytest.raises(GraphValidationError):
        TraceViewer(_tiny([0, 5], [1, 1]), capacity=1)


def test_links_to_a_collapsed_process_land_on_its_summary_row(viewer):
    from gpuviz.widgets.trace.decorations import link_segments
    h = viewer.index
    cross = np.flatnonzero(h.process[h.link_source] != h.process[h.link_target])
    k = int(cross[0]) if len(cross) else 0
    src, dst = int(h.link_source[k]), int(h.link_target[k])
    viewer.select([src])
    viewer.collapse(process=int(h.process[dst]))
    summary_row = viewer._layout().process_row[h.process[dst]]
    seg = link_segments(h, viewer._layout(), viewer._geometry(), viewer._selection)
    ends = {(round(float(x1), 3), round(float(y1), 3)) for x0, y0, x1, y1, *_ in seg[:1]}
    (_, y_end), = ends
    assert y_end == pytest.approx(TRACKS_TOP + (summary_row - viewer.first_row + 0.5) * ROW_HEIGHT)
    assert viewer.span_rect(dst) is None  # not drawn one by one: it is in the density bars


def test_capacity_tier_chosen_at_load(viewer):
    from gpuviz.widgets.trace.tiers import CAPACITY_TIERS, capacity_tier
    assert capacity_tier(0) == capacity_tier(1) == CAPACITY_TIERS[0]
    assert capacity_tier(1500) == 4096 and capacity_tier(4097) == 1 << 14
    assert capacity_tier(1 << 20) == 1 << 20 and capacity_tier((1 << 20) + 1) == 4 << 20
    assert capacity_tier(26_214_400) == 25 << 20 and capacity_tier(100_000_000) == 100 << 20
    assert capacity_tier((100 << 20) + 1) == 200 << 20
    assert all(b <= 4 * a for a, b in zip(CAPACITY_TIERS, CAPACITY_TIERS[1:]))
    # the viewer compiled its graph for the tier, not for the span count; interactions stay in it
    assert viewer.capacity == 4096 and viewer._graph.frame.capacity == 4096 and viewer.index.n == 1500
    viewer.time_window = (viewer.index.extent[0], viewer.index.extent[0] + 10_000)
    viewer.collapse(process=0)
    viewer.search = "a"
    draw(viewer)
    assert viewer.compile_count == 1


def test_time_axis_ticks_sit_where_their_times_are_drawn(viewer, monkeypatch):
    """Each tick of the time axis is at the x where a span starting at that
    time starts (the tracks' scale), and no tick label runs past the canvas
    or into the gutter."""
    from gpuviz.render.overlay import PlotOverlay
    captured = []
    monkeypatch.setattr(PlotOverlay, "axis", lambda self, layout, **kw: captured.append(layout))
    for window in [None, (1_000_000, 3_500_000)]:
        if window is not None:
            viewer.time_window = (viewer.index.extent[0] + window[0], viewer.index.extent[0] + window[1])
        captured.clear()
        draw(viewer)
        geometry = viewer._geometry()
        (layout,) = captured[-1:]
        assert len(layout.values) >= 3
        expected = [geometry.x_of(viewer.index.extent[0] + v) for v in layout.values]
        np.testing.assert_allclose(layout.pixels, expected, atol=0.01)
        for text, x, _y, _anchor, _w in layout.labels:
            half = viewer._overlay.measure(text) / 2
            assert GUTTER - 0.5 <= x - half and x + half <= geometry.width + 0.5, (text, x)


def test_a_dropped_frame_leaves_no_sample_under_a_later_pointer(viewer):
    """A frame drawn into an encoder that is never submitted (a host's draw
    that raised) must not yield a sample: its copies never ran, so its slot
    holds an older sample's bytes. The slot is cancelled when the next frame
    records, and the hover comes from the submitted frame."""
    import wgpu

    a, ra = wide_span(viewer)
    b, rb = next((t, r) for t in range(viewer.index.n)
                 if (r := viewer.span_rect(t)) is not None and r[2] - r[0] >= 60 and r[3] < H - 30
                 and abs((r[1] + r[3]) / 2 - (ra[1] + ra[3]) / 2) > ROW_HEIGHT)
    centre = {s: ((r[0] + r[2]) / 2, (r[1] + r[3]) / 2) for s, r in ((a, ra), (b, rb))}
    draw(viewer)
    sampler = viewer._graph.sampler
    parsed = []

    def parse(key, data, original=type(sampler)._parse):
        parsed.append(key[3])
        return original(key, data)

    sampler._parse = parse
    try:
        texture = viewer.device.create_texture(size=(W, H, 1), format="rgba8unorm",
                                               usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
        viewer.handle_event({"event_type": "pointer_move", "x": centre[a][0], "y": centre[a][1], "buttons": ()})
        viewer.draw(viewer.device.create_command_encoder(), texture.create_view(), (W, H))  # never submitted
        viewer.handle_event({"event_type": "pointer_move", "x": centre[b][0], "y": centre[b][1], "buttons": ()})
        draw(viewer)
    finally:
        del sampler._parse
    assert viewer._pointer.hover == b
    # no sample of the dropped frame
    assert parsed and all(p == viewer._pointer.position for p in parsed), parsed
    assert sampler.pending == 0 and sampler.ring.free_count == sampler.ring.slot_count
