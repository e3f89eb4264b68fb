"""Pointer, wheel and key handling of a TraceViewer (rendercanvas events), as
functions from the view's state, its pointer state and an event to new
states.

Drag pans time and rows; the wheel zooms at the cursor (shift+wheel, or
the wheel over the gutter, scrolls rows); W/S zoom in/out, A/D pan, as in
Perfetto and chrome://tracing; a click selects the span under it (GPU
picking), collapses/expands in the gutter, moves the window in the
minimap; shift+drag over the tracks draws a rubber band and, on release,
selects every span shown in that time x row region (GPU region pass); a
double click zooms to a span; Escape clears the selection. Hover is the
GPU picking pass at the pointer, read back a frame or two later.

:func:`handle` never touches the GPU or the viewer: what needs either
(picking, selecting) comes back as a request the viewer carries out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .geometry import (GUTTER, MIN_WINDOW_NS, MINIMAP_HEIGHT, MINIMAP_TOP, MODE_EXPANDED, MODE_THREAD_COLLAPSED,
                       PROCESS_COLUMN, ROW_HEIGHT, TRACKS_TOP, Geometry)

__all__ = ["Drag", "PointerState", "Outcome", "handle", "band", "band_region", "zoom", "pan_pixels",
           "gutter_click", "minimap_click", "resized"]

_CLICK_SLOP = 3.0  # pixels a press may move and still be a click
_ZOOM = 1.5


@dataclass(frozen=True)
class Drag:
    """A press of the primary button: where, the view it started from, and
    whether it moved past the click slop or draws a region band."""

    x: float
    y: float
    window: tuple
    first_row: int
    moved: bool = False
    region: bool = False


@dataclass(frozen=True)
class PointerState:
    """The pointer over a TraceViewer's canvas (logical pixels): its last
    ``position`` (None when it left), the span it ``hover`` s (from a
    readback sample drawn for that position), the ``drag`` in progress and
    the shift-drag rubber ``band`` ``(x0, y0, x1, y1)``."""

    position: tuple | None = None
    hover: int | None = None
    drag: Drag | None = None
    band: tuple | None = None


@dataclass(frozen=True)
class Outcome:
    """What one event did: the new ``state`` (the same object when the view
    did not change), ``pointer``, canvas ``size``, whether to ``redraw``,
    and a ``request`` for the viewer: ``("select_at", x, y)``,
    ``("zoom_at", x, y)``, ``("select_region", window, rows)``,
    ``("clear_selection",)`` or None."""

    state: object
    pointer: PointerState
    size: tuple
    redraw: bool
    request: tuple | None = None


def _shift(event) -> bool:
    return "Shift" in tuple(event.get("modifiers") or ())


def _window(state, start, end):
    return state.with_(window=(int(start), int(end)))


def _first_row(state, row):
    return state.with_(rows=(int(row), state.rows[1]))


def resized(size, width, height) -> tuple:
    """The canvas size a resize event asks for, at least the smallest the view draws."""
    return (max(int(GUTTER) + 40, int(width)), max(int(TRACKS_TOP + 2 * ROW_HEIGHT), int(height)))


def handle(state, pointer, event, *, size, layout, extent) -> Outcome:
    """Apply one event to ``state`` (a TraceViewState), ``pointer`` and the
    canvas ``size``; ``layout`` is the row layout of ``state`` and
    ``extent`` the trace's ``(first start, last end)`` ns."""
    kind = event.get("event_type")
    x, y = float(event.get("x", -1.0)), float(event.get("y", -1.0))
    if kind == "resize":
        size = resized(size, event.get("width", size[0]), event.get("height", size[1]))
        return Outcome(state, pointer, size, True)
    if kind == "pointer_leave":
        return Outcome(state, replace(pointer, hover=None, position=None), size, True)
    if kind == "pointer_down" and event.get("button", 1) == 1:
        region = _shift(event) and x >= GUTTER and y >= TRACKS_TOP
        drag = Drag(x, y, state.window, state.rows[0], region=region)
        return Outcome(state, replace(pointer, drag=drag), size, False)
    if kind == "pointer_move":
        return _move(state, pointer, event, x, y, size, layout, extent)
    if kind == "pointer_up":
        return _release(state, pointer, x, y, size, layout, extent)
    if kind == "wheel":
        dy = float(event.get("dy", 0.0))
        if _shift(event) or x < GUTTER:
            rows = max(layout.total_rows - 1, 0)
            state = _first_row(state, min(max(state.rows[0] + (3 if dy > 0 else -3), 0), rows))
        else:
            state = zoom(state, size, 1.25 ** (max(min(dy, 400.0), -400.0) / 100.0), x)
        return Outcome(state, pointer, size, True)
    if kind == "double_click" and x >= GUTTER and y >= TRACKS_TOP:
        return Outcome(state, pointer, size, True, ("zoom_at", x, y))
    if kind == "key_down":
        return _key(state, pointer, size, event.get("key", ""))
    return Outcome(state, pointer, size, False)


