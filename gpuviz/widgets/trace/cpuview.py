"""The CPU model of a TraceViewer's view: the row layout of an expansion
state and the frame's tests for one span or (as an oracle for explicit
queries and tests, never a frame) for every span.

Functions of the trace's :class:`~gpuviz.trace.index.TraceIndex` and a
:class:`~gpuviz.trace.interaction.TraceViewState`; they never touch the GPU.
``layout_of`` is O(threads); ``visible`` is O(spans) and the focus set
O(links x depth): for summary(), span_rect() and tests.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .geometry import MODE_PROCESS_COLLAPSED

__all__ = ["layout_of", "visible", "shown"]


def layout_of(index, state):
    """The row layout of ``state``'s expansion (the GPU computes the same),
    int64 for pixel arithmetic."""
    tl = index.row_layout(process_expanded=state.process_expanded, thread_expanded=state.thread_expanded)
    return replace(tl, **{name: getattr(tl, name).astype(np.int64) for name in
                          ("thread_row", "thread_height", "process_row", "process_height", "thread_mode")})


def visible(index, state, layout, rows, geometry, focus_set) -> np.ndarray:
    """bool per span: drawn in the view (the shader's tests, on the CPU).
    ``rows``: every span's layout row; ``focus_set()``: the focus mask,
    called only with focus "hide"."""
    h = index
    w0, w1 = state.window
    keep = (h.start < w1) & (h.end > w0) & (rows >= state.rows[0]) & (h.duration >= state.min_duration_ns)
    keep &= layout.thread_mode[h.thread] != MODE_PROCESS_COLLAPSED  # drawn as density bins
    keep &= geometry.y_of(rows) < geometry.bottom
    if state.categories is not None:
        keep &= state.categories[h.category_id]
    if state.search is not None and state.search_mode == "filter":
        keep &= state.search[h.name_id]
    if len(state.focus_seeds) and state.focus_mode == "hide":
        keep &= focus_set()
    return keep


def shown(index, state, layout, geometry, s: int, focus_set) -> bool:
    """Span ``s`` passes the frame's tests (:func:`visible` for one span:
    O(1) but for the focus set in "hide" mode)."""
    h = index
    row = int(h.span_rows(layout, ids=[s])[0])
    w0, w1 = state.window
    if not (h.start[s] < w1 and h.end[s] > w0 and row >= state.rows[0] and h.duration[s] >= state.min_duration_ns):
        return False
    if layout.thread_mode[h.thread[s]] == MODE_PROCESS_COLLAPSED or geometry.y_of(row) >= geometry.bottom:
        return False
    if state.categories is not None and not state.categories[h.category_id[s]]:
        return False
    if state.search is not None and state.search_mode == "filter" and not state.search[h.name_id[s]]:
        return False
    return not (len(state.focus_seeds) and state.focus_mode == "hide" and not focus_set()[s])
