"""``python -m gpuviz.bench sort``:
GPUSort of random uint32 key + uint32 value pairs.

Prints one table per run: size, median GPU time of the compiled sort graph
(timestamps around each encoding, after warm-up), the same-run WGSL vec4
copy kernel over the keys + values bytes, their ratio (target ≤ 5), and the
peers measured in the same process: ``torch.sort(stable=True)`` of int32 keys
(the issue's anchor; returns keys and int64 indices) with its ratio to
GPUSort (target ≥ 2), torch pairs (stable sort + value gather), cupy pairs
(argsort + take) and numpy (stable argsort + two takes, one run). A row is
printed only after the GPU output matched numpy's stable argsort. With
``--variants`` also: tuning variants, keys-only and 16-bit keys, a per-node
breakdown, the bitonic/radix crossover at small sizes, GPUSegmentedSort
of the smallest size cut into 256-row and 1..256-row segments, and keys that
share their top byte (a pass that only copies).
"""

from __future__ import annotations

import time

import numpy as np

from ..algorithms.segmented_sort import GPUSegmentedSort
from ..algorithms.sort import GPUSort, SortTuning
from ..errors import GraphError
from .harness import GPUTimer, Mismatch, Peers, ReferenceKernel, check_equal, import_graph, read, rewarm, upload
from .tables import Column, Report, size_label

__all__ = ["bench_sort"]

#: Radix tunings tried with --variants (the first is the default).
SORT_VARIANTS = {
    "default": SortTuning(),
    "bounds checks on": SortTuning(runtime_checks=True),
    "values after look-back": SortTuning(late_values=True),
    "ballots first": SortTuning(ballots_first=True),
    "items 20": SortTuning(items=20),
    "plain staging": SortTuning(staging="plain", rank_lanes=32),
    "portable": SortTuning(subgroups=False),
}
SMALL_SIZES = (256, 1024, 2048)

#: The main sort table: the WGSL copy of keys + values is the reference; torch
#: is ``torch.sort(int32 keys, stable=True)``, torch÷ its time over gpuviz's.
COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 22), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("ref_s", "copy µs", 9, "us"), Column("ratio", "ratio", 6, "ratio"),
           Column("target", "target", 8, "target", of="ratio"), Column("torch_s", "torch µs", 8, "us"),
           Column("torch_over_gpu", "torch÷", 6, "ratio"), Column("torch_pairs_s", "torch pr µs", 11, "us"),
           Column("cupy_pairs_s", "cupy pr µs", 10, "us"), Column("numpy_s", "numpy µs", 11, "us"))


def upload_pairs(device, keys, values) -> dict:
    """Input and (zeroed) output buffers of a paired sort: keys, values, out_keys, out_values."""
    zeros = np.zeros(keys.size, np.uint32)
    return {"keys": upload(device, keys), "values": upload(device, values),
            "out_keys": upload(device, zeros), "out_values": upload(device, zeros)}


def pair_copy_kernel(device, n):
    """The reference: the WGSL vec4 copy kernel over the keys + values bytes
    (2n words), and the two buffers it copies between."""
    buffers = (upload(device, np.zeros(2 * n, np.uint32)), upload(device, np.zeros(2 * n, np.uint32)))
    return ReferenceKernel(device, "copy", 2 * n - (2 * n) % 4, *buffers), buffers


def _pair_views(device, n, bufs, id):
    return import_graph(device, {name: (buffer, "uint32", n) for name, buffer in bufs.items()}, id=id)


def sort_graph(device, n, bufs, *, values=True, key_bits=32, tuning=None):
    graph, views = _pair_views(device, n, bufs, "bench-sort")
    sort = GPUSort(id="sort", keys=views["keys"], output_keys=views["out_keys"],
                   values=views["values"] if values else None, output_values=views["out_values"] if values else None,
                   key_bits=key_bits, tuning=tuning)
    sort.add_to_graph(graph)
    return graph.compile()


def _check(label, device, bufs, n, expected_keys, expected_values):
    for name, expected in (("out_keys", expected_keys), ("out_values", expected_values)):
        if expected is None:
            continue
        check_equal(f"sort {label}: {name}", read(device, bufs[name], np.uint32, n), expected)


def _clear_outputs(device, bufs, n):
    zeros = np.zeros(n, np.uint32)
    for name in ("out_keys", "out_values"):
        device.queue.write_buffer(bufs[name], 0, zeros)


def node_breakdown(compiled, device, samples=3):
    """Median GPU µs per node over a few timestamped encodings (one pass per node)."""
    rows = []
    for _ in range(samples):
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        rows.append(compiled.read_timings())
    return {node: float(np.median([r[node] for r in rows])) for node in rows[0]}


