"""GPUAncestorProjection: every node's closest visible ancestor (itself when
visible) within a depth bound, by pointer jumping.

See ``shaders/ancestor_projection.wgsl`` for the passes and the state they
carry.
"""

from __future__ import annotations


import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_count
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .validation import check_topology, chunks_of, refuse_overlaps
from .views import StorageBinding, storage_alignment, uniform_slot, view_binding

__all__ = ["GPUAncestorProjection", "projection_rounds"]

STORAGE = wgpu.BufferUsage.STORAGE
PARAMS_BYTES = 32  # ancestor_projection.wgsl: ProjectionParams
#: Serial steps every node takes before the jumping rounds (the shader's WALK).
WALK = 4
#: Largest max_depth (distances are kept in 31 bits, sums of two in range).
MAX_DEPTH = 1 << 24
#: Most nodes: the link table reserves two word values as markers.
MAX_NODES = 0xFFFFFFFE


def projection_rounds(max_depth: int, *, walk: int = WALK) -> int:
    """Jump rounds after the serial walk: the least R with ``walk * 2**R >
    max_depth`` (0 when the walk alone reaches past max_depth). Pure
    arithmetic: touches no device."""
    rounds = 0
    while walk << rounds <= max_depth:
        rounds += 1
    return rounds


def _int_arg(id: str, name: str, value, low: int, high: int) -> int:
    return check_count(f'GPUAncestorProjection "{id}"', name, value, low=low, high=high)


