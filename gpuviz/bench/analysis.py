"""``python -m gpuviz.bench analysis``: one interactive parameter change of the
data-analysis widget, on the GPU and in its CPU / GPU peers.

Workload (trip-like records, ``--rows`` rows in ``--batches`` Arrow record
batches uploaded once with :func:`gpuviz.arrow.table_to_gpu`, read in place):

* GPUHistogram of ``fare``: 256 equal-width bins over (0, 100);
* GPUGridAggregation ``mean`` of ``fare`` over ``pickup`` positions, 512 x 512;
* GPUGroupAggregation ``mean`` of ``fare`` by ``hour`` (24 groups, ~0.1% of
  codes out of range land in the overflow word);

all three restricted to rows whose ``distance`` lies in a value range. One
*change* rewrites that range (``set_filter_range``, no recompilation) and
encodes the compiled graph once; its GPU time is the sum of the nodes'
timestamped passes (median of ``--runs`` changes after warm-up).

Peers in the same run: numpy (boolean filter, ``np.histogram``, a
``np.bincount`` 2-D mean and grouped mean), ``pyarrow.compute`` filter +
``group_by().aggregate(mean)`` for the grouped part, torch on CUDA where
importable. Every GPU result is checked against a float32-exact numpy oracle
before anything is printed. ``--sweep`` also times tuning variants.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

BINS, GRID, GROUPS = 256, 512, 24
DOMAIN, BOUNDS = (0.0, 100.0), (0.0, 0.0, 1.0, 1.0)

COPY_WGSL = """
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
override COUNT: u32 = 0u;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (i < COUNT) { dst[i] = src[i]; }
}
"""


# ---------------------------------------------------------------------- data
def make_data(rows: int, seed: int = 7) -> dict:
    """Trip-like float32 / uint32 columns with realistic skew: pickups around
    a few hot spots plus a uniform background (some outside the bounds),
    log-normal distances and fares, a daily hour profile, a few NaNs and
    out-of-range hour codes."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(0.15, 0.85, (8, 2))
    sigmas = rng.uniform(0.01, 0.08, 8)
    weights = rng.dirichlet(np.ones(8) * 2)
    hot = rng.random(rows) < 0.75
    which = rng.choice(8, rows, p=weights)
    pickup = np.where(hot[:, None], centers[which] + rng.normal(size=(rows, 2)) * sigmas[which, None],
                      rng.uniform(-0.05, 1.05, (rows, 2))).astype(np.float32)
    distance = rng.lognormal(0.7, 0.8, rows).astype(np.float32)
    fare = (2.5 + 1.8 * distance * rng.lognormal(0.0, 0.25, rows)).astype(np.float32)
    profile = 1.2 + np.sin((np.arange(24) - 9) / 24 * 2 * np.pi)
    hour = rng.choice(24, rows, p=profile / profile.sum()).astype(np.uint32)
    hour[rng.random(rows) < 0.001] = 99
    distance[rng.random(rows) < 0.002] = np.nan
    fare[rng.random(rows) < 0.002] = np.nan
    return {"pickup": pickup, "fare": fare, "distance": distance, "hour": hour}


# -------------------------------------------------------------------- oracle
def _axis_f32(v, lo, hi, n):
    """Bin index exactly as the shaders compute it in float32 (-1: outside)."""
    lo32, hi32 = np.float32(lo), np.float32(hi)
    with np.errstate(invalid="ignore"):
        t = ((v - lo32) / np.float32(hi32 - lo32)) * np.float32(n)
        inside = np.isfinite(v) & (v >= lo32) & (v <= hi32)
        idx = np.where(inside, np.minimum(np.floor(np.where(inside, t, 0)).astype(np.int64), n - 1), -1)
        # within a few float32 steps of an interior edge: the GPU's division may round either way
        near = inside & (np.abs(t - np.rint(t)) <= 4 * np.spacing(np.float32(n))) & (np.rint(t) > 0) & (
            np.rint(t) < n)
    return idx, near


