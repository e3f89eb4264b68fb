"""``python -m gpuviz.bench topology``: the topology and visibility
primitives of issue 12, each table printed only after its output matched
numpy.

Default sizes are the issue's (hierarchy layout of 1M children, ancestor
projection over 25M nodes; the traversal and visibility benchmarks choose
their own); ``--sizes`` gives every case the same sizes (``--sizes 64K``
for a quick run on a software adapter). The layout and projection cases
live in :mod:`gpuviz.bench.topology_layout`; the traversal and visibility
cases in ``topology_traversal`` and ``topology_visibility`` are run when
they are importable (a missing one is reported, not an error).
"""

from __future__ import annotations

import importlib

from .harness import Mismatch, Peers
from .tables import Report

__all__ = ["bench_topology", "PARTS"]

#: (label, module inside gpuviz.bench, function); every function takes the
#: harness's case signature ``(device, sizes, runs, *, variants, peers, report)``.
PARTS = (("layout", "topology_layout", "bench_layout"),
         ("projection", "topology_layout", "bench_projection"),
         ("traversal", "topology_traversal", "bench_traversal"),
         ("visibility", "topology_visibility", "bench_visibility"))


def bench_topology(device, sizes, runs, *, variants=False, peers=None, report=None, parts=None):
    """Run every part (or those named in ``parts``); a part whose output
    does not match its oracle is recorded in ``report.failures`` and the
    others still run. Never raises for a missing optional module."""
    peers = peers or Peers()
    report = report or Report()
    for label, module, function in PARTS:
        if parts is not None and label not in parts:
            continue
        try:
            case = getattr(importlib.import_module(f"{__package__}.{module}"), function)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise
            print(f"\ntopology {label}: not run ({__package__}.{module} is not in this tree)")
            continue
        try:
            case(device, sizes, runs, variants=variants, peers=peers, report=report)
        except Mismatch as exc:
            print(f"topology {label}: NOT PRINTED, output did not match numpy: {exc}")
            report.failures.append({"benchmark": f"topology {label}", "error": str(exc)})
    return report