def _move(state, pointer, event, x, y, size, layout, extent) -> Outcome:
    drag = pointer.drag
    pointer = replace(pointer, position=(x, y))
    if drag is None or not event.get("buttons"):
        # a move without buttons: hover (browsers send one right after a press, so it does
        # not end a drag; pointer_up does). The next frame's picking pass reads the span
        # under the pointer and the readback ring brings it back (no CPU hit test).
        if x < GUTTER or y < TRACKS_TOP:
            pointer = replace(pointer, hover=None)
        return Outcome(state, pointer, size, True)
    if abs(x - drag.x) + abs(y - drag.y) > _CLICK_SLOP:
        drag = replace(drag, moved=True)
        pointer = replace(pointer, drag=drag)
    if drag.region:
        pointer = replace(pointer, band=band(Geometry.of(state, size), drag, x, y))
    elif drag.moved:
        state = _pan_to(state, size, layout, extent, drag, x, y)
    return Outcome(state, pointer, size, True)


def band(geometry, drag, x, y) -> tuple:
    """The rubber band from the press to ``(x, y)``, clipped to the tracks (logical pixels)."""
    x0, x1 = sorted((min(max(v, GUTTER), geometry.width) for v in (drag.x, x)))
    y0, y1 = sorted((min(max(v, TRACKS_TOP), geometry.bottom) for v in (drag.y, y)))
    return (x0, y0, x1, y1)


