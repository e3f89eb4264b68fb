"""GPUSegmentedBVH: many small independent GPUBVH-layout trees packed in
shared buffers, refit on the GPU every encoding, one workgroup per tree and
one dispatch per leaf-capacity class (``shaders/bvh_segmented.wgsl``)."""

from __future__ import annotations

import numpy as np
import wgpu

from ..algorithms.hash_table import WithStatistics, stat_property, stat_rows
from ..algorithms.views import storage_alignment, uniform_slot, view_binding
from ..errors import GraphStateError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .bvh import bounds_views, refit_outputs

__all__ = ["GPUSegmentedBVH", "SEGMENTED_BVH_STATS", "MAX_TREE_ROWS"]

STORAGE = wgpu.BufferUsage.STORAGE
#: The most rows (leaves) one tree holds: a tree refits inside one workgroup.
MAX_TREE_ROWS = 128
#: Statistics: rows in the trees, rows that did not fit (always 0: a tree
#: over MAX_TREE_ROWS is refused at construction), rows stored as empty
#: leaves (non-finite or inverted bounds), source rows, trees, nodes, two
#: reserved words.
SEGMENTED_BVH_STATS = ("count", "overflow", "invalid", "rows", "trees", "nodes", "reserved0", "reserved1")
PARAMS_BYTES = 48  # bvh_segmented.wgsl: SegParams


