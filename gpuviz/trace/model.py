"""The CPU trace model: Arrow schemas, :class:`Trace`, and :func:`assemble`.

Every importer (Chrome, Kineto, OTLP, synthetic, Parquet) ends in
:func:`assemble`: it takes the raw span columns plus the thread and process
tables, derives ``lane``/``depth`` (and ``parent`` where not given) by the
packing of :mod:`gpuviz.trace.lanes`, and returns a validated :class:`Trace`.
Span IDs are rows: span ``i`` is row ``i`` of the columns given, in the order
given, and links refer to those rows.
"""

import json
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from gpuviz.trace.errors import TraceSchemaError
from gpuviz.trace.lanes import pack_lanes

__all__ = [
    "SPANS_SCHEMA", "LINKS_SCHEMA", "THREADS_SCHEMA", "PROCESSES_SCHEMA",
    "COUNTERS_SCHEMA", "INSTANTS_SCHEMA", "Trace", "assemble",
]

SPANS_SCHEMA = pa.schema([
    pa.field("id", pa.uint32(), nullable=False),
    pa.field("name", pa.string(), nullable=False),
    pa.field("category", pa.string(), nullable=False),
    pa.field("start_ns", pa.int64(), nullable=False),
    pa.field("duration_ns", pa.int64(), nullable=False),
    pa.field("process", pa.uint32(), nullable=False),
    pa.field("thread", pa.uint32(), nullable=False),
    pa.field("lane", pa.uint32(), nullable=False),
    pa.field("depth", pa.uint32(), nullable=False),
    pa.field("parent", pa.int64(), nullable=False),
    pa.field("partition", pa.uint32(), nullable=False),
    pa.field("incomplete", pa.bool_(), nullable=False),
    pa.field("args", pa.string(), nullable=True),
])
LINKS_SCHEMA = pa.schema([
    pa.field("source", pa.uint32(), nullable=False),
    pa.field("target", pa.uint32(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
])
THREADS_SCHEMA = pa.schema([
    pa.field("id", pa.uint32(), nullable=False),
    pa.field("process", pa.uint32(), nullable=False),
    pa.field("tid", pa.string(), nullable=False),
    pa.field("name", pa.string(), nullable=False),
    pa.field("sort_index", pa.int64(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
])
PROCESSES_SCHEMA = pa.schema([
    pa.field("id", pa.uint32(), nullable=False),
    pa.field("pid", pa.string(), nullable=False),
    pa.field("name", pa.string(), nullable=False),
    pa.field("labels", pa.string(), nullable=False),
    pa.field("partition", pa.uint32(), nullable=False),
])
COUNTERS_SCHEMA = pa.schema([
    pa.field("process", pa.uint32(), nullable=False),
    pa.field("name", pa.string(), nullable=False),
    pa.field("series", pa.string(), nullable=False),
    pa.field("ts_ns", pa.int64(), nullable=False),
    pa.field("value", pa.float64(), nullable=False),
])
INSTANTS_SCHEMA = pa.schema([
    pa.field("name", pa.string(), nullable=False),
    pa.field("category", pa.string(), nullable=False),
    pa.field("ts_ns", pa.int64(), nullable=False),
    pa.field("process", pa.uint32(), nullable=True),   # null: global instant without pid
    pa.field("thread", pa.uint32(), nullable=True),    # null: process or global scope
    pa.field("scope", pa.string(), nullable=False),    # "g", "p" or "t"
])

_SCHEMAS = {
    "spans": SPANS_SCHEMA, "links": LINKS_SCHEMA, "threads": THREADS_SCHEMA,
    "processes": PROCESSES_SCHEMA, "counters": COUNTERS_SCHEMA, "instants": INSTANTS_SCHEMA,
}


def _check_table(name, table):
    schema = _SCHEMAS[name]
    if not isinstance(table, pa.Table):
        raise TraceSchemaError(name, f"expected a pyarrow.Table, got {type(table).__name__}")
    if table.schema.names != schema.names:
        raise TraceSchemaError(name, f"columns {table.schema.names} differ from {schema.names}")
    for field in schema:
        got = table.schema.field(field.name).type
        if got != field.type:
            raise TraceSchemaError(name, f'column "{field.name}" has type {got}, expected {field.type}')
        if not field.nullable and table.column(field.name).null_count:
            raise TraceSchemaError(name, f'column "{field.name}" holds {table.column(field.name).null_count} nulls')


def _np(table, column):
    return table.column(column).to_numpy()


def _check_rows(name, values, count, what):
    if len(values) and int(values.max()) >= count:
        raise TraceSchemaError(name, f"{what} {int(values.max())} does not exist ({count} rows)")


class Trace:
    """An imported trace: Arrow tables for spans, links, threads, processes,
    counters and instants, plus a ``report`` of everything repaired, skipped
    or guessed.

    Parameters
    ----------
    spans, links, threads, processes, counters, instants : pyarrow.Table
        Tables with exactly the schemas :data:`SPANS_SCHEMA`,
        :data:`LINKS_SCHEMA`, ... (same column order and types).
    report : Mapping[str, int], optional
        Reason -> count (``"unclosed_begin"``, ``"lanes_added"``, ...).
    sources : sequence of str, optional
        The source of each partition (file name), index = partition.
    metadata : dict, optional
        Format facts that are not tables (``format``, Kineto's
        ``base_time_ns``, ``distributed_info``, ``device_properties``; per
        rank lists after a merge). JSON-serialisable.

    The constructor validates the schemas and the cross references (span IDs
    are rows, thread/process rows exist, links point at spans, durations are
    not negative) and raises :class:`~gpuviz.trace.errors.TraceSchemaError`.
    It does not repack lanes or repair anything: use :meth:`from_arrow` for
    tables from other tools. Tables are never copied.
    """

    def __init__(self, *, spans, links, threads, processes, counters, instants, report=None, sources=(),
                 metadata=None):
        for name, table in (("spans", spans), ("links", links), ("threads", threads),
                            ("processes", processes), ("counters", counters), ("instants", instants)):
            _check_table(name, table)
        self.spans, self.links, self.threads = spans, links, threads
        self.processes, self.counters, self.instants = processes, counters, instants
        self.report = {str(k): int(v) for k, v in (report or {}).items()}
        self.sources = tuple(str(s) for s in sources)
        self.metadata = dict(metadata or {})
        self._check_references()

    def _check_references(self):
        n, nt, npr = self.spans.num_rows, self.threads.num_rows, self.processes.num_rows
        if not np.array_equal(_np(self.spans, "id"), np.arange(n, dtype=np.uint32)):
            raise TraceSchemaError("spans", "column \"id\" must equal the row number")
        if not np.array_equal(_np(self.threads, "id"), np.arange(nt, dtype=np.uint32)):
            raise TraceSchemaError("threads", "column \"id\" must equal the row number")
        if not np.array_equal(_np(self.processes, "id"), np.arange(npr, dtype=np.uint32)):
            raise TraceSchemaError("processes", "column \"id\" must equal the row number")
        dur = _np(self.spans, "duration_ns")
        if n and dur.min() < 0:
            raise TraceSchemaError("spans", f"duration_ns {int(dur.min())} is negative")
        thread = _np(self.spans, "thread")
        _check_rows("spans", thread, nt, "thread")
        _check_rows("spans", _np(self.spans, "process"), npr, "process")
        if n and not np.array_equal(_np(self.threads, "process")[thread], _np(self.spans, "process")):
            raise TraceSchemaError("spans", "a span's process differs from its thread's process")
        parent = _np(self.spans, "parent")
        if n and (parent.min() < -1 or parent.max() >= n):
            raise TraceSchemaError("spans", f"parent out of range [-1, {n})")
        _check_rows("threads", _np(self.threads, "process"), npr, "process")
        _check_rows("links", _np(self.links, "source"), n, "source span")
        _check_rows("links", _np(self.links, "target"), n, "target span")
        _check_rows("counters", _np(self.counters, "process"), npr, "process")
        for col, count in (("process", npr), ("thread", nt)):
            values = self.instants.column(col).drop_null().to_numpy()
            _check_rows("instants", values, count, col)

    @property
    def span_count(self):
        """Number of spans (rows of ``spans``); does not count instants."""
        return self.spans.num_rows

    def __repr__(self):
        return (f"Trace(spans={self.spans.num_rows}, links={self.links.num_rows}, "
                f"threads={self.threads.num_rows}, processes={self.processes.num_rows}, "
                f"counters={self.counters.num_rows}, instants={self.instants.num_rows}, "
                f"report={self.report})")

    @classmethod
    def from_arrow(cls, *, spans, links=None, threads=None, processes=None):
        """Build a trace from Arrow data of any source (Parquet, DuckDB, polars).

        Only ``name``, ``start_ns`` and ``duration_ns`` are required in
        ``spans``; ``process``/``thread`` default to 0 (their rows are
        generated when no table is given), ``category`` to ``""``, ``args``
        to null, ``partition`` to the thread's process partition (0 without
        a processes table), ``incomplete`` to false; ``id`` is always the
        row, and ``lane``/``depth`` are always derived by the same packing as
        the importers (``parent`` is kept when given). Links need only
        ``source`` and ``target`` (``kind`` defaults to ``"link"``).
        Anything with ``__arrow_c_stream__`` or a pandas DataFrame works.

        Raises :class:`~gpuviz.trace.errors.TraceSchemaError` naming the
        table and column. It does not guess units: times must be ns.
        """
        from gpuviz.trace.arrow_input import from_arrow_tables
        return from_arrow_tables(spans=spans, links=links, threads=threads, processes=processes)

    def to_parquet(self, folder):
        """Write every table as ``<folder>/<table>.parquet`` plus
        ``report.json``; :func:`gpuviz.trace.load` reads the folder back.
        Does not overwrite other files in the folder."""
        import os

        import pyarrow.parquet as pq
        os.makedirs(folder, exist_ok=True)
        for name in _SCHEMAS:
            pq.write_table(getattr(self, name), os.path.join(folder, f"{name}.parquet"))
        with open(os.path.join(folder, "report.json"), "w") as f:
            json.dump({"format": "gpuviz-trace", "version": 1, "report": self.report,
                       "sources": list(self.sources), "metadata": self.metadata}, f, default=str)


def empty_table(name):
    """An empty table of the named model schema (``"spans"``, ``"links"``...)."""
    return _SCHEMAS[name].empty_table()


def table(name, columns):
    """A table of the named schema from a dict of columns (arrays or lists)."""
    schema = _SCHEMAS[name]
    return pa.Table.from_arrays([pa.array(columns[f.name], type=f.type) if not isinstance(columns[f.name], (pa.Array, pa.ChunkedArray))
                                 else columns[f.name].cast(f.type) for f in schema], schema=schema)


def _string_column(values, n, default):
    if values is None:
        return pa.array([default] * n, type=pa.string()) if default is not None else pa.nulls(n, pa.string())
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values.cast(pa.string())
    return pa.array(values, type=pa.string())


def assemble(*, name, start_ns, duration_ns, thread, threads, processes,
             category=None, parent=None, args=None, incomplete=None, partition=None,
             links=None, counters=None, instants=None, report=None, sources=(),
             lanes=None, metadata=None):
    """Build a :class:`Trace` from raw span columns; what every importer calls.

    Parameters
    ----------
    name, category, args : sequence of str or pyarrow string array
        One entry per span. ``category`` defaults to ``""``; ``args`` (JSON
        text) to null; ``None`` entries in ``args`` are nulls.
    start_ns, duration_ns : array of int64
        Exact ns times; durations must be ``>= 0``.
    thread : array of int
        Row in ``threads`` of each span. The process of a span is its
        thread's ``process``.
    threads, processes : pyarrow.Table
        Exactly :data:`THREADS_SCHEMA` / :data:`PROCESSES_SCHEMA`.
    parent : array of int64, optional
        Given parents (span row or -1, e.g. OTLP's ``parentSpanId``): kept as
        is. Without it, the parent is the enclosing span found by packing.
    incomplete : array of bool, optional (default false).
    partition : array of uint32, optional
        Default: the partition of the span's process.
    links, counters, instants : pyarrow.Table, optional
        Exact model schemas (empty when not given); link endpoints are span
        rows of the columns given here.
    report : dict, optional
        Reason -> count; ``lanes_added`` is added to it.
    lanes : tuple (lane, depth), optional
        Precomputed lanes and depths (the synthetic generator knows them):
        skips packing; the caller guarantees no two spans of a lane of one
        thread overlap. Requires ``parent``.

    Does not sort or drop spans: row ``i`` of the result is span ``i`` of
    the input. Raises :class:`~gpuviz.trace.errors.TraceSchemaError` for
    inconsistent input.
    """
    start = np.ascontiguousarray(start_ns, dtype=np.int64)
    dur = np.ascontiguousarray(duration_ns, dtype=np.int64)
    thr = np.ascontiguousarray(thread, dtype=np.uint32)
    n = len(start)
    if len(dur) != n or len(thr) != n:
        raise TraceSchemaError("spans", f"column lengths differ (start {n}, duration {len(dur)}, thread {len(thr)})")
    if n and dur.min() < 0:
        raise TraceSchemaError("spans", f"duration_ns {int(dur.min())} is negative")
    _check_table("threads", threads)
    _check_table("processes", processes)
    _check_rows("spans", thr, threads.num_rows, "thread")
    proc = _np(threads, "process")[thr].astype(np.uint32) if n else np.zeros(0, np.uint32)
    report = dict(report or {})
    if lanes is not None:
        if parent is None:
            raise TraceSchemaError("spans", "precomputed lanes need the parent column too")
        lane = np.ascontiguousarray(lanes[0], dtype=np.uint32)
        depth = np.ascontiguousarray(lanes[1], dtype=np.uint32)
        par = np.ascontiguousarray(parent, dtype=np.int64)
    else:
        lane, depth, packed_parent, added = pack_lanes(start=start, duration=dur, thread=thr)
        report["lanes_added"] = report.get("lanes_added", 0) + int(added)
        par = packed_parent if parent is None else np.ascontiguousarray(parent, dtype=np.int64)
    if partition is None:
        part = _np(processes, "partition")[proc] if n else np.zeros(0, np.uint32)
    else:
        part = np.ascontiguousarray(partition, dtype=np.uint32)
    inc = np.zeros(n, dtype=bool) if incomplete is None else np.ascontiguousarray(incomplete, dtype=bool)
    spans = pa.Table.from_arrays([
        pa.array(np.arange(n, dtype=np.uint32)),
        _string_column(name, n, ""),
        _string_column(category, n, ""),
        pa.array(start), pa.array(dur), pa.array(proc), pa.array(thr),
        pa.array(lane), pa.array(depth), pa.array(par), pa.array(part.astype(np.uint32)),
        pa.array(inc), _string_column(args, n, None),
    ], schema=SPANS_SCHEMA)
    return Trace(spans=spans,
                 links=links if links is not None else empty_table("links"),
                 threads=threads, processes=processes,
                 counters=counters if counters is not None else empty_table("counters"),
                 instants=instants if instants is not None else empty_table("instants"),
                 report={k: v for k, v in report.items() if v}, sources=sources, metadata=metadata)


def merge_reports(*reports):
    """Sum reason -> count mappings (helper for importers and merges)."""
    out = {}
    for rep in reports:
        if isinstance(rep, Mapping):
            for k, v in rep.items():
                out[k] = out.get(k, 0) + int(v)
    return out
