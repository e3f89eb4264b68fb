"""The kernel's live gpuviz widgets and compiled graphs, for the "GPU" side panel.

Nothing here holds a widget alive: live widgets are found when asked, from
rendercanvas's list of open canvases (every :class:`GPUCanvas`, whose
``drawable`` is the widget that owns it) plus the widgets passed to
:func:`track` (weakly; :func:`gpuviz.show` tracks what it shows). Compiled
graphs are the :class:`CompiledGPUCommandGraph` attributes of those widgets
(directly, through a ``.compiled`` attribute such as a graph wrapper's or an
inspector's) plus the graphs passed to :func:`track`.

The gpuviz labextension reaches this module through a comm to the target
``"gpuviz.registry"``, registered by :func:`install` (on import). The front
end sends ``{"request": "hello", "app": ...}`` when it opens the comm, then
``{"request": "list", "id": n}`` (answered with :func:`snapshot`) and
``{"request": "open", "key": ..., "id": n}`` (answered with
:func:`open_entry`). A kernel that never imported gpuviz.widgets refuses the
comm, which the front end reports as "no gpuviz in this kernel".
"""

from __future__ import annotations

import weakref

import ipywidgets
from rendercanvas.jupyter import loop as jupyter_loop

from ..errors import GraphTypeError, GraphValidationError
from ..graph.compiled import CompiledGPUCommandGraph
from .canvas import GPUCanvas
from .inspector import GraphInspector

__all__ = ["TARGET", "track", "live_widgets", "live_graphs", "snapshot", "open_entry", "frontend", "install"]

TARGET = "gpuviz.registry"

_widgets: "weakref.WeakValueDictionary[str, ipywidgets.Widget]" = weakref.WeakValueDictionary()
_titles: "weakref.WeakKeyDictionary[ipywidgets.Widget, str]" = weakref.WeakKeyDictionary()
_graphs: "weakref.WeakValueDictionary[int, CompiledGPUCommandGraph]" = weakref.WeakValueDictionary()
# Inspectors the panel created to open a graph no widget inspects (kept while their graph lives).
_opened: "weakref.WeakKeyDictionary[CompiledGPUCommandGraph, GraphInspector]" = weakref.WeakKeyDictionary()
_frontend: dict = {}


def track(obj, *, title: str | None = None) -> None:
    """List ``obj`` (an ipywidget or a CompiledGPUCommandGraph) in the GPU
    panel while it lives, optionally under ``title``. Holds no strong
    reference and never displays anything.

    Raises
    ------
    GraphTypeError
        ``obj`` is neither, or ``title`` is not a string.
    """
    if title is not None and not isinstance(title, str):
        raise GraphTypeError(f"registry track title must be a string (got {type(title).__name__})")
    if isinstance(obj, CompiledGPUCommandGraph):
        _graphs[id(obj)] = obj
        return
    if not isinstance(obj, ipywidgets.Widget):
        raise GraphTypeError(f"registry track takes an ipywidget or a CompiledGPUCommandGraph "
                             f"(got {type(obj).__name__})")
    if not _is_live(obj):
        return  # closed: nothing to list
    _widgets[obj.model_id] = obj
    if title is not None:
        _titles[obj] = title


def _is_live(widget) -> bool:
    return getattr(widget, "comm", None) is not None and widget.model_id is not None


def live_widgets() -> list:
    """The live widgets the panel lists: each open GPUCanvas's owning widget
    (its ``drawable`` when that is an ipywidget, else the canvas), then the
    tracked ones; closed widgets are left out."""
    found = {}
    for canvas in jupyter_loop.get_canvases():
        if isinstance(canvas, GPUCanvas):
            owner = canvas.drawable if isinstance(canvas.drawable, ipywidgets.Widget) else canvas
            if _is_live(owner):
                found.setdefault(owner.model_id, owner)
    for model_id, widget in list(_widgets.items()):
        if _is_live(widget):
            found.setdefault(model_id, widget)
    return list(found.values())


