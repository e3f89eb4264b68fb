"""``python -m gpuviz.bench.analysis`` (or ``python -m gpuviz.bench analysis``:
``bench_analysis`` has the harness's case signature): one interactive
parameter change of the data-analysis widget, on the GPU and in
its CPU / GPU peers.

Workload (trip-like records, ``--rows`` rows in ``--batches`` Arrow record
batches uploaded once with :func:`gpuviz.arrow.table_to_gpu`, read in place):

* GPUHistogram of ``fare``: 256 equal-width bins over (0, 100);
* GPUGridAggregation ``mean`` of ``fare`` over ``pickup`` positions, 512 x 512;
* GPUGroupAggregation ``mean`` of ``fare`` by ``hour`` (24 groups, ~0.1% of
  codes out of range land in the overflow word);

all three restricted to rows whose ``distance`` lies in a value range. One
*change* rewrites that range (``set_filter_range``: ``queue.write_buffer``,
no recompilation) and encodes the compiled graph once. Its GPU time is the
harness's: timestamps around whole encodings, median over ``--runs`` after
warm-up; a second loop of real changes (a new range each time) gives the
per-primitive breakdown from per-node timestamps.

References and peers in the same run: the harness's vec4 copy and read
kernels over the bytes the three primitives read; numpy (boolean filter,
``np.histogram``, ``np.bincount`` 2-D mean and grouped mean);
``pyarrow.compute`` filter + ``group_by().aggregate(mean)`` (grouped part);
torch on CUDA where importable (same steps). Every GPU result is checked
against a float32-exact numpy oracle before anything is printed.
``--variants`` also times tuning variants.

The whole widget frame (``--text``): a :class:`~gpuviz.widgets.DataAnalysis`
over the same rows (x / y = pickup, value = fare, group = hour; 512 x 512
grid, 256 bins, a 1280 x 720 frame) timed as the canvas draws it: the
compiled graph (grid aggregations, grid select, the colour-range radix select,
histogram, CDF, groups, the render node) plus the presentation pass, with
the text and axes overlay (``on``) and without it (``off``); ``both`` (the
default) times both in one run and prints the overhead, the colour-range
node's and the render node's own GPU times (per-node timestamps) and the
host time of laying out and uploading every label after a parameter change
(``AnalysisOverlay.prepare``; frames whose labels did not change reuse them).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ..oracles.algorithms import grid_aggregation, group_aggregation, histogram_uniform
from .tables import Column

BINS, GRID, GROUPS = 256, 512, 24
DOMAIN, BOUNDS = (0.0, 100.0), (0.0, 0.0, 1.0, 1.0)

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
def oracle(data: dict, filter_range) -> dict:
    """The three results for one filter range (float64 sums) and the
    overflow, composed from the primitives' oracles."""
    lo, hi = np.float32(filter_range[0]), np.float32(filter_range[1])
    with np.errstate(invalid="ignore"):
        sel = (data["distance"] >= lo) & (data["distance"] <= hi)
    fare = data["fare"]
    group, overflow = group_aggregation(data["hour"], GROUPS, "mean", values=fare, keep=sel)
    return {"hist": histogram_uniform(fare, *DOMAIN, BINS, keep=sel),
            "grid": grid_aggregation(data["pickup"], BOUNDS, (GRID, GRID), "mean", weights=fare, keep=sel),
            "group": group, "overflow": overflow}


def check(result: dict, expected: dict) -> None:
    """Raise :class:`~gpuviz.bench.harness.Mismatch` unless the GPU results
    match the oracle: counts, empty cells and the overflow word exactly, means
    to float32 rounding of sums accumulated in an unspecified order."""
    from .harness import Mismatch

    try:
        np.testing.assert_array_equal(result["hist"], expected["hist"], err_msg="histogram")
        grid, want = result["grid"].astype(np.float64), expected["grid"]
        np.testing.assert_array_equal(np.isnan(grid), np.isnan(want), err_msg="grid empty cells")
        np.testing.assert_allclose(grid, want, rtol=2e-3, atol=1e-3, equal_nan=True, err_msg="grid mean")
        np.testing.assert_allclose(result["group"], expected["group"], rtol=1e-3, err_msg="group mean")
    except AssertionError as exc:
        raise Mismatch(f"analysis: {exc}") from None
    if result["overflow"] != expected["overflow"]:
        raise Mismatch(f"analysis: overflow word {result['overflow']} != {expected['overflow']}")


