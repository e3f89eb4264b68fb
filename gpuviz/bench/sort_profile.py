"""Sort profile: ``python -m gpuviz.bench.sort_profile [--sizes 64M,16M]``.

Splits the radix sort's time between its parts on one device, in one run:

* checked variants: real sorts (output compared with numpy's stable argsort
  before a time prints) under different ``SortTuning`` values;
* timing probes: the scatter pass with parts of its work removed by
  ``SortTuning.probes`` (template flags that ``sort_radix.wgsl`` honours: no
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
            cases[f"probe: {label}"] = Case(SortTuning(probes=parts), checked=False)
    return cases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.sort_profile")
    parser.add_argument("--sizes", default="64M,16M")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-probes", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    import gpuviz
    from gpuviz.algorithms.sort import SortTuning

    from .harness import GPUTimer, Peers, parse_sizes, read, rewarm, size_label, warm_up
    from .sort import _node_breakdown, _sort_graph, pair_copy_kernel, upload_pairs

    device = gpuviz.request_device()
    timer = GPUTimer(device, args.runs)
    peers = Peers()
    warm_up(device, 2.0)
    rng = np.random.default_rng(4)
    print(f"{'size':>5}  {'case':<34} {'µs':>8} {'×copy':>6} {'scatter µs':>10}", flush=True)
    for n in parse_sizes(args.sizes):
        keys = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        values = np.arange(n, dtype=np.uint32)
        order = np.argsort(keys, kind="stable")
        bufs = upload_pairs(device, keys, values)
        copy_kernel, copy_buffers = pair_copy_kernel(device, n)
        rewarm(device, n)
        ref = timer.median(copy_kernel.record)
        print(f"{size_label(n):>5}  {'copy kernel (keys + values)':<34} {ref * 1e6:8.1f}", flush=True)
        if peers.torch is not None:
            tk = peers.torch.from_numpy(keys.view(np.int32)).cuda()
            t = peers.time_torch(lambda: peers.torch.sort(tk, stable=True), args.runs)
            print(f"{size_label(n):>5}  {'torch.sort(stable=True)':<34} {t * 1e6:8.1f} {t / ref:6.2f}", flush=True)
            del tk
        for label, case in _cases(SortTuning, probes=not args.no_probes).items():
            compiled = _sort_graph(device, n, bufs, tuning=case.tuning, values=case.values)
            for name in ("out_keys", "out_values"):
                device.queue.write_buffer(bufs[name], 0, np.zeros(n, np.uint32))
            t = timer.median(lambda encoder: compiled.encode(encoder))
            if case.checked:
                ok = (np.array_equal(read(device, bufs["out_keys"], np.uint32, n), keys[order])
                      and (not case.values
                           or np.array_equal(read(device, bufs["out_values"], np.uint32, n), values[order])))
                if not ok:
                    print(f"{size_label(n):>5}  {label:<34} MISMATCH (not timed)", flush=True)
                    compiled.destroy()
                    continue
            parts = _node_breakdown(compiled, device)
            scatter = [v for k, v in parts.items() if "scatter" in k]
            print(f"{size_label(n):>5}  {label:<34} {t * 1e6:8.1f} {t / ref:6.2f} "
                  f"{np.mean(scatter) * 1e6:10.1f}", flush=True)
            compiled.destroy()
        for buffer in list(bufs.values()) + list(copy_buffers):
            buffer.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
