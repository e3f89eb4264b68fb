"""GPUScan: exclusive, inclusive and segmented uint32 prefix sums.

The kernel is a single-pass chained scan with decoupled look-back (one read
and one write of every row); see ``shaders/scan.wgsl`` for the algorithm and
its never-hang guarantee. :class:`ChainedScan` is the reusable core that
GPUCompaction fuses its scatter into.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div, use_subgroups
from .validation import (byte_span, check_topology, checked_tuning, chunks_of, overlaps,
                         refuse_overlaps)
from .views import StorageBinding, binding_range, storage_alignment, uniform_slot, view_binding

__all__ = ["GPUScan", "ScanTuning"]


@dataclass(frozen=True, kw_only=True)
class ScanTuning:
    """Structural knobs of the chained scan (benchmarks and tests vary them).

    Attributes
    ----------
    rows : int
        vec4 rows per lane, a multiple of 4: a tile holds ``1024 * rows`` values.
    lookback : int
        Predecessor states read per look-back step (1 to 256).
    spin_limit : int
        Fruitless polls of an unpublished predecessor before the waiting tile
        reduces that predecessor's input itself (0 forces it at once).
    subgroups : bool or None
        None uses subgroup operations where the device has them; False forces
        the portable workgroup-memory path.
    spin_window : int
        Predecessor states read per step while the nearest is unpublished.
    group_lookback : bool
        Where subgroups are used, let one subgroup walk back alone with
        subgroup minima and sums (no workgroup barrier per step). False
        (default) keeps the workgroup-wide walk, 64 states a step: fewer
        steps per tile, which makes it the faster walk.
    early_publish : bool
        With the workgroup walk, lane 0 publishes the tile's inclusive prefix
        as soon as it sees the walk end, before the workgroup barrier that
        hands the carry to every lane (default False: published after it).
    clear_pass : bool
        Zero the tile state in a separate pass before every encoding (graph
        transient). False (default) keeps the state in a node-owned buffer
        created zeroed at compile time and tags its words with an encoding
        parity instead, so no clear pass runs.
    diagnostics : bool
        Count tiles, look-back steps, waiting steps and fallbacks into a small
        node-owned buffer (``ChainedScan.diagnostics``); for profiling only.
    runtime_checks : bool
        Compile with wgpu's bounds checks and forced loop bounding (True) or
        without them (False; every index of this kernel is in range and
        every loop ends by construction). The scan runs no faster without
        them, so the default keeps them. See
        :mod:`gpuviz.graph.shaders`.
    """

    rows: int = 12
    lookback: int = 64
    spin_limit: int = 512
    subgroups: bool | None = None
    spin_window: int = 4
    group_lookback: bool = False
    early_publish: bool = False
    clear_pass: bool = False
    diagnostics: bool = False
    runtime_checks: bool = True

    @property
    def tile(self) -> int:
        """Rows one scan workgroup handles (``WORKGROUP * 4 * rows``)."""
        return WORKGROUP * 4 * self.rows


STORAGE = wgpu.BufferUsage.STORAGE
PARAMS_BYTES = 48  # scan.wgsl: ScanParams (sizes, then the views' element offsets)
SCATTER_TABLE_BINDING = 30  # scan.wgsl: scatter_chunks (31 is diag)


def _dst_binding(j: int) -> int:
    """scan.wgsl binding of a compaction's j-th output buffer: 7, 8, ...
    skipping the table (30) and diagnostics (31) bindings."""
    return 7 + j if 7 + j < SCATTER_TABLE_BINDING else 9 + j


def _padded(count: int, most: int) -> int:
    """``count`` rounded up to a power of two, but not past ``most`` (unless
    ``count`` is): a bounded number of distinct binding counts."""
    return max(count, min(1 << (count - 1).bit_length(), most))


class ChainedScan:
    """One chained scan over a logical sequence of chunks (internal).

    Parameters
    ----------
    id : str
        Node-ID prefix: adds ``"{id}-tiles"`` (whose tile state is a buffer the
        node owns), or with ``tuning.clear_pass`` also ``"{id}-clear"`` and the
        transient ``"{id}-tile-state"``.
    data : list of GraphDataView
        The scanned chunks (selection flags when ``scatter`` is given).
    heads, out, vals : list of GraphDataView or None, optional
        Per-chunk segment starts, scan outputs, and values to compact.
    scatter : list of GraphDataView, optional
        Output chunks filled as one dense sequence (compaction).
    total : GraphDataView, optional
        One row that receives the sum of everything (a compaction count).
    """

    def __init__(self, *, id, data, heads=None, out=None, vals=None, scatter=None, total=None,
                 inclusive=False, tuning: ScanTuning | None = None, owner="GPUScan", owner_id=None):
        self.id = id
        self.owner = owner
        self.owner_id = owner_id or id
        self.data = list(data)
        n = len(self.data)
        self.heads = list(heads) if heads is not None else [None] * n
        self.out = list(out) if out is not None else [None] * n
        self.vals = list(vals) if vals is not None else [None] * n
        self.scatter = list(scatter) if scatter is not None else None
        self.total = total
        self.inclusive = inclusive
        self.tuning = checked_tuning(owner, self.owner_id, tuning, ScanTuning)
        self.diagnostics = None  # counters buffer when tuning.diagnostics
        if self.tuning.rows % 4 or self.tuning.rows < 4 or not 1 <= self.tuning.lookback <= WORKGROUP:
            raise GraphValidationError(f'{owner} "{self.owner_id}" has invalid scan tuning {self.tuning}')

    def add_to_graph(self, graph) -> list:
        tile = self.tuning.tile
        tiles = [ceil_div(v.length, tile) for v in self.data]
        total_tiles = sum(tiles)
        if total_tiles == 0:
            return []
        if total_tiles >= 1 << 21:  # scan.wgsl: EPOCH_SHIFT
            raise GraphValidationError(f'{self.owner} "{self.owner_id}" is too long for one scan (needs '
                                       f"{total_tiles} tiles, at most {(1 << 21) - 1})")
        if self.scatter is not None:
            limit = int(graph.device.limits["max-storage-buffers-per-shader-stage"])
            used = [v for v in self.scatter if v.length]
            need = 5 + len({v.handle for v in used}) + (len(used) > 1)  # + the chunk table
            if need > limit:
                raise GraphValidationError(
                    f'{self.owner} "{self.owner_id}" output spans too many buffers for one kernel (needs {need} '
                    f"storage bindings, the device allows {limit})")
        words = 4 + 4 * total_tiles
        self._check_binding_sizes(graph.device, 4 * words)
        node_ids = []
        resources = []
        if self.tuning.clear_pass:
            state = graph.create_transient_buffer(id=f"{self.id}-tile-state", byte_length=4 * words, usage=STORAGE)
            self._state = StorageBinding(0, state, 0, 4 * words)

            def compile_clear(ctx):
                kernel = ComputeKernel(ctx.device, code=wgsl("algorithms/shaders/clear.wgsl"), label=ctx.node_id)

                def encode(compute_pass, frame):
                    kernel.dispatch(compute_pass, frame, bindings={0: self._state.resolve(frame)},
                                    workgroups=ceil_div(words, WORKGROUP))
                return encode

            node_ids.append(graph.add_compute_node(id=f"{self.id}-clear", resources=[(state, "storage-write")],
                                                   compile=compile_clear))
            resources.append((state, "storage-read-write"))
        else:
            # Private to this node and never cleared: the words carry the
            # encoding's parity (scan.wgsl), and WebGPU creates buffers zeroed.
            self._state = None
        for i in range(len(self.data)):
            resources += [(self.data[i], "storage-read")]
            resources += [(v, "storage-read") for v in (self.heads[i], self.vals[i]) if v is not None]
            if self.out[i] is not None:
                resources.append((self.out[i], "storage-write"))
        for view in self.scatter or ():
            resources.append((view, "storage-write"))
        if self.total is not None:
            resources.append((self.total, "storage-write"))
        node_ids.append(graph.add_compute_node(id=f"{self.id}-tiles", resources=resources,
                                               compile=lambda ctx: self._compile_tiles(ctx, tiles, words)))
        return node_ids

    def _check_binding_sizes(self, device, state_bytes) -> None:
        """Refuse a scan whose kernel would bind more bytes at once than the
        device's ``max-storage-buffer-binding-size`` (wgpu would reject it only
        when the graph encodes, in its own words): every view, each output
        buffer's scattered range, and the tile state."""
        limit = int(device.limits["max-storage-buffer-binding-size"])
        align = storage_alignment(device)
        bound = []
        for role, views in (("scanned rows", self.data), ("segment flags", self.heads), ("scan output", self.out),
                            ("values", self.vals), ("count", [self.total])):
            bound += [(f'{role} (chunk {i}) in buffer "{v.handle.id}"', binding_range([v], align)[1])
                      for i, v in enumerate(views) if v is not None and v.length]
        used = [v for v in self.scatter or () if v.length]
        for handle in dict.fromkeys(v.handle for v in used):
            size = binding_range([v for v in used if v.handle is handle], align)[1]
            bound.append((f'output in buffer "{handle.id}"', size))
        bound.append(("tile state", state_bytes))
        for what, size in bound:
            if size > limit:
                raise GraphValidationError(
                    f'{self.owner} "{self.owner_id}" would bind {size} bytes of its {what} in one storage binding, '
                    f"over the device's max-storage-buffer-binding-size of {limit} bytes (split the rows into "
                    "vector chunks of at most that size)")

    def _compile_tiles(self, ctx, tiles, words):
        """The tiles node's encode callback: one dispatch per non-empty chunk."""
        align = storage_alignment(ctx.device)
        # Per-dispatch sizes and view offsets live in one small uniform buffer
        # made now (not at encode), one aligned slot per chunk dispatch.
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        chunks = [i for i, count in enumerate(tiles) if count]
        last, total_tiles = chunks[-1], sum(tiles)
        params = np.zeros((len(chunks), slot // 4), np.uint32)
        scatter_bindings, scatter, table, scatter_off = self._scatter_plan(ctx.device, align)
        kernels = []
        for row, i in enumerate(chunks):
            has_total = self.total is not None and i == last
            kernel, offsets, bindings = self._kernel(ctx, i, align, has_total, scatter_bindings, scatter)
            params[row, :11] = (self.data[i].length, sum(tiles[:i]), tiles[i],
                                total_tiles - 1 if has_total else 0xFFFFFFFF, total_tiles - 1, *offsets,
                                scatter_off)
            kernels.append((kernel, bindings))
        uniform = ctx.own(ctx.device.create_buffer_with_data(
            label=f"{ctx.node_id}-params", data=params.tobytes(), usage=wgpu.BufferUsage.UNIFORM))
        if table is not None:
            table = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-scatter-chunks",
                                                               data=table.tobytes(), usage=STORAGE))
        owned = None
        if self._state is None:
            owned = ctx.own(ctx.device.create_buffer(label=f"{ctx.node_id}-tile-state", size=4 * words,
                                                     usage=wgpu.BufferUsage.STORAGE))
        dispatches = []
        for row, (i, (kernel, bindings)) in enumerate(zip(chunks, kernels)):
            fixed = {6: (uniform, row * slot, PARAMS_BYTES)}
            if owned is not None:
                fixed[0] = (owned, 0, 4 * words)
            if table is not None:
                fixed[SCATTER_TABLE_BINDING] = (table, 0, table.size)
            dispatches.append((kernel, bindings, fixed, tiles[i]))

        def encode(compute_pass, frame):
            for kernel, bindings, fixed, count in dispatches:
                resolved = {b.binding: (self.diagnostics, 0, 64) if b.handle is None else b.resolve(frame)
                            for b in bindings}
                resolved.update(fixed)
                kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=count)
        return encode

    def _kernel(self, ctx, i, align, has_total, scatter_bindings, scatter):
        """Chunk ``i``'s kernel, its view offsets (ScanParams order: data,
        heads, out, vals, total) and its storage bindings."""
        written = {v.handle for v in (self.out[i], self.total) if v is not None}
        written |= {b.handle for b in scatter_bindings}
        layouts, access, offsets, bindings = {}, {}, [], []
        for binding, name, view, write in ((1, "data", self.data[i], False), (2, "heads", self.heads[i], False),
                                           (3, "out", self.out[i], True), (4, "vals", self.vals[i], False)):
            access[name] = "read_write" if view is not None and (write or view.handle in written) else "read"
            layouts[name] = "none"
            offsets.append(0)
            if view is not None:
                vb = view_binding(binding, view, alignment=align)
                layouts[name], offsets[-1] = vb.layout, vb.offset
                bindings.append(vb.storage)
        offsets.append(0)
        total_layout = "none"
        if has_total:
            vb = view_binding(5, self.total, alignment=align, vec4=False)
            total_layout, offsets[-1] = vb.layout, vb.offset
            bindings.append(vb.storage)
        bindings += scatter_bindings
        tuning = self.tuning
        code = wgsl("algorithms/shaders/scan.wgsl", subgroups=use_subgroups(ctx, tuning.subgroups), rows=tuning.rows,
                    layouts=layouts, access=access, total=total_layout, scatter=scatter,
                    diagnostics=tuning.diagnostics)
        constants = {
            "INCLUSIVE": int(self.inclusive), "SEGMENTED": int(self.heads[i] is not None),
            "COMPACT": int(self.scatter is not None), "LOOKBACK": tuning.lookback,
            "SPIN_LIMIT": tuning.spin_limit, "SPIN_WINDOW": tuning.spin_window,
            "GROUP_LOOKBACK": int(tuning.group_lookback), "EARLY_PUBLISH": int(tuning.early_publish),
        }
        if tuning.diagnostics:
            if self.diagnostics is None:
                self.diagnostics = ctx.own(ctx.device.create_buffer(
                    size=64, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC))
            bindings.append(StorageBinding(31, None, 0, 64))
        kernel = ComputeKernel(ctx.device, code=code, constants=constants, label=ctx.node_id,
                               bounds_checks=tuning.runtime_checks, loop_bounding=tuning.runtime_checks)
        return kernel, offsets, ([self._state] if self._state is not None else []) + bindings

    def _scatter_plan(self, device, align) -> tuple:
        """``(bindings, template value, table, offset)`` of ``scatter(k, v)``
        (scan.wgsl): one dst binding per output buffer, padded with repeats of
        the last to a power of two so that the number of distinct kernels
        stays bounded whatever the chunk count. One non-empty output chunk is
        written at its element ``offset`` (a ScanParams field; 0 folded into
        the code); several go through ``table``: per chunk its end in the
        compacted sequence, its offset minus its first row, its dst slot.
        Every chunk dispatch binds every output buffer, so they share one
        pipeline."""
        if self.scatter is None:
            return [], None, None, 0
        used = [v for v in self.scatter if v.length]
        slots = {}
        for view in used:
            slots.setdefault(view.handle, len(slots))
        bindings = [StorageBinding(_dst_binding(j), h, *binding_range([v for v in used if v.handle is h], align))
                    for h, j in slots.items()]
        table = len(used) > 1
        limit = int(device.limits["max-storage-buffers-per-shader-stage"]) - 5 - table
        padded = _padded(len(slots), limit)
        bindings += [replace(bindings[-1], binding=_dst_binding(j)) for j in range(len(slots), padded)]
        value = {"dst": [b.binding for b in bindings], "table": table, "start": False}
        if not table:
            offset = (used[0].byte_offset - bindings[0].start) // 4
            return bindings, {**value, "start": offset == 0}, None, offset
        rows, end = np.zeros((len(used), 4), np.uint32), 0
        for j, view in enumerate(used):
            b = bindings[slots[view.handle]]
            rows[j, :3] = (end + view.length, ((view.byte_offset - b.start) // 4 - end) % (1 << 32), slots[view.handle])
            end += view.length
        return bindings, value, rows, 0


class GPUScan:
    """Exclusive or inclusive, optionally segmented, prefix sum of packed uint32.

    Parameters
    ----------
    id : str
        Prefix of the node and transient IDs (``"{id}-scan-tiles"``...).
    input, output : GraphDataView or GraphVectorView
        Both packed uint32 data views (output at least as long as input) or
        both vector views with identical ordered chunk lengths. A vector is one
        logical sequence: chunk boundaries and empty chunks are kept, and the
        running sum continues across chunks.
    mode : {"exclusive", "inclusive"}
    segment_flags : GraphDataView or GraphVectorView, optional
        Same kind as input (data view at least as long; vector with identical
        chunk lengths). The first row always starts a segment; every later
        nonzero flag starts one, also on a chunk's first row. Must not share a
        buffer with output.
    tuning : ScanTuning, optional
        Structural knobs (anything else raises :class:`~gpuviz.GraphTypeError`).

    Notes
    -----
    Arithmetic wraps modulo 2**32. One kernel pass reads every row once and
    writes it once (single-pass chained scan with decoupled look-back,
    subgroup-accelerated where the device has subgroups). The per-tile state
    (a few words per 12288-row tile) lives in a small buffer the scan node
    creates at compile time and keeps: its words carry an encoding parity, so
    no clear pass runs between encodings (``ScanTuning(clear_pass=True)``
    instead uses a graph transient and a clear pass). Zero length adds no
    nodes. Records into the caller's encoder through the compiled graph;
    never allocates during encode, submits, or reads back.
    In-place scans (output overlapping input) are not supported.
    """

    def __init__(self, *, id: str, input, output, mode: str = "exclusive", segment_flags=None,
                 tuning: ScanTuning | None = None):
        if mode not in ("exclusive", "inclusive"):
            raise GraphValidationError(f'GPUScan "{id}" mode must be "exclusive" or "inclusive" (got {mode!r})')
        checked_tuning("GPUScan", id, tuning, ScanTuning)
        self.id = check_id("GPUScan", id)
        self.input = input
        self.output = output
        self.mode = mode
        self.segment_flags = segment_flags
        self.tuning = tuning
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the clear and scan nodes.

        Returns the added node IDs (none for zero length). Raises a
        :class:`~gpuviz.GraphValidationError` subclass for wrong formats,
        unpacked views, short outputs, mismatched chunk topology, flags
        that share output's buffer, or a chunk longer than one storage
        binding holds (the device's ``max-storage-buffer-binding-size``).
        """
        name = "GPUScan"
        kind, ins = chunks_of(name, self.id, "input", self.input, graph)
        out_kind, outs = chunks_of(name, self.id, "output", self.output, graph)
        check_topology(name, self.id, "output", "input", out_kind, outs, kind, ins)
        if kind == "data" and outs[0].length < ins[0].length:
            raise GraphValidationError(f'GPUScan "{self.id}" output is shorter than input (needs '
                                       f"{ins[0].length} rows, got {outs[0].length})")
        heads = None
        if self.segment_flags is not None:
            flag_kind, heads = chunks_of(name, self.id, "segment_flags", self.segment_flags, graph)
            check_topology(name, self.id, "segment_flags", "input", flag_kind, heads, kind, ins)
            if kind == "data" and heads[0].length < ins[0].length:
                raise GraphValidationError(f'GPUScan "{self.id}" segment_flags is shorter than input (needs '
                                           f"{ins[0].length} rows, got {heads[0].length})")
            shared = {h.handle.id for h in heads} & {o.handle.id for o in outs}
            if shared:
                raise GraphValidationError(f'GPUScan "{self.id}" segment_flags share buffer "{sorted(shared)[0]}" '
                                           "with output")
        for a in ins:
            for b in outs:
                if overlaps(a, b):
                    raise GraphValidationError(f'GPUScan "{self.id}" output overlaps input in buffer '
                                               f'"{a.handle.id}" (bytes {byte_span(b)} and {byte_span(a)}; '
                                               "in-place scans are not supported)")
        refuse_overlaps(name, self.id, reads={"input": ins, "segment_flags": heads}, writes={"output": outs})
        scan = ChainedScan(id=f"{self.id}-scan", data=ins, heads=heads, out=outs,
                           inclusive=self.mode == "inclusive", tuning=self.tuning, owner=name, owner_id=self.id)
        self.chained = scan
        self.node_ids = scan.add_to_graph(graph)
        return self.node_ids
