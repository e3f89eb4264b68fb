"""Saved traces (``.gpuviz`` files) and the columnar import cache.

:func:`save` writes a :class:`~gpuviz.trace.model.Trace` as one ``.gpuviz``
file; :func:`gpuviz.trace.load` reads it back by memory-mapping it (no
parse, no copy of the columns). The import cache of ``load(path, cache=...)``
stores the same files under a user cache folder, one per imported source.

The ``.gpuviz`` format, version 1 (:data:`FORMAT_VERSION`)
-------------------------------------------------------------
All integers are little-endian::

    b"GPUVIZTR"  u32 format version  u32 0          (16 bytes)
    six Arrow IPC *files*, one per table, each starting at a multiple of 64:
        spans, links, threads, processes, counters, instants
        (each one record batch where Arrow allows: zero-copy columns on read)
    header: UTF-8 JSON {"version", "tables": {name: [offset, length]},
            "report", "sources", "metadata", "key"}
    trailer: u64 header offset, u64 header length, b"GPUVIZTR"   (24 bytes)

The table schemas are the model's (:data:`~gpuviz.trace.model.SPANS_SCHEMA`
...). ``key`` is the cache key of an import-cache entry (``null`` in a file
written by :func:`save`). A reader refuses any other version.

A file is written to a temporary name in the destination folder and then
renamed over the destination, so a concurrent reader sees the old file, the
new one, or none, never half of one.

The import cache
----------------
Folder: ``$GPUVIZ_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gpuviz``, else
``~/.cache/gpuviz``; entries are ``<folder>/traces/<sha256>.gpuviz``. The key
hashes the source's absolute path, size, ``st_mtime_ns``, the gpuviz version,
:data:`FORMAT_VERSION` and the ``format``/``strict`` arguments of the load;
a changed, replaced or truncated source has a different key. Entries beyond
``$GPUVIZ_CACHE_MAX_BYTES`` (default :data:`DEFAULT_MAX_BYTES`, 8 GiB) in
total are evicted least recently used first (a hit refreshes the entry's
mtime); an entry larger than the cap is not written. Temporary files
(``.tmp-*.part``) older than a day, left by a writer that died, are deleted
with them.

An entry that cannot be read back (truncated, garbled header or Arrow
structure, other version, a key that is not the one asked for, tables the
model rejects) is deleted with a :class:`TraceCacheWarning` and the source
is parsed again. The check is structural: there is no checksum over the
column bytes (hashing them would cost most of what a re-open saves), so a
bit flip inside a value column that keeps the structure valid is not found.
A folder that cannot be written (read-only, full) gives a warning and the
load goes on without caching. Nothing is written when the import fails or
when the source changed while it was parsed.
"""

import hashlib
import json
import os
import struct
import tempfile
import warnings
from pathlib import Path

import pyarrow as pa

from .errors import TraceFormatError
from .model import Trace

__all__ = ["save", "read_saved", "is_saved", "TraceCacheWarning", "FORMAT_VERSION", "MAGIC",
           "DEFAULT_MAX_BYTES", "THRESHOLD_BYTES", "cache_folder", "cache_key", "lookup", "store"]

#: Version of the ``.gpuviz`` layout; part of every cache key.
FORMAT_VERSION = 1
MAGIC = b"GPUVIZTR"
#: Default cap of the import cache's total size (``$GPUVIZ_CACHE_MAX_BYTES`` overrides it).
DEFAULT_MAX_BYTES = 8 << 30
#: ``load(cache=None)`` caches inputs larger than this (bytes on disk).
THRESHOLD_BYTES = 50 << 20

_TABLES = ("spans", "links", "threads", "processes", "counters", "instants")
_PREFIX = struct.Struct("<8sII")
_TRAILER = struct.Struct("<QQ8s")
_ALIGN = 64


class TraceCacheWarning(UserWarning):
    """The import cache was not used: an entry was corrupt (deleted, the
    source parsed again) or the cache folder could not be written (the trace
    is returned uncached). The message names the file and the reason."""


