"""Benchmark plumbing: the run header, GPU timestamps, the reference copy/read
kernels and peers (numpy, torch, cupy); the tables are in ``tables``.

Every GPU time is the median over timestamped runs recorded into one command
encoder after warm-up runs; the reference kernels are timed the same way in
the same process, so ratios compare like with like.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import wgpu

from ..graph import GPUCommandGraph
from ..graph.shaders import compute_pipeline, wgsl
from .tables import fmt_time, size_label

__all__ = ["BU", "Mismatch", "check_equal", "GPUTimer", "ReferenceKernel", "Peers", "git_describe", "source_digest",
           "run_header", "format_header", "print_run_header", "command_line", "warm_up", "rewarm", "import_graph",
           "upload", "read", "cpu_median", "parse_sizes", "fmt_time", "size_label", "copy_time", "node_times"]

BU = wgpu.BufferUsage
PACKAGE = Path(__file__).resolve().parent.parent


class Mismatch(AssertionError):
    """A benchmark's GPU output differs from its numpy oracle: nothing is
    printed for it."""


def check_equal(label: str, got: np.ndarray, expected: np.ndarray) -> None:
    """Raise :class:`Mismatch` unless ``got`` equals the oracle row for row."""
    if not np.array_equal(got, expected):
        bad = np.flatnonzero(got != expected) if got.shape == expected.shape else np.arange(0)
        raise Mismatch(f"{label}: output differs from numpy at {bad.size} rows (first {bad[:5].tolist()}; "
                       f"{got.size} rows, expected {expected.size})")


class GPUTimer:
    """Median GPU seconds of a recorded command sequence, by timestamp queries
    written into the encoder around each run (``timestamp-query-inside-encoders``)."""

    def __init__(self, device, runs: int, warmup: int = 5):
        if "timestamp-query-inside-encoders" not in device.features:
            raise SystemExit("gpuviz.bench needs the 'timestamp-query-inside-encoders' feature on this adapter")
        self.device = device
        self.runs = runs
        self.warmup = warmup
        self.query_set = device.create_query_set(type="timestamp", count=2 * runs)
        self.resolve = device.create_buffer(size=16 * runs, usage=BU.QUERY_RESOLVE | BU.COPY_SRC)

    def median(self, record) -> float:
        """Run ``record(encoder)`` warmup + runs times; median seconds of the timed runs."""
        from wgpu.backends.wgpu_native.extras import write_timestamp

        device = self.device
        encoder = device.create_command_encoder()
        for _ in range(self.warmup):
            record(encoder)
        device.queue.submit([encoder.finish()])
        device.queue.read_buffer(self.resolve, 0, 8)  # wait: timed runs start on a busy, warm GPU
        encoder = device.create_command_encoder()
        for r in range(self.runs):
            write_timestamp(encoder, self.query_set, 2 * r)
            record(encoder)
            write_timestamp(encoder, self.query_set, 2 * r + 1)
        encoder.resolve_query_set(self.query_set, 0, 2 * self.runs, self.resolve, 0)
        device.queue.submit([encoder.finish()])
        stamps = np.frombuffer(device.queue.read_buffer(self.resolve), np.uint64).astype(np.int64)
        return float(np.median(stamps[1::2] - stamps[0::2])) * 1e-9


class ReferenceKernel:
    """The WGSL vec4 copy (``copy.wgsl``) or read (``read.wgsl``) kernel over
    ``words`` uint32, recorded as one compute pass."""

    def __init__(self, device, kind: str, words: int, src, dst):
        if words % 4:
            raise ValueError("reference kernels need a multiple of 4 words")
        items = 4 if kind == "copy" else 8
        limit = int(device.limits["max-compute-workgroups-per-dimension"])
        # One dispatch per binding-sized piece: a single binding over more
        # than the device's max storage binding (2 GiB on the H200) is refused.
        piece = int(device.limits["max-storage-buffer-binding-size"]) // 256 * 256 // 4
        self.dispatches = []
        for start in range(0, words, piece):
            count = min(piece, words - start)
            vec4s = count // 4
            pipeline = compute_pipeline(device, wgsl(f"bench/shaders/{kind}.wgsl"), constants={"VEC4S": vec4s},
                                        label=f"bench-{kind}")
            out = (0, 4) if kind == "read" else (4 * start, 4 * count)  # the read kernel's sink is one word
            bind_group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": src, "offset": 4 * start, "size": 4 * count}},
                {"binding": 1, "resource": {"buffer": dst, "offset": out[0], "size": out[1]}}])
            groups = -(-vec4s // (256 * items))
            grid = (groups, 1, 1) if groups <= limit else (limit, -(-groups // limit), 1)
            self.dispatches.append((pipeline, bind_group, grid))

    def record(self, encoder):
        compute_pass = encoder.begin_compute_pass()
        for pipeline, bind_group, grid in self.dispatches:
            compute_pass.set_pipeline(pipeline)
            compute_pass.set_bind_group(0, bind_group)
            compute_pass.dispatch_workgroups(*grid)
        compute_pass.end()


def warm_up(device, seconds: float = 0.5) -> None:
    """Keep the GPU busy for a moment so clocks settle before the first timing."""
    words = 1 << 24
    src = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    dst = device.create_buffer(size=4 * words, usage=BU.STORAGE | BU.COPY_SRC)
    kernel = ReferenceKernel(device, "copy", words, src, dst)
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        encoder = device.create_command_encoder()
        for _ in range(20):
            kernel.record(encoder)
        device.queue.submit([encoder.finish()])
        device.queue.read_buffer(dst, 0, 4)
    src.destroy()
    dst.destroy()


def rewarm(device, n: int, seconds: float = 0.3) -> None:
    """Clocks drop while the host prepares large inputs (a numpy oracle can
    take seconds), and the first timing after that pays for it (H200 runs
    timed a 16M copy at 80-185 µs, not 43-74): keep the GPU busy again for
    ``seconds`` before timing large sizes."""
    if n >= 1 << 20:
        warm_up(device, seconds)


def import_graph(device, buffers: dict, id: str = "bench"):
    """A new GPUCommandGraph importing ``{name: (buffer, format, rows)}``;
    returns ``(graph, {name: data view})``."""
    graph = GPUCommandGraph(device, id=id)
    views = {}
    for name, (buffer, fmt, length) in buffers.items():
        handle = graph.import_buffer(id=name, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
        views[name] = graph.create_data_view(handle, format=fmt, length=length)
    return graph, views


def upload(device, array: np.ndarray, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST):
    buffer = device.create_buffer(size=max(16, array.nbytes), usage=usage)
    if array.nbytes:
        device.queue.write_buffer(buffer, 0, np.ascontiguousarray(array))
    return buffer


def read(device, buffer, dtype, count: int) -> np.ndarray:
    return np.frombuffer(device.queue.read_buffer(buffer, 0, max(4, count * np.dtype(dtype).itemsize)),
                         dtype)[:count]


def cpu_median(fn, runs: int = 3) -> float:
    """Median wall seconds of a CPU call (after one warm-up call)."""
    fn()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class Peers:
    """torch and cupy on CUDA when importable, timed with CUDA events."""

    def __init__(self):
        self.torch = self.cupy = None
        try:
            import torch

            if torch.cuda.is_available():
                self.torch = torch
        except Exception:
            pass
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            self.cupy = cupy
        except Exception:
            pass

    def time_torch(self, fn, runs: int) -> float:
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        return statistics.median(times)

    def time_cupy(self, fn, runs: int) -> float:
        cupy = self.cupy
        fn()
        cupy.cuda.Device().synchronize()
        times = []
        for _ in range(runs):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) * 1e-3)
        return statistics.median(times)


def parse_sizes(text: str) -> list:
    sizes = []
    for item in text.split(","):
        item = item.strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(item[-1:], 1)
        sizes.append(int(item[:-1] if scale > 1 else item) * scale)
    return sizes


# ------------------------------------------------------------------ header
def git_describe() -> tuple:
    """``(describe, source)``: ``git describe --always --dirty`` of the checkout
    gpuviz is imported from; else ``$GPUVIZ_GIT_DESCRIBE`` (a copy of the tree
    without ``.git``, as on the lent GPU machine, can be told its commit);
    else ``"unknown"``."""
    root = PACKAGE.parent
    if (root / ".git").exists():
        try:
            done = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True,
                                  text=True, timeout=20)
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.strip(), "git"
        except (OSError, subprocess.SubprocessError):
            pass
    given = os.environ.get("GPUVIZ_GIT_DESCRIBE", "").strip()
    return (given, "GPUVIZ_GIT_DESCRIBE") if given else ("unknown", "none")


def source_digest() -> str:
    """SHA-256 (16 hex digits) over the paths and bytes of every ``.py`` and
    ``.wgsl`` file of the imported gpuviz package: what ran, checkable
    against any commit even where ``git describe`` is unknown or dirty."""
    digest = hashlib.sha256()
    for path in sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".wgsl") and "__pycache__" not in p.parts):
        digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def command_line(prog: str, argv=None) -> str:
    """The command that started this run: the interpreter's own argv when the
    benchmark was started from a shell (``argv`` None), else ``python -m prog argv``."""
    if argv is None:
        return shlex.join(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    return shlex.join(["python", "-m", prog, *argv])


def run_header(device, *, command: str, peers: "Peers | None" = None) -> dict:
    """What a result depends on, as data: the tree (``git describe --dirty``
    and a digest of the package source), wgpu and wgpu-native versions, the
    adapter's info (vendor, architecture, device, description: the driver),
    backend and features that pick kernels, the default tunings, the
    environment switches, the peers' versions and the command."""
    from wgpu.backends import wgpu_native

    from ..algorithms import AggregationTuning, ReductionTuning, ScanTuning, SortTuning
    from ..device import device_capabilities

    caps = device_capabilities(device)
    describe, source = git_describe()
    peer_versions = {"numpy": np.__version__}
    if peers is not None and peers.torch is not None:
        peer_versions["torch"] = f"{peers.torch.__version__} ({peers.torch.cuda.get_device_name()})"
    if peers is not None and peers.cupy is not None:
        peer_versions["cupy"] = peers.cupy.__version__
    return {
        "command": command,
        "commit": describe, "commit_source": source, "source_digest": source_digest(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(), "wgpu": wgpu.__version__, "wgpu_native": wgpu_native.__version__,
        "adapter": dict(device.adapter.info),
        "backend": caps.backend, "subgroups": caps.subgroups, "float32_atomics": caps.float32_atomics,
        # the defaults in effect; their reprs list every field
        "tuning": {cls.__name__: repr(cls()) for cls in (ScanTuning, SortTuning, ReductionTuning, AggregationTuning)},
        "env": {k: os.environ[k] for k in ("GPUVIZ_RUNTIME_CHECKS", "GPUVIZ_ADAPTER") if k in os.environ},
        "peers": peer_versions,
    }


def format_header(header: dict) -> str:
    """The header as the lines every benchmark prints first."""
    info = header["adapter"]
    driver = ", ".join(f"{k} {info[k]!r}" for k in ("vendor", "architecture", "device", "description") if info.get(k))
    lines = [f"command: {header['command']}",
             f"tree: {header['commit']} (from {header['commit_source']}), source digest {header['source_digest']}; "
             f"{header['date']}",
             f"wgpu {header['wgpu']}, wgpu-native {header['wgpu_native']}, python {header['python']}",
             f"adapter: {info.get('device', 'unknown')} ({header['backend']}, {info.get('adapter_type', '?')}); "
             f"subgroups {header['subgroups']}, float32 atomics {header['float32_atomics']}",
             f"driver: {driver}",
             "peers: " + ", ".join(f"{k} {v}" for k, v in header["peers"].items())]
    lines += [f"tuning: {text}" for text in header["tuning"].values()]
    if header["env"]:
        lines.append("env: " + " ".join(f"{k}={v}" for k, v in header["env"].items()))
    return "\n".join(lines)


def print_run_header(device, *, prog: str, argv=None, peers: "Peers | None" = None, command: str | None = None) -> dict:
    """Print the run header (:func:`run_header`) and return it: the first
    thing every benchmark entry point (``python -m gpuviz.bench ...``, the
    profiles) prints. ``prog`` is the entry point's module, ``argv`` as given
    to its ``main``; ``command`` overrides the recorded command line."""
    header = run_header(device, command=command or command_line(prog, argv), peers=peers)
    print(format_header(header), flush=True)
    return header


def copy_time(device, timer: GPUTimer, words: int) -> float:
    """Median seconds of the vec4 copy kernel over ``words`` uint32 (rounded
    up to a multiple of 4, at least 4): it reads and writes that many words."""
    words = max(4, -(-words // 4) * 4)
    src = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    dst = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    t = timer.median(ReferenceKernel(device, "copy", words, src, dst).record)
    src.destroy()
    dst.destroy()
    return t


def node_times(device, compiled, runs: int) -> dict:
    """Median GPU seconds per node of ``compiled`` over ``runs`` timestamped
    encodings (each node in its own timestamped pass)."""
    times = {}
    for _ in range(runs):
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        for node, t in (compiled.read_timings() or {}).items():
            times.setdefault(node, []).append(t)
    return {node: statistics.median(ts) for node, ts in times.items()}
