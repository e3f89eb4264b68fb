"""GPUColourRange: the range a colour map normalises by, computed on the GPU in the frame that uses it.

A heatmap's colours depend on GPU results (the grid of this frame), so the
range must be known on the GPU before the draw that colours it, without a
CPU round trip: this node writes ``[lo, hi, n, mode]`` into a small float32
output a fragment shader reads in the same frame. ``lo`` and ``hi`` are
exact order statistics of the values (ranks ``k`` and ``n - 1 - k``, ``k =
floor(fraction * (n - 1))``, over the ``n`` finite values, or the positive
ones for the ``log`` normalisation), found by a 4-pass radix select
(``shaders/colour_range.wgsl``): one reset dispatch, then per byte of the
key a counting dispatch over the values and a one-workgroup choosing
dispatch, nine dispatches in one compute node whatever the value count.

Normalisations: ``linear`` (min..max of the finite values), ``log`` (min..max
of the positive values; the shader maps through log), ``robust`` (the
``percentile``-th to ``100 - percentile``-th values, default 1st to 99th).
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphValidationError
from ..graph import ComputeKernel
from ..graph.shaders import wgsl

__all__ = ["GPUColourRange", "COLOUR_NORMALISATIONS", "ROBUST_PERCENTILE"]

COLOUR_NORMALISATIONS = ("linear", "log", "robust")
#: Default percentile cut of the ``robust`` normalisation (each end).
ROBUST_PERCENTILE = 1.0
_WG = 256
_MAX_COUNT_GROUPS = 512


class GPUColourRange:
    """One compute node writing the colour range of a float32 view.

    Parameters
    ----------
    id : str
        Node and transient IDs derive from it (``"{id}"``, ``"{id}-scratch"``).
    input : GraphDataView
        ``float32`` values (NaN and infinities are skipped: empty cells).
    output : GraphDataView
        ``float32``, 4 elements: ``lo, hi, n, mode`` (``mode`` the index in
        :data:`COLOUR_NORMALISATIONS`).
    normalisation : {"linear", "log", "robust"}
    percentile : float
        The ``robust`` cut at each end, in percent (0 <= p < 50).

    Notes
    -----
    Parameters change with :meth:`set_normalisation` (a ``queue.write_buffer``
    of a 16-byte uniform), never a recompilation. Does not submit or read
    back; the caller samples ``output`` when the host needs the range (labels).
    """

    def __init__(self, *, id: str, input, output, normalisation: str = "linear",
                 percentile: float = ROBUST_PERCENTILE):
        self.id, self.input, self.output = id, input, output
        if getattr(input, "format", None) is None or str(input.format) != "float32":
            raise GraphValidationError(f'GPUColourRange "{id}" input must be a float32 view (got {input!r})')
        if output.length < 4 or str(output.format) != "float32":
            raise GraphValidationError(f'GPUColourRange "{id}" output must be 4 float32 (got {output!r})')
        self._uniform = None
        self._device = None
        self._params = self._pack(normalisation, percentile)

    def _pack(self, normalisation, percentile) -> bytes:
        if normalisation not in COLOUR_NORMALISATIONS:
            raise GraphValidationError(f'GPUColourRange "{self.id}" normalisation {normalisation!r} is not one of '
                                       f"{COLOUR_NORMALISATIONS}")
        p = float(percentile)
        if not 0.0 <= p < 50.0:
            raise GraphValidationError(f'GPUColourRange "{self.id}" percentile must be in [0, 50) (got {percentile!r})')
        self.normalisation, self.percentile = normalisation, p
        words = np.zeros(4, np.uint32)
        words[0] = COLOUR_NORMALISATIONS.index(normalisation)
        words[1:2].view(np.float32)[0] = p / 100.0 if normalisation == "robust" else 0.0
        return words.tobytes()

    def set_normalisation(self, normalisation: str, *, percentile: float = ROBUST_PERCENTILE, queue=None) -> None:
        """Use ``normalisation`` from the next encoding on (written only when it changed)."""
        params = self._pack(normalisation, percentile)
        if params == self._params:
            return
        self._params = params
        if self._uniform is not None:
            (queue or self._device.queue).write_buffer(self._uniform, 0, params)

    def add_to_graph(self, graph) -> str:
        """Add the range node (and its scratch transient) to ``graph``; return
        the node ID. Nothing is recorded here; it never submits or reads back."""
        cells = int(self.input.length)
        scratch = graph.create_transient_buffer(id=f"{self.id}-scratch", byte_length=4 * 520,
                                                usage=wgpu.BufferUsage.STORAGE)
        code = wgsl("render/shaders/colour_range.wgsl")
        groups = max(1, min(-(-cells // _WG), _MAX_COUNT_GROUPS))

        def compile_range(ctx):
            device = ctx.device
            kernels = {name: ComputeKernel(device, code=code, entry_point=name, constants={"CELLS": max(cells, 1)},
                                           label=f"{self.id}-{name}") for name in ("reset", "count", "choose")}
            self._device = device
            self._uniform = ctx.own(device.create_buffer_with_data(
                label=f"{self.id}-params", data=self._params,
                usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST))
            slot = max(256, int(device.limits["min-uniform-buffer-offset-alignment"]))
            table = np.zeros((4, slot // 4), np.uint32)
            table[:, 0] = np.arange(4)
            passes = ctx.own(device.create_buffer_with_data(label=f"{self.id}-passes", data=table.tobytes(),
                                                           usage=wgpu.BufferUsage.UNIFORM))
            uniform = self._uniform

            def encode(compute_pass, frame):
                kernels["reset"].dispatch(compute_pass, frame, bindings={3: scratch}, workgroups=1)
                if cells == 0:
                    return
                for digit in range(4):
                    step = (passes, digit * slot, 16)
                    kernels["count"].dispatch(compute_pass, frame, bindings={
                        0: uniform, 1: step, 2: self.input, 3: scratch}, workgroups=groups)
                    kernels["choose"].dispatch(compute_pass, frame, bindings={
                        0: uniform, 1: step, 3: scratch, 4: self.output}, workgroups=1)
            return encode

        return graph.add_compute_node(id=self.id, compile=compile_range, resources=[
            (self.input, "storage-read"), (scratch, "storage-read-write"), (self.output, "storage-write")])