# --- the .gpuviz file ------------------------------------------------------------

def save(trace, path):
    """Write ``trace`` as one ``.gpuviz`` file (format in :mod:`gpuviz.trace.cache`).

    Parameters
    ----------
    trace : Trace
    path : str or Path
        The file to write (``.gpuviz`` by convention); replaced atomically if
        it exists. :func:`gpuviz.trace.load` reads it back.

    Keeps every table, ``report``, ``sources`` and ``metadata`` (which must
    be JSON-serialisable; other values are written as their ``str``). Does
    not compress.
    """
    _write(trace, Path(path), key=None, mode=0o666)


def _write(trace, path, *, key, mode=None):
    """Write to a temporary file beside ``path``, then rename it over ``path``;
    ``mode`` (less the umask) replaces mkstemp's owner-only permissions."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=path.parent)
    try:
        if mode is not None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, mode & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(_PREFIX.pack(MAGIC, FORMAT_VERSION, 0))
            spans = {}
            for name in _TABLES:
                f.write(b"\0" * (-f.tell() % _ALIGN))
                start = f.tell()
                table = getattr(trace, name)
                try:
                    # One chunk per column: the reader's numpy views then need no concatenation.
                    table = table.combine_chunks()
                except (pa.ArrowInvalid, pa.ArrowCapacityError):  # a string column over 2 GB
                    pass
                sink = pa.PythonFile(f, mode="w")
                with pa.ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table, max_chunksize=max(table.num_rows, 1))
                spans[name] = [start, f.tell() - start]
            header = json.dumps({"version": FORMAT_VERSION, "tables": spans, "report": trace.report,
                                 "sources": list(trace.sources), "metadata": trace.metadata, "key": key},
                                default=str).encode()
            offset = f.tell()
            f.write(header)
            f.write(_TRAILER.pack(offset, len(header), MAGIC))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def is_saved(path):
    """Whether ``path`` is a file that starts like a ``.gpuviz`` file."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read_saved(path, *, key=None):
    """Memory-map a ``.gpuviz`` file into a :class:`Trace` (columns are views
    of the mapped file, not copies).

    ``key``: the cache key the file must hold (``None``: any). Raises
    :class:`~gpuviz.trace.TraceFormatError` naming the file and the reason
    when the file is truncated, garbled, of another version or holds another
    key.
    """
    path = Path(path)
    try:
        buf = pa.memory_map(str(path), "r").read_buffer()
    except OSError as exc:
        raise TraceFormatError(path, f"cannot map the saved trace ({exc})") from None
    size = buf.size
    if size < _PREFIX.size + _TRAILER.size:
        raise TraceFormatError(path, f"saved trace is {size} bytes, shorter than its prefix and trailer")
    magic, version, _ = _PREFIX.unpack(buf[:_PREFIX.size].to_pybytes())
    offset, length, tail = _TRAILER.unpack(buf[size - _TRAILER.size:].to_pybytes())
    if magic != MAGIC or tail != MAGIC:
        raise TraceFormatError(path, "not a complete .gpuviz file (magic missing at the start or the end: truncated?)")
    if version != FORMAT_VERSION:
        raise TraceFormatError(path, f".gpuviz format version {version}, this gpuviz reads {FORMAT_VERSION}")
    if offset + length != size - _TRAILER.size:
        raise TraceFormatError(path, f"header at {offset} of {length} bytes does not end at the trailer "
                                     f"({size - _TRAILER.size})")
    try:
        header = json.loads(buf[offset:offset + length].to_pybytes())
        if not isinstance(header, dict):
            raise ValueError(f"header is a JSON {type(header).__name__}, not an object")
        tables = {}
        for name in _TABLES:
            start, nbytes = header["tables"][name]
            if not (_PREFIX.size <= start and start + nbytes <= offset):
                raise ValueError(f"table {name} at {start}+{nbytes} lies outside the data ({offset} bytes)")
            table = pa.ipc.open_file(buf.slice(start, nbytes)).read_all()
            table.validate()
            tables[name] = table
        if key is not None and header.get("key") != key:
            raise ValueError("cache entry holds another key")
        # The model's checks (schemas, IDs are rows, references) run here as on any import.
        return Trace(**tables, report=header.get("report", {}), sources=header.get("sources", ()),
                     metadata=header.get("metadata", {}))
    except (ValueError, KeyError, TypeError, AttributeError, pa.ArrowException) as exc:
        raise TraceFormatError(path, f"unreadable saved trace ({exc})") from None


