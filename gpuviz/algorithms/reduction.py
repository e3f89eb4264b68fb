"""GPUReduction: sum, min, max or extent of uint32, sint32 or float32 on the GPU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import ceil_div, use_subgroups
from .validation import checked_tuning, chunks_of, refuse_overlaps, single_row
from .views import storage_alignment, uniform_slot, view_binding

__all__ = ["GPUReduction", "ReductionTuning"]

OPERATIONS = {"sum": 0, "min": 1, "max": 2, "extent": 3}
FORMATS = ("uint32", "sint32", "float32")  # reduce_types.wgsl
BLOCK = 256 * 4 * 8  # rows per first-level workgroup (reduction.wgsl: 256 lanes x ITEMS vec4)
PARAMS_BYTES = 32  # reduction.wgsl: ReduceParams


SINGLE_PASS_MAX_ROWS = 1 << 25  # auto single pass up to 32M rows (see ReductionTuning.single_pass)


@dataclass(frozen=True, kw_only=True)
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
        of at most ``SINGLE_PASS_MAX_ROWS`` rows: up to there saving the
        second dispatch's fixed cost outweighs the ticket, beyond it the
        two-dispatch reduction is faster.
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
    tuning : ReductionTuning, optional
        Structural knobs (anything else raises :class:`~gpuviz.GraphTypeError`).

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

    def __init__(self, *, id: str, input, output, operation: str = "sum", tuning: ReductionTuning | None = None):
        if operation not in OPERATIONS:
            raise GraphValidationError(
                f'GPUReduction "{id}" operation must be one of {", ".join(OPERATIONS)} (got {operation!r})')
        checked_tuning("GPUReduction", id, tuning, ReductionTuning)
        self.id = check_id("GPUReduction", id)
        self.input = input
        self.output = output
        self.operation = operation
        self.tuning = tuning
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the nodes; returns their IDs."""
        name, id = "GPUReduction", self.id
        tuning = checked_tuning(name, id, self.tuning, ReductionTuning)
        _, chunks = chunks_of(name, id, "input", self.input, graph, formats=FORMATS)
        fmt = chunks[0].format.name
        rows = 2 if self.operation == "extent" else 1
        output = single_row(name, id, "output", self.output, graph, formats=(fmt,), rows=rows)
        if output.handle in {c.handle for c in chunks}:
            raise GraphValidationError(f'GPUReduction "{id}" output shares buffer "{output.handle.id}" with input')
        refuse_overlaps(name, id, reads={"input": chunks}, writes={"output": output}, separate=True)
        if sum(c.length for c in chunks) == 0:
            self.node_ids = [self._clear_output(graph, output, rows)]
            return self.node_ids
        work = [c for c in chunks if c.length]
        group_blocks = int(tuning.group_blocks)
        if not 1 <= group_blocks <= 64:
            raise GraphValidationError(f'GPUReduction "{id}" group_blocks must be 1 to 64 (got {group_blocks})')
        blocks = [ceil_div(c.length, BLOCK * group_blocks) for c in work]
        slots = sum(blocks)
        single = tuning.single_pass
        if single is None:
            single = sum(c.length for c in work) <= SINGLE_PASS_MAX_ROWS and slots < 1 << 21
        if single and slots >= 1 << 21:  # reduction.wgsl: R_EPOCH_SHIFT
            raise GraphValidationError(f'GPUReduction "{id}" is too long for a single pass ({slots} partials)')
        constants = {"OP": OPERATIONS[self.operation], "IS_FLOAT": int(fmt == "float32"), "GROUP_BLOCKS": group_blocks}
        plan = _Plan(work, blocks, output, fmt, tuning.subgroups, constants)
        readers = [(c, "storage-read") for c in work]
        if single:
            self.node_ids = [self._single_pass(graph, plan, readers, output)]
            return self.node_ids
        partials = graph.create_transient_buffer(id=f"{id}-reduce-partials", byte_length=8 * slots,
                                                 usage=wgpu.BufferUsage.STORAGE)

        def compile_final(ctx):
            plan.compile(ctx)
            kernel = plan.kernel(ctx, "finish", "none", with_out=True)
            bindings = {0: (plan.uniform, len(work) * plan.slot, PARAMS_BYTES), 1: partials}

            def encode(compute_pass, frame):
                kernel.dispatch(compute_pass, frame, bindings={3: plan.out.storage.resolve(frame), **bindings},
                                workgroups=1)
            return encode

        ids = [graph.add_compute_node(id=f"{id}-reduce-blocks", resources=readers + [(partials, "storage-write")],
                                      compile=lambda ctx: plan.encoder(ctx, "blocks", {1: partials})),
               graph.add_compute_node(id=f"{id}-reduce-final",
                                      resources=[(partials, "storage-read"), (output, "storage-write")],
                                      compile=compile_final)]
        self.node_ids = ids
        return ids

    def _single_pass(self, graph, plan, readers, output):
        """One node, one dispatch per chunk; the last workgroup finishes."""
        words = 4 + 4 * sum(plan.blocks)

        def compile_single(ctx):
            # Private to this node and never cleared (reduction.wgsl: parity tags).
            state = ctx.own(ctx.device.create_buffer(label=f"{ctx.node_id}-state", size=4 * words,
                                                     usage=wgpu.BufferUsage.STORAGE))
            # only the last chunk's dispatch can hold the last arrival, so only it binds the output
            return plan.encoder(ctx, "single", {4: (state, 0, 4 * words)}, out_on_last=True)

        return graph.add_compute_node(id=f"{self.id}-reduce-single", resources=readers + [(output, "storage-write")],
                                      compile=compile_single)

    def _clear_output(self, graph, output, rows):
        def compile_clear(ctx):
            offset = ComputeKernel.element_offset(output, ctx.device)
            kernel = ComputeKernel(ctx.device, code=wgsl("algorithms/shaders/clear.wgsl"),
                                   constants={"OFF": offset, "WORDS": rows}, label=ctx.node_id)

            def encode(compute_pass, frame):
                kernel.dispatch(compute_pass, frame, bindings={0: output}, workgroups=1)
            return encode

        return graph.add_compute_node(id=f"{self.id}-reduce-clear", resources=[(output, "storage-write")],
                                      compile=compile_clear)


