"""TraceIndex: the one CPU index of a loaded trace.

Built once per trace (by :class:`~gpuviz.trace.scene.GPUTraceScene`, from
the tables it prepares for the GPU, or by :meth:`TraceIndex.of` without a
GPU) and read by everything that draws or queries the trace: the scene's
records carry its name and category codes, the interaction policy
(:mod:`gpuviz.trace.interaction`) lays rows out in its thread display order
with its lane counts, and the viewer labels, hit-tests and filters with the
same codes and rows. There is no second numbering to translate.

What it holds:

* name and category codes: ``names`` / ``categories`` (str per code, code =
  index, the scene's record words 8 and 9) and ``name_id`` / ``category_id``
  per span;
* threads in display order (by process row, ``threads.sort_index``, thread
  row): ``thread_order``, each thread's ``thread_slot`` and each process's
  ``process_first_slot``; ``thread_lanes`` (largest lane + 1; a counter
  track's thread has one, any other thread without spans none);
* ``counter_tracks``: the :class:`~gpuviz.trace.counter_tracks.CounterTrack`
  of each counter thread appended to ``trace.threads`` before the scene was
  built (``trace`` is that trace);
* on first use, the span columns as numpy (``start``, ``duration``, ``end``,
  ``thread``, ``process``, ``lane``, ``parent``), links sorted by either end
  and instants sorted by time, with the CPU queries over them.

Plain numpy and pyarrow: it never touches the GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .errors import TraceSchemaError

__all__ = ["TraceIndex", "TraceLayout", "MODE_EXPANDED", "MODE_THREAD_COLLAPSED", "MODE_PROCESS_COLLAPSED",
           "MODE_HIDDEN"]

#: How a thread shows in a layout (:attr:`TraceLayout.thread_mode`).
MODE_EXPANDED, MODE_THREAD_COLLAPSED, MODE_PROCESS_COLLAPSED, MODE_HIDDEN = 0, 1, 2, 3


@dataclass(frozen=True)
class TraceLayout:
    """Row layout of one expansion state, on the CPU (the GPU computes the same).

    Attributes
    ----------
    thread_row, thread_height : numpy uint32, per thread row
        First layout row and rows of each thread (height: its lanes when it
        and its process are expanded, 1 when it is collapsed, 0 in a
        collapsed process or without spans).
    process_row, process_height : numpy uint32, per process row
        First row and rows of each process (a collapsed process has one
        summary row at ``process_row``; its height is 1).
    total_rows : int
    thread_order : numpy uint32
        Thread rows in display order (by process row, then
        ``threads.sort_index``, then thread row).
    thread_mode : numpy uint32, per thread row
        ``MODE_EXPANDED``, ``MODE_THREAD_COLLAPSED`` (lane 0 shown),
        ``MODE_PROCESS_COLLAPSED`` (in its process's summary row) or
        ``MODE_HIDDEN`` (no lanes).
    """

    thread_row: np.ndarray
    thread_height: np.ndarray
    process_row: np.ndarray
    process_height: np.ndarray
    total_rows: int
    thread_order: np.ndarray
    thread_mode: np.ndarray


class TraceIndex:
    """The CPU index of one trace (see the module docstring).

    Parameters
    ----------
    trace : Trace
        The trace indexed (counter-track threads already appended).
    names, categories : sequence of str
        The strings of the name and category codes (code = index).
    name_id, category_id : numpy integer array, one per span
        Each span's codes (span ID order).
    thread_lanes : numpy integer array, one per thread row
        Lanes per thread (counter-track threads included).
    counter_tracks : sequence of CounterTrack

    Notes
    -----
    Built once; every attribute is read-only by convention (shared by the
    scene, the interaction policy and the viewer). Expansion, filters and
    the other per-view state live in the view's state, not here.
    """

    def __init__(self, trace, *, names, name_id, categories, category_id, thread_lanes, counter_tracks=()):
        self.trace = trace
        self.n = trace.spans.num_rows
        self.names = [str(v) for v in names]
        self.categories = [str(v) for v in categories]
        self.name_id, self.category_id = np.asarray(name_id), np.asarray(category_id)
        self.counter_tracks = tuple(counter_tracks)
        threads, processes = trace.threads, trace.processes
        self.thread_count, self.process_count = threads.num_rows, processes.num_rows
        self.thread_process = threads.column("process").to_numpy().astype(np.int64)
        self.thread_names = [str(v) for v in threads.column("name").to_pylist()]
        self.thread_tids = [str(v) for v in threads.column("tid").to_pylist()]
        self.process_names = [str(v) for v in processes.column("name").to_pylist()]
        self.process_pids = [str(v) for v in processes.column("pid").to_pylist()]
        self.process_threads = np.bincount(self.thread_process, minlength=self.process_count)
        self.thread_lanes = np.asarray(thread_lanes, np.uint32).copy()
        if len(self.thread_lanes) != self.thread_count:
            raise TraceSchemaError(f"TraceIndex thread_lanes has {len(self.thread_lanes)} entries for "
                                   f"{self.thread_count} threads")
        sort_index = threads.column("sort_index").to_numpy()
        self.thread_order = np.lexsort((np.arange(self.thread_count), sort_index,
                                        self.thread_process)).astype(np.uint32)
        self.thread_slot = np.empty(self.thread_count, np.uint32)
        self.thread_slot[self.thread_order] = np.arange(self.thread_count, dtype=np.uint32)
        first = np.full(max(self.process_count, 1), self.thread_count, np.int64)
        np.minimum.at(first, self.thread_process, self.thread_slot.astype(np.int64))
        self.process_first_slot = first[:self.process_count]

    @classmethod
    def of(cls, trace, *, counter_tracks: bool = False) -> "TraceIndex":
        """The index of ``trace`` built on the CPU alone (a scene builds its
        own from the tables it uploads). ``counter_tracks``: append a thread
        per counter track first (:func:`~gpuviz.trace.counter_tracks.with_counter_tracks`)."""
        from .counter_tracks import with_counter_tracks
        from .scene_tables import dense_ids, thread_lane_counts
        tracks = ()
        if counter_tracks:
            trace, tracks = with_counter_tracks(trace)
        name_id, names = dense_ids(trace.spans.column("name"))
        category_id, categories = dense_ids(trace.spans.column("category"))
        lanes = thread_lane_counts(trace.spans, trace.threads.num_rows)
        lanes[[track.thread for track in tracks]] = 1
        return cls(trace, names=names.to_pylist(), name_id=name_id, categories=categories.to_pylist(),
                   category_id=category_id, thread_lanes=lanes, counter_tracks=tracks)

    # ----------------------------------------------------------------- rows
    def row_layout(self, *, process_expanded, thread_expanded) -> TraceLayout:
        """The row layout of an expansion state (bool per process row, per
        thread row): what the interaction policy's GPU layout computes."""
        order, process = self.thread_order, self.thread_process
        pexp = np.asarray(process_expanded, bool)
        texp_rows = np.asarray(thread_expanded, bool)
        texp = texp_rows[order]
        proc = process[order]
        first_of_process = np.ones(len(order), bool)
        first_of_process[1:] = proc[1:] != proc[:-1]
        heights = np.where(pexp[proc] if len(order) else np.zeros(0, bool),
                           np.where(texp, self.thread_lanes[order], 1), first_of_process.astype(np.uint32))
        offsets = np.zeros(len(order) + 1, np.int64)
        offsets[1:] = np.cumsum(heights)
        collapsed = ~pexp[process] if len(order) else np.zeros(0, bool)
        own = offsets[self.thread_slot]
        summary = offsets[self.process_first_slot[process]] if len(order) else own
        thread_row = np.where(collapsed, summary, own).astype(np.uint32)
        thread_height = np.empty(len(order), np.uint32)
        thread_height[order] = heights
        process_row = offsets[self.process_first_slot].astype(np.uint32)
        process_height = np.zeros(self.process_count, np.uint32)
        np.add.at(process_height, process, thread_height)
        mode = np.where(collapsed, MODE_PROCESS_COLLAPSED,
                        np.where(self.thread_lanes == 0, MODE_HIDDEN,
                                 np.where(texp_rows, MODE_EXPANDED, MODE_THREAD_COLLAPSED))).astype(np.uint32)
        return TraceLayout(thread_row, thread_height, process_row, process_height, int(offsets[-1]), order.copy(),
                           mode)

    def span_rows(self, layout: TraceLayout, *, ids=None) -> np.ndarray:
        """int64 layout row of every span (or of the span IDs ``ids``:
        O(len(ids))), -1 where it is not drawn (lane > 0 of a collapsed thread)."""
        thread, lane = (self.thread, self.lane) if ids is None else (self.thread[ids], self.lane[ids])
        mode = layout.thread_mode[thread]
        row = layout.thread_row[thread].astype(np.int64) + np.where(mode == MODE_EXPANDED, lane, 0)
        hidden = (mode == MODE_HIDDEN) | ((mode == MODE_THREAD_COLLAPSED) & (lane > 0))
        return np.where(hidden, -1, row)

    # --------------------------------------------------------- span columns
    def prepare_spans(self) -> "TraceIndex":
        """Build the per-span columns and the sorted links now (each is built
        on first use otherwise): for a caller that reads them every frame."""
        for name in ("start", "duration", "end", "thread", "process", "lane", "parent", "extent", "_links_by_end",
                     "_instants"):
            getattr(self, name)
        return self

    def _column(self, name) -> np.ndarray:
        return self.trace.spans.column(name).to_numpy().astype(np.int64)

    @cached_property
    def start(self) -> np.ndarray:
        """int64 start ns per span."""
        return self._column("start_ns")

    @cached_property
    def duration(self) -> np.ndarray:
        """int64 duration ns per span."""
        return self._column("duration_ns")

    @cached_property
    def end(self) -> np.ndarray:
        """int64 ``start + max(duration, 1)`` per span (zero-duration spans are 1 ns wide)."""
        return self.start + np.maximum(self.duration, 1)

    @cached_property
    def thread(self) -> np.ndarray:
        return self._column("thread")

    @cached_property
    def process(self) -> np.ndarray:
        return self._column("process")

    @cached_property
    def lane(self) -> np.ndarray:
        return self._column("lane")

    @cached_property
    def parent(self) -> np.ndarray:
        """int64 parent span ID per span (-1: a root)."""
        return self._column("parent")

    @cached_property
    def extent(self) -> tuple:
        """``(first start, last end)`` ns; ``(0, 1000)`` without spans."""
        return (int(self.start.min()), int(self.end.max())) if self.n else (0, 1000)

    # ------------------------------------------------------------------ links
    @cached_property
    def link_source(self) -> np.ndarray:
        return self.trace.links.column("source").to_numpy().astype(np.int64)

    @cached_property
    def link_target(self) -> np.ndarray:
        return self.trace.links.column("target").to_numpy().astype(np.int64)

    @cached_property
    def _links_by_end(self) -> tuple:
        """Links sorted by each end (stable): ``((order, sorted ends) by source, ... by target)``."""
        out = []
        for ends in (self.link_source, self.link_target):
            order = np.argsort(ends, kind="stable")
            out.append((order, ends[order]))
        return tuple(out)

    def links_of(self, span_ids, *, limit: int) -> np.ndarray:
        """Link indices (rows of ``trace.links``) with an end in ``span_ids``
        (both directions), at most ``limit`` of each direction, without a pass
        over every link: binary searches in the link ends sorted once."""
        ids = np.asarray(span_ids, np.int64).ravel()
        found = []
        for order, ends in self._links_by_end:
            a, b = np.searchsorted(ends, ids), np.searchsorted(ends, ids, side="right")
            hit = np.flatnonzero(b > a)
            if not len(hit):
                continue
            a, b = a[hit], b[hit]
            keep = np.searchsorted(np.cumsum(b - a), limit) + 1  # ranges until limit links
            a, b = a[:keep], b[:keep]
            found.append(order[np.concatenate([np.arange(x, y) for x, y in zip(a, b)])][:limit])
        return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def focus_set(self, seeds, *, depth: int) -> np.ndarray:
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

    def parent_chain(self, span_id: int, *, limit: int = 12) -> list:
        """Ancestors of ``span_id``, nearest first (at most ``limit``)."""
        chain, p = [], int(self.parent[span_id])
        while p >= 0 and len(chain) < limit:
            chain.append(p)
            p = int(self.parent[p])
        return chain

    # --------------------------------------------------------------- instants
    @cached_property
    def _instants(self) -> tuple:
        inst = self.trace.instants
        ts = inst.column("ts_ns").to_numpy().astype(np.int64) if inst.num_rows else np.zeros(0, np.int64)
        threads = inst.column("thread").to_numpy(zero_copy_only=False) if inst.num_rows else np.zeros(0)
        threads = np.asarray(threads, np.float64)
        order = np.argsort(ts, kind="stable")
        return ts[order], np.where(np.isfinite(threads), threads, -1).astype(np.int64)[order]

    def instants_in(self, window, *, limit: int) -> tuple:
        """(ts_ns, thread or -1) of at most ``limit`` instants in ``[t0, t1)`` (binary searches)."""
        ts, threads = self._instants
        a, b = np.searchsorted(ts, window[0]), np.searchsorted(ts, window[1])
        b = min(b, a + limit)
        return ts[a:b], threads[a:b]

    # ------------------------------------------------------------------ names
    def name_matches(self, pattern) -> np.ndarray:
        """bool per name code: the name contains ``pattern`` (a str, case-insensitive)
        or matches it (a compiled ``re.Pattern``, ``search`` semantics)."""
        if isinstance(pattern, re.Pattern):
            return np.array([pattern.search(name) is not None for name in self.names], bool)
        needle = str(pattern).casefold()
        return np.array([needle in name.casefold() for name in self.names], bool)

    def __repr__(self) -> str:
        return (f"TraceIndex(spans={self.n}, names={len(self.names)}, categories={len(self.categories)}, "
                f"threads={self.thread_count}, processes={self.process_count}, "
                f"counter_tracks={len(self.counter_tracks)})")
