"""The tables of a :class:`~gpuviz.trace.scene.GPUTraceScene` as numpy arrays:
the span records, parents, link and hierarchy CSRs and dense IDs of a
:class:`~gpuviz.trace.model.Trace` as numpy arrays, built with vectorised
numpy and pyarrow kernels on a few threads (sorts, copies and string
hashing release the GIL). Each table goes to the scene's ``sink`` callbacks
as soon as it is ready. The record layout and flags are the scene module's.

Memory, not arithmetic, is the cost: the first touch of freshly allocated
pages costs more than the numpy work on them (several times over on a VM,
and page faults contend across threads). So the records go out through a
few reused chunk buffers (never a whole host table), every per-row table
that is not an output is avoided (counts come from the sorted keys; index
arrays are converted to intp a slice at a time), and operations that hold
the GIL for a whole pass (``ufunc.at``, in-place ``accumulate``) are kept
out of the threads.
"""

from __future__ import annotations

import os
import queue
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, as_completed, wait

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import GraphValidationError

__all__ = ["SceneTables", "RECORD_WORDS", "NO_PARENT", "PARTITION_SHIFT", "MAX_PARTITIONS", "WORKERS",
           "CSR_WORKERS", "DENSE_SLICE", "BLOCK_ROWS", "CHUNK_ROWS", "KEY_SLICE", "column_numpy", "dense_ids",
           "group_keys", "local_offsets", "record_rows", "used_rows", "child_rows"]

#: uint32 words of one span record.
RECORD_WORDS = 12
#: Parent of a root span in :attr:`GPUTraceScene.parents`.
NO_PARENT = 0xFFFFFFFF
#: Word 10 of a record is ``flags | partition << PARTITION_SHIFT``.
PARTITION_SHIFT = 8
#: Partitions a scene can hold (24 bits of word 10).
MAX_PARTITIONS = 1 << (32 - PARTITION_SHIFT)
#: Records written per block (1.5 MiB, near a core's L2): each block costs a fixed amount of
#: GIL-held numpy dispatch, a small share of a block this large (smaller ones queue threads on the GIL).
BLOCK_ROWS = 1 << 15
#: Rows per record write (6 MiB): each worker fills reused buffers of this size, never the whole
#: 48-byte-per-span table: the first touch of fresh memory (page faults; on the 2-core VM 0.47 s
#: for 192 MB, contended across threads) costs several times the transpose itself.
CHUNK_ROWS = 1 << 17
KEY_SLICE = 1 << 20  # keys per scatter (numpy copies uint32 indices to intp: 8 MiB reused, not 8 bytes per key)
WORKERS = max(1, min(8, os.cpu_count() or 1))  # host threads preparing a scene's records
CSR_WORKERS = 4  # threads of the four CSR sorts (each splits its partitions over WORKERS more)
DENSE_SLICE = 1 << 20  # strings per dictionary-encoding slice


def column_numpy(table, name):
    column = table.column(name)
    return column.to_numpy() if column.num_chunks != 1 else column.chunk(0).to_numpy(zero_copy_only=False)


def ascending(values):
    """Whether ``values`` never decrease (compared in slices: no bool per row)."""
    n = len(values)
    return all(np.all(values[lo + 1:min(n, lo + KEY_SLICE + 1)] >= values[lo:min(n, lo + KEY_SLICE + 1) - 1])
               for lo in range(0, max(n - 1, 0), KEY_SLICE))


def encode_strings(column):
    """(uint32 IDs, dictionary) of one string array (no nulls: the model
    refuses them), IDs in first-appearance order (a view of Arrow's int32 indices)."""
    encoded = pc.dictionary_encode(column)
    return encoded.indices.to_numpy(zero_copy_only=False).view(np.uint32), encoded.dictionary


