"""The TraceViewer ``tracks`` compute node against its numpy oracle
(gpuviz.oracles.widgets), every pixel of the colour frame and
of the span-ID texture: zoomed-out merging, deep zoom (runs spread over a
workgroup), selection ring, hover, search and focus dimming, density bars
of a collapsed process, empty and one-span scenes, a render size at the
frame texture's edge, a scrolled first row.

Scales are powers of two and offsets integers, so every coordinate is
exact in float32 on both sides (a fused multiply-add cannot move an edge);
colours may differ by one 8-bit unit (rounding), IDs must be equal."""

import numpy as np
import pyarrow as pa
import pytest

import gpuviz
from gpuviz.render.picking import NO_ID
from gpuviz.oracles.trace import TraceViewOracle
from gpuviz.oracles.widgets import trace_graph_tracks
from gpuviz.trace.model import Trace
from gpuviz.trace.scene import GPUTraceScene
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace.graph import VIEW_FLAGS, TraceGraph


@pytest.fixture(scope="module")
def device():
    return gpuviz.request_device()


class Rig:
    """A TraceGraph over one trace, its frame's oracle, and a render + compare step."""

    def __init__(self, device, trace, seed=0):
        self.device, self.trace = device, trace
        self.scene = GPUTraceScene(device, trace, label="tracks-test")
        rng = np.random.default_rng(seed)
        colours = rng.integers(0, 1 << 24, max(len(self.scene.names), 1), dtype=np.uint32) | np.uint32(0xFF000000)
        self.graph = TraceGraph(device, self.scene, trace, name_colours=colours, capacity=self.scene.span_count)
        self.oracle = TraceViewOracle(self.graph.frame, trace)

    def close(self):
        self.graph.destroy()
        self.scene.destroy()

    def state(self, *, start, shift, width, rows=(0, 40), **changes):
        """A window of ``width`` columns of 2**shift ns from ``start`` (ns after the origin)."""
        f = self.graph.frame
        t0 = self.scene.time_origin_ns + int(start)
        base = f.initial_state(width=width, rows=rows)
        return base.with_(window=(t0, t0 + (width << shift)), **changes)

    def render(self, state, *, size, shift, gutter=24, top=8, row_height=12, bottom=None, scale=1.0, hover=None,
               selection=()):
        g = self.graph
        g.render_size = size
        g.frame.write(state)
        g.write_selection(np.asarray(selection, np.int64))
        flags = (VIEW_FLAGS["search"] if state.search is not None else 0) | \
            (VIEW_FLAGS["focus"] if len(state.focus_seeds) else 0)
        origin = self.scene.time_origin_ns
        w0, w1 = state.window
        g.write_view(origin_rel=w0 - origin, end_rel=w1 - origin, min_duration=state.min_duration_ns,
                     render_size=size, px_per_ns=2.0 ** -shift, gutter=gutter, top=top, row_height=row_height,
                     first_row=int(state.rows[0]), flags=flags, hover=hover, scale=scale,
                     bottom=float(size[1] - 4 if bottom is None else bottom), column_px=1.0)
        encoder = self.device.create_command_encoder()
        g.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        return g.read_tracks()

    def check(self, state, *, size, shift, selection=(), **view):
        """Render, compare every pixel with the oracle; returns (ids, oracle frame)."""
        colour, ids = self.render(state, size=size, shift=shift, selection=selection, **view)
        want_frame = self.oracle.frame(state)
        rgb, want_ids = trace_graph_tracks(self.graph, self.oracle, want_frame, state, selection=selection)
        want = np.round(np.clip(rgb, 0, 1) * 255).astype(int)
        bad = ids != want_ids
        assert not bad.any(), f"{bad.sum()} span IDs differ, first at (y, x) {tuple(np.argwhere(bad)[0])}"
        diff = np.abs(colour[..., :3].astype(int) - want).max(axis=2)
        assert diff.max() <= 1, f"{(diff > 1).sum()} colours differ, first at (y, x) {tuple(np.argwhere(diff > 1)[0])}"
        assert (colour[..., 3] == 255).all()
        return ids, want_frame


@pytest.fixture(scope="module")
def rig(device):
    r = Rig(device, synthetic(spans=4000, processes=2, threads_per_process=3, seed=5))
    yield r
    r.close()


def _extent_shift(rig, width):
    """The smallest power-of-two ns per column that fits the whole trace in ``width`` columns."""
    return max(0, int(np.ceil(np.log2(max(rig.graph.frame.extent_ns, 1) / width))))


def test_zoomed_out_merges_and_draws(rig):
    size = (400, 300)
    shift = _extent_shift(rig, size[0] - 24)
    state = rig.state(start=0, shift=shift, width=size[0] - 24)
    ids, frame = rig.check(state, size=size, shift=shift)
    assert len(frame.merged) > 20 and len(frame.drawn) > 20  # both kinds on screen
    assert (ids != NO_ID).sum() > 1000


