"""``Trace.from_arrow``: the trace model from any Arrow source, validated.

Accepts a ``pyarrow.Table``, a ``RecordBatch``, anything with
``__arrow_c_stream__`` (polars, DuckDB relations) or a pandas DataFrame.
Errors are :class:`~gpuviz.trace.errors.TraceSchemaError` naming the table
and the column.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuviz.trace.errors import TraceSchemaError
from gpuviz.trace.model import PROCESSES_SCHEMA, THREADS_SCHEMA, assemble, table

__all__ = ["from_arrow_tables", "as_table"]


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


def from_arrow_tables(*, spans, links=None, threads=None, processes=None):
    """See :meth:`gpuviz.trace.Trace.from_arrow`."""
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
