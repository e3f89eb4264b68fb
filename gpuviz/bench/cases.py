"""The benchmark cases: scan, compaction and reduction here; sort and analysis
(one data-analysis parameter change) in their own modules.

Each case builds a command graph around one gpuviz algorithm over imported
buffers, checks the output against numpy, and only then prints its row.
"""

from __future__ import annotations

import numpy as np

from ..algorithms import GPUCompaction, GPUReduction, GPUScan, ScanTuning
from ..algorithms.reduction import ReductionTuning
from .harness import (BU, GPUTimer, Mismatch, Peers, ReferenceKernel, check_equal, cpu_median, import_graph, read,
                      rewarm, upload)
from .tables import Column, Report, Table

#: Scan tunings tried with --variants (the first is the default).
SCAN_VARIANTS = {
    "default (rows 12, workgroup walk, no clear)": ScanTuning(),
    "rows 8": ScanTuning(rows=8),
    "rows 16": ScanTuning(rows=16),
    "early publish": ScanTuning(early_publish=True),
    "rows 16, early publish": ScanTuning(rows=16, early_publish=True),
    "clear pass": ScanTuning(clear_pass=True),
    "subgroup walk": ScanTuning(group_lookback=True),
    "subgroup walk, rows 16": ScanTuning(group_lookback=True, rows=16),
    "portable (no subgroups)": ScanTuning(subgroups=False),
}

#: Reduction tunings tried with --variants (the first is the default).
REDUCTION_VARIANTS = {
    "default (4 blocks a workgroup)": ReductionTuning(),
    "1 block (previous)": ReductionTuning(group_blocks=1),
    "2 blocks": ReductionTuning(group_blocks=2),
    "8 blocks": ReductionTuning(group_blocks=8),
    "16 blocks": ReductionTuning(group_blocks=16),
    "single pass": ReductionTuning(single_pass=True),
    "single pass, 8 blocks": ReductionTuning(single_pass=True, group_blocks=8),
}


#: The columns of the scan, compaction and reduction tables; peers in
#: brackets as multiples of the reference.
COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 30), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("ref_s", "ref µs", 9, "us"), Column("ratio", "ratio", 6, "ratio"),
           Column("target", "target", 9, "target", of="ratio"),
           Column("numpy_s", "numpy µs (×ref)", 18, "us_ratio", of="ref_s"),
           Column("torch_s", "torch µs (×ref)", 16, "us_ratio", of="ref_s"),
           Column("cupy_s", "cupy µs (×ref)", 16, "us_ratio", of="ref_s"))


def _add(table: Table, n, case, ours, ref, target=None, numpy=None, torch=None, cupy=None):
    table.add(size=n, case=case, gpu_s=ours, ref_s=ref, ratio=ours / ref, target=target, numpy_s=numpy,
              torch_s=torch, cupy_s=cupy)


def _compiled_recorder(compiled):
    return lambda encoder: compiled.encode(encoder)


def bench_scan(device, sizes, runs, *, variants=False, peers: Peers, report: Report | None = None):
    table = (report or Report()).table("scan", "GPUScan, exclusive uint32 (reads n, writes n)", COLUMNS,
                                       reference="vec4 copy kernel of n words")
    rng = np.random.default_rng(1)
    timer = GPUTimer(device, runs)
    for n in sizes:
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        expected = np.cumsum(x, dtype=np.uint32) - x
        src = upload(device, x)
        dst = device.create_buffer(size=4 * n, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
        rewarm(device, n)
        ref = timer.median(ReferenceKernel(device, "copy", n, src, dst).record)
        cases = SCAN_VARIANTS if variants else {"default": ScanTuning()}
        for label, tuning in cases.items():
            graph, v = import_graph(device, {"x": (src, "uint32", n), "y": (dst, "uint32", n)})
            GPUScan(id="scan", input=v["x"], output=v["y"], tuning=tuning).add_to_graph(graph)
            compiled = graph.compile()
            device.queue.write_buffer(dst, 0, np.zeros(n, np.uint32))
            ours = timer.median(_compiled_recorder(compiled))
            check_equal(f"scan {label}", read(device, dst, np.uint32, n), expected)
            compiled.destroy()
            first = label == next(iter(cases))
            _add(table, n, label, ours, ref, target=1.25 if first else None,
                      numpy=cpu_median(lambda: np.cumsum(x, dtype=np.uint32)) if first else None,
                      **(_scan_peers(peers, x, runs) if first else {}))
        # segmented, for the record (no target)
        flags = (rng.random(n) < 0.001).astype(np.uint32)
        fbuf = upload(device, flags)
        graph, v = import_graph(device, {"x": (src, "uint32", n), "y": (dst, "uint32", n), "f": (fbuf, "uint32", n)})
        GPUScan(id="scan", input=v["x"], output=v["y"], segment_flags=v["f"]).add_to_graph(graph)
        compiled = graph.compile()
        ours = timer.median(_compiled_recorder(compiled))
        heads = flags != 0
        heads[0] = True
        inclusive = np.cumsum(x, dtype=np.uint32)
        starts = np.flatnonzero(heads)
        base = (inclusive - x)[starts][np.cumsum(heads) - 1]
        check_equal("segmented scan", read(device, dst, np.uint32, n), inclusive - x - base)
        compiled.destroy()
        _add(table, n, "segmented (0.1% starts)", ours, ref)
        for b in (src, dst, fbuf):
            b.destroy()
    return table


def _scan_peers(peers, x, runs):
    out = {}
    if peers.torch is not None:
        t = peers.torch.from_numpy(x.view(np.int32)).cuda()
        out["torch"] = peers.time_torch(lambda: peers.torch.cumsum(t, 0), runs)
        del t
    if peers.cupy is not None:
        c = peers.cupy.asarray(x)
        out["cupy"] = peers.time_cupy(lambda: peers.cupy.cumsum(c), runs)
        del c
    return out


def bench_compaction(device, sizes, runs, *, peers: Peers, report: Report | None = None, **_):
    table = (report or Report()).table(
        "compaction", "GPUCompaction, uint32 values by uint32 flags (reads 2n, writes survivors + count)", COLUMNS,
        reference="vec4 copy kernel of 2n words")
    rng = np.random.default_rng(2)
    timer = GPUTimer(device, runs)
    for n in sizes:
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        src2 = upload(device, np.zeros(2 * n, np.uint32))
        dst2 = device.create_buffer(size=8 * n, usage=BU.STORAGE)
        rewarm(device, n)
        ref = timer.median(ReferenceKernel(device, "copy", 2 * n, src2, dst2).record)
        src2.destroy()
        dst2.destroy()
        values = upload(device, x)
        out = device.create_buffer(size=4 * n, usage=BU.STORAGE | BU.COPY_SRC)
        count = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC)
        for density in (0.5, 0.01):
            flags = (rng.random(n) < density).astype(np.uint32)
            fbuf = upload(device, flags)
            graph, v = import_graph(device, {"x": (values, "uint32", n), "f": (fbuf, "uint32", n),
                                       "y": (out, "uint32", n), "c": (count, "uint32", 1)})
            GPUCompaction(id="compact", input=v["x"], flags=v["f"], output=v["y"], count=v["c"]).add_to_graph(graph)
            compiled = graph.compile()
            ours = timer.median(_compiled_recorder(compiled))
            expected = x[flags != 0]
            got_count = int(read(device, count, np.uint32, 1)[0])
            if got_count != expected.size:
                raise Mismatch(f"compaction count {got_count} != {expected.size}")
            check_equal("compaction", read(device, out, np.uint32, expected.size), expected)
            compiled.destroy()
            mask = flags != 0
            extra = {}
            if peers.torch is not None:
                tx = peers.torch.from_numpy(x.view(np.int32)).cuda()
                tf = peers.torch.from_numpy(flags.view(np.int32)).cuda()
                extra["torch"] = peers.time_torch(lambda: tx[tf != 0], runs)
                del tx, tf
            if peers.cupy is not None:
                cx, cf = peers.cupy.asarray(x), peers.cupy.asarray(flags)
                extra["cupy"] = peers.time_cupy(lambda: cx[cf != 0], runs)
                del cx, cf
            _add(table, n, f"density {density:g}", ours, ref, target=1.6, numpy=cpu_median(lambda: x[mask]), **extra)
            fbuf.destroy()
        for b in (values, out, count):
            b.destroy()
    return table


