"""The pixel geometry of a TraceViewer: the chrome's fixed sizes, where a
time window and a first row put spans on the canvas (:class:`Geometry`),
name colours and duration text.

The trace's codes, thread order and row layout are the trace's
:class:`~gpuviz.trace.index.TraceIndex`; this module only maps them to pixels.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ...trace.index import (MODE_EXPANDED, MODE_HIDDEN, MODE_PROCESS_COLLAPSED, MODE_THREAD_COLLAPSED,
                            TraceLayout)

__all__ = ["TraceLayout", "Geometry", "name_colour", "format_ns", "ROW_HEIGHT", "GUTTER", "TRACKS_TOP",
           "MINIMAP_TOP", "MINIMAP_HEIGHT", "AXIS_HEIGHT", "STATUS_HEIGHT", "MODE_EXPANDED",
           "MODE_THREAD_COLLAPSED", "MODE_PROCESS_COLLAPSED", "MODE_HIDDEN"]

ROW_HEIGHT = 18.0  # logical pixels per layout row
GUTTER = 220.0  # process (96) + thread (124) name columns
PROCESS_COLUMN = 96.0
MINIMAP_TOP, MINIMAP_HEIGHT = 4.0, 26.0
AXIS_HEIGHT = 24.0
TRACKS_TOP = MINIMAP_TOP + MINIMAP_HEIGHT + AXIS_HEIGHT + 2.0
STATUS_HEIGHT = 18.0  # the status line under the tracks
MIN_WINDOW_NS = 20  # the narrowest window zooming reaches


def name_colour(name: str) -> tuple:
    """A stable RGB colour (0..1) for a span name: a hash of its UTF-8 bytes
    picks a hue; saturation and lightness stay in a band where white and
    black labels both read (the same name has the same colour in any trace)."""
    h = zlib.crc32(name.encode("utf-8", "surrogatepass"))
    hue = (h & 0xFFFF) / 65536.0
    sat = 0.45 + 0.25 * ((h >> 16) & 0xFF) / 255.0
    light = 0.46 + 0.16 * ((h >> 24) & 0xFF) / 255.0
    return _hsl(hue, sat, light)


def _hsl(h, s, l):
    def channel(n):
        k = (n + h * 12.0) % 12.0
        return l - s * min(l, 1 - l) * max(-1.0, min(k - 3.0, 9.0 - k, 1.0))
    return (channel(0), channel(8), channel(4))


def format_ns(value) -> str:
    """A duration in the largest unit that keeps it >= 1 (``"1.25 ms"``)."""
    v = float(value)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.4g} {unit}"
    return f"{v:.0f} ns"


@dataclass(frozen=True)
class Geometry:
    """Where the tracks are: logical pixels of the plot (x0 = gutter edge)."""

    width: float
    height: float
    window: tuple  # (start_ns, end_ns) absolute, start < end
    first_row: int

    @classmethod
    def of(cls, state, size) -> "Geometry":
        """The geometry of a :class:`~gpuviz.trace.interaction.TraceViewState`
        (its window and first row) on a canvas of ``size`` logical pixels."""
        w, h = size
        return cls(width=float(w), height=float(h), window=state.window, first_row=state.rows[0])

    @property
    def plot_width(self) -> float:
        return max(self.width - GUTTER, 1.0)

    @property
    def px_per_ns(self) -> float:
        return self.plot_width / (self.window[1] - self.window[0])

    def x_of(self, t_ns):
        return GUTTER + (np.asarray(t_ns, np.float64) - self.window[0]) * self.px_per_ns

    def t_of(self, x) -> float:
        return self.window[0] + (float(x) - GUTTER) / self.px_per_ns

    def y_of(self, row):
        return TRACKS_TOP + (np.asarray(row, np.float64) - self.first_row) * ROW_HEIGHT

    @property
    def bottom(self) -> float:
        """Lower edge of the tracks (the status line is below it)."""
        return self.height - STATUS_HEIGHT

    @property
    def visible_rows(self) -> int:
        return max(int((self.bottom - TRACKS_TOP) // ROW_HEIGHT) + 1, 1)
