"""Benchmark cases of GPUVisibilityWorkflow (part of ``python -m gpuviz.bench
topology``; alone, with the tuning sweep: ``python -m
gpuviz.bench.topology_visibility --variants``).

Each case builds one compiled graph over imported buffers, times whole
encodings by timestamps (the harness's GPUTimer), checks the IDs and the
count against the numpy oracle and only then prints its row, next to the
WGSL vec4 copy kernel moving the same bytes (the inputs read once plus the
IDs and count written) and the peers: numpy (the oracle, timed once) and
torch on CUDA where importable, written the obvious way (boolean masking,
then ``nonzero``) and checked against the oracle too.

The tuning sweep (:func:`bench_visibility_tunings`) times every entry of
:data:`TUNINGS` (the workflow's tile size and load batching class
attributes) on the same uploaded inputs, in two rounds of opposite order,
each run checked against the oracle, next to the copy kernel and the read
kernel (the inputs' bytes read once: a floor).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..oracles.workflows import visibility_float32 as visibility_oracle
from .visibility_probes import ProbedVisibility
from .harness import (BU, GPUTimer, Mismatch, ReferenceKernel, check_equal, copy_time, import_graph, node_times, read,
                      rewarm, upload, warm_up)
from .tables import Column, Report

__all__ = ["bench_visibility", "bench_visibility_tunings", "bench_visibility_sizes", "bench_visibility_occupancy",
           "VISIBILITY_SIZE", "VISIBILITY_TARGET", "TUNINGS", "TILE_TUNINGS", "SWEEP_SIZES", "main"]

#: Default size (the issue's): 25M rows.
VISIBILITY_SIZE = 25 << 20
#: Target of the intervals + one mask case: at most this many times the copy of its bytes.
VISIBILITY_TARGET = 1.3

COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 40), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("ref_s", "copy µs", 9, "us"), Column("ratio", "÷copy", 6, "ratio"),
           Column("numpy_s", "numpy µs (×gpuviz)", 20, "us_ratio", of="gpu_s"),
           Column("torch_s", "torch µs (×gpuviz)", 18, "us_ratio", of="gpu_s"),
           Column("verdict", "target", 16))
#: The sweep's tunings: GPUVisibilityWorkflow class attributes (the first is
#: the class's default: the tile by row count, tile_for_rows). preload: vec4 loads a lane puts in flight before its
#: first test in a full tile (0, or under two quads: the bounds-checked
#: loop); pair: two tiles per workgroup (early: the second ticket right after
#: the first tile's loads). Preloads of 24 and 48 and staged ID writes are
#: slower everywhere and left out.
TUNINGS = {name: dict(tile_rows=tile, preload=preload, tiles_per_group=min(pair, 2), early_second=pair == 3)
           for name, tile, preload, pair in (
               ("auto-pre6", None, 6, 1), ("tile8K-pre6", 8192, 6, 1), ("tile8K", 8192, 0, 1),
               ("tile8K-pre12", 8192, 12, 1),
               ("tile16K-pre12", 16384, 12, 1), ("tile8K-pre6-pair", 8192, 6, 2),
               ("tile8K-pre6-pair-early", 8192, 6, 3))}
#: ``--lag``: the default (lagged placement, GPUVisibilityWorkflow.write_lag 512) against no lag and
#: other lags, in the tuning sweep's rounds.
LAG_TUNINGS = {"auto-pre6": TUNINGS["auto-pre6"], **{f"lag-{d}": dict(write_lag=d) for d in (0, 128, 256, 1024)}}
#: The size sweep's tunings: tile sizes (rows per workgroup: 256 lanes x 1-8
#: quads) with the load batches each allows (intervals + a mask load 3 vec4
#: per quad, spheres 4: preload 6 batches two quads of intervals and leaves
#: spheres in the loop; 0 is the loop for both). Other tiles, preloads,
#: pairs and the planes in workgroup memory do not beat the default (4096
#: rows, preload 6) beyond the noise and are left out.
TILE_TUNINGS = {name: dict(tile_rows=tile, preload=preload, tiles_per_group=1, early_second=False)
                for name, tile, preload in (("auto", None, 6), ("8K-pre6", 8192, 6), ("4K", 4096, 0),
                                            ("2K-pre6", 2048, 6))}
#: The occupancy table's load batches (``--occupancy``): vec4 loads a lane
#: puts in flight per batch (0: the bounds-checked loop; intervals + a mask
#: load 3 per quad, spheres 4), each timed with the "resident" probe.
OCCUPANCY_PRELOADS = (0, 6, 9, 12)
OCCUPANCY_COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 32), Column("preload", "preload", 7),
                     Column("resident", "resident workgroups", 19), Column("gpu_s", "µs (probe)", 10, "us"),
                     Column("ref_s", "copy µs", 8, "us"), Column("ratio", "÷copy", 6, "ratio"))
#: The size sweep's row counts: 1M-14M in steps of 1M (a staircase of
#: "waves" of concurrently resident tiles would show at this resolution),
#: the culling benchmark's 25M and the visibility issue's 25 x 2^20.
SWEEP_SIZES = (*range(1_000_000, 14_000_001, 1_000_000), 25_000_000, VISIBILITY_SIZE)
TUNING_COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 32), Column("tuning", "tuning", 23),
                  Column("round1_s", "round 1 µs", 10, "us"), Column("round2_s", "round 2 µs", 10, "us"),
                  Column("gpu_s", "best µs", 8, "us"), Column("ref_s", "copy µs", 8, "us"),
                  Column("copy_gbs", "copy GB/s", 9),
                  Column("read_s", "read µs", 8, "us"), Column("ratio", "÷copy", 6, "ratio"),
                  Column("verdict", "target", 12))


def _inputs(rng, n, window_width):
    """Trace-like spans over [0, 1000) ms with log-normal durations, a 70 %
    selection mask, a window of ``window_width`` ms, 0.01 ms minimum
    duration; frustum spheres in a 200-unit cube against a 90° view box."""
    start = (rng.random(n, np.float32) * 1000).astype(np.float32)
    duration = rng.lognormal(-2.0, 1.5, n).astype(np.float32)
    intervals = np.stack([start, start + duration], 1)
    mask = (rng.random(n, np.float32) < 0.7).astype(np.uint32)
    t0 = 500.0 - window_width / 2
    window = np.array([[t0, t0 + window_width, 0.01, 0.0]], np.float32)
    return intervals, mask, window


def _spheres(rng, n):
    centers = (rng.random((n, 3), np.float32) * 200 - 100).astype(np.float32)
    radii = (rng.random((n, 1), np.float32) * 2).astype(np.float32)
    planes = np.array([[1, 0, 0, 50], [-1, 0, 0, 50], [0, 1, 0, 40], [0, -1, 0, 40], [0, 0, 1, 60], [0, 0, -1, 10]],
                      np.float32)
    return np.concatenate([centers, radii], 1), planes


def _torch_peer(peers, expected, runs, **arrays):
    """torch: the predicates as boolean tensors, then nonzero (checked, then timed)."""
    if peers is None or peers.torch is None:
        return None
    torch = peers.torch
    t = {k: torch.from_numpy(np.ascontiguousarray(v.view(np.int32) if v.dtype == np.uint32 else v)).cuda()
         for k, v in arrays.items()}

    def run():
        keep = None
        if "mask" in t:
            keep = t["mask"] != 0
        if "intervals" in t:
            t0, t1, dmin = (float(v) for v in arrays["window"].ravel()[:3])
            s, e = t["intervals"][:, 0], t["intervals"][:, 1]
            k = (e >= t0) & (s <= t1) & (e - s >= dmin)
            keep = k if keep is None else keep & k
        if "spheres" in t:
            p = t["planes"].reshape(6, 4)
            dist = t["spheres"][:, :3] @ p[:, :3].T + p[:, 3]
            k = (t["spheres"][:, 3] >= 0) & (dist >= -t["spheres"][:, 3:4]).all(1)
            keep = k if keep is None else keep & k
        return torch.nonzero(keep).squeeze(1)

    if not np.array_equal(run().cpu().numpy().astype(np.uint32), expected):
        raise Mismatch("visibility torch peer differs from the oracle")
    return peers.time_torch(run, runs)


def _cases(rng, n, wide=False) -> list:
    """``(label, arrays, targeted)`` of the three standard cases at ``n`` rows
    (``wide``: and the spheres against a box keeping about half of them,
    the culling widget's shape)."""
    intervals, mask, window = _inputs(rng, n, 500.0)
    narrow = _inputs(rng, 1, 10.0)[2]
    spheres, planes = _spheres(rng, n)
    cases = [("intervals + mask, ~35% kept", dict(mask=mask, intervals=intervals, window=window), True),
             ("intervals + mask, narrow window", dict(mask=mask, intervals=intervals, window=narrow), True),
             ("spheres + planes (frustum)", dict(spheres=spheres, planes=planes), False)]
    if wide:
        box = np.array([[1, 0, 0, 100], [-1, 0, 0, 100], [0, 1, 0, 100], [0, -1, 0, 100], [0, 0, 1, 100],
                        [0, 0, -1, -1]], np.float32)  # z >= 1 of the 200-unit cube: ~half kept
        cases.append(("spheres + planes, ~half kept", dict(spheres=spheres, planes=box), False))
    return cases


def bench_visibility(device, sizes, runs, *, variants=False, peers=None, report=None):
    """GPUVisibilityWorkflow: intervals + one mask (the issue's target case)
    at two window widths, and frustum spheres (no target; the culling
    consumer's shape). ``variants`` adds the mask_output and all-predicate
    cases."""
    report = report or Report()
    table = report.table("topology-visibility", "GPUVisibilityWorkflow: one pass (fused predicates, look-back, "
                         "ID writes)", COLUMNS, reference="vec4 copy kernel of the bytes read + written")
    rng = np.random.default_rng(14)
    timer = GPUTimer(device, runs)
    for n in sizes or [VISIBILITY_SIZE]:
        cases = _cases(rng, n)
        if variants:
            everything = {**cases[0][1], **cases[2][1]}
            cases.append(("all of them", everything, False))
        for label, arrays, targeted in cases:
            _case(device, timer, table, n, label, arrays, targeted, peers, runs)
        if variants:
            _case(device, timer, table, n, "intervals + mask, with mask_output", cases[0][1], False, peers, runs,
                  mask_output=True)
    return table


PARAMETERS = ("window", "planes")
FORMATS = {"mask": "uint32", "intervals": "float32x2", "window": "float32x4", "spheres": "float32x4",
           "planes": "float32x4"}


def _read_bytes(arrays) -> int:
    """Bytes of a case's per-row inputs (the parameters are not rows)."""
    return sum(a.nbytes for k, a in arrays.items() if k not in PARAMETERS)


def _buffers(device, arrays, n, mask_output=False) -> dict:
    bufs = {k: upload(device, v) for k, v in arrays.items()}
    bufs["ids"] = device.create_buffer(size=max(16, 4 * n), usage=BU.STORAGE | BU.COPY_SRC)
    bufs["count"] = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
    if mask_output:
        bufs["mask_out"] = device.create_buffer(size=max(16, 4 * n), usage=BU.STORAGE | BU.COPY_SRC)
    return bufs


def _compiled(device, bufs, arrays, n, tuning=None):
    """The compiled one-workflow graph over ``bufs`` (``tuning``: class
    attributes set on the workflow instance)."""
    # per-row inputs as views of their first n rows (the size sweep's buffers hold more)
    spec = {k: (b, FORMATS.get(k, "uint32"), arrays[k].shape[0] if k in PARAMETERS else (1 if k == "count" else n))
            for k, b in bufs.items()}
    graph, v = import_graph(device, spec)
    workflow = ProbedVisibility(id="visible", output=v["ids"], count=v["count"],
                                masks=[v["mask"]] if "mask" in v else (), intervals=v.get("intervals"),
                                window=v.get("window"), spheres=v.get("spheres"), planes=v.get("planes"),
                                mask_output=v.get("mask_out"))
    for name, value in (tuning or {}).items():
        setattr(workflow, name, value)
    workflow.add_to_graph(graph)
    return graph.compile()


def _check(label, device, bufs, expected) -> None:
    count = int(read(device, bufs["count"], np.uint32, 1)[0])
    if count != expected.size:
        raise Mismatch(f"visibility {label}: count {count}, oracle {expected.size}")
    check_equal(f"visibility {label}", read(device, bufs["ids"], np.uint32, count), expected)


def _case(device, timer, table, n, label, arrays, targeted, peers, runs, mask_output=False):
    started = time.perf_counter()
    expected = visibility_oracle(**arrays)
    numpy_s = time.perf_counter() - started
    bufs = _buffers(device, arrays, n, mask_output)
    compiled = _compiled(device, bufs, arrays, n)
    read_bytes = _read_bytes(arrays)
    written = 4 * expected.size + 4 + (4 * n if mask_output else 0)
    # a second, as the culling benchmark does: after a shorter warm-up the first case still times its
    # copy at under half the warm bandwidth
    rewarm(device, n, 1.0)
    ref = copy_time(device, timer, -(-(read_bytes + written) // 32) * 4)  # half read, half written
    device.queue.write_buffer(bufs["count"], 0, np.full(4, 0xFFFFFFFF, np.uint32))
    ours = timer.median(lambda encoder: compiled.encode(encoder))
    _check(label, device, bufs, expected)
    if mask_output:
        keep = np.zeros(n, np.uint32)
        keep[expected] = 1
        check_equal(f"visibility {label} mask", read(device, bufs["mask_out"], np.uint32, n), keep)
    nodes = node_times(device, compiled, min(runs, 10))
    compiled.destroy()
    torch_s = _torch_peer(peers, expected, runs, **arrays)
    verdict = (f"≤{VISIBILITY_TARGET:g}× {'ok' if ours / ref <= VISIBILITY_TARGET else 'MISS'}" if targeted
               else "(record)")
    table.add(size=n, case=label, gpu_s=ours, ref_s=ref, ratio=ours / ref, numpy_s=numpy_s, torch_s=torch_s,
              verdict=verdict, kept=int(expected.size), bytes=read_bytes + written, nodes_s=nodes)
    table.note(f"  {label}: kept {expected.size}, {(read_bytes + written) / 1e6:.1f} MB moved; "
               + ", ".join(f"{k} {t * 1e6:.1f} µs" for k, t in nodes.items()) + " (each node in its own pass)",
               nodes_s=nodes)
    for b in bufs.values():
        b.destroy()


def _read_time(device, timer, words: int) -> float:
    """Median seconds of the read kernel over ``words`` uint32 (a multiple of 4)."""
    src = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    sink = device.create_buffer(size=16, usage=BU.STORAGE)
    t = timer.median(ReferenceKernel(device, "read", words, src, sink).record)
    src.destroy()
    sink.destroy()
    return t


def bench_visibility_tunings(device, sizes, runs, *, report=None, tunings=None, rounds=2):
    """Every tuning of ``tunings`` (default :data:`TUNINGS`) on the three
    standard cases: ``rounds`` medians each (the rounds alternate the
    order, so drift shows), every run's IDs and count checked against the
    oracle; ``best`` is the lowest median. Raises Mismatch on a wrong
    output. Does not time peers."""
    report = report or Report()
    tunings = tunings or TUNINGS
    table = report.table("topology-visibility-tunings", "GPUVisibilityWorkflow tunings (tile_rows, preload, "
                         "tiles_per_group, early_second)", TUNING_COLUMNS,
                         reference="vec4 copy kernel of the bytes read + written, timed in every round, the fastest "
                         "round's; read = read kernel of the input bytes")
    rng = np.random.default_rng(14)
    timer = GPUTimer(device, runs)
    for n in sizes or [VISIBILITY_SIZE]:
        for label, arrays, targeted in _cases(rng, n, wide=True):
            expected = visibility_oracle(**arrays)
            bufs = _buffers(device, arrays, n)
            read_bytes = _read_bytes(arrays)
            moved = read_bytes + 4 * expected.size + 4
            graphs = {name: _compiled(device, bufs, arrays, n, tuning) for name, tuning in tunings.items()}
            rewarm(device, n, 1.0)
            floor = _read_time(device, timer, -(-read_bytes // 16) * 4)
            times, copies = {name: [] for name in tunings}, []
            for r in range(rounds):
                copies.append(copy_time(device, timer, -(-moved // 32) * 4))
                for name in (list(tunings) if r % 2 == 0 else list(tunings)[::-1]):
                    compiled = graphs[name]
                    device.queue.write_buffer(bufs["count"], 0, np.full(4, 0xFFFFFFFF, np.uint32))
                    times[name].append(timer.median(lambda encoder: compiled.encode(encoder)))
                    _check(f"{label} ({name})", device, bufs, expected)  # the IDs of this tuning's last run
            for compiled in graphs.values():
                compiled.destroy()
            ref = min(copies)
            for name, ts in times.items():
                best = min(ts)
                verdict = (f"≤{VISIBILITY_TARGET:g}× {'ok' if best / ref <= VISIBILITY_TARGET else 'MISS'}"
                           if targeted else "(record)")
                table.add(size=n, case=label, tuning=name, round1_s=ts[0], round2_s=ts[-1], gpu_s=best, ref_s=ref,
                          copy_gbs=f"{moved / ref / 1e9:,.0f}", read_s=floor, ratio=best / ref, verdict=verdict,
                          runs_s=ts, copy_rounds_s=copies, settings=tunings[name], kept=int(expected.size))
            winner = min(times, key=lambda k: min(times[k]))
            table.note(f"  {label}: fastest {winner} {min(times[winner]) * 1e6:.1f} µs "
                       f"({min(times[winner]) / ref:.3f}× copy; default {min(times[next(iter(tunings))]) * 1e6:.1f} µs); "
                       f"{moved / 1e6:.1f} MB moved; copy rounds " + " / ".join(f"{c * 1e6:.1f}" for c in copies) + " µs")
            for b in bufs.values():
                b.destroy()
    return table


def bench_visibility_occupancy(device, sizes, runs, *, report=None, preloads=OCCUPANCY_PRELOADS):
    """How many workgroups of each standard case (and of intervals alone,
    a mask alone and spheres with a mask) run at once (the workflow's
    "resident" probe: its count word receives the high-water mark of
    running workgroups; 132 SMs x 8 is full occupancy on an H200) for each
    load batch of ``preloads``, with the probe's time. The IDs are checked
    against the oracle (the probe writes the workflow's)."""
    report = report or Report()
    table = report.table("topology-visibility-occupancy", "GPUVisibilityWorkflow occupancy (probe \"resident\")",
                         OCCUPANCY_COLUMNS, reference="vec4 copy kernel of the bytes read + written")
    rng = np.random.default_rng(14)
    timer = GPUTimer(device, runs)
    for n in sizes or [VISIBILITY_SIZE]:
        cases = _cases(rng, n, wide=True)
        first, frustum = cases[0][1], cases[2][1]
        # one input fewer or more than the standard cases: which role holds the registers
        cases += [("intervals alone", {k: first[k] for k in ("intervals", "window")}, False),
                  ("mask alone", {"mask": first["mask"]}, False),
                  ("spheres + planes + mask", {**frustum, "mask": first["mask"]}, False)]
        for label, arrays, _ in cases:
            expected = visibility_oracle(**arrays)
            bufs = _buffers(device, arrays, n)
            moved = _read_bytes(arrays) + 4 * expected.size + 4
            rewarm(device, n, 1.0)
            ref = copy_time(device, timer, -(-moved // 32) * 4)
            for preload in preloads:
                compiled = _compiled(device, bufs, arrays, n, dict(preload=preload, probe="resident"))
                seconds = timer.median(lambda encoder: compiled.encode(encoder))
                check_equal(f"visibility {label} (preload {preload}, resident probe)",
                            read(device, bufs["ids"], np.uint32, expected.size), expected)
                resident = int(read(device, bufs["count"], np.uint32, 1)[0])
                compiled.destroy()
                table.add(size=n, case=label, preload=preload, resident=resident, gpu_s=seconds, ref_s=ref,
                          ratio=seconds / ref)
            for b in bufs.values():
                b.destroy()
    return table


def bench_visibility_sizes(device, sizes, runs, *, report=None, tunings=None, rounds=3):
    """Time against size: the intervals + mask (~35 % kept) and frustum
    spheres cases over the first n rows of inputs generated once at the
    largest size, for every n of ``sizes`` (default :data:`SWEEP_SIZES`)
    and every tuning of ``tunings`` (default :data:`TILE_TUNINGS`). Per
    size, after a quarter second of GPU load, ``rounds`` rounds each time
    the copy kernel of that size's bytes and then every tuning (alternate
    rounds in reverse order), with nothing read back in between (each
    tuning writes its own IDs and count, checked against the oracle after
    the rounds); a cell is the lowest median, its ratio to the lowest copy
    median. One row per (case, size); raises Mismatch on a wrong output.
    Does not time peers."""
    report = report or Report()
    tunings = tunings or TILE_TUNINGS
    sizes = sorted(sizes or SWEEP_SIZES)
    columns = (Column("size", "size", 10), Column("case", "case", 28), Column("ref_s", "copy µs", 8, "us"),
               *(Column(f"{name}_s", name, 14, "us_ratio", of="ref_s") for name in tunings),
               Column("best", "fastest", 9))
    table = report.table("topology-visibility-sizes", "GPUVisibilityWorkflow time against rows, per tuning "
                         "(µs and ÷copy)", columns, reference="vec4 copy kernel of the bytes read + written, timed "
                         "in every round at each size, the fastest round's")
    rng = np.random.default_rng(14)
    timer = GPUTimer(device, runs)
    top = sizes[-1]
    intervals, mask, window = _inputs(rng, top, 500.0)
    spheres, planes = _spheres(rng, top)
    for label, arrays in (("intervals + mask, ~35% kept", dict(mask=mask, intervals=intervals, window=window)),
                          ("spheres + planes (frustum)", dict(spheres=spheres, planes=planes))):
        everything = visibility_oracle(**arrays)
        inputs = {k: upload(device, v) for k, v in arrays.items()}
        outputs = {name: _buffers(device, {}, top) for name in tunings}  # ids and count per tuning
        row_bytes = sum(a.itemsize * (a.size // top) for k, a in arrays.items() if k not in PARAMETERS)
        most = -(-(row_bytes * top + 4 * everything.size + 4) // 32) * 4
        src, dst = (device.create_buffer(size=4 * most, usage=BU.STORAGE) for _ in range(2))
        for n in sizes:
            expected = everything[:np.searchsorted(everything, n)]
            moved = row_bytes * n + 4 * expected.size + 4
            copy = ReferenceKernel(device, "copy", -(-moved // 32) * 4, src, dst)
            graphs = {name: _compiled(device, {**inputs, **outputs[name]}, arrays, n, tuning)
                      for name, tuning in tunings.items()}
            for out in outputs.values():
                device.queue.write_buffer(out["count"], 0, np.full(4, 0xFFFFFFFF, np.uint32))
            warm_up(device, 0.25)
            times, copies = {name: [] for name in tunings}, []
            for r in range(rounds):
                copies.append(timer.median(copy.record))
                for name in (list(tunings) if r % 2 == 0 else list(tunings)[::-1]):
                    compiled = graphs[name]
                    times[name].append(timer.median(lambda encoder: compiled.encode(encoder)))
            for name, compiled in graphs.items():
                _check(f"{label} at {n} rows ({name})", device, outputs[name], expected)
                compiled.destroy()
            ref = min(copies)
            best = min(times, key=lambda k: min(times[k]))
            table.add(size=f"{n:,}", rows=n, case=label, ref_s=ref, best=best, kept=int(expected.size), bytes=moved,
                      copy_rounds_s=copies, runs_s=times, **{f"{name}_s": min(ts) for name, ts in times.items()})
        for b in (*inputs.values(), *(b for out in outputs.values() for b in out.values()), src, dst):
            b.destroy()
        _fit_note(table, label, ["ref_s", *(f"{name}_s" for name in tunings)])
    table.note("  tunings: " + "; ".join(f"{name} = " + ", ".join(f"{k} {v}" for k, v in t.items())
                                         for name, t in tunings.items()), settings=tunings)
    return table


def _fit_note(table, label, keys, least=6_000_000) -> None:
    """A note per case: each timed column's least-squares line over the
    sizes from ``least`` rows on (all when fewer than three are): the fixed
    cost (µs at zero rows), the marginal cost (µs per million rows) and
    the largest residual (a staircase shows as large residuals)."""
    rows = [r for r in table.rows if r["case"] == label]
    if len([r for r in rows if r["rows"] >= least]) >= 3:
        rows = [r for r in rows if r["rows"] >= least]
    if len(rows) < 2:
        return
    n = np.array([r["rows"] for r in rows], float) / 1e6
    fits = {}
    for key in keys:
        t = np.array([r[key] for r in rows]) * 1e6
        slope, fixed = np.polyfit(n, t, 1)
        fits[key[:-2] if key != "ref_s" else "copy"] = (float(fixed), float(slope),
                                                          float(np.abs(t - (fixed + slope * n)).max()))
    table.note(f"  {label}, time = fixed + marginal x rows over {len(rows)} sizes (µs, µs per 1M rows, largest "
               "residual µs): " + "; ".join(f"{k} {a:.1f} + {b:.2f} (±{e:.1f})" for k, (a, b, e) in fits.items()),
               case=label, fits=fits)


def main(argv=None) -> int:
    """``python -m gpuviz.bench.topology_visibility``: the visibility cases
    alone (the run header, ``--json``), with ``--variants`` the tuning sweep
    too."""
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.topology_visibility",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated row counts (K/M suffixes; default 25M)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--variants", action="store_true", help="also the tuning sweep (TUNINGS)")
    parser.add_argument("--sweep-only", action="store_true", help="only the tuning sweep")
    parser.add_argument("--size-sweep", action="store_true",
                        help="only time against size per tile tuning (TILE_TUNINGS at SWEEP_SIZES, or --sizes)")
    parser.add_argument("--occupancy", action="store_true",
                        help="only the resident workgroups per case and load batch (OCCUPANCY_PRELOADS)")
    parser.add_argument("--lag", action="store_true", help="only the tuning sweep over LAG_TUNINGS")
    parser.add_argument("--json", metavar="PATH", help="write the header and the tables' rows to PATH")
    args = parser.parse_args(argv)
    from . import run_benchmarks
    from .harness import parse_sizes
    sizes = parse_sizes(args.sizes) if args.sizes else None
    jobs = []
    if args.lag:
        jobs.append(("topology visibility lag", lambda device, peers, report: bench_visibility_tunings(
            device, sizes, args.runs, report=report, tunings=LAG_TUNINGS)))
    elif args.occupancy:
        jobs.append(("topology visibility occupancy",
                     lambda device, peers, report: bench_visibility_occupancy(device, sizes, args.runs, report=report)))
    elif args.size_sweep:
        jobs.append(("topology visibility sizes",
                     lambda device, peers, report: bench_visibility_sizes(device, sizes, args.runs, report=report)))
    elif not args.sweep_only:
        jobs.append(("topology visibility",
                     lambda device, peers, report: bench_visibility(device, sizes, args.runs, peers=peers, report=report)))
    if (args.variants or args.sweep_only) and not (args.size_sweep or args.occupancy or args.lag):
        jobs.append(("topology visibility tunings",
                     lambda device, peers, report: bench_visibility_tunings(device, sizes, args.runs, report=report)))
    # a fresh machine's clocks rise for a while: warm up longer first
    return run_benchmarks(jobs, prog="gpuviz.bench.topology_visibility", argv=argv, json_path=args.json,
                          warm_seconds=1.5)


if __name__ == "__main__":
    raise SystemExit(main())