def oracle(data: dict, filter_range) -> dict:
    """The three results for one filter range (float64 sums), plus which
    rows sit on an ambiguous float32 edge."""
    lo, hi = np.float32(filter_range[0]), np.float32(filter_range[1])
    d = data["distance"]
    with np.errstate(invalid="ignore"):
        sel = (d >= lo) & (d <= hi)
    fare = data["fare"]
    hb, hnear = _axis_f32(fare, *DOMAIN, BINS)
    ok = sel & (hb >= 0)
    hist = np.bincount(hb[ok], minlength=BINS)
    gx, nx = _axis_f32(data["pickup"][:, 0], BOUNDS[0], BOUNDS[2], GRID)
    gy, ny = _axis_f32(data["pickup"][:, 1], BOUNDS[1], BOUNDS[3], GRID)
    ok_g = sel & (gx >= 0) & (gy >= 0) & np.isfinite(fare)
    cell = gy[ok_g] * GRID + gx[ok_g]
    gcount = np.bincount(cell, minlength=GRID * GRID)
    gsum = np.bincount(cell, weights=fare[ok_g].astype(np.float64), minlength=GRID * GRID)
    near_cells = np.zeros(GRID * GRID, bool)
    near = ok_g & (nx | ny)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            near_cells[np.clip(gy[near] + dy, 0, GRID - 1) * GRID + np.clip(gx[near] + dx, 0, GRID - 1)] = True
    hour = data["hour"]
    ok_h = sel & (hour < GROUPS) & np.isfinite(fare)
    hcount = np.bincount(hour[ok_h], minlength=GROUPS)
    hsum = np.bincount(hour[ok_h], weights=fare[ok_h].astype(np.float64), minlength=GROUPS)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"hist": hist, "hist_near": int((ok & hnear).sum()), "grid": gsum / gcount,
                "grid_near": near_cells, "group": hsum / hcount,
                "overflow": int((sel & (hour >= GROUPS)).sum())}


def check(result: dict, expected: dict) -> None:
    """Raise AssertionError unless GPU results match the oracle (counts
    exactly up to rows on ambiguous float32 edges; means to float32 rounding)."""
    hist = result["hist"].astype(np.int64)
    diff = int(np.abs(hist - expected["hist"]).sum())
    assert hist.sum() == expected["hist"].sum(), ("histogram total", hist.sum(), expected["hist"].sum())
    assert diff <= 2 * expected["hist_near"], ("histogram", diff, expected["hist_near"])
    grid, want = result["grid"].astype(np.float64), expected["grid"]
    firm = ~expected["grid_near"]
    assert (np.isnan(grid[firm]) == np.isnan(want[firm])).all(), "grid empty cells"
    both = firm & ~np.isnan(want)
    np.testing.assert_allclose(grid[both], want[both], rtol=2e-3, atol=1e-3, err_msg="grid mean")
    np.testing.assert_allclose(result["group"], expected["group"], rtol=1e-3, err_msg="group mean")
    assert result["overflow"] == expected["overflow"], ("overflow", result["overflow"], expected["overflow"])


