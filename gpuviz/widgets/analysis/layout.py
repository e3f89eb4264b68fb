"""Where the panels of :class:`~gpuviz.widgets.DataAnalysis` go, and their colours.

Host-side only: the render node (:mod:`.render`), the labels
(:mod:`.labels`) and pointer handling (pan, zoom, brushing, hover) all place
things through :func:`panel_layout` / :func:`panel_rects`, so the data, its
axes and the events agree to the pixel.
"""

from __future__ import annotations

import functools

__all__ = ["panel_layout", "panel_rects", "PANEL_COLOR", "EMPTY_COLOR", "BACKGROUND", "RAMP", "BAR_COLOR",
           "CDF_COLOR", "GROUP_PALETTE", "TITLE_ROW", "LABEL_ROW", "PLOT_TOP"]

BACKGROUND = (0.07, 0.07, 0.09, 1.0)   # between panels
PANEL_COLOR = (0.13, 0.13, 0.16, 1.0)  # panel backgrounds
EMPTY_COLOR = (0.10, 0.10, 0.12, 1.0)  # heatmap cells without rows
#: Heatmap colour ramp, five stops from dark to bright (monotonic luminance).
RAMP = ((0.267, 0.005, 0.329), (0.231, 0.322, 0.545), (0.129, 0.569, 0.549), (0.369, 0.788, 0.384),
        (0.992, 0.906, 0.145))
BAR_COLOR = (0.33, 0.58, 0.86)
CDF_COLOR = (1.0, 0.62, 0.16)
#: Colours of group bars, cycled (the shader's ``palette`` and the widget's legend).
GROUP_PALETTE = ((0.90, 0.35, 0.35), (0.35, 0.75, 0.45), (0.60, 0.45, 0.85), (0.95, 0.75, 0.25),
                 (0.30, 0.75, 0.85), (0.90, 0.50, 0.75), (0.65, 0.80, 0.30), (0.85, 0.60, 0.40))
#: Plots leave headroom under their top: bars and the CDF reach this fraction of the
#: plot height (``TOP`` of shaders/draw.wgsl), so axes span ``max / PLOT_TOP``.
PLOT_TOP = 0.92

# Panel insets for axes, logical pixels: title row, axis-title row, tick labels + axis title.
TITLE_ROW, LABEL_ROW = 19.0, 15.0
_INSETS = {  # (left, top, right, bottom) around the plot area inside each panel's frame
    "heatmap": (50.0, TITLE_ROW + LABEL_ROW, 80.0, 36.0),
    "histogram": (46.0, TITLE_ROW + LABEL_ROW, 40.0, 36.0),
    "groups": (46.0, TITLE_ROW + 2 * LABEL_ROW, 12.0, 36.0),
}
COLOUR_BAR_GAP, COLOUR_BAR_WIDTH = 12.0, 12.0


def panel_layout(width: int, height: int, has_groups: bool, *, pixel_ratio: float = 1.0) -> dict:
    """The frame of a ``width x height`` (physical pixels) plot: per panel
    (``"heatmap"``, ``"histogram"``, ``"groups"`` with groups) a dict of
    pixel rectangles ``(x, y, w, h)`` (origin top-left): ``frame`` (the
    panel), ``plot`` (where the data is drawn, inset for titles and axes)
    and, for the heatmap, ``colour_bar``. Margins are logical pixels times
    ``pixel_ratio``; plots shrink to at least one pixel in small frames.
    Returns a new dict (of cached rectangles: one frame asks for its layout
    several times, from the render node, the view uniform, the labels and
    pointer events)."""
    layout = _layout(int(width), int(height), bool(has_groups), float(pixel_ratio))
    return {name: dict(rects) for name, rects in layout.items()}


@functools.lru_cache(maxsize=32)
def _layout(width: int, height: int, has_groups: bool, r: float) -> dict:
    """:func:`panel_layout` itself (callers get copies: the cached dicts are never handed out)."""
    width, height = max(width, 8), max(height, 8)
    lw, lh = width / r, height / r
    m = max(2.0, min(6.0, round(min(lw, lh) * 0.015)))
    split = round(lw * 0.58)
    frames = {"heatmap": (m, m, split - m - m / 2, lh - 2 * m)}
    right_x = split + m / 2
    right_w = lw - right_x - m
    if has_groups:
        half = (lh - 3 * m) / 2
        frames["histogram"] = (right_x, m, right_w, half)
        frames["groups"] = (right_x, 2 * m + half, right_w, lh - 3 * m - half)
    else:
        frames["histogram"] = (right_x, m, right_w, lh - 2 * m)
    out = {}
    for name, (x, y, w, h) in frames.items():
        left, top, right, bottom = _INSETS[name]
        scale = min(1.0, w / (left + right + 16.0), h / (top + bottom + 16.0))  # small frames: smaller insets
        left, top, right, bottom = (v * scale for v in (left, top, right, bottom))
        plot = (x + left, y + top, max(w - left - right, 1.0), max(h - top - bottom, 1.0))
        rects = {"frame": (x, y, w, h), "plot": plot}
        if name == "heatmap":
            rects["colour_bar"] = (plot[0] + plot[2] + COLOUR_BAR_GAP * scale, plot[1], COLOUR_BAR_WIDTH * scale,
                                   plot[3])
        out[name] = {k: _pixels(v, r) for k, v in rects.items()}
    return out


def _pixels(rect, ratio) -> tuple:
    """A logical rectangle as whole physical pixels (at least 1 x 1)."""
    x0, y0 = round(rect[0] * ratio), round(rect[1] * ratio)
    x1, y1 = round((rect[0] + rect[2]) * ratio), round((rect[1] + rect[3]) * ratio)
    return (x0, y0, max(x1 - x0, 1), max(y1 - y0, 1))


def panel_rects(width: int, height: int, has_groups: bool, *, pixel_ratio: float = 1.0) -> dict:
    """Pixel rectangles ``(x, y, w, h)`` (origin top-left) of the panels'
    plot areas (``"heatmap"``, ``"histogram"``, ``"groups"``): where cells
    and bars are drawn and where pointer events map to data (see :func:`panel_layout`)."""
    layout = _layout(int(width), int(height), bool(has_groups), float(pixel_ratio))
    return {name: rects["plot"] for name, rects in layout.items()}