def dense_ids(column):
    """(uint32 IDs, pyarrow dictionary) of a string column, IDs in first-appearance order.

    Long columns are encoded in slices (of its chunks: never combined) on
    several threads; the slices' dictionaries, concatenated in order and
    encoded once more, give the same first-appearance IDs as one pass."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    n = sum(len(c) for c in chunks)
    if len(chunks) == 1 and (WORKERS == 1 or n < DENSE_SLICE):
        return encode_strings(chunks[0])
    step = max(DENSE_SLICE, -(-n // WORKERS))
    pieces = [c.slice(lo, step) for c in chunks for lo in range(0, len(c), step)]
    with ThreadPoolExecutor(WORKERS) as pool:
        parts = list(pool.map(encode_strings, pieces))
    merged, dictionary = encode_strings(pa.concat_arrays([d for _, d in parts] or [pa.array([], pa.string())]))
    ids = np.empty(n, np.uint32)
    at = base = 0
    for local, d in parts:
        gather(merged[base:base + len(d)], local, ids[at:at + len(local)])  # the slice's IDs -> merged IDs
        at, base = at + len(local), base + len(d)
    return ids, dictionary


def gather(values, index, out=None):
    """``values[index]`` for a uint32 ``index`` (into ``out`` if given), in slices
    (numpy copies an index to intp first: 8 MiB reused instead of 8 bytes per entry)."""
    out = np.empty(len(index), values.dtype) if out is None else out
    for lo in range(0, len(index), KEY_SLICE):
        np.take(values, index[lo:lo + KEY_SLICE], out=out[lo:lo + KEY_SLICE], mode="clip")  # clip: unbuffered
    return out


def sorted_positions(keys, lo, hi, out):
    """Positions lo..hi of ``keys`` ordered by key, stably (keys uint32), into
    ``out``; returns the sorted keys (a view).

    (key, position) pairs packed in uint64 words (key high: little-endian
    halves written in place) sort as unique values, so any sort is stable;
    numpy's SIMD sort is the fastest here."""
    packed = np.empty(hi - lo, np.uint64)
    halves = packed.view(np.uint32).reshape(-1, 2)
    halves[:, 1] = keys[lo:hi]
    halves[:, 0] = np.arange(lo, hi, dtype=np.uint32)
    packed.sort()
    out[...] = halves[:, 0]
    return halves[:, 1]


def fill_offsets(sorted_keys, first, out):
    """``out[i]`` = how many of ``sorted_keys`` are <= ``first + i`` (uint32; every
    key in first .. first + len(out)): each run's end scattered, then a running
    maximum (no count table of its own)."""
    out[...] = 0
    m = len(sorted_keys)
    for lo in range(0, m, KEY_SLICE):
        hi = min(m, lo + KEY_SLICE)
        piece = sorted_keys[lo:hi + 1]  # one key past the slice shows whether its last run ends in it
        ends = np.flatnonzero(piece[1:] != piece[:-1])
        if hi == m:
            ends = np.append(ends, hi - lo - 1)
        out[piece[ends] - np.uint32(first)] = ends + (lo + 1)
    running_max(out)
    return out


def count_parented(parents, out):
    """``out[i]`` = rows of ``parents[:i + 1]`` that have a parent (uint32), in
    256K slices (cache-sized; no bool table per row)."""
    step, carry = 1 << 18, np.uint32(0)
    for lo in range(0, len(parents), step):
        piece = out[lo:lo + step]
        np.cumsum(parents[lo:lo + step] != NO_PARENT, dtype=np.uint32, out=piece)
        np.add(piece, carry, out=piece)
        carry = piece[-1]
    return out


def running_max(values):
    """``np.maximum.accumulate`` in place, in 256K slices through a scratch (an
    in-place accumulate holds the GIL for its whole run; into another array it does not)."""
    step = 1 << 18
    scratch = np.empty(min(step, len(values)), values.dtype)
    carry = values.dtype.type(0)
    for lo in range(0, len(values), step):
        piece = values[lo:lo + step]
        part = scratch[:len(piece)]
        np.maximum.accumulate(piece, out=part)
        np.maximum(part, carry, out=piece)
        carry = piece[-1]
    return values


