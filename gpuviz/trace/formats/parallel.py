"""Decoding one large Trace Event array in worker processes.

The event array is cut into one chunk per worker at event boundaries
(``}`` ``,`` ``{`` outside strings: a guess inside a string makes that
chunk fail to decode, and then the caller decodes serially); each worker
runs :func:`~gpuviz.trace.formats.jsonevents.decode_parts` on its chunk
and returns the column tuples, with the few events kept as objects
(non-X phases) re-encoded as JSON. Only used in non-strict mode, where
problems are counted, not located, so chunk-local event indexes suffice.
"""

import os
import re


__all__ = ["decode_parallel"]

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


def _event_span(buf):
    """(first byte after '[' and whitespace, index of the closing ']')."""
    n = len(buf)
    pos = 1
    while pos < n and buf[pos] in b" \t\r\n":
        pos += 1
    end = n - 1
    while end > pos and buf[end] != ord("]"):
        end -= 1
    return pos, end


def _chunks(buf, count):
    pos, end = _event_span(buf)
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
        return None             # on 2-3 cores the transfers eat the gain (measured)
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
