"""GPUVisibilityWorkflow: fused visibility predicates, stable compaction of
the kept IDs and a GPU-resident count, in one pass.

One node, whatever the predicates: ``"{id}-predicate"`` reads every per-row
input once (coalesced vec4 loads), keeps one bit per row of its tile
(4096 rows by default) in workgroup memory (and writes the optional 0/1 mask), finds the
tile's place in the output by a decoupled look-back over the tiles before
it, and writes the kept rows' IDs in source order straight from workgroup
memory; the last tile writes the count. Traffic is the inputs once, the IDs
once and a few words of tile state per tile.
"""

from __future__ import annotations

import operator
from types import MappingProxyType

import numpy as np
import wgpu

from ..algorithms.compaction import add_count_clear
from ..algorithms.dispatch import ceil_div, use_subgroups
from ..algorithms.validation import check_topology, chunks_of, refuse_overlaps, single_row
from ..algorithms.views import StorageBinding, binding_range, storage_alignment, uniform_slot, view_binding
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl

__all__ = ["GPUVisibilityWorkflow", "VISIBILITY_TILE", "TILE_ROWS", "TILE_BY_ROWS", "WRITE_LAG", "tile_for_rows"]

#: Rows one workgroup handles by default (256 lanes x 4 quads; see
#: :attr:`GPUVisibilityWorkflow.tile_rows`): the fastest tile over 1M to 26M
#: rows on the benchmark GPU. Larger tiles leave a longer tail of last
#: tiles, smaller ones repeat each tile's fixed work more often.
VISIBILITY_TILE = 4096
#: The tile sizes the shader is written for: 256 lanes x 1, 2, 4, 8 or 16
#: quads of rows (a lane's bit word holds 8 quads; below 8192 rows the tile's
#: bit words are fewer than the lanes, the rest scan as zero words).
TILE_ROWS = (1024, 2048, 4096, 8192, 16384)
#: Lagged placement's default (:attr:`GPUVisibilityWorkflow.write_lag`): the
#: fastest lag on the benchmark GPU, ahead of no lag on every case and of
#: 128, 256 and 1024 tickets.
WRITE_LAG = 512
#: The template of the workflow's kernel (GPUVisibilityWorkflow.kernel_template).
TEMPLATE = "workflows/shaders/visibility.wgsl"
#: The tile for a row count when :attr:`GPUVisibilityWorkflow.tile_rows` is
#: None: ``(most rows, tile)`` pairs in order, the first whose bound the
#: workflow's total row count does not exceed (None: any count).
TILE_BY_ROWS = ((None, VISIBILITY_TILE),)
# The kernel runs without wgpu's bounds checks: every index is in range by
# construction (the tile state is sized by the tile count, IDs land below the
# kept count, which never exceeds the rows the output was checked to hold).
# Naga's forced loop bounding (a hidden counter in every loop) is dropped too,
# except for two tiles per workgroup (GPUVisibilityWorkflow.loop_bounding).
# Compiled without it, the H200's driver writes wrong counts and IDs for
# multi-chunk outputs with every predicate given unless two loops are
# unrolled by the template (the output-chunk search and the ID writes:
# pairs and lagged placement are still wrong with the write loop rolled).
# The wrong results are deterministic and depend on the kernel's shape, not
# on timing; the cause is not known. Loop bounding everywhere would cost the
# single-tile kernel a quarter of its occupancy, so it stays off.
# GPUVIZ_RUNTIME_CHECKS=1 restores both checks.
STORAGE = wgpu.BufferUsage.STORAGE
NAME = "GPUVisibilityWorkflow"
# visibility.wgsl: bindings of the roles (masks follow at 10 + k, then source_ids, the output chunk table and the
# output buffers) and the VisParams word order (HEADER, then the view offsets of ROLES[1:] and the masks)
ROLES = {"count": 2, "mask_out": 3, "spheres": 4, "planes": 5, "intervals": 6, "window": 7, "lod": 8, "lod_range": 9}
HEADER = ("n", "tile_base", "num_tiles", "row_base", "last_tile", "out_off", "ticket_base", "last_ticket", "lag",
          "count_off", "ids_off")