class _Plan:
    """The chunk dispatches of one reduction: per-chunk view bindings and the
    uniform table of their sizes and view offsets (one slot per chunk, then
    the final pass's), shared by the nodes of the reduction."""

    def __init__(self, work, blocks, output, fmt, subgroups, constants):
        self.work, self.blocks, self.output = work, blocks, output
        self.fmt, self.subgroups, self.constants = fmt, subgroups, constants
        self.uniform = None

    def compile(self, ctx):
        """Bind the views and create the uniform table (once)."""
        if self.uniform is not None:
            return
        align = storage_alignment(ctx.device)
        self.out = view_binding(3, self.output, alignment=align, vec4=False)
        self.views = [view_binding(2, c, alignment=align) for c in self.work]
        self.slot = uniform_slot(ctx.device, PARAMS_BYTES)
        slots = sum(self.blocks)
        table = np.zeros((len(self.work) + 1, self.slot // 4), np.uint32)
        base = 0
        for row, (chunk, view, count) in enumerate(zip(self.work, self.views, self.blocks)):
            table[row, :6] = (chunk.length, base, slots, count, view.offset, self.out.offset)
            base += count
        table[len(self.work), :6] = (0, 0, slots, 0, 0, self.out.offset)
        self.uniform = ctx.own(ctx.device.create_buffer_with_data(
            label=f"{ctx.node_id}-params", data=table.tobytes(), usage=wgpu.BufferUsage.UNIFORM))

    def kernel(self, ctx, entry_point, layout, *, with_out):
        """The kernel of ``entry_point`` for a data view of ``layout``."""
        code = wgsl("algorithms/shaders/reduction.wgsl", type=self.fmt, data=layout,
                    out=self.out.layout if with_out else "none",
                    subgroups=use_subgroups(ctx, self.subgroups))
        return ComputeKernel(ctx.device, code=code, entry_point=entry_point, constants=self.constants,
                             label=ctx.node_id)

    def encoder(self, ctx, entry_point, shared: dict, *, out_on_last=False):
        """The encode callback: one ``entry_point`` dispatch per chunk, its
        view bindings plus ``shared``."""
        self.compile(ctx)
        last = len(self.work) - 1
        dispatches = []
        for row, (view, count) in enumerate(zip(self.views, self.blocks)):
            with_out = out_on_last and row == last
            bindings = [view.storage] + ([self.out.storage] if with_out else [])
            dispatches.append((self.kernel(ctx, entry_point, view.layout, with_out=with_out), bindings,
                               (self.uniform, row * self.slot, PARAMS_BYTES), count))

        def encode(compute_pass, frame):
            for kernel, bindings, params, count in dispatches:
                resolved = {b.binding: b.resolve(frame) for b in bindings}
                resolved.update({0: params, **shared})
                kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=count)
        return encode
