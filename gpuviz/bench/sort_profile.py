"""Sort profile: ``python -m gpuviz.bench.sort_profile [--sizes 64M,16M] [--json PATH]``.

Splits the radix sort's time between its parts on one device, in one run:

* checked variants: real sorts (output compared with numpy's stable argsort
  before a time prints) under different ``SortTuning`` values;
* timing probes: the scatter pass with parts of its work removed by
  ``bench/shaders/sort_radix_probes.wgsl``, a template extending
  ``sort_radix.wgsl`` through its blocks (:func:`probe_tuning`: no
  look-back, offsets guessed from the digit histogram; no ranking; coalesced
  writes). Their output is wrong by design and never checked: they bound
  what each part costs.

Every line gives the whole encoding (µs, median of timestamped encodings),
its ratio to the same-run copy kernel over keys + values bytes, and the
mean scatter pass (µs) from a per-node timing. The same-run anchor
``torch.sort(stable=True)`` is printed when torch has a GPU.
"""

from __future__ import annotations

import argparse
import os
from typing import NamedTuple

import numpy as np


#: The probes of bench/shaders/sort_radix_probes.wgsl (template value
#: ``probes``), each removing a part of the scatter pass: "no-lookback"
#: (offsets guessed from the digit histogram, writes clamped), "no-ranking"
#: (the subgroup ranking replaced by a fixed split), "coalesced-writes" or
#: "lookup-writes" (each row written to its own row of the output, without
#: or with reading its digit's offset).
PROBES = ("no-lookback", "no-ranking", "coalesced-writes", "lookup-writes")
PROBE_TEMPLATE = "bench/shaders/sort_radix_probes.wgsl"


def probe_tuning(SortTuning, probes: tuple, **fields):
    """A SortTuning (``fields`` as given) whose radix kernels carry
    ``probes`` (a tuple of :data:`PROBES`, one write probe at most)."""
    if (not isinstance(probes, tuple) or not set(probes) <= set(PROBES)
            or {"coalesced-writes", "lookup-writes"} <= set(probes)):
        raise ValueError(f"sort probes must be a tuple of {PROBES} with one write probe at most (got {probes!r})")
    return SortTuning(radix_template=PROBE_TEMPLATE, template_values=(("probes", probes),), **fields)


class Case(NamedTuple):
    """One profiled sort: its tuning, keys only or pairs, and whether its
    output is checked (probes are not)."""

    tuning: object
    values: bool = True
    checked: bool = True


def _cases(SortTuning, *, probes: bool) -> dict:
    """Checked variants (the first is the shipped default), then the timing probes."""
    cases = {
        "default": Case(SortTuning()),
        "checks on": Case(SortTuning(runtime_checks=True)),
        "items 18": Case(SortTuning(items=18)),
        "items 20": Case(SortTuning(items=20)),
        "items 22": Case(SortTuning(items=22)),
        "ballots first": Case(SortTuning(ballots_first=True)),
        # unused workgroup memory tells a workgroup-memory occupancy limit from a register one
        "+1 KB workgroup memory": Case(SortTuning(pad_words=256)),
        "keys only": Case(SortTuning(), values=False),
        "portable": Case(SortTuning(subgroups=False)),
    }
    if probes:
        for label, parts in (("no look-back", ("no-lookback",)),
                             ("no look-back, coalesced", ("no-lookback", "coalesced-writes")),
                             ("... with the offset lookups", ("no-lookback", "lookup-writes")),
                             ("no look-back, no ranking, coalesced", ("no-lookback", "no-ranking",
                                                                      "coalesced-writes"))):
            cases[f"probe: {label}"] = Case(probe_tuning(SortTuning, parts), checked=False)
    return cases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.sort_profile")
    parser.add_argument("--sizes", default="64M,16M")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-probes", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="write the header and the table's rows to PATH")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    import gpuviz
    from gpuviz.algorithms.sort import SortTuning

    from .harness import GPUTimer, Peers, parse_sizes, print_run_header, read, rewarm, warm_up
    from .sort import node_breakdown, pair_copy_kernel, sort_graph, upload_pairs
    from .tables import Column, Report, size_label

    device = gpuviz.request_device()
    timer = GPUTimer(device, args.runs)
    peers = Peers()
    report = Report(print_run_header(device, prog="gpuviz.bench.sort_profile", argv=argv, peers=peers))
    table = report.table("sort_profile", "Radix sort parts: whole encoding, ratio to the copy kernel, mean scatter "
                         "pass", (Column("size", "size", 5, "size"), Column("case", "case", 42),
                                  Column("gpu_s", "µs", 8, "us"), Column("ratio", "×copy", 6, "ratio"),
                                  Column("scatter_s", "scatter µs", 10, "us")),
                         reference="vec4 copy kernel of keys + values")
    warm_up(device, 2.0)
    rng = np.random.default_rng(4)
    for n in parse_sizes(args.sizes):
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        values = np.arange(n, dtype=np.uint32)
        order = np.argsort(keys, kind="stable")
        bufs = upload_pairs(device, keys, values)
        copy_kernel, copy_buffers = pair_copy_kernel(device, n)
        rewarm(device, n)
        ref = timer.median(copy_kernel.record)
        table.add(size=n, case="copy kernel (keys + values)", gpu_s=ref, ratio=None, scatter_s=None)
        if peers.torch is not None:
            tk = peers.torch.from_numpy(keys.view(np.int32)).cuda()
            t = peers.time_torch(lambda: peers.torch.sort(tk, stable=True), args.runs)
            table.add(size=n, case="torch.sort(stable=True)", gpu_s=t, ratio=t / ref, scatter_s=None)
            del tk
        for label, case in _cases(SortTuning, probes=not args.no_probes).items():
            compiled = sort_graph(device, n, bufs, tuning=case.tuning, values=case.values)
            for name in ("out_keys", "out_values"):
                device.queue.write_buffer(bufs[name], 0, np.zeros(n, np.uint32))
            t = timer.median(lambda encoder: compiled.encode(encoder))
            if case.checked:
                ok = (np.array_equal(read(device, bufs["out_keys"], np.uint32, n), keys[order])
                      and (not case.values
                           or np.array_equal(read(device, bufs["out_values"], np.uint32, n), values[order])))
                if not ok:
                    table.note(f"{size_label(n):>5}  {label:<34} MISMATCH (not timed)")
                    report.failures.append({"benchmark": "sort_profile", "error": f"{size_label(n)} {label}"})
                    compiled.destroy()
                    continue
            scatter = [v for k, v in node_breakdown(compiled, device).items() if "scatter" in k]
            table.add(size=n, case=label, gpu_s=t, ratio=t / ref, scatter_s=float(np.mean(scatter)),
                      checked=case.checked)
            compiled.destroy()
        for buffer in list(bufs.values()) + list(copy_buffers):
            buffer.destroy()
    if args.json:
        report.write(args.json)
        print(f"results: {args.json}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
