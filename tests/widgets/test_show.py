"""gpuviz.show's checks and output, and the registry behind the GPU side panel
(without a browser: the bundle each host chooses from, the registry's
snapshot and its comm protocol)."""

import gc

import comm
import ipywidgets
import numpy as np
import pytest
import wgpu

from gpuviz import GPUCommandGraph, GPUData
from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.widgets import registry
from gpuviz.widgets.canvas import GPUCanvas
from gpuviz.widgets.inspector import GraphInspector
from gpuviz.widgets.show import PLACES, SHOW_MIME, show, show_bundle

from ..graph.helpers import affine_node

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def displayed(monkeypatch):
    """What show() displays: a list of (objects, keyword arguments)."""
    import IPython.display

    calls = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: calls.append((objs, kw)))
    return calls


def test_show_refuses_bad_arguments():
    button = ipywidgets.Button()
    with pytest.raises(GraphTypeError, match="show takes an ipywidget.*got str"):
        show("not a widget")
    with pytest.raises(GraphTypeError, match="got ndarray"):
        show(np.zeros(3))
    for where in ("left", "main", "", "RIGHT", None, 3):
        with pytest.raises(GraphValidationError, match=r"show where must be one of 'right', 'split-right'"):
            show(button, where=where)
    with pytest.raises(GraphTypeError, match="show title must be a string or None .got int"):
        show(button, title=3)
    closed = ipywidgets.Button()
    closed.close()
    with pytest.raises(GraphStateError, match="show cannot display Button: the widget was closed"):
        show(closed)
    with pytest.raises(GraphValidationError, match='where="inline"'):
        show_bundle(button, where="inline")
    with pytest.raises(TypeError):
        show(button, "right")  # keyword-only


def test_show_displays_a_bundle_with_an_inline_fallback(displayed):
    button = ipywidgets.Button(description="go")
    for where in PLACES[:-1]:
        show(button, where=where, title="my button")
    assert len(displayed) == 4
    ids = set()
    for (bundle,), kw in displayed:
        assert kw == {"raw": True}
        assert set(bundle) == {SHOW_MIME, WIDGET_MIME, "text/plain"}
        request = bundle[SHOW_MIME]
        assert request["model_id"] == button.model_id and request["title"] == "my button"
        assert request["kind"] == "Button"
        ids.add(request["show_id"])
        # hosts without the extension render a box: the note, then the widget itself
        fallback = bundle[WIDGET_MIME]
        assert fallback["version_major"] == 2
        assert "no gpuviz extension" in bundle["text/plain"]
    assert [b[SHOW_MIME]["where"] for (b,), _ in displayed] == list(PLACES[:-1])
    assert len(ids) == 4, "each call needs its own show_id (the front end opens each call's panel once)"
    # one fallback box per widget, reused, holding a note and the widget
    assert len({b[WIDGET_MIME]["model_id"] for (b,), _ in displayed}) == 1
    box_id = displayed[0][0][0][WIDGET_MIME]["model_id"]
    box = next(w for w in _all_widgets() if w.model_id == box_id)
    assert isinstance(box, ipywidgets.VBox) and box.children[1] is button
    assert "no gpuviz extension in this front end" in box.children[0].value


def _all_widgets():
    return [w for w in gc.get_objects() if isinstance(w, ipywidgets.Widget) and w.comm is not None]


def test_show_inline_displays_the_widget_and_default_title_is_the_class(displayed):
    slider = ipywidgets.IntSlider()
    show(slider, where="inline")
    assert displayed == [((slider,), {})]
    show(slider)
    (bundle,), _ = displayed[1]
    assert bundle[SHOW_MIME]["where"] == "right" and bundle[SHOW_MIME]["title"] == "IntSlider"


class _Flat:
    """A drawable holding a compiled graph (as gpuviz widgets do)."""

    def __init__(self, compiled):
        self.compiled = compiled

    def draw(self, encoder, view, size):
        encoder.begin_render_pass(color_attachments=[{"view": view, "load_op": "clear", "store_op": "store",
                                                      "clear_value": (0, 0, 0, 1)}]).end()


def _compiled(device, graph_id="listed", n=128):
    graph = GPUCommandGraph(device, id=graph_id)
    src = graph.import_gpu_data("values", GPUData.from_numpy(device, np.arange(n, dtype=np.uint32)))
    dst = graph.import_gpu_data("out", GPUData.allocate(device, format="uint32", length=n))
    mid = graph.create_data_view(graph.create_transient_buffer(id="scratch", byte_length=4 * n,
                                                               usage=wgpu.BufferUsage.STORAGE),
                                 format="uint32", length=n)
    affine_node(graph, "double", src, mid, factor=2)
    affine_node(graph, "plus-one", mid, dst, add=1)
    return graph.compile()


