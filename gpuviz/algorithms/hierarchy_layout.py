"""GPUHierarchyLayout: row offsets of a two-level hierarchy (processes and
their threads) from GPU-resident expansion states.

One pass turns parent and child states into effective child heights
(``shaders/hierarchy_layout.wgsl``); :class:`~gpuviz.algorithms.scan.GPUScan`
turns the heights into exclusive offsets.
"""

from __future__ import annotations


import numpy as np
import wgpu

from ..formats import vector_format
from ..graph import ComputeKernel
from ..graph.checks import check_count
from ..graph.checks import check_id
from ..errors import GraphTypeError, GraphValidationError
from ..graph.resources import GraphDataView, GraphVectorView
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .scan import GPUScan
from .validation import check_topology, chunks_of, refuse_overlaps
from .views import storage_alignment, uniform_slot, view_binding

__all__ = ["GPUHierarchyLayout"]

STORAGE = wgpu.BufferUsage.STORAGE
PARAMS_BYTES = 64  # hierarchy_layout.wgsl: HeightParams
COPY_BYTES = 16  # hierarchy_layout_parents.wgsl: CopyParams
U32 = vector_format("uint32")


def _u32_arg(id: str, name: str, value, low: int = 0) -> int:
    """A Python or numpy integer in [low, 2**32) (bools and floats refused)."""
    return check_count(f'GPUHierarchyLayout "{id}"', name, value, low=low, high=0xFFFFFFFF)


def _rows(view: GraphDataView, length: int, byte_offset: int = 0) -> GraphDataView:
    """The first ``length`` rows of a packed uint32 view from ``byte_offset`` on."""
    return GraphDataView(view.handle, U32, length, view.byte_offset + byte_offset, 4, 4)


