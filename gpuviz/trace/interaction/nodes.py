"""The compute nodes of a :class:`~gpuviz.trace.interaction.frame.GPUTraceInteraction`
(one function per node or library primitive), and the record layouts they share.

Each ``add_*`` function takes the frame (its capacities, host tables and
buffers), the graph, and the frame's views in that graph; it adds its
nodes and returns their IDs. See the frame module's docstring for the order.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...algorithms.ancestor_projection import GPUAncestorProjection
from ...algorithms.dispatch import ceil_div
from ...algorithms.graph_traversal import GPUGraphTraversal
from ...graph import ComputeKernel
from ...graph.shaders import wgsl
from ..scene import RECORD_BYTES

# The predicate and merge kernels run without wgpu's bounds checks and loop
# bounding: their loops have constant or width bounds, and every index is in
# range by construction (records, masks and focus are bound per piece and
# read below its row count; cells are row < row_count <= row capacity times
# column < width <= width capacity, both checked by GPUTraceInteraction.write;
# process, thread, name and category IDs come from the scene's own tables).
# GPUVIZ_RUNTIME_CHECKS=1 restores both.
_TRUSTED = {"bounds_checks": False, "loop_bounding": False}

__all__ = ["SPANS", "MERGED", "DENSITY", "EDGES", "STATS_WORDS", "VIEW_BYTES", "PIECE_BYTES", "ROWS_PER_GROUP",
           "add_clear", "add_rows", "add_focus", "add_edges", "add_predicate", "add_minimap", "add_merge", "pieces",
           "record_pieces", "add_region_keep"]

#: Records of :attr:`GPUTraceInteraction.draw_commands` (``"draw"`` type, 6 vertices each).
SPANS, MERGED, DENSITY, EDGES = 0, 1, 2, 3
STATS_WORDS = 16
VIEW_BYTES = 64  # trace_view.wgsl: TraceView
PIECE_BYTES = 16  # trace_predicate.wgsl: Piece
ROWS_PER_GROUP = 2048  # trace_predicate.wgsl: 256 lanes x ROWS_PER_LANE


def add_clear(frame, graph, v, cells) -> str:
    words = ceil_div(2 * cells, 4) * 4
    dcb = frame.draw_commands

    def compile_clear(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_clear.wgsl"), constants={
            "CELLS": words, "STATS_WORDS": STATS_WORDS,
            "MERGED_WORD": dcb.instance_count_byte_offset(MERGED) // 4,
            "DENSITY_WORD": dcb.instance_count_byte_offset(DENSITY) // 4,
            "EDGES_WORD": dcb.instance_count_byte_offset(EDGES) // 4}, label=ctx.node_id)
        groups = ceil_div(max(words // 4, STATS_WORDS), 256)
        bindings = {0: v["cells"], 2: v["stats"], 3: v["commands"]}

        def encode(compute_pass, graph_frame):
            kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=groups)
        return encode

    return graph.add_compute_node(id=f"{frame.id}-clear", compile=compile_clear, resources=[
        (v["cells"], "storage-write"), (v["stats"], "storage-write"), (v["commands"], "storage-write")])

def add_rows(frame, graph, v) -> str:
    t = frame.thread_count

    def compile_rows(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_rows.wgsl"),
                               constants={"THREADS": t}, label=ctx.node_id)
        bindings = {0: v["thread-info"], 1: v["process-states"], 2: v["offsets"], 3: v["thread-rows"]}

        def encode(compute_pass, graph_frame):
            kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=ceil_div(t, 256))
        return encode

    return graph.add_compute_node(id=f"{frame.id}-rows", compile=compile_rows, resources=[
        (v["thread-info"], "storage-read"), (v["process-states"], "storage-read"),
        (v["offsets"], "storage-read"), (v["thread-rows"], "storage-write")])

def add_focus(frame, graph, v) -> list:
    n = frame.span_count
    return GPUGraphTraversal(
        id=f"{frame.id}-focus", offsets=frame.graph_view(graph, "links-offsets", length=n + 1),
        neighbors=frame.graph_view(graph, "links-neighbors", length=max(frame.link_count, 1)),
        reverse_offsets=frame.graph_view(graph, "links-reverse-offsets", length=n + 1),
        reverse_neighbors=frame.graph_view(graph, "links-reverse-neighbors", length=max(frame.link_count, 1)),
        seeds=frame.graph_view(graph, "focus-seeds", length=frame.max_seeds), seed_count=v["seed-count"],
        direction="both", max_depth=frame.max_depth, active_depth=v["active-depth"],
        output=frame.graph_view(graph, "focus-mask", length=n)).add_to_graph(graph)

def add_edges(frame, graph, v, scene_views) -> list:
    """Closest shown ancestors (GPUAncestorProjection over the scene's
    parents) and the kept links (trace_edges.wgsl)."""
    n = frame.span_count
    # The scene's parent chunks lie back to back in one buffer (global rows):
    # one packed view lets the projection read them in place (no link pass).
    parents = scene_views["parents"].views[0]
    parents = graph.create_data_view(parents.handle, format="uint32", length=n, byte_offset=0)
    projection = GPUAncestorProjection(id=f"{frame.id}-anchors", parents=parents,
                                       visibility=frame.graph_view(graph, "shown", length=n),
                                       output=frame.graph_view(graph, "anchors", length=n),
                                       max_depth=frame.edge_depth)
    # One walk pass of up to edge_depth + 1 steps instead of 4 steps + log2 jump passes over 8-byte
    # state tables: trace parent chains are short (a node stops at its first shown ancestor or its
    # root) and close in rows (cached), so one pass reading in place beats five full passes.
    if frame.edge_depth < 64:
        projection.walk_steps = frame.edge_depth + 1
    nodes = projection.add_to_graph(graph)
    if not frame.link_count:
        return nodes
    links = scene_views["links"]
    dcb = frame.draw_commands

    def compile_edges(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_edges.wgsl"), constants={
            "LINKS": frame.link_count, "EDGES_WORD": dcb.instance_count_byte_offset(EDGES) // 4},
            label=ctx.node_id)
        bindings = {0: links, 1: v["shown"], 2: v["anchors"], 3: v["edges"], 4: v["commands"]}
        groups = ceil_div(frame.link_count, 256)

        def encode(compute_pass, graph_frame):
            kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=groups)
        return encode

    nodes.append(graph.add_compute_node(id=f"{frame.id}-edges", compile=compile_edges, resources=[
        (links, "storage-read"), (v["shown"], "storage-read"), (v["anchors"], "storage-read"),
        (v["edges"], "storage-write"), (v["commands"], "storage-read-write")]))
    return nodes

def pieces(frame) -> list:
    """``(first row, rows)`` of the frame's pieces (see :func:`record_pieces`)."""
    return [(base, rows) for base, rows, _, _ in record_pieces(frame)]


