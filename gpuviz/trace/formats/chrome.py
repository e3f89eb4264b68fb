"""Chrome Trace Event JSON -> :class:`~gpuviz.trace.model.Trace`.

Phases: X; B/E (per thread stack); b/e/n (nestable async) and S/T/p/F
(legacy async) on one ``async`` thread per process; s/t/f flows and flow v2
(``bind_id``/``flow_in``/``flow_out`` on slices); M metadata; C counters;
i/I instants. Everything else is counted as ``unknown_phase``.

Rules where the format is loose (each written so that a reference can be
built independently):

* B/E: per thread, events in (ts, file order). At one timestamp: first every
  E whose name equals the innermost open B closes it (repeatedly), then the
  Bs open in file order, then the remaining Es close the innermost open B
  (``mismatched_end_name`` when the names differ, ``unmatched_end`` when
  nothing is open). A B never closed is kept, ``incomplete``, ending at the
  last timestamp seen on its thread (``unclosed_begin``).
* Async b/e: keyed by (process unless ``id2.global``, cat, id); e closes the
  innermost open b of its key with the same name (any, when e has no name);
  an e that matches nothing is ``unmatched_async_end``. S/T/p/F: keyed by (cat, name, id) across
  processes; the span lives on the S's process; each T/p step starts a
  child span up to the next step or F, linked by ``async-step`` links.
  Unclosed ones end at their track's last timestamp (``unclosed_async``).
* Flows s/t/f: keyed by (cat, name, id), in (ts, file order). s and t bind
  to the innermost slice of their thread open at ts (start <= ts <= end); f
  binds the same way when ``bp == "e"``, else to the first slice beginning
  on its thread at or after ts. Consecutive bound points become ``flow``
  links. An f earlier in time than the s of its key (GPU clocks ahead of
  the CPU's) still pairs with it (``reversed_flow``).
"""

import json
import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .chrome_phases import (async_spans, begin_end_spans, counters_table, first_seen,
                            flow_links, flow_points, flow_v2_links, instants_table, metadata)
from .jsonevents import (Reporter, decode_events, import_memory_pool, release_free_memory,
                         take_bytes)
from ..lanes import pack_lanes, visiting
from ..model import assemble, table

__all__ = ["read_chrome", "build_trace", "PHASES"]

#: Phase letter -> small code.
PHASES = {"X": 1, "B": 2, "E": 3, "b": 4, "e": 5, "n": 6, "S": 7, "T": 8, "p": 9, "F": 10,
          "s": 11, "t": 12, "f": 13, "M": 14, "C": 15, "i": 16, "I": 17, "\x00bad": 18}
ASYNC = (4, 5, 6, 7, 8, 9, 10)
FLOW = (11, 12, 13)


def read_chrome(path, *, strict=False, partition=0, data=None, progress=None):
    """Read one Chrome Trace Event JSON file (``.json`` or ``.json.gz``).

    Parameters
    ----------
    path : str or Path
        The file (named in errors).
    strict : bool
        Raise :class:`~gpuviz.trace.TraceFormatError` at the first problem
        instead of repairing and counting it in ``trace.report``.
    partition : int
        Partition (rank / source file) of everything read.
    data : bytes or [bytes], optional
        The file's (uncompressed) bytes when already read; a one-element
        list is emptied, so the bytes are freed once decoded.
    progress : callable, optional
        ``progress(nbytes)`` as blocks of events are decoded.

    Non-trace, empty and garbage files raise in both modes. It does not read
    ``samples``/``stackFrames`` (sampling profiles) and never drops a span.
    """
    with import_memory_pool():
        reporter = Reporter(str(path), strict)
        data = take_bytes(path, data)
        nbytes = len(data)
        cols = decode_events(data, str(path), reporter, progress=progress)
        del data                 # the columns hold copies: the file's bytes can go now
        release_free_memory(nbytes)
        return build_trace(cols, reporter, partition=partition, source=str(path))


def _codes(ph):
    """Phase code per event (uint8), chunk by chunk."""
    chunks = ph.chunks if isinstance(ph, pa.ChunkedArray) else [ph]
    return np.concatenate([_chunk_codes(c) for c in chunks]) if chunks else np.zeros(0, np.uint8)


#: Phase code of each byte as a one-letter phase (0: not a phase).
_LETTER_CODES = np.zeros(256, np.uint8)
for _letter, _code in PHASES.items():
    if len(_letter) == 1:
        _LETTER_CODES[ord(_letter)] = _code