PER_ROW = {"spheres": "float32x4", "intervals": "float32x2", "lod": "float32", "source_ids": "uint32"}
PAIRS = (("spheres", "planes"), ("intervals", "window"), ("lod", "lod_range"))
PARAMETERS = {"planes": ("float32x4", 6), "window": ("float32x4", 1), "lod_range": ("float32x2", 1)}


def tile_for_rows(rows: int) -> int:
    """The tile size (rows per workgroup) :data:`TILE_BY_ROWS` gives a
    workflow over ``rows`` rows in all (a vector's chunks together)."""
    return next(tile for most, tile in TILE_BY_ROWS if most is None or rows <= most)


class GPUVisibilityWorkflow:
    """Keep the rows that pass every given predicate; write their stable IDs
    and their number, all on the GPU.

    Parameters
    ----------
    id : str
        Prefix of the node ID: ``"{id}-predicate"`` (``"{id}-count-clear"``
        for zero rows).
    output : GraphDataView or GraphVectorView
        uint32. A data view with at least as many rows as the input, or a
        vector view with the inputs' chunk lengths (filled across its chunks
        as one sequence). Receives the kept rows' IDs in source order: the
        row's global index (counting on across vector chunks) or
        ``source_ids[i]``. Rows past the count are left as they were.
    count : GraphDataView
        Any one-row uint32 view, e.g. the instanceCount word of a
        DrawCommandBuffer record (``graph.import_gpu_data("n",
        dcb.get_instance_count_data(k))``); only that word is written.
    length : int, optional
        The row count. Required only when no per-row input is given; with
        data views it may be smaller than they are (the first ``length``
        rows are used), with vectors it must equal their total.
    source_ids : GraphDataView or GraphVectorView, optional
        uint32 per row: the ID written for a kept row instead of its index.
    mask_output : GraphDataView or GraphVectorView, optional
        uint32 per row (same kind and chunks as the inputs): receives 1 for
        a kept row, else 0.
    masks : sequence of GraphDataView or GraphVectorView
        uint32 per row; a row is kept only where every mask is nonzero
        (selection, filters, dependency focus).
    spheres, planes : views, optional
        Together: float32x4 per row ``(cx, cy, cz, r)`` and a float32x4 view
        of six planes ``(n.x, n.y, n.z, d)`` (a point p is inside a plane
        when ``dot(n, p) + d >= 0``). Kept when ``dot(n, c) + d >= -r`` for
        all six. A non-finite center or radius, or ``r < 0``, is culled; a
        NaN in the planes keeps nothing.
    intervals, window : views, optional
        Together: float32x2 per row ``(start, end)`` and a float32x4 view
        ``(t0, t1, min_duration, unused)``. Kept when ``end >= t0``,
        ``start <= t1`` and ``end - start >= min_duration``. An inverted
        window (``t0 > t1``) or a NaN in it keeps nothing; infinite bounds
        are allowed (an open window); a non-finite start or end is culled.
    lod, lod_range : views, optional
        Together: float32 per row and a float32x2 view ``(lo, hi)``. Kept
        when ``lo <= lod < hi``; a non-finite lod is culled, a NaN bound
        keeps nothing.

    The parameter views (planes, window, lod_range) may also be float32
    views of the same words (24, 4 and 2 rows: a flat numpy upload).

    Raises
    ------
    GraphValidationError
        From :meth:`add_to_graph` (subclasses such as ViewRangeError
        included): a wrong format, an unpacked or misaligned view, a view of
        another graph, a predicate without its parameter (or the reverse),
        per-row inputs of different lengths or chunk topologies, short
        outputs or parameters, an output or mask_output sharing a buffer
        with an input, a missing or bad ``length``, or more storage bindings
        than the device allows.

    Notes
    -----
    One pass evaluates every predicate (not a pass per predicate) and
    writes the IDs: one node, ``"{id}-predicate"``, whose tiles
    (:func:`tile_for_rows`, 4096 rows by default) find their output offsets by a decoupled
    look-back; a tile left waiting on a predecessor evaluates that tile
    itself, so it finishes whatever the scheduler does. Predicate
    parameters and mask contents are read from their buffers at every
    encoding, so changing them is a buffer write, never a recompile; which
    predicates exist is structural. Vectors keep their chunks: one dispatch
    per non-empty chunk, nothing concatenated. Zero rows add only a node
    that writes count = 0. Float32 intervals cannot hold 64-bit nanosecond
    times precisely: give times relative to a view origin. Does not evaluate
    application predicates, draw, submit, or read back.
    """

    #: Fruitless polls of an unpublished predecessor tile before a workgroup
    #: evaluates that tile itself (the look-back's forward-progress fallback).
    spin_limit = 512
    #: False makes every tile ignore its own chunk's published states and
    #: evaluate each predecessor itself: the fallback alone, for tests.
    trust_published = True
    #: Rows per workgroup tile: one of :data:`TILE_ROWS`, or None (the
    #: default) for :func:`tile_for_rows` of the row count. Larger tiles
    #: spread each tile's fixed work (ticket, scan, look-back) over more
    #: rows; smaller ones shorten the tail the last tiles leave (see
    #: :data:`VISIBILITY_TILE` for the default's reason).
    tile_rows = None
    #: vec4 loads a lane may have in flight in a full tile before it tests
    #: the first of them: the loop is unrolled into batches of whole quads
    #: (intervals + a mask load 3 vec4 per quad, spheres 4). Below two quads
    #: per batch (or 0) every tile keeps the bounds-checked loop. 6 (two
    #: quads of intervals + mask per batch) is the fastest setting of 0-48 on
    #: the benchmark GPU: one-quad batches and batches of 3 or more quads are
    #: slower than the loop, so spheres (4 loads a quad) stay in the loop.
    preload = 6
    #: Tiles per workgroup, 1 or 2: with 2, a workgroup takes its second
    #: ticket after its first tile's look-back and loads that tile's first
    #: batch while it writes the first tile's IDs. Pairs are slower than
    #: single tiles at every tile size measured, hence the default 1.
    tiles_per_group = 1
    #: With two tiles per workgroup: True takes the second ticket right after
    #: the first tile's loads (its first batch then loads through the whole
    #: first tile's scan, look-back and writes, but its count is published
    #: later: successors wait for it, which makes it slower still).
    early_second = False
    #: Lagged placement: the tickets between a tile's evaluation and its
    #: placement (0: none; None, the default: :data:`WRITE_LAG` for one
    #: tile per workgroup, else 0). With lag L
    #: the workgroup of a chunk's ticket s evaluates tile s, publishes its
    #: count and kept bits (16 bytes per 128 rows, in the node's state
    #: buffer: a quarter byte per row), then places and writes tile s - L,
    #: whose predecessors started their evaluations at least L tickets
    #: earlier: its look-back sums published states instead of waiting for
    #: tiles still loading. A chunk runs tiles + min(L, tiles) workgroups
    #: (the last ones only place). A lag > 0 needs tiles_per_group 1. None
    #: means 0 as well where the bits would not
    #: fit one storage binding (over about four times its size in rows); a
    #: lag set explicitly is then refused.
    write_lag = None
    #: Naga's forced loop bounding: None (the default) for two tiles per
    #: workgroup only, where the H200's driver needs it to be correct (see
    #: the module's note on wgpu's runtime checks); True or False forces it.
    loop_bounding = None
    #: The kernel's template (a path the shader builder loads), rendered
    #: with the workflow's values plus :attr:`kernel_values`, and the state
    #: words it keeps after the tiles' (before lagged placement's bits).
    #: Benchmarks give a template that extends :data:`TEMPLATE` through its
    #: blocks (``gpuviz.bench.visibility_probes``); the workflow needs none.
    kernel_template = TEMPLATE
    kernel_values = MappingProxyType({})
    reserved_state_words = 0

    def __init__(self, *, id: str, output, count, length=None, source_ids=None, mask_output=None, masks=(),
                 spheres=None, planes=None, intervals=None, window=None, lod=None, lod_range=None):
        self.id = check_id(NAME, id)
        self.output = output
        self.count = count
        self.length = length
        self.source_ids = source_ids
        self.mask_output = mask_output
        self.masks = tuple(masks) if isinstance(masks, (list, tuple)) else (masks,)
        self.spheres, self.planes = spheres, planes
        self.intervals, self.window = intervals, window
        self.lod, self.lod_range = lod, lod_range
        self.node_ids: list = []

    # ------------------------------------------------------------ validation
    def _per_row(self, graph) -> tuple:
        """``(kind, {role: chunks})`` of the per-row inputs, same kind and chunks."""
        given = [(f"masks[{k}]", m, "uint32") for k, m in enumerate(self.masks)]
        given += [(role, getattr(self, role), fmt) for role, fmt in PER_ROW.items() if getattr(self, role) is not None]
        kind, roles, first = None, {}, None
        for role, value, fmt in given:
            k, views = chunks_of(NAME, self.id, role, value, graph, formats=(fmt,))
            if first is None:
                kind, first = k, (role, views)
            else:
                check_topology(NAME, self.id, role, first[0], k, views, kind, first[1])
            roles[role] = views
        return kind, roles

    def _rows(self, kind, roles) -> list:
        """Rows per chunk."""
        length = self.length
        if length is not None:
            try:
                length = operator.index(length)
            except TypeError:
                raise GraphValidationError(f'{NAME} "{self.id}" length must be an integer (got {length!r})') from None
            if length < 0:
                raise GraphValidationError(f'{NAME} "{self.id}" length must be >= 0 (got {length})')
        if not roles:
            if length is None:
                raise GraphValidationError(f'{NAME} "{self.id}" needs length= when no per-row input '
                                           "(masks, spheres, intervals, lod, source_ids) fixes it")
            return [length]
        if kind == "vector":
            chunks = [v.length for v in next(iter(roles.values()))]
            if length is not None and length != sum(chunks):
                raise GraphValidationError(f'{NAME} "{self.id}" length {length} differs from the vectors\' total '
                                           f"{sum(chunks)} rows")
            return chunks
        lengths = {role: views[0].length for role, views in roles.items()}
        if length is None:
            if len(set(lengths.values())) > 1:
                raise GraphValidationError(f'{NAME} "{self.id}" per-row inputs have different lengths '
                                           f"({lengths}); give length= to use a common prefix")
            return [next(iter(lengths.values()))]
        short = {role: n for role, n in lengths.items() if n < length}
        if short:
            raise GraphValidationError(f'{NAME} "{self.id}" per-row inputs are shorter than length {length} ({short})')
        return [length]

    def _outputs(self, graph, kind, rows, roles) -> tuple:
        ref = next(iter(roles.values())) if roles else None
        out_kind, outs = chunks_of(NAME, self.id, "output", self.output, graph)
        total = sum(rows)
        if out_kind == "vector":
            if kind != "vector":
                raise GraphValidationError(f'{NAME} "{self.id}" output is a vector view but the inputs are data '
                                           "views (use a data view)")
            check_topology(NAME, self.id, "output", "the inputs", out_kind, outs, kind, ref)
        elif outs[0].length < total:
            raise GraphValidationError(f'{NAME} "{self.id}" output is shorter than the input (needs {total} rows, '
                                       f"got {outs[0].length})")
        masks_out = None
        if self.mask_output is not None:
            m_kind, masks_out = chunks_of(NAME, self.id, "mask_output", self.mask_output, graph)
            if ref is not None:
                check_topology(NAME, self.id, "mask_output", "the inputs", m_kind, masks_out, kind, ref)
            elif m_kind != "data":
                raise GraphValidationError(f'{NAME} "{self.id}" mask_output must be a data view when only length '
                                           "is given")
            if m_kind == "data" and masks_out[0].length < total:
                raise GraphValidationError(f'{NAME} "{self.id}" mask_output is shorter than the input (needs {total} '
                                           f"rows, got {masks_out[0].length})")
        count = single_row(NAME, self.id, "count", self.count, graph)
        return outs, masks_out, count

    def _parameters(self, graph) -> dict:
        for row, param in PAIRS:
            a, b = getattr(self, row), getattr(self, param)
            if (a is None) != (b is None):
                given, missing = (row, param) if b is None else (param, row)
                raise GraphValidationError(f'{NAME} "{self.id}" {given} needs {missing} (they come together)')
        params = {}
        for name, (fmt, rows) in PARAMETERS.items():
            value = getattr(self, name)
            if value is None:
                continue
            # a float32 view of the same words is accepted too (a flat numpy upload)
            words = rows * int(fmt[-1])
            flat = getattr(value, "format", None) is not None and value.format.name == "float32"
            params[name] = single_row(NAME, self.id, name, value, graph, formats=("float32",) if flat else (fmt,),
                                      rows=words if flat else rows)
        return params

    def _check_limits(self, graph, roles, outs) -> None:
        limits = graph.device.limits
        most = int(limits["max-storage-buffer-binding-size"])
        for role, views in roles.items():
            for view in views:
                if view.byte_length > most:
                    raise GraphValidationError(
                        f'{NAME} "{self.id}" {role} chunk of {view.byte_length} bytes exceeds the device\'s storage '
                        f"binding size ({most} bytes): split it into vector chunks")
        buffers = len({v.handle for v in outs if v.length})
        # tile state, count, masks, mask_output, predicate pairs, source_ids, output buffers (+ their chunk table)
        pairs = sum(getattr(self, row) is not None for row, _ in PAIRS)
        need = (2 + len(self.masks) + (self.mask_output is not None) + 2 * pairs + (self.source_ids is not None)
                + buffers + (buffers > 1))
        limit = int(limits["max-storage-buffers-per-shader-stage"])
        if need > limit:
            raise GraphValidationError(f'{NAME} "{self.id}" needs {need} storage bindings in one pass ({buffers} '
                                       f"output buffers), the device allows {limit} (combine masks with GPUMask "
                                       "first, or give the output fewer buffers)")

    def _tuning(self, rows: int) -> dict:
        """The tile size and the unrolled batch (quads per lane whose loads
        go out together; 0: the checked loop) from the class attributes
        (``rows``: the total row count, for a tile chosen by row count)."""
        tile, preload = (tile_for_rows(rows) if self.tile_rows is None else self.tile_rows), self.preload
        pair = self.tiles_per_group
        if tile not in TILE_ROWS or not isinstance(preload, int) or preload < 0 or pair not in (1, 2):
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: tile_rows must be one of {TILE_ROWS} (got '
                                       f"{tile!r}), preload an int >= 0 (got {preload!r}) and tiles_per_group 1 or 2 "
                                       f"(got {pair!r})")
        loads = (len(self.masks) + 4 * (self.spheres is not None) + 2 * (self.intervals is not None)
                 + (self.lod is not None))
        iters = tile // 1024
        batch = min(iters, preload // max(loads, 1))
        batch = batch if batch >= 2 else 0
        lag = self.write_lag
        if lag is None:
            lag = WRITE_LAG if pair == 1 else 0
        elif not isinstance(lag, int) or isinstance(lag, bool) or lag < 0 or (lag and pair != 1):
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: write_lag must be None or an int >= 0 (got '
                                       f"{lag!r}); a lag needs tiles_per_group 1")
        if self.loop_bounding is not None and not isinstance(self.loop_bounding, bool):
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: loop_bounding must be None, True or False '
                                       f"(got {self.loop_bounding!r})")
        bounded = pair == 2 if self.loop_bounding is None else self.loop_bounding
        return {"tile": tile, "batch": batch, "pair": (("early" if self.early_second else "late") if pair == 2 else ""),
                "lag": lag, "loop_bounding": bounded, "reserved": int(self.reserved_state_words)}

    def _fit_lag(self, graph, tuning, total_tiles) -> dict:
        """``tuning`` with lagged placement off when its bits would make the
        node's state buffer larger than one storage binding (more than four
        times the binding size in rows): by default, or refused when
        :attr:`write_lag` was set."""
        most = int(graph.device.limits["max-storage-buffer-binding-size"])
        if not tuning["lag"] or 4 * _state_words(total_tiles, tuning) <= most:
            return tuning
        if self.write_lag is not None:
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: write_lag {self.write_lag} needs a state buffer '
                                       f"of {4 * _state_words(total_tiles, tuning)} bytes, over the device's storage "
                                       f"binding size ({most} bytes); use write_lag 0 or None")
        return {**tuning, "lag": 0}

    # ----------------------------------------------------------------- graph
    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the node; returns its ID."""
        kind, roles = self._per_row(graph)
        rows = self._rows(kind, roles)
        tuning = self._tuning(sum(rows))
        params = self._parameters(graph)
        outs, masks_out, count = self._outputs(graph, kind, rows, roles)
        reads = {**roles, **params}
        refuse_overlaps(NAME, self.id, reads=reads,
                        writes={"output": outs, "mask_output": masks_out, "count": count}, separate=True)
        self._check_limits(graph, roles, outs)
        if sum(rows) == 0:
            self.node_ids = [add_count_clear(graph, f"{self.id}-count-clear", count)]
            return self.node_ids
        tiles = [ceil_div(n, tuning["tile"]) for n in rows]
        tuning = self._fit_lag(graph, tuning, sum(tiles))
        chunks = [dict(n=n, tiles=t, tile_base=sum(tiles[:c]), row_base=sum(rows[:c]),
                       views={role: views[c] for role, views in roles.items()},
                       mask_out=masks_out[c] if masks_out is not None and kind == "vector" else
                       (masks_out[0] if masks_out is not None else None))
                  for c, (n, t) in enumerate(zip(rows, tiles)) if n]
        self.node_ids = [self._node(graph, chunks, params, outs, count, sum(tiles), tuning)]
        return self.node_ids

    def _node(self, graph, chunks, params, outs, count, total_tiles, tuning) -> str:
        masks = len(self.masks)
        used = [v for v in outs if v.length]
        resources = [(v, "storage-read") for ch in chunks for v in ch["views"].values()]
        resources += [(v, "storage-read") for v in params.values()]
        resources += [(ch["mask_out"], "storage-write") for ch in chunks if ch["mask_out"] is not None]
        resources += [(v, "storage-write") for v in used] + [(count, "storage-write")]
        spin_limit, trust = int(self.spin_limit), int(bool(self.trust_published))

        def compile_visibility(ctx):
            align = storage_alignment(ctx.device)
            dst, scatter, out_rows, out_off = _scatter_plan(used, align, 12 + masks)
            nbytes = 4 * (len(HEADER) + len(ROLES) - 1 + masks)  # visibility.wgsl: VisParams
            slot = uniform_slot(ctx.device, max(16, -(-nbytes // 16) * 16))
            table = np.zeros((len(chunks), slot // 4), np.uint32)
            lag = tuning["lag"]
            lags = [min(lag, ch["tiles"]) for ch in chunks]
            words = _state_words(total_tiles, tuning)
            state = ctx.own(ctx.device.create_buffer(label=f"{ctx.node_id}-tile-state", size=4 * words, usage=STORAGE))
            fixed = {1: (state, 0, state.size)}
            if out_rows is not None:
                chunk_table = ctx.own(ctx.device.create_buffer_with_data(
                    label=f"{ctx.node_id}-output-chunks", data=out_rows.tobytes(), usage=STORAGE))
                fixed[11 + masks] = (chunk_table, 0, chunk_table.size)
            template = dict(masks=masks, subgroups=use_subgroups(ctx, None), scatter=scatter,
                            iters=tuning["tile"] // 1024, wpl=max(1, tuning["tile"] // 8192), batch=tuning["batch"],
                            pair=tuning["pair"], lag=bool(lag), **self.kernel_values)
            constants = {"SPIN_LIMIT": spin_limit, "TRUST_STATE": trust}
            dispatches = []
            for row, ch in enumerate(chunks):
                views = {**ch["views"], **params, "mask_out": ch["mask_out"], "count": count,
                         "ids": ch["views"].get("source_ids")}
                kernel, bound, offsets = _chunk_kernel(ctx, views, masks, align, self.kernel_template, template,
                                                       constants, loop_bounding=tuning["loop_bounding"])
                ticket_base = ch["tile_base"] + sum(lags[:row])
                words = [ch["n"], ch["tile_base"], ch["tiles"], ch["row_base"], total_tiles - 1, out_off, ticket_base,
                         total_tiles + sum(lags) - 1, lags[row], *offsets]
                table[row, :len(words)] = words
                groups = -(-ch["tiles"] // 2) if tuning["pair"] else ch["tiles"] + lags[row]
                dispatches.append((kernel, [*dst, *(b.storage for b in bound.values())], row, groups))
            uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=table.tobytes(),
                                                                 usage=wgpu.BufferUsage.UNIFORM))

            def encode(compute_pass, frame):
                for kernel, bindings, row, groups in dispatches:
                    resolved = {b.binding: b.resolve(frame) for b in bindings}
                    resolved.update(fixed)
                    resolved[0] = (uniform, row * slot, slot)
                    kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=groups)
            return encode

        return graph.add_compute_node(id=f"{self.id}-predicate", resources=resources, compile=compile_visibility)


def _state_words(total_tiles: int, tuning: dict) -> int:
    """Words of the node's state buffer: the ticket, three per tile, the
    kernel template's reserved words and lagged placement's bits (16-bit
    halves, visibility.wgsl HALVES: a word per 16 rows)."""
    return 1 + 3 * total_tiles + tuning["reserved"] + bool(tuning["lag"]) * total_tiles * tuning["tile"] // 16


def _chunk_kernel(ctx, views, masks, align, kernel_template, template, constants, *, loop_bounding) -> tuple:
    """``(kernel, {role: ViewBinding}, offsets)`` of one chunk's dispatch;
    offsets are the VisParams words from ``count_off`` on."""
    views = {**views, **{f"mask{k}": views[f"masks[{k}]"] for k in range(masks)}}
    numbers = {**ROLES, **{f"mask{k}": 10 + k for k in range(masks)}, "ids": 10 + masks}
    bound = {name: view_binding(number, views[name], alignment=align)
             for name, number in numbers.items() if views.get(name) is not None}
    layouts = {name: bound[name].layout if name in bound else "none" for name in numbers}
    code = wgsl(kernel_template, layouts=layouts, spheres="spheres" in bound,
                intervals="intervals" in bound, lod="lod" in bound, **template)
    kernel = ComputeKernel(ctx.device, code=code, label=ctx.node_id, constants=constants, bounds_checks=False,
                           loop_bounding=loop_bounding)
    order = ["count", "ids", *list(ROLES)[1:], *(f"mask{k}" for k in range(masks))]
    return kernel, bound, [bound[name].offset if name in bound else 0 for name in order]


def _scatter_plan(used, align, first) -> tuple:
    """``(dst bindings, template value, chunk table or None, offset)`` of the
    output chunks: one binding (first, first + 1, ...) per buffer covering
    its chunks. One chunk is written at its element ``offset``; several go
    through the table (per chunk: end in the compacted sequence, element
    offset in its binding minus its first position, dst slot), searched by
    the shader."""
    slots = {}
    for view in used:
        slots.setdefault(view.handle, len(slots))
    dst = [StorageBinding(first + j, h, *binding_range([v for v in used if v.handle is h], align))
           for h, j in slots.items()]
    value = {"dst": [b.binding for b in dst], "table": len(used) > 1, "rows": len(used)}
    if len(used) == 1:
        return dst, value, None, (used[0].byte_offset - dst[0].start) // 4
    rows, end = np.zeros((len(used), 4), np.uint32), 0
    for i, view in enumerate(used):
        j = slots[view.handle]
        rows[i, :3] = (end + view.length, ((view.byte_offset - dst[j].start) // 4 - end) % (1 << 32), j)
        end += view.length
    return dst, value, rows, 0