def record_pieces(frame) -> list:
    """``(first row, rows, record buffer, byte offset in it)`` ranges: each
    inside one of the scene's record chunks (``scene.record_chunks``) and at
    most one storage binding (or ``piece_rows``) long."""
    limit = int(frame.device.limits["max-storage-buffer-binding-size"])
    step = max(ROWS_PER_GROUP, limit // RECORD_BYTES // ROWS_PER_GROUP * ROWS_PER_GROUP)
    step = step if frame.piece_rows is None else min(step, frame.piece_rows)
    out = []
    for first, rows, buffer in frame.scene.record_chunks:
        for base in range(first, first + rows, step):
            out.append((base, min(step, first + rows - base), buffer, (base - first) * RECORD_BYTES))
    return out


def _piece_dispatches(ctx, frame, shared, per_row) -> list:
    """(bindings, workgroups) per piece: ``shared`` bindings, the piece's
    uniform slot at 1, its records at 2 and ``{binding: buffer name}`` per-row
    buffers bound over the piece's rows."""
    ranges = record_pieces(frame)
    align = int(ctx.device.limits["min-uniform-buffer-offset-alignment"])
    slot = -(-PIECE_BYTES // align) * align
    table = np.zeros((max(len(ranges), 1), slot // 4), np.uint32)
    table[:len(ranges), :2] = [(base, rows) for base, rows, _, _ in ranges] or np.zeros((0, 2), np.uint32)
    uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-pieces", data=table.tobytes(),
                                                         usage=wgpu.BufferUsage.UNIFORM))
    b = frame.buffers
    dispatches = []
    for k, (base, rows, records, offset) in enumerate(ranges):
        bindings = dict(shared)
        bindings[1] = (uniform, k * slot, PIECE_BYTES)
        bindings[2] = (records, offset, rows * RECORD_BYTES)
        for binding, name in per_row.items():
            bindings[binding] = (b[name], 4 * base, 4 * rows)
        dispatches.append((bindings, ceil_div(rows, ROWS_PER_GROUP)))
    return dispatches


def _record_resources(scene_views) -> list:
    return [(view, "storage-read") for view in scene_views["records-chunks"]]


def add_predicate(frame, graph, v, scene_views) -> str:
    reads = ("columns", "tiles", "states", "thread-rows", "category-mask", "search-mask", "focus-mask")
    writes = ("draw-mask", "cells", "stats", "shown")

    def compile_predicate(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_predicate.wgsl"), constants={
            "THREAD_STATES": frame.thread_states_word, "ROW_CELLS": frame.width_capacity,
            "CELLS": frame.row_capacity * frame.width_capacity,
            "ROWS_PER_LANE": ROWS_PER_GROUP // 256}, label=ctx.node_id, **_TRUSTED)
        b = frame.buffers
        shared = {0: (b["view"], 0, VIEW_BYTES), 3: b["columns"], 4: b["tiles"], 5: b["states"],
                  6: b["thread-rows"], 7: b["category-mask"], 8: b["search-mask"], 11: b["cells"], 13: b["stats"]}
        dispatches = _piece_dispatches(ctx, frame, shared, {9: "focus-mask", 10: "draw-mask", 14: "shown"})

        def encode(compute_pass, graph_frame):
            for bindings, groups in dispatches:
                kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=groups)
        return encode

    resources = [*_record_resources(scene_views), (v["view"], "uniform")]
    resources += [(v[name], "storage-read") for name in reads]
    resources += [(v[name], "storage-read-write") for name in writes]
    return graph.add_compute_node(id=f"{frame.id}-predicate", compile=compile_predicate, resources=resources)


def add_minimap(frame, graph, v, scene_views) -> str:
    """The whole-trace minimap of the filtered spans (trace_minimap.wgsl):
    its own graph, encoded only when its inputs change."""
    scale = frame.minimap_bins / max(frame.extent_ns, frame.minimap_bins)

    def compile_minimap(ctx):
        code = wgsl("trace/interaction/shaders/trace_minimap.wgsl", bins=frame.minimap_bins)
        constants = {"MINI_SCALE": scale, "ROWS_PER_LANE": ROWS_PER_GROUP // 256}
        kernel = ComputeKernel(ctx.device, code=code, constants=constants, label=ctx.node_id, **_TRUSTED)
        clear = ComputeKernel(ctx.device, code=code, entry_point="clear", constants=constants,
                              label=f"{ctx.node_id}-clear")
        b = frame.buffers
        shared = {0: (b["view"], 0, VIEW_BYTES), 4: b["minimap-bounds"], 7: b["category-mask"],
                  8: b["search-mask"], 12: b["minimap"]}
        dispatches = _piece_dispatches(ctx, frame, shared, {9: "focus-mask"})

        def encode(compute_pass, graph_frame):
            clear.dispatch(compute_pass, graph_frame, bindings={12: b["minimap"]},
                           workgroups=ceil_div(frame.minimap_bins, 256))
            for bindings, groups in dispatches:
                kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=groups)
        return encode

    resources = [*_record_resources(scene_views), (v["view"], "uniform")]
    resources += [(v[name], "storage-read") for name in ("minimap-bounds", "category-mask", "search-mask",
                                                          "focus-mask")]
    resources.append((v["minimap"], "storage-read-write"))
    return graph.add_compute_node(id=f"{frame.id}-minimap", compile=compile_minimap, resources=resources)


def add_merge(frame, graph, v, cells) -> str:
    dcb = frame.draw_commands

    def compile_merge(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_merge.wgsl"), constants={
            "ROW_CELLS": frame.width_capacity, "ROWS": frame.row_capacity, "BINS": frame.minimap_bins,
            "MERGED_WORD": dcb.instance_count_byte_offset(MERGED) // 4,
            "DENSITY_WORD": dcb.instance_count_byte_offset(DENSITY) // 4}, label=ctx.node_id, **_TRUSTED)
        b = frame.buffers
        bindings = {0: (b["view"], 0, VIEW_BYTES), 1: v["cells"], 2: v["merged"], 3: v["density"],
                    4: v["commands"], 5: v["stats"], 6: v["minimap"]}
        chunks = ceil_div(frame.width_capacity, 32)  # trace_merge.wgsl: CHUNK columns per invocation
        groups = ceil_div(max(2 * frame.row_capacity * chunks, ceil_div(frame.minimap_bins, 32)), 256)

        def encode(compute_pass, graph_frame):
            kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=groups)
        return encode

    return graph.add_compute_node(id=f"{frame.id}-merge", compile=compile_merge, resources=[
        (v["view"], "uniform"), (v["cells"], "storage-read"), (v["minimap"], "storage-read"),
        (v["merged"], "storage-write"), (v["density"], "storage-write"), (v["commands"], "storage-read-write"),
        (v["stats"], "storage-read-write")])


def add_region_keep(graph, *, id, params, records, shown, thread_rows, keep, ids, rows) -> str:
    """Add the region predicate (``shaders/trace_region.wgsl``) over ``rows``
    scene rows: ``keep[i] = 1`` for a row shown in the frame (``shown`` code
    1), on a layout row in ``[row0, row1)`` and overlapping ``[t0, t1)``
    (exact 64-bit times; ``params``: the 32-byte ``Region`` uniform);
    ``ids[i]`` its span ID. ``records``, ``shown``, ``keep`` and ``ids``
    are views of the same rows (one storage binding each); ``thread_rows``
    the frame's. Returns the node ID."""
    def compile_keep(ctx):
        kernel = ComputeKernel(ctx.device, code=wgsl("trace/interaction/shaders/trace_region.wgsl"),
                               constants={"ROWS": rows}, label=ctx.node_id)
        bindings = {0: params, 1: records, 2: shown, 3: thread_rows, 4: keep, 5: ids}

        def encode(compute_pass, graph_frame):
            kernel.dispatch(compute_pass, graph_frame, bindings=bindings, workgroups=ceil_div(rows, 256))
        return encode

    return graph.add_compute_node(id=id, compile=compile_keep, resources=[
        (params, "uniform"), (records, "storage-read"), (shown, "storage-read"), (thread_rows, "storage-read"),
        (keep, "storage-write"), (ids, "storage-write")])