def _chunk_codes(ph):
    """A chunk of only one-letter phases (nearly all are) is looked up by
    its bytes, the letters themselves (several times cheaper than a
    dictionary encode); others are dictionary encoded."""
    if len(ph) and ph.null_count == 0 and pa.types.is_string(ph.type):
        offsets = np.frombuffer(ph.buffers()[1], np.int32)[ph.offset:ph.offset + len(ph) + 1]
        if offsets[-1] - offsets[0] == len(ph) and (np.diff(offsets) == 1).all():
            return _LETTER_CODES[np.frombuffer(ph.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]]
    index, distinct = _encoded(ph)
    lookup = np.array([PHASES.get(p, 0) for p in distinct.to_pylist()] or [0], np.uint8)
    return lookup[index] if len(ph) else np.zeros(0, np.uint8)


def _encoded(values):
    """(index of each value, int64; the distinct values, an Array) of an
    Array or a ChunkedArray (the event columns stay in their blocks' chunks:
    dictionary_encode gives every chunk the same, final dictionary)."""
    enc = pc.dictionary_encode(values)
    if not isinstance(enc, pa.ChunkedArray):
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary
    if enc.num_chunks == 0:
        return np.zeros(0, np.int64), pa.array([], values.type)
    index = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in enc.chunks]).astype(np.int64)
    return index, enc.chunk(enc.num_chunks - 1).dictionary


def _texts(values):
    """Distinct pid/tid values (int64 or string) as text."""
    return [str(v) for v in values.to_pylist()] if pa.types.is_integer(values.type) else values.to_pylist()


