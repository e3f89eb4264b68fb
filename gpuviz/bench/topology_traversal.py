"""Benchmark cases of GPUGraphTraversal (part of ``python -m gpuviz.bench
topology``; ``python -m gpuviz.bench.topology_traversal`` runs it alone).

The issue's case: a 4-hop traversal from 1,000 random seeds over a random
graph of n nodes and n edges (uniform sources and targets), target ≤ 1 ms on
the H200. Each case builds one compiled graph over imported buffers, times
whole encodings by timestamps (the harness's GPUTimer), checks output (and
depths) against a numpy frontier BFS and only then prints its row, next to
the WGSL vec4 copy kernel moving as many bytes as its node-sized writes,
numpy (the oracle, median of 3) and torch on CUDA where importable: the obvious
scatter-based BFS over the edge list (one scatter over every edge per
level), checked against the oracle too.
"""

from __future__ import annotations


import numpy as np

from ..algorithms.graph_traversal import UNREACHED, GPUGraphTraversal
from ..oracles.algorithms import traversal_depths as traversal_oracle
from .harness import (GPUTimer, Mismatch, check_equal, copy_time, cpu_median, import_graph, node_times, read, rewarm,
                      upload)
from .tables import Column, Report

__all__ = ["bench_traversal", "random_csr", "TRAVERSAL_SIZES", "TRAVERSAL_TARGET_S"]

#: Default node counts (edges = nodes): a mid size and the issue's 25M.
TRAVERSAL_SIZES = (1 << 20, 25 << 20)
TRAVERSAL_TARGET_S = 1e-3
SEEDS = 1000
HOPS = 4

COLUMNS = (Column("size", "nodes", 5, "size"), Column("case", "case", 36), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("ref_s", "copy µs", 9, "us"), Column("ratio", "÷copy", 6, "ratio"),
           Column("numpy_s", "numpy µs (×gpuviz)", 20, "us_ratio", of="gpu_s"),
           Column("torch_s", "torch µs (×gpuviz)", 18, "us_ratio", of="gpu_s"),
           Column("verdict", "target", 14))


# -------------------------------------------------------------- inputs
def random_csr(rng, n: int, m: int, *, hub: int = 0) -> tuple:
    """``(offsets, neighbors)`` of m edges with uniform random sources and
    targets over n nodes; ``hub`` > 0 gives node 0 that many extra edges."""
    degrees = np.bincount(rng.integers(0, n, m), minlength=n).astype(np.int64)
    degrees[0] += hub
    offsets = np.zeros(n + 1, np.uint32)
    np.cumsum(degrees, out=offsets[1:], dtype=np.uint32)
    return offsets, rng.integers(0, n, m + hub, dtype=np.uint32)


def reverse_csr(n: int, offsets, neighbors) -> tuple:
    """The reverse CSR (incoming edges) of in-range forward edges."""
    src = np.repeat(np.arange(n, dtype=np.uint32), np.diff(offsets))
    order = np.argsort(neighbors, kind="stable")
    counts = np.bincount(neighbors, minlength=n)
    rev_offsets = np.zeros(n + 1, np.uint32)
    np.cumsum(counts, out=rev_offsets[1:], dtype=np.uint32)
    return rev_offsets, src[order]


# -------------------------------------------------------------- helpers
def _torch_peer(peers, n, offsets, neighbors, seeds, depth, expected, runs):
    """torch, the obvious way: every level marks the targets of every edge
    whose source is in the frontier (a gather over all edges, then a boolean
    scatter); checked against the oracle, then timed."""
    if peers is None or peers.torch is None:
        return None
    torch = peers.torch
    src = torch.from_numpy(np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets).astype(np.int64))).cuda()
    dst = torch.from_numpy(neighbors.astype(np.int64)).cuda()
    start = torch.from_numpy(seeds[seeds < n].astype(np.int64)).cuda()

    def run():
        visited = torch.zeros(n, dtype=torch.bool, device="cuda")
        visited[start] = True
        frontier = visited.clone()
        for _ in range(depth):
            reached = torch.zeros_like(visited)
            reached[dst[frontier[src]]] = True
            frontier = reached & ~visited
            visited |= reached
        return visited

    got = run().cpu().numpy()
    check_equal("traversal torch peer", got.astype(np.uint32), (expected != UNREACHED).astype(np.uint32))
    return peers.time_torch(run, runs)


