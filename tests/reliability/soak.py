"""Soak: seeded build / compile / encode / submit / destroy cycles over random
primitives and small data or vector layouts (empty chunks included).

``python -m tests.reliability.soak --cycles 2000 [--seed N] [--json]``

Each cycle picks a primitive, uploads tiny inputs, builds a graph, compiles,
encodes and submits it, on some cycles reads the outputs back and compares
them with a numpy oracle, then destroys the compiled graph and the uploads.
The summary reports RSS (start, after warm-up, peak, end), the per-device
shader-module and compute-pipeline cache sizes and the wall time: after
warm-up neither memory nor the caches may keep growing with the number of
distinct layouts (issue 10, item 4). Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import sys
import time

import numpy as np
import wgpu

import gpuviz
from gpuviz import (
    GPUCommandGraph,
    GPUCompaction,
    GPUData,
    GPUGridAggregation,
    GPUGroupAggregation,
    GPUHistogram,
    GPUMask,
    GPUReduction,
    GPUScan,
    GPUSegmentedSort,
    GPUSort,
    GPUVector,
    read_array,
)
from gpuviz.graph import compat, shaders
from gpuviz.oracles import algorithms as oracles

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
SENTINEL = 0xDEADBEEF
# Each cache's documented cap in gpuviz.graph.shaders (the fallback bounds a
# cache whose cap is not there).
CACHE_CAPS = {"shader-modules": "MODULE_CACHE_SIZE", "compute-pipelines": "PIPELINE_CACHE_SIZE"}
FALLBACK_CACHE_CAP = 256
# Structural parameters (operations, formats, key bits, bin / group / cell
# counts: shader constants by design) come from small fixed sets: the oracle
# tests in tests/algorithms cover every one; here the set of distinct
# pipelines stays small (a cold lavapipe compiles each in ~0.3 s) and is
# seen during warm-up, so every later cache entry or MiB could only come from
# a data size. The layouts themselves are random.
REDUCTION_FORMATS, REDUCTION_OPS = ("uint32", "float32"), ("sum", "extent")
MASK_OPS = ("and", "xor", "not")
KEY_BITS = (32, 8)
BIN_COUNTS, EDGE_COUNT = (10,), 6
GROUP_COUNTS, GROUP_OPS = (16,), ("count", "mean")  # mean adds sums and counts
GRID_SIZES, GRID_OPS = ((3, 2),), ("mean",)


def cache_caps() -> dict:
    """Cache name -> (cap name, cap): the shader builder's documented LRU caps."""
    return {cache: (name, getattr(shaders, name)) if hasattr(shaders, name) else ("FALLBACK_CACHE_CAP", FALLBACK_CACHE_CAP)
            for cache, name in CACHE_CAPS.items()}


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Cycle:
    """One graph's worth of uploads, with the helpers the builders share."""

    def __init__(self, device, rng, index):
        self.device, self.rng = device, rng
        self.graph = GPUCommandGraph(device, id=f"soak-{index}")
        self.owned = []
        self.names = 0

    def layout(self, vector=True, longest=300):
        """Chunk lengths of a vector (1-4 chunks, empty ones likely), or None
        and one length for a data view."""
        rng = self.rng
        pick = lambda: int(rng.choice([0, 1, 2, 3, 4, 5, 7, 64, int(rng.integers(0, longest + 1))]))
        if vector and rng.random() < 0.5:
            return [pick() for _ in range(int(rng.integers(1, 5)))]
        return pick()

    def upload(self, arrays):
        """Import a list of arrays as a vector view, one array as a data view."""
        self.names += 1
        name = f"in-{self.names}"
        if isinstance(arrays, list):
            source = GPUVector.from_numpy(self.device, arrays, USAGE, format=None if arrays else "uint32")
            self.owned.append(source)
            return self.graph.import_gpu_vector(name, source), source
        source = GPUData.from_numpy(self.device, arrays, USAGE)
        self.owned.append(source)
        return self.graph.import_gpu_data(name, source), source

    def read(self, source):
        return read_array(self.device, source)

    def destroy(self):
        for source in self.owned:
            source.destroy()


def per_chunk(layout, make):
    """``make(n)`` per chunk of ``layout`` (a list) or once (an int)."""
    return [make(n) for n in layout] if isinstance(layout, list) else make(layout)


