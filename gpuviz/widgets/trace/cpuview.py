"""The CPU model of a TraceViewer's view: the row layout of the expansion
state (O(threads), cached) and the frame's tests for one span or (as an
oracle for explicit queries and tests, never a frame) for every span.

A mixin of :class:`~gpuviz.widgets.trace.widget.TraceViewer`: it reads the
viewer's state (window, rows, filters, focus) and never touches the GPU.
"""

from __future__ import annotations

import numpy as np

from .host import MODE_EXPANDED, MODE_HIDDEN, MODE_PROCESS_COLLAPSED, MODE_THREAD_COLLAPSED, Layout

__all__ = ["ViewModel"]


class ViewModel:
    """The layout and visibility rules of a TraceViewer on the CPU (mixin).

    Does NOT run per frame except :meth:`_layout` (cached per expansion
    state); ``_rows`` / ``_visible`` are O(spans) and ``_focus_set`` is
    O(links x depth): for summary(), span_rect() and tests.
    """

    def _layout(self):
        """The frame's row layout of the expansion state (the GPU computes the
        same), with thread modes: O(threads), cached per expansion state."""
        h = self.host
        key = (h.process_expanded.tobytes(), h.thread_expanded.tobytes())
        if self._layout_cache[0] == key:
            return self._layout_cache[1]
        frame = self._graph.frame
        tl = frame.layout(frame.initial_state(width=1).with_(process_expanded=h.process_expanded.copy(),
                                                             thread_expanded=h.thread_expanded.copy()))
        pexp = h.process_expanded[h.thread_process] if h.thread_count else np.zeros(0, bool)
        mode = np.where(~pexp, MODE_PROCESS_COLLAPSED,
                        np.where(h.thread_lanes == 0, MODE_HIDDEN,
                                 np.where(h.thread_expanded, MODE_EXPANDED, MODE_THREAD_COLLAPSED)))
        layout = Layout(tl.thread_row.astype(np.int64), tl.thread_height.astype(np.int64), mode,
                        tl.process_row.astype(np.int64), tl.process_height.astype(np.int64),
                        int(tl.total_rows), np.asarray(tl.thread_order))
        self._layout_cache = (key, layout)
        return layout

    def _rows(self):
        """Layout row of every span: O(spans), for explicit queries and tests only (never a frame)."""
        if "rows" not in self._cache:
            self._cache["rows"] = self.host.span_rows(self._layout())
        return self._cache["rows"]

    def _visible(self, geometry=None) -> np.ndarray:
        """bool per span: drawn in the current view (the shader's tests, on the
        CPU): O(spans), for :meth:`summary` and tests only (never a frame)."""
        geometry = geometry or self._geometry()
        key = ("visible", geometry.width, geometry.height)
        if key in self._cache:
            return self._cache[key]
        h, rows = self.host, self._rows()
        w0, w1 = self._window
        keep = (h.start < w1) & (h.end > w0) & (rows >= self._first_row) & (h.duration >= self._min_duration)
        keep &= self._layout().thread_mode[h.thread] != MODE_PROCESS_COLLAPSED  # drawn as density bins
        keep &= geometry.y_of(rows) < geometry.bottom
        if self._categories is not None:
            keep &= self._categories[h.category_id]
        if self._search is not None and self._search[1] == "filter":
            keep &= self._search_names[h.name_id]
        if self._focus is not None and self._focus_mode == "hide":
            keep &= self._focus_set()
        self._cache[key] = keep
        return keep

    def _shown(self, s: int, geometry) -> bool:
        """Span ``s`` passes the frame's tests (``_visible`` for one span: O(1)
        but for the focus set in "hide" mode)."""
        h = self.host
        row = int(h.span_rows(self._layout(), [s])[0])
        w0, w1 = self._window
        if not (h.start[s] < w1 and h.end[s] > w0 and row >= self._first_row and h.duration[s] >= self._min_duration):
            return False
        if self._layout().thread_mode[h.thread[s]] == MODE_PROCESS_COLLAPSED or geometry.y_of(row) >= geometry.bottom:
            return False
        if self._categories is not None and not self._categories[h.category_id[s]]:
            return False
        if self._search is not None and self._search[1] == "filter" and not self._search_names[h.name_id[s]]:
            return False
        return not (self._focus is not None and self._focus_mode == "hide" and not self._focus_set()[s])

    def _focus_set(self):
        """bool per span in the focus (CPU, O(links x depth)): only for explicit queries."""
        if self._focus_mask is None:
            self._focus_mask = self.host.focus_set(*self._focus)
        return self._focus_mask
