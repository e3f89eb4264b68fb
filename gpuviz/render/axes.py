"""Axes: a data range and a pixel rectangle in, tick positions, labels and line segments out.

Pure Python and numpy (no GPU): :class:`Axis` maps data values to pixels
(linear, log, time, categories, or irregular bin edges drawn at equal
width), picks ticks through :mod:`~gpuviz.render.ticks` so that their labels
do not collide, and returns an :class:`AxisLayout` of segments (axis line,
tick marks, optional grid lines) and anchored labels, which
:class:`~gpuviz.render.overlay.PlotOverlay` (or any consumer with a
:class:`~gpuviz.render.TextLayer` and a :class:`~gpuviz.render.shapes.RectLayer`)
draws. Coordinates are logical pixels, origin top-left, y down; a vertical
axis puts the low end of its domain at the bottom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import GraphValidationError
from .number_format import format_numbers
from .ticks import Ticks, category_ticks, log_ticks, nice_ticks, time_ticks

__all__ = ["Axis", "AxisLayout", "AXIS_SIDES", "AXIS_SCALES"]


AXIS_SIDES = ("bottom", "left", "right", "top")
AXIS_SCALES = ("linear", "log", "time", "category", "edges")
_GAP = 8.0  # logical pixels between two horizontal tick labels
_CATEGORY_LABEL = 20.0  # the narrowest label a category band keeps (a few characters and an ellipsis)


def _cut(text: str, width: float, measure) -> str:
    """``text`` as a label ``width`` pixels wide shows it: whole, or its
    longest prefix that fits with ``…`` (the text layer's truncation, in
    ``measure``'s units)."""
    if measure(text) <= width:
        return text
    keep = len(text)
    while keep > 0 and measure(text[:keep] + "…") > width:
        keep -= 1
    return text[:keep] + "…"


@dataclass(frozen=True, kw_only=True)
class AxisLayout:
    """What one axis draws, in logical pixels (made by :class:`Axis`; it
    holds positions and labels only and draws nothing itself).

    Attributes
    ----------
    values : numpy.ndarray
        The ticks' data positions.
    pixels : numpy.ndarray
        Their pixel coordinate along the axis (x for horizontal axes, y for vertical).
    labels : tuple of (text, x, y, anchor, max_width)
        Tick labels as :meth:`TextLayer.add` takes them (``max_width`` None or a width).
    segments : tuple of (x0, y0, x1, y1)
        The axis line, then one tick mark per tick.
    grid : tuple of (x0, y0, x1, y1)
        Lines across the plot rectangle (empty unless the axis has ``grid=True``).
    title : (text, x, y, anchor, max_width) or None
    thickness : float
        Pixels the axis needs outside the plot rectangle (ticks, labels, title).
    """

    values: np.ndarray
    pixels: np.ndarray
    labels: tuple
    segments: tuple
    grid: tuple = ()
    title: tuple | None = None
    thickness: float = 0.0
    origin_label: str = field(default="")


class Axis:
    """One axis of a plot rectangle.

    Parameters
    ----------
    side : {"bottom", "left", "right", "top"}
        Where the axis sits on the plot rectangle; labels go outside it.
    domain : (lo, hi)
        The data range the rectangle spans (ignored for ``"category"``,
        which spans ``(0, len(categories))``, and ``"edges"``).
    scale : {"linear", "log", "time", "category", "edges"}
        ``"time"``: nanoseconds, labelled by :func:`time_ticks`;
        ``"category"``: one band per entry of ``categories``;
        ``"edges"``: bins between increasing ``edges`` drawn at equal width
        (ticks at edges, thinned to fit).
    categories : sequence of str, optional
    edges : sequence of float, optional
    title : str
        The axis title: centred below (above) a horizontal axis; a vertical
        axis has no rotated text, so its title sits above the plot's top
        end, starting at the label column.
    grid : bool
        Also return grid lines across the plot rectangle at the ticks.
    integer : bool
        The values are whole numbers (hours, counts): linear ticks step by
        at least 1, so no ``2.5`` appears between categories of data.
    tick_length, pad : float
        Tick mark length and the gap between a tick and its label.

    Notes
    -----
    Lays out only: it draws nothing, and it measures text only through the
    ``measure`` callable it is given. No minor ticks, no rotated labels, no
    automatic domain padding.
    """

    def __init__(self, *, side: str, domain=(0.0, 1.0), scale: str = "linear", categories=None, edges=None,
                 title: str = "", grid: bool = False, tick_length: float = 4.0, pad: float = 2.0,
                 integer: bool = False):
        if side not in AXIS_SIDES:
            raise GraphValidationError(f"Axis side {side!r} is not one of {AXIS_SIDES}")
        if scale not in AXIS_SCALES:
            raise GraphValidationError(f"Axis scale {scale!r} is not one of {AXIS_SCALES}")
        self.side, self.scale, self.title, self.grid = side, scale, str(title), bool(grid)
        self.integer = bool(integer)
        self.tick_length, self.pad = float(tick_length), float(pad)
        self.categories = None if categories is None else [str(c) for c in categories]
        self.edges = None if edges is None else np.asarray(edges, np.float64)
        if scale == "category":
            if self.categories is None:
                raise GraphValidationError("Axis scale 'category' needs categories")
            domain = (0.0, float(max(len(self.categories), 1)))
        elif scale == "edges":
            if self.edges is None or len(self.edges) < 2 or not np.all(np.diff(self.edges) > 0):
                raise GraphValidationError("Axis scale 'edges' needs two or more increasing edges")
            domain = (float(self.edges[0]), float(self.edges[-1]))
        lo, hi = (float(v) for v in domain)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise GraphValidationError(f"Axis domain ({lo!r}, {hi!r}) must be finite")
        if scale == "log" and not (lo > 0 and hi > 0):
            raise GraphValidationError(f"Axis log domain ({lo!r}, {hi!r}) must be positive")
        self.domain = (lo, hi)

    @property
    def horizontal(self) -> bool:
        """Whether the axis runs along x (a "bottom" or "top" side)."""
        return self.side in ("bottom", "top")

    # ------------------------------------------------------------ mapping
    def fraction(self, values) -> np.ndarray:
        """Where ``values`` lie along the axis, 0 at the domain's low end and
        1 at its high end (outside values extrapolate; NaN stays NaN)."""
        v = np.asarray(values, np.float64)
        lo, hi = self.domain
        if self.scale == "edges":
            return np.interp(v, self.edges, np.linspace(0.0, 1.0, len(self.edges)), left=np.nan, right=np.nan)
        if self.scale == "log":
            with np.errstate(divide="ignore", invalid="ignore"):
                v, lo, hi = np.log10(v), math.log10(lo), math.log10(hi)
        return (v - lo) / (hi - lo) if hi != lo else np.full(v.shape, 0.5)

    def to_pixel(self, values, rect) -> np.ndarray:
        """Pixel coordinates of ``values`` along the axis of ``rect = (x, y, w, h)``."""
        x, y, w, h = rect
        t = self.fraction(values)
        return x + t * w if self.horizontal else y + h - t * h

    # -------------------------------------------------------------- ticks
    def ticks(self, length: float, *, measure) -> Ticks:
        """Ticks for an axis ``length`` pixels long whose labels do not
        overlap: the largest tick count (from a target of one per ~50
        pixels horizontally, ~32 vertically) whose labels fit."""
        per = 50.0 if self.horizontal else 32.0
        target = max(2, min(12, int(length // per)))
        while True:
            ticks = self._ticks_for(target, length, measure)
            if self._fits(ticks, length, measure):
                return ticks
            if target == 1:
                break
            target -= 1
        for stride in range(2, len(ticks) + 1):  # a very short axis: every stride-th tick of the sparsest set
            thinned = Ticks(positions=ticks.positions[::stride], labels=ticks.labels[::stride],
                            step=ticks.step * stride, origin=ticks.origin, origin_label=ticks.origin_label)
            if self._fits(thinned, length, measure):
                return thinned
        return thinned

    def _ticks_for(self, target, length, measure) -> Ticks:
        lo, hi = self.domain
        if self.scale == "category":
            widest = max((measure(c) for c in self.categories), default=0.0)
            per = length / max(len(self.categories), 1)
            # Every category keeps its label, cut to its band with an ellipsis, while a band holds a few
            # characters; narrower bands are thinned (dropping whole labels of four bars reads as missing data).
            room = per if not self.horizontal else max(per, min(widest, _CATEGORY_LABEL) + 4)
            slots = max(1, int(length / (room if self.horizontal else max(per, 14.0)) + 1e-6))
            ticks = category_ticks(self.categories, max_labels=slots)
            return self._told_apart(ticks, per, measure) if self.horizontal else ticks
        if self.scale == "edges":
            stride = max(1, math.ceil((len(self.edges) - 1) / max(target, 1)))
            kept = self.edges[::stride]
            return Ticks(positions=kept, labels=format_numbers(kept.tolist()), step=float(stride))
        if self.scale == "log":
            return log_ticks((lo, hi), target=target)
        if self.scale == "time":
            return time_ticks((lo, hi), target=target)
        ticks = nice_ticks((lo, hi), target=target)
        if self.integer and 0 < ticks.step < 1:  # whole numbers only: the 1-step ticks (or the single value)
            ticks = nice_ticks((lo, hi), target=max(1, min(1000, int(hi - lo) + 1)))
        return ticks

    def _told_apart(self, ticks, per, measure) -> Ticks:
        """``ticks`` or the sparsest needed thinning of them whose labels, cut
        to their band with an ellipsis, still differ and keep two characters:
        seven engine types cut to "Tur…" four times say less than every other
        one in full."""
        count, slots = len(self.categories), len(ticks)
        while slots > 1:
            band = max(per * ticks.step - 4.0, 8.0)
            shown = [_cut(label, band, measure) for label in ticks.labels]
            if len(set(shown)) == len(shown) and all(len(text.rstrip("…")) >= 2 for text in shown):
                return ticks
            slots = min(slots - 1, math.ceil(count / (ticks.step + 1)))
            ticks = category_ticks(self.categories, max_labels=slots)
        return ticks

    def _fits(self, ticks, length, measure) -> bool:
        if len(ticks) < 2:
            return True
        if self.scale == "category":
            return True  # thinned by category_ticks' stride and truncated to the band
        px = np.sort(self.to_pixel(ticks.positions, (0.0, 0.0, length, length)))
        gaps = np.diff(px)
        if self.horizontal:
            widths = np.array([measure(t) for t in ticks.labels])
            need = (widths[1:] + widths[:-1]) / 2 + _GAP
        else:
            need = np.full(len(gaps), 14.0)
        return bool(np.all(np.abs(gaps) >= need))

    # ------------------------------------------------------------- layout
    def layout(self, rect, *, measure, line_height: float) -> AxisLayout:
        """The axis of plot rectangle ``rect = (x, y, w, h)``.

        Parameters
        ----------
        rect : (x, y, w, h)
            The plot area (logical pixels).
        measure : callable
            ``measure(text) -> width`` in logical pixels (e.g.
            ``lambda s: text_layer.measure(s)[0]``).
        line_height : float
            Height of one label line.
        """
        x, y, w, h = (float(v) for v in rect)
        length = w if self.horizontal else h
        ticks = self.ticks(length, measure=measure)
        values = np.asarray(ticks.positions, np.float64)
        pixels = self.to_pixel(values, (x, y, w, h))
        keep = np.isfinite(pixels)
        values, pixels = values[keep], pixels[keep]
        texts = [t for t, k in zip(ticks.labels, keep) if k]
        tl, pad = self.tick_length, self.pad
        band = None
        if self.scale == "category":
            band = max(length / max(len(self.categories), 1) * ticks.step - 4.0, 8.0)
        segments, grid, labels = [], [], []
        side = self.side
        if self.horizontal:
            y0 = y + h if side == "bottom" else y
            sign = 1.0 if side == "bottom" else -1.0
            segments.append((x, y0, x + w, y0))
            for p, t in zip(pixels, texts):
                segments.append((p, y0, p, y0 + sign * tl))
                if self.grid:
                    grid.append((p, y, p, y + h))
                labels.append((t, p, y0 + sign * (tl + pad), ("center", "top" if sign > 0 else "bottom"),
                               band if band is not None else None))
            thickness = tl + pad + line_height
            title = None
            if self.title:
                ty = y0 + sign * (thickness + 1.0)
                title = (self.title, x + w / 2, ty, ("center", "top" if sign > 0 else "bottom"), w)
                thickness += line_height + 1.0
        else:
            x0 = x if side == "left" else x + w
            sign = -1.0 if side == "left" else 1.0
            segments.append((x0, y, x0, y + h))
            widest = 0.0
            for p, t in zip(pixels, texts):
                segments.append((x0, p, x0 + sign * tl, p))
                if self.grid:
                    grid.append((x, p, x + w, p))
                widest = max(widest, measure(t))
                labels.append((t, x0 + sign * (tl + pad), p, ("right" if sign < 0 else "left", "middle"), None))
            thickness = tl + pad + widest
            title = None
            if self.title:
                edge = x0 + sign * thickness
                anchor = ("left", "bottom") if sign < 0 else ("right", "bottom")
                title = (self.title, edge, y - 3.0, anchor, max(w + thickness, 40.0))
        return AxisLayout(values=values, pixels=pixels, labels=tuple(labels), segments=tuple(segments),
                          grid=tuple(grid), title=title, thickness=thickness, origin_label=ticks.origin_label)