def test_registry_lists_canvases_their_graphs_and_tracked_widgets(device, displayed):
    compiled = _compiled(device)
    canvas = GPUCanvas(_Flat(compiled), device=device, size=(200, 100))
    slider = ipywidgets.IntSlider()
    show(slider, where="tab", title="a slider")
    try:
        state = registry.snapshot()
        widgets = {w["model_id"]: w for w in state["widgets"]}
        assert widgets[canvas.model_id]["kind"] == "GPUCanvas"
        # the canvas's logical size as its view last reported it (1x1 until a browser view measures it)
        assert widgets[canvas.model_id]["size"] == [int(v) for v in canvas.get_logical_size()]
        assert widgets[canvas.model_id]["frames"] == canvas.frames_drawn
        # the last frame's time is the kernel's measured cost of one frame at the canvas's size
        width, height = canvas.get_physical_size()
        canvas.interaction.record_frame(0.012, width * height)
        entry = next(w for w in registry.snapshot()["widgets"] if w["model_id"] == canvas.model_id)
        assert entry["last_frame_source"] == "kernel frame"
        assert entry["last_frame_ms"] == pytest.approx(12.0)
        assert widgets[canvas.model_id]["graphs"] == ["listed"]
        assert widgets[slider.model_id] == {"model_id": slider.model_id, "kind": "IntSlider", "title": "a slider",
                                            "size": None, "frames": None, "last_frame_ms": None,
                                            "last_frame_source": None, "graphs": []}
        graphs = {g["id"]: g for g in state["graphs"]}
        entry = graphs["listed"]
        stats = compiled.stats
        assert (entry["nodes"], entry["passes"]) == (2, stats.pass_count) == (2, 1)
        assert entry["memory_bytes"] == stats.physical_transient_bytes == 4 * 128
        assert entry["logical_bytes"] == stats.logical_transient_bytes
        assert entry["destroyed"] is False and entry["inspector_model_id"] is None
        # opening a graph no inspector shows makes one, and reuses it afterwards
        opened = registry.open_entry(entry["key"])
        inspector = next(w for w in _all_widgets() if w.model_id == opened["model_id"])
        assert isinstance(inspector, GraphInspector) and inspector.compiled is compiled
        assert registry.open_entry(entry["key"])["model_id"] == opened["model_id"]
        assert registry.open_entry(slider.model_id) == {"model_id": slider.model_id, "title": "a slider"}
        compiled.destroy()
        assert {g["id"]: g for g in registry.snapshot()["graphs"]}["listed"]["destroyed"] is True
    finally:
        ids = canvas.model_id, slider.model_id
        canvas.close()
        slider.close()
    state = registry.snapshot()
    assert not set(ids) & {w["model_id"] for w in state["widgets"]}, "closed widgets are not listed"
    with pytest.raises(GraphValidationError, match="registry has no live widget or graph 'nope'"):
        registry.open_entry("nope")


def test_registry_reports_inspector_frame_times(device):
    compiled = _compiled(device, "timed")
    inspector = GraphInspector(compiled, refresh_interval=0)
    registry.track(inspector, title="timed inspector")
    try:
        encoder = device.create_command_encoder()
        cpu = compiled.encode(encoder)
        device.queue.submit([encoder.finish()])
        inspector.record_encode(cpu)
        state = registry.snapshot()
        entry = next(w for w in state["widgets"] if w["model_id"] == inspector.model_id)
        assert entry["last_frame_source"] == "CPU encode"
        assert entry["last_frame_ms"] == pytest.approx(sum(cpu.values()) * 1e3)
        graph = next(g for g in state["graphs"] if g["id"] == "timed")
        assert graph["inspector_model_id"] == inspector.model_id
        assert graph["last_frame_ms"] == pytest.approx(sum(cpu.values()) * 1e3)
        assert registry.open_entry(graph["key"])["model_id"] == inspector.model_id
    finally:
        inspector.close()
        compiled.destroy()


def test_registry_tracks_weakly_and_checks_its_arguments(device):
    with pytest.raises(GraphTypeError, match="registry track takes an ipywidget or a CompiledGPUCommandGraph"):
        registry.track(object())
    with pytest.raises(GraphTypeError, match="title must be a string"):
        registry.track(ipywidgets.Button(), title=1)
    compiled = _compiled(device, "tracked-only")
    registry.track(compiled)
    assert "tracked-only" in [g["id"] for g in registry.snapshot()["graphs"]]
    compiled.destroy()
    del compiled
    gc.collect()
    assert "tracked-only" not in [g["id"] for g in registry.snapshot()["graphs"]]


class _FakeComm:
    def __init__(self):
        self.sent, self.handler = [], None

    def on_msg(self, handler):
        self.handler = handler

    def send(self, data):
        self.sent.append(data)

    def message(self, data):
        self.handler({"content": {"data": data}})


def test_registry_comm_protocol():
    registry.install()
    assert registry.install() is False  # idempotent
    target = comm.get_comm_manager().targets[registry.TARGET]
    fake = _FakeComm()
    target(fake, {"content": {"data": {"request": "hello", "app": "JupyterLab", "app_version": "4.6.6",
                                       "extension_version": "0.1.0"}}})
    assert fake.sent == [{"reply": "hello", "id": None}]
    assert registry.frontend() == {"app": "JupyterLab", "app_version": "4.6.6", "extension_version": "0.1.0"}
    button = ipywidgets.Button()
    registry.track(button, title="b")
    fake.message({"request": "list", "id": 7})
    reply = fake.sent[-1]
    assert reply["reply"] == "list" and reply["id"] == 7
    assert button.model_id in [w["model_id"] for w in reply["widgets"]]
    fake.message({"request": "open", "key": button.model_id, "id": 8})
    assert fake.sent[-1] == {"reply": "open", "id": 8, "model_id": button.model_id, "title": "b"}
    fake.message({"request": "open", "key": "graph:0", "id": 9})
    assert fake.sent[-1]["id"] == 9 and fake.sent[-1]["error"].startswith("GraphValidationError: registry has no")
    fake.message({"request": "frobnicate", "id": 10})
    assert fake.sent[-1] == {"reply": "frobnicate", "id": 10, "error": "unknown request 'frobnicate'"}
    button.close()
