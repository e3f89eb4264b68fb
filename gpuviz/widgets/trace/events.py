"""Pointer, wheel and key handling of a TraceViewer (rendercanvas events).

Drag pans time and rows; the wheel zooms at the cursor (shift+wheel, or
the wheel over the gutter, scrolls rows); W/S zoom in/out, A/D pan, as in
Perfetto and chrome://tracing; a click selects the span under it (GPU
picking), collapses/expands in the gutter, moves the window in the
minimap; a double click zooms to a span; Escape clears the selection.
"""

from __future__ import annotations

from .host import GUTTER, MINIMAP_HEIGHT, MINIMAP_TOP, ROW_HEIGHT, TRACKS_TOP

__all__ = ["handle"]

_CLICK_SLOP = 3.0  # pixels a press may move and still be a click


def _shift(event) -> bool:
    return "Shift" in tuple(event.get("modifiers") or ())


def _press(viewer, x, y) -> None:
    viewer._drag = {"x": x, "y": y, "window": viewer._window, "row": viewer._first_row, "moved": False}


def _move(viewer, event, x, y) -> bool:
    drag = viewer._drag
    viewer._pointer = (x, y)
    if drag is None or not event.get("buttons"):
        # a move without buttons: hover (browsers send one right after a press, so it does
        # not end a drag; pointer_up does)
        hover = viewer._hit(x, y)
        changed = hover != viewer._hover
        viewer._hover = hover
        return changed or hover is not None
    if abs(x - drag["x"]) + abs(y - drag["y"]) > _CLICK_SLOP:
        drag["moved"] = True
    if drag["moved"]:
        _pan_to(viewer, drag, x, y)
    return True


def _pan_to(viewer, drag, x, y) -> None:
    """Pan so that the pressed point follows the pointer (time and rows)."""
    if drag["y"] >= TRACKS_TOP:
        geometry = viewer._geometry()
        shift = int(round((drag["x"] - x) / geometry.px_per_ns))
        w0, w1 = drag["window"]
        rows = max(viewer._layout().total_rows - 1, 0)
        viewer._first_row = min(max(drag["row"] + int(round((drag["y"] - y) / ROW_HEIGHT)), 0), rows)
        viewer._set_window(w0 + shift, w1 + shift)
    elif MINIMAP_TOP <= drag["y"] < MINIMAP_TOP + MINIMAP_HEIGHT:
        viewer._minimap_click(x)


def _release(viewer, x, y) -> bool:
    drag, viewer._drag = viewer._drag, None
    if drag is not None and abs(x - drag["x"]) + abs(y - drag["y"]) > _CLICK_SLOP:
        # a drag, even when the moves in between were merged or came late (rendercanvas
        # hands them over at the next frame): the release point decides
        _pan_to(viewer, drag, x, y)
        return True
    if drag is None or drag["moved"]:
        return drag is not None
    if MINIMAP_TOP <= y < MINIMAP_TOP + MINIMAP_HEIGHT and x >= GUTTER:
        viewer._minimap_click(x)
        return True
    if y < TRACKS_TOP:
        return False
    if x < GUTTER:
        return viewer._gutter_click(x, y)
    picked = viewer.pick(x, y)
    viewer.select([] if picked is None else [picked])
    return True


def _key(viewer, key) -> bool:
    key = str(key).lower()
    if key == "escape":
        viewer.select([])
    elif key == "w":
        viewer._zoom(1 / _ZOOM)
    elif key == "s":
        viewer._zoom(_ZOOM)
    elif key in ("a", "d"):
        width = viewer._geometry().plot_width
        viewer._pan_pixels((-0.2 if key == "a" else 0.2) * width)
    else:
        return False
    return True


_ZOOM = 1.5


def handle(viewer, event) -> bool:
    """Apply one event to ``viewer``; True when something changed."""
    kind = event.get("event_type")
    x, y = float(event.get("x", -1.0)), float(event.get("y", -1.0))
    if kind == "resize":
        w, h = event.get("width", viewer._size[0]), event.get("height", viewer._size[1])
        viewer._size = (max(int(GUTTER) + 40, int(w)), max(int(TRACKS_TOP + 2 * ROW_HEIGHT), int(h)))
        viewer._changed()
        return True
    if kind == "pointer_leave":
        viewer._hover, viewer._pointer = None, None
        return True
    if kind == "pointer_down" and event.get("button", 1) == 1:
        _press(viewer, x, y)
        return False
    if kind == "pointer_move":
        return _move(viewer, event, x, y)
    if kind == "pointer_up":
        return _release(viewer, x, y)
    if kind == "wheel":
        dy = float(event.get("dy", 0.0))
        if _shift(event) or x < GUTTER:
            rows = max(viewer._layout().total_rows - 1, 0)
            viewer._first_row = min(max(viewer._first_row + (3 if dy > 0 else -3), 0), rows)
            viewer._changed()
        else:
            viewer._zoom(1.25 ** (max(min(dy, 400.0), -400.0) / 100.0), x)
        return True
    if kind == "double_click" and x >= GUTTER and y >= TRACKS_TOP:
        picked = viewer.pick(x, y)
        if picked is not None:
            viewer.zoom_to_span(picked)
        return True
    if kind == "key_down":
        return _key(viewer, event.get("key", ""))
    return False
