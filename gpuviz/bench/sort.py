"""``python -m gpuviz.bench sort`` (or ``python -m gpuviz.bench.sort``):
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

import sys
import time

import numpy as np

from ..algorithms.segmented_sort import GPUSegmentedSort
from ..algorithms.sort import GPUSort, SortTuning
from ..graph.errors import GraphError
from .harness import GPUTimer, Peers, ReferenceKernel, fmt_time, import_graph, read, rewarm, size_label, upload

__all__ = ["bench_sort", "main"]

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


class Mismatch(AssertionError):
    pass


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


def _sort_graph(device, n, bufs, *, values=True, key_bits=32, tuning=None):
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
        got = read(device, bufs[name], np.uint32, n)
        if not np.array_equal(got, expected):
            bad = np.flatnonzero(got != expected)
            raise Mismatch(f"sort {label}: {name} differs from numpy at {bad.size} rows (first {bad[:5].tolist()})")


def _clear_outputs(device, bufs, n):
    zeros = np.zeros(n, np.uint32)
    for name in ("out_keys", "out_values"):
        device.queue.write_buffer(bufs[name], 0, zeros)


def _line(cells, widths=(5, 22, 10, 9, 6, 8, 11, 8, 11, 11, 11)):
    return "  ".join(str(c).rjust(w) if i != 1 else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


HEADER = ("size", "case", "gpuviz µs", "copy µs", "ratio", "≤5", "torch µs", "torch÷", "torch pr µs", "cupy pr µs",
          "numpy µs")


def _node_breakdown(compiled, device, samples=3):
    """Median GPU µs per node over a few timestamped encodings (one pass per node)."""
    rows = []
    for _ in range(samples):
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        rows.append(compiled.read_timings())
    return {node: float(np.median([r[node] for r in rows])) for node in rows[0]}


def bench_sort(device, sizes, runs, *, variants=False, peers: Peers):
    """The sort table (the signature of the harness's BENCHMARKS entries)."""
    rng = np.random.default_rng(4)
    timer = GPUTimer(device, runs)
    failures = []
    print("\nGPUSort, random uint32 keys + uint32 values (copy = WGSL vec4 copy kernel over keys+values bytes; "
          "torch = torch.sort(int32 keys, stable=True); torch÷ = torch / gpuviz, target ≥ 2)")
    print(_line(HEADER), flush=True)
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
                compiled = _sort_graph(device, n, bufs, values=mode != "keys-only", key_bits=key_bits,
                                       tuning=tuning)
            except GraphError as exc:  # e.g. a tile larger than this device's workgroup memory
                print(f"{size_label(n):>5}  {label}: skipped ({exc})", flush=True)
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
                print(f"{size_label(n):>5}  {label}: NOT PRINTED, {exc}", flush=True)
                failures.append(label)
                compiled.destroy()
                continue
            first = label == "default"
            if first:  # the copy again, on buffers the sort has warmed: the faster copy is the stricter reference
                ref = min(ref, timer.median(copy_kernel.record))
            mark = ("ok" if ours / ref <= 5 else "MISS") if first else ""
            print(_line((size_label(n), label, fmt_time(ours), fmt_time(ref), f"{ours / ref:.2f}", mark,
                         fmt_time(torch_s) if first else "", f"{torch_s / ours:.2f}" if first and torch_s else "",
                         fmt_time(torch_pairs) if first else "", fmt_time(cupy_pairs) if first else "",
                         fmt_time(numpy_s) if first else "")), flush=True)
            if first and variants:
                parts = _node_breakdown(compiled, device)
                print("      per node (own pass each): " + ", ".join(
                    f"{k.removeprefix('sort-')} {v * 1e6:.1f}" for k, v in parts.items()), flush=True)
            compiled.destroy()
        for buffer in list(bufs.values()) + list(copy_buffers):
            buffer.destroy()
    if variants:
        _bench_small(device, runs, rng)
        _bench_segmented(device, min(sizes), runs, rng, peers)
        for n in sizes:
            _bench_shared_top_byte(device, n, runs, rng, peers)
    if failures:
        raise Mismatch(f"variants with wrong output: {', '.join(failures)}")


def _bench_small(device, runs, rng):
    """Bitonic (one workgroup) against radix passes at small sizes."""
    timer = GPUTimer(device, runs)
    print("\nsmall domains: one-workgroup bitonic vs radix passes (µs)")
    for n in SMALL_SIZES:
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        values = np.arange(n, dtype=np.uint32)
        order = np.argsort(keys, kind="stable")
        bufs = upload_pairs(device, keys, values)
        cells = [size_label(n)]
        for label, tuning in (("bitonic", SortTuning(small_max=2048)), ("radix", SortTuning(small_max=1))):
            compiled = _sort_graph(device, n, bufs, tuning=tuning)
            _clear_outputs(device, bufs, n)
            t = timer.median(lambda encoder: compiled.encode(encoder))
            _check(f"{label} {n}", device, bufs, n, keys[order], values[order])
            cells.append(f"{label} {fmt_time(t)}")
            compiled.destroy()
        print("  " + "   ".join(cells), flush=True)


def _bench_shared_top_byte(device, n, runs, rng, peers: Peers):
    """Keys that share their top byte (24 random bits under a constant one,
    like timestamps in a window): the top digit's pass is the identity and
    only copies."""
    timer = GPUTimer(device, runs)
    keys = rng.integers(0, 1 << 24, n, dtype=np.uint64).astype(np.uint32) | np.uint32(0xA5000000)
    values = np.arange(n, dtype=np.uint32)
    order = np.argsort(keys, kind="stable")
    bufs = upload_pairs(device, keys, values)
    compiled = _sort_graph(device, n, bufs)
    t = timer.median(lambda encoder: compiled.encode(encoder))
    _check(f"shared top byte {n}", device, bufs, n, keys[order], values[order])
    parts = _node_breakdown(compiled, device)
    compiled.destroy()
    line = (f"\n{size_label(n)} keys sharing their top byte: gpuviz {fmt_time(t)} (scatter passes "
            + ", ".join(f"{v * 1e6:.0f}" for k, v in parts.items() if "scatter" in k) + " µs)")
    if peers.torch is not None:
        tk = peers.torch.from_numpy(keys.view(np.int32)).cuda()
        torch_s = peers.time_torch(lambda: peers.torch.sort(tk, stable=True), runs)
        line += f", torch.sort(stable) {fmt_time(torch_s)} (torch ÷ gpuviz {torch_s / t:.2f})"
        del tk
    print(line, flush=True)
    for buffer in bufs.values():
        buffer.destroy()


def _segmented_graph(device, n, bufs, offsets, lengths, tuning):
    graph, views = _pair_views(device, n, bufs, "bench-segmented-sort")
    GPUSegmentedSort(id="seg", keys=views["keys"], values=views["values"], output_keys=views["out_keys"],
                     output_values=views["out_values"], offsets=offsets, lengths=lengths,
                     tuning=tuning).add_to_graph(graph)
    return graph.compile()


def _bench_segmented(device, n, runs, rng, peers: Peers):
    """GPUSegmentedSort of n rows cut into segments of 256 rows, or of 1..256
    rows (random lengths, no gaps); peer: torch.sort(stable) of int64
    (segment << 32 | key) plus a gather of the values."""
    timer = GPUTimer(device, runs)
    print(f"\nsegmented sort of {size_label(n)} rows, keys + values (µs; torch = stable sort of int64 "
          "segment<<32|key + gather)")
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
        cells = [f"  {label} ({lengths.size} segments):"]
        for case, tuning in (("default", SortTuning()), ("bounds checks on", SortTuning(runtime_checks=True))):
            compiled = _segmented_graph(device, n, bufs, offsets.tolist(), lengths.tolist(), tuning)
            _clear_outputs(device, bufs, n)
            t = timer.median(lambda encoder: compiled.encode(encoder))
            _check(f"segmented {label} {case}", device, bufs, rows, keys[:rows][order], values[:rows][order])
            cells.append(f"{case} {fmt_time(t)}")
            compiled.destroy()
        if peers.torch is not None:
            torch = peers.torch
            tc = torch.from_numpy(composite.view(np.int64)).cuda()
            tv = torch.from_numpy(values[:rows].view(np.int32)).cuda()
            cells.append(f"torch {fmt_time(peers.time_torch(lambda: tv[torch.sort(tc, stable=True)[1]], runs))}")
            del tc, tv
        print("   ".join(cells), flush=True)
    for buffer in bufs.values():
        buffer.destroy()


def main(argv=None) -> int:
    """``python -m gpuviz.bench.sort [--sizes ...] [--runs N] [--variants]``:
    the shared harness's ``sort`` benchmark."""
    from . import main as bench_main

    return bench_main(["sort", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