def _verdict(gpu_s: float) -> str:
    return f"≤{TRAVERSAL_TARGET_S * 1e6:g} µs {'ok' if gpu_s <= TRAVERSAL_TARGET_S else 'MISS'}"


# -------------------------------------------------------------- cases
CASES = {  # label -> (direction, depths, partitions, hub degree, seeds)
    "forward, mask": ("forward", False, 1, 0, SEEDS),
    "forward, mask + depths": ("forward", True, 1, 0, SEEDS),
    "both directions, mask": ("both", False, 1, 0, SEEDS),
}
VARIANTS = {
    "forward, 2 partitions, mask": ("forward", False, 2, 0, SEEDS),
    "forward, 100K-degree hub seed, mask": ("forward", False, 1, 100_000, SEEDS),
    "forward, n/8 seeds (large frontiers), mask": ("forward", False, 1, 0, None),
}


def _time_case(device, timer, n, offsets, neighbors, rev, seeds, spec, runs):
    """``(gpu seconds, node times, output, depths)`` of one compiled case."""
    direction, with_depths, parts = spec[:3]
    arrays = {"o": offsets, "nb": neighbors, "s": seeds, "params": np.array([seeds.size, HOPS, 0, 0], np.uint32)}
    if direction == "both":
        arrays.update(ro=rev[0], rn=rev[1])
    bufs = {k: upload(device, a) for k, a in arrays.items()}
    bufs["out"] = upload(device, np.zeros(n, np.uint32))
    if with_depths:
        bufs["dep"] = upload(device, np.zeros(n, np.uint32))
    rows = {k: (b, "uint32", arrays[k].size if k in arrays else n) for k, b in bufs.items()}
    graph, v = import_graph(device, rows, id="traversal")
    word = lambda k: graph.create_data_view(v["params"].handle, format="uint32", length=1,  # noqa: E731
                                            byte_offset=4 * k)
    views = {"offsets": v["o"], "neighbors": v["nb"], "output": v["out"], "depths": v.get("dep"),
             "reverse_offsets": v.get("ro"), "reverse_neighbors": v.get("rn")}
    if parts > 1:
        views = _partitioned(graph, views, offsets, parts)
    GPUGraphTraversal(id="traversal", seeds=v["s"], seed_count=word(0), active_depth=word(1), direction=direction,
                      max_depth=HOPS, **views).add_to_graph(graph)
    compiled = graph.compile()
    ours = timer.median(lambda encoder: compiled.encode(encoder))
    out = read(device, bufs["out"], np.uint32, n)
    dep = read(device, bufs["dep"], np.uint32, n) if with_depths else None
    nodes = node_times(device, compiled, min(runs, 10))
    compiled.destroy()
    for b in bufs.values():
        b.destroy()
    return ours, nodes, out, dep


def _partitioned(graph, views, offsets, parts):
    """The same CSR as ``parts`` vector chunks over the imported buffers
    (local offsets would need rebasing, so offsets chunks are new uploads)."""
    from ..graph.resources import GraphVectorView

    n = offsets.size - 1
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    out, nb = views["output"], views["neighbors"]
    chunks = {"offsets": [], "neighbors": [], "output": []}
    device = graph.device
    for p, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        local = offsets[a:b + 1] - offsets[a]
        buf = upload(device, local)
        h = graph.import_buffer(id=f"o{p}", byte_length=buf.size, usage=buf.usage, buffer=buf)
        chunks["offsets"].append(graph.create_data_view(h, format="uint32", length=local.size))
        chunks["neighbors"].append(graph.create_data_view(nb.handle, format="uint32", length=int(local[-1]),
                                                          byte_offset=4 * int(offsets[a])))
        chunks["output"].append(graph.create_data_view(out.handle, format="uint32", length=int(b - a),
                                                       byte_offset=4 * int(a)))
    fmt = out.format
    return {k: GraphVectorView(f"{k}-parts", tuple(c), fmt) for k, c in chunks.items()}


