"""TraceViewer region selection (issue 14: shift-drag selects a time x
track region on the GPU and shows its summary): the selected IDs against a
pandas oracle on trace.spans (time overlap x layout rows), sub-pixel spans
included; empty regions; no recompilation; the events path."""

import numpy as np
import pytest

from gpuviz.errors import GraphValidationError
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace import TraceViewer
from gpuviz.widgets.trace.events import band_region
from gpuviz.widgets.trace.geometry import GUTTER, MODE_PROCESS_COLLAPSED, ROW_HEIGHT, TRACKS_TOP

W, H = 900, 480


@pytest.fixture(scope="module")
def viewer():
    v = TraceViewer(synthetic(spans=3000, processes=2, threads_per_process=3, seed=5), size=(W, H))
    yield v
    v.close()


@pytest.fixture(autouse=True)
def _reset(viewer):
    yield
    viewer.select([])
    viewer.expand()
    viewer.reset_view()
    viewer.first_row = 0


def oracle(v, window, rows):
    """Span IDs shown in the view, on layout rows [rows) and overlapping window, from trace.spans."""
    df = v.trace.spans.select(["id", "start_ns", "duration_ns", "thread", "lane"]).to_pandas()
    layout = v._layout()  # the frame's layout (the GPU computes the same)
    mode = layout.thread_mode[df.thread.to_numpy()]
    row = layout.thread_row[df.thread.to_numpy()] + df.lane.to_numpy()
    end = df.start_ns + df.duration_ns.clip(lower=1)
    w0, w1 = v.time_window
    first = v.first_row
    view_rows = (row >= first) & (row < first + v._geometry().visible_rows)
    shown = (df.start_ns < w1) & (end > w0) & view_rows & (mode != MODE_PROCESS_COLLAPSED)
    inside = (df.start_ns < window[1]) & (end > window[0]) & (row >= rows[0]) & (row < rows[1])
    return np.sort(df.id[shown & inside].to_numpy().astype(np.int64))


def sub_pixel(v, ids):
    """How many of ids are narrower than one pixel column in the current view."""
    w0, w1 = v.time_window
    ns_per_px = (w1 - w0) / (W - GUTTER)
    return int((v.index.duration[ids] < ns_per_px).sum())


