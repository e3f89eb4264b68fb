"""Benchmark cases of GPUHierarchyLayout and GPUAncestorProjection (part of
``python -m gpuviz.bench topology``).

Each case builds one compiled graph over imported buffers, times whole
encodings by timestamps (the harness's GPUTimer), checks the output against
its numpy oracle and only then prints its row, next to the WGSL vec4 copy
kernel moving the same bytes (reads + writes) and the peers: numpy (the
oracle itself, timed once) and torch on CUDA where importable, each
written the obvious way and checked against the oracle too.
"""

from __future__ import annotations

import time

import numpy as np

from ..algorithms.ancestor_projection import WALK, GPUAncestorProjection, projection_rounds
from ..algorithms.hierarchy_layout import GPUHierarchyLayout
from ..oracles.algorithms import ancestor_projection as projection_oracle
from ..oracles.algorithms import hierarchy_layout as layout_oracle
from .harness import GPUTimer, Mismatch, check_equal, copy_time, import_graph, node_times, read, rewarm, upload
from .tables import Column, Report

__all__ = ["bench_layout", "bench_projection", "trace_parents",
           "LAYOUT_SIZE", "PROJECTION_SIZE"]

NONE = 0xFFFFFFFF
#: Default sizes (the issue's): 1M children, 25M nodes.
LAYOUT_SIZE = 1 << 20
PROJECTION_SIZE = 25 << 20
LAYOUT_TARGET_S = 50e-6
PROJECTION_TARGET_S = 1e-3
TORCH_FACTOR = 3.0

COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 46), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("ref_s", "copy µs", 9, "us"), Column("ratio", "÷copy", 6, "ratio"),
           Column("numpy_s", "numpy µs (×gpuviz)", 20, "us_ratio", of="gpu_s"),
           Column("torch_s", "torch µs (×gpuviz)", 18, "us_ratio", of="gpu_s"),
           Column("verdict", "target", 24))


# -------------------------------------------------------------- inputs
def trace_parents(rng, n, depth=32):
    """Trace-like parents: nodes in depth-first (start-time) order of nested
    spans. The nesting level is a random walk of +1 / 0 / -1 / -2 / -4 steps
    reflected at 0 (Lindley's recursion, closed form) and cut at ``depth``,
    so it never rises by more than one; a node's parent is the latest earlier
    node one level up (level-0 nodes are roots). Mean level about 8."""
    steps = rng.choice(np.array([1, 0, -1, -2, -4], np.int64), n, p=[0.47, 0.2, 0.2, 0.08, 0.05])
    if n:
        steps[0] = 0
    walk = np.cumsum(steps)
    level = np.minimum(walk - np.minimum.accumulate(np.minimum(walk, 0)), depth)
    parents = np.full(n, NONE, np.uint32)
    index = np.arange(n)
    for d in range(1, depth + 1):
        above, here = index[level == d - 1], index[level == d]
        if here.size:
            parents[here] = above[np.searchsorted(above, here) - 1]
    return parents


# -------------------------------------------------------------- helpers


def _verdict(gpu_s, target_s, torch_s=None):
    text = f"≤{target_s * 1e6:g} µs {'ok' if gpu_s <= target_s else 'MISS'}"
    if torch_s is not None:
        text += f", ≥{TORCH_FACTOR:g}× torch {'ok' if torch_s / gpu_s >= TORCH_FACTOR else 'MISS'}"
    return text