def bench_sort(device, sizes, runs, *, variants=False, peers: Peers, report: Report | None = None):
    """The sort tables (the signature of gpuviz.bench.BENCHMARK_MODULES entries)."""
    report = report or Report()
    rng = np.random.default_rng(4)
    timer = GPUTimer(device, runs)
    failures = []
    table = report.table("sort", "GPUSort, random uint32 keys + uint32 values (copy = WGSL vec4 copy kernel over "
                         "keys+values bytes; torch = torch.sort(int32 keys, stable=True); torch÷ = torch / gpuviz, "
                         "target ≥ 2)", COLUMNS, reference="vec4 copy kernel of 2n words")
    for n in sizes:
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        values = np.arange(n, dtype=np.uint32)
        started = time.perf_counter()
        order = np.argsort(keys, kind="stable")
        expected_keys, expected_values = keys[order], values[order]
        numpy_s = time.perf_counter() - started
        bufs = upload_pairs(device, keys, values)
        copy_kernel, copy_buffers = pair_copy_kernel(device, n)
        rewarm(device, n)
        ref = timer.median(copy_kernel.record)
        torch_s = torch_pairs = cupy_pairs = None
        if peers.torch is not None:
            torch = peers.torch
            tk = torch.from_numpy(keys.view(np.int32)).cuda()
            tv = torch.from_numpy(values.view(np.int32)).cuda()
            torch_s = peers.time_torch(lambda: torch.sort(tk, stable=True), runs)
            torch_pairs = peers.time_torch(lambda: tv[torch.sort(tk, stable=True)[1]], runs)
            del tk, tv
        if peers.cupy is not None:
            cp = peers.cupy
            ck, cv = cp.asarray(keys), cp.asarray(values)
            cupy_pairs = peers.time_cupy(lambda: cv.take(cp.argsort(ck)), runs)
            del ck, cv
        cases = dict(SORT_VARIANTS) if variants else {"default": SortTuning()}
        if variants:
            cases["keys only"] = ("keys-only", SortTuning())
            cases["key_bits 16"] = ("bits16", SortTuning())
        for label, tuning in cases.items():
            mode = None
            if isinstance(tuning, tuple):
                mode, tuning = tuning
            key_bits = 16 if mode == "bits16" else 32
            try:
                compiled = sort_graph(device, n, bufs, values=mode != "keys-only", key_bits=key_bits,
                                       tuning=tuning)
            except GraphError as exc:  # e.g. a tile larger than this device's workgroup memory
                table.note(f"{size_label(n):>5}  {label}: skipped ({exc})", size=n, case=label, skipped=str(exc))
                continue
            _clear_outputs(device, bufs, n)
            ours = timer.median(lambda encoder: compiled.encode(encoder))
            try:
                if mode == "bits16":
                    o16 = np.argsort(keys & 0xFFFF, kind="stable")
                    _check(label, device, bufs, n, keys[o16], values[o16])
                else:
                    _check(label, device, bufs, n, expected_keys, None if mode == "keys-only" else expected_values)
            except Mismatch as exc:  # no time printed for a wrong sort; the others still run
                table.note(f"{size_label(n):>5}  {label}: NOT PRINTED, {exc}", size=n, case=label, mismatch=str(exc))
                failures.append(label)
                compiled.destroy()
                continue
            first = label == "default"
            if first:  # the copy again, on buffers the sort has warmed: the faster copy is the stricter reference
                ref = min(ref, timer.median(copy_kernel.record))
            peer = {"torch_s": torch_s, "torch_over_gpu": torch_s / ours if torch_s else None,
                    "torch_pairs_s": torch_pairs, "cupy_pairs_s": cupy_pairs, "numpy_s": numpy_s} if first else {}
            table.add(size=n, case=label, gpu_s=ours, ref_s=ref, ratio=ours / ref, target=5 if first else None,
                      **({c.key: None for c in COLUMNS[6:]} | peer))
            if first and variants:
                parts = node_breakdown(compiled, device)
                table.note(f"      {size_label(n)} per node (own pass each): " + ", ".join(
                    f"{k.removeprefix('sort-')} {v * 1e6:.1f}" for k, v in parts.items()), size=n, nodes_s=parts)
            compiled.destroy()
        for buffer in list(bufs.values()) + list(copy_buffers):
            buffer.destroy()
    if variants:
        _bench_small(device, runs, rng, report)
        _bench_segmented(device, min(sizes), runs, rng, peers, report)
        shared = report.table("sort-shared-top-byte", "keys sharing their top byte (the top digit's pass only "
                              "copies; torch = torch.sort(stable) of the same keys)", SHARED_COLUMNS)
        for n in sizes:
            _bench_shared_top_byte(device, n, runs, rng, peers, shared)
    if failures:
        raise Mismatch(f"variants with wrong output: {', '.join(failures)}")


def _bench_small(device, runs, rng, report: Report):
    """Bitonic (one workgroup) against radix passes at small sizes."""
    timer = GPUTimer(device, runs)
    table = report.table("sort-small", "small domains: one-workgroup bitonic vs radix passes",
                         (Column("size", "size", 5, "size"), Column("bitonic_s", "bitonic µs", 10, "us"),
                          Column("radix_s", "radix µs", 10, "us")))
    for n in SMALL_SIZES:
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        values = np.arange(n, dtype=np.uint32)
        order = np.argsort(keys, kind="stable")
        bufs = upload_pairs(device, keys, values)
        row = {"size": n}
        for label, tuning in (("bitonic", SortTuning(small_max=2048)), ("radix", SortTuning(small_max=1))):
            compiled = sort_graph(device, n, bufs, tuning=tuning)
            _clear_outputs(device, bufs, n)
            row[f"{label}_s"] = timer.median(lambda encoder: compiled.encode(encoder))
            _check(f"{label} {n}", device, bufs, n, keys[order], values[order])
            compiled.destroy()
        table.add(**row)