# ----------------------------------------------------------------------- GPU
class AnalysisGraph:
    """The three primitives over one uploaded table in one compiled graph."""

    def __init__(self, device, table, filter_range, tuning=None):
        from gpuviz import (GPUCommandGraph, GPUData, GPUGridAggregation, GPUGroupAggregation, GPUHistogram)

        self.device = device
        graph = GPUCommandGraph(device, id="analysis")
        col = {name: graph.import_gpu_vector(name, table.column(name)) for name in table.column_names}
        self.out = {"hist": GPUData.allocate(device, format="uint32", length=BINS),
                    "grid": GPUData.allocate(device, format="float32", length=GRID * GRID),
                    "group": GPUData.allocate(device, format="float32", length=GROUPS)}
        view = {k: graph.import_gpu_data(f"{k}-out", v) for k, v in self.out.items()}
        common = dict(filter_values=col["distance"], filter_range=filter_range, tuning=tuning)
        self.primitives = [
            GPUHistogram(id="fare-hist", input=col["fare"], output=view["hist"], domain=DOMAIN, **common),
            GPUGridAggregation(id="fare-grid", positions=col["pickup"], weights=col["fare"], output=view["grid"],
                               grid_size=(GRID, GRID), bounds=BOUNDS, operation="mean", **common),
            GPUGroupAggregation(id="hour-fare", codes=col["hour"], values=col["fare"], output=view["group"],
                                operation="mean", **common),
        ]
        for primitive in self.primitives:
            primitive.add_to_graph(graph)
        self.compiled = graph.compile()

    def change(self, filter_range, *, timestamps=True):
        """One parameter change: rewrite the range, encode, submit."""
        for primitive in self.primitives:
            primitive.set_filter_range(filter_range)
        encoder = self.device.create_command_encoder()
        self.compiled.encode(encoder, timestamps=timestamps)
        self.device.queue.submit([encoder.finish()])

    def timed(self, ranges, warmup):
        """Median GPU seconds per change, total and per primitive."""
        totals, parts = [], {p.id: [] for p in self.primitives}
        for i, filter_range in enumerate(ranges):
            self.change(filter_range)
            timings = self.compiled.read_timings()
            if i < warmup:
                continue
            totals.append(sum(timings.values()))
            for p in self.primitives:
                parts[p.id].append(sum(timings[n] for n in p.node_ids))
        return statistics.median(totals), {k: statistics.median(v) for k, v in parts.items()}

    def results(self) -> dict:
        from gpuviz import read_array

        out = {k: read_array(self.device, v) for k, v in self.out.items()}
        out["overflow"] = int(np.frombuffer(self.device.queue.read_buffer(self.primitives[2].overflow_buffer),
                                            np.uint32)[0])
        return out

    def destroy(self):
        self.compiled.destroy()
        for data in self.out.values():
            data.destroy()