# --------------------------------------------------------------- layout
def _layout_inputs(rng, n, irregular):
    """Processes of 1-64 threads (irregular) or 8 threads each (regular);
    60 % of processes and 70 % of threads expanded, 1-6 lanes a thread."""
    if irregular:
        sizes = rng.integers(1, 65, n // 8 + 2)
        parent_of = np.repeat(np.arange(sizes.size), sizes)[:n].astype(np.uint32)
    else:
        parent_of = (np.arange(n) // 8).astype(np.uint32)
    parent_count = int(parent_of[-1]) + 1 if n else 0
    parents = (rng.random(parent_count) < 0.6).astype(np.uint32)
    children = (rng.random(n) < 0.7).astype(np.uint32)
    lanes = rng.integers(1, 7, n).astype(np.uint32)
    return parent_of, parents, children, lanes


def bench_layout(device, sizes, runs, *, variants=False, peers=None, report=None):
    """GPUHierarchyLayout: regular and irregular hierarchies with per-child
    lane heights; the copy reference moves its 2n-word reads and writes."""
    report = report or Report()
    table = report.table("topology-layout", "GPUHierarchyLayout: heights pass + GPUScan offsets (reads 2n words, "
                         "writes 2n)", COLUMNS, reference="vec4 copy kernel of 2n words")
    rng = np.random.default_rng(12)
    timer = GPUTimer(device, runs)
    cases = [("regular (8 per parent), lanes view", False), ("irregular child_parents, lanes view", True)]
    for n in sizes or [LAYOUT_SIZE]:
        rewarm(device, n)
        ref = copy_time(device, timer, 2 * n)
        for label, irregular in cases:
            parent_of, ps, cs, lanes = _layout_inputs(rng, n, irregular)
            started = time.perf_counter()
            heights, offsets = layout_oracle(ps, cs, parent_of, lanes, 1, 1)
            numpy_s = time.perf_counter() - started
            bufs = {"p": upload(device, ps), "c": upload(device, cs), "e": upload(device, lanes),
                    "r": upload(device, parent_of), "o": upload(device, np.zeros(n, np.uint32)),
                    "h": upload(device, np.zeros(n, np.uint32))}
            graph, v = import_graph(device, {k: (b, "uint32", ps.size if k == "p" else n) for k, b in bufs.items()})
            layout = GPUHierarchyLayout(id="layout", parent_states=v["p"], child_states=v["c"], offsets=v["o"],
                                        heights=v["h"], children_per_parent=None if irregular else 8,
                                        child_parents=v["r"] if irregular else None, expanded_child_height=v["e"])
            layout.add_to_graph(graph)
            compiled = graph.compile()
            ours = timer.median(lambda encoder: compiled.encode(encoder))
            check_equal(f"layout {label} heights", read(device, bufs["h"], np.uint32, n), heights)
            check_equal(f"layout {label} offsets", read(device, bufs["o"], np.uint32, n), offsets)
            nodes = node_times(device, compiled, min(runs, 10))
            compiled.destroy()
            torch_s = _layout_torch(peers, ps, cs, parent_of, lanes, offsets, runs)
            table.add(size=n, case=label, gpu_s=ours, ref_s=ref, ratio=ours / ref, numpy_s=numpy_s, torch_s=torch_s,
                      verdict=_verdict(ours, LAYOUT_TARGET_S), nodes_s=nodes)
            table.note(f"  {label}: " + ", ".join(f"{k} {t * 1e6:.1f} µs" for k, t in nodes.items())
                       + " (each node in its own timestamped pass)", nodes_s=nodes)
            for b in bufs.values():
                b.destroy()
    return table


def _layout_torch(peers, ps, cs, parent_of, lanes, expected, runs):
    """torch: gather parent states, where, cumsum (checked, then timed)."""
    if peers is None or peers.torch is None:
        return None
    torch = peers.torch
    t = {k: torch.from_numpy(v.astype(np.int64)).cuda() for k, v in
         (("p", ps), ("c", cs), ("r", parent_of), ("e", lanes))}

    def run():
        r = t["r"]
        first = torch.ones_like(r, dtype=torch.bool)
        first[1:] = r[1:] != r[:-1]
        open_parent = t["p"][r] != 0
        h = torch.where(open_parent, torch.where(t["c"] != 0, t["e"], 1), first.long())
        return torch.cumsum(h, 0) - h

    if not np.array_equal(run().cpu().numpy().astype(np.uint32), expected):
        raise Mismatch("layout torch peer differs from the oracle")
    return peers.time_torch(run, runs)


# ----------------------------------------------------------- projection
def bench_projection(device, sizes, runs, *, variants=False, peers=None, report=None, max_depth=32):
    """GPUAncestorProjection over trace-like parents (depth <= 32); with
    ``variants`` also random parents (cycles, deep chains cut by max_depth)."""
    report = report or Report()
    table = report.table("topology-projection", f"GPUAncestorProjection, max_depth {max_depth} "
                         f"({1 + projection_rounds(max_depth)} passes; reads 2n words, writes n)", COLUMNS,
                         reference="vec4 copy kernel of 1.5n words")
    rng = np.random.default_rng(13)
    timer = GPUTimer(device, runs)
    cases = [("trace-like, 25% visible", "trace", 0.25), ("trace-like, 2% visible", "trace", 0.02)]
    if variants:
        cases.append(("random parents (cycles), 10% visible", "random", 0.1))
    walks = (WALK, 2, 8, 16) if variants else (WALK,)
    for n in sizes or [PROJECTION_SIZE]:
        rewarm(device, n)
        ref = copy_time(device, timer, 3 * n // 2)
        for label, shape, density in cases:
            if shape == "trace":
                parents = trace_parents(rng, n)
            else:
                parents = rng.integers(0, n, n).astype(np.uint32)
            visibility = (rng.random(n) < density).astype(np.uint32)
            started = time.perf_counter()
            expected = projection_oracle(parents, visibility, max_depth)
            numpy_s = time.perf_counter() - started
            bufs = {"p": upload(device, parents), "v": upload(device, visibility),
                    "o": upload(device, np.zeros(n, np.uint32))}
            torch_s = _projection_torch(peers, parents, visibility, max_depth, expected, runs)
            for walk in walks:
                graph, v = import_graph(device, {k: (b, "uint32", n) for k, b in bufs.items()})
                projection = GPUAncestorProjection(id="project", parents=v["p"], visibility=v["v"], output=v["o"],
                                                   max_depth=max_depth)
                projection.walk_steps = walk
                projection.add_to_graph(graph)
                compiled = graph.compile()
                device.queue.write_buffer(bufs["o"], 0, np.zeros(n, np.uint32))
                rewarm(device, n)
                ours = timer.median(lambda encoder: compiled.encode(encoder))
                check_equal(f"projection {label}", read(device, bufs["o"], np.uint32, n), expected)
                compiled.destroy()
                first = walk == walks[0]
                table.add(size=n, case=label + ("" if first else f", walk {walk} + {projection.rounds} rounds"),
                          gpu_s=ours, ref_s=ref, ratio=ours / ref, numpy_s=numpy_s if first else None,
                          torch_s=torch_s if first else None,
                          verdict=_verdict(ours, PROJECTION_TARGET_S, torch_s if first else None))
            for b in bufs.values():
                b.destroy()
    return table


def _projection_torch(peers, parents, visibility, max_depth, expected, runs):
    """torch, the obvious way: max_depth + 1 rounds of gathering the parent
    of every still-open node (checked, then timed)."""
    if peers is None or peers.torch is None:
        return None
    torch = peers.torch
    n = parents.size
    p = parents.astype(np.int64)
    p[p >= n] = -1
    tp = torch.from_numpy(p).cuda()
    tv = torch.from_numpy(visibility != 0).cuda()

    def run():
        cur = torch.arange(n, device=tp.device)
        out = torch.full((n,), -1, dtype=torch.int64, device=tp.device)
        open_ = torch.ones(n, dtype=torch.bool, device=tp.device)
        for d in range(max_depth + 1):
            hit = open_ & tv[cur]
            out = torch.where(hit, cur, out)
            open_ &= ~hit
            if d == max_depth:
                break
            nxt = tp[cur]
            open_ &= nxt >= 0
            cur = torch.where(open_, nxt, cur)
        return out

    got = run().cpu().numpy()
    if not np.array_equal(np.where(got < 0, NONE, got).astype(np.uint32), expected):
        raise Mismatch("projection torch peer differs from the oracle")
    return peers.time_torch(run, runs)
