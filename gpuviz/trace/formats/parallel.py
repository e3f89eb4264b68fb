"""Decoding one large Trace Event array in worker processes.

The event array is cut into one chunk per worker at event boundaries
(``}`` ``,`` ``{`` outside strings: a guess inside a string makes that
chunk fail to decode, and then the caller decodes serially); each worker
runs :func:`~gpuviz.trace.formats.jsonevents.decode_parts` on its chunk
and returns the column tuples, with the few events kept as objects
(non-X phases) re-encoded as JSON. Only used in non-strict mode, where
problems are counted, not located, so chunk-local event indexes suffice.

On 2-3 CPUs a pool's transfers cost more than they save, so
:func:`decode_forked` instead splits the array in two at a block boundary
and lets a forked child (sharing the parent's pages) decode the second part
while the parent decodes the first (a little larger: :data:`PARENT_SHARE`);
only the child's columns travel back, through shared memory.
"""

import os
import re
import threading
import time


__all__ = ["decode_parallel", "decode_forked", "event_span", "FORK_ALWAYS", "FORK_TIMEOUT_S"]

_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_MIN_CHUNK = 24 << 20
#: Fewer CPUs than this: never parallel unless ``workers`` is given.
MIN_CPUS = 4
def _worker(args):
    chunk, path, decode_parts, reporter_class = args
    reporter = reporter_class(path, False)
    try:
        parts = decode_parts(memoryview(b"[" + chunk + b"]"), path, reporter)
    except Exception:  # noqa: BLE001 - any failure here means: decode serially
        return None
    # part[11] is already (event indexes, JSON blob of the kept events).
    return parts, reporter.counts


def event_span(buf):
    """(first byte after '[' and whitespace, index of the closing ']') of a
    JSON event array (also :mod:`~gpuviz.trace.formats.jsonevents`' reader)."""
    n = len(buf)
    pos = 1
    while pos < n and buf[pos] in b" \t\r\n":
        pos += 1
    end = n - 1
    while end > pos and buf[end] != ord("]"):
        end -= 1
    return pos, end


def _chunks(buf, count):
    pos, end = event_span(buf)
    cuts = [pos]
    for j in range(1, count):
        target = pos + (end - pos) * j // count
        m = _BOUNDARY.search(buf, max(target, cuts[-1] + 1), end)
        if m is None:
            break
        cuts.append(m.start() + 1)
    cuts.append(end)
    chunks = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        piece = bytes(buf[a:b]).strip(b" \t\r\n,")
        if piece:
            chunks.append(piece)
    return chunks


