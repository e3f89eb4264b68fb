"""Trace Event JSON bytes -> event columns, fast, exact, and tolerant.

The parser is msgspec (chosen by measurement against the other fast JSON
parsers, see docs/benchmarks.md): events decode into a typed ``Struct`` whose numeric and
ID fields are ``msgspec.Raw`` — the exact JSON text — so ``ts``/``dur`` are
converted to int64 ns from their decimal text by Arrow's string -> decimal
cast (1.1 us is exactly 1100 ns; digits below 1 ns are truncated toward
zero), never through a float. Events are decoded in blocks of a few MB cut at
event boundaries, so peak memory stays near the size of the file.

Broken files: when the whole document does not decode, a string-aware
bracket scan (numpy) finds every complete event before the error; those are
kept and the rest is reported (``truncated`` when the damage is at the end,
``bad_json`` otherwise).
"""

import contextlib
import gzip
import mmap
import os
import re
import threading
import zlib
from dataclasses import dataclass, field
from typing import Literal

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import TraceFormatError

try:  # ISA-L's inflate: the same deflate streams, about twice zlib's speed
    from isal import isal_zlib as _inflate
    _INFLATE_ERRORS = (zlib.error, _inflate.error)
except ImportError:  # pragma: no cover - isal is a dependency; zlib is the fallback where it has no wheel
    _inflate = zlib
    _INFLATE_ERRORS = (zlib.error,)
from .fastblock import block_columns
from .parallel import event_span
from .rawtext import args_text, id_text, ids_as_text, raw_text, raw_to_binary, raw_to_ns

__all__ = ["read_bytes", "take_bytes", "decode_events", "decode_parts", "event_span", "EventColumns", "Reporter", "Event",
           "raw_text", "raw_to_binary", "raw_to_ns", "PARALLEL_BYTES", "FAST_COLUMNS", "import_memory_pool",
           "release_free_memory"]

#: Bytes per decoded block: small enough that a block's event objects and
#: per-field lists stay in the CPU caches, large enough that per-block
#: calls are cheap.
_BLOCK = 512 << 10
_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_ERROR_BYTE = re.compile(r"\(byte (\d+)\)")
_EMPTY = msgspec.Raw(b"")


class _Rare(msgspec.Struct, gc=False):
    """What the phase logic reads of a kept event (pid/tid/ts/dur are columns)."""
    ph: str = ""
    name: str = ""
    cat: str = ""
    args: msgspec.Raw = _EMPTY
    id: msgspec.Raw = _EMPTY
    id2: msgspec.Raw = _EMPTY
    bp: str = ""
    s: str = ""
    bind_id: msgspec.Raw = _EMPTY
    flow_in: bool = False
    flow_out: bool = False


class Event(_Rare, gc=False, omit_defaults=True):
    """One Trace Event: the fields of a kept event plus those that become
    columns; ``Raw`` fields keep the exact JSON text."""
    pid: msgspec.Raw = _EMPTY
    tid: msgspec.Raw = _EMPTY
    ts: msgspec.Raw = _EMPTY
    dur: msgspec.Raw = _EMPTY


class _Absent:
    """Type of the flow v2 fields in :class:`_FastEvent`: any value fails
    (see :func:`_reject`), so a block that decodes as _FastEvent has none."""


def _reject(kind, value):
    raise ValueError("flow v2 key: decoded with the full Event type")


#: Phase letters of the Trace Event format (documented ones): decoded as
#: Literal, each is one shared str object, so comparing them is an
#: identity check and no string is made per event.
_PHASE_LETTERS = Literal["X", "B", "E", "b", "e", "n", "S", "T", "p", "F", "s", "t", "f", "M", "C", "i", "I",
                         "P", "O", "N", "D", "R", "c", "V", "v", "(", ")"]


