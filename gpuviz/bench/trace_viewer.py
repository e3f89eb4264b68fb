"""``python -m gpuviz.bench trace-viewer``: one trace-viewer frame per
capacity tier (issue 14's speed table).

Tiers are synthetic traces (:func:`gpuviz.trace.synthetic`, 8 ranks x 8
threads, CPU->GPU flows), default 1M, 4M, 25M and 100M spans (``--sizes``
picks others, e.g. ``--sizes 64K`` on a CPU adapter). Each tier builds one
GPUTraceScene, one :class:`~gpuviz.trace.interaction.GPUTraceFrame` and one
compiled graph, then for three windows (zoomed out: the whole trace; mid:
1/100 of it; deep: 1/100000 of it, at least 1 ns per pixel column):

* ``gpu_s``: median GPU time of a whole frame (timestamps around
  ``compiled.encode``, >= 20 runs after warm-up);
* ``encode_s``: median CPU time of ``frame.write`` (a window moved by 1 ns:
  real writes) + ``compiled.encode`` + ``encoder.finish``;
* ``focus_s``: GPU time of the focus traversal nodes after a 4-hop focus
  change from 16 linked spans (per-node timestamps; each node in its own
  pass, so it is an upper bound), and ``focus_frame_s`` the whole frame
  with that focus;
* ``shown``/``anchors``/``edges`` (link edges to the closest shown
  ancestor or a collapsed summary row) are checked with the rest;
* ``numpy_s``: the numpy oracle (:class:`~gpuviz.trace.interaction.TraceViewOracle`)
  of the same frame, timed once.

A row is printed only after the frame's drawn rows, merged and density
runs, minimap, shown codes, anchors, edges and stats equal the oracle's
(the 4-hop focus mask once per tier). When the trace
viewer widget provides render nodes (``gpuviz.widgets.trace.render
.add_trace_render(graph, frame, *, size)``), the frame includes them and the
title says so; otherwise it is compute-only.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from .harness import GPUTimer, Mismatch, check_equal, rewarm
from .tables import Column, Report

__all__ = ["bench_trace_viewer", "TRACE_VIEWER_SIZES", "FRAME_TARGETS", "ENCODE_TARGET", "FOCUS_TARGET"]

TRACE_VIEWER_SIZES = (1 << 20, 4 << 20, 25 << 20, 100 << 20)
#: Frame GPU time targets (seconds) by tier: 25M <= 4 ms, 100M <= 8 ms (H200).
FRAME_TARGETS = {25 << 20: 4e-3, 100 << 20: 8e-3}
#: CPU encode target at 25M; 4-hop focus change target at 25M.
ENCODE_TARGET, FOCUS_TARGET = 1e-3, 2e-3
WIDTH, ROWS = 1920, 512  # canvas columns; layout rows in the viewport
ZOOMS = (("zoomed out", 1.0), ("mid", 1e-2), ("deep", 1e-5))
FOCUS_SEEDS, FOCUS_HOPS = 16, 4

COLUMNS = (Column("size", "size", 5, "size"), Column("zoom", "zoom", 10), Column("drawn", "drawn", 9),
           Column("merged", "merged", 9), Column("gpu_s", "frame µs", 10, "us"),
           Column("frame_target", "target", 11, "target", of="gpu_s"), Column("encode_s", "encode µs", 10, "us"),
           Column("focus_s", "focus µs", 9, "us"), Column("focus_frame_s", "frame+focus µs", 14, "us"),
           Column("numpy_s", "numpy µs (×frame)", 20, "us_ratio", of="gpu_s"))


def _render_hook():
    """The widget's render-node builder when the widget package has one."""
    try:
        from gpuviz.widgets.trace.render import add_trace_render
    except ImportError:
        return None
    return add_trace_render


def _compare(label, got, want):
    for key in ("drawn", "minimap", "focus", "shown", "anchors", "edges"):
        check_equal(f"{label} {key}", got[key], getattr(want, key))
    for key in ("merged", "density"):
        if got[key].shape != getattr(want, key).shape or not np.array_equal(got[key], getattr(want, key)):
            raise Mismatch(f"{label} {key}: {len(got[key])} runs, oracle {len(getattr(want, key))} (or they differ)")
    if got["stats"] != want.stats:
        raise Mismatch(f"{label} stats {got['stats']} != oracle {want.stats}")