def keys_within(keys, edges, bounds):
    """Whether positions edges[p]..edges[p + 1] of ``keys`` hold only keys of partition p."""
    starts = edges[:-1][np.diff(edges) > 0]
    if len(starts) == 0:
        return True
    owner = np.searchsorted(edges[1:], starts, side="right")  # the partition of each non-empty slice
    low, high = np.minimum.reduceat(keys, starts), np.maximum.reduceat(keys, starts)
    return bool(np.all(low >= bounds[owner]) and np.all(high < bounds[owner + 1]))


def key_partitions(keys, bounds):
    """Partition (uint16) of each key row, in slices (no per-row table)."""
    part = np.empty(len(keys), np.uint16)
    for lo in range(0, len(keys), KEY_SLICE):
        np.copyto(part[lo:lo + KEY_SLICE], np.searchsorted(bounds[1:], keys[lo:lo + KEY_SLICE], side="right"),
                  casting="unsafe")
    return part


def group_keys(keys, count, bounds, edges=None):
    """Positions of ``keys`` (uint32 rows < count) ordered by key, stably, and
    their CSR per partition: ``(order, offsets, starts)`` with uint32 local
    offsets (``n_p + 1`` per partition, the first 0) and the int64 position in
    ``order`` where each partition's keys start.

    Keys of one partition (row range in ``bounds``) sort, and count, in their
    own thread. ``edges`` (optional, ``len(bounds)`` positions) guesses where
    each partition's keys lie (children follow their parents' partition);
    when the guess fails or is missing, positions are split by the key's
    partition first (a linear radix sort of 16-bit partition numbers)."""
    keys = np.asarray(keys, np.uint32)
    n, parts = len(keys), len(bounds) - 1
    if parts > 1 << 16:  # more partitions than 16-bit numbers: one sort, counts per row
        order = np.arange(n, dtype=np.uint32)
        if n and not ascending(keys):
            sorted_positions(keys, 0, n, order)
        inclusive = np.cumsum(np.bincount(keys, minlength=count))
        return order, local_offsets(inclusive, bounds), starts_at(inclusive, bounds)
    offsets = np.empty(count + parts, np.uint32)
    bounds32 = np.asarray(bounds).astype(np.uint32)  # rows < 2**32 - 1: no int64 copy of the keys to search
    split = None
    if n == 0 or ascending(keys):
        order = np.arange(n, dtype=np.uint32)
        edges = np.searchsorted(keys, bounds32, side="left")
        for p in range(parts):
            a, b, lo, hi = int(bounds[p]), int(bounds[p + 1]), int(edges[p]), int(edges[p + 1])
            offsets[a + p] = 0
            fill_offsets(keys[lo:hi], a, offsets[a + p + 1:b + p + 1])
        return order, offsets, edges.astype(np.int64)
    if parts == 1:
        edges = np.array([0, n])
    elif edges is None or not keys_within(keys, edges, bounds):
        part = key_partitions(keys, bounds)
        if not ascending(part):
            split = np.argsort(part, kind="stable").astype(np.uint32)  # radix sort for 16-bit keys
            keys, part = gather(keys, split), gather(part, split)
        edges = np.append(np.searchsorted(part, np.arange(parts, dtype=np.uint16), side="left"), len(part))
    order = np.empty(n, np.uint32)

    def one(p):
        a, b, lo, hi = int(bounds[p]), int(bounds[p + 1]), int(edges[p]), int(edges[p + 1])
        offsets[a + p] = 0
        fill_offsets(sorted_positions(keys, lo, hi, order[lo:hi]), a, offsets[a + p + 1:b + p + 1])

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(one, range(parts)))
    return (order if split is None else gather(split, order)), offsets, np.asarray(edges, np.int64)


