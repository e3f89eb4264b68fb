"""Benchmarks: ``python -m gpuviz.bench NAME`` (``--list`` names them; ``all`` runs the core ones).

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

__all__ = ["main", "run_benchmarks", "BENCHMARK_MODULES", "CORE_BENCHMARKS"]

#: Every benchmark: name -> "module:function" inside gpuviz.bench, imported
#: only when that benchmark runs (so one benchmark's peers never load for
#: another). The function takes ``(device, sizes, runs, *, variants, peers,
#: report)``; ``sizes`` is None when ``--sizes`` was not given (each benchmark
#: then uses its own default tiers).
BENCHMARK_MODULES = {
    "scan": "cases:bench_scan",
    "compaction": "cases:bench_compaction",
    "reduction": "cases:bench_reduction",
    "sort": "sort:bench_sort",
    "analysis": "analysis:bench_analysis",
    "topology": "topology:bench_topology",
    "trace-import": "trace_import:bench_trace_import",
    "trace-viewer": "trace_viewer:bench_trace_viewer",
    "culling": "culling:bench_culling",
    "hash": "hash:bench_hash",
}
#: What ``all`` runs: the primitives' benchmarks of the core layers.
CORE_BENCHMARKS = ("scan", "compaction", "reduction", "sort", "analysis")
#: Sizes of the core benchmarks when ``--sizes`` is not given.
CORE_SIZES = "1M,16M,64M"


def load_benchmark(name: str):
    """The function of benchmark ``name`` (imports its module)."""
    import importlib

    module, function = BENCHMARK_MODULES[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def main(argv=None, *, command: str | None = None) -> int:
    """Run the named benchmark(s); 0 when every output matched numpy.

    ``argv`` defaults to the process's arguments; ``command`` (default: the
    process's command line, or ``python -m gpuviz.bench argv``) is recorded
    in the header.
    """
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=[*BENCHMARK_MODULES, "all"])
    parser.add_argument("--sizes", default=None,
                        help=f"comma-separated row counts (K/M suffixes; core default {CORE_SIZES})")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per measurement (median)")
    parser.add_argument("--variants", action="store_true", help="also time tuning variants")
    parser.add_argument("--json", metavar="PATH", help="write the header and every table's rows to PATH")
    args = parser.parse_args(argv)
    names = list(CORE_BENCHMARKS) if args.name == "all" else [args.name]
    from .harness import parse_sizes

    def job(name):
        def run(device, peers, report):
            sizes = parse_sizes(args.sizes) if args.sizes else (parse_sizes(CORE_SIZES) if name in CORE_BENCHMARKS
                                                                 else None)
            load_benchmark(name)(device, sizes, args.runs, variants=args.variants, peers=peers, report=report)
        return name, run
    return run_benchmarks([job(name) for name in names], prog="gpuviz.bench", argv=argv, command=command,
                          json_path=args.json)


def run_benchmarks(jobs, *, prog, argv=None, command=None, json_path=None, warm_seconds=0.5) -> int:
    """The run every benchmark command shares: a device, the run header,
    ``warm_seconds`` of GPU work, then each ``(name, run(device, peers,
    report))`` job (one whose output did not match numpy prints nothing and
    is recorded as a failure), the total time and ``json_path``. Returns 0
    when every job matched. Prints; does not parse arguments."""
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

    import gpuviz

    from .harness import Mismatch, Peers, print_run_header, warm_up
    from .tables import Report

    device = gpuviz.request_device()
    peers = Peers()
    report = Report(print_run_header(device, prog=prog, argv=argv, peers=peers, command=command))
    started = time.perf_counter()
    warm_up(device, warm_seconds)
    for name, run in jobs:
        try:
            run(device, peers, report)
        except Mismatch as exc:
            print(f"{name}: NOT PRINTED, output did not match numpy: {exc}")
            report.failures.append({"benchmark": name, "error": str(exc)})
    report.header["total_s"] = round(time.perf_counter() - started, 1)
    print(f"\n(total {report.header['total_s']:.1f} s)")
    if json_path:
        report.write(json_path)
        print(f"results: {json_path}")
    return 1 if report.failures else 0
