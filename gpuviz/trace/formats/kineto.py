"""PyTorch profiler (Kineto) traces -> :class:`~gpuviz.trace.model.Trace`.

A Kineto trace is Chrome Trace Event JSON with conventions on top; this
module reuses the Chrome reader and adds them:

* GPU streams: threads holding GPU activity (categories ``kernel``,
  ``gpu_memcpy``, ``gpu_memset``, ``gpu_user_annotation``, or named
  ``stream N``; the 2021 layout's ``Memcpy``/``Kernel`` categories too)
  get thread kind ``gpu-stream``.
* Flows: ``ac2g`` (CPU launch -> GPU kernel), ``fwdbwd`` and 2021 ``async``
  flows are ordinary s/f flows; their link ``kind`` is the flow category.
* ``baseTimeNanoseconds``, ``distributedInfo`` and ``deviceProperties`` go
  to ``trace.metadata``; ``distributedInfo.rank`` is the partition unless
  the caller gives one; each device's name is added to the labels of the
  GPU process whose pid is the device id.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .chrome import build_trace
from .jsonevents import (Reporter, decode_events, import_memory_pool, release_free_memory,
                         take_bytes)

__all__ = ["read_kineto", "read_json_trace", "is_kineto_header", "looks_like_kineto", "GPU_CATEGORIES"]

#: Categories of GPU activity (current and 2021 layouts).
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset",
                  "cuda_sync")
_HEADER_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds")
_FLOW_KINDS = ("ac2g", "fwdbwd", "async")
#: baseTimeNanoseconds must be below this (2^62 ns: year 2116) to be kept;
#: a rank's times plus its base then stay inside int64 when ranks are aligned.
BASE_TIME_LIMIT = 1 << 62


def _integer_below(value, limit):
    """Whether a header value is an integer (not a bool) in [0, limit)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < limit


def is_kineto_header(header):
    """True when the top-level keys of a trace object are Kineto's."""
    return any(k in header for k in _HEADER_KEYS)


def read_kineto(path, *, strict=False, partition=None, data=None):
    """Read one PyTorch profiler trace (``.json``/``.json.gz``, also the 2021 layout).

    Parameters
    ----------
    path : str or Path
    strict : bool
        Raise :class:`~gpuviz.trace.TraceFormatError` at the first problem.
    partition : int, optional
        Default: ``distributedInfo.rank`` when present, else 0.
    data : bytes or [bytes], optional
        The uncompressed bytes when already read (a one-element list is
        emptied, so the bytes are freed once decoded).

    Times stay in the file's clock (``ts`` in us -> ns, exactly);
    ``baseTimeNanoseconds`` is recorded in ``trace.metadata`` and used by the
    multi-rank merge, not added here. Does not read memory or sample events.
    """
    return read_json_trace(path, strict=strict, partition=partition, data=data, kineto=True)


def looks_like_kineto(cols):
    """Kineto header keys, or Kineto's categories among the events."""
    if is_kineto_header(cols.header):
        return True
    if len(cols.cat) == 0:
        return False
    found = pc.is_in(cols.cat, value_set=pa.array(("ac2g", "cpu_op", "cuda_runtime", "kernel")))
    return bool(pc.any(found).as_py())


def read_json_trace(path, *, strict=False, partition=None, data=None, kineto=None, progress=None):
    """Chrome or Kineto, decided once the events are decoded (``kineto=None``
    detects, True/False forces). Does not read OTLP."""
    with import_memory_pool():
        return _read_json_trace(path, strict, partition, data, kineto, progress)


def _read_json_trace(path, strict, partition, data, kineto, progress):
    reporter = Reporter(str(path), strict)
    data = take_bytes(path, data)
    nbytes = len(data)
    cols = decode_events(data, str(path), reporter, progress=progress)
    del data                     # the columns hold copies: the file's bytes can go now
    release_free_memory(nbytes)
    if kineto is None:
        kineto = looks_like_kineto(cols)
    if not kineto:
        return build_trace(cols, reporter, partition=partition or 0, source=str(path))
    header = cols.header
    info = header.get("distributedInfo") if isinstance(header.get("distributedInfo"), dict) else {}
    rank = info.get("rank")
    rank_ok = _integer_below(rank, 1 << 20)
    if rank is not None and not rank_ok:
        reporter.add("bad_rank")        # the file is partition 0 (or the one load gives it)
    if partition is None:
        partition = int(rank) if rank_ok else 0
    base = header.get("baseTimeNanoseconds")
    if base is not None and not _integer_below(base, BASE_TIME_LIMIT):
        reporter.add("bad_base_time")   # kept out of the metadata: ranks are not aligned by it
        base = None
    trace = build_trace(cols, reporter, partition=partition, source=str(path),
                        thread_kind=lambda ident: _gpu_streams(cols, ident),
                        flow_kind=lambda cat: cat if cat in _FLOW_KINDS else "flow")
    devices = header.get("deviceProperties") if isinstance(header.get("deviceProperties"), list) else []
    trace.metadata.update({
        "format": "kineto",
        "base_time_ns": base,
        "distributed_info": info,
        "device_properties": devices,
        "schema_version": header.get("schemaVersion"),
    })
    if devices:
        trace.processes = _label_devices(trace.processes, devices)
    return trace


def _gpu_streams(cols, ident):
    """{thread row: "gpu-stream"} for threads with GPU activity."""
    kinds = {}
    gpu = pc.is_in(cols.cat, value_set=pa.array(GPU_CATEGORIES)).to_numpy(zero_copy_only=False)
    rows = ident.thread_of[gpu & (ident.thread_of >= 0)]
    for row in np.unique(rows).tolist():
        kinds[int(row)] = "gpu-stream"
    for row, name in ident.thread_names.items():
        if name.strip().lower().startswith("stream"):
            kinds[int(row)] = "gpu-stream"
    return kinds


def _label_devices(processes, devices):
    names = {str(d.get("id")): str(d.get("name", "")) for d in devices if isinstance(d, dict)}
    pids = processes.column("pid").to_pylist()
    labels = processes.column("labels").to_pylist()
    out = []
    for pid, label in zip(pids, labels):
        extra = names.get(pid)
        out.append(label if not extra or extra in label else (f"{label}, {extra}" if label else extra))
    i = processes.schema.get_field_index("labels")
    return processes.set_column(i, processes.schema.field(i), pa.array(out, pa.string()))
