"""The CPU side of a TraceViewer: the trace's columns in numpy, the row
layout of an expansion state, the pixel geometry of spans, focus over
links and name matching.

Everything here is plain numpy over the trace's own tables (span ID
order); the GPU draws the same geometry from the scene's records and the
small buffers :mod:`.graph` writes from this module's results.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import numpy as np

from ...errors import GraphValidationError

__all__ = ["TraceHost", "Layout", "Geometry", "name_colour", "format_ns", "ROW_HEIGHT", "GUTTER", "TRACKS_TOP",
           "MINIMAP_TOP", "MINIMAP_HEIGHT", "AXIS_HEIGHT", "STATUS_HEIGHT"]

ROW_HEIGHT = 18.0  # logical pixels per layout row
GUTTER = 220.0  # process (96) + thread (124) name columns
PROCESS_COLUMN = 96.0
MINIMAP_TOP, MINIMAP_HEIGHT = 4.0, 26.0
AXIS_HEIGHT = 24.0
TRACKS_TOP = MINIMAP_TOP + MINIMAP_HEIGHT + AXIS_HEIGHT + 2.0
STATUS_HEIGHT = 18.0  # the status line under the tracks
MIN_WINDOW_NS = 20  # the narrowest window zooming reaches
MODE_EXPANDED, MODE_THREAD_COLLAPSED, MODE_PROCESS_COLLAPSED, MODE_HIDDEN = 0, 1, 2, 3


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
class Layout:
    """Rows of one expansion state (GPUTraceFrame.layout's, plus thread modes).

    ``thread_row`` / ``thread_height`` per thread row (height 0: not shown),
    ``thread_mode`` (expanded, thread collapsed, process collapsed, hidden),
    ``process_row`` / ``process_height`` per process, ``total_rows``,
    ``thread_order`` (display order)."""

    thread_row: np.ndarray
    thread_height: np.ndarray
    thread_mode: np.ndarray
    process_row: np.ndarray
    process_height: np.ndarray
    total_rows: int
    thread_order: np.ndarray


@dataclass(frozen=True)
class Geometry:
    """Where the tracks are: logical pixels of the plot (x0 = gutter edge)."""

    width: float
    height: float
    window: tuple  # (start_ns, end_ns) absolute, start < end
    first_row: int

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


class TraceHost:
    """numpy columns of a Trace (span ID order) and the CPU rules of the view.

    Parameters
    ----------
    trace : gpuviz.trace.Trace

    Notes
    -----
    Copies the numeric span columns (about 50 bytes per span) and the small
    tables; names stay in pyarrow. Does not touch the GPU.
    """

    def __init__(self, trace):
        self.trace = trace
        spans = trace.spans
        self.n = spans.num_rows
        col = lambda name: spans.column(name).to_numpy()  # noqa: E731
        self.start = col("start_ns").astype(np.int64)
        self.duration = col("duration_ns").astype(np.int64)
        self.end = self.start + np.maximum(self.duration, 1)  # zero-duration spans are 1 ns wide
        self.thread = col("thread").astype(np.int64)
        self.process = col("process").astype(np.int64)
        self.lane = col("lane").astype(np.int64)
        self.parent = col("parent").astype(np.int64)
        names = spans.column("name").combine_chunks().dictionary_encode()
        self.name_table = [str(v) for v in names.dictionary.to_pylist()]
        self.name_id = names.indices.to_numpy().astype(np.int64)
        cats = spans.column("category").combine_chunks().dictionary_encode()
        self.category_table = [str(v) for v in cats.dictionary.to_pylist()]
        self.category_id = cats.indices.to_numpy().astype(np.int64)
        threads, processes = trace.threads, trace.processes
        self.thread_count, self.process_count = threads.num_rows, processes.num_rows
        self.thread_process = threads.column("process").to_numpy().astype(np.int64)
        self.thread_names = [str(v) for v in threads.column("name").to_pylist()]
        self.thread_tids = [str(v) for v in threads.column("tid").to_pylist()]
        self.process_names = [str(v) for v in processes.column("name").to_pylist()]
        self.process_pids = [str(v) for v in processes.column("pid").to_pylist()]
        sort_index = threads.column("sort_index").to_numpy()
        self.thread_order = np.lexsort((np.arange(self.thread_count), sort_index, self.thread_process))
        self.process_threads = np.bincount(self.thread_process, minlength=self.process_count)
        self.thread_lanes = np.zeros(self.thread_count, np.int64)
        if self.n:
            np.maximum.at(self.thread_lanes, self.thread, self.lane + 1)
        links = trace.links
        self.link_source = links.column("source").to_numpy().astype(np.int64)
        self.link_target = links.column("target").to_numpy().astype(np.int64)
        # links by either end, sorted once at load: a span's links are two binary searches
        self._by_source = np.argsort(self.link_source, kind="stable")
        self._by_target = np.argsort(self.link_target, kind="stable")
        self._sorted_source = self.link_source[self._by_source]
        self._sorted_target = self.link_target[self._by_target]
        inst = trace.instants
        ts = inst.column("ts_ns").to_numpy().astype(np.int64) if inst.num_rows else np.zeros(0, np.int64)
        threads = inst.column("thread").to_numpy(zero_copy_only=False) if inst.num_rows else np.zeros(0)
        threads = np.asarray(threads, np.float64)
        order = np.argsort(ts, kind="stable")
        self.instant_ts = ts[order]  # sorted: a window is two binary searches
        self.instant_thread = np.where(np.isfinite(threads), threads, -1).astype(np.int64)[order]
        self.extent = (int(self.start.min()), int(self.end.max())) if self.n else (0, 1000)
        self.process_expanded = np.ones(self.process_count, bool)
        self.thread_expanded = np.ones(self.thread_count, bool)

    # ---------------------------------------------------------------- layout
    def span_rows(self, layout: Layout, ids=None) -> np.ndarray:
        """Layout row of every span (or of the span IDs ``ids``: O(len(ids))),
        -1 where it is not drawn (lane > 0 of a collapsed thread)."""
        thread, lane = (self.thread, self.lane) if ids is None else (self.thread[ids], self.lane[ids])
        mode = layout.thread_mode[thread]
        row = layout.thread_row[thread] + np.where(mode == MODE_EXPANDED, lane, 0)
        hidden = (mode == MODE_HIDDEN) | ((mode == MODE_THREAD_COLLAPSED) & (lane > 0))
        return np.where(hidden, -1, row)

    def links_of(self, span_ids, limit: int) -> np.ndarray:
        """Link indices (rows of ``trace.links``) with an end in ``span_ids``
        (both directions), at most ``limit`` of each direction, without a pass
        over every link: binary searches in the link ends sorted at load."""
        ids = np.asarray(span_ids, np.int64).ravel()
        found = []
        for order, ends in ((self._by_source, self._sorted_source), (self._by_target, self._sorted_target)):
            a, b = np.searchsorted(ends, ids), np.searchsorted(ends, ids, side="right")
            hit = np.flatnonzero(b > a)
            if not len(hit):
                continue
            a, b = a[hit], b[hit]
            keep = np.searchsorted(np.cumsum(b - a), limit) + 1  # ranges until limit links
            a, b = a[:keep], b[:keep]
            found.append(order[np.concatenate([np.arange(x, y) for x, y in zip(a, b)])][:limit])
        return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def instants_in(self, window, limit: int) -> tuple:
        """(ts_ns, thread or -1) of at most ``limit`` instants in ``[t0, t1)`` (binary searches)."""
        a, b = np.searchsorted(self.instant_ts, window[0]), np.searchsorted(self.instant_ts, window[1])
        b = min(b, a + limit)
        return self.instant_ts[a:b], self.instant_thread[a:b]

    # ---------------------------------------------------------------- filters
    def name_matches(self, pattern) -> np.ndarray:
        """bool per name ID: the name contains ``pattern`` (a str, case-insensitive)
        or matches it (a compiled ``re.Pattern``, ``search`` semantics)."""
        if isinstance(pattern, re.Pattern):
            return np.array([pattern.search(name) is not None for name in self.name_table], bool)
        needle = str(pattern).casefold()
        return np.array([needle in name.casefold() for name in self.name_table], bool)

    def focus_set(self, seeds, depth: int) -> np.ndarray:
        """bool per span: within ``depth`` link hops (both directions) of ``seeds``."""
        mask = np.zeros(self.n, bool)
        frontier = np.unique(np.asarray(seeds, np.int64))
        mask[frontier] = True
        for _ in range(depth):
            if not len(frontier):
                break
            hit = np.isin(self.link_source, frontier)
            back = np.isin(self.link_target, frontier)
            reached = np.unique(np.concatenate([self.link_target[hit], self.link_source[back]]))
            frontier = reached[~mask[reached]]
            mask[frontier] = True
        return mask

    def check_ids(self, span_ids, what: str) -> np.ndarray:
        """int64 span IDs, each a row of ``trace.spans``; GraphValidationError otherwise."""
        ids = np.atleast_1d(np.asarray(span_ids))
        if ids.size and (ids.dtype.kind not in "iu"):
            raise GraphValidationError(f'TraceViewer {what} takes integer span IDs (got dtype {ids.dtype})')
        ids = ids.astype(np.int64).ravel()
        bad = ids[(ids < 0) | (ids >= self.n)]
        if len(bad):
            raise GraphValidationError(f"TraceViewer {what}: span ID {int(bad[0])} is not in the trace "
                                       f"({self.n} spans: IDs 0..{self.n - 1})")
        return ids

    def parent_chain(self, span_id: int, limit: int = 12) -> list:
        chain, p = [], int(self.parent[span_id])
        while p >= 0 and len(chain) < limit:
            chain.append(p)
            p = int(self.parent[p])
        return chain
