"""``gpuviz.trace.load``: one entry point for every trace format.

Formats: ``"chrome"`` (Trace Event JSON), ``"kineto"`` (PyTorch profiler),
``"otlp"`` (OpenTelemetry JSON, parsed by :mod:`gpuviz.trace.formats.otlp`),
``"parquet"`` (a folder written by :meth:`Trace.to_parquet`), ``"gpuviz"``
(a file written by :func:`gpuviz.trace.save`, memory-mapped; format and
version in :mod:`gpuviz.trace.cache`), or ``"auto"``.
A list of files, or a folder of trace files, is a multi-rank trace: one
partition per file, parsed in worker processes, merged by
:mod:`gpuviz.trace.merge`.

One file can go through the columnar import cache (``cache=``): its first
import is written as a ``.gpuviz`` entry under the user cache folder, and a
later load of the unchanged file memory-maps that entry instead of parsing.
Lists and folders of rank files are not cached.
"""

import json
import os
import re
from pathlib import Path

from .errors import TraceFormatError
from .model import Trace

__all__ = ["load", "FORMATS"]

FORMATS = ("auto", "chrome", "kineto", "otlp", "parquet", "gpuviz")
_PROGRESS_BYTES = 50 << 20
_TRACE_SUFFIXES = (".json", ".json.gz", ".jsonl", ".jsonl.gz", ".gz")
_TABLES = ("spans", "links", "threads", "processes", "counters", "instants")


def load(path_or_paths, *, format="auto", strict=False, progress=None, workers=None, cache=None):
    """Import a trace file, a list of per-rank files, or a folder.

    Parameters
    ----------
    path_or_paths : str, Path, or sequence of them
        One file (``.json``/``.json.gz``, or ``.gpuviz`` written by
        :func:`gpuviz.trace.save`), a folder written by
        :meth:`Trace.to_parquet`, a folder of per-rank trace files, or a list
        of files (one partition each, in the order given; a folder's files in
        natural name order, so ``rank2`` comes before ``rank10``).
    format : {"auto", "chrome", "kineto", "otlp", "parquet", "gpuviz"}
        ``"auto"`` looks at the content: a ``.gpuviz`` file's magic bytes,
        OTLP's ``resourceSpans``, Kineto's top-level keys or GPU categories,
        else Chrome.
    strict : bool
        Raise :class:`~gpuviz.trace.TraceFormatError` at the first problem
        (file, byte offset or event index, reason) instead of repairing and
        counting it in ``trace.report``. Files that are not traces raise in
        both modes.
    progress : bool, optional
        ``None``: a tqdm.auto bar when the input is over ~50 MB on disk;
        ``False``: never; ``True``: always.
    workers : int, optional
        Worker processes for multi-file input (default: one per file, up to
        the CPU count; 0 or 1 parses in this process).
    cache : bool, optional
        The columnar import cache (one trace file only; see
        :mod:`gpuviz.trace.cache` for the folder, key, cap and format).
        ``None``: on for files over ~50 MB on disk
        (:data:`gpuviz.trace.cache.THRESHOLD_BYTES`), off below; ``True``:
        read a valid entry instead of parsing, else parse and write one;
        ``False``: never read or write. A corrupt entry or an unwritable
        folder gives a :class:`~gpuviz.trace.TraceCacheWarning`, never a
        wrong trace or an error. Lists, folders and ``.gpuviz`` files are
        never cached.

    Returns
    -------
    Trace

    It does not guess time units (Trace Event ``ts`` is us; OTLP is ns) and
    never drops a span; everything repaired is in ``trace.report``.
    """
    if format not in FORMATS:
        raise TraceFormatError(path_or_paths, f"unknown format {format!r} (one of {', '.join(FORMATS)})")
    if isinstance(path_or_paths, (list, tuple)):
        return _load_many([Path(p) for p in path_or_paths], format, strict, progress, workers)
    path = Path(path_or_paths)
    if path.is_dir():
        if format in ("auto", "parquet") and ((path / "spans.parquet").exists() or format == "parquet"):
            return _read_parquet(path)
        files = sorted((p for p in path.iterdir() if p.is_file() and p.name.endswith(_TRACE_SUFFIXES)),
                       key=_natural)
        if not files:
            raise TraceFormatError(path, "folder holds neither a Parquet trace nor trace files")
        return _load_many(files, format, strict, progress, workers)
    if not path.exists():
        raise TraceFormatError(path, "no such file")
    from . import cache as import_cache
    if format == "gpuviz" or (format == "auto" and import_cache.is_saved(path)):
        return import_cache.read_saved(path)
    stat = path.stat()
    size = stat.st_size
    key = None
    if format != "parquet" and (size > import_cache.THRESHOLD_BYTES if cache is None else cache):
        key = import_cache.cache_key(path, stat, format=format, strict=bool(strict))
        trace = import_cache.lookup(key)
        if trace is not None:
            return trace
    bar = _bar(size, progress)
    try:
        trace = load_file(path, format=format, strict=strict, partition=None,
                          progress=None if bar is None else (lambda fraction: _to(bar, fraction * size)))
    finally:
        _close(bar, 0)
    # A source that changed while it was parsed is not cached under the old key.
    if key is not None and import_cache.cache_key(path, path.stat(), format=format, strict=bool(strict)) == key:
        import_cache.store(key, trace)
    return trace


