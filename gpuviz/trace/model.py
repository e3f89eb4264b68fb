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
import pyarrow.compute as pc

from .errors import TraceSchemaError
from .lanes import pack_lanes

__all__ = [
    "SPANS_SCHEMA", "LINKS_SCHEMA", "THREADS_SCHEMA", "PROCESSES_SCHEMA",
    "COUNTERS_SCHEMA", "INSTANTS_SCHEMA", "Trace", "assemble", "as_table",
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
    # Same names, types and no forbidden nulls: give it exactly the model's
    # schema (field nullability, no metadata) so tables of any source concatenate.
    return table if table.schema.equals(schema) else table.cast(schema)


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
        spans, links, threads, processes, counters, instants = (
            _check_table(name, table) for name, table in (
                ("spans", spans), ("links", links), ("threads", threads), ("processes", processes),
                ("counters", counters), ("instants", instants)))
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
        return _from_arrow_tables(spans=spans, links=links, threads=threads, processes=processes)

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
    threads = _check_table("threads", threads)
    processes = _check_table("processes", processes)
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


# --- Trace.from_arrow: any Arrow source, validated --------------------------------

def as_table(name, obj):
    """Any Arrow-like object -> pyarrow.Table (``None`` stays ``None``)."""
    if obj is None or isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if hasattr(obj, "__arrow_c_stream__"):
        return pa.table(obj)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if pd is not None and isinstance(obj, pd.DataFrame):
        return pa.Table.from_pandas(obj, preserve_index=False)
    if isinstance(obj, dict):
        return pa.table(obj)
    raise TraceSchemaError(name, f"expected an Arrow table (or pandas/polars/DuckDB), got {type(obj).__name__}")


def _column(name, tbl, col, kind, *, required=False):
    if col not in tbl.column_names:
        if required:
            raise TraceSchemaError(name, f'missing required column "{col}" (has {tbl.column_names})')
        return None
    arr = tbl.column(col)
    if arr.null_count and col not in ("args",):
        raise TraceSchemaError(name, f'column "{col}" holds {arr.null_count} nulls')
    t = arr.type
    if kind == "int" and not pa.types.is_integer(t):
        raise TraceSchemaError(name, f'column "{col}" must be integer, got {t}')
    if kind == "str" and not (pa.types.is_string(t) or pa.types.is_large_string(t)
                              or pa.types.is_string_view(t) or pa.types.is_dictionary(t)):
        raise TraceSchemaError(name, f'column "{col}" must be string, got {t}')
    if kind == "bool" and not pa.types.is_boolean(t):
        raise TraceSchemaError(name, f'column "{col}" must be boolean, got {t}')
    if kind == "str" and pa.types.is_dictionary(t):
        arr = arr.cast(pa.string())
    return arr


def _ints(name, arr, col, lo, hi, dtype):
    values = arr.to_numpy() if not isinstance(arr, np.ndarray) else arr
    values = np.asarray(values)
    if len(values) and (values.min() < lo or values.max() > hi):
        raise TraceSchemaError(name, f'column "{col}" holds values outside [{lo}, {hi}] '
                                     f'(min {values.min()}, max {values.max()})')
    return values.astype(dtype)


def _from_arrow_tables(*, spans, links=None, threads=None, processes=None):
    """See :meth:`Trace.from_arrow`."""
    spans = as_table("spans", spans)
    n = spans.num_rows
    name = _column("spans", spans, "name", "str", required=True)
    start = _ints("spans", _column("spans", spans, "start_ns", "int", required=True), "start_ns",
                  -(1 << 63), (1 << 63) - 1, np.int64)
    dur = _ints("spans", _column("spans", spans, "duration_ns", "int", required=True), "duration_ns",
                0, (1 << 63) - 1, np.int64)
    if n and np.any(start > np.iinfo(np.int64).max - dur):
        raise TraceSchemaError("spans", "start_ns + duration_ns overflows int64")
    processes = _processes(as_table("processes", processes), spans)
    threads = _threads(as_table("threads", threads), spans, processes.num_rows)
    thread_col = _column("spans", spans, "thread", "int")
    thread = (np.zeros(n, np.uint32) if thread_col is None
              else _ints("spans", thread_col, "thread", 0, max(threads.num_rows - 1, 0), np.uint32))
    process_col = _column("spans", spans, "process", "int")
    if process_col is not None and n:
        given = _ints("spans", process_col, "process", 0, (1 << 32) - 1, np.uint32)
        if not np.array_equal(given, threads.column("process").to_numpy()[thread]):
            raise TraceSchemaError("spans", 'column "process" differs from the process of the span\'s thread')
    parent_col = _column("spans", spans, "parent", "int")
    parent = None if parent_col is None else _ints("spans", parent_col, "parent", -1, n - 1, np.int64)
    inc = _column("spans", spans, "incomplete", "bool")
    part = _column("spans", spans, "partition", "int")
    args = _column("spans", spans, "args", "str")
    return assemble(name=name, start_ns=start, duration_ns=dur, thread=thread, threads=threads,
                    processes=processes, category=_column("spans", spans, "category", "str"),
                    parent=parent, args=args,
                    incomplete=None if inc is None else inc.to_numpy(zero_copy_only=False),
                    partition=None if part is None else _ints("spans", part, "partition", 0, (1 << 32) - 1, np.uint32),
                    links=_links(as_table("links", links), n), metadata={"format": "arrow"})


def _processes(tbl, spans):
    if tbl is None:
        count = 1
        if "process" in spans.column_names and spans.num_rows:
            count = int(pc.max(spans.column("process")).as_py()) + 1
        return table("processes", {"id": np.arange(count, dtype=np.uint32), "pid": [str(i) for i in range(count)],
                                   "name": [""] * count, "labels": [""] * count,
                                   "partition": np.zeros(count, np.uint32)})
    return _fill("processes", tbl, PROCESSES_SCHEMA, {"pid": lambda k: [str(i) for i in range(k)],
                                                       "partition": lambda k: np.zeros(k, np.uint32)})


def _threads(tbl, spans, nproc):
    if tbl is None:
        n = spans.num_rows
        if "thread" in spans.column_names and n:
            count = int(pc.max(spans.column("thread")).as_py()) + 1
            proc = np.zeros(count, np.uint32)
            if "process" in spans.column_names:
                t = spans.column("thread").to_numpy()
                proc[t] = spans.column("process").to_numpy()
        else:
            count, proc = 1, np.zeros(1, np.uint32)
        return table("threads", {"id": np.arange(count, dtype=np.uint32), "process": proc,
                                 "tid": [str(i) for i in range(count)], "name": [""] * count,
                                 "sort_index": np.arange(count, dtype=np.int64), "kind": ["thread"] * count})
    out = _fill("threads", tbl, THREADS_SCHEMA, {"tid": lambda k: [str(i) for i in range(k)],
                                                  "process": lambda k: np.zeros(k, np.uint32),
                                                  "sort_index": lambda k: np.arange(k, dtype=np.int64),
                                                  "kind": lambda k: ["thread"] * k})
    proc = out.column("process").to_numpy()
    if len(proc) and proc.max() >= nproc:
        raise TraceSchemaError("threads", f'column "process" names process {proc.max()} of {nproc}')
    return out


def _fill(name, tbl, schema, defaults):
    """Cast given columns to the schema; fill missing ones; id is the row."""
    k = tbl.num_rows
    cols = {}
    for f in schema:
        if f.name == "id":
            cols["id"] = np.arange(k, dtype=np.uint32)
        elif f.name in tbl.column_names:
            try:
                cols[f.name] = tbl.column(f.name).cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise TraceSchemaError(name, f'column "{f.name}" cannot be {f.type}: {exc}') from None
            if cols[f.name].null_count:
                raise TraceSchemaError(name, f'column "{f.name}" holds nulls')
        else:
            cols[f.name] = defaults.get(f.name, lambda m: [""] * m)(k)
    return table(name, cols)


def _links(tbl, n):
    if tbl is None:
        return None
    src = _ints("links", _column("links", tbl, "source", "int", required=True), "source", 0, max(n - 1, 0), np.uint32)
    dst = _ints("links", _column("links", tbl, "target", "int", required=True), "target", 0, max(n - 1, 0), np.uint32)
    if n == 0 and len(src):
        raise TraceSchemaError("links", "links given but there are no spans")
    kind = _column("links", tbl, "kind", "str")
    return table("links", {"source": src, "target": dst, "kind": ["link"] * len(src) if kind is None else kind})