class Identity:
    """Process and thread rows, in order of first appearance."""

    def __init__(self, cols, code, used):
        raw_index, distinct = _encoded(cols.pid)
        texts = _texts(distinct)
        # Processes: pids of the events that count, in order of first appearance.
        remap = np.full(len(texts) + 1, -1, np.int64)
        keep = first_seen(raw_index[used])[0]
        remap[keep] = np.arange(len(keep))
        self.pid_index = remap[raw_index] if len(raw_index) else raw_index
        self.pid_text = [texts[k] for k in keep.tolist()]
        self.tid_index, distinct = _encoded(cols.tid)
        self.tid_text = _texts(distinct)
        self.code = code
        self.thread_of = np.full(len(code), -1, np.int64)
        self.thread_rows = []        # (process, tid text, kind)
        self.thread_key = {}
        self.process_names = {}
        self.process_labels = {}
        self.thread_names = {}
        self.thread_sort = {}
        self.async_thread = {}

    def threads_for(self, mask):
        """Assign thread rows to the events in ``mask`` (vectorised)."""
        idx = np.flatnonzero(mask)
        if len(idx) == 0:
            return
        width = len(self.tid_text) + 1
        uniq, inverse = first_seen(self.pid_index[idx] * width + self.tid_index[idx])
        rows = np.empty(len(uniq), np.int64)
        for u, value in enumerate(uniq.tolist()):
            k = (value // width, self.tid_text[value % width])
            if k not in self.thread_key:
                self.thread_key[k] = len(self.thread_rows)
                self.thread_rows.append((k[0], k[1], "thread"))
            rows[u] = self.thread_key[k]
        self.thread_of[idx] = rows[inverse]

    def async_row(self, process):
        if process not in self.async_thread:
            self.async_thread[process] = len(self.thread_rows)
            self.thread_rows.append((process, "async", "async"))
        return self.async_thread[process]

    def tables(self, partition, kinds=None):
        nproc = len(self.pid_text)
        processes = table("processes", {
            "id": np.arange(nproc, dtype=np.uint32), "pid": self.pid_text,
            "name": [self.process_names.get(p, "") for p in range(nproc)],
            "labels": [", ".join(self.process_labels.get(p, [])) for p in range(nproc)],
            "partition": np.full(nproc, partition, np.uint32)})
        rows = self.thread_rows
        kinds = kinds or {}
        threads = table("threads", {
            "id": np.arange(len(rows), dtype=np.uint32),
            "process": np.array([r[0] for r in rows], np.uint32),
            "tid": [r[1] for r in rows],
            "name": [self.thread_names.get(i, "") for i in range(len(rows))],
            "sort_index": np.array([self.thread_sort.get(i, i) for i in range(len(rows))], np.int64),
            "kind": [kinds.get(i, r[2]) for i, r in enumerate(rows)]})
        return processes, threads


def build_trace(cols, reporter, *, partition=0, source="", thread_kind=None, flow_kind=None, time_offset_ns=0):
    """Event columns -> Trace (shared by the Chrome and Kineto readers).

    ``thread_kind(identity) -> {thread row: kind}`` lets Kineto mark GPU
    streams; ``flow_kind(cat) -> str`` names the links of s/t/f flows
    (default ``"flow"``); ``time_offset_ns`` is added to every time. Does not
    read files.
    """
    n = len(cols)
    code = _codes(cols.ph)
    # |t| < 2^62 ns (146 years): sums and differences of times never overflow int64.
    limit = np.int64(1 << 62)
    ts_ok = cols.ts_ok & (np.abs(cols.ts_ns) < limit)
    if time_offset_ns:
        ts_ok &= np.abs(cols.ts_ns + np.int64(time_offset_ns)) < limit
    cols.dur_ok = cols.dur_ok & (np.abs(cols.dur_ns) < limit)
    valid = ts_ok | (code == 14)              # metadata may lack ts
    del ts_ok
    reporter.add_mask("bad_timestamp", ~valid & (code != 18))
    reporter.add_mask("unknown_phase", valid & (code == 0))
    code = np.where(valid, code, 18)
    scope = np.zeros(n, np.uint8)                  # 0 thread, 1 process, 2 global (instants)
    for i in np.flatnonzero((code == 16) | (code == 17)).tolist():
        scope[i] = {"p": 1, "g": 2}.get(cols.rare[i].s, 0)
    ident = Identity(cols, code, (code != 18) & (code != 0) & (scope != 2))
    ident.threads_for(np.isin(code, (1, 2, 3, 11, 12, 13)) | (np.isin(code, (16, 17)) & (scope == 0)))
    metadata(cols, code, ident, reporter)
    ts = cols.ts_ns + np.int64(time_offset_ns) if time_offset_ns else cols.ts_ns     # read only from here on
    last = _thread_last(ident, code, ts, cols)
    x = _x_spans(cols, code, ts, ident, reporter)
    be = begin_end_spans(cols, code, ts, ident, reporter, last)
    async_parts, step_pairs = async_spans(cols, code, ts, ident, reporter)
    merged = _merge_spans((x, be, async_parts))
    del x, be, async_parts
    event = merged["event"]
    # The flows need the packed parents only at the end: the lanes are packed
    # on another thread meanwhile (numpy releases the GIL in its sorts and
    # searches, so the two overlap almost entirely). Neither reports anything, so
    # the report stays in order. Both visit the spans in one order, made
    # once (time, and memory while both run). Below BACKGROUND_PACKING_SPANS
    # they run one after the other: there both sets of temporaries at once
    # set the import's peak memory.
    visit = visiting(merged["start"], merged["dur"], merged["thread"])
    packing = _Background(_pack_and_trim, start=merged["start"], duration=merged["dur"], thread=merged["thread"],
                          visit=visit, threaded=len(merged["start"]) >= BACKGROUND_PACKING_SPANS)
    points = flow_points(cols, code, ts, ident, merged, visit)
    del visit
    lane, depth, parent, added = packing.result()
    reporter.note("lanes_added", added)
    links = [flow_links(cols, code, ts, ident, reporter, merged, parent, flow_kind, points),
             flow_v2_links(cols, event, code, ts),
             _step_links(step_pairs, event, n)]
    instants = instants_table(cols, code, ts, ident, reporter)
    counters = counters_table(cols, code, ts, ident, reporter)
    processes, threads = ident.tables(partition, thread_kind(ident) if thread_kind else None)
    pick = _span_rows(event, n)
    link_table = table("links", {"source": np.concatenate([x[0] for x in links]).astype(np.uint32),
                                 "target": np.concatenate([x[1] for x in links]).astype(np.uint32),
                                 "kind": pa.concat_arrays([pa.array(x[2], pa.string()) for x in links])})
    return assemble(name=pick(cols.name), category=pick(cols.cat),
                    start_ns=merged["start"], duration_ns=merged["dur"], thread=merged["thread"],
                    threads=threads, processes=processes, parent=parent, args=pick(cols.args),
                    incomplete=merged["incomplete"], links=link_table, counters=counters, instants=instants,
                    report={**reporter.counts}, sources=_sources(partition, source), lanes=(lane, depth),
                    metadata={"format": "chrome", **({"display_time_unit": cols.header["displayTimeUnit"]}
                                                     if "displayTimeUnit" in cols.header else {})})


def _pack_and_trim(**spans):
    """pack_lanes, then the free pages of its temporaries handed back: they
    were allocated on another thread, in a malloc arena of its own that the
    rest of the import does not reuse, and would otherwise raise the
    import's peak memory."""
    packed = pack_lanes(**spans)
    release_free_memory()
    return packed


#: Spans from which the lanes are packed on a second thread while the flows
#: are prepared: below it the overlap saves little time and raises the peak
#: memory (both temporaries live at once); above it the decode's peak
#: dominates and the overlap saves time.
BACKGROUND_PACKING_SPANS = 1 << 20


class _Background:
    """``function(**kwargs)`` run on a thread of its own (``threaded``; else
    here and now, raising at once); ``result()`` waits for it and returns
    its value or raises its exception."""

    def __init__(self, function, *, threaded=True, **kwargs):
        self._value = self._error = self._thread = None
        if not threaded:
            self._value = function(**kwargs)
            return

        def run():
            try:
                self._value = function(**kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to result()
                self._error = exc
        self._thread = threading.Thread(target=run, name="gpuviz-" + function.__name__, daemon=True)
        self._thread.start()

    def result(self):
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


#: Span events in at most this many runs of consecutive events: their
#: strings are slices of the event columns, not copies.
MAX_SLICES = 4096


def _span_rows(event, n):
    """``pick(column)``: the rows of the span events (distinct, increasing)
    out of an event column of ``n`` rows. All events (pure X files): the
    column itself; events in a few runs (spans written before flows and
    metadata): zero-copy slices; else a take."""
    if len(event) == n:           # n distinct increasing events of 0..n-1: all of them
        return lambda column: column
    if len(event) == 0:
        return lambda column: column.slice(0, 0)
    ends = np.flatnonzero(np.diff(event) != 1)
    if len(ends) < MAX_SLICES:
        firsts = np.append(0, ends + 1)
        runs = list(zip(event[firsts].tolist(), np.diff(np.append(firsts, len(event))).tolist()))

        def sliced(column):
            pieces = [column.slice(at, size) for at, size in runs]
            chunks = [c for p in pieces for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
            return pa.chunked_array(chunks, column.type)
        return sliced
    take = pa.array(event)

    def taken(column):
        # chunk by chunk: a take over a ChunkedArray first concatenates it (the whole
        # column copied, which costs about as much as the take itself)
        if not isinstance(column, pa.ChunkedArray) or column.num_chunks < 2:
            return pc.take(column, take)
        bounds = np.cumsum([0] + [len(c) for c in column.chunks])
        cuts = np.searchsorted(event, bounds)
        return pa.chunked_array([c.take(pa.array(event[lo:hi] - first))
                                 for c, first, lo, hi in zip(column.chunks, bounds, cuts, cuts[1:]) if hi > lo],
                                column.type)
    return taken


def _merge_spans(parts):
    """Span parts -> one dict of columns in event order (no copies when only
    one part has spans, already in event order: X events from flatnonzero)."""
    keys = ("event", "start", "dur", "thread", "incomplete")
    full = [p for p in parts if len(p["event"])]
    if len(full) <= 1:
        one = (full or parts)[0]
        if np.all(one["event"][1:] > one["event"][:-1]):
            return {k: one[k] for k in keys}
    merged = {k: np.concatenate([p[k] for p in full]) for k in keys}
    order = np.argsort(merged["event"], kind="stable")
    return {k: v[order] for k, v in merged.items()}


def _sources(partition, source):
    """sources[partition] = source (earlier partitions unnamed)."""
    return ("",) * int(partition) + (source,)


def _step_links(step_pairs, event, n):
    """async-step links between consecutive S/T/F segments (``event``: the
    event index of each span row, of ``n`` events)."""
    if not step_pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    row_of_event = np.full(n + 1, -1, np.int64)
    row_of_event[event] = np.arange(len(event))
    pairs = np.array(step_pairs, np.int64)
    return row_of_event[pairs[:, 0]], row_of_event[pairs[:, 1]], ["async-step"] * len(pairs)


def _thread_last(ident, code, ts, cols):
    """Last timestamp (incl. X ends) seen on each thread; unclosed Bs end there."""
    nthreads = len(ident.thread_rows) + 1
    last = np.full(nthreads, np.iinfo(np.int64).min, np.int64)
    has = ident.thread_of >= 0
    end = np.where((code == 1) & cols.dur_ok & (cols.dur_ns > 0), ts + np.maximum(cols.dur_ns, 0), ts)
    np.maximum.at(last, ident.thread_of[has], end[has])
    return last


def _x_spans(cols, code, ts, ident, reporter):
    idx = np.flatnonzero(code == 1)
    # Every event an X (the common large file): the columns themselves, no copies.
    pick = (lambda a: a) if len(idx) == len(code) else (lambda a: a[idx])
    dur = pick(cols.dur_ns)
    has_dur, dur_ok = pick(cols.has_dur), pick(cols.dur_ok)
    missing = ~has_dur
    bad = has_dur & ~dur_ok
    negative = dur_ok & (dur < 0)
    reporter.add_mask("missing_duration", missing, idx)
    reporter.add_mask("bad_duration", bad, idx)
    reporter.add_mask("negative_duration", negative, idx)
    zero = missing | bad | negative
    if zero.any():
        dur = np.where(zero, 0, dur)
    return {"event": idx, "start": pick(ts), "dur": dur, "thread": pick(ident.thread_of),
            "incomplete": np.zeros(len(idx), bool)}


def decode_args(text):
    """JSON text of ``args`` -> dict ({} for null or non-objects)."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
