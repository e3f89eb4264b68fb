"""Benchmarks: ``python -m gpuviz.bench scan|compaction|reduction|sort|analysis|all``.

Each prints one table: size, median GPU time from timestamp queries (after
warm-up), the same-run time of a WGSL vec4 copy (or read) kernel over the
same bytes, their ratio against the target, and peers (numpy always; torch
and cupy when importable, timed with CUDA events) also as ratios. A row is
printed only after its output matched numpy. This is a benchmark, not a
timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

__all__ = ["main"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=["scan", "compaction", "reduction", "sort", "analysis", "all"])
    parser.add_argument("--sizes", default="1M,16M,64M", help="comma-separated row counts (K/M suffixes)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--variants", action="store_true", help="also time scan tuning variants")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

    import wgpu

    import gpuviz

    from .cases import BENCHMARKS, Mismatch
    from .harness import Peers, parse_sizes, warm_up

    device = gpuviz.request_device()
    caps = gpuviz.device_capabilities(device)
    peers = Peers()
    print(f"gpuviz.bench {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"adapter: {caps.adapter} ({caps.backend}), subgroups {caps.subgroups}, wgpu {wgpu.__version__}; "
          f"peers: numpy" + (", torch" if peers.torch else "") + (", cupy" if peers.cupy else ""))
    names = list(BENCHMARKS) if args.name == "all" else [args.name]
    sizes = parse_sizes(args.sizes)
    started = time.perf_counter()
    warm_up(device)
    failed = False
    for name in names:
        try:
            BENCHMARKS[name](device, sizes, args.runs, variants=args.variants, peers=peers)
        except Mismatch as exc:
            print(f"{name}: NOT PRINTED, output did not match numpy: {exc}")
            failed = True
    print(f"\n(total {time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0
