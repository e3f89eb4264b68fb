"""GPUReduction: sum, min, max or extent of uint32, sint32 or float32 on the GPU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.errors import GraphValidationError
from ._common import STORAGE, ceil_div, chunks_of, render, single_row, storage_alignment, view_accessor
from .scan import use_subgroups

__all__ = ["GPUReduction", "ReductionTuning"]

OPERATIONS = {"sum": 0, "min": 1, "max": 2, "extent": 3}
BLOCK = 256 * 4 * 8  # rows per first-level workgroup (reduction.wgsl: 256 lanes x ITEMS vec4)
TYPES = {
    "uint32": dict(TYPE="u32", MAXV="0xffffffffu", MINV="0u", VALID="true"),
    "sint32": dict(TYPE="i32", MAXV="2147483647i", MINV="(-2147483647i - 1i)", VALID="true"),
    "float32": dict(TYPE="f32", MAXV="bitcast<f32>(0x7f800000u)", MINV="bitcast<f32>(0xff800000u)",
                    VALID="(bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u"),
}


SINGLE_PASS_MAX_ROWS = 1 << 25  # auto single pass up to 32M rows (see ReductionTuning.single_pass)


@dataclass(frozen=True)
class ReductionTuning:
    """Structural knobs of the reduction (benchmarks and tests vary them).

    Attributes
    ----------
    group_blocks : int
        8192-row blocks one first-pass workgroup reduces (1 to 64): more means
        fewer workgroup reductions and fewer partials for the final pass.
    subgroups : bool or None
        None uses subgroup operations where the device has them; False forces
        the portable workgroup-memory path.
    single_pass : bool or None
        One dispatch: the workgroup that arrives last (an atomic ticket in a
        node-owned state buffer, tagged with an encoding parity so it is never
        cleared) reduces the partials and writes the output, instead of a
        second, one-workgroup dispatch. None (the default) picks it for inputs
        of at most ``SINGLE_PASS_MAX_ROWS`` rows: on the H200 it saved the
        second dispatch's fixed cost at 16M rows (1.16-1.17x a read against
        1.19-1.21x) and was 0.2-0.9 us slower at 64M.
    """

    group_blocks: int = 4
    subgroups: bool | None = None
    single_pass: bool | None = None


class GPUReduction:
    """Reduce a uint32, sint32 or float32 column to one or two GPU-resident rows.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-reduce-blocks"``...).
    input : GraphDataView or GraphVectorView
        Packed uint32, sint32 or float32 rows; a vector is reduced as one
        sequence (chunk order and storage unchanged, empty chunks skipped).
    output : GraphDataView
        Same format; one row for ``sum``/``min``/``max``, two for ``extent``
        (``[min, max]``). Must not share a buffer with input.
    operation : {"sum", "min", "max", "extent"}
        Integer sums wrap to 32 bits. Float ``min``/``max``/``extent`` ignore
        NaN and infinities; float ``sum`` is plain IEEE (NaN propagates).
        Empty input, or no finite float, writes zeros.

    Notes
    -----
    Two passes: workgroups of 4 blocks of 8192 rows (``ReductionTuning``)
    reduce into a partials transient (each row read once, vec4 loads), then
    one workgroup reduces the partials and writes the output
    (``ReductionTuning(single_pass=True)``: one dispatch, the last-arriving
    workgroup reduces the partials instead). The reduction order is fixed for a given length and
    device, so results are reproducible; subgroup-capable devices may differ
    from the portable path in the lowest float bits. Does not report which
    row won a min/max, submit, or read back.
    """

    def __init__(self, *, id: str, input, output, operation: str = "sum", tuning=None):
        if operation not in OPERATIONS:
            raise GraphValidationError(
                f'GPUReduction "{id}" operation must be one of {", ".join(OPERATIONS)} (got {operation!r})')
        self.id = id
        self.input = input
        self.output = output
        self.operation = operation
        self.tuning = tuning
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the nodes; returns their IDs."""
        name, id = "GPUReduction", self.id
        _, chunks = chunks_of(name, id, "input", self.input, graph, formats=tuple(TYPES))
        fmt = chunks[0].format.name
        rows = 2 if self.operation == "extent" else 1
        output = single_row(name, id, "output", self.output, graph, formats=(fmt,), rows=rows)
        if output.handle in {c.handle for c in chunks}:
            raise GraphValidationError(f'GPUReduction "{id}" output shares buffer "{output.handle.id}" with input')
        if sum(c.length for c in chunks) == 0:
            self.node_ids = [self._clear_output(graph, output, rows)]
            return self.node_ids
        work = [c for c in chunks if c.length]
        group_blocks = int(getattr(self.tuning, "group_blocks", ReductionTuning.group_blocks))
        if not 1 <= group_blocks <= 64:
            raise GraphValidationError(f'GPUReduction "{id}" group_blocks must be 1 to 64 (got {group_blocks})')
        blocks = [ceil_div(c.length, BLOCK * group_blocks) for c in work]
        slots = sum(blocks)
        partials = graph.create_transient_buffer(id=f"{id}-reduce-partials", byte_length=8 * slots, usage=STORAGE)
        op = OPERATIONS[self.operation]
        types = TYPES[fmt]
        state = {}

        single = getattr(self.tuning, "single_pass", None)
        if single is None:
            single = sum(c.length for c in work) <= SINGLE_PASS_MAX_ROWS and slots < 1 << 21
        if single and slots >= 1 << 21:  # reduction.wgsl: R_EPOCH_SHIFT
            raise GraphValidationError(f'GPUReduction "{id}" is too long for a single pass ({slots} partials)')

        def module(ctx, chunk, with_out=False):
            align = storage_alignment(ctx.device)
            parts = [render("reduce_types.wgsl", **types)]
            bindings = []
            if chunk is None:
                parts.append(render("view_none.wgsl", NAME="data"))
            else:
                text, b = view_accessor("data", 2, chunk, access="read", alignment=align)
                parts.append(text)
                bindings.append(b)
            if chunk is None or with_out:
                text, b = view_accessor("out", 3, output, access="read_write", alignment=align, vec4=False)
                parts.append(text)
                bindings.append(b)
            else:
                parts.append(render("view_none.wgsl", NAME="out"))
            sg = use_subgroups(ctx, self.tuning) if self.tuning is not None else bool(ctx.capabilities.subgroups)
            parts.append(render("reduce_subgroup.wgsl" if sg else "reduce_portable.wgsl"))
            parts.append(render("reduction.wgsl"))
            return "\n".join(parts), bindings

        def params_buffer(ctx):
            if "uniform" not in state:
                slot = int(ctx.device.limits["min-uniform-buffer-offset-alignment"])
                table = np.zeros((len(work) + 1, slot // 4), np.uint32)
                base = 0
                for row, (chunk, count) in enumerate(zip(work, blocks)):
                    table[row, :4] = (chunk.length, base, slots, count)
                    base += count
                table[len(work), :4] = (0, 0, slots, 0)
                state["uniform"] = ctx.own(ctx.device.create_buffer_with_data(
                    label=f"{id}-reduce-params", data=table.tobytes(), usage=wgpu.BufferUsage.UNIFORM))
                state["slot"] = slot
            return state["uniform"], state["slot"]

        constants = {"OP": op, "IS_FLOAT": int(fmt == "float32"), "GROUP_BLOCKS": group_blocks}
        if single:
            self.node_ids = [self._single_pass(graph, work, blocks, slots, output, module, params_buffer, constants)]
            return self.node_ids

        def compile_blocks(ctx):
            dispatches = _chunk_dispatches(ctx, work, blocks, module, constants, "blocks", params_buffer)
            return _encode_chunk_dispatches(dispatches, {1: partials})

        def compile_final(ctx):
            uniform, slot = params_buffer(ctx)
            code, bindings = module(ctx, None)
            kernel = ComputeKernel(ctx.device, code=code, entry_point="finish", constants=constants,
                                   label=ctx.node_id)

            def encode(compute_pass, frame):
                resolved = {b.binding: b.resolve(frame) for b in bindings}
                resolved.update({0: (uniform, len(work) * slot, 16), 1: partials})
                kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=1)
            return encode

        ids = [graph.add_compute_node(id=f"{id}-reduce-blocks",
                                      resources=[(c, "storage-read") for c in work] + [(partials, "storage-write")],
                                      compile=compile_blocks),
               graph.add_compute_node(id=f"{id}-reduce-final",
                                      resources=[(partials, "storage-read"), (output, "storage-write")],
                                      compile=compile_final)]
        self.node_ids = ids
        return ids

    def _single_pass(self, graph, work, blocks, slots, output, module, params_buffer, constants):
        """One node, one dispatch per chunk; the last workgroup finishes."""
        words = 4 + 4 * slots

        def compile_single(ctx):
            # Private to this node and never cleared (reduction.wgsl: parity tags).
            state = ctx.own(ctx.device.create_buffer(label=f"{ctx.node_id}-state", size=4 * words,
                                                     usage=wgpu.BufferUsage.STORAGE))
            # only the last chunk's dispatch can hold the last arrival, so only it binds the output
            dispatches = _chunk_dispatches(ctx, work, blocks, module, constants, "single", params_buffer,
                                           out_on_last=True)
            return _encode_chunk_dispatches(dispatches, {4: (state, 0, 4 * words)})

        return graph.add_compute_node(id=f"{self.id}-reduce-single",
                                      resources=[(c, "storage-read") for c in work] + [(output, "storage-write")],
                                      compile=compile_single)

    def _clear_output(self, graph, output, rows):
        def compile_clear(ctx):
            offset = ComputeKernel.element_offset(output, ctx.device)
            kernel = ComputeKernel(ctx.device, code=render("clear.wgsl"), constants={"OFF": offset, "WORDS": rows},
                                   label=ctx.node_id)

            def encode(compute_pass, frame):
                kernel.dispatch(compute_pass, frame, bindings={0: output}, workgroups=1)
            return encode

        return graph.add_compute_node(id=f"{self.id}-reduce-clear", resources=[(output, "storage-write")],
                                      compile=compile_clear)


def _chunk_dispatches(ctx, work, blocks, module, constants, entry_point, params_buffer, out_on_last=False) -> list:
    """One ``(kernel, bindings, params range, workgroups)`` per input chunk."""
    uniform, slot = params_buffer(ctx)
    last = len(work) - 1
    dispatches = []
    for row, (chunk, count) in enumerate(zip(work, blocks)):
        code, bindings = module(ctx, chunk, with_out=out_on_last and row == last)
        kernel = ComputeKernel(ctx.device, code=code, entry_point=entry_point, constants=constants,
                               label=ctx.node_id)
        dispatches.append((kernel, bindings, (uniform, row * slot, 16), count))
    return dispatches


def _encode_chunk_dispatches(dispatches, shared: dict):
    """The encode callback: every chunk's dispatch, its view bindings plus ``shared``."""
    def encode(compute_pass, frame):
        for kernel, bindings, params, count in dispatches:
            resolved = {b.binding: b.resolve(frame) for b in bindings}
            resolved.update({0: params, **shared})
            kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=count)
    return encode
