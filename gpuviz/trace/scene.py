"""GPUTraceScene: a :class:`~gpuviz.trace.model.Trace` uploaded once into GPU tables.

What lives on the GPU (one buffer per table, rows grouped by partition):

* **span records**, 48 bytes (12 uint32 words) per span, the canonical
  record every trace shader reads (``shaders/trace_span.wgsl``)::

      0-1  start      ns since the scene's time origin, uint64 as (lo, hi)
      2-3  duration   ns, uint64 as (lo, hi)
      4    lane       row inside its thread       5  thread   (threads row)
      6    process    (processes row)             7  depth    nesting depth
      8    name       dense name ID               9  category dense category ID
      10   flags | partition << 8   (flags: the ``FLAG_*`` bits)
      11   id         the span ID (row of ``trace.spans``): source identity

  As GPU tables: :attr:`GPUTraceScene.spans`, a GPUTable with three strided
  ``uint32x4`` columns over the record buffer (``"time"``: words 0-3,
  ``"place"``: 4-7, ``"label"``: 8-11) and one batch per partition.
* **parents** (uint32 scene row of the parent, :data:`NO_PARENT` for roots),
  one chunk per partition.
* **links**: one ``uint32x4`` record per link (source row, target row, kind
  ID, link ID = row of ``trace.links``), in ``trace.links`` order.
* four **CSR adjacencies** (:class:`TraceAdjacency`): links forward
  (source -> targets) and reverse (target -> sources), hierarchy forward
  (child -> parent) and reverse (parent -> children). Partition p's chunk of
  ``offsets`` holds ``n_p + 1`` offsets local to its ``neighbors`` chunk
  (the first is 0); neighbours are global scene rows, ordered by link ID
  (links) or by row (children). This is the partitioned CSR form that
  :class:`~gpuviz.algorithms.graph_traversal.GPUGraphTraversal` takes.
* per thread: its process and its lane count (max lane + 1, 0 without spans).

Rows and IDs: scene rows are span IDs whenever ``trace.spans`` is already
grouped by partition (every importer's output is). Otherwise the spans are
stably regrouped; word 11 of a record (and :attr:`GPUTraceScene.span_ids`)
maps a row back to its span ID, and parents, links and CSRs use rows.

Times stay exact: a start is 64-bit fixed point (integer ns since
:attr:`GPUTraceScene.time_origin_ns`, the earliest start), never float32.
A shader subtracts its view origin (also a ``vec2<u32>`` of ns since the
time origin) with ``trace_time_sub`` / ``trace_time_delta_*`` from
``shaders/trace_time.wgsl``: the difference is the exact signed 64-bit
integer (a day is 8.64e13 ns < 2**47), and only then becomes a float.
``trace_time_delta_f32`` is exact while |delta| < 2**24 ns (16.7 ms) and
otherwise within 2 ulp (at most |delta| * 2**-22): for a view w ns wide, a
visible span is placed exactly to 1 ns when w < 16.7 ms, and within
w * 2**-22 ns (a 4-millionth of the view, far below a pixel) at any zoom of
a day-long trace; ``trace_time_delta_i32`` gives the exact integer,
saturated to int32, for views up to 2.1 s wide. In a vertex shader::

    let s = spans[id];                                   // array<TraceSpan>
    let x0 = trace_time_delta_f32(s.start, view.origin) * view.pixels_per_ns;
    let x1 = trace_time_delta_f32(trace_span_end(s), view.origin) * view.pixels_per_ns;

with ``view.origin = GPUTraceScene.time_words(absolute_ns)`` written by the CPU.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuviz.graph import GPUCommandGraph
from gpuviz.graph.checks import check_device, check_id
from gpuviz.graph.errors import GraphStateError, GraphTypeError, GraphValidationError
from gpuviz.graph.resources import GraphVectorView
from gpuviz.tables import GPUData, GPURecordBatch, GPUSchema, GPUTable, GPUVector
from gpuviz.tables.data import DEFAULT_USAGE
from gpuviz.trace.model import Trace

__all__ = ["GPUTraceScene", "TraceAdjacency", "RECORD_WORDS", "RECORD_BYTES", "RECORD_CHUNK_ALIGN", "NO_PARENT",
           "PARTITION_SHIFT",
           "MAX_PARTITIONS", "FLAG_INCOMPLETE", "FLAG_HAS_ARGS", "FLAG_ROOT", "FLAG_HAS_CHILDREN",
           "FLAG_LINKS_OUT", "FLAG_LINKS_IN", "FLAG_ZERO_DURATION"]

#: uint32 words of one span record.
RECORD_WORDS = 12
#: Rows of every record chunk but the last are a multiple of this (so chunk
#: starts keep 256-byte alignment for records and per-row u32 tables).
RECORD_CHUNK_ALIGN = 2048
#: Bytes of one span record (three ``vec4<u32>``).
RECORD_BYTES = 4 * RECORD_WORDS
#: Parent of a root span in :attr:`GPUTraceScene.parents`.
NO_PARENT = 0xFFFFFFFF
#: Word 10 of a record is ``flags | partition << PARTITION_SHIFT``.
PARTITION_SHIFT = 8
#: Partitions a scene can hold (24 bits of word 10).
MAX_PARTITIONS = 1 << (32 - PARTITION_SHIFT)

FLAG_INCOMPLETE = 1 << 0      #: the source never closed the span
FLAG_HAS_ARGS = 1 << 1        #: ``args`` is not null (strings stay on the CPU)
FLAG_ROOT = 1 << 2            #: no parent
FLAG_HAS_CHILDREN = 1 << 3    #: some span names it as parent
FLAG_LINKS_OUT = 1 << 4       #: source of at least one link
FLAG_LINKS_IN = 1 << 5        #: target of at least one link
FLAG_ZERO_DURATION = 1 << 6   #: duration is 0

_SPAN_COLUMNS = {"time": 0, "place": 16, "label": 32}  # byte offset of each uint32x4 column in a record
_WRITE_PIECE = 64 << 20  # bytes per queue.write_buffer call: bounds wgpu's staging copies
_BLOCK_ROWS = 1 << 13  # records written per block (384 KiB): stays in a core's L2
_WORKERS = max(1, min(8, os.cpu_count() or 1))  # host threads preparing a scene's records
_CSR_WORKERS = 4  # threads of the four CSR sorts (each splits its partitions over _WORKERS more)
_DENSE_SLICE = 1 << 20  # strings per dictionary-encoding slice


@dataclass(frozen=True)
class TraceAdjacency:
    """One CSR adjacency of a :class:`GPUTraceScene`, chunked by partition.

    Attributes
    ----------
    offsets : GPUVector
        uint32; chunk p has ``n_p + 1`` offsets into neighbors chunk p (its
        first is 0): row r of partition p (local row i) has neighbours
        ``neighbors_p[offsets_p[i]:offsets_p[i + 1]]``.
    neighbors : GPUVector
        uint32 global scene rows, one chunk per partition.
    edges : GPUVector or None
        uint32 link IDs beside ``neighbors`` (link adjacencies only).

    Views over the scene's buffers: owned by the scene, never by this object.
    """

    offsets: GPUVector
    neighbors: GPUVector
    edges: GPUVector | None = None


def _column(table, name):
    column = table.column(name)
    return column.to_numpy() if column.num_chunks != 1 else column.chunk(0).to_numpy(zero_copy_only=False)


def _encode(column):
    """(uint32 IDs, dictionary) of one string array (no nulls: the model
    refuses them), IDs in first-appearance order."""
    encoded = pc.dictionary_encode(column)
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.uint32, copy=False), encoded.dictionary


def _dense_ids(column):
    """(uint32 IDs, pyarrow dictionary) of a string column, IDs in first-appearance order.

    Long columns are encoded in slices on several threads; the slices'
    dictionaries, concatenated in order and encoded once more, give the same
    first-appearance IDs as one pass."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    n = len(column)
    if _WORKERS == 1 or n < _DENSE_SLICE:
        return _encode(column)
    step = max(_DENSE_SLICE, -(-n // _WORKERS))
    with ThreadPoolExecutor(_WORKERS) as pool:
        parts = list(pool.map(lambda lo: _encode(column.slice(lo, step)), range(0, n, step)))
    merged, dictionary = _encode(pa.concat_arrays([d for _, d in parts]))
    ids, base = [], 0
    for local, d in parts:
        ids.append(merged[base:base + len(d)][local])
        base += len(d)
    return np.concatenate(ids), dictionary


def _sorted_positions(keys, lo, hi):
    """Positions lo..hi of ``keys`` ordered by key, stably (keys uint32)."""
    packed = (keys[lo:hi].astype(np.uint64) << np.uint64(32)) | np.arange(hi - lo, dtype=np.uint64)
    packed.sort()  # unique values, so any sort is stable; numpy's SIMD sort is the fastest here
    return (packed & np.uint64(0xFFFFFFFF)).astype(np.uint32) + np.uint32(lo)


def _within(keys, edges, bounds):
    """Whether positions edges[p]..edges[p + 1] of ``keys`` hold only keys of partition p."""
    starts = edges[:-1][np.diff(edges) > 0]
    if len(starts) == 0:
        return True
    owner = np.searchsorted(edges[1:], starts, side="right")  # the partition of each non-empty slice
    low, high = np.minimum.reduceat(keys, starts), np.maximum.reduceat(keys, starts)
    return bool(np.all(low >= bounds[owner]) and np.all(high < bounds[owner + 1]))


def _group(keys, count, bounds, edges=None):
    """Positions of ``keys`` (uint32 rows < count) ordered by key, stably, and
    CSR offsets over ``count`` keys.

    Keys of one partition (row range in ``bounds``) sort in their own thread.
    ``edges`` (optional, ``len(bounds)`` positions) guesses where each
    partition's keys lie (children follow their parents' partition); when the
    guess fails or is missing, positions are split by the key's partition
    first (a linear radix sort of 16-bit partition numbers)."""
    keys = np.asarray(keys, np.uint32)
    n = len(keys)
    offsets = np.zeros(count + 1, np.int64)
    offsets[1:] = np.cumsum(np.bincount(keys, minlength=count))  # cumsum into another dtype is 10x slower
    if n == 0 or np.all(keys[1:] >= keys[:-1]):
        return np.arange(n, dtype=np.uint32), offsets
    parts = len(bounds) - 1
    if parts == 1 or parts > 1 << 16:
        return _sorted_positions(keys, 0, n), offsets
    split = None
    if edges is None or not _within(keys, edges, bounds):
        part = np.repeat(np.arange(parts, dtype=np.uint16), np.diff(bounds))[keys]
        if not np.all(part[1:] >= part[:-1]):
            split = np.argsort(part, kind="stable").astype(np.uint32)  # radix sort for 16-bit keys
            keys, part = keys[split], part[split]
        edges = np.searchsorted(part, np.arange(parts + 1), side="left")
    with ThreadPoolExecutor(_WORKERS) as pool:
        pieces = list(pool.map(lambda p: _sorted_positions(keys, int(edges[p]), int(edges[p + 1])), range(parts)))
    order = np.concatenate(pieces)
    return (order if split is None else split[order]), offsets


def _local_offsets(global_offsets, bounds):
    """Per-partition CSR offsets (``n_p + 1`` each, starting at 0) from global ones."""
    parts = len(bounds) - 1
    out = np.empty(int(bounds[-1]) + parts, np.uint32)
    for p in range(parts):  # one slice per partition, not per span
        a, b = int(bounds[p]), int(bounds[p + 1])
        out[a + p: b + p + 1] = global_offsets[a: b + 1] - global_offsets[a]
    return out


class _Host:
    """The scene's tables as numpy arrays, built with vectorised numpy only."""

    def __init__(self, trace, label, sink=None):
        """``sink`` (the scene) receives each table as soon as it is ready
        (``_upload``, ``_upload_csr``, ``_write_records``), so the GPU writes
        overlap the rest of the preparation; None keeps the arrays only."""
        who = f'GPUTraceScene "{label}"'
        spans = trace.spans
        n = spans.num_rows
        if n >= NO_PARENT:
            raise GraphValidationError(f"{who} cannot hold {n} spans (at most {NO_PARENT - 1})")
        partition = _column(spans, "partition").astype(np.uint32, copy=False)
        parts = max(1, len(trace.sources), int(partition.max()) + 1 if n else 0,
                    int(_column(trace.processes, "partition").max()) + 1 if trace.processes.num_rows else 0)
        if parts > MAX_PARTITIONS:
            raise GraphValidationError(f"{who} holds at most {MAX_PARTITIONS} partitions (got {parts})")
        self.perm = None
        if n and not np.all(partition[1:] >= partition[:-1]):
            self.perm = np.argsort(partition, kind="stable").astype(np.uint32)
        self.bounds = np.zeros(parts + 1, np.int64)
        self.bounds[1:] = np.cumsum(np.bincount(partition, minlength=parts))
        self.n = n
        rank = None
        if self.perm is not None:
            rank = np.empty(n, np.uint32)
            rank[self.perm] = np.arange(n, dtype=np.uint32)
        start = _column(spans, "start_ns")
        self.origin = int(start.min()) if n else 0
        parent = _column(spans, "parent")
        links = trace.links
        if links.num_rows >= 2**32:
            raise GraphValidationError(f"{who} cannot hold {links.num_rows} links (at most 2**32 - 1)")
        source, target = _column(links, "source").astype(np.uint32), _column(links, "target").astype(np.uint32)
        if rank is not None:
            source, target = rank[source], rank[target]
            parent = np.where(parent >= 0, rank[np.maximum(parent, 0)].astype(np.int64), -1)
            parent = parent[self.perm]
        self.parents = np.where(parent >= 0, parent, NO_PARENT).astype(np.uint32)
        self.child_rows = np.flatnonzero(parent >= 0).astype(np.uint32)  # rows that have a parent
        self.parent_keys = self.parents[self.child_rows]
        # Two pools: the record inputs (dense IDs, used flags) then the record transposes on one, the
        # four CSR sorts on the other, so the transposes never queue behind a long sort (the 03:23 H200
        # run: 3.16 s host, the critical path CSR sorts + transposes in one FIFO pool).
        with ThreadPoolExecutor(_WORKERS) as pool, ThreadPoolExecutor(_CSR_WORKERS) as sorts:
            self.task_s = {}  # seconds each host task took (they overlap): where the preparation goes
            timed = self._timed
            used = [pool.submit(timed(f"used-{k}", _used), keys, n) for k, keys in enumerate((self.parent_keys, source, target))]
            dense = [pool.submit(timed(f"ids-{name}", _dense_ids), table.column(name))
                     for table, name in ((spans, "name"), (spans, "category"), (links, "kind"))]
            lanes = pool.submit(_thread_lanes, spans, trace.threads.num_rows)
            csr = {name: sorts.submit(timed(f"csr-{name}", fn), *args) for name, fn, args in (
                ("hierarchy_reverse", self._children_csr, ()), ("links_forward", self._link_csr, (source, target)),
                ("links_reverse", self._link_csr, (target, source)), ("hierarchy_forward", self._parent_csr, ()))}
            if sink is not None:
                sink._upload("parents", self.parents)  # while the workers sort and encode
            columns = self._record_columns(spans, start)
            (columns["name"], self.names), (columns["category"], self.categories), (kinds, self.link_kinds) = (
                job.result() for job in dense)
            columns["children"], columns["out"], columns["in"] = (job.result() for job in used)
            self.records = np.empty((n, RECORD_WORDS), np.uint32)
            step = max(_BLOCK_ROWS, -(-n // (4 * _WORKERS)) // _BLOCK_ROWS * _BLOCK_ROWS)
            pending = {pool.submit(timed("records", _transpose), self.records, columns, self.origin, lo, min(n, lo + step)):
                       ("records", lo, min(n, lo + step)) for lo in range(0, n, step)}
            pending.update({job: ("csr", name) for name, job in csr.items()})
            self.csr = {}
            for job in as_completed(pending):  # each table goes to the GPU as soon as it is ready
                what, result = pending[job], job.result()
                if what[0] == "csr":
                    self.csr[what[1]] = result
                    if sink is not None:
                        sink._upload_csr(what[1], result)
                elif sink is not None:
                    sink._write_records(what[1], what[2], self.records)
            self.csr = {name: self.csr[name] for name in csr}
            self.thread_lanes = lanes.result()
        self.links = np.stack([source, target, kinds, np.arange(len(source), dtype=np.uint32)], axis=1)
        self.thread_process = _column(trace.threads, "process").astype(np.uint32)

    def _timed(self, name, fn):
        """``fn`` adding its seconds to ``task_s[name]`` (summed over calls)."""
        def run(*args):
            started = time.perf_counter()
            try:
                return fn(*args)
            finally:
                self.task_s[name] = self.task_s.get(name, 0.0) + time.perf_counter() - started
        return run

    def _csr(self, offsets, neighbors, edges):
        """(local offsets, neighbors, edges or None, neighbour row where each partition starts)."""
        return _local_offsets(offsets, self.bounds), neighbors, edges, offsets[self.bounds].astype(np.int64)

    def _link_csr(self, key, other):
        order, offsets = _group(key, self.n, self.bounds)
        return self._csr(offsets, other[order], order)

    def _children_csr(self):
        rows, keys = self.child_rows, self.parent_keys
        order, offsets = _group(keys, self.n, self.bounds, edges=np.searchsorted(rows, self.bounds))
        return self._csr(offsets, rows[order], None)

    def _parent_csr(self):
        offsets = np.zeros(self.n + 1, np.int64)
        offsets[1:] = self.parents != NO_PARENT
        np.cumsum(offsets[1:], out=offsets[1:])  # int64 in place: a bool cumsum is several times slower
        return self._csr(offsets, self.parent_keys, None)

    def _record_columns(self, spans, start):
        """The per-row inputs of the records, in row order (no copies when rows are IDs)."""
        perm = self.perm
        take = (lambda a: a) if perm is None else (lambda a: a[perm])
        columns = {name: take(_column(spans, name)) for name in
                   ("duration_ns", "lane", "thread", "process", "depth", "incomplete", "partition")}
        columns["start"] = take(start).view(np.uint64)
        columns["args"] = take(spans.column("args").is_valid().to_numpy())
        columns["parents"] = self.parents
        columns["ids"] = np.arange(self.n, dtype=np.uint32) if perm is None else perm
        if perm is not None:  # dense IDs are computed in ID order
            columns["take"] = perm
        return columns


def _used(keys, n):
    """Which of n rows appear in ``keys`` (a bool per row)."""
    return np.bincount(keys, minlength=n)[:n] > 0


def _thread_lanes(spans, thread_count):
    """Lanes per thread: the largest lane + 1 (0 for a thread without spans)."""
    lanes = np.zeros(thread_count, np.uint32)
    if spans.num_rows:
        np.maximum.at(lanes, _column(spans, "thread"), _column(spans, "lane").astype(np.uint32) + np.uint32(1))
    return lanes


def _transpose(words, columns, origin, lo, hi):
    """Rows lo..hi of the records, in blocks that stay in cache while all 12
    words (flags included) are computed and written."""
    c = columns
    words64 = words.view(np.uint64)
    origin = np.uint64(origin & 0xFFFFFFFFFFFFFFFF)
    take = c.get("take")
    u32 = np.uint32
    for a in range(lo, hi, _BLOCK_ROWS):
        b = min(hi, a + _BLOCK_ROWS)
        block, block64 = words[a:b], words64[a:b]
        duration = c["duration_ns"][a:b]
        block64[:, 0] = c["start"][a:b] - origin
        block64[:, 1] = duration.view(np.uint64)
        for word, name in ((4, "lane"), (5, "thread"), (6, "process"), (7, "depth")):
            block[:, word] = c[name][a:b]
        rows = slice(a, b) if take is None else take[a:b]
        block[:, 8] = c["name"][rows]
        block[:, 9] = c["category"][rows]
        flags = c["incomplete"][a:b].astype(u32)  # FLAG_INCOMPLETE is bit 0
        flags |= c["args"][a:b].astype(u32) << u32(1)
        flags |= (c["parents"][a:b] == NO_PARENT).astype(u32) << u32(2)
        flags |= c["children"][a:b].astype(u32) << u32(3)
        flags |= c["out"][a:b].astype(u32) << u32(4)
        flags |= c["in"][a:b].astype(u32) << u32(5)
        flags |= (duration == 0).astype(u32) << u32(6)
        flags |= c["partition"][a:b] << u32(PARTITION_SHIFT)
        block[:, 10] = flags
        block[:, 11] = c["ids"][a:b]


def _data(buffer, fmt, length, byte_offset, byte_stride=None):
    """A borrowed GPUData range; an empty one sits inside the buffer wherever it starts."""
    if length == 0:
        byte_offset = min(byte_offset, buffer.size // 4 * 4)
    return GPUData(buffer, format=fmt, length=int(length), byte_offset=int(byte_offset), byte_stride=byte_stride)


class GPUTraceScene:
    """A trace uploaded once into GPU tables: span records, parents, links and
    their CSR adjacencies, chunked by partition (see the module docstring for
    the record layout and the exact-time contract).

    Parameters
    ----------
    device : wgpu.GPUDevice
    trace : Trace
        Any :class:`~gpuviz.trace.model.Trace` (an importer's, ``Trace.from_arrow``'s
        or ``synthetic``'s).
    label : str
        Prefix of the buffer labels (``"trace-records"``...).
    max_chunk_bytes : int, optional
        Largest record buffer (default: the device's ``max-buffer-size``).
        Records past it are split into several buffers (chunks) of a
        multiple of :data:`RECORD_CHUNK_ALIGN` rows each; rows (span IDs)
        stay global. Only the records are split: the other tables are 12x
        smaller per span.

    Attributes
    ----------
    spans : GPUTable
        Columns ``"time"``, ``"place"``, ``"label"`` (``uint32x4``, strided
        views of the 48-byte records), one batch per partition (empty ones
        kept), or, in a chunked scene, one per (partition, chunk) overlap.
    record_chunks : tuple of (int, int, wgpu.GPUBuffer)
        ``(first row, rows, buffer)`` of each record buffer, in row order
        (one chunk unless the records exceed ``max_chunk_bytes``).
    record_buffer : wgpu.GPUBuffer
        The records, ``RECORD_BYTES`` per row, for shaders that bind
        ``array<TraceSpan>`` (``shaders/trace_span.wgsl``): the only chunk;
        GraphStateError in a scene of several chunks (use ``record_chunks``).
    parents : GPUVector
        uint32 parent row per row (:data:`NO_PARENT` for roots), a chunk per partition.
    links : GPUData
        ``uint32x4`` per link: source row, target row, kind ID, link ID.
    links_forward, links_reverse, hierarchy_forward, hierarchy_reverse : TraceAdjacency
        CSR: link source -> targets, target -> sources, child -> parent,
        parent -> children.
    thread_process, thread_lanes : GPUData
        uint32 per thread (``trace.threads`` order, not sorted by process):
        its process row; its lane count (largest lane + 1, 0 without spans).
    names, categories, link_kinds : pyarrow.StringArray
        The strings of the dense IDs (ID = index), on the CPU.
    time_origin_ns : int
        Absolute ns of relative time 0 (the earliest span start; 0 without spans).
    partition_offsets : tuple of int
        ``partition_count + 1`` row bounds: partition p holds rows
        ``partition_offsets[p]:partition_offsets[p + 1]``.
    span_ids : numpy.ndarray
        uint32 span ID of each row (``arange`` when rows are IDs).
    rows_are_ids : bool
    timings : dict
        Seconds spent preparing on the CPU (``"prepare"``: wall time, the
        writes of the tables ready early included: each table is queued as
        soon as it is built, ``"overlapped_write"`` of it) and queueing the
        remaining writes afterwards (``"write"``); ``"tasks"``: seconds of
        each host task (they run on several threads at once).

    Raises
    ------
    GraphTypeError
        ``device`` is not a ``wgpu.GPUDevice`` or ``trace`` is not a Trace.
    GraphValidationError
        More spans, links or partitions than the record format holds, or a
        table over the device's ``max-buffer-size``; nothing stays allocated.

    Notes
    -----
    Uploads once, with ``queue.write_buffer`` (queued, not waited for);
    never records commands, submits compute work or reads back. Keeps no
    strings and no ``args`` on the GPU, and does not upload counters or
    instants. Binding a whole table in one storage binding needs the
    device's ``max-storage-buffer-binding-size`` to cover it (gpuviz's
    ``request_device`` asks for the adapter's limits). All GPU tables are
    borrowed views of buffers the scene owns: only :meth:`destroy` frees them.
    """

    def __init__(self, device, trace, *, label="trace", max_chunk_bytes=None):
        check_device("GPUTraceScene", device)
        check_id("GPUTraceScene", label, kind="label")
        limit = int(device.limits["max-buffer-size"])
        if max_chunk_bytes is None:
            max_chunk_bytes = limit
        if isinstance(max_chunk_bytes, bool) or not isinstance(max_chunk_bytes, (int, np.integer)):
            raise GraphTypeError(f'GPUTraceScene "{label}" max_chunk_bytes must be an int '
                                 f"(got {type(max_chunk_bytes).__name__})")
        low = RECORD_BYTES * RECORD_CHUNK_ALIGN
        if not low <= max_chunk_bytes <= limit:
            raise GraphValidationError(f'GPUTraceScene "{label}" max_chunk_bytes must be in [{low}, {limit}] '
                                       f"(got {max_chunk_bytes})")
        self.chunk_rows = int(max_chunk_bytes) // RECORD_BYTES // RECORD_CHUNK_ALIGN * RECORD_CHUNK_ALIGN
        if not isinstance(trace, Trace):
            raise GraphTypeError(f'GPUTraceScene "{label}" needs a gpuviz.trace.Trace (got {type(trace).__name__})')
        self.device, self.label = device, label
        self._destroyed = False
        self._buffers = {}
        self._write_s = 0.0
        t0 = time.perf_counter()
        try:
            self._create_record_chunks(trace.spans.num_rows)
            host = _Host(trace, label, sink=self)
            t1 = time.perf_counter()
            self.names, self.categories, self.link_kinds = host.names, host.categories, host.link_kinds
            self.time_origin_ns = host.origin
            self.partition_offsets = tuple(int(b) for b in host.bounds)
            self.rows_are_ids = host.perm is None
            self.span_ids = np.arange(host.n, dtype=np.uint32) if host.perm is None else host.perm
            overlapped = self._write_s
            self._upload_tables(host)
            self._build_views(host)
        except BaseException:
            self.destroy()
            raise
        self.timings = {"prepare": t1 - t0, "write": time.perf_counter() - t1, "overlapped_write": overlapped,
                        "tasks": dict(host.task_s)}

    # -- upload ------------------------------------------------------------------
    def _create(self, name, nbytes):
        size = max(4, -(-int(nbytes) // 4) * 4)
        limit = self.device.limits["max-buffer-size"]
        if size > limit:
            raise GraphValidationError(
                f'GPUTraceScene "{self.label}" table "{name}" needs {size} bytes, over the device limit '
                f"max-buffer-size {limit}")
        buffer = self.device.create_buffer(label=f"{self.label}-{name}", size=size, usage=DEFAULT_USAGE)
        self._buffers[name] = buffer
        return buffer

    def _write(self, buffer, offset, raw):
        started = time.perf_counter()
        for k in range(0, raw.nbytes, _WRITE_PIECE):
            self.device.queue.write_buffer(buffer, offset + k, raw[k: k + _WRITE_PIECE])
        self._write_s += time.perf_counter() - started

    def _upload(self, name, array):
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buffer = self._create(name, raw.nbytes)
        self._write(buffer, 0, raw)
        return buffer

    def _create_record_chunks(self, n):
        """The record buffers (written block by block while the host builds them)."""
        step = self.chunk_rows
        if n <= step:
            self.record_chunks = ((0, n, self._create("records", RECORD_BYTES * n)),)
        else:  # several buffers: 100M spans
            self.record_chunks = tuple((lo, min(step, n - lo), self._create(f"records-{k}", RECORD_BYTES * min(step, n - lo)))
                                       for k, lo in enumerate(range(0, n, step)))

    def _write_records(self, lo, hi, records):
        """Rows lo..hi of the host records into the chunks holding them."""
        for first, rows, buffer in self.record_chunks:
            a, b = max(lo, first), min(hi, first + rows)
            if a < b:
                self._write(buffer, RECORD_BYTES * (a - first), records[a:b].reshape(-1).view(np.uint8))

    def _upload_csr(self, name, csr):
        offsets, neighbors, edges, _ = csr
        stem = name.replace("_", "-")
        self._upload(f"{stem}-offsets", offsets)
        self._upload(f"{stem}-neighbors", neighbors)
        if edges is not None:
            self._upload(f"{stem}-edges", edges)

    def _upload_tables(self, host):
        """The small tables the host finished last (records, parents and CSRs went as they were ready)."""
        self._upload("links", host.links)
        self._upload("thread-process", host.thread_process)
        self._upload("thread-lanes", host.thread_lanes)

    def _build_views(self, host):
        bounds, buffers = self.partition_offsets, self._buffers
        parts = range(len(bounds) - 1)
        sizes = [bounds[p + 1] - bounds[p] for p in parts]
        schema = GPUSchema({name: "uint32x4" for name in _SPAN_COLUMNS})
        self.spans = GPUTable(schema, batches=[
            GPURecordBatch(schema, columns={
                name: _data(buffer, "uint32x4", rows, RECORD_BYTES * first + off, RECORD_BYTES)
                for name, off in _SPAN_COLUMNS.items()})
            for buffer, first, rows in self._record_pieces()])
        self.parents = GPUVector([_data(buffers["parents"], "uint32", sizes[p], 4 * bounds[p]) for p in parts],
                                 format="uint32")
        self.links = _data(buffers["links"], "uint32x4", len(host.links), 0)

        def vector(table, starts, lengths):
            return GPUVector([_data(buffers[table], "uint32", lengths[p], 4 * starts[p]) for p in parts],
                             format="uint32")

        for name, (_, _, edges, nbounds) in host.csr.items():
            stem = name.replace("_", "-")
            counts = np.diff(nbounds)
            adjacency = TraceAdjacency(
                offsets=vector(f"{stem}-offsets", [bounds[p] + p for p in parts], [s + 1 for s in sizes]),
                neighbors=vector(f"{stem}-neighbors", nbounds, counts),
                edges=None if edges is None else vector(f"{stem}-edges", nbounds, counts))
            setattr(self, name, adjacency)
        self.thread_process = _data(buffers["thread-process"], "uint32", len(host.thread_process), 0)
        self.thread_lanes = _data(buffers["thread-lanes"], "uint32", len(host.thread_lanes), 0)

    def _record_pieces(self):
        """``(buffer, first row in it, rows)`` of each partition's overlap with
        each record chunk, in row order; an empty partition keeps one empty
        piece (in the chunk holding its position)."""
        bounds, chunks, out = self.partition_offsets, self.record_chunks, []
        for p in range(len(bounds) - 1):
            a, b = bounds[p], bounds[p + 1]
            if a == b:
                first, _, buffer = next((c for c in reversed(chunks) if c[0] <= a), chunks[0])
                out.append((buffer, a - first, 0))
                continue
            for first, rows, buffer in chunks:
                lo, hi = max(a, first), min(b, first + rows)
                if lo < hi:
                    out.append((buffer, lo - first, hi - lo))
        return out

    @property
    def record_buffer(self):
        """The record buffer of a one-chunk scene (see the class docstring)."""
        if len(self.record_chunks) != 1:
            raise GraphStateError(f'GPUTraceScene "{self.label}" holds its records in {len(self.record_chunks)} '
                                  "chunks; bind scene.record_chunks (one buffer each)")
        return self.record_chunks[0][2]

    # -- facts -------------------------------------------------------------------
    @property
    def span_count(self) -> int:
        """Spans (records) in the scene."""
        return self.partition_offsets[-1]

    @property
    def link_count(self) -> int:
        """Links in the scene."""
        return self.links.length

    @property
    def partition_count(self) -> int:
        """Partitions (chunks of every per-span table), empty ones included."""
        return len(self.partition_offsets) - 1

    @property
    def stats(self) -> dict:
        """Bytes of each GPU table (buffer sizes, by table name) and ``"total"``."""
        out = {name: int(buffer.size) for name, buffer in self._buffers.items()}
        out["total"] = sum(out.values())
        return out

    def time_words(self, ns) -> tuple:
        """``(lo, hi)`` uint32 words of an absolute time ``ns`` (int) relative to
        :attr:`time_origin_ns`: what a shader's view origin holds. Exact (Python
        ints, never floats); a time before the origin wraps as two's complement,
        which ``trace_time_sub`` reads back as a negative difference. Does not
        touch the GPU."""
        if isinstance(ns, (bool, np.bool_)) or not isinstance(ns, (int, np.integer)):
            raise GraphTypeError(f'GPUTraceScene "{self.label}" time_words needs integer ns (got {type(ns).__name__})')
        rel = (int(ns) - self.time_origin_ns) % (1 << 64)
        return rel & 0xFFFFFFFF, rel >> 32

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy`."""
        return self._destroyed

    # -- graph -------------------------------------------------------------------
    def import_to_graph(self, graph, *, id="trace") -> dict:
        """Import every table into ``graph`` as borrowed views.

        Returns a dict of views: ``"records"`` (GraphVectorView of
        ``uint32x4`` rows 48 bytes long, a chunk per partition, or per
        partition and record chunk), ``"records-chunks"`` (a tuple: one
        GraphDataView over each record chunk's rows) and, in a one-chunk
        scene only, ``"records-packed"`` (that view over all rows), ``"parents"``,
        ``"<adjacency>-offsets"``, ``"<adjacency>-neighbors"`` and
        ``"<adjacency>-edges"`` (GraphVectorViews; adjacency names as the
        attributes, dashed: ``"links-forward"``, ``"hierarchy-reverse"``),
        ``"links"``, ``"thread-process"`` and ``"thread-lanes"``
        (GraphDataViews). Graph IDs are ``f"{id}-{key}"``.

        The graph never destroys imports: the buffers stay the scene's, valid
        until :meth:`destroy` (destroy the scene only after the compiled
        graph is done with them). Raises GraphStateError after destroy.
        """
        if self._destroyed:
            raise GraphStateError(f'GPUTraceScene "{self.label}" was destroyed; it cannot be imported')
        if not isinstance(graph, GPUCommandGraph):
            raise GraphTypeError(f'GPUTraceScene "{self.label}" import_to_graph needs a GPUCommandGraph '
                                 f"(got {type(graph).__name__})")
        check_id("GPUTraceScene.import_to_graph", id)
        single = len(self.record_chunks) == 1
        handles = {}
        for k, (_, _, buffer) in enumerate(self.record_chunks):
            key = f"{id}-records" if single else f"{id}-records-{k}"
            handles[buffer] = graph.import_buffer(id=key, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)

        def record_view(buffer, first, count):
            offset = RECORD_BYTES * first if count else 0
            return graph.create_data_view(handles[buffer], format="uint32x4", length=count, byte_offset=offset,
                                          byte_stride=RECORD_BYTES, row_byte_length=RECORD_BYTES)

        views = {
            "records": GraphVectorView(f"{id}-records", tuple(
                record_view(buffer, first, rows) for buffer, first, rows in self._record_pieces()),
                self.spans.schema["time"]),
            "records-chunks": tuple(record_view(buffer, 0, rows) for _, rows, buffer in self.record_chunks),
            "parents": graph.import_gpu_vector(f"{id}-parents", self.parents),
        }
        if single:
            views["records-packed"] = views["records-chunks"][0]
        for name in ("links_forward", "links_reverse", "hierarchy_forward", "hierarchy_reverse"):
            adjacency, stem = getattr(self, name), name.replace("_", "-")
            for part in ("offsets", "neighbors", "edges"):
                vector = getattr(adjacency, part)
                if vector is not None:
                    views[f"{stem}-{part}"] = graph.import_gpu_vector(f"{id}-{stem}-{part}", vector)
        for name in ("links", "thread-process", "thread-lanes"):
            views[name] = graph.import_gpu_data(f"{id}-{name}", getattr(self, name.replace("-", "_")))
        return views

    def destroy(self) -> None:
        """Free every buffer of the scene; idempotent. Does not wait for queued
        work that uses them, and leaves graphs that imported them to the caller."""
        if self._destroyed:
            return
        self._destroyed = True
        for buffer in self._buffers.values():
            buffer.destroy()

    def __repr__(self) -> str:
        state = "destroyed" if self._destroyed else f"{self.stats['total']} bytes"
        return (f'GPUTraceScene("{self.label}", spans={self.span_count}, links={self.link_count}, '
                f"partitions={self.partition_count}, {state})")