# --- the import cache ---------------------------------------------------------------

def cache_folder():
    """The import cache's folder (not created here): ``$GPUVIZ_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/gpuviz/traces``, else ``~/.cache/gpuviz/traces``."""
    given = os.environ.get("GPUVIZ_CACHE_DIR")
    if given:
        return Path(given) / "traces"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpuviz" / "traces"


def _max_bytes():
    text = os.environ.get("GPUVIZ_CACHE_MAX_BYTES")
    try:
        return int(text) if text else DEFAULT_MAX_BYTES
    except ValueError:
        warnings.warn(TraceCacheWarning(f'GPUVIZ_CACHE_MAX_BYTES "{text}" is not an integer; '
                                        f"using {DEFAULT_MAX_BYTES}"), stacklevel=3)
        return DEFAULT_MAX_BYTES


def cache_key(path, stat, **options):
    """The key of one source: absolute path, size, mtime_ns, gpuviz and
    format versions, and the load options that change the result."""
    from .. import __version__
    return {"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "gpuviz": __version__, "format_version": FORMAT_VERSION, **options}


def _entry(key):
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_folder() / f"{digest}.gpuviz"


def lookup(key):
    """The cached :class:`Trace` of ``key``, or ``None`` (a miss). A corrupt
    entry is deleted with a :class:`TraceCacheWarning` and counts as a miss."""
    entry = _entry(key)
    if not entry.is_file():
        return None
    try:
        trace = read_saved(entry, key=key)
    except TraceFormatError as exc:
        warnings.warn(TraceCacheWarning(f'TraceCacheWarning "{entry}": corrupt cache entry discarded, '
                                        f"parsing {key['path']} ({exc.reason})"), stacklevel=3)
        try:
            entry.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(entry)  # least recently used = oldest mtime
    except OSError:
        pass
    return trace


def store(key, trace):
    """Write ``trace`` as the entry of ``key``, then evict the least recently
    used entries beyond the cap. A folder that cannot be written gives a
    :class:`TraceCacheWarning`; nothing raises."""
    cap = _max_bytes()
    entry = _entry(key)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        _write(trace, entry, key=key)
        size = entry.stat().st_size
        if size > cap:
            entry.unlink()
            warnings.warn(TraceCacheWarning(f'TraceCacheWarning "{entry}": entry of {size} bytes is over the '
                                            f"cache cap of {cap} bytes; not kept"), stacklevel=3)
            return
        _evict(entry.parent, cap, keep=entry)
    except OSError as exc:
        warnings.warn(TraceCacheWarning(f'TraceCacheWarning "{entry.parent}": cannot write the trace cache '
                                        f"({exc.strerror or exc}); continuing without it"), stacklevel=3)


def _evict(folder, cap, *, keep):
    import time
    # Temporary files of writers that died: another writer's live one is younger than a day.
    for p in folder.glob(".tmp-*.part"):
        try:
            if p.stat().st_mtime < time.time() - 86400:
                p.unlink()
        except OSError:
            pass
    entries = []
    for p in folder.glob("*.gpuviz"):
        try:
            st = p.stat()
        except OSError:  # evicted by another process meanwhile
            continue
        entries.append((st.st_mtime_ns, st.st_size, p))
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= cap:
            break
        if p == keep:
            continue
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        total -= size
