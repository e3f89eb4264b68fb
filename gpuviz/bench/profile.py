"""Scan profile: ``python -m gpuviz.bench.profile [--sizes 16M,64M]``.

Times GPUScan tunings against the same-run copy kernel and reads the scan's
diagnostic counters (tiles, look-back steps, waiting steps, fallbacks per
tile). Outputs are checked against numpy before anything is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.profile")
    parser.add_argument("--sizes", default="16M,64M")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    import gpuviz
    from gpuviz.algorithms import GPUScan, ScanTuning

    from .harness import BU, GPUTimer, ReferenceKernel, import_graph, parse_sizes, read, size_label, upload, warm_up

    device = gpuviz.request_device()
    timer = GPUTimer(device, args.runs)
    warm_up(device)
    tunings = {
        "default": ScanTuning(),
        "rows 8": ScanTuning(rows=8),
        "subgroup walk": ScanTuning(group_lookback=True),
        "clear pass": ScanTuning(clear_pass=True),
        "portable": ScanTuning(subgroups=False),
        "checks off": ScanTuning(runtime_checks=False),
    }
    print(f"{'size':>5}  {'case':<16} {'µs':>8} {'×copy':>6}  {'steps/tile':>10} {'waits/tile':>10} {'fallbacks':>9}")
    for n in parse_sizes(args.sizes):
        x = np.random.default_rng(0).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        expected = np.cumsum(x, dtype=np.uint32) - x
        src = upload(device, x)
        dst = device.create_buffer(size=4 * n, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
        ref = timer.median(ReferenceKernel(device, "copy", n, src, dst).record)
        print(f"{size_label(n):>5}  {'copy kernel':<16} {ref * 1e6:8.1f}")
        for label, tuning in tunings.items():
            for diag in (False, True):
                graph, v = import_graph(device, {"x": (src, "uint32", n), "y": (dst, "uint32", n)})
                scan = GPUScan(id="scan", input=v["x"], output=v["y"],
                               tuning=dataclasses.replace(tuning, diagnostics=diag))
                scan.add_to_graph(graph)
                compiled = graph.compile()
                device.queue.write_buffer(dst, 0, np.zeros(n, np.uint32))
                t = timer.median(lambda e: compiled.encode(e))
                if not np.array_equal(read(device, dst, np.uint32, n), expected):
                    print(f"{size_label(n):>5}  {label:<16} MISMATCH")
                    continue
                if diag:
                    c = read(device, scan.chained.diagnostics, np.uint32, 4).astype(np.float64)
                    tiles = max(c[0], 1)
                    print(f"{'':>5}  {'  +counters':<16} {t * 1e6:8.1f} {t / ref:6.2f}  {c[1] / tiles:10.2f} "
                          f"{c[2] / tiles:10.2f} {int(c[3]):9d}")
                else:
                    print(f"{size_label(n):>5}  {label:<16} {t * 1e6:8.1f} {t / ref:6.2f}")
                compiled.destroy()
        src.destroy()
        dst.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
