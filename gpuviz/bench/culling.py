"""``python -m gpuviz.bench culling``: the frustum-culling consumer on the GPU.

Two tables, every timed result checked once against numpy first:

* cull + compact: GPUVisibilityWorkflow over the spheres of the generated
  city (:func:`~gpuviz.widgets.culling.scene.city_spheres`, default 10M and
  25M, the size of the topology benchmark's sphere case; copy and cull timed
  alternately, three rounds, after a second of warm-up)
  seen by the widget's default camera, against the harness's WGSL vec4
  copy kernel over the bytes the cull must move (spheres read + visible IDs
  and the count written; target ≤ 1.3×), numpy (the oracle, timed once) and
  torch on CUDA where importable (boolean masking of the six plane tests,
  then ``nonzero``); "alone" columns: the cull and the copy each timed in
  submits of their own after an idle GPU (as the per-node timings run),
  not back to back; ``--tiles`` / ``--variants``: a row per tile tuning;
* the whole frame (default 1M instances, 1920 x 1080): the widget's
  compiled graph (cull, compact, both views' bundles, the hover pick) plus
  the presentation pass, as :class:`~gpuviz.widgets.culling.frame.CullingFrame`
  records it for the canvas, with GPU time (timestamps around whole frames;
  target ≤ 2 ms) and CPU encode time (host seconds to record one frame;
  target ≤ 0.5 ms), the camera turning between frames.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ..oracles.workflows import frustum_spheres as culling_oracle
from .tables import Column, Report

__all__ = ["bench_culling", "CULL_TARGET", "FRAME_GPU_TARGET", "FRAME_CPU_TARGET"]

#: cull + compact time over the copy kernel of its bytes.
CULL_TARGET = 1.3
#: a whole 1M-instance frame: GPU seconds and CPU encode seconds.
FRAME_GPU_TARGET = 2e-3
FRAME_CPU_TARGET = 0.5e-3
#: ``--probes``: the default tuning without its look-back (tile bases from one atomic counter), without
#: its ID writes, without both, or writing by consecutive lanes, and the workflow reporting its most
#: concurrently running workgroups in place of the count (visibility_probes.ProbedVisibility.probe).
PROBE_TUNINGS = {f"probe-{p}": dict(probe=p) for p in ("unordered", "nowrite", "bare", "coalesced", "resident")}
#: ``--lag``: the workflow without lagged placement and with other lags (GPUVisibilityWorkflow.write_lag:
#: tickets between a tile's evaluation and its placement; the default is 512), and the occupancy of
#: both ("resident" probe).
LAG_TUNINGS = {"lag-0": dict(write_lag=0), **{f"lag-{d}": dict(write_lag=d) for d in (128, 256, 1024)},
               "resident": dict(probe="resident"), "lag-0-resident": dict(write_lag=0, probe="resident")}
CULL_SIZE = 10_000_000
#: Also timed by default: the topology benchmark's sphere case is 25M rows (same workflow, other layout).
CULL_SIZES = (CULL_SIZE, 25_000_000)
#: Copy and cull are timed alternately this many times (medians over all): a clock change
#: between two back-to-back measurements cannot favour one of them.
ROUNDS = 3
FRAME_SIZE = 1_000_000
FRAME_PIXELS = (1920, 1080)

CULL_COLUMNS = (Column("size", "size", 6, "size"), Column("tuning", "tuning", 8), Column("kept", "kept", 9),
                Column("gpu_s", "gpuviz µs", 10, "us"),
                Column("ref_s", "copy µs", 9, "us"), Column("ref_gbs", "copy GB/s", 9),
                Column("ratio", "÷copy", 6, "ratio"),
                Column("target", "target", 10, "target", of="ratio"),
                Column("alone_s", "alone µs", 8, "us"), Column("ref_alone_s", "copy alone µs", 13, "us"),
                Column("numpy_s", "numpy µs (×gpuviz)", 20, "us_ratio", of="gpu_s"),
                Column("torch_s", "torch µs (×gpuviz)", 18, "us_ratio", of="gpu_s"))
FRAME_COLUMNS = (Column("size", "instances", 9, "size"), Column("kept", "drawn", 9),
                 Column("gpu_s", "frame GPU µs", 12, "us"), Column("gpu_verdict", "≤2 ms", 8),
                 Column("cpu_s", "CPU encode µs", 13, "us"), Column("cpu_verdict", "≤0.5 ms", 8),
                 Column("cull_s", "cull nodes µs", 13, "us"), Column("views_s", "views µs", 9, "us"),
                 Column("splat_s", "splat µs", 9, "us"), Column("perspective_s", "persp µs", 9, "us"),
                 Column("overview_s", "overview µs", 11, "us"))
#: The frame's view nodes when the views are split (CullingGraph split_views) for per-node timings.
VIEW_NODES = ("splat", "perspective", "overview")


def _scene(n):
    from ..widgets.culling.frame import default_camera
    from ..widgets.culling.scene import city_spheres, scene_extent

    spheres = city_spheres(n, seed=0)
    extent = scene_extent(spheres)
    return spheres, extent, default_camera(extent)


def _check(label, got, expected):
    from .harness import Mismatch

    if got.shape != expected.shape or not np.array_equal(got, expected):
        # float32 plane tests may round differently from float64 for a sphere touching a plane
        differ = np.setxor1d(got, expected)
        if differ.size > max(4, expected.size // 100000):
            raise Mismatch(f"{label}: {differ.size} IDs differ from numpy (first {differ[:5].tolist()}; "
                           f"{got.size} kept, expected {expected.size})")
        return differ.size
    return 0


def _torch_peer(peers, spheres, planes, expected, runs):
    """torch: six plane tests as boolean tensors, then nonzero (checked, then timed)."""
    if peers is None or peers.torch is None:
        return None
    torch = peers.torch
    s = torch.from_numpy(spheres).cuda()
    p = torch.from_numpy(np.ascontiguousarray(planes, np.float32)).cuda()

    def run():
        dist = s[:, :3] @ p[:, :3].T + p[:, 3]
        keep = torch.isfinite(s).all(1) & (s[:, 3] >= 0) & (dist >= -s[:, 3:4]).all(1)
        return torch.nonzero(keep).squeeze(1)

    _check("culling torch peer", run().cpu().numpy().astype(np.uint32), expected)
    return peers.time_torch(run, runs)


def _alone(device, record, runs) -> float:
    """Median seconds of ``record`` encoded alone: one submit per run with
    timestamps around it, each after the GPU went idle (as the graph's
    per-node timings run), not back to back with the others."""
    from wgpu.backends.wgpu_native.extras import write_timestamp

    from .harness import BU

    queries = device.create_query_set(type="timestamp", count=2)
    resolve = device.create_buffer(size=16, usage=BU.QUERY_RESOLVE | BU.COPY_SRC)
    times = []
    for _ in range(runs):
        encoder = device.create_command_encoder()
        write_timestamp(encoder, queries, 0)
        record(encoder)
        write_timestamp(encoder, queries, 1)
        encoder.resolve_query_set(queries, 0, 2, resolve, 0)
        device.queue.submit([encoder.finish()])
        stamps = np.frombuffer(device.queue.read_buffer(resolve), np.uint64).astype(np.int64)
        times.append(float(stamps[1] - stamps[0]) * 1e-9)
    resolve.destroy()
    return statistics.median(times)


def _bench_cull(device, table, n, runs, peers, tunings=None):
    """One size: the workflow as the widget builds it (row "default") and,
    with ``tunings`` (``{name: workflow attributes}``), each variant on the
    same buffers, timed in the same rounds as the copy kernel."""
    from .visibility_probes import ProbedVisibility
    from .harness import (BU, GPUTimer, Mismatch, ReferenceKernel, cpu_median, import_graph, node_times, read,
                          upload, warm_up)

    spheres, extent, camera = _scene(n)
    from ..widgets.culling.camera import planes_of

    planes = planes_of(camera, 1.0, camera.resolved_far(extent.center, extent.radius))
    expected = culling_oracle(spheres, planes)
    numpy_s = cpu_median(lambda: culling_oracle(spheres, planes), runs=1)
    bufs = {"spheres": upload(device, spheres), "planes": upload(device, planes),
            "ids": device.create_buffer(size=max(16, 4 * n), usage=BU.STORAGE | BU.COPY_SRC),
            "count": device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)}
    spec = {"spheres": (bufs["spheres"], "float32x4", n), "planes": (bufs["planes"], "float32x4", 6),
            "ids": (bufs["ids"], "uint32", n), "count": (bufs["count"], "uint32", 1)}

    def compiled_with(tuning):
        graph, v = import_graph(device, spec)
        workflow = ProbedVisibility(id="cull", spheres=v["spheres"], planes=v["planes"], output=v["ids"],
                                    count=v["count"])
        for name, value in tuning.items():
            setattr(workflow, name, value)
        workflow.add_to_graph(graph)
        return graph.compile()

    graphs = {name: compiled_with(tuning) for name, tuning in {"default": {}, **(tunings or {})}.items()}
    moved = spheres.nbytes + 4 * expected.size + 4
    timer = GPUTimer(device, runs)
    words = max(4, -(-moved // 32) * 4)  # the copy kernel reads half and writes half of ``moved``
    src = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    dst = device.create_buffer(size=4 * words, usage=BU.STORAGE)
    copy = ReferenceKernel(device, "copy", words, src, dst)
    # a full second of load first (the numpy oracle just idled the GPU for ~1 s per 10M rows), then
    # copy and cull alternately: a copy timed while the clocks still rise runs at well under half its
    # warm bandwidth, which skews the ratio
    warm_up(device, 1.0)
    refs, ourses, resident = [], {name: [] for name in graphs}, {}
    for r in range(ROUNDS):
        refs.append(timer.median(copy.record))
        for name in (list(graphs) if r % 2 == 0 else list(graphs)[::-1]):
            compiled = graphs[name]
            ourses[name].append(timer.median(lambda encoder: compiled.encode(encoder)))
            probe = (tunings or {}).get(name, {}).get("probe", "")
            if probe:  # a probe's output is not the workflow's: unordered IDs are the same set
                if probe == "unordered" and r == 0:
                    got = np.sort(read(device, bufs["ids"], np.uint32, default_ids.size))
                    if not np.array_equal(got, np.sort(default_ids)):
                        raise Mismatch(f"culling {n} rows ({name}): not the default's IDs in another order")
                if probe == "resident" and r == 0:  # the workflow's IDs; the count is the occupancy
                    if not np.array_equal(read(device, bufs["ids"], np.uint32, default_ids.size), default_ids):
                        raise Mismatch(f"culling {n} rows ({name}): IDs differ from the default tuning's")
                    resident[name] = int(read(device, bufs["count"], np.uint32, 1)[0])
            elif name != "default":  # a variant's IDs must be the default's, row for row
                got = read(device, bufs["ids"], np.uint32, int(read(device, bufs["count"], np.uint32, 1)[0]))
                if not np.array_equal(got, default_ids):
                    raise Mismatch(f"culling {n} rows ({name}): IDs differ from the default tuning's")
            elif r == 0:
                count = int(read(device, bufs["count"], np.uint32, 1)[0])
                default_ids = read(device, bufs["ids"], np.uint32, count).copy()
                differ = _check(f"culling {n} rows", default_ids, expected)
    ref = statistics.median(refs)
    # the same kernels each in a submit of its own after an idle GPU (as node_times runs the graph)
    ref_alone = _alone(device, copy.record, runs)
    alone = {name: _alone(device, lambda encoder: compiled.encode(encoder), runs)
             for name, compiled in graphs.items()}
    src.destroy()
    dst.destroy()
    torch_s = _torch_peer(peers, spheres, planes, expected, runs)
    for name, compiled in graphs.items():
        nodes = node_times(device, compiled, min(runs, 10))
        compiled.destroy()
        ours = statistics.median(ourses[name])
        table.add(size=n, tuning=name, kept=f"{expected.size:,}", gpu_s=ours, ref_s=ref, alone_s=alone[name],
                  ref_alone_s=ref_alone,
                  ref_gbs=f"{moved / ref / 1e9:,.0f}", ratio=ours / ref, target=CULL_TARGET,
                  numpy_s=numpy_s if name == "default" else None, torch_s=torch_s if name == "default" else None,
                  bytes=moved, boundary_differences=differ, rounds_gpu_s=ourses[name], rounds_ref_s=refs,
                  nodes_s=nodes, settings=(tunings or {}).get(name, {}))
        if name == "default":
            table.note(f"  {n:,}: {moved / 1e6:.1f} MB moved; rounds cull "
                       + " / ".join(f"{t * 1e6:.1f}" for t in ourses[name]) + " µs, copy "
                       + " / ".join(f"{t * 1e6:.1f}" for t in refs) + " µs; "
                       + ", ".join(f"{k} {t * 1e6:.1f} µs" for k, t in nodes.items()) + " (each node in its own pass)")
    for name, most in resident.items():
        table.note(f"  {n:,} ({name}): at most {most} workgroups ran at once")
    if differ:
        table.note(f"  {n:,}: {differ} IDs of spheres touching a plane differ from float64 numpy (float32 on the GPU)")
    for b in bufs.values():
        b.destroy()


def _bench_frame(device, table, n, runs):
    import wgpu

    from ..tables import GPUData
    from ..widgets.culling.camera import OrbitControl, planes_of
    from ..widgets.culling.frame import CullingFrame
    from .harness import GPUTimer, rewarm

    spheres, extent, camera = _scene(n)
    width, height = FRAME_PIXELS

    def make(split, **options):
        frame = CullingFrame(device, GPUData.from_numpy(device, spheres), extent=extent, own_spheres=True,
                             split_views=split, **options)
        frame.set_render_size((min(width, frame.graph.frame_size[0]), min(height, frame.graph.frame_size[1])))
        frame.set_camera(camera)
        return frame

    frame = make(False)
    target = device.create_texture(size=(width, height, 1), format="rgba8unorm",
                                   usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    view = target.create_view()
    count, ids = frame.read_visible()
    expected = culling_oracle(spheres, planes_of(camera, frame.aspect, frame.far))
    differ = _check(f"frame {n} instances", ids, expected)

    def record(encoder):
        frame.encode(encoder)
        frame.present(encoder, view, (width, height), extra=("benchmark frame",))

    rewarm(device, n)
    gpu = GPUTimer(device, runs).median(record)  # same camera every frame: the same work each time
    frame.poll()
    # CPU: host seconds to record one frame (camera turning: a buffer write per frame), one submit each
    orbit, cpu, parts = OrbitControl(), [], {"camera write": [], "graph": [], "present": []}
    for _ in range(max(runs, 10)):
        frame.set_camera(orbit.advance(frame.camera, 1 / 60))
        encoder = device.create_command_encoder()
        started = time.perf_counter()
        frame.write_parameters()  # what frame.encode does first after a camera change, timed apart
        wrote = time.perf_counter()
        frame.encode(encoder)
        encoded = time.perf_counter()
        frame.present(encoder, view, (width, height), extra=("benchmark frame",))
        ended = time.perf_counter()
        cpu.append(ended - started)
        for key, seconds in zip(parts, (wrote - started, encoded - wrote, ended - encoded)):
            parts[key].append(seconds)
        device.queue.submit([encoder.finish()])
        frame.submitted()
        frame.poll()
    device.queue.read_buffer(frame.graph.hover, 0, 4)  # an idle GPU (lavapipe shares the host's cores)
    # the same recording with nothing submitted in between (no driver or queue work interleaved)
    alone = []
    for _ in range(max(runs, 10)):
        frame.set_camera(orbit.advance(frame.camera, 1 / 60))
        encoder = device.create_command_encoder()
        started = time.perf_counter()
        record(encoder)
        alone.append(time.perf_counter() - started)
        encoder.finish()
    device.queue.read_buffer(frame.graph.hover, 0, 4)  # wait for the frames before timing nodes
    frame.destroy()
    # the same frame with every instance rasterised (no splat node): what the splats save on this device
    frame = make(False, overview_points=False, splat_radius=0.0)
    _check(f"frame {n} instances (rasterised)", frame.read_visible()[1], expected)
    raster = GPUTimer(device, runs).median(record)
    frame.destroy()
    # per-node times from the same scene with one render node per view (a render pass more than the frame above)
    frame = make(True)
    split_count, split_ids = frame.read_visible()
    _check(f"frame {n} instances (split views)", split_ids, expected)
    nodes = {}
    for _ in range(min(runs, 10)):
        encoder = device.create_command_encoder()
        frame.graph.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        for node, t in (frame.graph.compiled.read_timings() or {}).items():
            nodes.setdefault(node, []).append(t)
    nodes = {k: statistics.median(v) for k, v in nodes.items()}
    cpu_s = statistics.median(cpu)
    table.add(size=n, kept=f"{count:,}", gpu_s=gpu, gpu_verdict="ok" if gpu <= FRAME_GPU_TARGET else "MISS",
              cpu_s=cpu_s, cpu_verdict="ok" if cpu_s <= FRAME_CPU_TARGET else "MISS",
              cull_s=sum(t for k, t in nodes.items() if k.startswith("cull-")),
              views_s=sum(nodes.get(k, 0.0) for k in VIEW_NODES), splat_s=nodes.get("splat"),
              perspective_s=nodes.get("perspective"), overview_s=nodes.get("overview"),
              pixels=f"{width}x{height}", nodes_s=nodes, boundary_differences=differ, rasterised_gpu_s=raster)
    table.note(f"  {n:,} instances at {width}x{height}: " + ", ".join(f"{k} {t * 1e6:.1f} µs" for k, t in
                                                                     nodes.items()) + " (each node in its own pass; "
               "the views split into one render node each)",
               nodes_s=nodes)
    table.note(f"  {n:,} instances, every one rasterised (no splat node): frame GPU {raster * 1e6:.1f} µs",
               rasterised_gpu_s=raster)
    parts = {key: statistics.median(v) for key, v in parts.items()}
    table.note("  CPU encode, median parts: " + ", ".join(f"{k} {t * 1e6:.1f} µs" for k, t in parts.items())
               + f"; recorded without submitting between frames: {statistics.median(alone) * 1e6:.1f} µs",
               cpu_parts_s=parts, cpu_unsubmitted_s=statistics.median(alone))
    frame.destroy()
    target.destroy()


def bench_culling(device, sizes, runs, *, variants=False, peers=None, report=None, tunings=None, frames=True):
    """Cull + compact at ``sizes`` (default 10M and 25M) and the whole frame at
    ``sizes`` (default 1M). ``variants`` adds the frame at every cull size and
    the cull with every tile tuning of the visibility benchmark
    (:data:`~gpuviz.bench.topology_visibility.TILE_TUNINGS`; ``tunings``:
    others); ``frames=False`` leaves the frame table out."""
    if variants and tunings is None:
        from .topology_visibility import TILE_TUNINGS as tunings
    report = report or Report()
    cull = report.table("culling", "FrustumCulling: cull + compact (GPUVisibilityWorkflow, spheres vs 6 planes)",
                        CULL_COLUMNS, reference="vec4 copy kernel of spheres read + IDs written")
    limit = min(int(device.limits["max-storage-buffer-binding-size"]), int(device.limits["max-buffer-size"]))
    for n in sizes or CULL_SIZES:
        if 16 * n > limit:
            cull.note(f"  {n:,} spheres: skipped ({16 * n} bytes exceed the device's storage binding size {limit})")
            continue
        _bench_cull(device, cull, n, runs, peers, tunings)
    if not frames:
        return cull, None
    frame = report.table("culling-frame", f"FrustumCulling: whole frame (cull, compact, both views, hover pick, "
                         f"presentation) at {FRAME_PIXELS[0]}x{FRAME_PIXELS[1]}", FRAME_COLUMNS)
    for n in (sizes if sizes and not variants else None) or ([FRAME_SIZE] + (list(sizes or [CULL_SIZE])
                                                                            if variants else [])):
        if 16 * n <= limit:
            _bench_frame(device, frame, n, runs)
    return cull, frame


def main(argv=None) -> int:
    """``python -m gpuviz.bench.culling``: the cull + compact table alone
    (``--tiles``: with every tile tuning), with the run header and ``--json``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.culling", description=main.__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated sphere counts (K/M suffixes; default 10M, 25M "
                        "as 10,000,000 and 25,000,000)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--tiles", action="store_true", help="also every tile tuning (TILE_TUNINGS)")
    parser.add_argument("--probes", action="store_true", help="also the workflow without its look-back and/or its "
                        "ID writes (PROBE_TUNINGS: what they cost; not the workflow's outputs)")
    parser.add_argument("--lag", action="store_true", help="also lagged placement (LAG_TUNINGS)")
    parser.add_argument("--json", metavar="PATH", help="write the header and the table's rows to PATH")
    args = parser.parse_args(argv)
    from . import run_benchmarks
    from .harness import parse_sizes
    from .topology_visibility import TILE_TUNINGS

    sizes = parse_sizes(args.sizes) if args.sizes else None
    tunings = {**(TILE_TUNINGS if args.tiles else {}), **(PROBE_TUNINGS if args.probes else {}),
               **(LAG_TUNINGS if args.lag else {})} or None
    return run_benchmarks([("culling", lambda device, peers, report: bench_culling(
        device, sizes, args.runs, peers=peers, report=report, tunings=tunings, frames=False))],
        prog="gpuviz.bench.culling", argv=argv, json_path=args.json, warm_seconds=1.5)


if __name__ == "__main__":
    raise SystemExit(main())