def copy_seconds(device, byte_length, runs=20):
    """Median GPU time of a vec4 copy kernel over ``byte_length`` bytes."""
    import wgpu

    from gpuviz import ComputeKernel, GPUCommandGraph

    count = byte_length // 16
    graph = GPUCommandGraph(device, id="copy-baseline")
    src = graph.create_transient_buffer(id="src", byte_length=count * 16, usage=wgpu.BufferUsage.STORAGE)
    dst = graph.create_transient_buffer(id="dst", byte_length=count * 16, usage=wgpu.BufferUsage.STORAGE)

    def compile_copy(ctx):
        kernel = ComputeKernel(ctx.device, code=COPY_WGSL, constants={"COUNT": count}, label="copy")
        return lambda p, frame: kernel.dispatch(p, frame, bindings={0: src, 1: dst}, workgroups=-(-count // 256))

    graph.add_compute_node(id="copy", resources=[(src, "storage-read"), (dst, "storage-write")],
                           compile=compile_copy)
    compiled = graph.compile()
    times = []
    for i in range(runs + 3):
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        if i >= 3:
            times.append(compiled.read_timings()["copy"])
        else:
            compiled.read_timings()
    compiled.destroy()
    return statistics.median(times)


# --------------------------------------------------------------------- peers
def _median_seconds(fn, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def numpy_change(data, filter_range):
    """The numpy peer of one change: filter, histogram, 2-D mean, grouped mean."""
    d, fare = data["distance"], data["fare"]
    lo, hi = np.float32(filter_range[0]), np.float32(filter_range[1])
    with np.errstate(invalid="ignore"):
        sel = (d >= lo) & (d <= hi)
    f = fare[sel]
    hist, _ = np.histogram(f[np.isfinite(f)], BINS, DOMAIN)
    p = data["pickup"][sel]
    ok = np.isfinite(f) & (p[:, 0] >= 0) & (p[:, 0] <= 1) & (p[:, 1] >= 0) & (p[:, 1] <= 1)
    ij = np.minimum((p[ok] * GRID).astype(np.int64), GRID - 1)
    cell = ij[:, 1] * GRID + ij[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        grid = np.bincount(cell, f[ok], GRID * GRID) / np.bincount(cell, minlength=GRID * GRID)
        h = data["hour"][sel]
        okh = (h < GROUPS) & np.isfinite(f)
        group = np.bincount(h[okh], f[okh], GROUPS) / np.bincount(h[okh], minlength=GROUPS)
    return hist, grid, group


def arrow_group_by(data):
    """A pyarrow table (NaN as null) and the pyarrow.compute peer of the grouped part."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.table({"hour": data["hour"], "fare": pa.array(data["fare"], from_pandas=True),
                      "distance": pa.array(data["distance"], from_pandas=True)})

    def run(filter_range):
        lo, hi = float(np.float32(filter_range[0])), float(np.float32(filter_range[1]))
        mask = pc.and_(pc.greater_equal(table["distance"], lo), pc.less_equal(table["distance"], hi))
        return table.filter(mask).group_by("hour").aggregate([("fare", "mean")])
    return run


def torch_change(data):
    """A torch CUDA peer (None without CUDA): median seconds per change by CUDA events."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dev = "cuda"
    t = {k: torch.from_numpy(np.ascontiguousarray(v.astype(np.int64) if v.dtype == np.uint32 else v)).to(dev)
         for k, v in data.items()}

    def run(filter_range):
        lo, hi = float(np.float32(filter_range[0])), float(np.float32(filter_range[1]))
        sel = (t["distance"] >= lo) & (t["distance"] <= hi) & torch.isfinite(t["fare"])
        f = t["fare"][sel]
        torch.histc(f, BINS, *DOMAIN)
        p = t["pickup"][sel]
        ok = ((p >= 0) & (p <= 1)).all(dim=1)
        ij = torch.clamp((p[ok] * GRID).long(), max=GRID - 1)
        cell = ij[:, 1] * GRID + ij[:, 0]
        torch.bincount(cell, f[ok], GRID * GRID) / torch.bincount(cell, minlength=GRID * GRID)
        h = t["hour"][sel]
        okh = h < GROUPS
        torch.bincount(h[okh], f[okh], GROUPS) / torch.bincount(h[okh], minlength=GROUPS)

    def timed(ranges):
        times = []
        for i, r in enumerate(ranges):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run(r)
            end.record()
            torch.cuda.synchronize()
            if i >= 3:
                times.append(start.elapsed_time(end) * 1e-3)
        return statistics.median(times)
    return timed


# ---------------------------------------------------------------------- main
def _ranges(count, seed=3):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0.0, 2.0, count)
    return [(float(a), float(a + w)) for a, w in zip(lo, rng.uniform(3.0, 30.0, count))]


def _x(ratio):
    return f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2f}x"


def _us(seconds):
    return f"{seconds * 1e6:,.0f} µs" if seconds < 0.01 else f"{seconds * 1e3:,.1f} ms"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench analysis", description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batches", type=int, default=10, help="Arrow record batches (GPU chunks)")
    parser.add_argument("--runs", type=int, default=30, help="timed changes after warm-up")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cpu-runs", type=int, default=3, help="timed runs of the CPU peers")
    parser.add_argument("--sweep", action="store_true", help="also time tuning variants")
    args = parser.parse_args(argv)

    import pyarrow as pa

    import gpuviz
    from gpuviz.arrow import table_to_gpu

    device = gpuviz.request_device()
    info = device.adapter.info
    print(f"adapter: {info['device']} ({info['backend_type']}); rows {args.rows:,} in {args.batches} batches")
    data = make_data(args.rows)
    bounds = np.linspace(0, args.rows, args.batches + 1).astype(int)
    batches = [pa.record_batch({
        "pickup": pa.FixedSizeListArray.from_arrays(pa.array(data["pickup"][a:b].reshape(-1)), 2),
        "fare": pa.array(data["fare"][a:b]), "distance": pa.array(data["distance"][a:b]),
        "hour": pa.array(data["hour"][a:b])}) for a, b in zip(bounds[:-1], bounds[1:])]
    table = table_to_gpu(device, pa.Table.from_batches(batches))

    ranges = _ranges(args.warmup + args.runs)
    final = ranges[-1]
    expected = oracle(data, final)
    variants = [None]
    if args.sweep:
        from gpuviz import AggregationTuning
        variants += [AggregationTuning(rows_per_invocation=r, workgroups_per_chunk=w)
                     for r, w in ((16, 0), (4, 0), (16, 264), (16, 4096), (64, 1024))]
        variants += [AggregationTuning(privatize_max_keys=0)]
    measured = []
    for tuning in variants:
        analysis = AnalysisGraph(device, table, ranges[0], tuning)
        gpu, parts = analysis.timed(ranges, args.warmup)
        check(analysis.results(), expected)
        measured.append((tuning, gpu, parts))
        analysis.destroy()

    read_bytes = args.rows * (4 * 2 + 8 + 4 + 4 + 4 + 4 + 4)  # hist 2 cols, grid 3, group 3 (x2 fare, x3 distance)
    copy = copy_seconds(device, read_bytes)

    hist, grid, group = numpy_change(data, final)
    assert np.abs(hist - expected["hist"]).sum() <= 2 * expected["hist_near"], "numpy peer histogram"
    np.testing.assert_allclose(group, expected["group"], rtol=1e-6)
    cpu = _median_seconds(lambda: numpy_change(data, final), args.cpu_runs)
    arrow_run = arrow_group_by(data)
    arrow_table = arrow_run(final).sort_by("hour").to_pydict()
    got = dict(zip(arrow_table["hour"], arrow_table["fare_mean"]))
    np.testing.assert_allclose([got[h] for h in range(GROUPS)], expected["group"], rtol=1e-6)
    arrow = _median_seconds(lambda: arrow_run(final), args.cpu_runs)
    torch_timed = torch_change(data)
    torch_s = torch_timed(ranges[:3 + 10]) if torch_timed else None

    tuning0, gpu, parts = measured[0]
    print(f"\nAnalysis: one filter-range change over {args.rows:,} rows "
          f"(histogram {BINS} bins + {GRID}x{GRID} grid mean + {GROUPS} group means), median of {args.runs}")
    print("| what | time | vs GPU |")
    print("|---|---:|---:|")
    print(f"| gpuviz GPU total (timestamps) | {_us(gpu)} | 1.0x |")
    for pid, seconds in parts.items():
        print(f"| &nbsp; {pid} | {_us(seconds)} | |")
    print(f"| vec4 copy kernel over the {read_bytes / 1e6:,.0f} MB read | {_us(copy)} | {gpu / copy:.2f}x copy |")
    print(f"| numpy (filter + histogram + bincount 2-D mean + grouped mean) | {_us(cpu)} | {_x(cpu / gpu)} |")
    print(f"| pyarrow.compute filter + group_by mean (grouped part only) | {_us(arrow)} | {_x(arrow / gpu)} |")
    if torch_s is not None:
        print(f"| torch CUDA (same steps) | {_us(torch_s)} | {_x(torch_s / gpu)} |")
    if len(measured) > 1:
        print("\nTuning sweep (GPU total; hist / grid / group):")
        for tuning, total, p in measured:
            name = "default" if tuning is None else (f"rows/inv <= {tuning.rows_per_invocation}, wg/chunk "
                                                     f"{tuning.workgroups_per_chunk}, privatize <= "
                                                     f"{tuning.privatize_max_keys}")
            print(f"  {name:58s} {_us(total):>10s}   " + " / ".join(_us(v) for v in p.values()))
    print(f"\ntargets: <= 2 ms GPU per change: {'met' if gpu <= 2e-3 else 'MISSED'}; "
          f">= 50x numpy: {'met' if cpu / gpu >= 50 else 'MISSED'} ({_x(cpu / gpu)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