def local_offsets(inclusive, bounds):
    """Per-partition CSR offsets (``n_p + 1`` each, starting at 0) from
    inclusive counts (row r: neighbours of rows <= r)."""
    parts = len(bounds) - 1
    out = np.empty(int(bounds[-1]) + parts, np.uint32)
    for p in range(parts):  # one slice per partition, not per span
        a, b = int(bounds[p]), int(bounds[p + 1])
        out[a + p] = 0
        np.subtract(inclusive[a:b], inclusive[a - 1] if a else 0, out=out[a + p + 1: b + p + 1], casting="unsafe")
    return out


def starts_at(inclusive, bounds):
    """Global neighbour position (int64) where each row of ``bounds`` starts."""
    rows = np.asarray(bounds, np.int64)
    out = np.zeros(len(rows), np.int64)
    inner = rows > 0
    out[inner] = inclusive[rows[inner] - 1]
    return out


class SceneTables:
    """The scene's tables as numpy arrays, built with vectorised numpy only.

    Besides the GPU tables it keeps each span's name and category codes
    (``name_ids``, ``category_ids``, span ID order) and the lanes per thread
    (``thread_lanes``) for the trace's :class:`~gpuviz.trace.index.TraceIndex`."""

    def __init__(self, trace, label, sink=None):
        """``sink``: None (keep the arrays only) or ``(upload, upload_csr,
        write_records)`` callbacks receiving each table as soon as it is ready
        (``upload(name, array)``, ``upload_csr(name, csr)``,
        ``write_records(lo, hi, block)``: the records of rows lo..hi, in a buffer
        reused once the call returns), so the GPU writes overlap the rest of
        the preparation. Without a sink, ``records`` holds the whole table."""
        self._t0 = time.perf_counter()
        upload, upload_csr, write_records = sink if sink is not None else (None, None, None)
        who = f'GPUTraceScene "{label}"'
        spans = trace.spans
        n = spans.num_rows
        if n >= NO_PARENT:
            raise GraphValidationError(f"{who} cannot hold {n} spans (at most {NO_PARENT - 1})")
        partition = column_numpy(spans, "partition").astype(np.uint32, copy=False)
        parts = max(1, len(trace.sources), int(partition.max()) + 1 if n else 0,
                    int(column_numpy(trace.processes, "partition").max()) + 1 if trace.processes.num_rows else 0)
        if parts > MAX_PARTITIONS:
            raise GraphValidationError(f"{who} holds at most {MAX_PARTITIONS} partitions (got {parts})")
        self.perm = None
        self.bounds = np.zeros(parts + 1, np.int64)
        if n and not ascending(partition):
            self.perm = np.argsort(partition, kind="stable").astype(np.uint32)
            self.bounds[1:] = np.cumsum(np.bincount(partition, minlength=parts))
        else:  # grouped already: a binary search per partition
            self.bounds[1:-1] = np.searchsorted(partition, np.arange(1, parts, dtype=np.uint32), side="left")
            self.bounds[-1] = n
        self.n = n
        rank = None
        if self.perm is not None:
            rank = np.empty(n, np.uint32)
            rank[self.perm] = np.arange(n, dtype=np.uint32)
        start = column_numpy(spans, "start_ns")
        self.origin = int(start.min()) if n else 0
        links = trace.links
        if links.num_rows >= 2**32:
            raise GraphValidationError(f"{who} cannot hold {links.num_rows} links (at most 2**32 - 1)")
        source, target = column_numpy(links, "source").astype(np.uint32), column_numpy(links, "target").astype(np.uint32)
        if rank is not None:
            source, target = rank[source], rank[target]
        # Two pools: the record inputs (dense IDs, used flags) then the record transposes on one, the
        # four CSR sorts on the other, so the transposes never queue behind a long sort; everything
        # that does not need the parents starts before the main thread computes them.
        with ThreadPoolExecutor(WORKERS) as pool, ThreadPoolExecutor(CSR_WORKERS) as sorts:
            self.task_s = {}  # seconds each host task took (they overlap): where the preparation goes
            self.windows = {}  # (first start, last end) of each task and main-thread step, s since the start
            timed = self._timed
            dense = [pool.submit(timed(f"ids-{name}", dense_ids), table.column(name))
                     for table, name in ((spans, "name"), (spans, "category"), (links, "kind"))]
            used = [pool.submit(timed(f"used-{k}", used_rows), keys, n) for k, keys in ((1, source), (2, target))]
            args = pool.submit(lambda: spans.column("args").is_valid().to_numpy())
            lanes = pool.submit(thread_lane_counts, spans, trace.threads.num_rows)
            csr = {name: sorts.submit(timed(f"csr-{name}", self._link_csr), *keys)
                   for name, keys in (("links_forward", (source, target)), ("links_reverse", (target, source)))}
            self._window("main-setup", self._t0, time.perf_counter())
            mark = time.perf_counter()
            parent = column_numpy(spans, "parent")
            if rank is not None:
                parent = np.where(parent >= 0, rank[np.maximum(parent, 0)].astype(np.int64), -1)
                parent = parent[self.perm]
            self.parents = parent.astype(np.uint32)  # -1 (root) wraps to NO_PARENT
            del parent
            self.child_rows, self.parent_keys = child_rows(self.parents)
            used.insert(0, pool.submit(timed("used-0", used_rows), self.parent_keys, n))
            csr["hierarchy_reverse"] = sorts.submit(timed("csr-hierarchy_reverse", self._children_csr))
            csr["hierarchy_forward"] = sorts.submit(timed("csr-hierarchy_forward", self._parent_csr))
            self._window("main-parents", mark, time.perf_counter())
            if upload is not None:
                mark = time.perf_counter()
                upload("parents", self.parents)  # while the workers sort and encode
                self._window("main-write-parents", mark, time.perf_counter())
            mark = time.perf_counter()
            self.csr = {}
            inputs = [*dense, *used, args]
            while not all(job.done() for job in inputs):  # upload the CSRs done meanwhile
                open_csr = [job for name, job in csr.items() if name not in self.csr]
                done, _ = wait([*inputs, *open_csr], return_when=FIRST_COMPLETED)
                for name, job in csr.items():
                    if job in done and name not in self.csr:
                        self._take_csr(name, job, upload_csr)
            columns = self._record_columns(spans, start, args)
            (columns["name"], self.names), (columns["category"], self.categories), (kinds, self.link_kinds) = (
                job.result() for job in dense)
            self.name_ids, self.category_ids = columns["name"], columns["category"]
            columns["children"], columns["out"], columns["in"] = (job.result() for job in used)
            self._window("main-wait-inputs", mark, time.perf_counter())
            chunks = [(lo, min(n, lo + CHUNK_ROWS)) for lo in range(0, n, CHUNK_ROWS)]
            fill = timed("records", record_rows)
            if write_records is None:  # keep the whole table (no GPU to write it to)
                self.records = np.empty((n, RECORD_WORDS), np.uint32)
                pending = {pool.submit(fill, self.records[lo:hi], columns, self.origin, lo, hi): ("records", lo, hi)
                           for lo, hi in chunks}
            else:  # each chunk into a reused buffer, written to the GPU, then refilled
                self.records = None
                free = queue.SimpleQueue()
                for _ in range(min(len(chunks), 3 * WORKERS)):
                    free.put(np.empty((CHUNK_ROWS, RECORD_WORDS), np.uint32))

                def build(lo, hi):
                    buffer = free.get()
                    return fill(buffer[:hi - lo], columns, self.origin, lo, hi), buffer

                pending = {pool.submit(build, lo, hi): ("records", lo, hi) for lo, hi in chunks}
            pending.update({job: ("csr", name) for name, job in csr.items() if name not in self.csr})
            try:
                for job in as_completed(pending):  # each table goes to the GPU as soon as it is ready
                    what = pending[job]
                    if what[0] == "csr":
                        self._take_csr(what[1], job, upload_csr)
                    elif what[0] == "records" and write_records is not None:
                        mark = time.perf_counter()
                        block, buffer = job.result()
                        write_records(what[1], what[2], block)  # write_buffer copies: the buffer is free again
                        free.put(buffer)
                        self._window("main-write-records", mark, time.perf_counter())
                    else:
                        job.result()  # raises a record task's error
            except BaseException:  # let no worker wait for a buffer forever (the pools join on exit)
                for job in pending:
                    job.cancel()
                if write_records is not None:
                    for _ in range(WORKERS):
                        free.put(np.empty((CHUNK_ROWS, RECORD_WORDS), np.uint32))
                raise
            self.csr = {name: self.csr[name] for name in csr}
            self.thread_lanes = lanes.result()
        self.links = np.stack([source, target, kinds, np.arange(len(source), dtype=np.uint32)], axis=1)
        self.thread_process = column_numpy(trace.threads, "process").astype(np.uint32)

    def _timed(self, name, fn):
        """``fn`` adding its seconds to ``task_s[name]`` (summed over calls) and
        widening ``windows[name]``."""
        def run(*args):
            started = time.perf_counter()
            try:
                return fn(*args)
            finally:
                ended = time.perf_counter()
                self.task_s[name] = self.task_s.get(name, 0.0) + ended - started
                self._window(name, started, ended)
        return run

    def _take_csr(self, name, job, upload_csr):
        """A finished CSR job's tables, uploaded when there is a sink."""
        self.csr[name] = job.result()
        if upload_csr is not None:
            mark = time.perf_counter()
            upload_csr(name, self.csr[name])
            self._window(f"main-write-{name}", mark, time.perf_counter())

    def _window(self, name, started, ended):
        a, b = self.windows.get(name, (np.inf, 0.0))
        self.windows[name] = (min(a, started - self._t0), max(b, ended - self._t0))

    def _link_csr(self, key, other):
        order, offsets, starts = group_keys(key, self.n, self.bounds)
        return offsets, gather(other, order), order, starts

    def _children_csr(self):
        rows, keys = self.child_rows, self.parent_keys
        order, offsets, starts = group_keys(keys, self.n, self.bounds,
                                            edges=np.searchsorted(rows, self.bounds.astype(np.uint32)))
        return offsets, gather(rows, order), None, starts

    def _parent_csr(self):
        """Child -> parent: one neighbour per row that has a parent (a running count per partition)."""
        bounds, parts = self.bounds, len(self.bounds) - 1
        offsets = np.empty(self.n + parts, np.uint32)
        for p in range(parts):
            a, b = int(bounds[p]), int(bounds[p + 1])
            offsets[a + p] = 0
            count_parented(self.parents[a:b], offsets[a + p + 1:b + p + 1])
        starts = np.searchsorted(self.child_rows, bounds.astype(np.uint32)).astype(np.int64)
        return offsets, self.parent_keys, None, starts

    def _record_columns(self, spans, start, args):
        """The per-row inputs of the records, in row order (no copies when rows
        are IDs; ``args``: the job computing the args validity)."""
        perm = self.perm
        take = (lambda a: a) if perm is None else (lambda a: a[perm])
        columns = {name: take(column_numpy(spans, name)) for name in
                   ("duration_ns", "lane", "thread", "process", "depth", "incomplete", "partition")}
        columns["start"] = take(start).view(np.uint64)
        columns["args"] = take(args.result())
        columns["parents"] = self.parents
        columns["ids"] = perm  # None: rows are IDs (each block writes its own range)
        if perm is not None:  # dense IDs are computed in ID order
            columns["take"] = perm
        return columns