# ----------------------------------------------------------------------- GPU
class AnalysisWorkload:
    """The benchmarked workload: the three primitives over one uploaded table,
    in one compiled graph, and one parameter change of it."""

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


# --------------------------------------------------------------------- frame
FRAME_SIZE = (1280, 720)

#: The widget frame with and without text and axes (see the module docstring).
FRAME_COLUMNS = (Column("size", "rows", 9, "size"), Column("case", "frame", 16),
                 Column("gpu_s", "frame µs", 9, "us"), Column("overhead", "text overhead", 13),
                 Column("range_s", "colour-range µs", 15, "us"), Column("draw_s", "render node µs", 14, "us"),
                 Column("prepare_s", "label layout µs", 15, "us"), Column("glyphs", "glyphs", 7))


def _widget(device, data, batches):
    """A DataAnalysis over the benchmark's rows (pickup split into x and y)."""
    import pyarrow as pa

    from gpuviz.widgets.analysis.widget import DataAnalysis

    cuts = np.linspace(0, len(data["fare"]), batches + 1).astype(int)
    arrow = pa.Table.from_batches([pa.record_batch({
        "pickup_x": pa.array(data["pickup"][a:b, 0]), "pickup_y": pa.array(data["pickup"][a:b, 1]),
        "fare": pa.array(data["fare"][a:b]), "distance": pa.array(data["distance"][a:b]),
        "hour": pa.array(data["hour"][a:b])}) for a, b in zip(cuts[:-1], cuts[1:])])
    return DataAnalysis(arrow, x="pickup_x", y="pickup_y", value="fare", group="hour", bins=BINS, max_bins=BINS,
                        grid_size=(GRID, GRID), device=device, size=FRAME_SIZE)


