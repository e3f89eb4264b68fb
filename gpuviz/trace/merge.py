"""Multi-rank merge: one partition per input trace, ranks aligned in time.

Alignment, in two steps, relative to the first trace:

1. Base times: when every trace has Kineto's ``base_time_ns`` and its
   timestamps are relative to it (all spans start before half the base
   time), each trace is shifted by its base time.
2. NCCL collectives: kernels named ``nccl[Dev]Kernel_<Op>_...`` on each
   rank, matched by (op, k-th occurrence), finish together (a collective
   ends on all ranks at once), so the median difference of their end times
   is the rank's residual skew; it is applied and reported as
   ``report["skew_ns:<partition>"]`` (signed ns). Matched collectives become
   ``collective`` links from the first rank's kernel to each other rank's.

Spans, threads and processes are never merged across ranks; lanes stay as
each trace packed them.
"""

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .model import Trace, merge_reports, table

__all__ = ["merge_traces", "collectives"]

_NCCL = re.compile(r"^nccl(?:Dev)?Kernel_([A-Za-z]+)")


def collectives(trace):
    """{op: span ids in start order} of the NCCL collective kernels of a trace."""
    col = trace.spans.column("name")
    start = trace.spans.column("start_ns").to_numpy()
    hits = np.flatnonzero(pc.match_substring_regex(col, _NCCL.pattern).to_numpy(zero_copy_only=False)) \
        if trace.span_count else np.zeros(0, np.int64)
    out = {}
    for i, name in zip(hits.tolist(), pc.take(col, pa.array(hits)).to_pylist()):
        m = _NCCL.match(name)
        if m:
            out.setdefault(m.group(1), []).append(i)
    return {op: sorted(ids, key=lambda i: (start[i], i)) for op, ids in out.items()}


def _base_shift(traces):
    bases = [t.metadata.get("base_time_ns") for t in traces]
    if not all(isinstance(b, int) for b in bases):
        return [0] * len(traces)
    relative = all(t.span_count == 0 or int(pc.max(t.spans.column("start_ns")).as_py()) < b // 2
                   for t, b in zip(traces, bases))
    return list(bases) if relative else [0] * len(traces)


def _collective_skew(traces, shifts, report):
    """Residual skews and (ref span, other span, partition) matches."""
    groups = [collectives(t) for t in traces]
    ends = [t.spans.column("start_ns").to_numpy() + t.spans.column("duration_ns").to_numpy() for t in traces]
    skews = [0] * len(traces)
    matches = []
    ref = groups[0]
    for p in range(1, len(traces)):
        diffs = []
        for op, ids in ref.items():
            other = groups[p].get(op, [])
            if len(other) != len(ids):
                report["collective_count_mismatch"] = report.get("collective_count_mismatch", 0) + 1
            for a, b in zip(ids, other):
                diffs.append((int(ends[0][a]) + shifts[0]) - (int(ends[p][b]) + shifts[p]))
                matches.append((a, b, p))
        if diffs:
            skews[p] = int(np.median(np.array(diffs, dtype=np.int64)))
            report[f"skew_ns:{p}"] = skews[p]
    report["collectives_matched"] = sum(1 for m in matches)
    return skews, matches


def _shifted(col, delta):
    return pc.add(col, pa.scalar(int(delta), col.type)) if delta else col


def _offset(col, delta, dtype):
    return pc.add(col.cast(dtype), pa.scalar(int(delta), dtype)).cast(col.type) if delta else col


def merge_traces(traces, *, partitions=None):
    """Merge per-rank traces into one; partition ``p`` = ``partitions[p]``
    (default: the position in ``traces``). Does not re-pack lanes or
    change any span's duration; only whole ranks move in time."""
    partitions = list(range(len(traces))) if partitions is None else list(partitions)
    report = merge_reports(*(t.report for t in traces))
    base = _base_shift(traces)
    skews, matches = _collective_skew(traces, base, report) if len(traces) > 1 else ([0], [])
    shift = [b + s for b, s in zip(base, skews)]
    parts = {k: [] for k in ("spans", "links", "threads", "processes", "counters", "instants")}
    span_off = thread_off = proc_off = 0
    offsets = []
    for t, part, dt in zip(traces, partitions, shift):
        offsets.append(span_off)
        s = t.spans
        parent = s.column("parent")
        parent = pc.if_else(pc.less(parent, 0), parent, _offset(parent, span_off, pa.int64()))
        s = _set(s, id=_offset(s.column("id"), span_off, pa.int64()), start_ns=_shifted(s.column("start_ns"), dt),
                 process=_offset(s.column("process"), proc_off, pa.int64()),
                 thread=_offset(s.column("thread"), thread_off, pa.int64()), parent=parent,
                 partition=pa.array(np.full(s.num_rows, part, np.uint32)))
        parts["spans"].append(s)
        parts["links"].append(_set(t.links, source=_offset(t.links.column("source"), span_off, pa.int64()),
                                   target=_offset(t.links.column("target"), span_off, pa.int64())))
        parts["threads"].append(_set(t.threads, id=_offset(t.threads.column("id"), thread_off, pa.int64()),
                                     process=_offset(t.threads.column("process"), proc_off, pa.int64())))
        parts["processes"].append(_set(t.processes, id=_offset(t.processes.column("id"), proc_off, pa.int64()),
                                       partition=pa.array(np.full(t.processes.num_rows, part, np.uint32))))
        parts["counters"].append(_set(t.counters, process=_offset(t.counters.column("process"), proc_off, pa.int64()),
                                      ts_ns=_shifted(t.counters.column("ts_ns"), dt)))
        parts["instants"].append(_set(t.instants, ts_ns=_shifted(t.instants.column("ts_ns"), dt),
                                      process=_offset(t.instants.column("process"), proc_off, pa.int64()),
                                      thread=_offset(t.instants.column("thread"), thread_off, pa.int64())))
        span_off += t.span_count
        thread_off += t.threads.num_rows
        proc_off += t.processes.num_rows
    if matches:
        m = np.array(matches, np.int64)
        off = np.array(offsets, np.int64)
        parts["links"].append(table("links", {"source": (m[:, 0] + off[0]).astype(np.uint32),
                                              "target": (m[:, 1] + off[m[:, 2]]).astype(np.uint32),
                                              "kind": ["collective"] * len(m)}))
    tables = {k: pa.concat_tables(v).combine_chunks() if v else None for k, v in parts.items()}
    sources = [""] * (max(partitions) + 1 if partitions else 0)
    for t, part in zip(traces, partitions):
        sources[part] = next((s for s in t.sources if s), "")
    return Trace(**tables, report=report, sources=sources,
                 metadata={"format": "multi-rank", "shift_ns": shift, "ranks": [t.metadata for t in traces]})


def _set(tbl, **columns):
    for name, col in columns.items():
        i = tbl.schema.get_field_index(name)
        tbl = tbl.set_column(i, tbl.schema.field(i), col)
    return tbl