def used_rows(keys, n):
    """Which of n rows appear in ``keys`` (a bool per row): a scatter in slices
    (a bincount counts in 8 bytes per row and holds the GIL)."""
    used = np.zeros(n, np.bool_)
    for lo in range(0, len(keys), KEY_SLICE):
        used[keys[lo:lo + KEY_SLICE]] = True
    return used


def child_rows(parents):
    """(rows that have a parent, their parents), uint32, in slices (no intp per row)."""
    has = parents != NO_PARENT
    rows, keys = np.empty((2, int(np.count_nonzero(has))), np.uint32)
    at = 0
    for lo in range(0, len(parents), KEY_SLICE):
        local = np.flatnonzero(has[lo:lo + KEY_SLICE])
        k = len(local)
        np.add(local, lo, out=rows[at:at + k], casting="unsafe")
        np.take(parents[lo:lo + KEY_SLICE], local, out=keys[at:at + k], mode="clip")
        at += k
    return rows, keys


def thread_lane_counts(spans, thread_count):
    """Lanes per thread: the largest lane + 1 (0 for a thread without spans).

    Rows grouped by thread (every importer's) take one reduceat; otherwise
    ``maximum.at`` (which holds the GIL)."""
    lanes = np.zeros(thread_count, np.uint32)
    if not spans.num_rows:
        return lanes
    thread, lane = column_numpy(spans, "thread"), column_numpy(spans, "lane")
    if ascending(thread):
        starts = np.searchsorted(thread, np.arange(thread_count + 1).astype(thread.dtype), side="left")
        present = starts[:-1] < starts[1:]
        lanes[present] = np.maximum.reduceat(lane, starts[:-1][present]) + np.uint32(1)
    else:
        np.maximum.at(lanes, thread, lane.astype(np.uint32) + np.uint32(1))
    return lanes


