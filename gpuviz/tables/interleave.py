"""GPUInterleave: two 4-byte columns into one two-component vector, on the GPU."""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph import ComputeKernel, GraphDataView, GraphVectorView
from ..graph.checks import check_id
from ..errors import GraphTypeError, GraphValidationError, ViewRangeError
from ..graph.shaders import wgsl

__all__ = ["GPUInterleave"]

_WG = 256  # interleave.wgsl's workgroup size
_UNIFORM_BYTES = 16  # interleave.wgsl: Chunk (rows, x_offset, y_offset, p_offset)


def _chunks(owner, role, value) -> tuple:
    if isinstance(value, GraphVectorView):
        return tuple(value.views)
    if isinstance(value, GraphDataView):
        return (value,)
    raise GraphTypeError(f"{owner} {role} must be a GraphDataView or GraphVectorView (got {type(value).__name__})")


class GPUInterleave:
    """Interleave two columns into one vector of pairs: row ``i`` of ``output``
    is ``(x[i], y[i])`` (float32 x and y columns into float32x2 positions, the
    array-of-structs layout vertex buffers and point primitives read).

    Parameters
    ----------
    id : str
        The node's ID (``"{id}"``).
    x, y : GraphDataView or GraphVectorView
        Columns of a 4-byte scalar format (float32, uint32, int32), the same
        kind, chunk count and chunk lengths.
    output : GraphDataView or GraphVectorView
        The same kind and chunk lengths, of an 8-byte two-component format
        (``float32x2``, ``uint32x2``); must not share a buffer with x or y.

    Notes
    -----
    Words are copied bit for bit (NaN payloads included); formats are not
    converted. One dispatch per non-empty chunk, one pipeline for every
    chunk (the row counts and element offsets are a uniform table built at
    compile time); vectors keep their chunks, nothing is concatenated. Zero
    rows add no node. Does not submit, read back or write the queue.
    """

    def __init__(self, *, id: str, x, y, output):
        self.id = check_id("GPUInterleave", id)
        owner = f'GPUInterleave "{id}"'
        self.x, self.y, self.output = x, y, output
        kinds = {type(v) for v in (x, y, output)}
        xs, ys, outs = (_chunks(owner, role, v) for role, v in (("x", x), ("y", y), ("output", output)))
        if len(kinds) != 1:
            raise GraphTypeError(f"{owner} x, y and output must all be data views or all vector views")
        for role, views in (("x", xs), ("y", ys)):
            fmt = views[0].format if views else None
            if fmt is not None and (fmt.byte_size != 4 or fmt.components != 1):
                raise GraphValidationError(f"{owner} {role} must have a 4-byte scalar format (got {fmt.name})")
        fmt = outs[0].format if outs else None
        if fmt is not None and (fmt.byte_size != 8 or fmt.components != 2):
            raise GraphValidationError(f"{owner} output must have an 8-byte two-component format (got {fmt.name})")
        lengths = [v.length for v in xs]
        for role, views in (("y", ys), ("output", outs)):
            if [v.length for v in views] != lengths:
                raise GraphValidationError(f"{owner} {role} has chunk lengths {[v.length for v in views]}; "
                                           f"x has {lengths}")
        shared = {v.handle.id for v in outs} & {v.handle.id for v in (*xs, *ys)}
        if shared:
            raise GraphValidationError(f'{owner} output shares buffer "{sorted(shared)[0]}" with an input')
        self._chunks = (xs, ys, outs)
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the interleave node (none for
        zero rows); returns its IDs."""
        xs, ys, outs = self._chunks
        owner = f'GPUInterleave "{self.id}"'
        for role, views in (("x", xs), ("y", ys), ("output", outs)):
            for view in views:
                if graph.buffers.get(view.handle.id) is not view.handle:
                    raise GraphValidationError(f'{owner} {role} belongs to graph "{view.handle.graph_id}", '
                                               f'not "{graph.id}"')
                if not view.is_packed or view.byte_offset % 4:
                    raise ViewRangeError(f"{owner} {role} must be packed rows on a 4-byte offset (byte offset "
                                         f"{view.byte_offset}, stride {view.byte_stride})")
        work = [k for k, view in enumerate(outs) if view.length]
        if not work:
            self.node_ids = []
            return []

        def compile_interleave(ctx):
            device = ctx.device
            kernel = ComputeKernel(device, code=wgsl("tables/shaders/interleave.wgsl"), label=ctx.node_id)
            slot = max(int(device.limits["min-uniform-buffer-offset-alignment"]), _UNIFORM_BYTES)
            table = np.zeros((len(work), slot // 4), np.uint32)
            for row, k in enumerate(work):
                table[row, :4] = (outs[k].length, *(ComputeKernel.element_offset(v[k], device) for v in (xs, ys, outs)))
            uniform = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-chunks", data=table.tobytes(),
                                                              usage=wgpu.BufferUsage.UNIFORM))
            dispatches = [({0: (uniform, row * slot, _UNIFORM_BYTES), 1: xs[k], 2: ys[k], 3: outs[k]},
                           -(-outs[k].length // _WG)) for row, k in enumerate(work)]

            def encode(compute_pass, frame):
                for bindings, groups in dispatches:
                    kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
            return encode

        resources = [(v[k], "storage-read") for v in (xs, ys) for k in work]
        resources += [(outs[k], "storage-write") for k in work]
        self.node_ids = [graph.add_compute_node(id=self.id, resources=resources, compile=compile_interleave)]
        return self.node_ids
