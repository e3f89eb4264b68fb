"""GPUBVH: a flat complete-binary bounding-volume hierarchy over 2-D or 3-D
boxes, refit on the GPU every encoding, and GPUBVHQuery: exact point and
bounds queries over it with a bounded, explicit traversal stack
(``shaders/bvh.wgsl``, ``shaders/bvh_query.wgsl``)."""

from __future__ import annotations

import numpy as np
import wgpu

from ..algorithms import GPUCompaction
from ..algorithms.dispatch import WORKGROUP, ceil_div
from ..algorithms.hash_table import WithStatistics, stat_property, stat_rows, stats_view
from ..algorithms.validation import chunks_of, refuse_overlaps, single_row
from ..algorithms.views import storage_alignment, uniform_slot, view_binding
from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .grid import POINT_FORMATS
from .grid_query import query_view
from .outputs import output_view

__all__ = ["GPUBVH", "GPUBVHQuery", "BVH_STATS", "BVH_QUERY_STATS", "NODE_WORDS"]

STORAGE = wgpu.BufferUsage.STORAGE
#: Words per node: min.xyz, pad, max.xyz, pad (float32 bits).
NODE_WORDS = 8
#: BVH statistics: rows in the tree (at most leaf_capacity), rows that did
#: not fit, rows with non-finite or inverted bounds (stored as empty
#: leaves), source rows, leaf capacity, levels, two reserved words.
BVH_STATS = ("count", "overflow", "invalid", "rows", "leaf_capacity", "levels", "reserved0", "reserved1")
#: Query statistics: leaves matched, IDs written, matches that did not fit
#: the output, nodes visited (topology work, apart from matches), subtrees
#: a full traversal stack could not take (non-zero: matches may be
#: missing), the BVH's overflow (rows never in the tree), two reserved words.
BVH_QUERY_STATS = ("match_count", "written_count", "overflow", "visited_count", "stack_overflow", "bvh_overflow",
                   "reserved0", "reserved1")
PARAMS_BYTES = 64  # bvh.wgsl: BVHParams
QPARAMS_BYTES = 48  # bvh_query.wgsl: QParams
MAX_LEAVES = 1 << 26
SMALL_LEAVES = 128  # trees up to this many leaves refit in one workgroup (bvh.wgsl "small")
ROOT_LEVEL = 10  # traversal starts at the subtree roots of this level (or the leaves' level when lower)


def bounds_views(owner: str, id: str, minimum, maximum, graph) -> tuple:
    """``(minimum, maximum)`` views of a BVH's box bounds: float32x2 or
    float32x3 data views of this graph, one packed range each (refused
    otherwise; formats and lengths are the caller's to compare)."""
    formats = tuple(POINT_FORMATS.values())
    kinds = [chunks_of(owner, id, name, v, graph, formats=formats)
             for name, v in (("bounds minimum", minimum), ("bounds maximum", maximum))]
    if any(kind != "data" for kind, _ in kinds):
        raise GraphValidationError(f'{owner} "{id}" bounds must be data views (one packed range each)')
    return kinds[0][1][0], kinds[1][1][0]


