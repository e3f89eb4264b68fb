"""Colour bars: the colour ramp of a normalised quantity with ticks and a title.

Pure layout (numpy, no GPU): :func:`colour_bar_layout` turns the range
actually used for colouring, the normalisation and a pixel rectangle into
gradient slices, tick marks and labels; :class:`~gpuviz.render.overlay.PlotOverlay`
draws them. The two extreme ticks sit exactly at the ends of the bar and are
labelled with the range's own values (:data:`ColourBarLayout.extremes`), so
what the bar says is what the colours used; round ticks in between are
dropped where they would crowd an end label.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import GraphValidationError
from .axes import Axis
from .number_format import format_number, format_numbers

__all__ = ["ColourBarLayout", "colour_bar_layout", "ramp_colours", "NORMALISATIONS"]

#: Colour normalisations: ``linear`` (lo..hi), ``log`` (log10 lo..hi, positive), ``robust`` (linear over
#: a percentile range chosen by whoever computes it).
NORMALISATIONS = ("linear", "log", "robust")


def ramp_colours(stops, t) -> np.ndarray:
    """RGB of ``t`` in 0..1 along piecewise-linear colour ``stops`` (the
    same interpolation as a shader's ramp): ``(len(t), 3)`` float64."""
    stops = np.asarray(stops, np.float64)
    t = np.clip(np.asarray(t, np.float64), 0.0, 1.0) * (len(stops) - 1)
    i = np.minimum(t.astype(np.int64), len(stops) - 2)
    f = (t - i)[:, None]
    return stops[i] * (1.0 - f) + stops[i + 1] * f


def _frozen_stops(stops):
    return tuple(tuple(float(c) for c in stop) for stop in stops)


@functools.lru_cache(maxsize=32)
def _gradient(x, y, w, h, stops, slices) -> tuple:
    """The gradient slices of a bar (independent of its domain: cached, so a
    new colour range re-lays out only ticks and labels)."""
    t = (np.arange(slices) + 0.5) / slices
    colours = ramp_colours(stops, t)
    edges = y + h - np.linspace(0.0, h, slices + 1)
    return tuple((x, float(edges[i + 1]), x + w, float(edges[i]), tuple(colours[i])) for i in range(slices))


@dataclass(frozen=True, kw_only=True)
class ColourBarLayout:
    """What a colour bar draws (logical pixels; made by
    :func:`colour_bar_layout`, it draws nothing itself).

    Attributes
    ----------
    slices : tuple of (x0, y0, x1, y1, (r, g, b))
        The gradient, bottom (low) to top (high).
    frame : (x0, y0, x1, y1)
    segments : tuple of (x0, y0, x1, y1)
        Tick marks.
    labels : tuple of (text, x, y, anchor, max_width)
        Bottom to top: ``lo`` (at the bar's bottom edge), round values, ``hi`` (at its top edge).
    title : (text, x, y, anchor, max_width) or None
    extremes : (float, float)
        The range the end labels show (the ``domain`` given).
    """

    slices: tuple
    frame: tuple
    segments: tuple
    labels: tuple
    title: tuple | None
    extremes: tuple


def colour_bar_layout(*, rect, domain, normalisation: str, stops, title: str = "", measure,
                      line_height: float, slices: int = 64, title_width: float | None = None) -> ColourBarLayout:
    """A vertical colour bar in ``rect = (x, y, w, h)`` with labels on its right.

    Parameters
    ----------
    rect : (x, y, w, h)
        The bar itself (labels and title go outside it: right and above).
    domain : (lo, hi)
        The range actually used for colouring (``lo`` at the bottom).
    normalisation : {"linear", "log", "robust"}
        How colours were mapped: ``log`` places ticks on a log scale.
    stops : sequence of RGB
        The colour ramp, low to high.
    title : str
        Drawn above the bar (the statistic's name).
    measure, line_height :
        As :meth:`Axis.layout`.
    slices : int
        Gradient slices.
    title_width : float, optional
        Truncate the title (with an ellipsis) to this width.

    Notes
    -----
    Does not compute the range: the caller passes what its colouring used.
    A degenerate range (``lo == hi``) gets one label at the middle.
    """
    if normalisation not in NORMALISATIONS:
        raise GraphValidationError(f"colour bar normalisation {normalisation!r} is not one of {NORMALISATIONS}")
    x, y, w, h = (float(v) for v in rect)
    lo, hi = (float(v) for v in domain)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise GraphValidationError(f"colour bar domain ({lo!r}, {hi!r}) must be finite")
    try:
        parts = _gradient(x, y, w, h, _frozen_stops(stops), int(slices))
    except TypeError:  # unhashable stops: the same slices, not cached
        parts = _gradient.__wrapped__(x, y, w, h, stops, int(slices))
    x1 = x + w
    tick, pad = 4.0, 3.0
    if hi <= lo:
        labels = ((format_numbers([lo])[0], x1 + tick + pad, y + h / 2, ("left", "middle"), None),)
        segments = ((x1, y + h / 2, x1 + tick, y + h / 2),)
    else:
        log = normalisation == "log" and lo > 0
        axis = Axis(side="right", domain=(lo, hi), scale="log" if log else "linear")
        inner = axis.ticks(h, measure=measure)
        end_labels = [format_number(v, digits=3) for v in (lo, hi)]  # each end its own value, not a shared step
        inner_px = axis.to_pixel(inner.positions, (x, y, w, h))
        # the end labels hang inside the bar's extent (top one below its top edge, bottom one above
        # its bottom edge), so a title above the bar never meets them; round ticks keep clear of both
        segments = [(x1, y, x1 + tick, y), (x1, y + h, x1 + tick, y + h)]
        labels = [(end_labels[0], x1 + tick + pad, y + h, ("left", "bottom"), None)]
        middle = []
        for text, p in zip(inner.labels, inner_px):
            if y + 1.5 * line_height <= p <= y + h - 1.5 * line_height:
                segments.append((x1, float(p), x1 + tick, float(p)))
                middle.append((text, x1 + tick + pad, float(p), ("left", "middle"), None))
        labels += sorted(middle, key=lambda label: -label[2])
        labels.append((end_labels[1], x1 + tick + pad, y, ("left", "top"), None))
        segments, labels = tuple(segments), tuple(labels)
    title_entry = (title, x, y - 3.0, ("left", "bottom"), title_width) if title else None
    return ColourBarLayout(slices=parts, frame=(x, y, x1, y + h), segments=segments, labels=labels,
                           title=title_entry, extremes=(lo, hi))