def _submit(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def _encode_time(device, frame, compiled, state, runs):
    """Median CPU seconds of write (1 ns pan: new bytes) + encode + finish."""
    times = []
    w0, w1 = state.window
    for k in range(runs + 3):
        moved = state.with_(window=(w0 + (k & 1), w1 + (k & 1)))
        started = time.perf_counter()
        frame.write(moved)
        encoder = device.create_command_encoder()
        compiled.encode(encoder)
        buffer = encoder.finish()
        times.append(time.perf_counter() - started)
        device.queue.submit([buffer])
    frame.write(state)
    return statistics.median(times[3:])


def _focus_time(device, frame, compiled, runs):
    """Median summed GPU seconds of the focus nodes (timestamped encodes)."""
    prefix = f"{frame.id}-focus"
    sums = []
    for _ in range(max(3, min(runs, 10))):
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        timings = compiled.read_timings() or {}
        sums.append(sum(t for node, t in timings.items() if node.startswith(prefix)))
    return statistics.median(sums)


def _tier(device, n, runs, timer, table, hook):
    from gpuviz.graph import GPUCommandGraph
    from gpuviz.trace import synthetic
    from gpuviz.trace.interaction import GPUTraceFrame, TraceViewOracle
    from gpuviz.trace.scene import GPUTraceScene

    trace = synthetic(spans=n, processes=8, threads_per_process=8, seed=14)
    scene = GPUTraceScene(device, trace, label=f"bench-{n}")
    frame = GPUTraceFrame(scene=scene, trace=trace, width_capacity=WIDTH, row_capacity=ROWS, id="bench-view")
    compiled, graph = None, None
    for render in ((hook, None) if hook is not None else (None,)):
        graph = GPUCommandGraph(device, id="trace-viewer")
        frame.add_to_graph(graph)
        try:
            if render is not None:
                render(graph, frame, size=(WIDTH, 600))
            compiled = graph.compile()
            break
        except Exception as exc:  # the widget's hook is another package's: report it, time the compute
            if render is None:
                raise
            table.note(f"  render nodes failed ({type(exc).__name__}: {exc}); this tier is compute only")
    table.note(f"  {n} spans: {len(graph.nodes)} graph nodes, {trace.links.num_rows} links")
    oracle = TraceViewOracle(frame, trace)
    base = frame.initial_state(width=WIDTH, rows=(0, ROWS))
    t0, t1 = base.window
    linked = trace.links.column("source").to_numpy()
    rng = np.random.default_rng(n)
    seeds = tuple(int(s) for s in rng.choice(linked, min(FOCUS_SEEDS, len(linked)), replace=False))
    try:
        for zoom, share in ZOOMS:
            width_ns = max(WIDTH, int((t1 - t0) * share))
            middle = t0 + (t1 - t0) // 2
            state = base.with_(window=(middle - width_ns // 2, middle - width_ns // 2 + width_ns))
            frame.write(state)
            _submit(device, compiled)
            got = frame.read_back()
            started = time.perf_counter()
            want = oracle.frame(state)
            numpy_s = time.perf_counter() - started
            _compare(f"trace-viewer {n} {zoom}", got, want)
            rewarm(device, n)
            gpu_s = timer.median(lambda encoder: compiled.encode(encoder))
            encode_s = _encode_time(device, frame, compiled, state, runs)
            focused = state.with_(focus_seeds=seeds, focus_depth=FOCUS_HOPS)
            frame.write(focused)
            _submit(device, compiled)
            if zoom == ZOOMS[0][0]:  # the focus mask does not depend on the window: check it once per tier
                _compare(f"trace-viewer {n} {zoom} focus", frame.read_back(), oracle.frame(focused))
            focus_s = _focus_time(device, frame, compiled, runs)
            focus_frame_s = timer.median(lambda encoder: compiled.encode(encoder))
            table.add(size=n, zoom=zoom, drawn=want.stats["drawn"], merged=want.stats["merged_records"],
                      gpu_s=gpu_s, frame_target=FRAME_TARGETS.get(n), encode_s=encode_s, focus_s=focus_s,
                      focus_frame_s=focus_frame_s, numpy_s=numpy_s, window_ns=width_ns, stats=want.stats,
                      edges=len(want.edges), rows=ROWS, width=WIDTH)
    finally:
        compiled.destroy()
        frame.destroy()
        scene.destroy()


def bench_trace_viewer(device, sizes, runs, *, variants=False, peers=None, report=None):
    """The trace-viewer frame table (see the module docstring); ``variants``
    and ``peers`` are unused (the oracle is the only peer)."""
    report = report or Report()
    hook = _render_hook()
    what = "with the TraceViewer render nodes" if hook else "compute only (no render nodes in this tree)"
    table = report.table("trace-viewer", f"trace-viewer frame: GPUTraceFrame {what}, {WIDTH} columns x {ROWS} rows; "
                         f"focus = {FOCUS_HOPS} hops from {FOCUS_SEEDS} linked spans", COLUMNS)
    timer = GPUTimer(device, max(runs, 20))
    for n in sizes or TRACE_VIEWER_SIZES:
        _tier(device, n, max(runs, 20), timer, table, hook)
    table.note(f"targets (H200): frame <= 4 ms GPU at 25M with encode <= {ENCODE_TARGET * 1e3:g} ms, 100M <= 8 ms, "
               f"4-hop focus change <= {FOCUS_TARGET * 1e3:g} ms at 25M; the spec's viewer budgets a 33 ms p95 "
               "frame at 25M")
    return table


def main(argv=None) -> int:
    """``python -m gpuviz.bench.trace_viewer [--sizes 64K] [--runs N]``."""
    from . import main as bench_main

    return bench_main(["trace-viewer", *(argv or [])])


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