def band_region(geometry, rect) -> tuple:
    """((t0_ns, t1_ns), (row0, row1)) covered by a band: the columns' times
    (floor / ceil of the pixel edges) and every row it touches (half-open)."""
    x0, y0, x1, y1 = rect
    t0 = int(np.floor(geometry.t_of(x0)))
    t1 = max(int(np.ceil(geometry.t_of(x1))), t0 + 1)
    row0 = geometry.first_row + int((y0 - TRACKS_TOP) // ROW_HEIGHT)
    row1 = geometry.first_row + int(max(y1 - TRACKS_TOP - 1e-6, 0.0) // ROW_HEIGHT) + 1
    return (t0, t1), (row0, max(row1, row0 + 1))


def _pan_to(state, size, layout, extent, drag, x, y):
    """Pan so that the pressed point follows the pointer (time and rows)."""
    if drag.y >= TRACKS_TOP:
        shift = int(round((drag.x - x) / Geometry.of(state, size).px_per_ns))
        w0, w1 = drag.window
        rows = max(layout.total_rows - 1, 0)
        state = _first_row(state, min(max(drag.first_row + int(round((drag.y - y) / ROW_HEIGHT)), 0), rows))
        return _window(state, w0 + shift, w1 + shift)
    if MINIMAP_TOP <= drag.y < MINIMAP_TOP + MINIMAP_HEIGHT:
        return minimap_click(state, size, extent, x)
    return state


def _release(state, pointer, x, y, size, layout, extent) -> Outcome:
    drag = pointer.drag
    pointer = replace(pointer, drag=None)
    if drag is not None and drag.region:
        window, rows = band_region(Geometry.of(state, size), band(Geometry.of(state, size), drag, x, y))
        return Outcome(state, replace(pointer, band=None), size, True, ("select_region", window, rows))
    if drag is not None and abs(x - drag.x) + abs(y - drag.y) > _CLICK_SLOP:
        # a drag, even when the moves in between were merged or came late (rendercanvas
        # hands them over at the next frame): the release point decides
        return Outcome(_pan_to(state, size, layout, extent, drag, x, y), pointer, size, True)
    if drag is None or drag.moved:
        return Outcome(state, pointer, size, drag is not None)
    if MINIMAP_TOP <= y < MINIMAP_TOP + MINIMAP_HEIGHT and x >= GUTTER:
        return Outcome(minimap_click(state, size, extent, x), pointer, size, True)
    if y < TRACKS_TOP:
        return Outcome(state, pointer, size, False)
    if x < GUTTER:
        toggled = gutter_click(state, layout, x, y)
        return Outcome(state if toggled is None else toggled, pointer, size, toggled is not None)
    return Outcome(state, pointer, size, True, ("select_at", x, y))


def _key(state, pointer, size, key) -> Outcome:
    key = str(key).lower()
    if key == "escape":
        return Outcome(state, pointer, size, True, ("clear_selection",))
    if key == "w":
        state = zoom(state, size, 1 / _ZOOM)
    elif key == "s":
        state = zoom(state, size, _ZOOM)
    elif key in ("a", "d"):
        width = Geometry.of(state, size).plot_width
        state = pan_pixels(state, size, (-0.2 if key == "a" else 0.2) * width)
    else:
        return Outcome(state, pointer, size, False)
    return Outcome(state, pointer, size, True)


def gutter_click(state, layout, x, y):
    """The state with the process (process column) or thread under a gutter
    click collapsed or expanded, or None when the click hit neither."""
    row = state.rows[0] + int((y - TRACKS_TOP) // ROW_HEIGHT)
    if x < PROCESS_COLUMN:
        hit = np.flatnonzero((layout.process_row <= row) & (layout.process_row + layout.process_height > row))
        if not len(hit):
            return None
        expanded = state.process_expanded.copy()
        expanded[int(hit[0])] = not expanded[int(hit[0])]
        return state.with_(process_expanded=expanded)
    hit = np.flatnonzero((layout.thread_row <= row) & (layout.thread_row + layout.thread_height > row)
                         & (layout.thread_mode == MODE_EXPANDED) | ((layout.thread_row == row)
                                                                    & (layout.thread_mode == MODE_THREAD_COLLAPSED)))
    if not len(hit):
        return None
    expanded = state.thread_expanded.copy()
    expanded[int(hit[0])] = not expanded[int(hit[0])]
    return state.with_(thread_expanded=expanded)


def minimap_click(state, size, extent, x):
    """The state with its window (same width) centred where the minimap was clicked."""
    t0, t1 = extent
    frac = (x - GUTTER) / max(size[0] - 4 - GUTTER, 1)
    centre = t0 + frac * (t1 - t0)
    w0, w1 = state.window
    half = (w1 - w0) // 2
    return _window(state, int(centre) - half, int(centre) - half + (w1 - w0))


def zoom(state, size, factor, x=None):
    """The state zoomed by ``factor`` (< 1: in) at pixel ``x`` (default: the window's centre)."""
    geometry = Geometry.of(state, size)
    w0, w1 = state.window
    at = geometry.t_of(x) if x is not None and x >= GUTTER else (w0 + w1) / 2
    width = max((w1 - w0) * factor, MIN_WINDOW_NS)
    new0 = at - (at - w0) * width / (w1 - w0)
    return _window(state, int(round(new0)), int(round(new0)) + max(int(round(width)), 1))


def pan_pixels(state, size, dx):
    """The state panned by ``dx`` logical pixels of time."""
    shift = int(round(dx / Geometry.of(state, size).px_per_ns))
    return _window(state, state.window[0] + shift, state.window[1] + shift)