def _parts(widget) -> list:
    """Objects whose attributes may hold graphs: the widget, and a non-widget drawable of a canvas."""
    parts = [widget]
    if isinstance(widget, GPUCanvas) and not isinstance(widget.drawable, ipywidgets.Widget):
        parts.append(widget.drawable)
    return parts


def _graphs_and_inspectors(widget) -> tuple:
    """The compiled graphs a widget holds (one attribute deep, or through a
    gpuviz object's ``.compiled``) and the GraphInspectors among its attributes."""
    graphs, inspectors = [], []
    values = []
    for part in _parts(widget):
        values.append(part)
        values += list(getattr(part, "__dict__", {}).values())
    for value in values:
        if isinstance(value, GraphInspector):
            inspectors.append(value)
        candidates = [value]
        if type(value).__module__.startswith("gpuviz."):
            candidates.append(getattr(value, "compiled", None))
        for candidate in candidates:
            if isinstance(candidate, CompiledGPUCommandGraph) and all(candidate is not g for g in graphs):
                graphs.append(candidate)
    return graphs, inspectors


def live_graphs() -> list:
    """Compiled graphs held by live widgets, then the tracked ones (destroyed
    graphs included: the panel shows them as destroyed)."""
    graphs = []
    for widget in live_widgets():
        graphs += _graphs_and_inspectors(widget)[0]
    graphs += list(_graphs.values())
    unique = []
    for graph in graphs:
        if all(graph is not g for g in unique):
            unique.append(graph)
    return unique


def _frame_of_inspector(inspector) -> tuple:
    """(milliseconds, source) of the inspector's last reported frame, or (None, None)."""
    for source, times in (("GPU", getattr(inspector, "gpu_times", None)),
                          ("CPU encode", getattr(inspector, "cpu_times", None))):
        if times:
            return sum(times.values()) * 1e3, source
    return None, None


def _canvas_frame_seconds(canvas):
    """Seconds the kernel spends on one full-size frame of ``canvas`` (render,
    readback, encode): its ``last_frame_seconds`` if it has one, else the
    cost its interaction model measured per pixel times its pixels; None
    before any frame."""
    seconds = getattr(canvas, "last_frame_seconds", None)
    if seconds is None:
        cost = getattr(getattr(canvas, "interaction", None), "production_cost", None)
        if callable(cost):
            width, height = canvas.get_physical_size()
            seconds = cost(int(width) * int(height))
    return float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else None


def _widget_entry(widget, inspectors_by_graph) -> dict:
    canvas = widget if isinstance(widget, GPUCanvas) else getattr(widget, "canvas", None)
    canvas = canvas if isinstance(canvas, GPUCanvas) else None
    graphs, inspectors = _graphs_and_inspectors(widget)
    if isinstance(widget, GraphInspector):
        inspectors.append(widget)
    last_ms, source = None, None
    seconds = _canvas_frame_seconds(canvas) if canvas is not None else None
    if seconds is not None:
        last_ms, source = seconds * 1e3, "kernel frame"
    else:
        for inspector in inspectors:
            last_ms, source = _frame_of_inspector(inspector)
            if last_ms is not None:
                break
    for inspector in inspectors:
        if isinstance(getattr(inspector, "compiled", None), CompiledGPUCommandGraph) and _is_live(inspector):
            inspectors_by_graph.setdefault(id(inspector.compiled), inspector)
    size = None
    if canvas is not None:
        size = [int(round(v)) for v in canvas.get_logical_size()]
    return {"model_id": widget.model_id, "kind": type(widget).__name__, "title": _titles.get(widget, ""),
            "size": size, "frames": None if canvas is None else int(canvas.frames_drawn),
            "last_frame_ms": last_ms, "last_frame_source": source, "graphs": [g.id for g in graphs]}