def bench_reduction(device, sizes, runs, *, variants=False, peers: Peers, report: Report | None = None, **_):
    table = (report or Report()).table("reduction", "GPUReduction (reads n)", COLUMNS,
                                       reference="vec4 read kernel of n words")
    rng = np.random.default_rng(3)
    timer = GPUTimer(device, runs)
    for n in sizes:
        cases = (("sum uint32", "uint32", "sum", rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)),
                 ("extent float32", "float32", "extent", rng.normal(size=n).astype(np.float32)))
        for label, fmt, op, data in cases:
            src = upload(device, data)
            sink = device.create_buffer(size=16, usage=BU.STORAGE)
            rewarm(device, n)
            ref = timer.median(ReferenceKernel(device, "read", n, src, sink).record)
            out = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC)
            tunings = REDUCTION_VARIANTS if variants else {"default": ReductionTuning()}
            for tuning_label, tuning in list(tunings.items())[1:]:
                graph, v = import_graph(device, {"x": (src, fmt, n), "y": (out, fmt, 2)})
                GPUReduction(id="reduce", input=v["x"], output=v["y"], operation=op,
                             tuning=tuning).add_to_graph(graph)
                compiled = graph.compile()
                t = timer.median(_compiled_recorder(compiled))
                _check_reduction(device, out, op, data)
                compiled.destroy()
                _add(table, n, f"{label}, {tuning_label}", t, ref)
            graph, v = import_graph(device, {"x": (src, fmt, n), "y": (out, fmt, 2)})
            GPUReduction(id="reduce", input=v["x"], output=v["y"], operation=op).add_to_graph(graph)
            compiled = graph.compile()
            ours = timer.median(_compiled_recorder(compiled))
            _check_reduction(device, out, op, data)
            if op == "sum":
                numpy_time = cpu_median(lambda: data.sum(dtype=np.uint32))
            else:
                numpy_time = cpu_median(lambda: (data.min(), data.max()))
            compiled.destroy()
            extra = {}
            if peers.torch is not None:
                t = peers.torch.from_numpy(data.view(np.int32) if fmt == "uint32" else data).cuda()
                fn = (lambda: peers.torch.sum(t)) if op == "sum" else (lambda: peers.torch.aminmax(t))
                extra["torch"] = peers.time_torch(fn, runs)
                del t
            if peers.cupy is not None:
                c = peers.cupy.asarray(data)
                fn = (lambda: c.sum()) if op == "sum" else (lambda: (c.min(), c.max()))
                extra["cupy"] = peers.time_cupy(fn, runs)
                del c
            _add(table, n, label, ours, ref, target=1.2, numpy=numpy_time, **extra)
            for b in (src, sink, out):
                b.destroy()
    return table


def _check_reduction(device, out, op, data):
    if op == "sum":
        expected = np.array([data.sum(dtype=np.uint64) % (1 << 32)], np.uint32)
        check_equal("sum", read(device, out, np.uint32, 1), expected)
    else:
        check_equal("extent", read(device, out, np.float32, 2), np.array([data.min(), data.max()], np.float32))

