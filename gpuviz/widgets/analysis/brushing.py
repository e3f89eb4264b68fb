"""Brushing in :class:`~gpuviz.widgets.DataAnalysis`: canvas events on the
histogram and the group bars in, selections out. Host-side only.

* A drag across the histogram selects the bins it covers, whole bins: the
  value range becomes ``[e_first, e_last+1)`` (the upper edge itself only
  when the last bin is the histogram's last, whose upper edge is inclusive),
  updated on every move. A click selects one bin; a double click selects
  the value column's whole extent again.
* A click on a group bar's slot (the panel is split into equal slots, one
  per group) toggles that group in the group mask; a double click shows
  every group again.

Both end in buffer writes (``set_value_range``, ``set_group_mask``), never
in a recompilation. What the widget does with an action is its business:
:class:`Brushing` only interprets events.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Brushing", "bin_at", "bins_value_range", "group_at", "panel_at"]

_CLICK_PX = 4.0  # a press and release closer than this (in canvas pixels) is a click


def panel_at(rects: dict, x: float, y: float):
    """The panel name (``"heatmap"``, ``"histogram"``, ``"groups"``) whose
    rectangle holds canvas point ``(x, y)``, or None."""
    for name, (rx, ry, rw, rh) in rects.items():
        if rx <= x <= rx + rw and ry <= y <= ry + rh:
            return name
    return None


def _slot(rect, x: float, count: int) -> int:
    rx, _, rw, _ = rect
    u = min(max((x - rx) / rw, 0.0), 1.0)
    return min(int(u * count), count - 1)


def bin_at(rect, x: float, bins: int) -> int:
    """The histogram bin under canvas x (bars are drawn at equal width, one
    per bin, whatever the edges); clamped into ``[0, bins)``."""
    return _slot(rect, x, bins)


def group_at(rect, x: float, groups: int) -> int:
    """The group whose bar slot holds canvas x, clamped into ``[0, groups)``."""
    return _slot(rect, x, groups)


def bins_value_range(edges, first: int, last: int) -> tuple:
    """The inclusive value range that keeps exactly bins ``first..last`` of
    ``edges`` (``bins + 1`` float32): from ``e_first`` to just below
    ``e_last+1`` in float32, or to the last edge itself for the last bin."""
    edges = np.asarray(edges, np.float32)
    lo, hi = sorted((int(first), int(last)))
    top = edges[hi + 1] if hi + 1 == len(edges) - 1 else np.nextafter(edges[hi + 1], np.float32(-np.inf))
    return (float(edges[lo]), float(top))


class Brushing:
    """Turns pointer events on the histogram and group panels into actions.

    :meth:`action` returns one of ``("value_range", (lo, hi))``,
    ``("full_range", None)``, ``("toggle_group", g)``, ``("all_groups", None)``
    or None. A drag that starts on the histogram keeps brushing wherever the
    pointer goes until it is released. Does not validate, write or draw
    anything.

    Attributes
    ----------
    brushing : bool
        A histogram drag is in progress.
    """

    def __init__(self):
        self._press = None  # (panel, x, y, first bin) of the primary button press

    @property
    def brushing(self) -> bool:
        return self._press is not None and self._press[0] == "histogram"

    def action(self, event: dict, *, rects: dict, edges, groups: int):
        """The action ``event`` asks for.

        Parameters
        ----------
        event : dict
            A rendercanvas pointer event (``event_type``, ``x``, ``y``, ``button``).
        rects : dict
            Panel rectangles of the canvas (``panel_rects``).
        edges : array
            The histogram's real edges (``bins + 1``).
        groups : int
            Group bars drawn (0 without a group column).
        """
        kind, x, y = event.get("event_type"), float(event.get("x", 0.0)), float(event.get("y", 0.0))
        bins = len(edges) - 1
        if kind == "pointer_down":
            panel = panel_at(rects, x, y)
            self._press = None
            if event.get("button", 1) != 1 or panel not in ("histogram", "groups") or (panel == "groups"
                                                                                       and not groups):
                return None
            first = bin_at(rects["histogram"], x, bins) if panel == "histogram" else None
            self._press = (panel, x, y, first)
            return ("value_range", bins_value_range(edges, first, first)) if panel == "histogram" else None
        if kind == "pointer_move" and self.brushing:
            first = self._press[3]
            return ("value_range", bins_value_range(edges, first, bin_at(rects["histogram"], x, bins)))
        if kind == "pointer_up":
            press, self._press = self._press, None
            if press is None:
                return None
            panel, x0, y0, first = press
            if panel == "histogram":
                return ("value_range", bins_value_range(edges, first, bin_at(rects["histogram"], x, bins)))
            if abs(x - x0) <= _CLICK_PX and abs(y - y0) <= _CLICK_PX and panel_at(rects, x, y) == "groups":
                return ("toggle_group", group_at(rects["groups"], x, groups))
            return None
        if kind == "double_click":
            panel = panel_at(rects, x, y)
            if panel == "histogram":
                return ("full_range", None)
            if panel == "groups" and groups:
                return ("all_groups", None)
        return None