class GPUHierarchyLayout:
    """Effective child heights and their exclusive offsets from expansion states.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-heights"``, the scan's
        ``"{id}-offsets-scan-tiles"``, ``"{id}-parent-states"``...).
    parent_states : GraphDataView or GraphVectorView
        uint32, one row per parent, nonzero = expanded. A vector is one
        logical sequence of global parent rows; its chunking is independent
        of the children's.
    child_states : GraphDataView or GraphVectorView
        uint32, one row per child, nonzero = expanded. Fixes the child count
        (its length) and the child topology every other per-child view
        follows.
    offsets : GraphDataView or GraphVectorView
        uint32 output, one row per child: the exclusive scan of the heights.
        A data view has at least as many rows as ``child_states``; a vector
        has identical ordered chunk lengths (empty chunks kept).
    heights : GraphDataView or GraphVectorView, optional
        uint32 output receiving the effective heights (same rules as
        ``offsets``); without it they live in a graph transient.
    children_per_parent : int, optional
        ``k >= 1``: global child row ``c`` belongs to parent ``c // k``.
        ``parent_states`` must then hold at least ``ceil(children / k)`` rows.
    child_parents : GraphDataView or GraphVectorView, optional
        uint32 per child (child topology): each child's *global* parent row.
        Children of one parent are contiguous, so the rows are expected to be
        non-decreasing; a child starts its parent's run when the previous
        child (across chunk boundaries too) has another parent. Exactly one
        of ``children_per_parent`` and ``child_parents`` is given.
    expanded_child_height : int or GraphDataView or GraphVectorView
        Height of an expanded child of an expanded parent: a constant, or a
        uint32 view per child (child topology, e.g. lanes per thread).
    collapsed_child_height, collapsed_parent_height : int
        Height of a collapsed child of an expanded parent; height of the
        first child of a collapsed parent (its other children get 0).

    Notes
    -----
    Per child ``c`` with parent ``p``: if ``parent_states[p]`` is zero, the
    height is ``collapsed_parent_height`` for ``p``'s first child and 0 for
    the rest; otherwise it is the expanded height (``expanded_child_height``
    or its row ``c``) when ``child_states[c]`` is nonzero, else
    ``collapsed_child_height``. ``offsets`` is the exclusive uint32 scan of
    the heights (modulo 2**32) through GPUScan, which continues across child
    chunks.

    Global rows with vectors: child ``c`` is its position in the logical
    child sequence (chunk bases are the cumulative chunk lengths, empty
    chunks included); ``c // k`` and every ``child_parents`` value index the
    logical parent sequence the same way, whatever chunk holds that parent.
    A data view or a single non-empty parent chunk is read in place. With
    several non-empty parent chunks, ``children_per_parent`` splits each
    child chunk's dispatch where the parent chunks' child ranges meet, so
    every piece reads one parent chunk in place; ``child_parents`` (parents
    known only on the GPU) first copies the parent chunks into one graph
    transient of ``parent_count`` words (parents are few). A ``child_parents``
    row at or past the parent count reads as an expanded parent (the child
    keeps its own height); the non-decreasing order is not checked on the
    GPU (a parent that appears in two runs gets a summary row for each).

    States and per-child heights are read from buffers at every encoding:
    changing them is a buffer write, never a recompile. The constants are
    structural (uniforms fixed at compile time). Zero children adds no
    nodes. Does not lay out spans, submit, or read back; the output must not
    share a buffer with any input it reads.
    """

    def __init__(self, *, id: str, parent_states, child_states, offsets, heights=None, children_per_parent=None,
                 child_parents=None, expanded_child_height=1, collapsed_child_height=1, collapsed_parent_height=1):
        self.id = check_id("GPUHierarchyLayout", id)
        if (children_per_parent is None) == (child_parents is None):
            raise GraphValidationError(f'GPUHierarchyLayout "{id}" needs exactly one of children_per_parent and '
                                       f"child_parents (got {'both' if child_parents is not None else 'neither'})")
        if children_per_parent is not None:
            children_per_parent = _u32_arg(id, "children_per_parent", children_per_parent, low=1)
        if not isinstance(expanded_child_height, (GraphDataView, GraphVectorView)):
            if isinstance(expanded_child_height, bool) or not hasattr(expanded_child_height, "__index__"):
                raise GraphTypeError(f'GPUHierarchyLayout "{id}" expanded_child_height must be an int or a uint32 '
                                     f"GraphDataView / GraphVectorView (got {type(expanded_child_height).__name__})")
            expanded_child_height = _u32_arg(id, "expanded_child_height", expanded_child_height)
        self.collapsed_child_height = _u32_arg(id, "collapsed_child_height", collapsed_child_height)
        self.collapsed_parent_height = _u32_arg(id, "collapsed_parent_height", collapsed_parent_height)
        self.parent_states = parent_states
        self.child_states = child_states
        self.offsets = offsets
        self.heights = heights
        self.children_per_parent = children_per_parent
        self.child_parents = child_parents
        self.expanded_child_height = expanded_child_height
        self.scan: GPUScan | None = None
        self.node_ids: list = []

    # ---------------------------------------------------------- validation
    def _per_child(self, graph, name, value, kind, children, *, output=False):
        """A per-child view's chunks, checked against the child topology."""
        k_kind, views = chunks_of("GPUHierarchyLayout", self.id, name, value, graph)
        check_topology("GPUHierarchyLayout", self.id, name, "child_states", k_kind, views, kind, children)
        if kind == "data" and views[0].length < children[0].length:
            role = "is shorter than child_states" if output else "has fewer rows than child_states"
            raise GraphValidationError(f'GPUHierarchyLayout "{self.id}" {name} {role} (needs '
                                       f"{children[0].length} rows, got {views[0].length})")
        if kind == "data":
            views = (_rows(views[0], children[0].length),)
        return views

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph``; add the heights node (and, for
        ``child_parents`` with a multi-chunk parent vector, a parent copy
        node) and the offsets scan.

        Returns the added node IDs (none for zero children). Raises a
        :class:`~gpuviz.GraphValidationError` subclass for wrong formats,
        unpacked views, short outputs, too few parents, mismatched child
        topology or an output sharing a buffer with an input.
        """
        name, id = "GPUHierarchyLayout", self.id
        kind, children = chunks_of(name, id, "child_states", self.child_states, graph)
        parent_kind, parents = chunks_of(name, id, "parent_states", self.parent_states, graph)
        offsets = self._per_child(graph, "offsets", self.offsets, kind, children, output=True)
        heights = None if self.heights is None else self._per_child(graph, "heights", self.heights, kind, children,
                                                                    output=True)
        rows = None if self.child_parents is None else self._per_child(graph, "child_parents", self.child_parents,
                                                                       kind, children)
        expanded = None
        if not isinstance(self.expanded_child_height, int):
            expanded = self._per_child(graph, "expanded_child_height", self.expanded_child_height, kind, children)
        count = sum(v.length for v in children)
        parent_count = sum(v.length for v in parents)
        if self.children_per_parent is not None and parent_count < ceil_div(count, self.children_per_parent):
            raise GraphValidationError(
                f'GPUHierarchyLayout "{id}" parent_states is shorter than needed ({count} children at '
                f"{self.children_per_parent} per parent need {ceil_div(count, self.children_per_parent)} rows, "
                f"got {parent_count})")
        refuse_overlaps(name, id, reads={"parent_states": parents, "child_states": children, "child_parents": rows,
                                         "expanded_child_height": expanded},
                        writes={"offsets": offsets, "heights": heights}, separate=True)
        if count == 0:
            self.node_ids = []
            return []
        node_ids = []
        pieces, read_parents = self._pieces(graph, children, parents, parent_count, node_ids)
        if heights is None:
            heights = self._transient_heights(graph, children, count)
        resources = [(v, "storage-read") for v in children if v.length]
        resources += [(v, "storage-read") for group in (rows, expanded) if group for v in group if v.length]
        resources += [(v, "storage-write") for v in heights if v.length]
        resources += [(v, "storage-read") for v in read_parents]
        plan = (children, heights, rows, expanded, pieces, parent_count)
        node_ids.append(graph.add_compute_node(id=f"{id}-heights", resources=resources,
                                               compile=lambda ctx: self._compile_heights(ctx, *plan)))
        scan_in = heights[0] if kind == "data" else GraphVectorView(f"{id}-heights", tuple(heights), U32)
        scan_out = offsets[0] if kind == "data" else GraphVectorView(f"{id}-offsets", tuple(offsets), U32)
        self.scan = GPUScan(id=f"{id}-offsets", input=scan_in, output=scan_out)
        node_ids += self.scan.add_to_graph(graph)
        self.node_ids = node_ids
        return node_ids

    # -------------------------------------------------------------- graph
    def _transient_heights(self, graph, children, count) -> list:
        """Per-chunk views of one transient holding every child's height."""
        handle = graph.create_transient_buffer(id=f"{self.id}-heights", byte_length=4 * count, usage=STORAGE)
        views, start = [], 0
        for chunk in children:
            views.append(graph.create_data_view(handle, format="uint32", length=chunk.length, byte_offset=4 * start))
            start += chunk.length
        return views

    def _pieces(self, graph, children, parents, parent_count, node_ids) -> tuple:
        """The heights dispatches as ``(child chunk, lo, hi, parent view,
        its first global parent row)``, and the parent views they read.

        One non-empty parent chunk (or a data view) serves every child
        chunk. With several, ``children_per_parent`` splits each child chunk
        where the parent chunks' child ranges meet (nothing copied); with
        ``child_parents`` (parents known only on the GPU) the parent chunks
        are first copied into one transient by an added node.
        """
        starts = np.cumsum([0] + [v.length for v in parents])
        used = [(v, int(b)) for v, b in zip(parents, starts) if v.length]
        whole = [(i, 0, v.length) for i, v in enumerate(children) if v.length]
        if len(used) <= 1:
            view, base = used[0] if used else (None, 0)
            return [(i, lo, hi, view, base) for i, lo, hi in whole], [view] if view is not None else []
        if self.children_per_parent is None:
            packed = self._packed_parents(graph, parents, parent_count, node_ids)
            return [(i, lo, hi, packed, 0) for i, lo, hi in whole], [packed]
        k, pieces, child_base = self.children_per_parent, [], 0
        for i, chunk in enumerate(children):
            for view, base in used:
                lo = max(base * k, child_base) - child_base
                hi = min((base + view.length) * k, child_base + chunk.length) - child_base
                if lo < hi:
                    pieces.append((i, lo, hi, view, base))
            child_base += chunk.length
        return pieces, [v for v, _ in used]

    def _packed_parents(self, graph, parents, parent_count, node_ids):
        """A transient holding every parent state in global order, and the
        node that copies the chunks into it at every encoding."""
        used = [v for v in parents if v.length]
        handle = graph.create_transient_buffer(id=f"{self.id}-parent-states", byte_length=4 * parent_count,
                                               usage=STORAGE)
        packed = graph.create_data_view(handle, format="uint32", length=parent_count)
        resources = [(v, "storage-read") for v in used] + [(packed, "storage-write")]

        def compile_copy(ctx):
            align = storage_alignment(ctx.device)
            slot = uniform_slot(ctx.device, COPY_BYTES)
            params = np.zeros((len(parents), slot // 4), np.uint32)
            dst = view_binding(1, packed, alignment=align, vec4=False)
            plans, base = [], 0
            for row, chunk in enumerate(parents):
                if chunk.length:
                    src = view_binding(2, chunk, alignment=align, vec4=False)
                    params[row, :3] = (chunk.length, src.offset, dst.offset + base)
                    code = wgsl("algorithms/shaders/hierarchy_layout_parents.wgsl",
                                layouts={"src": src.layout, "dst": dst.layout.replace("-start", "")})
                    kernel = ComputeKernel(ctx.device, code=code, label=ctx.node_id)
                    plans.append((kernel, [dst.storage, src.storage], row, ceil_div(chunk.length, WORKGROUP)))
                base += chunk.length
            uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params",
                                                                 data=params.tobytes(),
                                                                 usage=wgpu.BufferUsage.UNIFORM))

            def encode(compute_pass, frame):
                for kernel, storage, row, groups in plans:
                    bindings = {b.binding: b.resolve(frame) for b in storage}
                    bindings[0] = (uniform, row * slot, COPY_BYTES)
                    kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
            return encode

        node_ids.append(graph.add_compute_node(id=f"{self.id}-parent-states", resources=resources,
                                               compile=compile_copy))
        return packed

    def _compile_heights(self, ctx, children, heights, rows, expanded, pieces, parent_count):
        """One dispatch per piece (a child chunk, or part of one that reads
        one parent chunk); offsets and bases are uniforms, so pieces of one
        structure share a pipeline."""
        align = storage_alignment(ctx.device)
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((len(pieces), slot // 4), np.uint32)
        constant = 0 if expanded is not None else self.expanded_child_height
        k = self.children_per_parent or 1
        bases = np.cumsum([0] + [v.length for v in children])
        previous = {}  # child chunk -> the non-empty chunk before it
        last = None
        for i, chunk in enumerate(children):
            if chunk.length:
                previous[i], last = last, i
        plans = []
        for row, (i, lo, hi, parent_view, parent_base) in enumerate(pieces):
            bound = {"heights": view_binding(1, heights[i], alignment=align),
                     "states": view_binding(2, children[i], alignment=align)}
            if parent_view is not None:
                bound["parents"] = view_binding(3, parent_view, alignment=align, vec4=False)
            if rows is not None:
                bound["rows"] = view_binding(4, rows[i], alignment=align)
                j = previous[i]
                if j is not None:
                    tail = _rows(rows[j], 1, 4 * (rows[j].length - 1))
                    bound["prev"] = view_binding(6, tail, alignment=align, vec4=False)
            if expanded is not None:
                bound["expanded"] = view_binding(5, expanded[i], alignment=align)
            offset = {role: b.offset for role, b in bound.items()}
            params[row, :15] = (lo, hi, bases[i], k, parent_count, constant, self.collapsed_child_height,
                                self.collapsed_parent_height, offset["heights"], offset["states"],
                                offset.get("parents", 0), offset.get("rows", 0), offset.get("expanded", 0),
                                offset.get("prev", 0), parent_base)
            layouts = {role: "none" for role in ("heights", "states", "parents", "rows", "expanded", "prev")}
            layouts.update({role: b.layout for role, b in bound.items()})
            code = wgsl("algorithms/shaders/hierarchy_layout.wgsl", form="rows" if rows is not None else "divide",
                        expanded="view" if expanded is not None else "constant", prev="prev" in bound,
                        layouts=layouts)
            kernel = ComputeKernel(ctx.device, code=code, label=ctx.node_id)
            groups = ceil_div(hi - (lo & ~3), 4 * WORKGROUP)
            plans.append((kernel, [b.storage for b in bound.values()], row, groups))
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))

        def encode(compute_pass, frame):
            for kernel, storage, row, groups in plans:
                bindings = {b.binding: b.resolve(frame) for b in storage}
                bindings[0] = (uniform, row * slot, PARAMS_BYTES)
                kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
        return encode