def test_region_selection_equals_the_oracle_including_sub_pixel_spans(viewer):
    compiles = viewer.compile_count
    w0, w1 = viewer.time_window
    cases = [((w0 + (w1 - w0) // 5, w0 + (w1 - w0) // 2), (1, 6)),  # zoomed out: mostly merged spans
             ((w0 - 10**9, w1 + 10**9), (0, 1000))]                 # the whole view
    for window, rows in cases:
        want = oracle(viewer, window, rows)
        got = viewer.select_region(window, rows=rows)
        assert np.array_equal(got, want)
        assert np.array_equal(np.sort(viewer.selection.column("id").to_numpy()), want)
        assert sub_pixel(viewer, want) > 0  # the picking texture holds no ID for these
        assert "Region summary" in viewer.details.value
    # zoomed in, scrolled down, one process collapsed: still the oracle
    viewer.time_window = (w0 + (w1 - w0) // 3, w0 + (w1 - w0) // 3 + (w1 - w0) // 40)
    viewer.first_row = 1
    viewer.collapse(0)
    a, b = viewer.time_window
    window, rows = (a + (b - a) // 4, b - (b - a) // 4), (0, 40)
    want = oracle(viewer, window, rows)
    assert len(want)
    assert np.array_equal(viewer.select_region(window, rows=rows), want)
    # the summary in the panel is the selection's
    table = viewer.summary()
    names = viewer.trace.spans.take(want).column("name").to_pandas()
    assert dict(zip(table["name"], table["count"])) == names.value_counts().to_dict()
    assert viewer.compile_count == compiles == 1


def test_empty_regions_select_nothing(viewer):
    w0, w1 = viewer.time_window
    viewer.select([0])
    for window, rows in (((w1 + 10, w1 + 10**6), (0, 100)),     # after the trace
                         ((w0, w1), (10**5, 10**5 + 3))):         # below every row
        assert len(viewer.select_region(window, rows=rows)) == 0
        assert viewer.selection.num_rows == 0
        assert "Region summary" not in viewer.details.value
    with pytest.raises(GraphValidationError, match="TraceViewer select_region window"):
        viewer.select_region((w1, w0))
    with pytest.raises(GraphValidationError, match="TraceViewer select_region rows"):
        viewer.select_region((w0, w1), rows=(3, 2))
    assert viewer.compile_count == 1


def test_shift_drag_events_select_the_same_region(viewer):
    x0, x1 = GUTTER + 150.0, GUTTER + 420.0
    y0, y1 = TRACKS_TOP + 1.5 * ROW_HEIGHT, TRACKS_TOP + 4.2 * ROW_HEIGHT
    window, rows = band_region(viewer._geometry(), (x0, y0, x1, y1))
    assert rows == (1, 5)
    want = oracle(viewer, window, rows)
    assert len(want) and sub_pixel(viewer, want) > 0
    kept = viewer.time_window
    shift = {"modifiers": ("Shift",)}
    viewer.handle_event({"event_type": "pointer_down", "x": x0, "y": y0, "button": 1, "buttons": (1,), **shift})
    viewer.handle_event({"event_type": "pointer_move", "x": (x0 + x1) / 2, "y": y1, "buttons": (1,), **shift})
    assert viewer._pointer.band is not None
    plain = viewer.draw_offscreen(width=W, height=H)
    viewer.handle_event({"event_type": "pointer_move", "x": x1, "y": y1, "buttons": (1,), **shift})
    assert viewer._pointer.band == (x0, y0, x1, y1)
    banded = viewer.draw_offscreen(width=W, height=H)
    assert np.abs(banded.astype(int) - plain.astype(int)).max() > 20  # the band grew on screen
    viewer.handle_event({"event_type": "pointer_up", "x": x1, "y": y1, "button": 1, **shift})
    assert viewer._pointer.band is None
    assert viewer.time_window == kept  # a region drag does not pan
    assert np.array_equal(viewer.selection.column("id").to_numpy(), want)
    assert "Region summary" in viewer.details.value
    assert viewer.compile_count == 1


@pytest.mark.parametrize("chunked", [False, True])
def test_region_pass_over_the_frames_pieces(device, chunked):
    """Records bound in pieces (the frame's piece_rows), the scene's records in
    one buffer or in 3 chunks: every piece's spans are tested."""
    from gpuviz.graph import GPUCommandGraph
    from gpuviz.trace.interaction import GPUTraceFrame
    from gpuviz.trace.interaction.nodes import pieces
    from gpuviz.trace.scene import RECORD_BYTES, RECORD_CHUNK_ALIGN, GPUTraceScene
    from gpuviz.widgets.trace.region import RegionSelection

    trace = synthetic(spans=5000, processes=3, threads_per_process=3, seed=7)
    scene = GPUTraceScene(device, trace, max_chunk_bytes=RECORD_BYTES * RECORD_CHUNK_ALIGN if chunked else None)
    assert len(scene.record_chunks) == (3 if chunked else 1)
    frame = GPUTraceFrame(scene=scene, trace=trace, width_capacity=256, row_capacity=48, piece_rows=2048,
                          edges=False)
    region = RegionSelection(device, frame)
    try:
        assert len(pieces(frame)) == 3
        graph = GPUCommandGraph(device)
        frame.add_to_graph(graph)
        compiled = graph.compile()
        state = frame.initial_state(width=200, rows=(0, 48))
        layout = frame.layout(state)
        df = trace.spans.select(["id", "start_ns", "duration_ns", "thread", "lane"]).to_pandas()
        row = layout.thread_row[df.thread.to_numpy()] + df.lane.to_numpy()
        end = df.start_ns + df.duration_ns.clip(lower=1)
        w0, w1 = state.window
        origin = scene.time_origin_ns
        counts = []
        for lo, hi, rows in ((0.0, 1.0, (0, 48)), (0.3, 0.55, (2, 7)), (0.999, 1.0, (0, 1))):
            t0, t1 = w0 + int((w1 - w0) * lo), w0 + int((w1 - w0) * hi)
            want = np.sort(df.id[(df.start_ns < t1) & (end > t0) & (row >= rows[0]) & (row < rows[1])
                                 & (row < 48)].to_numpy().astype(np.int64))
            frame.write(state)
            encoder = device.create_command_encoder()
            compiled.encode(encoder)
            got = region.run(encoder, t0_rel=t0 - origin, t1_rel=t1 - origin, row0=rows[0], row1=rows[1])
            assert np.array_equal(got, want)
            counts.append(len(want))
        assert counts[0] > 2048 and 0 < counts[1] < counts[0]  # past the first piece; a real subset
    finally:
        region.destroy()
        frame.destroy()
        scene.destroy()
