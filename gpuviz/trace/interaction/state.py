"""TraceViewState: everything a trace view's frame depends on, on the CPU.

The state is plain data: a time window in integer nanoseconds, the canvas
width, a vertical row range, expansion states, filters and focus. A
:class:`~gpuviz.trace.interaction.frame.GPUTraceInteraction` turns it into small
parameter-buffer writes; nothing in it is structural, so changing any field
never recompiles a graph.

The pixel grid is exact integer arithmetic: column ``c`` of a window
``[w0, w1)`` that is ``W`` columns wide covers the nanoseconds
``[b[c], b[c + 1])`` with ``b[c] = w0 + floor(c * (w1 - w0) / W)``
(:func:`column_bounds`). The GPU and the oracle use the same bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import GraphTypeError, GraphValidationError
from ...graph.checks import check_count

__all__ = ["TraceViewState", "column_bounds", "FOCUS_MODES", "SEARCH_MODES", "DEFAULT_FOCUS_DEPTH"]

#: ``focus_mode`` values: ``"dim"`` keeps every span and dims the rest;
#: ``"hide"`` draws only the focused spans.
FOCUS_MODES = ("dim", "hide")
#: ``search_mode`` values: ``"highlight"`` counts and marks matches;
#: ``"filter"`` also hides every span that does not match.
SEARCH_MODES = ("highlight", "filter")
#: Hops a focus may reach (compiled into the frame's traversal).
DEFAULT_FOCUS_DEPTH = 8


def _int(name, value, low=None, high=None):
    return check_count("TraceViewState", name, value, low=low, high=high)


def _flags(name, value, count):
    if value is None:
        return None
    array = np.asarray(value)
    if array.dtype.kind != "b" or array.shape != (count,):  # kind "b": numpy's bool, without building a dtype
        raise GraphValidationError(f"TraceViewState {name} must be a bool array of shape ({count},) "
                                   f"(got {array.dtype} {array.shape})")
    return array


def column_bounds(window, width) -> np.ndarray:
    """int64 ``width + 1`` column bounds of ``window = (w0, w1)`` (ns).

    Column ``c`` covers ``[b[c], b[c + 1])``; ``b[0] = w0``, ``b[width] = w1``.
    Exact for any int64 window (Python integers, no float rounding). Does
    not clamp the window or check it is non-empty."""
    w0, w1 = (int(v) for v in window)
    whole, part = divmod(w1 - w0, int(width))
    c = np.arange(width + 1, dtype=np.int64)
    # c * span // width without overflow: c * whole + c * part // width (c * part < width**2)
    return w0 + c * whole + c * part // width


@dataclass(kw_only=True)
class TraceViewState:
    """What one frame of a trace view shows.

    Parameters
    ----------
    window : (int, int)
        ``[start_ns, end_ns)`` in absolute trace nanoseconds (the times of
        ``trace.spans``), ``start < end``. A span ``[s, s + d)`` is in the
        window when ``s < end`` and ``max(s + d, s + 1) > start`` (a
        zero-duration span counts as 1 ns wide).
    width : int
        Pixel columns of the canvas (1 to the frame's width capacity).
    rows : (int, int)
        ``(first_row, row_count)``: the vertical viewport in layout rows
        (``row_count`` at most the frame's row capacity). Spans on rows
        outside it are culled.
    process_expanded : numpy bool array, one per process row
        A collapsed process shows one summary row (its density bins); its
        spans are never drawn one by one.
    thread_expanded : numpy bool array, one per thread row
        A collapsed thread keeps one row: its lane-0 spans.
    categories : numpy bool array per category ID, or None (all shown)
    min_duration_ns : int
        Spans shorter than this are hidden (0 shows all).
    search : numpy bool array per name ID, or None (no search)
        Names that match (the name table is matched on the CPU).
    search_mode : {"highlight", "filter"}
    search_pattern : str, re.Pattern or None
        What ``search`` was matched from, for the caller that keeps the
        state (a viewer's ``search`` property); the frame reads only ``search``.
    focus_seeds : sequence of int
        Span IDs (rows of ``trace.spans``) the focus starts from; empty = no focus.
    focus_depth : int
        Hops over links, both directions (0 to the frame's compiled maximum).
    focus_mode : {"dim", "hide"}

    Notes
    -----
    Plain data; validates values against itself only. Shapes against a
    scene and limits against a frame are checked by
    :meth:`GPUTraceInteraction.write <gpuviz.trace.interaction.frame.GPUTraceInteraction.write>`.
    Does not touch the GPU and does not match names (pass the mask).
    """

    window: tuple
    width: int
    rows: tuple
    process_expanded: np.ndarray
    thread_expanded: np.ndarray
    categories: np.ndarray | None = None
    min_duration_ns: int = 0
    search: np.ndarray | None = None
    search_mode: str = "highlight"
    search_pattern: object = None
    focus_seeds: tuple = field(default_factory=tuple)
    focus_depth: int = DEFAULT_FOCUS_DEPTH
    focus_mode: str = "dim"

    def check(self, *, processes: int, threads: int, categories: int, names: int, width_capacity: int,
              row_capacity: int, max_depth: int, max_seeds: int, spans: int) -> None:
        """Raise GraphValidationError / GraphTypeError unless the state fits
        a scene of these sizes and a frame of these capacities."""
        w0, w1 = (_int("window", v, -(1 << 63), (1 << 63) - 1) for v in self.window)
        if w0 >= w1:
            raise GraphValidationError(f"TraceViewState window must have start < end (got {w0}, {w1})")
        _int("width", self.width, 1, width_capacity)
        first, count = self.rows
        _int("rows[0]", first, 0, (1 << 31) - 1)
        _int("rows[1]", count, 0, row_capacity)
        _flags("process_expanded", self.process_expanded, processes)
        _flags("thread_expanded", self.thread_expanded, threads)
        _flags("categories", self.categories, categories)
        _flags("search", self.search, names)
        _int("min_duration_ns", self.min_duration_ns, 0, (1 << 63) - 1)
        if self.search_mode not in SEARCH_MODES:
            raise GraphValidationError(f"TraceViewState search_mode must be one of {SEARCH_MODES} "
                                       f"(got {self.search_mode!r})")
        if self.focus_mode not in FOCUS_MODES:
            raise GraphValidationError(f"TraceViewState focus_mode must be one of {FOCUS_MODES} "
                                       f"(got {self.focus_mode!r})")
        _int("focus_depth", self.focus_depth, 0, max_depth)
        seeds = list(self.focus_seeds)
        if len(seeds) > max_seeds:
            raise GraphValidationError(f"TraceViewState has {len(seeds)} focus seeds; the frame holds {max_seeds}")
        for k, seed in enumerate(seeds):
            _int(f"focus_seeds[{k}]", seed, 0, spans - 1)

    def with_(self, **changes) -> "TraceViewState":
        """A copy with some fields replaced (arrays are shared, not copied)."""
        return replace(self, **changes)