def _frame_case(widget, timer, target, text: bool, runs: int) -> dict:
    """GPU seconds of one whole frame (graph + presentation), node times, label host time."""
    graph, overlay = widget.graph, widget.graph.overlay
    overlay.enabled = text
    graph.render_size = FRAME_SIZE
    overrides = graph.overrides(widget.columns)
    view = target.create_view()
    prepare = []

    def labels():
        overlay.invalidate()  # time a full layout, as after a parameter change (a steady frame reuses it)
        started = time.perf_counter()
        overlay.prepare(widget.device.queue, params=widget._params, data=widget.data, render_size=FRAME_SIZE)
        prepare.append(time.perf_counter() - started)

    labels()
    presenter = widget._presenter

    def record(encoder):
        graph.compiled.encode(encoder, buffers=overrides)
        presenter.present(encoder, view, FRAME_SIZE, FRAME_SIZE, overlay=overlay)

    whole = timer.median(record)
    nodes = []
    for _ in range(max(3, runs // 4)):
        encoder = widget.device.create_command_encoder()
        graph.compiled.encode(encoder, buffers=overrides, timestamps=True)
        widget.device.queue.submit([encoder.finish()])
        nodes.append(graph.compiled.read_timings())
        labels()
    return {"gpu_s": whole, "range_s": statistics.median(t["colour-range"] for t in nodes),
            "draw_s": statistics.median(t["draw"] for t in nodes),
            "prepare_s": statistics.median(prepare) if text else 0.0,
            "glyphs": sum(layer.glyph_count for layer in (overlay._plot.labels, overlay._plot.titles)) if text else 0}


def bench_frame(device, data, rows, runs, batches, text, out) -> None:
    """The frame table's rows for ``text`` in {"both", "on", "off"}."""
    import wgpu

    from .harness import GPUTimer

    widget = _widget(device, data, batches)
    try:
        widget.draw_offscreen(width=FRAME_SIZE[0], height=FRAME_SIZE[1])  # labels settled, pipelines warm
        target = device.create_texture(size=(*FRAME_SIZE, 1), format="rgba8unorm",
                                       usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
        timer = GPUTimer(device, runs)
        cases = {"on": [True], "off": [False], "both": [False, True]}[text]
        times = {flag: _frame_case(widget, timer, target, flag, runs) for flag in cases}
        for flag, row in times.items():
            overhead = (f'{100 * (row["gpu_s"] / times[False]["gpu_s"] - 1.0):+.1f} %'
                        if flag and False in times else "")
            out.add(size=rows, case="text + axes" if flag else "plots only", overhead=overhead, **row)
        if False in times and True in times:
            over = times[True]["gpu_s"] / times[False]["gpu_s"] - 1.0
            out.note(f"text + axes overhead at {rows:,} rows: {100 * over:.1f} % of the frame's GPU time "
                     f"(target <= 10 %: {'met' if over <= 0.10 else 'MISSED'})")
        target.destroy()
    finally:
        widget.close()


# --------------------------------------------------------------------- peers
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


def torch_change(torch, data):
    """The torch CUDA peer of one change (same steps as numpy), as a callable."""
    t = {k: torch.from_numpy(np.ascontiguousarray(v.astype(np.int64) if v.dtype == np.uint32 else v)).cuda()
         for k, v in data.items()}

    def run(filter_range):
        lo, hi = float(np.float32(filter_range[0])), float(np.float32(filter_range[1]))
        sel = (t["distance"] >= lo) & (t["distance"] <= hi) & torch.isfinite(t["fare"])
        f = t["fare"][sel]
        hist = torch.histc(f, BINS, *DOMAIN)
        p = t["pickup"][sel]
        ok = ((p >= 0) & (p <= 1)).all(dim=1)
        ij = torch.clamp((p[ok] * GRID).long(), max=GRID - 1)
        cell = ij[:, 1] * GRID + ij[:, 0]
        grid = torch.bincount(cell, f[ok], GRID * GRID) / torch.bincount(cell, minlength=GRID * GRID)
        h = t["hour"][sel]
        okh = h < GROUPS
        group = torch.bincount(h[okh], f[okh], GROUPS) / torch.bincount(h[okh], minlength=GROUPS)
        return hist, grid, group
    return run


# ---------------------------------------------------------------------- main
def _ranges(count, seed=3):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0.0, 2.0, count)
    return [(float(a), float(a + w)) for a, w in zip(lo, rng.uniform(3.0, 30.0, count))]


def _upload_table(device, data, batches):
    import pyarrow as pa

    from gpuviz.arrow import table_to_gpu

    cuts = np.linspace(0, len(data["fare"]), batches + 1).astype(int)
    arrow = pa.Table.from_batches([pa.record_batch({
        "pickup": pa.FixedSizeListArray.from_arrays(pa.array(data["pickup"][a:b].reshape(-1)), 2),
        "fare": pa.array(data["fare"][a:b]), "distance": pa.array(data["distance"][a:b]),
        "hour": pa.array(data["hour"][a:b])}) for a, b in zip(cuts[:-1], cuts[1:])])
    return table_to_gpu(device, arrow)


def _tunings(variants: bool) -> dict:
    """The tunings timed: the default, and with ``--variants`` the others."""
    from gpuviz import AggregationTuning

    if not variants:
        return {"default": None}
    return {
        "default": None,
        "16 rows/invocation, no adaptation": AggregationTuning(workgroups_per_chunk=0),
        "4 rows/invocation, no adaptation": AggregationTuning(rows_per_invocation=4, workgroups_per_chunk=0),
        "256 workgroups/chunk": AggregationTuning(workgroups_per_chunk=256),
        "4096 workgroups/chunk": AggregationTuning(workgroups_per_chunk=4096),
        "subgroup key combining up to 32 keys": AggregationTuning(subgroup_max_keys=32),
        "portable (no subgroups)": AggregationTuning(subgroups=False),
        "compare-exchange float adds (float_atomics=False)": AggregationTuning(float_atomics=False),
    }


#: One row per tuning: the whole encoding (timestamps around it), the sum of
#: node passes over real range changes, and each primitive's share.
CHANGE_COLUMNS = (Column("size", "rows", 9, "size"), Column("case", "tuning", 24),
                  Column("gpu_s", "whole µs", 9, "us"), Column("nodes_s", "node passes µs", 9, "us"),
                  Column("fare-hist_s", "fare-hist µs", 9, "us"), Column("fare-grid_s", "fare-grid µs", 9, "us"),
                  Column("hour-fare_s", "hour-fare µs", 9, "us"), Column("float_adds", "grid float adds", 15))

#: The default's whole encoding against the references and peers (brackets:
#: multiples of gpuviz's time).
PEER_COLUMNS = (Column("size", "rows", 9, "size"), Column("gpu_s", "gpuviz µs", 9, "us"),
                Column("copy_s", "copy µs", 8, "us"), Column("over_copy", "÷copy", 6, "ratio"),
                Column("read_s", "read µs", 8, "us"), Column("over_read", "÷read", 6, "ratio"),
                Column("numpy_s", "numpy µs (×gpuviz)", 18, "us_ratio", of="gpu_s"),
                Column("arrow_s", "pyarrow group-by µs (×)", 18, "us_ratio", of="gpu_s"),
                Column("torch_s", "torch µs (×gpuviz)", 16, "us_ratio", of="gpu_s"))


def _measure(device, timer, table, rows, ranges, warmup, tunings, expected, out):
    """Time every tuning on ``table`` (checked before and after its changes)
    into the ``out`` Table; returns the first (default) tuning's whole-encoding seconds."""
    final = ranges[-1]
    warm = AnalysisWorkload(device, table, final)  # bring clocks up before anything is timed
    started = time.perf_counter()
    while time.perf_counter() - started < 2.0:
        warm.change(final, timestamps=False)
        warm.results()
    warm.destroy()
    first = None
    for label, tuning in tunings.items():
        analysis = AnalysisWorkload(device, table, final, tuning)
        whole = timer.median(analysis.compiled.encode)
        check(analysis.results(), expected)
        per_change, parts = analysis.timed(ranges, warmup)
        check(analysis.results(), expected)
        native = analysis.primitives[1].uses_float_atomics
        analysis.destroy()
        first = whole if first is None else first
        out.add(size=rows, case=label, gpu_s=whole, nodes_s=per_change, **{f"{k}_s": v for k, v in parts.items()},
                float_adds="native atomicAdd" if native else "compare-exchange")
    return first


def _peers(data, final, expected, peers, runs, cpu_runs) -> dict:
    """numpy, pyarrow and torch times of one change, each checked against the oracle first."""
    from .harness import Mismatch, cpu_median

    hist, _grid, group = numpy_change(data, final)
    # numpy bins float32 input against float32-rounded edges: a few values may move one bin
    if hist.sum() != expected["hist"].sum() or np.abs(hist - expected["hist"]).sum() > hist.sum() // 1000:
        raise Mismatch("analysis: numpy peer's histogram differs from the oracle")
    arrow_run = arrow_group_by(data)
    got = arrow_run(final).to_pydict()
    got = dict(zip(got["hour"], got["fare_mean"]))
    times = {"numpy_s": cpu_median(lambda: numpy_change(data, final), cpu_runs), "torch_s": None}
    try:
        np.testing.assert_allclose(group, expected["group"], rtol=1e-6)
        np.testing.assert_allclose([got[h] for h in range(GROUPS)], expected["group"], rtol=1e-6)
        times["arrow_s"] = cpu_median(lambda: arrow_run(final), cpu_runs)
        if peers.torch is not None:
            run = torch_change(peers.torch, data)
            np.testing.assert_allclose(run(final)[2].cpu().numpy(), expected["group"], rtol=1e-3)
            times["torch_s"] = peers.time_torch(lambda: run(final), runs)
    except AssertionError as exc:
        raise Mismatch(f"analysis peer: {exc}") from None
    return times


def bench_analysis(device, sizes, runs, *, variants=False, peers=None, report=None, batches=10, warmup=5,
                   cpu_runs=3, text="both", primitives=True):
    """The harness case: two tables (tunings; references and peers), rows
    printed after their checks, and the widget-frame table (``text``:
    ``"both"``, ``"on"``, ``"off"`` or ``"skip"``)."""
    from .harness import BU, GPUTimer, Peers, ReferenceKernel
    from .tables import Report

    peers = peers or Peers()
    report = report or Report()
    timer = GPUTimer(device, runs)
    tunings = _tunings(variants)
    changes = report.table("analysis", f"Analysis: one filter-range change, rows in {batches} Arrow batches "
                           f"(histogram {BINS} bins + {GRID}x{GRID} grid mean + {GROUPS} group means)", CHANGE_COLUMNS)
    against = report.table("analysis-peers", "Analysis, default tuning against the references (WGSL vec4 copy and "
                           "read kernels over the bytes the primitives read) and peers", PEER_COLUMNS)
    frames = None
    if text != "skip":
        frames = report.table("analysis-frame", f"DataAnalysis frame ({FRAME_SIZE[0]}x{FRAME_SIZE[1]}, {GRID}x{GRID} "
                              f"grid, {BINS} bins, {GROUPS} groups): compiled graph + presentation, with and "
                              "without the text / axes overlay", FRAME_COLUMNS)
    for rows in sizes:
        data = make_data(rows)
        if frames is not None:
            bench_frame(device, data, rows, runs, batches, text, frames)
        if not primitives:
            continue
        table = _upload_table(device, data, batches)
        ranges = _ranges(warmup + runs)
        expected = oracle(data, ranges[-1])
        whole = _measure(device, timer, table, rows, ranges, warmup, tunings, expected, changes)
        words = rows * 9 // 4 * 4  # hist 2 columns, grid 4 words, group 3 columns per row
        src = device.create_buffer(size=4 * words, usage=BU.STORAGE)
        dst = device.create_buffer(size=4 * words, usage=BU.STORAGE)
        copy = timer.median(ReferenceKernel(device, "copy", words, src, dst).record)
        read_ref = timer.median(ReferenceKernel(device, "read", words, src, dst).record)
        src.destroy()
        dst.destroy()
        times = _peers(data, ranges[-1], expected, peers, runs, cpu_runs)
        against.add(size=rows, gpu_s=whole, copy_s=copy, over_copy=whole / copy, read_s=read_ref,
                    over_read=whole / read_ref, bytes_read=4 * words, **times)
        against.note(f"targets at {rows:,} rows: <= 2 ms GPU per change: {'met' if whole <= 2e-3 else 'MISSED'}; "
                     f">= 50x numpy: {'met' if times['numpy_s'] / whole >= 50 else 'MISSED'} "
                     f"({times['numpy_s'] / whole:.1f}x)")
        table.destroy()


def main(argv=None) -> int:
    """``python -m gpuviz.bench.analysis``: the analysis benchmark with its own
    knobs (batches, CPU runs), the shared header and ``--json``."""
    import os

    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.analysis", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000000", help="comma-separated row counts (K/M suffixes: 2**10, 2**20)")
    parser.add_argument("--batches", type=int, default=10, help="Arrow record batches (GPU chunks)")
    parser.add_argument("--runs", type=int, default=30, help="timed changes after warm-up")
    parser.add_argument("--cpu-runs", type=int, default=3, help="timed runs of the CPU peers")
    parser.add_argument("--variants", action="store_true", help="also time tuning variants")
    parser.add_argument("--json", metavar="PATH", help="write the header and the tables' rows to PATH")
    parser.add_argument("--text", choices=("both", "on", "off", "skip"), default="both",
                        help="the DataAnalysis frame with the text/axes overlay, without it, both (default: the "
                             "overhead), or skip the frame table")
    parser.add_argument("--frame-only", action="store_true", help="only the frame table (no primitive/peer tables)")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

    import gpuviz

    from .harness import Mismatch, Peers, parse_sizes, print_run_header
    from .tables import Report

    device = gpuviz.request_device()
    peers = Peers()
    report = Report(print_run_header(device, prog="gpuviz.bench.analysis", argv=argv, peers=peers))
    try:
        bench_analysis(device, parse_sizes(args.sizes), args.runs, variants=args.variants, peers=peers,
                       report=report, batches=args.batches, cpu_runs=args.cpu_runs, text=args.text,
                       primitives=not args.frame_only)
    except Mismatch as exc:
        print(f"analysis: NOT PRINTED, output did not match numpy: {exc}")
        report.failures.append({"benchmark": "analysis", "error": str(exc)})
    if args.json:
        report.write(args.json)
        print(f"results: {args.json}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
