"""The CPU model of a TraceViewer's view: the row layout of the expansion
state (O(threads), cached) and the frame's tests for one span or (as an
oracle for explicit queries and tests, never a frame) for every span.

A mixin of :class:`~gpuviz.widgets.trace.widget.TraceViewer`: it reads the
viewer's :class:`~gpuviz.trace.interaction.TraceViewState` and the trace's
index, and never touches the GPU.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .geometry import MODE_PROCESS_COLLAPSED

__all__ = ["ViewModel"]


class ViewModel:
    """The layout and visibility rules of a TraceViewer on the CPU (mixin).

    Does NOT run per frame except :meth:`_layout` (cached per expansion
    state); ``_rows`` / ``_visible`` are O(spans) and ``_focus_set`` is
    O(links x depth): for summary(), span_rect() and tests.
    """

    def _layout(self):
        """The row layout of the expansion state (the GPU computes the same),
        int64 for pixel arithmetic: O(threads), cached per expansion state."""
        pexp, texp = self._state.process_expanded, self._state.thread_expanded
        key = (pexp.tobytes(), texp.tobytes())
        if self._layout_cache[0] == key:
            return self._layout_cache[1]
        tl = self.index.row_layout(process_expanded=pexp, thread_expanded=texp)
        layout = replace(tl, **{name: getattr(tl, name).astype(np.int64) for name in
                                ("thread_row", "thread_height", "process_row", "process_height", "thread_mode")})
        self._layout_cache = (key, layout)
        return layout

    def _rows(self):
        """Layout row of every span: O(spans), for explicit queries and tests only (never a frame)."""
        if "rows" not in self._cache:
            self._cache["rows"] = self.index.span_rows(self._layout())
        return self._cache["rows"]

    def _visible(self, geometry=None) -> np.ndarray:
        """bool per span: drawn in the current view (the shader's tests, on the
        CPU): O(spans), for :meth:`summary` and tests only (never a frame)."""
        geometry = geometry or self._geometry()
        key = ("visible", geometry.width, geometry.height)
        if key in self._cache:
            return self._cache[key]
        h, rows, state = self.index, self._rows(), self._state
        w0, w1 = state.window
        keep = (h.start < w1) & (h.end > w0) & (rows >= state.rows[0]) & (h.duration >= state.min_duration_ns)
        keep &= self._layout().thread_mode[h.thread] != MODE_PROCESS_COLLAPSED  # drawn as density bins
        keep &= geometry.y_of(rows) < geometry.bottom
        if state.categories is not None:
            keep &= state.categories[h.category_id]
        if state.search is not None and state.search_mode == "filter":
            keep &= state.search[h.name_id]
        if len(state.focus_seeds) and state.focus_mode == "hide":
            keep &= self._focus_set()
        self._cache[key] = keep
        return keep

    def _shown(self, s: int, geometry) -> bool:
        """Span ``s`` passes the frame's tests (``_visible`` for one span: O(1)
        but for the focus set in "hide" mode)."""
        h, state = self.index, self._state
        row = int(h.span_rows(self._layout(), ids=[s])[0])
        w0, w1 = state.window
        if not (h.start[s] < w1 and h.end[s] > w0 and row >= state.rows[0]
                and h.duration[s] >= state.min_duration_ns):
            return False
        if self._layout().thread_mode[h.thread[s]] == MODE_PROCESS_COLLAPSED or geometry.y_of(row) >= geometry.bottom:
            return False
        if state.categories is not None and not state.categories[h.category_id[s]]:
            return False
        if state.search is not None and state.search_mode == "filter" and not state.search[h.name_id[s]]:
            return False
        return not (len(state.focus_seeds) and state.focus_mode == "hide" and not self._focus_set()[s])

    def _focus_set(self):
        """bool per span in the focus (CPU, O(links x depth)): only for explicit queries."""
        key = ("focus", self._state.focus_seeds, self._state.focus_depth)
        if key not in self._cache:
            self._cache[key] = self.index.focus_set(self._state.focus_seeds, depth=self._state.focus_depth)
        return self._cache[key]