def bench_traversal(device, sizes, runs, *, variants=False, peers=None, report=None):
    """GPUGraphTraversal: 4 hops from 1,000 seeds over n nodes and n edges
    (sizes are node counts). The copy reference moves as many bytes as the
    case's node-sized writes (the output mask, plus depths): a copy of n/2
    words (4n bytes read + written) for the mask, of n words with depths;
    the frontier work on top is what the traversal adds."""
    report = report or Report()
    table = report.table("topology-traversal", f"GPUGraphTraversal: {HOPS} hops from {SEEDS} random seeds, edges = "
                         "nodes (writes n mask words, + n depths)", COLUMNS,
                         reference="vec4 copy kernel moving the same node-sized bytes")
    rng = np.random.default_rng(12)
    timer = GPUTimer(device, runs)
    cases = {**CASES, **(VARIANTS if variants else {})}
    for n in sizes or TRAVERSAL_SIZES:
        base = random_csr(rng, n, n)
        seeds = rng.integers(0, n, SEEDS, dtype=np.uint32)
        many = rng.integers(0, n, max(1, n // 8), dtype=np.uint32)
        rev = None
        for label, spec in cases.items():
            offsets, neighbors = random_csr(rng, n, n, hub=spec[3]) if spec[3] else base
            case_seeds = many if spec[4] is None else seeds
            if spec[3]:  # the hub is the first seed
                case_seeds = np.concatenate([[0], seeds[1:]]).astype(np.uint32)
            if spec[0] == "both" and rev is None:
                rev = reverse_csr(n, offsets, neighbors)
            csrs = [(offsets, neighbors)] + ([rev] if spec[0] == "both" else [])
            expected = traversal_oracle(n, csrs, case_seeds, HOPS)
            numpy_s = cpu_median(lambda: traversal_oracle(n, csrs, case_seeds, HOPS))
            rewarm(device, n)
            ref = copy_time(device, timer, n // 2 * (1 + spec[1]))
            ours, nodes, out, dep = _time_case(device, timer, n, offsets, neighbors, rev, case_seeds, spec, runs)
            check_equal(f"traversal {label} output", out, (expected != UNREACHED).astype(np.uint32))
            if dep is not None:
                check_equal(f"traversal {label} depths", dep, expected)
            torch_s = None
            if spec[0] == "forward" and not spec[1] and spec[2] == 1:
                try:  # a failing peer is reported; it does not hide the verified gpuviz row
                    torch_s = _torch_peer(peers, n, offsets, neighbors, case_seeds, HOPS, expected, runs)
                except Exception as exc:  # noqa: BLE001
                    table.note(f"  {label}: torch peer failed ({type(exc).__name__}: {exc})")
            reached = int((expected != UNREACHED).sum())
            table.add(size=n, case=label, gpu_s=ours, ref_s=ref, ratio=ours / ref, numpy_s=numpy_s,
                      torch_s=torch_s, verdict=_verdict(ours), reached=reached, nodes_s=nodes)
            levels = ", ".join(f"{k.removeprefix('traversal-')} {t * 1e6:.1f}" for k, t in nodes.items())
            table.note(f"  {label}: {reached:,} nodes reached; µs per node (own timestamped pass): {levels}",
                       nodes_s=nodes)
    return table


def main(argv=None) -> int:
    """``python -m gpuviz.bench.topology_traversal [--sizes 64K] [--runs N] [--variants]``."""
    import argparse
    import os

    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.topology_traversal")
    parser.add_argument("--sizes", default=None, help="comma-separated node counts (K/M suffixes)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--variants", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

    import gpuviz

    from .harness import Peers, parse_sizes, print_run_header, warm_up

    device = gpuviz.request_device()
    peers = Peers()
    report = Report(print_run_header(device, prog="gpuviz.bench.topology_traversal", argv=argv, peers=peers))
    warm_up(device)
    try:
        bench_traversal(device, parse_sizes(args.sizes) if args.sizes else None, args.runs, variants=args.variants,
                        peers=peers, report=report)
    except Mismatch as exc:
        print(f"traversal: NOT PRINTED, output did not match numpy: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
