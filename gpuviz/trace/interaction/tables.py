"""Host-side (numpy) tables of a GPUTraceFrame, built once at construction
or per state on the CPU: thread display order and row layout, packed link
CSRs, per-tile time extents, and small readback helpers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuviz.algorithms.dispatch import ceil_div
from gpuviz.trace.interaction.nodes import ROWS_PER_GROUP

__all__ = ["TraceLayout", "display_order", "row_layout", "link_csrs", "row_tiles", "scene_thread_lanes",
           "edges_by_link"]


@dataclass(frozen=True)
class TraceLayout:
    """Row layout of one state, on the CPU (the GPU computes the same).

    Attributes
    ----------
    thread_row, thread_height : numpy uint32, per thread row
        First layout row and rows of each thread (height: its lanes when it
        and its process are expanded, 1 when it is collapsed, 0 in a
        collapsed process or without spans).
    process_row, process_height : numpy uint32, per process row
        First row and rows of each process (a collapsed process has one
        summary row at ``process_row``; its height is 1).
    total_rows : int
    thread_order : numpy uint32
        Thread rows in display order (by process row, then
        ``threads.sort_index``, then thread row).
    """

    thread_row: np.ndarray
    thread_height: np.ndarray
    process_row: np.ndarray
    process_height: np.ndarray
    total_rows: int
    thread_order: np.ndarray



def display_order(trace, process_count) -> tuple:
    """``(order, thread_process, slot, process_first_slot)``: threads in display
    order (by process row, ``threads.sort_index``, thread row), each thread's
    process, each thread's display slot, and each process's first slot."""
    threads = trace.threads
    process = threads.column("process").to_numpy().astype(np.int64)
    sort_index = threads.column("sort_index").to_numpy()
    order = np.lexsort((np.arange(len(process)), sort_index, process)).astype(np.uint32)
    slot = np.empty(len(order), np.uint32)
    slot[order] = np.arange(len(order), dtype=np.uint32)
    first = np.full(max(process_count, 1), len(order), np.int64)
    np.minimum.at(first, process, slot.astype(np.int64))
    return order, process.astype(np.uint32), slot, first[:process_count]


def row_layout(state, *, order, thread_process, thread_lanes, thread_slot, process_first_slot,
               process_count) -> TraceLayout:
    """The row layout of ``state`` (what the frame's GPU layout computes)."""
    proc = thread_process[order]
    pexp = np.asarray(state.process_expanded, bool)
    texp = np.asarray(state.thread_expanded, bool)[order]
    first_of_process = np.ones(len(order), bool)
    first_of_process[1:] = proc[1:] != proc[:-1]
    heights = np.where(pexp[proc] if len(order) else np.zeros(0, bool),
                       np.where(texp, thread_lanes[order], 1), first_of_process.astype(np.uint32))
    offsets = np.zeros(len(order) + 1, np.int64)
    offsets[1:] = np.cumsum(heights)
    thread_row = np.empty(len(order), np.uint32)
    collapsed = ~pexp[thread_process] if len(order) else np.zeros(0, bool)
    own = offsets[thread_slot]
    summary = offsets[process_first_slot[thread_process]] if len(order) else own
    thread_row[:] = np.where(collapsed, summary, own)
    thread_height = np.empty(len(order), np.uint32)
    thread_height[order] = heights
    process_row = offsets[process_first_slot].astype(np.uint32)
    process_height = np.zeros(process_count, np.uint32)
    np.add.at(process_height, thread_process, thread_height)
    return TraceLayout(thread_row, thread_height, process_row, process_height, int(offsets[-1]), order.copy())


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


def scene_thread_lanes(scene, threads) -> np.ndarray:
    """Lanes per thread (the scene's table, read back once at construction)."""
    if threads == 0:
        return np.zeros(0, np.uint32)
    data = scene.thread_lanes
    raw = scene.device.queue.read_buffer(data.buffer, data.byte_offset, 4 * threads)
    return np.frombuffer(raw, np.uint32).copy()