def decode_parallel(buf, path, reporter, progress=None, workers=None, *, decode_parts, event_type):
    """Block column tuples of a large event array, or None (decode serially).

    ``decode_parts`` and ``event_type`` are jsonevents' block decoder and
    event Struct (passed in, so this module does not import its caller).
    """
    cpus = os.cpu_count() or 1
    if workers is None and cpus < MIN_CPUS:
        return None             # on 2-3 cores the transfers eat the gain
    count = workers or min(cpus, max(1, len(buf) // _MIN_CHUNK))
    if count < 2:
        return None
    chunks = _chunks(buf, count)
    if len(chunks) < 2:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["gpuviz.trace.formats.jsonevents"])
    results = []
    try:
        with ProcessPoolExecutor(max_workers=len(chunks), mp_context=ctx) as pool:
            jobs = [(c, path, decode_parts, type(reporter)) for c in chunks]
            for chunk, result in zip(chunks, pool.map(_worker, jobs)):
                if result is None:
                    return None
                results.append(result)
                if progress is not None:
                    progress(len(chunk))
    except (OSError, RuntimeError, BrokenProcessPool):
        return None             # no worker processes here (e.g. __main__ not importable): serial

    parts, first = [], 0
    for chunk_parts, counts in results:
        for part in chunk_parts:
            keys, blob = part[11]
            flow_index, flow_id, flow_bp = part[12]
            parts.append(part[:11] + ((keys + first, blob), (flow_index + first, flow_id, flow_bp)))
        first += sum(len(p[0]) for p in chunk_parts)
        for reason, n in counts.items():
            reporter.counts[reason] = reporter.counts.get(reason, 0) + n
    return parts


#: Share of the events the parent decodes itself (the cut is the block
#: boundary nearest to it): more than half, as the child decodes ~15%
#: slower (fresh memory, cold caches) and still has to hand its columns
#: back; an even split leaves the parent waiting for the child.
PARENT_SHARE = 0.55


#: A forked child that has not answered after this many seconds (plus ten
#: times what the parent's half took) is killed and its half decoded here.
FORK_TIMEOUT_S = 30.0


def decode_forked(buf, path, reporter, progress=None, *, decode_parts, block):
    """Block column tuples of an event array decoded in two halves at once:
    the second by a forked child (it shares the parent's pages, nothing is
    copied to it), the first here; or None: the caller decodes serially.

    For machines with 2-3 CPUs, where a worker pool's transfers cost more
    than they save. Non-strict only. Both halves count problems privately
    and the counts join ``reporter`` only when both succeeded, so a broken
    document, a bad cut (inside a string), a failed or hung child all end
    in the serial decode with exactly its report (``progress`` may then
    have been told about the first half twice). Does nothing without
    ``os.fork`` or a second CPU.
    """
    if not hasattr(os, "fork") or not _idle_cpu():
        return None
    pos, end = event_span(buf)
    halves = _middle_block_boundary(buf, pos, end, block, PARENT_SHARE)
    if halves is None:
        return None
    cut, rest = halves

    def work():
        # first_index=1: block-local rules for the file's first block
        # ("no element is an event") must not fire in the second half.
        mine = type(reporter)(path, False)
        return decode_parts(buf, path, mine, span=(rest, end), first_index=1, exact_blocks=True), mine.counts
    child = _fork_child(work, in_place=_span_text_buffers)
    if child is None:
        return None
    started = time.perf_counter()
    mine = type(reporter)(path, False)
    try:
        first = decode_parts(buf, path, mine, progress=progress, span=(pos, cut), exact_blocks=True)
    except Exception:
        _reap(child, kill=True)
        _close_fds(child)
        return None
    except BaseException:
        _reap(child, kill=True)
        _close_fds(child)
        raise
    try:
        got = _receive(child, FORK_TIMEOUT_S + 10 * (time.perf_counter() - started))
    finally:
        _close_fds(child)
    if got is None:
        return None
    second, counts = got
    shift = sum(len(p[0]) for p in first) - 1
    second = [p[:11] + ((p[11][0] + shift, p[11][1]), (p[12][0] + shift, p[12][1], p[12][2])) for p in second]
    for part in (mine.counts, counts):
        for reason, n in part.items():
            reporter.counts[reason] = reporter.counts.get(reason, 0) + n
    if progress is not None:
        progress(end - cut)
    return first + second


def _idle_cpu():
    """Is a second CPU of this process likely idle? Runnable tasks right now
    (the fewest of a few samples of /proc/stat, this thread included; the
    1-minute load average where there is none) below the CPU count minus one
    half. On a machine whose CPUs are all busy the second half would only add
    the transfer's cost. (The load average alone kept forks off for a minute
    after this process's own earlier work, e.g. a previous import.)"""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2:
        return False
    if FORK_ALWAYS:
        return True
    load = _runnable_now(idle_below=cpus - 0.5)
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
    return load < cpus - 0.5


def _runnable_now(samples=3, gap_s=0.001, idle_below=0.0):
    """The fewest runnable tasks (``procs_running``) in ``samples`` reads of
    /proc/stat ``gap_s`` apart, or None without it. A read below
    ``idle_below`` ends the sampling: the fewest can only be lower, and
    further gaps would cost the import time for nothing."""
    fewest = None
    for k in range(samples):
        if k:
            if fewest < idle_below:
                break
            time.sleep(gap_s)
        try:
            with open("/proc/stat", "rb") as f:
                running = next((int(line.split()[1]) for line in f if line.startswith(b"procs_running ")), None)
        except (OSError, ValueError, IndexError):
            return None
        if running is None:
            return None
        fewest = running if fewest is None else min(fewest, running)
    return fewest


#: Fork even when every CPU looks busy (tests, benchmarks).
FORK_ALWAYS = False


def _middle_block_boundary(buf, pos, end, block, share=0.5):
    """The boundary between two of the blocks a whole-array decode uses
    (``decode_parts``: each block ends at the first event boundary at least
    ``block`` bytes after its start) with the (estimated) ``share`` of the
    events before it: (cut, next start),
    or None for a single block. Same blocks, same columns: block-local
    details (e.g. pid text of a block decoded by the general Struct) stay
    exactly as in the serial decode."""
    bounds, starts = [], [pos]
    while end - pos > block:
        m = _BOUNDARY.search(buf, pos + block, end)
        if m is None:
            break
        cut = m.start() + 1
        pos = cut
        while pos < end and buf[pos] in b" \t\r\n,":
            pos += 1
        bounds.append((cut, pos))
        starts.append(pos)
    if not bounds:
        return None
    # Decoding costs about the same per event, X or flow, whatever its size:
    # halve the events, not the bytes (short flow and metadata
    # events often fill the end of a file), sampled in each block.
    ends = [b[0] for b in bounds] + [end]
    events = [_event_density(buf, a, b) * (b - a) for a, b in zip(starts, ends)]
    half, total, best = sum(events) * share, 0.0, None
    for k, (cut, rest) in enumerate(bounds):
        total += events[k]
        if best is None or abs(total - half) < best[0]:
            best = (abs(total - half), (cut, rest))
    return best[1]


def _event_density(buf, lo, hi, sample=1 << 14):
    """Events per byte in ``buf[lo:hi]``, from its first ``sample`` bytes
    (``"ph"`` keys; at least 1, e.g. when every key is escaped)."""
    window = bytes(buf[lo:min(hi, lo + sample)])
    return max(window.count(b'"ph"'), 1) / max(len(window), 1)


def _span_text_buffers(result):
    """Addresses of the Arrow buffers of the name, cat and args columns of
    a half's block tuples: the trace's span columns are slices of them, so
    they stay in the shared memory (see :func:`_layout`)."""
    return {b.address for part in result[0] for k in (1, 2, 5) for b in part[k].buffers() if b is not None}


def _fork_child(work, in_place=None):
    """Fork; the child sends ``work()`` back through shared memory: pickled
    (protocol 5, buffers out of band) into a memfd, each piece at an
    aligned offset (see :func:`_layout`), then a header through a pipe (a
    count, the sizes, a byte per piece: 1 for one the parent copies out).
    The header is written last, so a complete header means complete data.
    ``in_place(result)``: addresses of the Arrow buffers the parent reads in
    place (default none). (pid, pipe's read fd, memfd) or None.

    Through a pipe the transfer is slow (64 KB at a time, the parent
    copying it into fresh buffers); through the memfd it is one write in the child and, for most of it, no
    copy in the parent."""
    import pickle
    if not hasattr(os, "memfd_create"):
        return None
    try:
        shared = os.memfd_create("gpuviz-fork", os.MFD_CLOEXEC)
    except OSError:
        return None
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (read, write, shared):
            os.close(fd)
        return None
    if pid:
        os.close(write)
        return pid, read, shared
    status = 1
    try:                       # the child: never returns
        import pyarrow as pa
        os.close(read)
        buffers = []
        result = work()
        head = pickle.dumps(result, protocol=5, buffer_callback=buffers.append)
        keep = in_place(result) if in_place else set()
        del result
        raws = [memoryview(head)] + [b.raw() for b in buffers]
        sizes = [r.nbytes for r in raws]
        owners = [memoryview(b).obj for b in buffers]
        copied = [0] + [int(not (isinstance(o, pa.Buffer) and o.address in keep)) for o in owners]
        offsets, _, total = _layout(sizes, copied)
        # Written, not copied into a mapping: the write fills fresh pages
        # without a page fault each (about half the time of a mapping).
        padded, at = [], 0
        for k in sorted(range(len(raws)), key=offsets.__getitem__):
            padded += [_ZEROS[:offsets[k] - at], raws[k]]
            at = offsets[k] + sizes[k]
        os.ftruncate(shared, total)
        _write_all(shared, padded, at=0)
        header = (len(sizes).to_bytes(8, "little") + b"".join(n.to_bytes(8, "little") for n in sizes)
                  + bytes(copied))
        _write_all(write, [memoryview(header)])
        os.close(write)
        status = 0
    finally:
        os._exit(status)


#: Offsets of the pieces in the shared memory are multiples of this (the
#: alignment Arrow allocates with: numpy and Arrow read them in place).
_ALIGN = 64
_PAGE = 4096
_ZEROS = memoryview(bytes(_PAGE))


def _layout(sizes, copied):
    """(offset of each piece, end of the mapped part, total bytes) of
    pieces laid out at :data:`_ALIGN`-byte boundaries: first those read in
    place (``copied[k]`` false), then, from a page boundary, those the
    parent copies out: one mapping stays whole as long as any column of
    the trace uses it, so only what the trace keeps is read in place; the
    copies of the rest (numbers the columns concatenate, ph/pid/tid) are
    freed as usual, which keeps the peak memory of imports in a row lower."""
    offsets, at = [0] * len(sizes), 0
    for group in (0, 1):
        if group:
            at = -(-at // _PAGE) * _PAGE
            split = at
        for k, n in enumerate(sizes):
            if bool(copied[k]) == bool(group):
                offsets[k] = at
                at += -(-n // _ALIGN) * _ALIGN
    return offsets, split, at


def _write_all(fd, views, at=None):
    """Write every byte of ``views`` (memoryviews) to ``fd``, many per call;
    ``at``: from that offset of a file (pwritev) instead of a pipe."""
    views = [v.cast("B") for v in views if v.nbytes]
    k = 0
    while k < len(views):
        batch = views[k:k + _IOV]
        n = os.writev(fd, batch) if at is None else os.pwritev(fd, batch, at)
        if at is not None:
            at += n
        while k < len(views) and n >= views[k].nbytes:      # whole buffers written
            n -= views[k].nbytes
            k += 1
        if n:                                              # part of one: the rest next time
            views[k] = views[k][n:]


#: Buffers per writev call (Linux's IOV_MAX).
_IOV = 1024


def _read_exactly(fd, size, deadline):
    """``size`` bytes from ``fd`` (a bytearray), or None at EOF or the deadline."""
    import select
    out = bytearray(size)
    view = memoryview(out)
    got = 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return None
        got += n
    return out


def _receive(child, timeout):
    """The child's result, or None when it failed or took longer than
    ``timeout`` (then it is killed). Does not close the child's fds."""
    import mmap
    import pickle
    pid, read, shared = child
    deadline = time.monotonic() + timeout
    count = _read_exactly(read, 8, deadline)
    count = None if count is None else int.from_bytes(count, "little")
    header = None if count is None else _read_exactly(read, 9 * count, deadline)
    if header is None:
        _reap(child, kill=True)
        return None
    sizes = [int.from_bytes(header[k:k + 8], "little") for k in range(0, 8 * count, 8)]
    copied = header[8 * count:]
    offsets, split, _ = _layout(sizes, copied)
    try:
        # Populated at once: one call maps every page instead of a fault per page.
        memory = memoryview(mmap.mmap(shared, split, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
                            if split else b"")
        pieces = []
        for at, n, copy in zip(offsets, sizes, copied):
            if copy:
                piece = bytearray(n)
                if n and os.preadv(shared, [piece], at) != n:
                    raise OSError("short read")
            else:
                piece = memory[at:at + n]
            pieces.append(piece)
        os.ftruncate(shared, split)          # the copied part's pages go now
    except (OSError, ValueError):
        _reap(child, kill=True)
        return None
    # The child is done (its header is complete); its exit (unmapping its
    # memory) need not be waited for here.
    threading.Thread(target=_reap, args=(child,), daemon=True).start()
    return pickle.loads(pieces[0], buffers=pieces[1:])


def _close_fds(child):
    """Close the parent's ends of a child's pipe and shared memory (a
    mapping made of the memory stays valid)."""
    for fd in child[1:]:
        os.close(fd)


def _reap(child, kill=False):
    """Wait for the child (SIGKILL first when ``kill``); its exit status."""
    import signal
    pid = child[0]
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:
        return -1
