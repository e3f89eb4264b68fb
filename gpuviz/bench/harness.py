"""Benchmark plumbing: GPU timestamps, the reference copy/read kernels, peers
(numpy, torch, cupy) and the printed table.

Every GPU time is the median over timestamped runs recorded into one command
encoder after warm-up runs; the reference kernels are timed the same way in
the same process, so ratios compare like with like.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
import wgpu

from ..graph import GPUCommandGraph

BU = wgpu.BufferUsage
SHADERS = Path(__file__).with_name("shaders")


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
        vec4s = words // 4
        module = device.create_shader_module(code=(SHADERS / f"{kind}.wgsl").read_text())
        self.pipeline = device.create_compute_pipeline(layout="auto", compute={
            "module": module, "entry_point": "main", "constants": {"VEC4S": vec4s}})
        self.bind_group = device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": src, "offset": 0, "size": 4 * words}},
            {"binding": 1, "resource": {"buffer": dst, "offset": 0, "size": dst.size if kind == "read" else 4 * words}}])
        groups = -(-vec4s // (256 * items))
        limit = int(device.limits["max-compute-workgroups-per-dimension"])
        self.grid = (groups, 1, 1) if groups <= limit else (limit, -(-groups // limit), 1)

    def record(self, encoder):
        compute_pass = encoder.begin_compute_pass()
        compute_pass.set_pipeline(self.pipeline)
        compute_pass.set_bind_group(0, self.bind_group)
        compute_pass.dispatch_workgroups(*self.grid)
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


def rewarm(device, n: int) -> None:
    """Clocks drop while the host prepares large inputs (a numpy oracle can
    take seconds), and the first timing after that pays for it (H200 runs
    timed a 16M copy at 80-185 µs, not 43-74): keep the GPU busy again before
    timing large sizes."""
    if n >= 1 << 20:
        warm_up(device, 0.3)


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


def size_label(n: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def parse_sizes(text: str) -> list:
    sizes = []
    for item in text.split(","):
        item = item.strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(item[-1:], 1)
        sizes.append(int(item[:-1] if scale > 1 else item) * scale)
    return sizes


def fmt_time(seconds) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f}" if seconds < 1e-2 else f"{seconds * 1e6:.0f}"


class Table:
    """Rows printed as they are verified, in one fixed-width table."""

    COLUMNS = ("size", "case", "gpuviz µs", "ref µs", "ratio", "target", "numpy µs (×ref)", "torch µs (×ref)",
               "cupy µs (×ref)")
    WIDTHS = (5, 30, 10, 9, 6, 9, 18, 16, 16)

    def __init__(self, title: str, reference: str):
        self.title = title
        self.reference = reference
        self.header_printed = False
        self.rows = []

    def _line(self, cells) -> str:
        return "  ".join(str(c).rjust(w) if i != 1 else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, self.WIDTHS)))

    def add(self, n, case, ours, ref, target=None, numpy=None, torch=None, cupy=None):
        if not self.header_printed:
            print(f"\n{self.title} (ref = {self.reference})")
            print(self._line(self.COLUMNS))
            self.header_printed = True
        ratio = ours / ref
        mark = "" if target is None else (f"≤{target:g} ok" if ratio <= target else f"≤{target:g} MISS")

        def peer(t):
            return "-" if t is None else f"{fmt_time(t)} ({t / ref:.2f})"

        cells = (size_label(n), case, fmt_time(ours), fmt_time(ref), f"{ratio:.2f}", mark, peer(numpy), peer(torch),
                 peer(cupy))
        self.rows.append(cells)
        print(self._line(cells), flush=True)
