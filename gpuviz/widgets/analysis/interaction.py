"""Pan and zoom of the :class:`~gpuviz.widgets.DataAnalysis` heatmap: canvas
events in, heatmap bounds out. Host-side only."""

from __future__ import annotations

__all__ = ["PanZoom", "ZOOM_PER_WHEEL_UNIT"]

ZOOM_PER_WHEEL_UNIT = 1.0015  # wheel dy of +100 zooms out by ~16%


class PanZoom:
    """Turns pointer, wheel and double-click events on the heatmap panel into
    new ``(xmin, ymin, xmax, ymax)`` bounds.

    A drag that starts inside the heatmap with the primary button pans (the
    grabbed point follows the pointer, even outside the panel); the wheel
    zooms around the pointer; a double click goes home. Does not validate
    the bounds it proposes: the caller refuses those that leave float32.
    """

    def __init__(self):
        self._drag = None  # (u, v, bounds) where the drag started

    def bounds_after(self, event: dict, *, rect, bounds, home):
        """The bounds ``event`` asks for, or None when it asks for no change.

        Parameters
        ----------
        event : dict
            A rendercanvas event (``event_type``, ``x``, ``y``, ``button``, ``dy``).
        rect : (x, y, w, h)
            The heatmap panel in canvas pixels (origin top-left).
        bounds, home : (xmin, ymin, xmax, ymax)
            The current bounds and those a double click restores.
        """
        kind = event.get("event_type")
        if kind == "pointer_up":
            self._drag = None
            return None
        if kind not in ("pointer_down", "pointer_move", "wheel", "double_click"):
            return None
        hx, hy, hw, hh = rect
        u = (event.get("x", 0.0) - hx) / hw
        v = 1.0 - (event.get("y", 0.0) - hy) / hh  # 0 at the bottom (ymin)
        inside = 0.0 <= u <= 1.0 and 0.0 <= v <= 1.0
        if kind == "pointer_down":
            self._drag = (u, v, bounds) if inside and event.get("button", 1) == 1 else None
            return None
        if kind == "pointer_move":
            if self._drag is None:  # (browsers also send a button-less move right after pointer_down)
                return None
            u0, v0, (a0, b0, a1, b1) = self._drag
            dx, dy = (u - u0) * (a1 - a0), (v - v0) * (b1 - b0)
            return (a0 - dx, b0 - dy, a1 - dx, b1 - dy)
        if not inside:
            return None
        if kind == "double_click":
            return home
        x0, y0, x1, y1 = bounds
        factor = ZOOM_PER_WHEEL_UNIT ** float(event.get("dy", 0.0))
        ax, ay = x0 + u * (x1 - x0), y0 + v * (y1 - y0)
        return (ax + (x0 - ax) * factor, ay + (y0 - ay) * factor, ax + (x1 - ax) * factor, ay + (y1 - ay) * factor)
