"""GPUGroupFilter: values of the rows whose group is enabled, NaN elsewhere."""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .validation import check_topology, chunks_of, refuse_overlaps, single_row

__all__ = ["GPUGroupFilter"]

_UNIFORM_BYTES = 32  # group_filter.wgsl: Chunk (rows, value/code/out offsets, last, enabled offset), padded


class GPUGroupFilter:
    """A group predicate applied to a value column: row ``i`` of ``output`` is
    ``values[i]`` where ``enabled[codes[i]]`` is nonzero and NaN elsewhere.

    Every value-range filter (``filter_values`` of the aggregations,
    histograms and grids) drops NaN, so primitives that read ``output`` as
    their values and filter values see only the enabled groups, with no
    per-row mask to read.

    Parameters
    ----------
    id : str
        The node's ID (``"{id}"``).
    values : GraphDataView or GraphVectorView
        float32 values.
    codes : GraphDataView or GraphVectorView
        uint32 group codes, the same kind and chunk lengths as ``values``.
    enabled : GraphDataView
        uint32, one word per group code plus one: a code at or past the last
        word (a null group, or a code past the table) reads the last word.
        GPU-resident: the caller rewrites it between frames.
    output : GraphDataView or GraphVectorView
        float32, the same kind and chunk lengths as ``values``; must not
        share a buffer with an input.

    Notes
    -----
    One pass per non-empty chunk reads 12 bytes a row and writes 4; one
    pipeline serves every chunk (row counts and element offsets are a
    uniform table built at compile time). Zero rows add no node. Does not
    write a 0/1 mask (compose one with :class:`GPUMask`), submit, read back
    or write the queue.
    """

    def __init__(self, *, id: str, values, codes, enabled, output):
        self.id = check_id("GPUGroupFilter", id)
        self.values, self.codes, self.enabled, self.output = values, codes, enabled, output
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the filter node (none for zero
        rows); returns its IDs."""
        name, id = "GPUGroupFilter", self.id
        kind, values = chunks_of(name, id, "values", self.values, graph, formats=("float32",))
        code_kind, codes = chunks_of(name, id, "codes", self.codes, graph)
        check_topology(name, id, "codes", "values", code_kind, codes, kind, values)
        out_kind, outs = chunks_of(name, id, "output", self.output, graph, formats=("float32",))
        check_topology(name, id, "output", "values", out_kind, outs, kind, values)
        enabled = single_row(name, id, "enabled", self.enabled, graph)
        for role, views in (("codes", codes), ("output", outs)):
            if kind == "data" and views[0].length != values[0].length:
                raise GraphValidationError(f'{name} "{id}" {role} has {views[0].length} rows but values has '
                                           f"{values[0].length}")
        refuse_overlaps(name, id, reads={"values": values, "codes": codes, "enabled": (enabled,)},
                        writes={"output": outs}, separate=True)
        work = [k for k, view in enumerate(outs) if view.length]
        if not work:
            self.node_ids = []
            return []
        last = enabled.length - 1

        def compile_filter(ctx):
            device = ctx.device
            kernel = ComputeKernel(device, code=wgsl("algorithms/shaders/group_filter.wgsl"), label=ctx.node_id)
            slot = max(int(device.limits["min-uniform-buffer-offset-alignment"]), _UNIFORM_BYTES)
            table = np.zeros((len(work), slot // 4), np.uint32)
            for row, k in enumerate(work):
                table[row, :6] = (outs[k].length,
                                  *(ComputeKernel.element_offset(v[k], device) for v in (values, codes, outs)), last,
                                  ComputeKernel.element_offset(enabled, device))
            uniform = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-chunks", data=table.tobytes(),
                                                              usage=wgpu.BufferUsage.UNIFORM))
            dispatches = [({0: (uniform, row * slot, _UNIFORM_BYTES), 1: values[k], 2: codes[k], 3: enabled,
                            4: outs[k]}, ceil_div(outs[k].length, WORKGROUP)) for row, k in enumerate(work)]

            def encode(compute_pass, frame):
                for bindings, groups in dispatches:
                    kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
            return encode

        resources = [(v[k], "storage-read") for v in (values, codes) for k in work]
        resources += [(enabled, "storage-read")] + [(outs[k], "storage-write") for k in work]
        self.node_ids = [graph.add_compute_node(id=id, resources=resources, compile=compile_filter)]
        return self.node_ids