def test_deep_zoom_spreads_wide_spans(rig):
    size = (300, 200)
    o = rig.oracle
    rows = rig.graph.frame.layout(rig.state(start=0, shift=0, width=10)).thread_row[o.thread] + o.lane
    long = int(np.argmax(np.where(rows < 10, o.duration, -1)))  # its middle at 1 ns per column: a whole row
    start = int(o.start[long] - rig.scene.time_origin_ns + o.duration[long] // 2)
    state = rig.state(start=start, shift=0, width=size[0] - 24)
    ids, frame = rig.check(state, size=size, shift=0)
    row_ids = ids[ids != NO_ID]
    assert int(rig.scene.span_ids[long]) in row_ids  # it covers whole pixel rows
    assert (ids == rig.scene.span_ids[long]).sum() >= size[0] - 24


def test_selection_ring_hover_and_a_scrolled_first_row(rig):
    size = (360, 240)
    shift = _extent_shift(rig, size[0] - 24) - 3
    state = rig.state(start=rig.graph.frame.extent_ns // 3, shift=shift, width=size[0] - 24, rows=(2, 30))
    frame = rig.oracle.frame(state)
    drawn = rig.scene.span_ids[frame.drawn]
    assert len(drawn) > 6
    ids, _ = rig.check(state, size=size, shift=shift, selection=drawn[:6], hover=int(drawn[7]), scale=1.0)
    # and the same at scale 2 (a 3-pixel ring, 2-pixel row gaps)
    rig.check(state, size=size, shift=shift, selection=drawn[:6], hover=int(drawn[1]), scale=2.0, row_height=24,
              top=16, gutter=48)


def test_search_and_focus_dim(rig):
    size = (320, 200)
    shift = _extent_shift(rig, size[0] - 24)
    names = np.zeros(len(rig.scene.names), bool)
    names[::2] = True
    links = rig.trace.links.column("source").to_numpy()[:4]
    state = rig.state(start=0, shift=shift, width=size[0] - 24, search=names, search_mode="highlight",
                      focus_seeds=tuple(int(v) for v in links), focus_depth=2, focus_mode="dim")
    rig.check(state, size=size, shift=shift)


def test_density_bars_of_a_collapsed_process(rig):
    size = (320, 220)
    shift = _extent_shift(rig, size[0] - 24)
    expanded = np.ones(rig.graph.frame.process_count, bool)
    expanded[0] = False
    state = rig.state(start=0, shift=shift, width=size[0] - 24, process_expanded=expanded)
    _, frame = rig.check(state, size=size, shift=shift)
    assert len(frame.density) > 10 and frame.stats["density_max"] > 1


def test_render_size_at_the_frame_texture_edge(rig):
    fw = rig.graph.frame_size[0]
    size = (fw, 64)
    shift = _extent_shift(rig, fw - 24) - 1  # the right half lies past the trace: the last column clamps
    state = rig.state(start=rig.graph.frame.extent_ns // 2, shift=shift, width=fw - 24, rows=(0, 4))
    ids, _ = rig.check(state, size=size, shift=shift, row_height=12, top=0, bottom=64)
    assert (ids[:, fw - 1] != NO_ID).any() or (ids[:, fw // 2] != NO_ID).any()


def _tiny(starts, durations):
    return Trace.from_arrow(spans=pa.table({"name": pa.array([f"s{i}" for i in range(len(starts))], pa.string()),
                                            "start_ns": pa.array(starts, pa.int64()),
                                            "duration_ns": pa.array(durations, pa.int64())}))


def test_empty_and_one_span_scenes(device):
    empty = Rig(device, _tiny([], []))
    try:
        state = empty.state(start=0, shift=0, width=100)
        ids, _ = empty.check(state, size=(124, 60), shift=0)
        assert (ids == NO_ID).all()
    finally:
        empty.close()
    one = Rig(device, _tiny([1_000, 1_700], [500, 0]))  # a span and a zero-duration one (1 ns wide)
    try:
        state = one.state(start=0, shift=3, width=200)
        ids, frame = one.check(state, size=(224, 60), shift=3, selection=[0])
        assert (ids == 0).sum() > 0 and len(frame.drawn) == 1
    finally:
        one.close()


def test_a_changed_picture_is_caught(rig):
    """The comparison can fail: the oracle with one selected span more differs."""
    size = (300, 200)
    shift = _extent_shift(rig, size[0] - 24) - 4
    state = rig.state(start=rig.graph.frame.extent_ns // 2, shift=shift, width=size[0] - 24)
    frame = rig.oracle.frame(state)
    drawn = rig.scene.span_ids[frame.drawn]
    colour, _ = rig.render(state, size=size, shift=shift, selection=())
    rgb, _ = trace_graph_tracks(rig.graph, rig.oracle, frame, state, selection=drawn[:1])
    want = np.round(np.clip(rgb, 0, 1) * 255).astype(int)
    assert (np.abs(colour[..., :3].astype(int) - want).max(axis=2) > 1).sum() > 10


def test_runs_past_the_spread_list_are_marked_by_their_own_invocation(device, monkeypatch):
    """A spread list of one run: every other long run takes the scatter's own loop."""
    from gpuviz.widgets.trace import graph as graph_module, tracks

    monkeypatch.setattr(graph_module, "spread_capacity", lambda rows, cols: 1)
    monkeypatch.setattr(tracks, "spread_capacity", lambda rows, cols: 1)
    small = Rig(device, synthetic(spans=600, processes=1, threads_per_process=2, seed=9))
    try:
        size = (260, 160)
        shift = _extent_shift(small, size[0] - 24) - 3
        state = small.state(start=small.graph.frame.extent_ns // 4, shift=shift, width=size[0] - 24)
        ids, frame = small.check(state, size=size, shift=shift)
        widths = np.bincount(ids[ids != NO_ID].astype(np.int64))
        assert (widths > 33 * 11).sum() >= 2  # at least two runs over 32 columns (11 pixel rows each)
    finally:
        small.close()
