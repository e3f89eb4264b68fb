"""Widgets under misuse (issue 10): offscreen sizes, closed widgets, wrong
argument types, destroyed graphs and watched counts, and device loss.

What could abort the process (a Rust panic, exit status 134) runs in a
subprocess whose exit status is checked; the rest runs in-process.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

from gpuviz import GPUCommandGraph, GPUData, GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.widgets import DataAnalysis, GPUCanvas, GraphInspector, draw_offscreen

from .test_canvas import Quadrants
from .test_inspector import _compiled


def run_isolated(code: str) -> str:
    """Run ``code`` in a fresh interpreter; assert it exited normally (an
    abort inside wgpu-native exits with 134) and return its stdout."""
    env = dict(os.environ, XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(5)
    n = 600
    return pa.table({"x": rng.random(n).astype(np.float32), "y": rng.random(n).astype(np.float32),
                     "v": rng.random(n), "g": pa.array(rng.choice(["a", "b"], n))})


def small(table, **kwargs):
    return DataAnalysis(table, **dict(dict(x="x", y="y", value="v", bins=8, max_bins=16, grid_size=(8, 8),
                                           size=(80, 60)), **kwargs))


# ------------------------------------------------------------ offscreen sizes
class Failing(Quadrants):
    def draw(self, encoder, target, size):
        raise RuntimeError("drawable failed")


def _offscreen_callers(device, widget):
    canvas = GPUCanvas(Quadrants(), device=device, size=(16, 16))
    return {"draw_offscreen": lambda **size: draw_offscreen(Quadrants(), device=device, **size),
            "GPUCanvas.draw_offscreen": canvas.draw_offscreen,
            "DataAnalysis.draw_offscreen": widget.draw_offscreen}


def test_offscreen_sizes_outside_the_device_limit_are_refused(device, table):
    widget = small(table, device=device)
    limit = int(device.limits["max-texture-dimension-2d"])
    for name, call in _offscreen_callers(device, widget).items():
        for width, height in ((limit + 1, 10), (10, limit + 1), (0, 10), (10, 0), (-1, 10), (10, -5)):
            with pytest.raises(GraphValidationError, match=f"max-texture-dimension-2d.*{limit}") as info:
                call(width=width, height=height)
            bad = width if not 1 <= width <= limit else height
            assert f"draw_offscreen {'width' if bad is width else 'height'}" in str(info.value), name
            assert f"(got {bad})" in str(info.value), name
        for width in (2.5, True, "40", None):
            with pytest.raises(GraphTypeError, match="draw_offscreen width"):
                call(width=width, height=10)
        assert call(width=np.int64(3), height=2).shape == (2, 3, 4)
    assert draw_offscreen(Quadrants(), width=limit, height=1, device=device).shape == (1, limit, 4)
    widget.close()


def test_offscreen_raises_what_the_drawable_raised(device):
    with pytest.raises(RuntimeError, match="drawable failed"):
        draw_offscreen(Failing(), width=8, height=8, device=device)
    assert draw_offscreen(Quadrants(), width=8, height=8, device=device).shape == (8, 8, 4)  # still usable


# ------------------------------------------------------------ closed widgets
def test_every_call_on_a_closed_widget_raises_graph_state_error(table):
    widget = small(table)
    widget.close()
    calls = {"results": widget.results, "set_bounds": lambda: widget.set_bounds((0, 0, 1, 1)),
             "set_bins": lambda: widget.set_bins(4), "set_scale": lambda: widget.set_scale("log"),
             "set_edges": lambda: widget.set_edges([0, 0.5, 1]), "set_operation": lambda: widget.set_operation("max"),
             "set_columns": lambda: widget.set_columns(x="y"), "set_value_range": lambda: widget.set_value_range((0, 1)),
             "reset_view": widget.reset_view, "draw_offscreen": lambda: widget.draw_offscreen(width=8, height=8),
             "handle_event": lambda: widget.handle_event({"event_type": "resize"}),
             "draw": lambda: widget.draw(None, None, (8, 8))}
    for name, call in calls.items():
        with pytest.raises(GraphStateError, match=f'DataAnalysis .*"x".*"y".*"v".* is closed: {name}\\(\\)'):
            call()
    widget.close()  # closing twice is harmless
    assert widget.bins == 8 and widget.columns == {"x": "x", "y": "y", "value": "v"}  # host state stays readable


def test_events_that_are_not_mappings_are_refused(table):
    widget = small(table)
    for event in (None, "wheel", 3):
        with pytest.raises(GraphTypeError, match="DataAnalysis .* handle_event\\(\\) takes a rendercanvas event"):
            widget.handle_event(event)
    assert widget.handle_event({"event_type": "resize"}) is True
    widget.close()


# ------------------------------------------------------------ the inspector
def test_inspector_refuses_what_is_not_a_compiled_graph(device):
    graph = GPUCommandGraph(device, id="uncompiled")
    for value, shown in ((graph, "GPUCommandGraph"), (42, "int")):
        with pytest.raises(GraphTypeError, match=f"GraphInspector shows a CompiledGPUCommandGraph.*got {shown}"):
            GraphInspector(value)
        with pytest.raises(GraphTypeError, match="GraphInspector"):
            GraphInspector().attach(value)


def test_inspector_says_when_its_graph_was_destroyed(device):
    compiled, _ = _compiled(device, n=8)
    inspector = GraphInspector(compiled, refresh_interval=0)
    assert "destroyed" not in inspector.to_html()
    compiled.destroy()
    page = inspector.to_html()
    assert 'CompiledGPUCommandGraph "inspected" was destroyed' in page
    assert "plus-one" not in page  # no plan of resources that no longer exist
    inspector.poll()
    assert inspector.snapshot["destroyed"] is True  # what the browser was sent says so too


def test_watch_counts_checks_what_it_watches(device):
    compiled, counts = _compiled(device, n=8)
    inspector = GraphInspector(compiled)
    with pytest.raises(GraphTypeError, match='GraphInspector count "visible" must be a GPUData .*got ndarray'):
        inspector.watch_counts({"visible": np.zeros(1)})
    with pytest.raises(GraphValidationError, match='GraphInspector count "visible" must be one uint32 word '
                                                   '.*\\(got 8 rows of uint32 at byte 0\\)'):
        inspector.watch_counts({"visible": counts})
    gone = GPUData.allocate(device, format="uint32", length=1, label="gone")
    gone.destroy()
    with pytest.raises(GraphStateError, match='GraphInspector count "visible" .*GPUData "gone".* destroyed'):
        inspector.watch_counts({"visible": gone})
    inspector.close()


def test_a_watched_count_destroyed_later_is_refused_before_recording():
    out = run_isolated("""
        import numpy as np, gpuviz
        from gpuviz import GPUCommandGraph, GPUData, GraphStateError
        from gpuviz.widgets import GraphInspector
        device = gpuviz.request_device()
        graph = GPUCommandGraph(device, id="g")
        graph.import_gpu_data("values", GPUData.from_numpy(device, np.arange(4, dtype=np.uint32)))
        compiled = graph.compile()
        d = GPUData.allocate(device, format="uint32", length=1, label="visible-count")
        inspector = GraphInspector(compiled, count_interval=0)
        inspector.watch_counts({"visible": d})
        d.destroy()
        encoder = device.create_command_encoder()
        try:
            inspector.sample_counts(encoder)
        except GraphStateError as error:
            print("refused:", error)
        device.queue.submit([encoder.finish()])  # nothing was recorded: the encoder is still good
        inspector.poll()
        owner = GPUData.allocate(device, format="uint32", length=4, label="owner")
        inspector.watch_counts({"second": GPUData(owner.buffer, format="uint32", length=1, byte_offset=8)})
        owner.destroy()  # another GPUData over the same buffer destroys it
        encoder = device.create_command_encoder()
        try:
            inspector.sample_counts(encoder)
        except GraphStateError as error:
            print("refused:", error)
        device.queue.submit([encoder.finish()])
        print("end")
    """)
    assert 'refused: GraphInspector count "visible" (GPUData "visible-count") was destroyed' in out
    assert 'refused: GraphInspector count "second"' in out
    assert out.rstrip().endswith("end")


# ------------------------------------------------------------ device loss
def test_device_loss_is_reported_and_drawing_stops():
    out = run_isolated("""
        import numpy as np, pyarrow as pa, gpuviz
        from gpuviz import GraphStateError
        from gpuviz.widgets import DataAnalysis
        rng = np.random.default_rng(0)
        n = 500
        table = pa.table({"x": rng.random(n).astype(np.float32), "y": rng.random(n).astype(np.float32),
                          "v": rng.random(n), "g": pa.array(rng.choice(["a", "b"], n))})
        device = gpuviz.request_device(shared=False)
        widget = DataAnalysis(table, x="x", y="y", value="v", group="g", bins=8, max_bins=16, grid_size=(8, 8),
                              size=(80, 60), device=device)
        widget.inspector.count_interval = 0
        for i in range(3):  # count samples in flight: their maps are pending when the device goes
            widget.set_bounds((0, 0, 0.5 + i / 10, 1))
        canvas = widget.canvas
        drawn = canvas.frames_drawn
        device.destroy()
        print("event", widget.handle_event({"event_type": "wheel", "x": 10, "y": 10, "dy": 100}))
        print("status", widget.status.value)
        widget.inspector.poll()  # the pending count maps are dropped, not read
        canvas.force_draw()
        print("canvas", canvas.frames_drawn - drawn, canvas.device_lost)
        for name, call in (("draw_offscreen", lambda: widget.draw_offscreen(width=40, height=30)),
                           ("results", widget.results), ("set_bins", lambda: widget.set_bins(4))):
            try:
                call()
                print(name, "returned")
            except GraphStateError as error:
                print(name, "refused:", error)
        widget.bins_slider.value = 5  # a control shows the refusal in the status line
        print("slider", widget.status.value)
        widget.close()
        print("end")
    """)
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert lines["event"] == "False"
    assert "GPU device lost: " in lines["status"]
    assert lines["canvas"].startswith("0 ") and "lost" in lines["canvas"]  # no frame after the loss
    for name in ("draw_offscreen", "results", "set_bins"):
        assert lines[name].startswith(f'refused: DataAnalysis (x "x", y "y", value "v") cannot run {name}(): '
                                      "GPU device lost: "), lines[name]
    assert "GPU device lost: " in lines["slider"]
    assert out.rstrip().endswith("end")


def test_canvas_stops_drawing_on_device_loss():
    out = run_isolated("""
        import gpuviz
        from gpuviz import GraphStateError
        from gpuviz.widgets import GPUCanvas
        from tests.widgets.test_canvas import Quadrants
        device = gpuviz.request_device(shared=False)
        drawable = Quadrants()
        lost = []
        drawable.handle_device_lost = lost.append
        canvas = GPUCanvas(drawable, device=device, size=(16, 16))
        canvas.force_draw()
        print("before", canvas.frames_drawn, canvas.device_lost)
        device.destroy()
        canvas.force_draw()
        canvas.force_draw()
        print("after", canvas.frames_drawn, len(lost), lost[0][:16] if lost else None)
        try:
            canvas.draw_offscreen(width=8, height=8)
        except GraphStateError as error:
            print("offscreen", error)
        print("end")
    """)
    assert "before 1 None" in out
    assert "after 1 1 GPU device lost" in out  # reported once, to the drawable's hook
    assert "offscreen draw_offscreen cannot render: GPU device lost: " in out