def record_rows(out, columns, origin, lo, hi):
    """Records of rows lo..hi into ``out`` (hi - lo rows), in blocks that stay
    in cache while all 12 words are written; every word is computed straight
    into its strided place (``out=``), flags in bytes. Returns ``out``."""
    c = columns
    out64 = out.view(np.uint64)
    origin = np.uint64(origin & 0xFFFFFFFFFFFFFFFF)
    take, ids = c.get("take"), c["ids"]
    u8, u32 = np.uint8, np.uint32
    flags = np.empty(BLOCK_ROWS, u8)
    bit = np.empty(BLOCK_ROWS, u8)
    iota = np.arange(BLOCK_ROWS, dtype=u32)
    for a in range(lo, hi, BLOCK_ROWS):
        b = min(hi, a + BLOCK_ROWS)
        k = b - a
        rows, rows64 = out[a - lo:b - lo], out64[a - lo:b - lo]
        f, t = flags[:k], bit[:k]
        duration = c["duration_ns"][a:b]
        np.subtract(c["start"][a:b], origin, out=rows64[:, 0])
        rows64[:, 1] = duration.view(np.uint64)
        for word, name in ((4, "lane"), (5, "thread"), (6, "process"), (7, "depth")):
            rows[:, word] = c[name][a:b]
        if take is None:
            rows[:, 8] = c["name"][a:b]
            rows[:, 9] = c["category"][a:b]
        else:
            np.take(c["name"], take[a:b], out=rows[:, 8], mode="clip")  # clip: no buffered copy (IDs are valid)
            np.take(c["category"], take[a:b], out=rows[:, 9], mode="clip")
        np.left_shift(c["args"][a:b].view(u8), 1, out=f)  # the FLAG_* bits, low to high
        np.bitwise_or(f, c["incomplete"][a:b].view(u8), out=f)
        for shift, bools in ((3, c["children"][a:b]), (4, c["out"][a:b]), (5, c["in"][a:b])):
            np.left_shift(bools.view(u8), shift, out=t)
            np.bitwise_or(f, t, out=f)
        np.equal(c["parents"][a:b], NO_PARENT, out=t.view(np.bool_))  # root
        np.left_shift(t, 2, out=t)
        np.bitwise_or(f, t, out=f)
        np.equal(duration, 0, out=t.view(np.bool_))  # zero duration
        np.left_shift(t, 6, out=t)
        np.bitwise_or(f, t, out=f)
        word10 = rows[:, 10]
        np.left_shift(c["partition"][a:b], u32(PARTITION_SHIFT), out=word10)
        np.bitwise_or(word10, f, out=word10)
        if ids is None:
            np.add(iota[:k], u32(a), out=rows[:, 11])
        else:
            rows[:, 11] = ids[a:b]
    return out