#: Keys sharing their top byte: the scatter passes' times, torch on the same keys.
SHARED_COLUMNS = (Column("size", "size", 5, "size"), Column("gpu_s", "gpuviz µs", 10, "us"),
                  Column("scatter", "scatter passes µs", 24), Column("torch_s", "torch µs", 9, "us"),
                  Column("torch_over_gpu", "torch÷", 6, "ratio"))


def _bench_shared_top_byte(device, n, runs, rng, peers: Peers, table):
    """Keys that share their top byte (24 random bits under a constant one,
    like timestamps in a window): the top digit's pass is the identity and
    only copies."""
    timer = GPUTimer(device, runs)
    keys = rng.integers(0, 1 << 24, n, dtype=np.uint64).astype(np.uint32) | np.uint32(0xA5000000)
    values = np.arange(n, dtype=np.uint32)
    order = np.argsort(keys, kind="stable")
    bufs = upload_pairs(device, keys, values)
    compiled = sort_graph(device, n, bufs)
    t = timer.median(lambda encoder: compiled.encode(encoder))
    _check(f"shared top byte {n}", device, bufs, n, keys[order], values[order])
    parts = node_breakdown(compiled, device)
    compiled.destroy()
    scatter = {k: v for k, v in parts.items() if "scatter" in k}
    torch_s = None
    if peers.torch is not None:
        tk = peers.torch.from_numpy(keys.view(np.int32)).cuda()
        torch_s = peers.time_torch(lambda: peers.torch.sort(tk, stable=True), runs)
        del tk
    table.add(size=n, gpu_s=t, scatter=", ".join(f"{v * 1e6:.0f}" for v in scatter.values()), scatter_s=scatter,
              torch_s=torch_s, torch_over_gpu=torch_s / t if torch_s else None)
    for buffer in bufs.values():
        buffer.destroy()


def _segmented_graph(device, n, bufs, offsets, lengths, tuning):
    graph, views = _pair_views(device, n, bufs, "bench-segmented-sort")
    GPUSegmentedSort(id="seg", keys=views["keys"], values=views["values"], output_keys=views["out_keys"],
                     output_values=views["out_values"], offsets=offsets, lengths=lengths,
                     tuning=tuning).add_to_graph(graph)
    return graph.compile()


def _bench_segmented(device, n, runs, rng, peers: Peers, report: Report):
    """GPUSegmentedSort of n rows cut into segments of 256 rows, or of 1..256
    rows (random lengths, no gaps); peer: torch.sort(stable) of int64
    (segment << 32 | key) plus a gather of the values."""
    timer = GPUTimer(device, runs)
    table = report.table("sort-segmented", f"segmented sort of {size_label(n)} rows, keys + values (torch = stable "
                         "sort of int64 segment<<32|key + gather)",
                         (Column("size", "size", 5, "size"), Column("segments", "segments", 30),
                          Column("gpu_s", "default µs", 10, "us"),
                          Column("checked_s", "bounds checks on µs", 10, "us"),
                          Column("torch_s", "torch µs", 9, "us")))
    keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    values = np.arange(n, dtype=np.uint32)
    bufs = upload_pairs(device, keys, values)
    for label, lengths in (("256-row segments", np.full(n // 256, 256)),
                           ("1..256-row segments", rng.integers(1, 257, n // 128))):
        lengths = lengths[np.cumsum(lengths) <= n]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        rows = int(lengths.sum())
        segment_of_row = np.repeat(np.arange(lengths.size, dtype=np.uint64), lengths)
        composite = (segment_of_row << np.uint64(32)) | keys[:rows].astype(np.uint64)
        order = np.argsort(composite, kind="stable")
        row = {"size": n, "segments": f"{lengths.size} of {label}", "torch_s": None}
        for key, tuning in (("gpu_s", SortTuning()), ("checked_s", SortTuning(runtime_checks=True))):
            compiled = _segmented_graph(device, n, bufs, offsets.tolist(), lengths.tolist(), tuning)
            _clear_outputs(device, bufs, n)
            row[key] = timer.median(lambda encoder: compiled.encode(encoder))
            _check(f"segmented {label} {key}", device, bufs, rows, keys[:rows][order], values[:rows][order])
            compiled.destroy()
        if peers.torch is not None:
            torch = peers.torch
            tc = torch.from_numpy(composite.view(np.int64)).cuda()
            tv = torch.from_numpy(values[:rows].view(np.int32)).cuda()
            row["torch_s"] = peers.time_torch(lambda: tv[torch.sort(tc, stable=True)[1]], runs)
            del tc, tv
        table.add(**row)
    for buffer in bufs.values():
        buffer.destroy()