def flat(arrays):
    return np.concatenate(arrays) if isinstance(arrays, list) else arrays


# ------------------------------------------------------------------ builders
# Each adds one primitive to cycle.graph and returns check(): read back, compare.
def build_scan(c):
    layout = c.layout()
    x = per_chunk(layout, lambda n: c.rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    segmented, inclusive = bool(c.rng.random() < 0.5), bool(c.rng.random() < 0.5)
    flags = per_chunk(layout, lambda n: (c.rng.random(n) < 0.1).astype(np.uint32)) if segmented else None
    xin, _ = c.upload(x)
    out, out_src = c.upload(per_chunk(layout, lambda n: np.full(n, SENTINEL, np.uint32)))
    fl = c.upload(flags)[0] if segmented else None
    GPUScan(id="scan", input=xin, output=out, mode="inclusive" if inclusive else "exclusive",
            segment_flags=fl).add_to_graph(c.graph)
    want = oracles.scan(flat(x), None if flags is None else flat(flags), inclusive)
    return lambda: np.testing.assert_array_equal(c.read(out_src), want)


def build_compaction(c):
    layout = c.layout()
    x = per_chunk(layout, lambda n: c.rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    f = per_chunk(layout, lambda n: c.rng.integers(0, 3, n).astype(np.uint32) * (c.rng.random(n) < 0.5))
    xin, _ = c.upload(x)
    fl, _ = c.upload(f)
    out, out_src = c.upload(per_chunk(layout, lambda n: np.full(n, SENTINEL, np.uint32)))
    count, count_src = c.upload(np.full(1, SENTINEL, np.uint32))
    GPUCompaction(id="compact", input=xin, flags=fl, output=out, count=count).add_to_graph(c.graph)
    want = oracles.compaction(flat(x), flat(f))

    def check():
        assert c.read(count_src).tolist() == [want.size]
        np.testing.assert_array_equal(c.read(out_src)[:want.size], want)
    return check


def build_reduction(c):
    layout = c.layout()
    fmt = str(c.rng.choice(REDUCTION_FORMATS))
    dtype = {"uint32": np.uint32, "sint32": np.int32, "float32": np.float32}[fmt]
    if fmt == "uint32":
        make = lambda n: c.rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    else:  # small integers: float sums are exact in any order
        make = lambda n: c.rng.integers(-100, 101, n).astype(dtype)
    x = per_chunk(layout, make)
    operation = str(c.rng.choice(REDUCTION_OPS))
    xin, _ = c.upload(x)
    out, out_src = c.upload(np.full(2 if operation == "extent" else 1, 7, dtype))
    GPUReduction(id="reduce", input=xin, output=out, operation=operation).add_to_graph(c.graph)
    want = oracles.reduction(flat(x), operation, dtype)
    return lambda: np.testing.assert_array_equal(c.read(out_src), want)


def build_mask(c):
    layout = c.layout()
    operation = str(c.rng.choice(MASK_OPS))
    k = 1 if operation == "not" else 2
    masks = [per_chunk(layout, lambda n: c.rng.choice(np.array([0, 0, 1, 5], np.uint32), n)) for _ in range(k)]
    views = [c.upload(m)[0] for m in masks]
    out, out_src = c.upload(per_chunk(layout, lambda n: np.full(n, SENTINEL, np.uint32)))
    GPUMask(id="mask", inputs=views, output=out, operation=operation).add_to_graph(c.graph)
    want = oracles.mask([flat(m) for m in masks], operation)
    return lambda: np.testing.assert_array_equal(c.read(out_src), want)


def sort_inputs(c, n):
    """Keys (few distinct ones half the time: stability matters), key bits,
    direction, and whether values ride along."""
    high = int(c.rng.choice([4, 1 << 32]))
    keys = c.rng.integers(0, high, n, dtype=np.uint64).astype(np.uint32)
    key_bits = int(c.rng.choice(KEY_BITS))
    return keys, key_bits, bool(c.rng.random() < 0.5), bool(c.rng.random() < 0.5)


def sort_buffers(c, keys, with_values):
    """The row values, then (input, output, output source) of the keys and,
    when values ride along, of the values (else Nones); outputs hold SENTINEL."""
    n = keys.size
    values = np.arange(n, dtype=np.uint32)
    k, _ = c.upload(keys)
    ok, ok_src = c.upload(np.full(n, SENTINEL, np.uint32))
    v, ov, ov_src = None, None, None
    if with_values:
        v, _ = c.upload(values)
        ov, ov_src = c.upload(np.full(n, SENTINEL, np.uint32))
    return values, (k, ok, ok_src), (v, ov, ov_src)


def sort_check(c, keys_out, values_out):
    """A check that each ``(source, want)`` output holds what the oracle
    wants (values are skipped when their want is None)."""
    def check():
        for source, want in (keys_out, values_out):
            if want is not None:
                np.testing.assert_array_equal(c.read(source), want)
    return check


def build_sort(c):
    # a few domains past small_max (2048) take the radix path
    n = int(c.rng.integers(2049, 2300)) if c.rng.random() < 0.05 else c.layout(vector=False)
    keys, key_bits, descending, with_values = sort_inputs(c, n)
    values, (k, ok, ok_src), (v, ov, ov_src) = sort_buffers(c, keys, with_values)
    GPUSort(id="sort", keys=k, output_keys=ok, values=v, output_values=ov, key_bits=key_bits,
            direction="descending" if descending else "ascending").add_to_graph(c.graph)
    order = oracles.sort_order(keys, key_bits, descending)
    return sort_check(c, (ok_src, keys[order]), (ov_src, values[order] if with_values else None))


def segments(c, n):
    """Non-overlapping (offset, length) segments with gaps and empty ones, in random order."""
    cuts = np.sort(c.rng.integers(0, n + 1, int(c.rng.integers(0, 8))))
    bounds = [0, *cuts.tolist(), n]
    segs = [(a, b - a) for a, b in itertools.pairwise(bounds) if c.rng.random() < 0.7]
    segs += [(int(c.rng.integers(0, n + 1)), 0) for _ in range(int(c.rng.integers(0, 2)))]
    c.rng.shuffle(segs)
    return [o for o, _ in segs], [m for _, m in segs]


def build_segmented_sort(c):
    n = c.layout(vector=False)
    keys, key_bits, descending, with_values = sort_inputs(c, n)
    offsets, lengths = segments(c, n)
    values, (k, ok, ok_src), (v, ov, ov_src) = sort_buffers(c, keys, with_values)
    GPUSegmentedSort(id="segsort", keys=k, output_keys=ok, values=v, output_values=ov, offsets=offsets,
                     lengths=lengths, key_bits=key_bits,
                     direction="descending" if descending else "ascending").add_to_graph(c.graph)
    want_k, want_v = np.full(n, SENTINEL, np.uint32), np.full(n, SENTINEL, np.uint32)
    for o, m in zip(offsets, lengths):
        order = o + oracles.sort_order(keys[o:o + m], key_bits, descending)
        want_k[o:o + m], want_v[o:o + m] = keys[order], values[order]
    return sort_check(c, (ok_src, want_k), (ov_src, want_v if with_values else None))


def quarter_values(c, layout, lo, hi):
    """float32 on a quarter grid over [lo, hi), a few non-finite."""
    def make(n):
        x = c.rng.integers(4 * lo, 4 * hi, n).astype(np.float32) / 4
        x[c.rng.random(n) < 0.05] = np.nan
        x[c.rng.random(n) < 0.03] = np.inf
        return x
    return per_chunk(layout, make)


def optional_mask(c, layout, chance=0.5):
    """A uint32 mask view and its truth, with probability ``chance``."""
    if c.rng.random() >= chance:
        return None, None
    m = per_chunk(layout, lambda n: (c.rng.random(n) < 0.7).astype(np.uint32))
    return c.upload(m)[0], flat(m) != 0


def build_histogram(c):
    layout = c.layout()
    x = quarter_values(c, layout, -1, 11)
    xin, _ = c.upload(x)
    mview, keep = optional_mask(c, layout)
    if c.rng.random() < 0.3:
        edges = np.sort(c.rng.choice(np.arange(-4, 44), EDGE_COUNT, replace=False)).astype(np.float64) / 4
        kwargs, bins, domain = {"edges": edges.tolist()}, edges, None
    else:
        bins, domain = int(c.rng.choice(BIN_COUNTS)), (0.0, 10.0)
        kwargs = {"domain": domain}
    out, out_src = c.upload(np.full(len(bins) - 1 if domain is None else bins, SENTINEL, np.uint32))
    GPUHistogram(id="hist", input=xin, output=out, mask=mview, **kwargs).add_to_graph(c.graph)
    flat_x = flat(x)
    want = oracles.histogram(flat_x, np.ones(flat_x.size, bool) if keep is None else keep, bins=bins, domain=domain)
    return lambda: np.testing.assert_array_equal(c.read(out_src), want)


def build_group_aggregation(c):
    layout = c.layout()
    groups = int(c.rng.choice(GROUP_COUNTS))
    operation = str(c.rng.choice(GROUP_OPS))
    codes = per_chunk(layout, lambda n: c.rng.integers(0, groups + 2, n).astype(np.uint32))
    weights = quarter_values(c, layout, -20, 20) if operation != "count" else None
    cv, _ = c.upload(codes)
    wv = c.upload(weights)[0] if weights is not None else None
    mview, keep = optional_mask(c, layout)
    out, out_src = c.upload(np.full(groups, SENTINEL, np.uint32 if operation == "count" else np.float32))
    agg = GPUGroupAggregation(id="groups", codes=cv, values=wv, output=out, operation=operation, mask=mview)
    agg.add_to_graph(c.graph)
    code = flat(codes).astype(np.int64)
    sel = np.ones(code.size, bool) if keep is None else keep
    overflow = int((sel & (code >= groups)).sum())
    want = oracles.grouped(np.where(sel & (code < groups), code, -1), groups, operation,
                           None if weights is None else flat(weights))

    def check():
        np.testing.assert_array_equal(c.read(out_src), want)
        got = np.frombuffer(c.device.queue.read_buffer(agg.overflow_buffer), np.uint32)
        assert got.tolist() == [overflow]
    return check


def build_grid_aggregation(c):
    layout = c.layout()
    w, h = GRID_SIZES[int(c.rng.integers(len(GRID_SIZES)))]
    operation = str(c.rng.choice(GRID_OPS))

    def positions(n):  # cell centres, a ring of cells outside the bounds
        return np.stack([c.rng.integers(-1, w + 1, n), c.rng.integers(-1, h + 1, n)], 1).astype(np.float32) + 0.5
    pos = per_chunk(layout, positions)
    weights = quarter_values(c, layout, -20, 20)
    pv, _ = c.upload(pos)
    wv, _ = c.upload(weights)
    mview, keep = optional_mask(c, layout, chance=1)  # one variant: always masked
    out, out_src = c.upload(np.full(w * h, SENTINEL, np.float32))
    GPUGridAggregation(id="grid", positions=pv, weights=wv, output=out, grid_size=(w, h), bounds=(0, 0, w, h),
                       operation=operation, mask=mview).add_to_graph(c.graph)
    p = np.floor(flat(pos).reshape(-1, 2)).astype(np.int64)
    inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    if keep is not None:
        inside &= keep
    want = oracles.grouped(np.where(inside, p[:, 1] * w + p[:, 0], -1), w * h, operation, flat(weights))
    return lambda: np.testing.assert_allclose(c.read(out_src), want, rtol=1e-6, equal_nan=True)


BUILDERS = {
    "GPUScan": build_scan, "GPUCompaction": build_compaction, "GPUReduction": build_reduction, "GPUMask": build_mask,
    "GPUSort": build_sort, "GPUSegmentedSort": build_segmented_sort, "GPUHistogram": build_histogram,
    "GPUGroupAggregation": build_group_aggregation, "GPUGridAggregation": build_grid_aggregation,
}


# ------------------------------------------------------------------ the loop
def run_cycle(device, seed, index, check_fraction):
    """Build, compile, encode, submit, maybe check, destroy; returns (name, checked)."""
    rng = np.random.default_rng([seed, index])
    name = list(BUILDERS)[int(rng.integers(len(BUILDERS)))]
    cycle = Cycle(device, rng, index)
    try:
        check = BUILDERS[name](cycle)
        compiled = cycle.graph.compile()
        try:
            encoder = device.create_command_encoder()
            compiled.encode(encoder)
            device.queue.submit([encoder.finish()])
            checked = bool(rng.random() < check_fraction)
            if checked:
                try:
                    check()
                except AssertionError as exc:
                    raise AssertionError(f"soak cycle {index} (seed {seed}) {name} does not match numpy") from exc
        finally:
            compiled.destroy()
    finally:
        cycle.destroy()
    return name, checked


def cache_sizes(device) -> dict:
    return {name: len(compat.device_cache(device, name)) for name in CACHE_CAPS}


def soak(*, cycles, seed=0, check_fraction=0.25, device=None, warmup=None, max_seconds=None, max_rss_growth=None):
    """Run ``cycles`` cycles; returns the summary dict (raises on a mismatch).

    Stops early, with ``completed < cycles`` and the reason in ``stopped``,
    once ``max_seconds`` have passed or RSS grew by ``max_rss_growth`` MiB:
    a cache that grows with every layout then fails fast instead of
    swapping the machine.
    """
    device = device or gpuviz.request_device()
    warmup = max(1, cycles // 2) if warmup is None else warmup
    counts, checked, stopped = collections.Counter(), 0, None
    start_rss = peak = rss_mib()
    warm_rss = warm_caches = None  # until the warm-up ends
    t0 = time.perf_counter()
    for index in range(cycles):
        name, was_checked = run_cycle(device, seed, index, check_fraction)
        counts[name] += 1
        checked += was_checked
        rss = rss_mib()
        peak = max(peak, rss)
        if index + 1 == warmup:
            warm_rss, warm_caches = rss, cache_sizes(device)
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            stopped = f"time limit {max_seconds} s"
        elif max_rss_growth is not None and rss - start_rss > max_rss_growth:
            stopped = f"RSS grew by more than {max_rss_growth} MiB"
        if stopped:
            break
    device.queue.read_buffer(device.create_buffer(size=4, usage=BU.COPY_SRC))  # waits for every submit
    return {
        "cycles": cycles, "completed": sum(counts.values()), "stopped": stopped, "seed": seed,
        "warmup_cycles": warmup, "checked": checked, "primitives": dict(sorted(counts.items())),
        "rss_mib": {"start": round(start_rss, 1), "warm": warm_rss and round(warm_rss, 1),
                    "peak": round(max(peak, rss_mib()), 1), "end": round(rss_mib(), 1)},
        "caches": cache_sizes(device), "caches_warm": warm_caches, "cache_caps": cache_caps(),
        "wall_s": round(time.perf_counter() - t0, 2),
    }


def format_summary(s) -> str:
    r, warm = s["rss_mib"], s["caches_warm"] or {}
    growth = "n/a" if r["warm"] is None else f"{r['end'] - r['warm']:+.1f}"
    return "\n".join([
        (f"soak: {s['completed']} of {s['cycles']} cycles (seed {s['seed']}), {s['checked']} checked against numpy, "
         f"{s['wall_s']} s ({1000 * s['wall_s'] / max(1, s['completed']):.1f} ms/cycle)"
         + (f"; stopped early: {s['stopped']}" if s["stopped"] else "")),
        "primitives: " + ", ".join(f"{k} {v}" for k, v in s["primitives"].items()),
        (f"RSS MiB: start {r['start']}, after {s['warmup_cycles']} warm-up cycles {r['warm']}, peak {r['peak']}, "
         f"end {r['end']} (growth after warm-up {growth})"),
        "caches at end: " + ", ".join(f"{k} {v} (after warm-up {warm.get(k)})" for k, v in s["caches"].items())
        + "; caps " + ", ".join(f"{name} = {cap}" for name, cap in s["cache_caps"].values()),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check-fraction", type=float, default=0.25, help="share of cycles read back and compared")
    parser.add_argument("--max-seconds", type=float, help="stop early after this wall time")
    parser.add_argument("--max-rss-growth", type=float, help="stop early once RSS grew by this many MiB")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    args = parser.parse_args(argv)
    summary = soak(cycles=args.cycles, seed=args.seed, check_fraction=args.check_fraction,
                   max_seconds=args.max_seconds, max_rss_growth=args.max_rss_growth)
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
