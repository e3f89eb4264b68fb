"""GPUMask: compose source-aligned zero/nonzero masks into one 0/1 mask."""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .validation import check_topology, chunks_of, refuse_overlaps
from .views import storage_alignment, uniform_slot, view_binding

__all__ = ["GPUMask"]

OPERATIONS = {"and": 0, "or": 1, "xor": 2, "difference": 3, "not": 4}


class GPUMask:
    """Boolean composition of packed uint32 masks with a canonical 0/1 result.

    Parameters
    ----------
    id : str
        Prefix of node IDs (``"{id}-mask"``).
    inputs : sequence of GraphDataView or GraphVectorView
        One or more masks; every nonzero row is true. All data views of
        equal length, or all vector views with identical ordered chunk lengths.
    output : GraphDataView or GraphVectorView
        Same kind as inputs (a data view at least as long); must not share a
        buffer with any input.
    operation : {"and", "or", "xor", "difference", "not"}
        ``and``: true in every input; ``or``: in at least one; ``xor``: in an
        odd number; ``difference``: in the first and in none of the rest;
        ``not``: the inverse of exactly one input.

    Notes
    -----
    One pass per non-empty chunk reads each input once and writes the output
    once; vectors keep their chunks (nothing is concatenated). Zero length
    adds no nodes. Does not evaluate predicates, submit, or read back.
    """

    def __init__(self, *, id: str, inputs, output, operation: str = "and"):
        if operation not in OPERATIONS:
            raise GraphValidationError(
                f'GPUMask "{id}" operation must be one of {", ".join(OPERATIONS)} (got {operation!r})')
        self.id = check_id("GPUMask", id)
        self.inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        self.output = output
        self.operation = operation
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the mask node; returns its IDs."""
        name, id = "GPUMask", self.id
        if not self.inputs:
            raise GraphValidationError(f'GPUMask "{id}" needs at least one input')
        if self.operation == "not" and len(self.inputs) != 1:
            raise GraphValidationError(f'GPUMask "{id}" operation "not" takes exactly one input '
                                       f"(got {len(self.inputs)})")
        limit = int(graph.device.limits["max-storage-buffers-per-shader-stage"])
        if len(self.inputs) + 1 > limit:
            raise GraphValidationError(f'GPUMask "{id}" has {len(self.inputs)} inputs; the device binds at most '
                                       f"{limit - 1}")
        kind, first = chunks_of(name, id, "inputs[0]", self.inputs[0], graph)
        chunks = [first]
        for k, value in enumerate(self.inputs[1:], 1):
            k_kind, views = chunks_of(name, id, f"inputs[{k}]", value, graph)
            check_topology(name, id, f"inputs[{k}]", "inputs[0]", k_kind, views, kind, first)
            if kind == "data" and views[0].length != first[0].length:
                raise GraphValidationError(f'GPUMask "{id}" inputs[{k}] has {views[0].length} rows but inputs[0] '
                                           f"has {first[0].length}")
            chunks.append(views)
        out_kind, outs = chunks_of(name, id, "output", self.output, graph)
        check_topology(name, id, "output", "inputs[0]", out_kind, outs, kind, first)
        if kind == "data" and outs[0].length < first[0].length:
            raise GraphValidationError(f'GPUMask "{id}" output is shorter than its inputs (needs '
                                       f"{first[0].length} rows, got {outs[0].length})")
        shared = {o.handle.id for o in outs} & {v.handle.id for views in chunks for v in views}
        if shared:
            raise GraphValidationError(f'GPUMask "{id}" output shares buffer "{sorted(shared)[0]}" with an input')
        refuse_overlaps(name, id, reads={f"inputs[{k}]": views for k, views in enumerate(chunks)},
                        writes={"output": outs}, separate=True)
        lengths = [v.length for v in first]
        work = [c for c, n in enumerate(lengths) if n]
        if not work:
            self.node_ids = []
            return []
        resources = [(views[c], "storage-read") for views in chunks for c in work]
        resources += [(outs[c], "storage-write") for c in work]
        op = OPERATIONS[self.operation]

        def compile_mask(ctx):
            align = storage_alignment(ctx.device)
            nbytes = 16 * ceil_div(2 + len(chunks), 4)  # mask.wgsl: MaskParams (n, out_off, in_k_off...)
            slot = uniform_slot(ctx.device, nbytes)
            params = np.zeros((len(work), slot // 4), np.uint32)
            kernels = []
            for row, c in enumerate(work):
                # inputs at bindings 2.., the output at 1; MaskParams: n, out_off, in0_off...
                views = [view_binding(k + 2, v[c], alignment=align) for k, v in enumerate(chunks)]
                views.append(view_binding(1, outs[c], alignment=align))
                params[row, :2 + len(chunks)] = (lengths[c], views[-1].offset, *(v.offset for v in views[:-1]))
                code = wgsl("algorithms/shaders/mask.wgsl", inputs=len(chunks), layouts=[v.layout for v in views])
                kernel = ComputeKernel(ctx.device, code=code, constants={"OP": op}, label=ctx.node_id)
                kernels.append((kernel, [v.storage for v in views], row))
            uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params",
                                                                 data=params.tobytes(),
                                                                 usage=wgpu.BufferUsage.UNIFORM))
            dispatches = [(kernel, bindings, (uniform, row * slot, nbytes), ceil_div(lengths[work[row]], 4 * WORKGROUP))
                          for kernel, bindings, row in kernels]

            def encode(compute_pass, frame):
                for kernel, bindings, params_range, groups in dispatches:
                    resolved = {b.binding: b.resolve(frame) for b in bindings}
                    resolved[0] = params_range
                    kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=groups)
            return encode

        self.node_ids = [graph.add_compute_node(id=f"{id}-mask", resources=resources, compile=compile_mask)]
        return self.node_ids
