"""Pointer, wheel and key handling of a TraceViewer (rendercanvas events).

Drag pans time and rows; the wheel zooms at the cursor (shift+wheel, or
the wheel over the gutter, scrolls rows); W/S zoom in/out, A/D pan, as in
Perfetto and chrome://tracing; a click selects the span under it (GPU
picking), collapses/expands in the gutter, moves the window in the
minimap; shift+drag over the tracks draws a rubber band and, on release,
selects every span shown in that time x row region (GPU region pass,
:mod:`.region`); a double click zooms to a span; Escape clears the
selection. Hover is the GPU picking pass at the pointer, read back
through the viewer's readback ring a frame or two later.
"""

from __future__ import annotations

import numpy as np

from .geometry import (GUTTER, MIN_WINDOW_NS, MINIMAP_HEIGHT, MINIMAP_TOP, MODE_EXPANDED, PROCESS_COLUMN, ROW_HEIGHT,
                   TRACKS_TOP)

__all__ = ["handle", "band", "band_region", "zoom", "pan_pixels", "gutter_click", "minimap_click"]

_CLICK_SLOP = 3.0  # pixels a press may move and still be a click


def _shift(event) -> bool:
    return "Shift" in tuple(event.get("modifiers") or ())


def _press(viewer, x, y, region=False) -> None:
    viewer._drag = {"x": x, "y": y, "window": viewer._window, "row": viewer._first_row, "moved": False,
                    "region": region and x >= GUTTER and y >= TRACKS_TOP}


def _move(viewer, event, x, y) -> bool:
    drag = viewer._drag
    viewer._pointer = (x, y)
    if drag is None or not event.get("buttons"):
        # a move without buttons: hover (browsers send one right after a press, so it does
        # not end a drag; pointer_up does). The next frame's picking pass reads the span
        # under the pointer and the readback ring brings it back (no CPU hit test).
        if x < GUTTER or y < TRACKS_TOP:
            viewer._hover = None
        return True
    if abs(x - drag["x"]) + abs(y - drag["y"]) > _CLICK_SLOP:
        drag["moved"] = True
    if drag["region"]:
        viewer._band = band(viewer, drag, x, y)
    elif drag["moved"]:
        _pan_to(viewer, drag, x, y)
    return True


def band(viewer, drag, x, y) -> tuple:
    """The rubber band from the press to ``(x, y)``, clipped to the tracks (logical pixels)."""
    geometry = viewer._geometry()
    x0, x1 = sorted((min(max(v, GUTTER), geometry.width) for v in (drag["x"], x)))
    y0, y1 = sorted((min(max(v, TRACKS_TOP), geometry.bottom) for v in (drag["y"], y)))
    return (x0, y0, x1, y1)


def band_region(viewer, rect) -> tuple:
    """((t0_ns, t1_ns), (row0, row1)) covered by a band: the columns' times
    (floor / ceil of the pixel edges) and every row it touches (half-open)."""
    geometry = viewer._geometry()
    x0, y0, x1, y1 = rect
    t0 = int(np.floor(geometry.t_of(x0)))
    t1 = max(int(np.ceil(geometry.t_of(x1))), t0 + 1)
    row0 = viewer._first_row + int((y0 - TRACKS_TOP) // ROW_HEIGHT)
    row1 = viewer._first_row + int(max(y1 - TRACKS_TOP - 1e-6, 0.0) // ROW_HEIGHT) + 1
    return (t0, t1), (row0, max(row1, row0 + 1))


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
        minimap_click(viewer, x)


def _release(viewer, x, y) -> bool:
    drag, viewer._drag = viewer._drag, None
    if drag is not None and drag["region"]:
        viewer._band = None
        window, rows = band_region(viewer, band(viewer, drag, x, y))
        viewer.select_region(window, rows=rows)
        return True
    if drag is not None and abs(x - drag["x"]) + abs(y - drag["y"]) > _CLICK_SLOP:
        # a drag, even when the moves in between were merged or came late (rendercanvas
        # hands them over at the next frame): the release point decides
        _pan_to(viewer, drag, x, y)
        return True
    if drag is None or drag["moved"]:
        return drag is not None
    if MINIMAP_TOP <= y < MINIMAP_TOP + MINIMAP_HEIGHT and x >= GUTTER:
        minimap_click(viewer, x)
        return True
    if y < TRACKS_TOP:
        return False
    if x < GUTTER:
        return gutter_click(viewer, x, y)
    picked = viewer.pick(x, y)
    viewer.select([] if picked is None else [picked])
    return True


def _key(viewer, key) -> bool:
    key = str(key).lower()
    if key == "escape":
        viewer.select([])
    elif key == "w":
        zoom(viewer, 1 / _ZOOM)
    elif key == "s":
        zoom(viewer, _ZOOM)
    elif key in ("a", "d"):
        width = viewer._geometry().plot_width
        pan_pixels(viewer, (-0.2 if key == "a" else 0.2) * width)
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
        _press(viewer, x, y, region=_shift(event))
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
            zoom(viewer, 1.25 ** (max(min(dy, 400.0), -400.0) / 100.0), x)
        return True
    if kind == "double_click" and x >= GUTTER and y >= TRACKS_TOP:
        picked = viewer.pick(x, y)
        if picked is not None:
            viewer.zoom_to_span(picked)
        return True
    if kind == "key_down":
        return _key(viewer, event.get("key", ""))
    return False


def gutter_click(viewer, x, y) -> bool:
    layout = viewer._layout()
    row = viewer._first_row + int((y - TRACKS_TOP) // ROW_HEIGHT)
    if x < PROCESS_COLUMN:
        hit = np.flatnonzero((layout.process_row <= row) & (layout.process_row + layout.process_height > row))
        if len(hit):
            p = int(hit[0])
            viewer._process_expanded[p] = not viewer._process_expanded[p]
            viewer._changed()
            return True
        return False
    hit = np.flatnonzero((layout.thread_row <= row) & (layout.thread_row + layout.thread_height > row)
                         & (layout.thread_mode == MODE_EXPANDED) | ((layout.thread_row == row)
                                                                    & (layout.thread_mode == 1)))
    if len(hit):
        t = int(hit[0])
        viewer._thread_expanded[t] = not viewer._thread_expanded[t]
        viewer._changed()
        return True
    return False


def minimap_click(viewer, x) -> None:
    t0, t1 = viewer.index.extent
    frac = (x - GUTTER) / max(viewer._size[0] - 4 - GUTTER, 1)
    centre = t0 + frac * (t1 - t0)
    w0, w1 = viewer._window
    half = (w1 - w0) // 2
    viewer._set_window(int(centre) - half, int(centre) - half + (w1 - w0))


def zoom(viewer, factor, x=None) -> None:
    geometry = viewer._geometry()
    w0, w1 = viewer._window
    at = geometry.t_of(x) if x is not None and x >= GUTTER else (w0 + w1) / 2
    width = max((w1 - w0) * factor, MIN_WINDOW_NS)
    new0 = at - (at - w0) * width / (w1 - w0)
    viewer._set_window(int(round(new0)), int(round(new0)) + max(int(round(width)), 1))


def pan_pixels(viewer, dx) -> None:
    geometry = viewer._geometry()
    shift = int(round(dx / geometry.px_per_ns))
    viewer._set_window(viewer._window[0] + shift, viewer._window[1] + shift)