class GPUSegmentedBVH(WithStatistics):
    """Independent complete binary trees of up to 128 boxes each, packed in
    shared node and leaf buffers, refit every encoding.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-refit"``...).
    bounds : (GraphDataView, GraphDataView)
        ``(minimum, maximum)`` corners of every row of every tree, trees one
        after another: two packed ``float32x2`` or ``float32x3`` data views
        of ``sum(tree_rows)`` rows. Non-finite or inverted boxes become empty
        leaves (``invalid``).
    tree_rows : sequence of int
        Rows of each tree, 0 to 128. Tree ``t`` takes the next
        ``tree_rows[t]`` rows; its leaf capacity is the next power of two
        (at least 1). Structural: new tree sizes are a new graph.
    ids, nodes, stats : GraphDataView, optional
        Caller-owned packed ``uint32`` outputs of at least ``leaf_count``,
        ``8 * node_count`` and 8 rows; default graph transients.

    Attributes
    ----------
    leaf_capacities, node_offsets, leaf_offsets : numpy.ndarray
        Per tree: its leaf capacity, its first node and its first leaf slot
        in ``nodes`` and ``ids``. Tree ``t``'s nodes follow the GPUBVH
        layout (level order, children ``2i + 1`` and ``2i + 2``) from node
        ``node_offsets[t]``; ``ids[leaf_offsets[t] + s]`` is the global row
        of its slot ``s`` (0xFFFFFFFF for an empty slot).
    node_count, leaf_count : int
    stats, count, invalid : GraphDataView
        :data:`SEGMENTED_BVH_STATS` and one-row views of it.

    Notes
    -----
    Trees are grouped by leaf capacity: one dispatch per capacity class
    (at most eight), one workgroup per tree, so any number of same-sized
    trees costs one dispatch. The per-tree record table (row start, rows,
    node offset, leaf offset) is a buffer the node makes at compile time.
    Topology is source order, as for :class:`GPUBVH`. Does not build
    topology, query (a segmented query is future work), submit or read back.
    """

    owner = "GPUSegmentedBVH"

    def __init__(self, *, id: str, bounds, tree_rows, ids=None, nodes=None, stats=None):
        owner = self.owner
        self.id = check_id(owner, id)
        label = f'{owner} "{id}"'
        if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
            raise GraphValidationError(f"{label} bounds must be a (minimum, maximum) pair of views (got {bounds!r})")
        try:
            rows = [int(r) for r in tree_rows]
        except (TypeError, ValueError):
            raise GraphValidationError(f"{label} tree_rows must be a sequence of ints (got {tree_rows!r})") from None
        if not rows:
            raise GraphValidationError(f"{label} needs at least one tree")
        bad = [r for r in rows if not 0 <= r <= MAX_TREE_ROWS]
        if bad or any(isinstance(r, bool) for r in tree_rows):
            raise GraphValidationError(f"{label} tree_rows must each be 0 to {MAX_TREE_ROWS} "
                                       f"(got {bad[0] if bad else tree_rows!r})")
        self.tree_rows = np.asarray(rows, np.int64)
        self.leaf_capacities = np.asarray([1 << max(0, r - 1).bit_length() if r else 1 for r in rows], np.int64)
        sizes = 2 * self.leaf_capacities - 1
        self.node_offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.leaf_offsets = np.concatenate([[0], np.cumsum(self.leaf_capacities)[:-1]]).astype(np.int64)
        self.row_starts = np.concatenate([[0], np.cumsum(self.tree_rows)[:-1]]).astype(np.int64)
        self.node_count = int(sizes.sum())
        self.leaf_count = int(self.leaf_capacities.sum())
        self.rows = int(self.tree_rows.sum())
        self.minimum, self.maximum = bounds
        self._outputs = {"ids": ids, "nodes": nodes, "stats": stats}
        self.ids = self.nodes = self.stats = None
        self.graph = None
        self.dims = None
        self.node_ids: list = []

    count = stat_property("count", "Rows in the trees (one row).")
    invalid = stat_property("invalid", "Rows stored as empty leaves (one row).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph``, declare the outputs and add the refit
        node; returns its ID."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        lo, hi = bounds_views(owner, id, self.minimum, self.maximum, graph)
        if lo.format != hi.format or lo.length != self.rows or hi.length != self.rows:
            raise GraphValidationError(f'{owner} "{id}" bounds minimum ({lo.length} {lo.format.name}) and maximum '
                                       f"({hi.length} {hi.format.name}) must both hold sum(tree_rows) = {self.rows} "
                                       "rows of one format")
        self.dims = 2 if lo.format.name == "float32x2" else 3
        ids, nodes, stats = refit_outputs(owner, id, self._outputs, graph, lo, hi, leaves=self.leaf_count,
                                          nodes=self.node_count)
        self.ids, self.nodes, self.stats, self.graph = ids, nodes, stats, graph
        self._stat_views = stat_rows(graph, stats, SEGMENTED_BVH_STATS)
        resources = [(ids, "storage-write"), (nodes, "storage-read-write"), (stats, "storage-read-write"),
                     (lo, "storage-read"), (hi, "storage-read")]
        node = graph.add_compute_node(id=f"{id}-refit", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, lo, hi))
        self.node_ids = [node]
        return self.node_ids

    def _compile(self, ctx, lo, hi):
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/bvh_segmented.wgsl", dims=self.dims)
        b = {"min": view_binding(1, lo, alignment=align, vec4=False),
             "max": view_binding(2, hi, alignment=align, vec4=False),
             "nodes": view_binding(3, self.nodes, alignment=align, vec4=False),
             "ids": view_binding(4, self.ids, alignment=align, vec4=False),
             "stats": view_binding(5, self.stats, alignment=align, vec4=False)}
        classes = sorted(set(int(c) for c in self.leaf_capacities))
        order = np.concatenate([np.flatnonzero(self.leaf_capacities == c) for c in classes])
        table = np.zeros((len(order), 4), np.uint32)
        table[:] = np.stack([self.row_starts[order], self.tree_rows[order], self.node_offsets[order],
                             self.leaf_offsets[order]], axis=1)
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((len(classes), slot // 4), np.uint32)
        params[:, :5] = (b["min"].offset, b["max"].offset, b["nodes"].offset, b["ids"].offset, b["stats"].offset)
        params[:, 7:10] = (self.rows, len(self.tree_rows), self.node_count)
        first = 0
        kernels = []
        for row, c in enumerate(classes):
            trees = int((self.leaf_capacities == c).sum())
            params[row, 5:7] = (first, trees)
            first += trees
            kernels.append((ComputeKernel(ctx.device, code=code, entry_point="refit", label=f"{ctx.node_id}-{c}",
                                          constants={"LEAVES": c, "LEVELS": c.bit_length()}), row, trees))
        clear = ComputeKernel(ctx.device, code=code, entry_point="clear", label=f"{ctx.node_id}-clear",
                              constants={"LEAVES": 1, "LEVELS": 1})
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        table_buffer = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-trees",
                                                                  data=table.tobytes(), usage=STORAGE))

        def encode(compute_pass, frame):
            r = {b[n].storage.binding: b[n].storage.resolve(frame) for n in b}
            clear.dispatch(compute_pass, frame, workgroups=1, bindings={0: (uniform, 0, PARAMS_BYTES), 5: r[5]})
            for kernel, row, trees in kernels:
                kernel.dispatch(compute_pass, frame, workgroups=trees,
                                bindings={0: (uniform, row * slot, PARAMS_BYTES), 6: table_buffer, **r})
        return encode