class _FastEvent(msgspec.Struct, gc=False, omit_defaults=True):
    """Event's fields with pid/tid decoded as int or str (cheaper than Raw
    text) and ph as one of the known letters; a block holding anything else
    there, or any flow v2 key (``flow_in``/``flow_out``/``bind_id``, which
    then need no check per event), is decoded again as Event. Fields in the
    PyTorch profiler's key order: msgspec tries the field after the last
    one matched first, so this order decodes faster than Event's."""
    ph: _PHASE_LETTERS = ""
    cat: str = ""
    name: str = ""
    pid: int | str = ""
    tid: int | str = ""
    ts: msgspec.Raw = _EMPTY
    dur: msgspec.Raw = _EMPTY
    args: msgspec.Raw = _EMPTY
    id: msgspec.Raw = _EMPTY
    id2: msgspec.Raw = _EMPTY
    bp: str = ""
    s: str = ""
    bind_id: _Absent = _EMPTY         # the defaults read as Event's (so the reference columns work too)
    flow_in: _Absent = False
    flow_out: _Absent = False


_DECODER = msgspec.json.Decoder(list[Event])
_FAST_DECODER = msgspec.json.Decoder(list[_FastEvent], dec_hook=_reject)
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_HEADER = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RARE_ENCODER = msgspec.json.Encoder()
_RARE_DECODER = msgspec.json.Decoder(list[_Rare])


class Reporter:
    """Counts problems by reason; in strict mode raises at the first one."""

    def __init__(self, path, strict):
        self.path, self.strict, self.counts = path, strict, {}

    def add(self, reason, count=1, *, index=None, offset=None):
        if count <= 0:
            return
        if self.strict:
            raise TraceFormatError(self.path, reason, index=index, offset=offset)
        self.counts[reason] = self.counts.get(reason, 0) + int(count)

    def add_mask(self, reason, mask, indexes=None):
        """Add ``mask.sum()`` problems; strict names the first event index
        (``indexes[mask].min()``; without ``indexes`` the mask is over all
        events, so its first set position)."""
        count = int(np.count_nonzero(mask))
        if count:
            first = int(np.argmax(mask)) if indexes is None else int(np.asarray(indexes)[mask].min())
            self.add(reason, count, index=first)

    def note(self, reason, count=1):
        """A count that is information, never an error (``lanes_added``)."""
        if count:
            self.counts[reason] = self.counts.get(reason, 0) + int(count)


@dataclass
class EventColumns:
    """Columns of all decoded events, in file order (index = event index)."""
    ph: pa.ChunkedArray    # one chunk per block (not concatenated), as name, cat, pid, tid, args
    name: pa.Array
    cat: pa.Array
    pid: pa.Array          # int64, or text with quotes stripped ("25738" and 25738 agree)
    tid: pa.Array
    ts_ns: np.ndarray      # int64
    ts_ok: np.ndarray      # bool: ts present and a valid number
    dur_ns: np.ndarray
    dur_ok: np.ndarray
    has_dur: np.ndarray
    args: pa.Array         # JSON text or null
    rare: dict = field(default_factory=dict)   # event index -> kept event (non-X phases, flow v2 slices)
    header: dict = field(default_factory=dict)  # top-level keys other than traceEvents (decoded)
    flows: dict = field(default_factory=dict)   # s/t/f events: "index" (sorted), "id" (text), "bp_e" (bool)

    def __len__(self):
        return len(self.ph)


#: Plain (not gzipped) files at least this large are memory-mapped, and the
#: pages of decoded blocks are handed back, so the file never sits whole in
#: memory next to its columns (peak RSS).
MMAP_BYTES = 8 << 20


def read_bytes(path):
    """The file's bytes, gunzipped when it starts with the gzip magic; a
    read-only ``mmap.mmap`` for plain files of :data:`MMAP_BYTES` or more.

    A cut or damaged .gz keeps what decompresses before the damage (the
    JSON layer then reports the truncation); nothing at all is an error.
    """
    with open(path, "rb") as f:
        if _file_size(f) >= MMAP_BYTES and f.read(2) != b"\x1f\x8b":
            try:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                pass
        f.seek(0)
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = _gunzip(data)
        except (OSError, EOFError, ValueError, *_INFLATE_ERRORS) as exc:
            data = _partial_gunzip(path, data, exc)
    return data


