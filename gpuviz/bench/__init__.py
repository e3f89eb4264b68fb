"""Benchmarks: ``python -m gpuviz.bench scan|compaction|reduction|sort|analysis|all``.

Each prints the run header first (the tree's ``git describe --always
--dirty``, wgpu and wgpu-native versions, the adapter and its driver, the
default tunings, the command), then its tables: size, median GPU time from
timestamp queries (after warm-up), the same-run time of a WGSL vec4 copy (or
read) kernel over the same bytes, their ratio against the target, and peers
(numpy always; torch and cupy when importable, timed with CUDA events) also as
ratios. A row is printed only after its output matched numpy. ``--json PATH``
writes the header and every table's rows (the same row objects that were
printed) for ``python -m gpuviz.bench.report``. This is a benchmark, not a
timed test.
"""

from __future__ import annotations

import argparse
import os
import time

__all__ = ["main"]


def main(argv=None, *, command: str | None = None) -> int:
    """Run the named benchmark(s); 0 when every output matched numpy.

    ``argv`` defaults to the process's arguments; ``command`` (default: the
    process's command line, or ``python -m gpuviz.bench argv``) is recorded
    in the header.
    """
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=["scan", "compaction", "reduction", "sort", "analysis", "all"])
    parser.add_argument("--sizes", default="1M,16M,64M", help="comma-separated row counts (K/M suffixes)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--variants", action="store_true", help="also time tuning variants")
    parser.add_argument("--json", metavar="PATH", help="write the header and every table's rows to PATH")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

    import gpuviz

    from .cases import BENCHMARKS
    from .harness import Mismatch, Peers, parse_sizes, print_run_header, warm_up
    from .tables import Report

    device = gpuviz.request_device()
    peers = Peers()
    report = Report(print_run_header(device, prog="gpuviz.bench", argv=argv, peers=peers, command=command))
    names = list(BENCHMARKS) if args.name == "all" else [args.name]
    sizes = parse_sizes(args.sizes)
    started = time.perf_counter()
    warm_up(device)
    for name in names:
        try:
            BENCHMARKS[name](device, sizes, args.runs, variants=args.variants, peers=peers, report=report)
        except Mismatch as exc:
            print(f"{name}: NOT PRINTED, output did not match numpy: {exc}")
            report.failures.append({"benchmark": name, "error": str(exc)})
    report.header["total_s"] = round(time.perf_counter() - started, 1)
    print(f"\n(total {report.header['total_s']:.1f} s)")
    if args.json:
        report.write(args.json)
        print(f"results: {args.json}")
    return 1 if report.failures else 0