def refit_outputs(owner: str, id: str, outputs: dict, graph, lo, hi, *, leaves: int, nodes: int) -> tuple:
    """``(ids, nodes, stats)`` views a BVH refit writes (``outputs``: the
    caller's views by name, or None for transients): a leaf's source row per
    leaf slot, NODE_WORDS words per node and the statistics record, refused
    where one overlaps another or the bounds ``lo``, ``hi``."""
    ids = output_view(owner, id, "ids", outputs["ids"], graph, leaves)
    node_view = output_view(owner, id, "nodes", outputs["nodes"], graph, NODE_WORDS * nodes)
    stats = stats_view(owner, id, graph, outputs["stats"], "stats")
    refuse_overlaps(owner, id, reads={"bounds minimum": lo, "bounds maximum": hi},
                    writes={"ids": ids, "nodes": node_view, "stats": stats}, separate=True)
    return ids, node_view, stats


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class GPUBVH(WithStatistics):
    """A complete binary tree of axis-aligned boxes in source order, refit
    every encoding.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-refit"``, ``"{id}-nodes"``).
    bounds : (GraphDataView, GraphDataView)
        ``(minimum, maximum)`` corners per row: two packed ``float32x2``
        (2-D) or ``float32x3`` (3-D) data views of equal length. Rows with a
        non-finite coordinate or ``minimum > maximum`` are stored as empty
        leaves and counted (``invalid``).
    leaf_capacity : int
        Leaves, a power of two from 1 to 2**26. Row ``s`` is leaf slot ``s``;
        rows past the capacity are not in the tree (``overflow``).
    ids, nodes, stats : GraphDataView, optional
        Caller-owned packed ``uint32`` outputs of at least
        ``leaf_capacity``, ``8 * (2 * leaf_capacity - 1)`` and 8 rows;
        default graph transients ``"{id}-ids"``, ``"{id}-nodes"``,
        ``"{id}-stats"``.

    Attributes
    ----------
    ids : GraphDataView
        Leaf slot -> source row ID (0xFFFFFFFF for a slot without a row).
    nodes : GraphDataView
        ``2 * leaf_capacity - 1`` nodes in level order (node ``i``'s children
        are ``2i + 1`` and ``2i + 2``; leaves are the last ``leaf_capacity``),
        :data:`NODE_WORDS` words each. Empty nodes hold min = +FLT_MAX,
        max = -FLT_MAX.
    stats, count, overflow, invalid : GraphDataView
        :data:`BVH_STATS` and one-row views of it.
    levels : int

    Notes
    -----
    Update policy "refit": every encoding reloads the leaves from the
    current bounds and unions parents level by level, bottom up: one
    dispatch for a tree of at most 128 leaves (one workgroup, storage
    barriers between levels), else one per level; the topology is source order and never changes, so
    moving boxes need no recompile. It is a correctness baseline, not a
    spatial-quality builder: unsorted input gives overlapping parents, which
    the query's ``visited_count`` shows. Does not sort, rebuild topology,
    submit or read back.
    """

    owner = "GPUBVH"

    def __init__(self, *, id: str, bounds, leaf_capacity: int, ids=None, nodes=None, stats=None):
        owner = self.owner
        self.id = check_id(owner, id)
        label = f'{owner} "{id}"'
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
            raise GraphValidationError(f"{label} bounds must be a (minimum, maximum) pair of views (got {bounds!r})")
        if not _is_int(leaf_capacity):
            raise GraphTypeError(f"{label} leaf_capacity must be an int (got {type(leaf_capacity).__name__})")
        if leaf_capacity < 1 or leaf_capacity > MAX_LEAVES or leaf_capacity & (leaf_capacity - 1):
            raise GraphValidationError(f"{label} leaf_capacity must be a power of two from 1 to {MAX_LEAVES} "
                                       f"(got {leaf_capacity})")
        self.minimum, self.maximum = bounds
        self.leaf_capacity = int(leaf_capacity)
        self.levels = self.leaf_capacity.bit_length()
        self.node_count = 2 * self.leaf_capacity - 1
        self._outputs = {"ids": ids, "nodes": nodes, "stats": stats}
        self.ids = self.nodes = self.stats = None
        self.graph = None
        self.rows = self.dims = None
        self.node_ids: list = []

    count = stat_property("count", "Rows in the tree (one row).")
    overflow = stat_property("overflow", "Rows past the leaf capacity (one row).")
    invalid = stat_property("invalid", "Rows stored as empty leaves (one row).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph``, declare the outputs and add the refit
        node; returns its ID."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        lo, hi = bounds_views(owner, id, self.minimum, self.maximum, graph)
        if lo.format != hi.format or lo.length != hi.length:
            raise GraphValidationError(f'{owner} "{id}" bounds minimum ({lo.length} {lo.format.name}) and maximum '
                                       f"({hi.length} {hi.format.name}) differ")
        self.dims = 2 if lo.format.name == "float32x2" else 3
        self.rows = lo.length
        limit = int(graph.device.limits["max-storage-buffer-binding-size"])
        if 4 * NODE_WORDS * self.node_count > limit:
            raise GraphValidationError(f'{owner} "{id}" nodes need {4 * NODE_WORDS * self.node_count} bytes, over '
                                       f"the device's max-storage-buffer-binding-size of {limit} bytes")
        ids, nodes, stats = refit_outputs(owner, id, self._outputs, graph, lo, hi, leaves=self.leaf_capacity,
                                          nodes=self.node_count)
        self.ids, self.nodes, self.stats, self.graph = ids, nodes, stats, graph
        self._stat_views = stat_rows(graph, stats, BVH_STATS)
        resources = [(ids, "storage-write"), (nodes, "storage-read-write"), (stats, "storage-read-write")]
        resources += [(v, "storage-read") for v in (lo, hi)]  # bound (and unread) also when empty
        node = graph.add_compute_node(id=f"{id}-refit", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, lo, hi))
        self.node_ids = [node]
        return self.node_ids

    def _compile(self, ctx, lo, hi):
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/bvh.wgsl", dims=self.dims)
        fused = self.leaf_capacity <= SMALL_LEAVES
        kernels = {e: ComputeKernel(ctx.device, code=code, entry_point=e, label=f"{ctx.node_id}-{e}")
                   for e in (("small",) if fused else ("clear", "leaves", "level"))}
        b = {"nodes": view_binding(3, self.nodes, alignment=align, vec4=False),
             "ids": view_binding(4, self.ids, alignment=align, vec4=False),
             "stats": view_binding(5, self.stats, alignment=align, vec4=False)}
        b["min"] = view_binding(1, lo, alignment=align, vec4=False)
        b["max"] = view_binding(2, hi, alignment=align, vec4=False)
        levels = self.levels - 1  # parent levels, bottom up: level levels-1 .. 0
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((levels + 1, slot // 4), np.uint32)
        params[:, :10] = (self.rows, self.leaf_capacity, b["min"].offset, b["max"].offset, b["nodes"].offset,
                          b["ids"].offset, b["stats"].offset, 0, 0, self.levels)
        for row, level in enumerate(range(levels - 1, -1, -1), 1):
            params[row, 7:9] = ((1 << level) - 1, 1 << level)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        names = ("min", "max", "nodes", "ids", "stats")
        leaf_groups = ceil_div(self.leaf_capacity, WORKGROUP)

        def encode(compute_pass, frame):
            r = {b[n].storage.binding: b[n].storage.resolve(frame) for n in names}
            p0 = (uniform, 0, PARAMS_BYTES)
            if fused:
                kernels["small"].dispatch(compute_pass, frame, workgroups=1,
                                          bindings={0: p0, **{k: r[k] for k in (1, 2, 3, 4, 5)}})
                return
            kernels["clear"].dispatch(compute_pass, frame, bindings={0: p0, 5: r[5]}, workgroups=1)
            leaf = {0: p0, 1: r[1], 2: r[2], 3: r[3], 4: r[4], 5: r[5]}
            kernels["leaves"].dispatch(compute_pass, frame, bindings=leaf, workgroups=leaf_groups)
            for row in range(1, levels + 1):
                count = int(params[row, 8])
                kernels["level"].dispatch(compute_pass, frame, workgroups=ceil_div(count, WORKGROUP),
                                          bindings={0: (uniform, row * slot, PARAMS_BYTES), 3: r[3]})
        return encode


class GPUBVHQuery(WithStatistics):
    """Leaves of a GPUBVH whose box contains a point or intersects bounds.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-traverse"``...).
    bvh : GPUBVH
        Added to the same graph before this query.
    query : GraphDataView
        A query record (:func:`~gpuviz.spatial.write_query`): a point keeps
        leaves whose box contains it, bounds keep leaves whose box
        intersects them (both inclusive, exact). A radius or lasso keeps the
        leaves intersecting its region box (conservative); an invalid
        record keeps nothing.
    output : GraphDataView
        Packed ``uint32``: the matching leaves' source IDs in leaf-slot
        (source) order; its length is the output capacity.
    mask : GraphDataView, optional
        Packed ``uint32``, at least the BVH's rows: 1 at every match's source
        ID (also matches past the output capacity), else 0.
    stack_capacity : int
        Traversal stack entries per invocation (default 32, enough for any
        tree; smaller values exist to test the overflow report).
    stats : GraphDataView, optional
        Eight packed uint32 rows (:data:`BVH_QUERY_STATS`); default a graph
        transient ``"{id}-stats"``.

    Notes
    -----
    One invocation walks each subtree rooted at one level (level 10, or the
    leaves' level when the tree is shallower) depth first; ``visited_count``
    counts the nodes it popped, apart from the matches. A subtree a full
    stack cannot take is counted in ``stack_overflow``, so an incomplete
    traversal never looks like an empty result. Matches are compacted in
    slot order (GPUCompaction), so the output is deterministic. Does not
    submit or read back, and does not modify the BVH.
    """

    owner = "GPUBVHQuery"

    def __init__(self, *, id: str, bvh, query, output, mask=None, stack_capacity: int = 32, stats=None):
        self.id = check_id(self.owner, id)
        if not _is_int(stack_capacity) or not 2 <= stack_capacity <= 64:
            raise GraphValidationError(f'{self.owner} "{id}" stack_capacity must be an int from 2 to 64 '
                                       f"(got {stack_capacity!r})")
        self.bvh, self.query, self.output, self.mask = bvh, query, output, mask
        self.stack_capacity = int(stack_capacity)
        self._stats_arg = stats
        self.stats = None
        self.graph = None
        self.node_ids: list = []

    match_count = stat_property("match_count", "Leaves matched (one row).")
    written_count = stat_property("written_count", "IDs written (one row).")
    overflow = stat_property("overflow", "Matches past the output capacity (one row).")
    visited_count = stat_property("visited_count", "Nodes visited (one row).")
    stack_overflow = stat_property("stack_overflow", "Subtrees a full stack could not take (one row).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the query nodes; returns their IDs."""
        owner, id, bvh = self.owner, self.id, self.bvh
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        if not isinstance(bvh, GPUBVH):
            raise GraphValidationError(f'{owner} "{id}" bvh must be a GPUBVH (got {type(bvh).__name__})')
        if bvh.graph is not graph:
            raise GraphStateError(f'{owner} "{id}" bvh "{bvh.id}" has not been added to this graph '
                                  "(call its add_to_graph first)")
        query = query_view(owner, id, self.query, graph)
        out = single_row(owner, id, "output", self.output, graph)
        mask = None
        if self.mask is not None:
            rows = max(bvh.rows, 1)
            mask = single_row(owner, id, "mask", self.mask, graph, rows=rows)
            mask = graph.create_data_view(mask.handle, format="uint32", length=rows, byte_offset=mask.byte_offset)
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        refuse_overlaps(owner, id, reads={"query": query, "bvh nodes": bvh.nodes, "bvh ids": bvh.ids,
                                          "bvh stats": bvh.stats},
                        writes={"output": out, "mask": mask, "stats": stats}, separate=True)
        self.stats, self.graph = stats, graph
        self._stat_views = stat_rows(graph, stats, BVH_QUERY_STATS)
        leaves = bvh.leaf_capacity

        def transient(name):
            handle = graph.create_transient_buffer(id=f"{id}-{name}", byte_length=4 * leaves, usage=STORAGE)
            return graph.create_data_view(handle, format="uint32", length=leaves)

        hits, compacted = transient("hits"), transient("compacted")
        resources = [(query, "storage-read"), (bvh.nodes, "storage-read"), (hits, "storage-read-write"),
                     (stats, "storage-read-write")]
        if mask is not None:
            resources.append((mask, "storage-write"))
        ids = [graph.add_compute_node(id=f"{id}-traverse", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, "traverse", query, out, mask, hits,
                                                                        compacted))]
        ids += GPUCompaction(id=f"{id}-compact", input=bvh.ids, flags=hits, output=compacted,
                             count=self._stat_views["match_count"]).add_to_graph(graph)
        resources = [(compacted, "storage-read"), (out, "storage-write"), (stats, "storage-read-write"),
                     (bvh.stats, "storage-read"), (hits, "storage-read"), (bvh.ids, "storage-read")]
        if mask is not None:
            resources.append((mask, "storage-read-write"))
        ids.append(graph.add_compute_node(id=f"{id}-finalize", resources=resources,
                                          compile=lambda ctx: self._compile(ctx, "finalize", query, out, mask, hits,
                                                                            compacted)))
        self.node_ids = ids
        return ids

    def _compile(self, ctx, phase, query, out, mask, hits, compacted):
        bvh = self.bvh
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/bvh_query.wgsl", dims=bvh.dims, mask=mask is not None,
                    stack=self.stack_capacity)
        entries = ("qclear", "traverse") if phase == "traverse" else ("finalize",)
        kernels = {e: ComputeKernel(ctx.device, code=code, entry_point=e, label=f"{ctx.node_id}-{e}")
                   for e in entries}
        b = {name: view_binding(binding, view, alignment=align, vec4=False)
             for name, binding, view in (("nodes", 1, bvh.nodes), ("ids", 2, bvh.ids), ("stats", 3, self.stats),
                                         ("query", 4, query), ("out", 7, out), ("bstats", 9, bvh.stats))}
        if mask is not None:
            b["mask"] = view_binding(8, mask, alignment=align, vec4=False)
        root_level = min(ROOT_LEVEL, bvh.levels - 1)
        slot = uniform_slot(ctx.device, QPARAMS_BYTES)
        params = np.zeros(slot // 4, np.uint32)
        params[:12] = (bvh.leaf_capacity, b["nodes"].offset, b["ids"].offset, b["stats"].offset,
                       (1 << root_level) - 1, 1 << root_level, b["query"].offset, b["out"].offset, out.length,
                       b["mask"].offset if mask is not None else 0, mask.length if mask is not None else 0,
                       b["bstats"].offset)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        p = (uniform, 0, QPARAMS_BYTES)
        mask_names = ("mask",) if mask is not None else ()
        clear_rows = max(bvh.leaf_capacity, mask.length if mask is not None else 0, 8)

        def bind(frame, *names):
            return {b[n].storage.binding: b[n].storage.resolve(frame) for n in names}

        if phase == "traverse":
            def encode(compute_pass, frame):
                kernels["qclear"].dispatch(compute_pass, frame, workgroups=ceil_div(clear_rows, WORKGROUP),
                                           bindings={0: p, 5: hits, **bind(frame, "stats", *mask_names)})
                kernels["traverse"].dispatch(compute_pass, frame, workgroups=ceil_div(1 << root_level, WORKGROUP),
                                             bindings={0: p, 5: hits, **bind(frame, "nodes", "stats", "query")})
            return encode

        groups = ceil_div(max(bvh.leaf_capacity, 1), WORKGROUP)

        def encode(compute_pass, frame):
            bindings = {0: p, 6: compacted, **bind(frame, "stats", "out", "bstats")}
            if mask is not None:
                bindings.update({5: hits, **bind(frame, "ids", "mask")})
            kernels["finalize"].dispatch(compute_pass, frame, workgroups=groups, bindings=bindings)
        return encode