def _gunzip(data):
    """gzip.decompress, cheaper for the usual single member: the output is
    written into one buffer of the size the gzip trailer gives (zlib's own
    growing output blocks, then joined, fault in and copy twice the
    output); anything else (several members, damage) goes to
    gzip.decompress itself, with its own errors. The result is a bytearray
    for large outputs (read-only use, like bytes)."""
    try:
        # the trailer's size is only a hint (a damaged file may hold anything there)
        size = min(int.from_bytes(data[-4:], "little"), len(data) * 64) if len(data) >= 18 else 0
        d = _inflate.decompressobj(31)
        if size < _GUNZIP_STEP * 4:
            out = d.decompress(data)
        else:
            out = bytearray(size)
            at = 0
            view = memoryview(data)
            for lo in range(0, len(data), _GUNZIP_STEP):
                piece = d.decompress(view[lo:lo + _GUNZIP_STEP])
                end = at + len(piece)
                if end > size:          # a wrong or wrapped (>= 4 GiB) size, or several members
                    grow = max(end, size * 3 // 2) - size
                    out.extend(bytes(grow))
                    size += grow
                out[at:end] = piece
                at = end
                if d.eof:
                    break
            del out[at:]
        if d.eof and not d.unused_data.strip(b"\x00"):
            return out
    except _INFLATE_ERRORS:
        pass
    return gzip.decompress(data)


#: Compressed bytes per zlib call in :func:`_gunzip` (each call's output, a
#: few hundred KB, is freed and its memory reused by the next).
_GUNZIP_STEP = 64 << 10


def _file_size(f):
    try:
        return os.fstat(f.fileno()).st_size
    except OSError:
        return 0


def _page_release(data, base):
    """For an mmap'ed file: ``release(nbytes)`` hands back the pages of the
    first ``nbytes`` decoded after byte ``base`` (they are re-read from the
    page cache if touched again, so this is only about memory)."""
    if not isinstance(data, mmap.mmap) or not hasattr(data, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return None
    done = [0, 0]              # bytes decoded, bytes handed back

    def release(nbytes):
        done[0] += nbytes
        upto = (base + done[0]) // mmap.PAGESIZE * mmap.PAGESIZE
        if upto > done[1]:
            try:
                data.madvise(mmap.MADV_DONTNEED, done[1], upto - done[1])
                done[1] = upto
            except (OSError, ValueError):
                pass
    return release


def _address(buf):
    return np.frombuffer(buf, np.uint8).ctypes.data if len(buf) else 0


_POOL_LOCK = threading.Lock()
_POOL_STATE = {"depth": 0, "saved": None}


@contextlib.contextmanager
def import_memory_pool():
    """Arrow allocations inside come from the system allocator when
    pyarrow's default is mimalloc, which keeps the freed temporaries of the
    per-block conversions resident (jemalloc and glibc give them back). numpy's
    transparent-huge-page hint for large arrays is off inside too: an
    import makes hundreds of short-lived arrays of a few MB, and faulting
    in (zeroing) a fresh huge page for each costs more than the work on
    them. Both are restored when the outermost import ends
    (nested and concurrent imports share one switch). Does not change any
    other pool."""
    with _POOL_LOCK:
        if _POOL_STATE["depth"] == 0:
            current = pa.default_memory_pool()
            if current.backend_name == "mimalloc":
                _POOL_STATE["saved"] = current
                pa.set_memory_pool(pa.system_memory_pool())
            _POOL_STATE["hugepage"] = _set_hugepage(False)
        _POOL_STATE["depth"] += 1
    try:
        yield
    finally:
        with _POOL_LOCK:
            _POOL_STATE["depth"] -= 1
            if _POOL_STATE["depth"] == 0:
                if _POOL_STATE["saved"] is not None:
                    pa.set_memory_pool(_POOL_STATE["saved"])
                    _POOL_STATE["saved"] = None
                if _POOL_STATE.get("hugepage") is not None:
                    _set_hugepage(_POOL_STATE.pop("hugepage"))


def release_free_memory(nbytes=None):
    """Hand the C heap's free pages back to the system (glibc
    ``malloc_trim``; nothing elsewhere). Decoding leaves the heap full of
    holes between the kept block columns (freed event objects and per-block
    temporaries) that later large arrays cannot reuse; trimming costs a
    little time and saves much resident memory. ``nbytes``: the size of the
    decoded text; below :data:`TRIM_BYTES` nothing is done (the pages kept
    are few, and the rest of the import reuses them instead of faulting in
    fresh ones)."""
    if nbytes is not None and nbytes < TRIM_BYTES:
        return
    trim = _MALLOC_TRIM[0] if _MALLOC_TRIM else _malloc_trim()
    if trim is not None:
        trim(0)


_MALLOC_TRIM = []
#: See :func:`release_free_memory`.
TRIM_BYTES = 32 << 20


def _malloc_trim():
    try:
        import ctypes
        trim = ctypes.CDLL(None).malloc_trim        # glibc only; CDLL(None) itself fails on Windows
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    except (OSError, AttributeError, ImportError, TypeError):
        trim = None
    _MALLOC_TRIM.append(trim)
    return trim


def _set_hugepage(enabled):
    """Turn numpy's madvise(MADV_HUGEPAGE) for large arrays on or off; the
    previous setting, or None where this numpy has no such switch."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if switch is None:
        return None
    try:
        return bool(switch(bool(enabled)))
    except (TypeError, ValueError, RuntimeError):
        return None


def take_bytes(path, data):
    """``data`` as bytes: read the file when None; take it out of a
    one-element list (the caller's holder) so no other reference stays."""
    if data is None:
        return read_bytes(path)
    if isinstance(data, list):
        return data.pop()
    return data


def _partial_gunzip(path, data, exc):
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = []
    step = 1 << 16
    for at in range(0, len(data), step):
        try:
            out.append(d.decompress(data[at:at + step]))
        except zlib.error:
            break
        if d.eof:
            break
    text = b"".join(out)
    if not text:
        raise TraceFormatError(path, f"corrupt gzip data ({exc})", offset=0)
    return text


def _find_array(data, path):
    """(is_object, offset of the first '[' or '{'); raises for non-JSON."""
    i = 0
    n = len(data)
    while i < n and data[i] in b" \t\r\n":
        i += 1
    if data[:3] == b"\xef\xbb\xbf":
        i = 3
    if i >= n:
        raise TraceFormatError(path, "empty file", offset=0)
    first = data[i:i + 1]
    if first == b"[":
        return False, i
    if first == b"{":
        return True, i
    raise TraceFormatError(path, f"not a JSON trace (starts with {data[i:i + 8]!r})", offset=i)


#: False: an object document always takes the full header pass, never the
#: located events array (the differential fuzz target compares the two).
LOCATE_EVENTS = True


def decode_events(data, path, reporter, progress=None):
    """Decode the events of a Trace Event JSON document into :class:`EventColumns`.

    Raises :class:`TraceFormatError` for data that is not a trace at all (in
    both modes); reports what a broken but readable trace lost.
    ``progress(nbytes)`` is called as blocks are decoded.
    """
    is_object, start = _find_array(data, path)
    header = {}
    events_buf = None
    if is_object and not reporter.strict and LOCATE_EVENTS:
        located = _locate_events(data, start)
        if located is not None:
            guess = type(reporter)(path, False)
            try:
                cols = _decode_object_events(data, path, guess, progress, *located)
            except (msgspec.DecodeError, _Resplit, TraceFormatError, RecursionError):
                pass         # a wrong guess or a broken file: the full pass below decides
            else:
                for reason, n in guess.counts.items():
                    reporter.counts[reason] = reporter.counts.get(reason, 0) + n
                return cols
    try:
        if is_object:
            # from the '{' on: a UTF-8 byte order mark is skipped, as for a bare array
            top = _HEADER.decode(memoryview(data)[start:] if start else data)
            if "traceEvents" not in top:
                raise TraceFormatError(path, "JSON object without \"traceEvents\" (not a Trace Event file)", offset=start)
            events_buf = memoryview(top.pop("traceEvents"))
            base = _address(events_buf) - _address(data) if isinstance(data, mmap.mmap) else 0
            header = _header_values(top)
        else:
            # Blocks validate themselves; only the end needs a look here.
            tail = data[-4096:].rstrip()      # not data.rstrip(): that copies the whole file
            if not tail and len(data) > 4096:
                tail = bytes(data).rstrip()
            if tail[-1:] != b"]":
                raise msgspec.DecodeError(f"Input data was truncated (byte {len(data)})")
            events_buf = memoryview(data)[start:]
            base = start
        if bytes(events_buf[:1]) != b"[":
            raise TraceFormatError(path, "\"traceEvents\" is not an array", offset=start)
        release = _page_release(data, base)
        if release is not None and is_object:
            data.madvise(mmap.MADV_DONTNEED)      # the header decode touched every page
        return _decode_blocks(events_buf, path, reporter, header, base_offset=0 if is_object else start,
                              progress=_both(progress, release))
    except (msgspec.DecodeError, _Resplit) as exc:
        message = str(exc)
        try:
            return _decode_broken(data, path, reporter, is_object, start, message)
        except RecursionError:
            raise TraceFormatError(path, "JSON nested too deeply") from None
    except RecursionError:
        raise TraceFormatError(path, "JSON nested too deeply") from None


#: The header of a Trace Event object (everything but its "traceEvents"
#: array) is read by :func:`_locate_events` only up to this size.
HEADER_GUESS_BYTES = 1 << 20
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')


def _locate_events(data, start):
    """Where the top-level "traceEvents" array of an object document lies,
    without the full pass :data:`_HEADER` makes over the whole file to skip
    it (a tenth of a Kineto trace's load): ``(header, lo, hi)``
    with ``data[lo:hi]`` the array text and ``header`` the other top-level
    values (Raw), or None when the layout is not the plain one.

    The array ends at a ']' after the last event, so the guess takes the
    last ']' that follows a '}' or '[' and whose rest of the document, with
    the array replaced by ``[]``, decodes as the object with that ``[]`` as
    its "traceEvents". ']' inside later strings (Kineto's "INFO" lines) can
    still mislead it; the events' own decode then fails and the caller runs
    the full pass. Only with one "traceEvents" text outside the array and a
    header under :data:`HEADER_GUESS_BYTES`."""
    found = _EVENTS_KEY.search(data, start)
    if found is None or found.start() - start > HEADER_GUESS_BYTES:
        return None
    lo = found.end() - 1                       # the array's '['
    floor = max(lo, len(data) - HEADER_GUESS_BYTES)
    hi = len(data)
    for _ in range(64):                        # candidate ']', last first
        close = data.rfind(b"]", floor, hi)
        if close < 0:
            return None
        hi = close
        if not bytes(data[max(lo, close - 64):close]).rstrip().endswith((b"}", b"[")):
            continue
        rest = bytes(data[start:lo]) + b"[]" + bytes(data[close + 1:])
        if rest.count(b'"traceEvents"') != 1:  # a second key (the decode would keep the last)
            return None
        try:
            top = _HEADER.decode(rest)
        except msgspec.DecodeError:
            continue
        except RecursionError:
            return None      # the full pass reports it
        if bytes(top.get("traceEvents", b"")) != b"[]" or not _ends_events(data, lo, close):
            return None
        top.pop("traceEvents")
        return top, lo, close + 1
    return None


#: How far before a guessed end of the events array :func:`_ends_events` reads.
_END_CHECK_BYTES = 64 << 10


def _ends_events(data, lo, close):
    """Whether the ']' at ``close`` can end the events array opened at ``lo``:
    the text from the first event boundary in the last
    :data:`_END_CHECK_BYTES` before it decodes as a list of objects. A ']'
    of a later member (``"z": [{}]``) fails when the array's real end lies
    in that window; one of a later array of objects longer than the window
    passes, and the events' own decode then fails (a second, full pass)."""
    window = close - _END_CHECK_BYTES
    if window <= lo:
        begin = lo + 1
    else:
        found = _BOUNDARY.search(data, window, close)
        if found is None:
            return False
        begin = found.end() - 1
    try:
        items = _RAW_LIST.decode(b"[" + bytes(data[begin:close + 1]))
    except (msgspec.DecodeError, RecursionError):
        return False
    return all(bytes(memoryview(r)[:1]) == b"{" for r in items)


def _decode_object_events(data, path, reporter, progress, top, lo, hi):
    """decode_events' object case on a located array (see _locate_events)."""
    header = _header_values(top)
    events_buf = memoryview(data)[lo:hi]
    release = _page_release(data, lo)
    return _decode_blocks(events_buf, path, reporter, header, base_offset=0, progress=_both(progress, release))


def _header_values(top):
    """The top-level values other than the events, decoded (those under 1 MB)."""
    header = {}
    for key, raw in top.items():
        if len(raw) < (1 << 20):
            try:
                header[key] = msgspec.json.decode(raw)
            except RecursionError:
                pass        # a header value nested too deeply is not needed
    return header


def _both(progress, release):
    if release is None or progress is None:
        return progress if release is None else release

    def call(nbytes):
        release(nbytes)
        progress(nbytes)
    return call


def _decode_blocks(buf, path, reporter, header, base_offset, progress=None):
    """Decode ``[ev, ev, ...]`` (a memoryview) in blocks cut at event boundaries."""
    if not reporter.strict and len(buf) >= PARALLEL_BYTES:
        from .parallel import decode_parallel
        parts = decode_parallel(buf, path, reporter, progress, workers=PARALLEL_WORKERS,
                                decode_parts=decode_parts, event_type=Event)
        if parts is not None:
            return _columns(parts, header)
    if not reporter.strict and len(buf) >= FORK_BYTES:
        from .parallel import decode_forked
        parts = decode_forked(buf, path, reporter, progress, decode_parts=decode_parts, block=_BLOCK)
        if parts is not None:
            return _columns(parts, header)
    return _columns(decode_parts(buf, path, reporter, base_offset, progress), header)


#: Event arrays this large (non-strict) are decoded by worker processes
#: (on machines with >= 4 CPUs, or PARALLEL_WORKERS of them when set).
PARALLEL_BYTES = 96 << 20
PARALLEL_WORKERS = None
#: Event arrays this large (non-strict; below PARALLEL_BYTES or where worker
#: pools are not used) are split in two halves, the second decoded by a
#: forked child on another CPU (see :func:`gpuviz.trace.formats.parallel.decode_forked`).
#: Below about 5 MB the fork costs more than the second CPU saves.
FORK_BYTES = 6 << 20
#: Block columns by :func:`gpuviz.trace.formats.fastblock.block_columns`
#: (True) or by the reference :func:`_block_columns` (False: tests compare them).
FAST_COLUMNS = True


def decode_parts(buf, path, reporter, base_offset=0, progress=None, *, span=None, first_index=0, exact_blocks=False):
    """Block column tuples of ``[ev, ev, ...]`` (see :func:`decode_events`);
    ``span=(pos, end)``: only the events in ``buf[pos:end]`` (cut at event
    boundaries), the first being event number ``first_index``;
    ``exact_blocks``: raise instead of decoding the rest as one block when a
    guessed block boundary fails (so the blocks are those of a whole-array decode)."""
    pos, end = event_span(buf) if span is None else span
    parts = []
    frame = _Frame()
    while pos < end:
        cut = end
        if end - pos > _BLOCK:
            m = _BOUNDARY.search(buf, pos + _BLOCK, end)
            if m is not None:
                cut = m.start() + 1
        try:
            parts.append(_decode_block(frame.fill(buf, pos, cut), path, reporter, first_index, frame))
        except _Resplit as exc:
            if cut == end or exact_blocks:
                m = _ERROR_BYTE.search(str(exc.__cause__))
                at = base_offset + pos + int(m.group(1)) - 1 if m else base_offset + len(buf)
                raise _Resplit(f"{exc.__cause__} (byte {at})") from None
            # The boundary guess fell inside a string: the rest as one block.
            cut = end
            parts.append(_decode_block(frame.fill(buf, pos, cut), path, reporter, first_index, frame))
        first_index += len(parts[-1][0])
        if progress is not None:
            progress(cut - pos)
        pos = cut
        while pos < end and buf[pos] in b" \t\r\n,":
            pos += 1
    return parts


class _Frame:
    """One buffer reused for every block of a decode: ``fill`` returns
    ``[`` + buf[pos:cut] + ``]`` as a view of it. A fresh buffer per block
    costs more than the decode's copy itself (its pages are zeroed and
    faulted in anew). Safe because nothing
    decoded from a block is read after its :func:`_decode_block` (the
    columns are copies; kept events are re-encoded).

    ``pinned`` holds every :data:`PIN_STRIDE`-th event object of the last
    block until the next one is decoded: then no CPython arena holding that
    block's objects is entirely free, none is handed back to the system,
    and the next block's objects reuse them instead of faulting in fresh
    pages."""

    def __init__(self):
        self.buffer = bytearray()
        self.pinned = []

    def fill(self, buf, pos, cut):
        size = cut - pos + 2
        if size > len(self.buffer):
            self.buffer = bytearray(max(size, len(self.buffer) * 5 // 4))
        view = memoryview(self.buffer)[:size]
        view[0], view[-1] = 91, 93
        view[1:-1] = buf[pos:cut]
        return view


#: See :class:`_Frame` (an arena of 1 MiB holds thousands of events).
PIN_STRIDE = 256


def _decode_block(block, path, reporter, first_index, frame=None):
    flow_v2 = False           # no flow v2 key in the block (the fast type rejects them)
    try:
        try:
            events = _FAST_DECODER.decode(block)
        except msgspec.ValidationError:
            flow_v2 = True
            events = _DECODER.decode(block)
    except (msgspec.ValidationError, RecursionError):
        flow_v2 = True
        events = []
        try:
            raws = _RAW_LIST.decode(block)
        except RecursionError:
            raise TraceFormatError(path, "JSON nested too deeply", index=first_index) from None
        for k, raw in enumerate(raws):
            try:
                events.append(msgspec.json.decode(raw, type=Event))
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                reporter.add("bad_event", index=first_index + k)
                events.append(Event(ph="\x00bad"))
    except msgspec.DecodeError as exc:
        # A boundary guess inside a string, or a broken document.
        raise _Resplit() from exc
    if events and all(e.ph == "\x00bad" for e in events) and first_index == 0:
        raise TraceFormatError(path, "no element of the event array is an event object", index=0)
    if frame is not None:
        frame.pinned = events[::PIN_STRIDE]
    if FAST_COLUMNS:
        return block_columns(events, first_index, block, flow_v2=flow_v2)
    return _block_columns(events, first_index, block)


class _Resplit(Exception):
    pass


_FLOW_V2 = re.compile(rb'"flow_|"bind_id"')     # a block is a memoryview: no ``in``
_FLOW_PHASES = frozenset(("s", "t", "f"))


def _block_columns(events, first_index, block):
    """Final columns of one block (so its Python objects can go at once).

    The reference for :func:`~gpuviz.trace.formats.fastblock.block_columns`."""
    n = len(events)
    ph_list = [e.ph for e in events]
    if ph_list.count("X") == n:          # the common case: no phase logic needed
        ph = pa.repeat(pa.scalar("X", pa.string()), n)
        idx = np.zeros(0, np.int64)
    else:
        ph = pa.array(ph_list, pa.string())
        enc = pc.dictionary_encode(ph)
        not_x = np.array([p != "X" for p in enc.dictionary.to_pylist()] or [False], bool)
        idx = np.flatnonzero(not_x[enc.indices.to_numpy(zero_copy_only=False)])
    if _FLOW_V2.search(block) is not None:
        flagged = np.array([k for k, e in enumerate(events) if e.flow_in or e.flow_out or len(e.bind_id)], np.int64)
        idx = np.union1d(idx, flagged).astype(np.int64)
    # v1 flow events (often a third of a Kineto file) become columns, not kept objects.
    is_flow = np.array([ph_list[k] in _FLOW_PHASES for k in idx.tolist()], bool) if len(idx) else np.zeros(0, bool)
    fidx = idx[is_flow]
    flows = (fidx + first_index, raw_text(raw_to_binary([events[k].id for k in fidx.tolist()])).cast(pa.string()),
             np.array([events[k].bp == "e" for k in fidx.tolist()], bool))
    idx = idx[~is_flow]
    # Kept events must not pin their block's bytes (Raw fields are views):
    # re-encoded in C as one small JSON blob, decoded again by _columns.
    rare = (idx + first_index, _RARE_ENCODER.encode([events[k] for k in idx.tolist()]))
    ts_ns, ts_ok = raw_to_ns(raw_to_binary([e.ts for e in events]))
    dur = raw_to_binary([e.dur for e in events])
    dur_ns, dur_ok = raw_to_ns(dur)
    has_dur = pc.binary_length(dur).to_numpy(zero_copy_only=False) > 0 if n else np.zeros(0, bool)
    del dur
    return (ph,
            pa.array([e.name for e in events], pa.string()),
            pa.array([e.cat for e in events], pa.string()),
            id_text([e.pid for e in events]), id_text([e.tid for e in events]),
            args_text([e.args for e in events]), ts_ns, ts_ok, dur_ns, dur_ok, has_dur, rare, flows)


def _columns(parts, header):
    def arrow(k, chunked):
        arrays = [part[k] for part in parts]
        if not arrays:
            return pa.array([], pa.string())
        return pa.chunked_array(arrays, pa.string()) if chunked else pa.concat_arrays(arrays)

    def numbers(k, dtype):
        return np.concatenate([part[k] for part in parts]) if parts else np.zeros(0, dtype)
    rare = {}
    for part in parts:
        keys, blob = part[11]
        if len(keys):
            rare.update(zip(keys.tolist(), _RARE_DECODER.decode(blob)))
    return EventColumns(ph=arrow(0, True), name=arrow(1, True), cat=arrow(2, True),
                        pid=ids_as_text([part[3] for part in parts]) if parts else pa.chunked_array([], pa.string()),
                        tid=ids_as_text([part[4] for part in parts]) if parts else pa.chunked_array([], pa.string()),
                        args=arrow(5, True),
                        ts_ns=numbers(6, np.int64), ts_ok=numbers(7, bool), dur_ns=numbers(8, np.int64),
                        dur_ok=numbers(9, bool), has_dur=numbers(10, bool), rare=rare, header=header,
                        flows={"index": np.concatenate([p[12][0] for p in parts]) if parts else np.zeros(0, np.int64),
                               "id": pa.concat_arrays([p[12][1] for p in parts]) if parts else pa.array([], pa.string()),
                               "bp_e": np.concatenate([p[12][2] for p in parts]) if parts else np.zeros(0, bool)})


def _structure(buf, lo, hi):
    """Brackets outside strings in ``buf[lo:hi]``: (positions, depth after each)."""
    b = np.frombuffer(buf, np.uint8, count=hi - lo, offset=lo)
    quotes = np.flatnonzero(b == 34)
    if len(quotes):
        maybe = quotes[(quotes > 0) & (b[np.maximum(quotes - 1, 0)] == 92)]
        if len(maybe):
            escaped = []
            for q in maybe.tolist():
                k = q - 1
                while k >= 0 and b[k] == 92:
                    k -= 1
                if (q - 1 - k) % 2:
                    escaped.append(q)
            quotes = np.setdiff1d(quotes, np.array(escaped, np.int64))
    opens = (b == 123) | (b == 91)
    brackets = np.flatnonzero(opens | (b == 125) | (b == 93))
    outside = np.searchsorted(quotes, brackets) % 2 == 0
    brackets = brackets[outside]
    depth = np.cumsum(np.where(opens[brackets], 1, -1))
    return brackets + lo, depth


def _decode_broken(data, path, reporter, is_object, start, message):
    """Keep every complete event before the point where decoding failed."""
    m = _ERROR_BYTE.search(message)
    error_at = int(m.group(1)) if m else len(data)
    tail = data[error_at:].strip() if m else b""
    at_end = not m or not tail or tail in (b"]", b"]}", b"}")
    reason = "truncated" if at_end else "bad_json"
    arr = start
    if is_object:
        key = data.find(b'"traceEvents"', start)
        if key < 0 or key > error_at:
            raise TraceFormatError(path, f"not a Trace Event file ({message})", offset=error_at)
        arr = data.find(b"[", key)
        if arr < 0:
            raise TraceFormatError(path, f"truncated before the event array ({message})", offset=error_at)
    if error_at <= arr:
        raise TraceFormatError(path, f"not a Trace Event file ({message})", offset=error_at)
    pos, depth = _structure(data, arr, min(error_at, len(data)))
    closes = pos[(depth == 1) & (np.frombuffer(data, np.uint8)[pos] == 125)]
    if len(closes) == 0:
        raise TraceFormatError(path, f"no complete event before the damage ({message})", offset=error_at)
    reporter.add(reason, offset=error_at)
    last = int(closes[-1])
    body = memoryview(b"[" + data[arr + 1:last + 1] + b"]")
    try:
        return _decode_blocks(body, path, reporter, {}, base_offset=arr)
    except (msgspec.DecodeError, _Resplit):
        raise TraceFormatError(path, f"no readable event ({message})", offset=error_at) from None
