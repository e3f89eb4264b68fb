"""Pointer interaction of :class:`~gpuviz.widgets.DataAnalysis`: canvas
events in, view changes out.

:class:`PanZoom` pans and zooms the heatmap (host-side only);
:class:`PointerTools` routes every other pointer event: histogram brushing
and group-bar toggles (:mod:`.brushing`), hover tooltips read back without
waiting (:mod:`.hover`) and the cursor shape over interactive areas.
"""

from __future__ import annotations

from .brushing import Brushing, panel_at
from .hover import HoverProbe, hover_target, tooltip_lines

__all__ = ["PanZoom", "PointerTools", "ZOOM_PER_WHEEL_UNIT", "CURSORS"]

#: Cursor shape per panel (rendercanvas names; jupyter_rfb sends them to the browser as CSS cursors).
CURSORS = {"heatmap": "crosshair", "histogram": "ew-resize", "groups": "pointer", None: "default"}

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


class PointerTools:
    """Brushing, hover tooltips and the cursor of one DataAnalysis.

    Parameters
    ----------
    owner : DataAnalysis
        Its ``set_value_range``, ``set_group_mask``, ``toggle_group``,
        ``canvas``, ``graph`` and ``data`` are used.
    params : AnalysisParameters
        The owner's parameters (read only here).

    Attributes
    ----------
    tooltip : None or (x, y, lines)
        What the drawing shows at canvas logical ``(x, y)``.
    hover : dict or None
        The sample behind :attr:`tooltip`: ``panel``, ``index`` and
        ``values`` (heatmap ``[value, rows]``, histogram ``[count, cdf,
        total]``, groups ``[rows, mean]``), straight from the GPU buffers.

    Notes
    -----
    :meth:`handle` never waits: a hover request is submitted and mapped,
    and :meth:`poll` (called at the start of every canvas frame) picks the
    sample up once it landed, asking for one more frame while it is in flight.
    """

    def __init__(self, owner, params):
        self.owner, self.params = owner, params
        self.brushing = Brushing()
        self.probe = HoverProbe(owner.device)
        self.tooltip = self.hover = None
        self._target = None
        self._cursor = "default"
        self._refresh_after_frame = self._refresh_next_frame = False

    def handle(self, event, rects) -> tuple:
        """Handle a pointer event: ``(consumed, redraw)``. Events not
        consumed go on to pan and zoom; ``redraw`` says the tooltip or a
        selection changed."""
        kind = event.get("event_type")
        groups = len(self.params.group_enabled)
        if kind == "pointer_leave":
            self._set_cursor("default")
            return False, self._set_target(None)
        action = self.brushing.action(event, rects=rects, edges=self.params.edges, groups=groups)
        if action is not None:
            self._set_target(None)
            self._run(*action)
            return True, True
        if kind == "pointer_down":
            return self.brushing.brushing, self._set_target(None)
        if kind == "pointer_move":
            x, y = event.get("x", 0.0), event.get("y", 0.0)
            self._set_cursor(CURSORS.get(panel_at(rects, x, y), "default"))
            if event.get("buttons") or self.brushing.brushing:
                return False, self._set_target(None)
            target = hover_target(rects, x, y, grid_size=self.owner.graph.grid_size, bins=self.params.bins,
                                  groups=groups)
            return False, self._set_target(target)
        if kind == "wheel":
            self._refresh_after_frame = self._target is not None
        return False, False

    def _run(self, name, arg) -> None:
        owner = self.owner
        if name == "value_range":
            owner.set_value_range(arg)
        elif name == "full_range":
            owner.set_value_range(self.params.extent(self.params.columns["value"]))
        elif name == "toggle_group":
            owner.toggle_group(arg)
        elif name == "all_groups":
            owner.set_group_mask([True] * len(self.params.group_enabled))

    def _set_cursor(self, cursor) -> None:
        if cursor != self._cursor:
            self._cursor = cursor
            self.owner.canvas.set_cursor(cursor)

    def _set_target(self, target) -> bool:
        """Hover ``target`` (or nothing); returns whether the tooltip changed."""
        same = (target is not None and self._target is not None
                and (target.panel, target.index) == (self._target.panel, self._target.index))
        if same:
            return False
        self._target = target
        if target is None:
            self.probe.cancel()
            changed, self.tooltip, self.hover = self.tooltip is not None, None, None
            return changed
        self.request()
        return False

    def request(self) -> None:
        """Sample the current target's words (after everything submitted so far)."""
        target, out = self._target, self.owner.graph.outputs
        if target is None:
            return
        i = target.index
        if target.panel == "heatmap":
            sources = [(out["display"].buffer, i, "float32"), (out["grid_counts"].buffer, i, "uint32")]
        elif target.panel == "histogram":
            last = max(self.params.bins, 1) - 1
            sources = [(out["counts"].buffer, i, "uint32"), (out["cdf"].buffer, i, "uint32"),
                       (out["cdf"].buffer, last, "uint32")]
        else:
            sources = [(out["group_counts"].buffer, i, "uint32"), (out["group_means"].buffer, i, "float32")]
        self.probe.request(target, sources)

    def refresh_after_frame(self) -> None:
        """The frame being drawn re-encodes the graph with new parameters:
        sample the hover target again after it (see :meth:`after_frame`)."""
        self._refresh_after_frame = self._target is not None

    def after_frame(self, encoded: bool) -> None:
        """Called at the end of a canvas frame: a frame that re-encoded the
        graph after a wheel zoom makes the next frame sample the hover target
        again (the frame's commands are submitted after this returns)."""
        if encoded and self._refresh_after_frame:
            self._refresh_after_frame = False
            self._refresh_next_frame = True
            self.owner.canvas.request_draw()

    def poll(self) -> bool:
        """At the start of a canvas frame: take a finished hover sample
        (returns True when the tooltip changed) and keep frames coming while
        one is in flight. Never waits."""
        if self._refresh_next_frame:
            self._refresh_next_frame = False
            self.request()
        found = self.probe.poll()
        if self.probe.in_flight:
            self.owner.canvas.request_draw()
        if found is None or self._target is None:
            return False
        target, values = found
        graph, data = self.owner.graph, self.owner.data
        cells = self.params.grid_cells(graph.grid_size)
        lines = tooltip_lines(target, values, params=self.params, labels=data.group_labels, group=data.group,
                              cells=cells, grid_size=graph.grid_size)
        self.hover = {"panel": target.panel, "index": target.index, "values": values, "lines": lines}
        self.tooltip = (target.x, target.y, lines)
        return True

    def destroy(self) -> None:
        self.probe.destroy()
