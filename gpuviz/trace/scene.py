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

import time
from dataclasses import dataclass

import numpy as np

from ..graph import GPUCommandGraph
from ..graph.checks import check_count, check_device, check_id
from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from ..graph.resources import GraphVectorView
from ..tables import GPUData, GPURecordBatch, GPUSchema, GPUTable, GPUVector
from ..tables.data import DEFAULT_USAGE
from .model import Trace
from .index import TraceIndex
from .scene_tables import MAX_PARTITIONS, NO_PARENT, PARTITION_SHIFT, RECORD_WORDS, SceneTables

__all__ = ["GPUTraceScene", "TraceAdjacency", "RECORD_WORDS", "RECORD_BYTES", "RECORD_CHUNK_ALIGN", "NO_PARENT",
           "PARTITION_SHIFT",
           "MAX_PARTITIONS", "FLAG_INCOMPLETE", "FLAG_HAS_ARGS", "FLAG_ROOT", "FLAG_HAS_CHILDREN",
           "FLAG_LINKS_OUT", "FLAG_LINKS_IN", "FLAG_ZERO_DURATION"]

#: Rows of every record chunk but the last are a multiple of this (so chunk
#: starts keep 256-byte alignment for records and per-row u32 tables).
RECORD_CHUNK_ALIGN = 2048
#: Bytes of one span record (three ``vec4<u32>``).
RECORD_BYTES = 4 * RECORD_WORDS

FLAG_INCOMPLETE = 1 << 0      #: the source never closed the span
FLAG_HAS_ARGS = 1 << 1        #: ``args`` is not null (strings stay on the CPU)
FLAG_ROOT = 1 << 2            #: no parent
FLAG_HAS_CHILDREN = 1 << 3    #: some span names it as parent
FLAG_LINKS_OUT = 1 << 4       #: source of at least one link
FLAG_LINKS_IN = 1 << 5        #: target of at least one link
FLAG_ZERO_DURATION = 1 << 6   #: duration is 0

_SPAN_COLUMNS = {"time": 0, "place": 16, "label": 32}  # byte offset of each uint32x4 column in a record
_WRITE_PIECE = 16 << 20  # bytes per queue.write_buffer call: bounds wgpu's staging copies
#: Bytes queued between empty submits: the GPU copies while the host still prepares (and wgpu can
#: recycle finished staging memory), which shortens a large upload.
_SUBMIT_BYTES = 256 << 20


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
    counter_tracks : bool
        Append one thread per counter track of ``trace.counters`` (each one
        lane, no spans) before building, so a view lays the tracks out as
        rows (:func:`~gpuviz.trace.counter_tracks.with_counter_tracks`).
        Default False: the threads as given.

    Attributes
    ----------
    index : TraceIndex
        The trace's one CPU index (:mod:`gpuviz.trace.index`): the name and
        category codes of the records, thread display order, lanes and
        counter tracks; ``index.trace`` is the trace the scene holds
        (counter-track threads included).
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
        its process row; its lane count (largest lane + 1, 0 without spans,
        1 for a counter track's thread); the same as ``index.thread_lanes``.
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
        each host task (they run on several threads at once); ``"windows"``:
        ``(first start, last end)`` of each task and main-thread step
        (``"main-*"``), seconds since the host preparation started.

    Raises
    ------
    GraphTypeError
        ``device`` is not a ``wgpu.GPUDevice`` or ``trace`` is not a Trace.
    GraphValidationError
        More spans, links or partitions than the record format holds, or a
        table over the device's ``max-buffer-size``; nothing stays allocated.

    Notes
    -----
    Uploads once, with ``queue.write_buffer`` (queued, not waited for; an
    empty submit every ``_SUBMIT_BYTES`` starts the copies early); never
    records commands, submits compute work or reads back. Keeps no
    strings and no ``args`` on the GPU, and does not upload counters or
    instants. Binding a whole table in one storage binding needs the
    device's ``max-storage-buffer-binding-size`` to cover it (gpuviz's
    ``request_device`` asks for the adapter's limits). All GPU tables are
    borrowed views of buffers the scene owns: only :meth:`destroy` frees them.
    """

    def __init__(self, device, trace, *, label="trace", max_chunk_bytes=None, counter_tracks=False):
        check_device("GPUTraceScene", device)
        check_id("GPUTraceScene", label, kind="label")
        limit = int(device.limits["max-buffer-size"])
        if max_chunk_bytes is None:
            max_chunk_bytes = limit
        check_count(f'GPUTraceScene "{label}"', "max_chunk_bytes", max_chunk_bytes)
        low = RECORD_BYTES * RECORD_CHUNK_ALIGN
        if not low <= max_chunk_bytes <= limit:
            raise GraphValidationError(f'GPUTraceScene "{label}" max_chunk_bytes must be in [{low}, {limit}] '
                                       f"(got {max_chunk_bytes})")
        self.chunk_rows = int(max_chunk_bytes) // RECORD_BYTES // RECORD_CHUNK_ALIGN * RECORD_CHUNK_ALIGN
        if not isinstance(trace, Trace):
            raise GraphTypeError(f'GPUTraceScene "{label}" needs a gpuviz.trace.Trace (got {type(trace).__name__})')
        if not isinstance(counter_tracks, bool):
            raise GraphTypeError(f'GPUTraceScene "{label}" counter_tracks must be a bool '
                                 f"(got {type(counter_tracks).__name__})")
        tracks = ()
        if counter_tracks:
            from .counter_tracks import with_counter_tracks
            trace, tracks = with_counter_tracks(trace)
        self.device, self.label = device, label
        self._destroyed = False
        self._buffers = {}
        self._write_s = 0.0
        self._queued = 0  # bytes written since the last submit
        t0 = time.perf_counter()
        try:
            self._create_record_chunks(trace.spans.num_rows)
            host = SceneTables(trace, label, sink=(self._upload, self._upload_csr, self._write_records))
            t1 = time.perf_counter()
            host.thread_lanes[[track.thread for track in tracks]] = 1  # a counter track is one row
            self.index = TraceIndex(trace, names=host.names.to_pylist(), name_id=host.name_ids,
                                    categories=host.categories.to_pylist(), category_id=host.category_ids,
                                    thread_lanes=host.thread_lanes, counter_tracks=tracks)
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
                        "tasks": dict(host.task_s), "windows": dict(host.windows)}

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
            piece = raw[k: k + _WRITE_PIECE]
            self.device.queue.write_buffer(buffer, offset + k, piece)
            self._queued += piece.nbytes
            if _SUBMIT_BYTES and self._queued >= _SUBMIT_BYTES:
                self.device.queue.submit([])  # flushes the queued copies
                self._queued = 0
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

    def _write_records(self, lo, hi, block):
        """The host records of rows lo..hi (``block``) into the chunks holding them."""
        for first, rows, buffer in self.record_chunks:
            a, b = max(lo, first), min(hi, first + rows)
            if a < b:
                self._write(buffer, RECORD_BYTES * (a - first), block[a - lo:b - lo].reshape(-1).view(np.uint8))

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