def _graph_entry(graph, inspector) -> dict:
    stats = graph.stats
    last_ms, source = _frame_of_inspector(inspector) if inspector is not None else (None, None)
    return {"key": f"graph:{id(graph)}", "id": graph.id, "nodes": len(stats.node_order),
            "passes": int(stats.pass_count), "memory_bytes": int(stats.physical_transient_bytes),
            "logical_bytes": int(stats.logical_transient_bytes), "imported_bytes": int(stats.imported_bytes),
            "reuse_percent": float(stats.reuse_percent), "destroyed": bool(graph.destroyed),
            "last_frame_ms": last_ms, "last_frame_source": source,
            "inspector_model_id": None if inspector is None else inspector.model_id}


def snapshot() -> dict:
    """What the GPU panel shows, as JSON-ready data: ``{"widgets": [...],
    "graphs": [...]}``. Each widget: model_id, kind, title, size (CSS px of
    its canvas), frames drawn, last frame time (ms, and whether it is the
    canvas's frame, the GPU time or the CPU encode time its inspector
    reported; "kernel frame" is the canvas's render + readback + encode)
    and the ids of its graphs. Each graph: key, id, nodes, passes,
    transient memory (physical, logical, reuse %), imported bytes, destroyed,
    last frame time and the model id of an inspector showing it. Reads
    nothing from the GPU."""
    inspectors = {}
    widgets = [_widget_entry(w, inspectors) for w in live_widgets()]
    for graph, inspector in list(_opened.items()):
        if _is_live(inspector):
            inspectors.setdefault(id(graph), inspector)
    graphs = [_graph_entry(g, inspectors.get(id(g))) for g in live_graphs()]
    return {"widgets": widgets, "graphs": graphs}


def open_entry(key: str) -> dict:
    """The widget the panel opens for ``key``: ``{"model_id", "title"}``.
    ``"graph:..."`` keys open the inspector already showing that graph, or
    a new :class:`GraphInspector` of it (kept while the graph lives; it
    reports the plan, not frame timings, which only the graph's owner
    measures). Other keys are widget model ids.

    Raises
    ------
    GraphValidationError
        No live widget or graph has that key (e.g. it was closed since the
        panel listed it).
    """
    if isinstance(key, str) and key.startswith("graph:"):
        for entry in snapshot()["graphs"]:
            if entry["key"] == key:
                graph = next(g for g in live_graphs() if f"graph:{id(g)}" == key)
                if entry["inspector_model_id"] is not None:
                    return {"model_id": entry["inspector_model_id"], "title": f"inspector · {graph.id}"}
                inspector = _opened[graph] = GraphInspector(graph)
                return {"model_id": inspector.model_id, "title": f"inspector · {graph.id}"}
    else:
        for widget in live_widgets():
            if widget.model_id == key:
                return {"model_id": key, "title": _titles.get(widget) or type(widget).__name__}
    raise GraphValidationError(f"registry has no live widget or graph {key!r} (closed since it was listed?)")


def frontend() -> dict:
    """What the last front end that opened the registry comm announced
    (``app``, ``app_version``, ``extension_version``); empty if none did."""
    return dict(_frontend)


def _reply(comm, request: dict) -> None:
    kind = request.get("request")
    reply = {"reply": kind, "id": request.get("id")}
    try:
        if kind == "hello":
            _frontend.clear()
            _frontend.update({k: str(request[k]) for k in ("app", "app_version", "extension_version")
                              if k in request})
        elif kind == "list":
            reply.update(snapshot())
        elif kind == "open":
            reply.update(open_entry(request.get("key")))
        else:
            reply["error"] = f"unknown request {kind!r}"
    except Exception as error:  # the panel shows it; the kernel keeps running
        reply["error"] = f"{type(error).__name__}: {error}"
    comm.send(reply)


def _on_open(comm, message) -> None:
    comm.on_msg(lambda msg: _reply(comm, msg["content"]["data"]))
    _reply(comm, message["content"]["data"])


def install() -> bool:
    """Register the ``"gpuviz.registry"`` comm target with this kernel's comm
    manager (idempotent; outside a kernel it registers with the comm
    package's default manager, which nothing calls). Returns True if it
    registered now."""
    import comm

    manager = comm.get_comm_manager()
    if manager.targets.get(TARGET) is _on_open:
        return False
    manager.register_target(TARGET, _on_open)
    return True


install()
