"""GPUGather: the rows of a table at the given indices, a fill word past its end."""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphTypeError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .validation import check_topology, chunks_of, refuse_overlaps

__all__ = ["GPUGather", "GATHER_FORMATS"]

#: Table and output formats a gather copies (one 32-bit word a row).
GATHER_FORMATS = ("uint32", "sint32", "float32")
_UNIFORM_BYTES = 32  # gather.wgsl: Chunk (rows, index/out/table offsets, table rows, fill), padded


def _fill_word(owner: str, id: str, fill, fmt: str) -> int:
    """The bits of ``fill`` as a ``fmt`` word, checked."""
    if fmt == "float32":
        if isinstance(fill, bool) or not isinstance(fill, (int, float, np.integer, np.floating)):
            raise GraphTypeError(f'{owner} "{id}" fill must be a number (got {type(fill).__name__})')
        return int(np.float32(fill).view(np.uint32))
    if isinstance(fill, bool) or not isinstance(fill, (int, np.integer)):
        raise GraphTypeError(f'{owner} "{id}" fill must be an int for a {fmt} table (got {type(fill).__name__})')
    lo, hi = (0, 2 ** 32 - 1) if fmt == "uint32" else (-2 ** 31, 2 ** 31 - 1)
    if not lo <= int(fill) <= hi:
        raise GraphValidationError(f'{owner} "{id}" fill {fill} does not fit {fmt} ({lo} to {hi})')
    return int(fill) & 0xFFFFFFFF


class GPUGather:
    """``output[i] = table[indices[i]]``, or ``fill`` where the index is past
    the table's end: a table lookup by row (Arrow's ``take``), e.g. a
    dimension table's column by the row a hash-index query found.

    Parameters
    ----------
    id : str
        The node's ID (``"{id}"``).
    indices : GraphDataView or GraphVectorView
        Packed ``uint32`` row numbers into ``table``; any value at or past
        ``table.length`` (e.g. :data:`~gpuviz.algorithms.NOT_FOUND`) writes
        ``fill``.
    table : GraphDataView
        Packed ``uint32``, ``sint32`` (int32) or ``float32``, at least one row.
    output : GraphDataView or GraphVectorView
        Packed, the table's format, the same kind as ``indices`` (a data view
        at least as long, or a vector with identical chunk lengths); must not
        share a buffer with an input.
    fill : int or float
        What rows whose index is outside the table get (a value of the
        table's format; default 0).

    Notes
    -----
    One pass per non-empty chunk reads 8 bytes a row (index, table word)
    and writes 4; one pipeline serves every chunk and format (words are
    copied as bits; offsets are a uniform table built at compile time). The
    table and indices may change between encodings (no recompile); ``fill``
    is structural. Zero rows add no node. Does not check or report indices
    that miss (count them with a found mask), does not gather rows wider
    than one word, and does not submit, read back or write the queue.
    """

    owner = "GPUGather"

    def __init__(self, *, id: str, indices, table, output, fill=0):
        self.id = check_id(self.owner, id)
        self.indices, self.table, self.output, self.fill = indices, table, output, fill
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the gather node (none for zero
        rows); returns its IDs."""
        owner, id = self.owner, self.id
        kind, indices = chunks_of(owner, id, "indices", self.indices, graph)
        table_kind, tables = chunks_of(owner, id, "table", self.table, graph, formats=GATHER_FORMATS)
        if table_kind != "data":
            raise GraphValidationError(f'{owner} "{id}" table must be a GraphDataView (got a vector view)')
        table = tables[0]
        if table.length < 1:
            raise GraphValidationError(f'{owner} "{id}" table has no rows (a gather needs at least one)')
        fmt = table.format.name
        out_kind, outs = chunks_of(owner, id, "output", self.output, graph, formats=(fmt,))
        check_topology(owner, id, "output", "indices", out_kind, outs, kind, indices)
        if kind == "data" and outs[0].length < indices[0].length:
            raise GraphValidationError(f'{owner} "{id}" output has {outs[0].length} rows but indices has '
                                       f"{indices[0].length}")
        fill = _fill_word(owner, id, self.fill, fmt)
        refuse_overlaps(owner, id, reads={"indices": indices, "table": (table,)}, writes={"output": outs},
                        separate=True)
        work = [k for k, view in enumerate(indices) if view.length]
        if not work:
            self.node_ids = []
            return []

        def compile_gather(ctx):
            device = ctx.device
            kernel = ComputeKernel(device, code=wgsl("algorithms/shaders/gather.wgsl"), label=ctx.node_id)
            slot = max(int(device.limits["min-uniform-buffer-offset-alignment"]), _UNIFORM_BYTES)
            rows = np.zeros((len(work), slot // 4), np.uint32)
            offset = ComputeKernel.element_offset
            for row, k in enumerate(work):
                rows[row, :6] = (indices[k].length, offset(indices[k], device), offset(outs[k], device),
                                 offset(table, device), table.length, fill)
            uniform = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-chunks", data=rows.tobytes(),
                                                              usage=wgpu.BufferUsage.UNIFORM))
            dispatches = [({0: (uniform, row * slot, _UNIFORM_BYTES), 1: indices[k], 2: table, 3: outs[k]},
                           ceil_div(indices[k].length, WORKGROUP)) for row, k in enumerate(work)]

            def encode(compute_pass, frame):
                for bindings, groups in dispatches:
                    kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
            return encode

        resources = [(indices[k], "storage-read") for k in work] + [(table, "storage-read")]
        resources += [(outs[k], "storage-write") for k in work]
        self.node_ids = [graph.add_compute_node(id=id, resources=resources, compile=compile_gather)]
        return self.node_ids
