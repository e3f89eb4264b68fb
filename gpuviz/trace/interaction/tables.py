"""The numpy tables a :class:`~gpuviz.trace.interaction.frame.GPUTraceInteraction`
uploads once at construction (packed link CSRs, per-tile time extents) and
the order its readback helper returns edges in. The row layout and thread
order come from the trace's :class:`~gpuviz.trace.index.TraceIndex`."""

from __future__ import annotations

import numpy as np

from ...algorithms.dispatch import ceil_div
from .nodes import ROWS_PER_GROUP

__all__ = ["link_csrs", "row_tiles", "edges_by_link"]


def link_csrs(src, dst, n) -> dict:
    """Packed CSRs of links (scene rows) both ways: ``{"links-offsets",
    "links-neighbors", "links-reverse-offsets", "links-reverse-neighbors"}``."""
    out = {}
    for name, a, b in (("links", src, dst), ("links-reverse", dst, src)):
        order = np.argsort(a, kind="stable")
        offsets = np.zeros(n + 1, np.uint32)
        offsets[1:] = np.cumsum(np.bincount(a, minlength=n)) if n else []
        out[f"{name}-offsets"] = offsets
        out[f"{name}-neighbors"] = b[order].astype(np.uint32)
    return out


def row_tiles(trace, scene) -> np.ndarray:
    """Per 2048-row tile of scene rows (the predicate's workgroup): earliest
    start, latest end (start + max(duration, 1)), both ns since the scene's
    origin as (lo, hi) words, and its process (0xFFFFFFFF when mixed): the
    predicate marks a tile outside the window hidden without reading its records."""
    n = scene.span_count
    tiles = np.zeros((ceil_div(max(n, 1), ROWS_PER_GROUP), 8), np.uint32)
    if n == 0:
        return tiles
    rows = None if scene.rows_are_ids else scene.span_ids
    spans = trace.spans

    def column(name):
        values = spans.column(name).to_numpy()
        return values if rows is None else values[rows]
    start = column("start_ns") - scene.time_origin_ns
    first = np.arange(0, n, ROWS_PER_GROUP)
    low = np.minimum.reduceat(start, first)
    high = np.maximum.reduceat(start + np.maximum(column("duration_ns"), 1), first)
    process = column("process").astype(np.uint32)
    uniform = np.minimum.reduceat(process, first) == np.maximum.reduceat(process, first)
    tiles[:, 0:2] = low.astype(np.int64).view(np.uint32).reshape(-1, 2)
    tiles[:, 2:4] = high.astype(np.int64).view(np.uint32).reshape(-1, 2)
    tiles[:, 4] = np.where(uniform, process[first], 0xFFFFFFFF)
    return tiles


def edges_by_link(edges) -> np.ndarray:
    """Edge records sorted by link ID."""
    return edges[np.argsort(edges[:, 2], kind="stable")]