class GPUAncestorProjection:
    """For every node: itself if visible, else its closest visible ancestor.

    Parameters
    ----------
    id : str
        Prefix of the node and transient IDs (``"{id}-project"``,
        ``"{id}-links"``, ``"{id}-state-a"``, ``"{id}-state-b"``).
    parents : GraphDataView or GraphVectorView
        uint32 per node: its parent's *global* node ID (with a vector, the
        row in the logical sequence of all chunks, empty chunks included);
        0xFFFFFFFF or any ID at or past the node count is a root.
    visibility : GraphDataView or GraphVectorView
        uint32 per node, nonzero = visible; same kind and length (vectors:
        identical ordered chunk lengths) as ``parents``.
    output : GraphDataView or GraphVectorView
        uint32 per node (same topology; a data view at least as long): the
        node's own ID when visible, else the ID of the first visible node on
        its parent chain at distance ``1 .. max_depth``, else ``invalid``
        (the chain reaches a root first, is longer than ``max_depth``, or
        runs into a cycle of hidden nodes).
    max_depth : int
        Most parent steps followed (0 to 2**24; 0 = visible nodes only).
    invalid : int
        The uint32 written where no visible ancestor is found.

    Attributes
    ----------
    walk_steps : int
        Serial steps before the jump rounds (default :data:`WALK`; 1 to 64,
        structural, read by :meth:`add_to_graph`). Benchmarks vary it: more
        steps cost dependent reads per unsettled node but fewer full passes.
    rounds : int
        The jump passes (known after :meth:`add_to_graph`).

    Notes
    -----
    Cost grows with log(max_depth), not with depth: one pass links every
    node (visible, root or parent; skipped when there is one non-empty
    chunk, whose rows are the global IDs: the walk then reads parents and
    visibility in place), one pass walks each node up to
    ``walk_steps`` steps, then :func:`projection_rounds` jump passes each
    double the distance every unsettled node covers, reading the previous
    pass's (ancestor, distance) table; the last pass writes ``output``.
    Settled nodes (found or dead) are written into each table once, then
    only read. A
    cycle never loops: its nodes' distances grow past ``max_depth`` in the
    fixed number of rounds. For ``max_depth=32`` over one chunk: a walk
    and 4 jump passes (31: 3).

    Transients: a 4-byte link (several chunks only) and one or two 8-byte
    state tables per node (graph-owned, packed over all chunks,
    lifetime-reused); the caller's
    views keep their chunks. Visibility and parents are read at every
    encoding: changing them is a buffer write, never a recompile. Zero
    nodes adds no nodes. Does not rewrite parents or edges, submit, or read
    back; ``output`` must not share a buffer with ``parents`` or
    ``visibility``.
    """

    def __init__(self, *, id: str, parents, visibility, output, max_depth: int = 32, invalid: int = 0xFFFFFFFF):
        self.id = check_id("GPUAncestorProjection", id)
        self.max_depth = _int_arg(id, "max_depth", max_depth, 0, MAX_DEPTH)
        self.invalid = _int_arg(id, "invalid", invalid, 0, 0xFFFFFFFF)
        self.parents = parents
        self.visibility = visibility
        self.output = output
        self.walk_steps = WALK
        self.rounds = projection_rounds(self.max_depth)
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the projection node; returns
        its IDs (none for zero nodes). Raises a
        :class:`~gpuviz.GraphValidationError` subclass for wrong formats,
        unpacked views, mismatched lengths or chunk topology, a short output
        or an output sharing a buffer with an input."""
        name, id = "GPUAncestorProjection", self.id
        kind, parents = chunks_of(name, id, "parents", self.parents, graph)
        vis_kind, visibility = chunks_of(name, id, "visibility", self.visibility, graph)
        check_topology(name, id, "visibility", "parents", vis_kind, visibility, kind, parents)
        out_kind, outs = chunks_of(name, id, "output", self.output, graph)
        check_topology(name, id, "output", "parents", out_kind, outs, kind, parents)
        if kind == "data":
            n = parents[0].length
            if visibility[0].length != n:
                raise GraphValidationError(f'GPUAncestorProjection "{id}" visibility has {visibility[0].length} '
                                           f"rows but parents has {n}")
            if outs[0].length < n:
                raise GraphValidationError(f'GPUAncestorProjection "{id}" output is shorter than parents (needs '
                                           f"{n} rows, got {outs[0].length})")
        count = sum(v.length for v in parents)
        if count > MAX_NODES:
            raise GraphValidationError(f'GPUAncestorProjection "{id}" has {count} nodes, at most {MAX_NODES}')
        refuse_overlaps(name, id, reads={"parents": parents, "visibility": visibility}, writes={"output": outs},
                        separate=True)
        walk = self.walk_steps
        if isinstance(walk, bool) or not isinstance(walk, int) or not 1 <= walk <= 64:
            raise GraphValidationError(f'GPUAncestorProjection "{id}" walk_steps must be an int in [1, 64] '
                                       f"(got {walk!r})")
        self.rounds = projection_rounds(self.max_depth, walk=walk)
        if count == 0:
            self.node_ids = []
            return []
        direct = sum(1 for v in parents if v.length) == 1
        links = None if direct else graph.create_transient_buffer(id=f"{id}-links", byte_length=4 * count,
                                                                  usage=STORAGE)
        tables = [graph.create_transient_buffer(id=f"{id}-state-{t}", byte_length=8 * count, usage=STORAGE)
                  for t in "ab"[:min(2, self.rounds)]]
        resources = [(v, "storage-read") for group in (parents, visibility) for v in group if v.length]
        resources += [(v, "storage-write") for v in outs[:len(parents)] if v.length]
        resources += [(h, "storage-read-write") for h in (links, *tables) if h is not None]
        chunks = (parents, visibility, outs, links, tables, count, walk)
        self.node_ids = [graph.add_compute_node(id=f"{id}-project", resources=resources,
                                                compile=lambda ctx: self._compile(ctx, *chunks))]
        return self.node_ids

    def _compile(self, ctx, parents, visibility, outs, links, tables, count, walk):
        """Dispatch plan: links, walk, then the jump rounds, each pass one
        dispatch per non-empty chunk (sizes and offsets in a uniform table)."""
        align = storage_alignment(ctx.device)
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        work = [i for i, v in enumerate(parents) if v.length]
        bases = np.cumsum([0] + [v.length for v in parents])
        direct = links is None
        passes = [] if direct else [("links", None, None)]
        passes.append(("walk", "inputs" if direct else "links", 0 if self.rounds else None))
        for r in range(self.rounds):
            passes.append(("jump", r % 2, (r + 1) % 2 if r + 1 < self.rounds else None))
        params = np.zeros((len(passes) * len(work), slot // 4), np.uint32)
        plan = []
        for p, (stage, source, target) in enumerate(passes):
            final = stage != "links" and target is None
            for j, i in enumerate(work):
                row = p * len(work) + j
                bound, layouts, offsets = [], {}, {}
                if stage == "links" or source == "inputs":
                    if stage == "links":
                        bound.append(StorageBinding(1, links, 0, 4 * count))
                    for b, role, view in ((2 if stage == "links" else 1, "parents", parents[i]),
                                          (3, "visibility", visibility[i])):
                        # the walk gathers: scalar words; the links pass streams: vec4
                        vb = view_binding(b, view, alignment=align, vec4=stage == "links")
                        layouts[role], offsets[role] = vb.layout, vb.offset
                        bound.append(vb.storage)
                if stage != "links":
                    if source == "links":
                        bound.append(StorageBinding(1, links, 0, 4 * count))
                    elif source != "inputs":
                        bound.append(StorageBinding(1, tables[source], 0, 8 * count))
                    if final:
                        vb = view_binding(2, outs[i], alignment=align, vec4=False)
                        layouts["out"], offsets["out"] = vb.layout, vb.offset
                        bound.append(vb.storage)
                    else:
                        bound.append(StorageBinding(2, tables[target], 0, 8 * count))
                mirror = stage == "walk" and len(tables) == 2
                if mirror:
                    bound.append(StorageBinding(4, tables[1], 0, 8 * count))
                params[row, :8] = (parents[i].length, bases[i], count, self.max_depth, self.invalid,
                                   offsets.get("parents", 0), offsets.get("visibility", 0), offsets.get("out", 0))
                code = wgsl("algorithms/shaders/ancestor_projection.wgsl", stage=stage, final=final,
                            direct=source == "inputs", mirror=mirror, layouts=layouts)
                kernel = ComputeKernel(ctx.device, code=code, constants={"WALK": walk}, label=ctx.node_id)
                lanes = 4 if stage == "links" else 1
                plan.append((kernel, bound, row, ceil_div(parents[i].length, lanes * WORKGROUP)))
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))

        def encode(compute_pass, frame):
            for kernel, bound, row, groups in plan:
                bindings = {b.binding: b.resolve(frame) for b in bound}
                bindings[0] = (uniform, row * slot, PARAMS_BYTES)
                kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
        return encode