def _natural(path):
    """Sort key: rank2 before rank10."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", path.name)]


def load_file(path, *, format="auto", strict=False, partition=None, progress=None):
    """Import one file (no folders, no lists); ``partition`` None = the
    file's own rank (Kineto) or 0; ``progress(fraction)`` is called as the
    events are decoded. Does not merge or align anything."""
    from .formats.jsonevents import read_bytes
    path = Path(path)
    if format == "parquet":
        return _read_parquet(path)
    from .cache import is_saved, read_saved
    if format == "gpuviz" or (format == "auto" and is_saved(path)):
        return read_saved(path)
    # A one-element holder: the reader takes the bytes out, so they can be
    # freed as soon as the events are decoded (not held here until the end).
    holder = [read_bytes(path)]
    size = len(holder[0])
    if format == "otlp" or (format == "auto" and _is_otlp(holder[0][:1 << 16])):
        holder.clear()
        from .formats.otlp import read_otlp
        return read_otlp(path, strict=strict, partition=partition or 0)
    if format == "chrome":
        from .formats.chrome import read_chrome
        return read_chrome(path, strict=strict, partition=partition or 0, data=holder, progress=_scaled(progress, size))
    from .formats.kineto import read_json_trace
    return read_json_trace(path, strict=strict, partition=partition, data=holder, kineto=format == "kineto" or None,
                           progress=_scaled(progress, size))


def _scaled(progress, size):
    """bytes decoded -> fraction of the file, for a bar counted in on-disk bytes."""
    if progress is None or not size:
        return None
    done = [0]

    def update(nbytes):
        done[0] += nbytes
        progress(min(done[0] / size, 1.0))
    return update


def _is_otlp(head):
    from .formats.otlp import is_otlp
    return is_otlp(head)


def _load_one(args):
    path, format, strict, partition = args
    return load_file(path, format=format, strict=strict, partition=partition)


def _load_many(paths, format, strict, progress, workers):
    from .merge import merge_traces
    if not paths:
        raise TraceFormatError(None, "no trace files given")
    for p in paths:
        if not p.is_file():
            raise TraceFormatError(p, "no such file")
    jobs = [(str(p), format, strict, i) for i, p in enumerate(paths)]
    total = sum(p.stat().st_size for p in paths)
    bar = _bar(total, progress)
    count = len(jobs) if workers is None else int(workers)
    count = max(1, min(count, os.cpu_count() or 1, len(jobs)))
    try:
        if count <= 1:
            traces = []
            for job, p in zip(jobs, paths):
                traces.append(_load_one(job))
                _advance(bar, p.stat().st_size)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            # forkserver: safe with Arrow's threads; the preload makes each
            # worker a fork of a process that already imported the readers.
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["gpuviz.trace.load", "gpuviz.trace.formats.kineto"])
            with ProcessPoolExecutor(max_workers=count, mp_context=ctx) as pool:
                traces = []
                for p, trace in zip(paths, pool.map(_load_one, jobs)):
                    traces.append(trace)
                    _advance(bar, p.stat().st_size)
    finally:
        _close(bar, 0)
    return merge_traces(traces, partitions=list(range(len(traces))))


def _bar(total, progress):
    if progress is False or (progress is None and total < _PROGRESS_BYTES):
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="B", unit_scale=True, desc="trace import")


def _advance(bar, n):
    if bar is not None:
        bar.update(n)


def _to(bar, value):
    bar.update(max(0, int(value) - bar.n))


def _close(bar, n):
    if bar is not None:
        bar.update(max(n, bar.total - bar.n) if n == 0 else n)
        bar.close()


def _read_parquet(folder):
    import pyarrow.parquet as pq
    folder = Path(folder)
    meta_path = folder / "report.json"
    meta = {}
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            raise TraceFormatError(meta_path, "report.json is not JSON") from None
    tables = {}
    for name in _TABLES:
        f = folder / f"{name}.parquet"
        if not f.exists():
            raise TraceFormatError(f, f"Parquet trace folder lacks {name}.parquet")
        try:
            tables[name] = pq.read_table(f)
        except Exception as exc:  # noqa: BLE001 - any Arrow/IO error is a format error here
            raise TraceFormatError(f, f"unreadable Parquet ({exc})") from None
    return Trace(**tables, report=meta.get("report", {}), sources=meta.get("sources", ()),
                 metadata=meta.get("metadata", {}))
