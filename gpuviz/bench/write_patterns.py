"""``python -m gpuviz.bench.write_patterns``: what GPUVisibilityWorkflow's ID
stores cost alone.

The workflow's probes (docs/benchmarks.md, sessions 8-9) put 12-20 µs of its
10M-sphere time in the ID writes, far above 21 MB at copy bandwidth. These
kernels isolate the stores: ``rows`` writes the kept rows' IDs with the
workflow's pattern (one row per lane, a warp's kept rows on consecutive
output words, random keep bits), ``dense`` writes as many words by
consecutive lanes, and the vec4 copy kernel moves the same bytes (bits
read + IDs written, half each way) for scale. Every ``rows`` output is
checked against numpy once.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph.shaders import compute_pipeline, wgsl
from .harness import GPUTimer, Mismatch, ReferenceKernel, read, upload
from .tables import Column, Report

__all__ = ["bench_write_patterns", "main"]

BU = wgpu.BufferUsage
SIZES = (10_000_000, 25_000_000)
DENSITIES = (0.53, 0.35)
COLUMNS = (Column("size", "rows", 6, "size"), Column("density", "kept", 6, "ratio"),
           Column("kernel", "kernel", 8), Column("gpu_s", "µs", 8, "us"), Column("ref_s", "copy µs", 8, "us"),
           Column("gbs", "GB/s written", 12), Column("ratio", "÷copy", 6, "ratio"))


def _kernel(device, mode, n, kept, bits, before, out):
    pipeline = compute_pipeline(device, wgsl("bench/shaders/write_patterns.wgsl", mode=mode),
                                constants={"ROWS": n, "KEPT": kept}, label=f"bench-write-{mode}")
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        for b, buf in enumerate((bits, before, out))])
    lanes = n if mode == "rows" else kept
    groups = -(-lanes // 256)
    limit = int(device.limits["max-compute-workgroups-per-dimension"])
    grid = (groups, 1, 1) if groups <= limit else (limit, -(-groups // limit), 1)

    def record(encoder):
        compute_pass = encoder.begin_compute_pass()
        compute_pass.set_pipeline(pipeline)
        compute_pass.set_bind_group(0, group)
        compute_pass.dispatch_workgroups(*grid)
        compute_pass.end()
    return record


def bench_write_patterns(device, sizes=None, runs=20, *, report=None, densities=DENSITIES):
    """The ``rows`` / ``dense`` / copy table (see the module docstring);
    raises Mismatch when a ``rows`` output differs from numpy."""
    report = report or Report()
    table = report.table("write-patterns", "ID store patterns alone (GPUVisibilityWorkflow's writes)", COLUMNS,
                         reference="vec4 copy kernel of the bits read + IDs written")
    timer = GPUTimer(device, runs)
    rng = np.random.default_rng(9)
    for n in sizes or SIZES:
        for density in densities:
            keep = rng.random(-(-n // 32) * 32) < density
            keep[n:] = False
            words = np.packbits(keep, bitorder="little").view("<u4").astype(np.uint32)  # bit b of word w: row 32w+b
            counts = keep.reshape(-1, 32).sum(1)
            before = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint32)
            expected = np.flatnonzero(keep).astype(np.uint32)
            kept = expected.size
            bits, starts = upload(device, words), upload(device, before)
            out = device.create_buffer(size=4 * max(kept, 4), usage=BU.STORAGE | BU.COPY_SRC)
            moved = words.nbytes + 4 * kept
            copy_words = -(-moved // 32) * 4
            src = device.create_buffer(size=4 * copy_words, usage=BU.STORAGE)
            dst = device.create_buffer(size=4 * copy_words, usage=BU.STORAGE)
            ref = timer.median(ReferenceKernel(device, "copy", copy_words, src, dst).record)
            for mode in ("rows", "dense"):
                record = _kernel(device, mode, n, kept, bits, starts, out)
                seconds = timer.median(record)
                got = read(device, out, np.uint32, kept)
                want = expected if mode == "rows" else np.arange(kept, dtype=np.uint32)
                if not np.array_equal(got, want):
                    raise Mismatch(f"write pattern {mode} at {n} rows, {density:.0%} kept: wrong IDs")
                table.add(size=n, density=density, kernel=mode, gpu_s=seconds, ref_s=ref,
                          gbs=f"{4 * kept / seconds / 1e9:,.0f}", ratio=seconds / ref)
            for b in (bits, starts, out, src, dst):
                b.destroy()
    return table


def main(argv=None) -> int:
    """``python -m gpuviz.bench.write_patterns``: the ID store pattern table."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.write_patterns",
                                     description=main.__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated row counts (K/M suffixes; default 10M, 25M)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    args = parser.parse_args(argv)
    from . import run_benchmarks
    from .harness import parse_sizes

    sizes = parse_sizes(args.sizes) if args.sizes else None
    return run_benchmarks([("write-patterns", lambda device, peers, report: bench_write_patterns(
        device, sizes, args.runs, report=report))], prog="gpuviz.bench.write_patterns", argv=argv, warm_seconds=1.5)


if __name__ == "__main__":
    raise SystemExit(main())
