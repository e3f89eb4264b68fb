"""GPUGraphTraversal: bounded breadth-first reachability over CSR adjacency.

The traversal is frontier-based: each level visits only the nodes the
previous level claimed, and its passes are sized on the GPU
(``dispatch_workgroups_indirect`` from grids that small passes write), so
seeds, the seed count and the active depth are buffer contents, never
recompiles or readbacks. The number of levels is structural (``max_depth``).
See ``shaders/graph_traversal.wgsl`` for the per-level passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_count, check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .validation import check_topology, chunks_of, refuse_overlaps, single_row
from .views import StorageBinding, storage_alignment, uniform_slot, view_binding

__all__ = ["GPUGraphTraversal", "UNREACHED", "DIRECTIONS"]

#: ``depths`` value of a node no seed reaches within the active depth.
UNREACHED = 0xFFFFFFFF
#: Accepted ``direction`` values.
DIRECTIONS = ("forward", "backward", "both")

STORAGE = wgpu.BufferUsage.STORAGE
EXPAND_ITEMS = 1  # edges per invocation of the expand pass (graph_traversal.wgsl override)
FILL_PER_GROUP = 1024
MAX_DEPTH_LIMIT = 1024
MAX_PARTITIONS = 64  # each level kernel keeps one bind group per partition (ComputeKernel caches 64)
# graph_traversal.wgsl: TraversalParams field order
PARAM_FIELDS = ("level", "part", "nlen", "rnlen", "seed_base", "seed_len", "seeds_total", "total_nodes",
                "fill_off", "fill_count", "fill_value", "bitmap_off", "blocks_off", "totals_off",
                "offsets_off", "neighbors_off", "roffsets_off", "rneighbors_off", "output_off", "depths_off",
                "seeds_off", "seed_count_off", "active_off", "overflow_off")
PARAMS_BYTES = 4 * len(PARAM_FIELDS)
# graph_traversal.wgsl bindings
B_PARAMS, B_TABLE, B_STATE, B_CUR, B_NXT, B_SCAN, B_ARGS = range(7)
B_VIEW = {"offsets": 7, "neighbors": 8, "roffsets": 9, "rneighbors": 10, "output": 11, "depths": 12,
          "seeds": 13, "seed_count": 14, "active": 15, "overflow": 16}
B_FILL = 17


@dataclass
class _Partition:
    """One output partition: its global node range, its CSR chunks (in the
    traversal's direction order) and its frontier region."""

    base: int
    nodes: int
    offsets: object
    neighbors: object
    roffsets: object
    rneighbors: object
    output: object
    depths: object
    region: int = 0
    cap: int = 0
    block: int = 0


class GPUGraphTraversal:
    """Nodes within ``active_depth`` hops of a set of seeds, as a 0/1 mask.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-level-2"``, ``"{id}-frontier-a"``...).
    offsets, neighbors : GraphDataView or GraphVectorView
        Forward CSR, packed uint32: node n's neighbours are
        ``neighbors[offsets[n]:offsets[n + 1]]``, so offsets has
        node_count + 1 rows. Neighbour IDs are global node IDs. As vectors
        (the partitioned form), chunk p is partition p's own CSR: its
        offsets chunk has one row more than output chunk p and indexes its
        neighbors chunk; partition p holds the global IDs that follow
        partition p-1's (at most 64 partitions). Offsets past the neighbour
        rows are clamped to them.
    seeds : GraphDataView or GraphVectorView
        uint32 global node IDs (a vector is one logical sequence).
    output : GraphDataView or GraphVectorView
        uint32, one row per node (a data view at least node_count rows; a
        vector with one chunk per partition of exactly its node count):
        1 for every node within the active depth of a seed, seeds included
        (depth 0), else 0.
    reverse_offsets, reverse_neighbors : optional
        The reverse CSR (incoming edges), same form as the forward one;
        required for ``direction="backward"`` and ``"both"``.
    seed_count : GraphDataView, optional
        One uint32 row: only the first ``min(seed_count, len(seeds))`` seeds
        are used. Default: every seed.
    direction : {"forward", "backward", "both"}
    max_depth : int
        Structural number of levels (0 to 1024): each one adds its passes.
    active_depth : GraphDataView, optional
        One uint32 row, clamped to ``max_depth``. Default: ``max_depth``.
    depths : GraphDataView or GraphVectorView, optional
        Same form as output: each node's hop count, ``UNREACHED``
        (0xFFFFFFFF) where output is 0.
    frontier_capacity : int, optional
        Entries one level's frontier may hold (default and most useful: the
        node count, which never overflows). For vectors it bounds each
        partition's frontier, which also never holds more than that
        partition's node count.
    overflow : GraphDataView, optional
        Two uint32 rows: [out-of-range IDs, frontier overflow]. The first
        counts seeds >= node_count and every traversed edge whose target is
        >= node_count (both are ignored); the second counts nodes claimed
        after their frontier was full: those nodes are neither published
        nor expanded, so output is incomplete exactly when it is nonzero.

    Notes
    -----
    Level-synchronous breadth-first search. A node's claim is an atomicOr
    on a graph-owned bitmap, so cycles, duplicate edges, self loops and
    shared descendants publish each node once and never loop. Every level
    costs a constant number of passes whose sizes follow the GPU-resident
    frontier: a 256-entry block scan of frontier degrees, one workgroup per
    partition scanning the block sums, and an edge pass with one invocation
    per edge that finds each edge's source by binary search, so a node
    with 100K neighbours is spread over ~400 workgroups, not one thread.
    The only passes over every node are the initial fills of output (and
    depths) and a bitmap clear (node_count / 32 words). Scratch: two
    frontiers and a scan buffer of about ``frontier_capacity`` words each
    (summed over partitions) plus the bitmap.

    Seeds, seed count and active depth are read on the GPU: changing them
    by buffer writes needs no recompile and no readback. Zero nodes adds no
    nodes (output, depths and overflow untouched). Frontiers, scans and the
    bitmap are graph transients. Records into the caller's encoder through
    the compiled graph; never submits, reads back or allocates during
    encode. Does not order frontier entries (which node of a level is
    stored first is unspecified), does not report parents or paths, and
    does not repack partitioned input.
    """

    def __init__(self, *, id: str, offsets, neighbors, seeds, output, reverse_offsets=None, reverse_neighbors=None,
                 seed_count=None, direction: str = "forward", max_depth: int, active_depth=None, depths=None,
                 frontier_capacity: int | None = None, overflow=None):
        name = "GPUGraphTraversal"
        self.id = check_id(name, id)
        if direction not in DIRECTIONS:
            raise GraphValidationError(f'{name} "{id}" direction must be one of {", ".join(DIRECTIONS)} '
                                       f"(got {direction!r})")
        max_depth = check_count(f'{name} "{id}"', "max_depth", max_depth, low=0, high=MAX_DEPTH_LIMIT)
        if frontier_capacity is not None:
            frontier_capacity = check_count(f'{name} "{id}"', "frontier_capacity", frontier_capacity, low=1)
        if direction != "forward" and (reverse_offsets is None or reverse_neighbors is None):
            raise GraphValidationError(f'{name} "{id}" direction "{direction}" needs reverse_offsets and '
                                       "reverse_neighbors")
        if (reverse_offsets is None) != (reverse_neighbors is None):
            raise GraphValidationError(f'{name} "{id}" needs both reverse_offsets and reverse_neighbors, or neither')
        self.offsets, self.neighbors = offsets, neighbors
        self.reverse_offsets, self.reverse_neighbors = reverse_offsets, reverse_neighbors
        self.seeds, self.seed_count, self.output, self.depths = seeds, seed_count, output, depths
        self.direction = direction
        self.max_depth = int(max_depth)
        self.active_depth = active_depth
        self.frontier_capacity = None if frontier_capacity is None else int(frontier_capacity)
        self.overflow = overflow
        self.node_count = 0
        self.node_ids: list = []

    # ------------------------------------------------------------ validation
    def _csr(self, graph, label, offsets, neighbors, out_kind, outs) -> tuple:
        """Validated ``(offsets chunks, neighbors chunks)`` of one CSR against
        the output partitions."""
        name = "GPUGraphTraversal"
        kind, offs = chunks_of(name, self.id, f"{label}offsets", offsets, graph)
        n_kind, nbrs = chunks_of(name, self.id, f"{label}neighbors", neighbors, graph)
        if n_kind != kind:
            raise GraphValidationError(f'{name} "{self.id}" {label}neighbors is a {n_kind} view but {label}offsets '
                                       f"is a {kind} view (use the same kind)")
        if kind != out_kind:
            raise GraphValidationError(f'{name} "{self.id}" {label}offsets is a {kind} view but output is a '
                                       f"{out_kind} view (use the same kind)")
        if kind == "vector":
            if not len(offs) == len(nbrs) == len(outs):
                raise GraphValidationError(
                    f'{name} "{self.id}" {label}offsets, {label}neighbors and output must have one chunk per '
                    f"partition (got {len(offs)}, {len(nbrs)} and {len(outs)} chunks)")
            for p, (o, out) in enumerate(zip(offs, outs)):
                if not (o.length == out.length + 1 or (out.length == 0 and o.length == 0)):
                    raise GraphValidationError(
                        f'{name} "{self.id}" {label}offsets chunk {p} has {o.length} rows; partition {p} has '
                        f"{out.length} nodes (needs {out.length + 1})")
        return offs, nbrs

    def _node_aligned(self, graph) -> tuple:
        """The validated node-aligned views, one entry per partition:
        ``(offsets, neighbors, reverse offsets, reverse neighbors, output,
        depths)`` (None where not given); data views are cut to the node count."""
        name, id = "GPUGraphTraversal", self.id
        out_kind, outs = chunks_of(name, id, "output", self.output, graph)
        offs, nbrs = self._csr(graph, "", self.offsets, self.neighbors, out_kind, outs)
        if out_kind == "data":
            nodes = max(0, offs[0].length - 1)
            if outs[0].length < nodes:
                raise GraphValidationError(f'{name} "{id}" output is shorter than needed (needs {nodes} rows, '
                                           f"got {outs[0].length})")
            outs = (graph.create_data_view(outs[0].handle, format="uint32", length=nodes,
                                           byte_offset=outs[0].byte_offset),)
        roffs = rnbrs = (None,) * len(outs)
        if self.reverse_offsets is not None:
            roffs, rnbrs = self._csr(graph, "reverse_", self.reverse_offsets, self.reverse_neighbors, out_kind, outs)
            if out_kind == "data" and roffs[0].length != offs[0].length:
                raise GraphValidationError(f'{name} "{id}" reverse_offsets has {roffs[0].length} rows but offsets '
                                           f"has {offs[0].length} (one per node plus one)")
        deps = (None,) * len(outs)
        if self.depths is not None:
            d_kind, deps = chunks_of(name, id, "depths", self.depths, graph)
            check_topology(name, id, "depths", "output", d_kind, deps, out_kind, outs)
            if d_kind == "data":
                if deps[0].length < outs[0].length:
                    raise GraphValidationError(f'{name} "{id}" depths is shorter than needed (needs '
                                               f"{outs[0].length} rows, got {deps[0].length})")
                deps = (graph.create_data_view(deps[0].handle, format="uint32", length=outs[0].length,
                                               byte_offset=deps[0].byte_offset),)
        return offs, nbrs, roffs, rnbrs, outs, deps

    def _validate(self, graph) -> list:
        """Check every input against ``graph``; returns the partitions."""
        name, id = "GPUGraphTraversal", self.id
        offs, nbrs, roffs, rnbrs, outs, deps = self._node_aligned(graph)
        _, seeds = chunks_of(name, id, "seeds", self.seeds, graph)
        singles = {}
        for role, value, rows in (("seed_count", self.seed_count, 1), ("active_depth", self.active_depth, 1),
                                  ("overflow", self.overflow, 2)):
            singles[role] = None if value is None else single_row(name, id, role, value, graph, rows=rows)
        if len(outs) > MAX_PARTITIONS:
            raise GraphValidationError(f'{name} "{id}" has {len(outs)} partitions (at most {MAX_PARTITIONS})')
        refuse_overlaps(name, id, reads={"offsets": offs, "neighbors": nbrs, "reverse_offsets": roffs,
                                         "reverse_neighbors": rnbrs, "seeds": seeds,
                                         "seed_count": singles["seed_count"], "active_depth": singles["active_depth"]},
                        writes={"output": outs, "depths": deps, "overflow": singles["overflow"]}, separate=True)
        limit = int(graph.device.limits["max-storage-buffer-binding-size"])
        for role, views in (("offsets", offs), ("neighbors", nbrs), ("reverse_offsets", roffs),
                            ("reverse_neighbors", rnbrs), ("output", outs), ("depths", deps), ("seeds", seeds)):
            big = next((v for v in views if v is not None and v.byte_length > limit), None)
            if big is not None:
                raise GraphValidationError(f'{name} "{id}" {role} spans {big.byte_length} bytes in one chunk, more '
                                           f"than the device's storage binding limit ({limit} bytes): split it")
        both = self.direction == "both"
        need = max(6 + (self.depths is not None) + both + (self.active_depth is not None), 7 + 2 * both)
        most = int(graph.device.limits["max-storage-buffers-per-shader-stage"])
        if need > most:  # graph_traversal.wgsl: visit and expand bindings
            raise GraphValidationError(f'{name} "{id}" needs {need} storage buffers per shader stage, the device '
                                       f"allows {most}")
        if self.direction == "backward":  # the reverse CSR takes the forward slot
            offs, nbrs, roffs, rnbrs = roffs, rnbrs, (None,) * len(outs), (None,) * len(outs)
        elif self.direction == "forward":
            roffs = rnbrs = (None,) * len(outs)
        parts, base = [], 0
        for p in range(len(outs)):
            parts.append(_Partition(base, outs[p].length, offs[p], nbrs[p], roffs[p], rnbrs[p], outs[p], deps[p]))
            base += outs[p].length
        self.node_count = base
        self._seeds = [s for s in seeds if s.length]
        self._singles = singles
        return parts

    # ----------------------------------------------------------------- graph
    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the traversal's nodes.

        Returns the added node IDs (none for zero nodes): ``"{id}-clear"``,
        ``"{id}-seeds"`` (when there are seeds), ``"{id}-level-0"`` to
        ``"{id}-level-{max_depth}"`` and ``"{id}-report"`` (with overflow).

        Raises
        ------
        GraphValidationError
            (or a subclass) for a wrong format, an unpacked view, a short
            output or depths, CSR chunks that do not match the output
            partitions, an output sharing a buffer with an input, or a
            scratch buffer larger than the device's storage binding limit.
        """
        parts = self._validate(graph)
        if self.node_count == 0:
            self.node_ids = []
            return []
        plan = _Plan(self, graph, parts)
        ids = [plan.add_clear(graph)]
        if plan.seeds:
            ids.append(plan.add_seeds(graph))
        ids += [plan.add_level(graph, level) for level in range(self.max_depth + 1)]
        if plan.singles["overflow"] is not None:
            ids.append(plan.add_report(graph))
        self.node_ids = ids
        return ids


def _resolve(bindings: dict, frame) -> dict:
    """``{binding: (buffer, offset, size)}`` of StorageBindings, graph handles
    (bound whole) and fixed tuples (node-owned buffers)."""
    out = {}
    for b, v in bindings.items():
        if isinstance(v, tuple):
            out[b] = v
        elif isinstance(v, StorageBinding):
            out[b] = v.resolve(frame)
        else:
            buffer = frame.buffer(v)
            out[b] = (buffer, 0, buffer.size)
    return out


class _Plan:
    """What one ``add_to_graph`` decided (partitions, frontier regions,
    scratch layout, transients), captured by the node compile callbacks."""

    def __init__(self, owner: GPUGraphTraversal, graph, parts: list):
        self.id, self.parts, self.max_depth = owner.id, parts, owner.max_depth
        self.seeds, self.singles = owner._seeds, owner._singles
        self.both = owner.direction == "both"
        self.has_depths = owner.depths is not None
        self.template = dict(parts=len(parts), both=self.both, depths=self.has_depths,
                             active=owner.active_depth is not None, seed_count=owner.seed_count is not None)
        cap = owner.frontier_capacity or owner.node_count
        region = block = 0
        for part in parts:  # each partition's frontier region and block sums
            part.region, part.cap, part.block = region, min(cap, part.nodes), block
            region += part.cap
            block += ceil_div(part.cap, WORKGROUP)
        bitmap = 2 + (self.max_depth + 1) * len(parts)  # graph_traversal.wgsl: state words
        self.layout = {"bitmap_off": bitmap, "blocks_off": region, "totals_off": region + block,
                       "total_nodes": owner.node_count}
        self.state_words = bitmap + ceil_div(owner.node_count, 32)
        sizes = {"state": self.state_words, "frontier-a": region, "scan": region + block + len(parts)}
        if self.max_depth:  # a second frontier only when some level expands
            sizes["frontier-b"] = region
        limit = int(graph.device.limits["max-storage-buffer-binding-size"])
        for label, words in sizes.items():
            if 4 * words > limit:
                raise GraphValidationError(f'GPUGraphTraversal "{self.id}" {label} needs {4 * words} bytes, more '
                                           f"than the device's storage binding limit ({limit} bytes)")
        self.t = {label: graph.create_transient_buffer(id=f"{self.id}-{label}", byte_length=4 * max(words, 4),
                                                       usage=STORAGE) for label, words in sizes.items()}
        self.t["args"] = graph.create_transient_buffer(id=f"{self.id}-args", byte_length=24 * len(parts),
                                                       usage=STORAGE | wgpu.BufferUsage.INDIRECT)

    # ---------------------------------------------------------------- kernels
    def kernel(self, ctx, entry: str) -> ComputeKernel:
        code = wgsl("algorithms/shaders/graph_traversal.wgsl", **self.template)
        return ComputeKernel(ctx.device, code=code, entry_point=entry, constants={"MAX_DEPTH": self.max_depth, "EXPAND_ITEMS": EXPAND_ITEMS},
                             label=f"{ctx.node_id}-{entry}")

    def node_objects(self, ctx, rows: list) -> tuple:
        """The node's uniform (one slot per row of params) and the partition
        table, both made now; returns ``(slot bindings, table binding)``."""
        device = ctx.device
        slot = uniform_slot(device, PARAMS_BYTES)
        data = np.zeros((max(1, len(rows)), slot // 4), np.uint32)
        for r, params in enumerate(rows):
            values = {**self.layout, **params}
            data[r, :len(PARAM_FIELDS)] = [values.get(f, 0) for f in PARAM_FIELDS]
        uniform = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=data.tobytes(),
                                                         usage=wgpu.BufferUsage.UNIFORM))
        table = np.zeros((len(self.parts), 8), np.uint32)  # graph_traversal.wgsl: T_* fields
        for p, part in enumerate(self.parts):
            table[p, :5] = (part.base, part.nodes, part.region, part.cap, part.block)
        table = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-table", data=table.tobytes(),
                                                       usage=STORAGE))
        return [(uniform, r * slot, PARAMS_BYTES) for r in range(len(rows))], (table, 0, table.size)

    @staticmethod
    def views(ctx, roles: dict) -> tuple:
        """Bindings and uniform element offsets (``"{role}_off"``) of caller
        views; an empty view binds a small node-owned buffer it never reads."""
        align = storage_alignment(ctx.device)
        bindings, offsets, dummy = {}, {}, None
        for role, view in roles.items():
            if view is None or view.length == 0:
                if dummy is None:
                    dummy = ctx.own(ctx.device.create_buffer(label=f"{ctx.node_id}-empty", size=16, usage=STORAGE))
                bindings[B_VIEW[role]], offsets[f"{role}_off"] = (dummy, 0, 16), 0
                continue
            vb = view_binding(B_VIEW[role], view, alignment=align, vec4=False)
            bindings[B_VIEW[role]], offsets[f"{role}_off"] = vb.storage, vb.offset
        return bindings, offsets

    # ------------------------------------------------------------------ nodes
    def add_clear(self, graph) -> str:
        """Output 0, depths UNREACHED, claims and counters 0."""
        targets = [(p.output, 0) for p in self.parts if p.nodes]
        targets += [(p.depths, UNREACHED) for p in self.parts if p.nodes and p.depths is not None]
        state = self.t["state"]

        def compile_clear(ctx):
            kernel = self.kernel(ctx, "fill")
            align = storage_alignment(ctx.device)
            rows, dispatches = [], []
            for view, value in targets:
                vb = view_binding(B_FILL, view, alignment=align, vec4=False)
                rows.append({"fill_off": vb.offset, "fill_count": view.length, "fill_value": value})
                dispatches.append(({B_FILL: vb.storage}, view.length))
            rows.append({"fill_off": 0, "fill_count": self.state_words, "fill_value": 0})
            dispatches.append(({B_FILL: state}, self.state_words))
            slots, _ = self.node_objects(ctx, rows)

            def encode(compute_pass, frame):
                for (bindings, words), slot in zip(dispatches, slots):
                    kernel.dispatch(compute_pass, frame, bindings={**_resolve(bindings, frame), B_PARAMS: slot},
                                    workgroups=ceil_div(words, FILL_PER_GROUP))
            return encode

        resources = [(v, "storage-write") for v, _ in targets] + [(state, "storage-write")]
        return graph.add_compute_node(id=f"{self.id}-clear", resources=resources, compile=compile_clear)

    def add_seeds(self, graph) -> str:
        """Claim the first seed_count seeds into frontier 0."""
        t, seed_count = self.t, self.singles["seed_count"]
        total = sum(s.length for s in self.seeds)

        def compile_seeds(ctx):
            kernel = self.kernel(ctx, "claim_seeds")
            rows, dispatches, first = [], [], 0
            for chunk in self.seeds:
                roles = {"seeds": chunk, **({"seed_count": seed_count} if seed_count is not None else {})}
                views, offsets = self.views(ctx, roles)
                rows.append({**offsets, "seed_base": first, "seed_len": chunk.length, "seeds_total": total})
                views.update({B_STATE: t["state"], B_NXT: t["frontier-a"]})
                dispatches.append((views, ceil_div(chunk.length, WORKGROUP)))
                first += chunk.length
            slots, table = self.node_objects(ctx, rows)

            def encode(compute_pass, frame):
                for (bindings, groups), slot in zip(dispatches, slots):
                    kernel.dispatch(compute_pass, frame, workgroups=groups,
                                    bindings={**_resolve(bindings, frame), B_PARAMS: slot, B_TABLE: table})
            return encode

        resources = [(s, "storage-read") for s in self.seeds] + [(t["state"], "storage-read-write"),
                                                                  (t["frontier-a"], "storage-write")]
        if seed_count is not None:
            resources.append((seed_count, "storage-read"))
        return graph.add_compute_node(id=f"{self.id}-seeds", resources=resources, compile=compile_seeds)

    def add_level(self, graph, level: int) -> str:
        """Publish frontier ``level``; below max_depth also expand it."""
        t, active = self.t, self.singles["active_depth"]
        last = level == self.max_depth
        cur = t["frontier-a" if level % 2 == 0 else "frontier-b"]
        nxt = None if last else t["frontier-b" if level % 2 == 0 else "frontier-a"]

        def compile_level(ctx):
            kernels = {e: self.kernel(ctx, e) for e in ("level_args", "visit", "blocks", "expand")}
            shared, visits, expands, slots, table = self._level_bindings(ctx, level, cur, nxt)

            def encode(compute_pass, frame):
                args = frame.buffer(t["args"])
                fixed = _resolve(shared, frame)
                kernels["level_args"].dispatch(compute_pass, frame, workgroups=1,
                                               bindings={**fixed, B_PARAMS: slots[0], B_TABLE: table})
                for bindings, at in visits:
                    kernels["visit"].dispatch_indirect(compute_pass, frame, bindings=_resolve(bindings, frame),
                                                       indirect_buffer=args, indirect_offset=at)
                if last:
                    return
                kernels["blocks"].dispatch(compute_pass, frame, workgroups=len(self.parts),
                                           bindings={**fixed, **_resolve({B_SCAN: t["scan"]}, frame),
                                                     B_PARAMS: slots[0], B_TABLE: table})
                for bindings, at in expands:
                    kernels["expand"].dispatch_indirect(compute_pass, frame, bindings=_resolve(bindings, frame),
                                                        indirect_buffer=args, indirect_offset=at)
            return encode

        resources = [(t["state"], "storage-read-write"), (t["args"], "storage-read-write"), (t["args"], "indirect"),
                     (cur, "storage-read"), (t["scan"], "storage-read-write")]
        if nxt is not None:
            resources.append((nxt, "storage-write"))
        if active is not None:
            resources.append((active, "storage-read"))
        for p in self.parts:
            if p.nodes:
                reads = [p.offsets, p.neighbors] + ([p.roffsets, p.rneighbors] if self.both else [])
                resources += [(v, "storage-read") for v in reads if v.length]
                resources += [(v, "storage-write") for v in (p.output, p.depths) if v is not None]
        return graph.add_compute_node(id=f"{self.id}-level-{level}", resources=resources, compile=compile_level)

    def _level_bindings(self, ctx, level, cur, nxt) -> tuple:
        """A level node's bindings: those of level_args and blocks (shared),
        then per non-empty partition its visit and expand bindings with the
        offset of their grid in the args buffer; the uniform slots (0: the
        level's, then one per partition) and the partition table."""
        t, active = self.t, self.singles["active_depth"]
        act_views, act_off = self.views(ctx, {"active": active}) if active is not None else ({}, {})
        rows, plans = [{"level": level, **act_off}], []
        for q, p in enumerate(self.parts):
            if not p.nodes:
                continue
            roles = {"offsets": p.offsets, "neighbors": p.neighbors, "output": p.output}
            roles.update({"depths": p.depths} if self.has_depths else {})
            roles.update({"roffsets": p.roffsets, "rneighbors": p.rneighbors} if self.both else {})
            views, offsets = self.views(ctx, roles)
            rows.append({**offsets, **act_off, "level": level, "part": q, "nlen": p.neighbors.length,
                         "rnlen": p.rneighbors.length if self.both else 0})
            plans.append((q, views))
        slots, table = self.node_objects(ctx, rows)
        visit_roles = ["offsets", "output"] + ["depths"] * self.has_depths + ["roffsets"] * self.both
        expand_roles = ["offsets", "neighbors"] + ["roffsets", "rneighbors"] * self.both
        visits, expands = [], []
        for (q, views), slot in zip(plans, slots[1:]):
            common = {B_PARAMS: slot, B_TABLE: table, B_STATE: t["state"], B_CUR: cur, B_SCAN: t["scan"]}
            visits.append(({**{B_VIEW[r]: views[B_VIEW[r]] for r in visit_roles}, **act_views, **common}, 24 * q))
            if nxt is not None:
                expands.append(({**{B_VIEW[r]: views[B_VIEW[r]] for r in expand_roles}, **common, B_NXT: nxt},
                                24 * q + 12))
        shared = {**act_views, B_STATE: t["state"], B_ARGS: t["args"]}
        return shared, visits, expands, slots, table

    def add_report(self, graph) -> str:
        """Copy the two overflow counters into the caller's view."""
        state, overflow = self.t["state"], self.singles["overflow"]

        def compile_report(ctx):
            kernel = self.kernel(ctx, "report")
            views, offsets = self.views(ctx, {"overflow": overflow})
            slots, _ = self.node_objects(ctx, [offsets])
            bindings = {**views, B_STATE: state}

            def encode(compute_pass, frame):
                kernel.dispatch(compute_pass, frame, workgroups=1,
                                bindings={**_resolve(bindings, frame), B_PARAMS: slots[0]})
            return encode

        return graph.add_compute_node(id=f"{self.id}-report", resources=[(state, "storage-read"),
                                                                         (overflow, "storage-write")],
                                      compile=compile_report)
