"""GPUVisibilityWorkflow: fused visibility predicates, stable compaction of
the kept IDs and a GPU-resident count.

Two nodes, whatever the predicates. ``"{id}-predicate"``
(shaders/visibility.wgsl) reads every per-row input once (coalesced vec4
loads), writes the optional 0/1 mask, and leaves one bit per row and one
kept-row count per tile (4096 rows by default) in graph transients.
``"{id}-write"`` (shaders/visibility_write.wgsl) gives each tile its base
(the sum of the counts before it, read from L2) and writes the kept rows'
IDs in source order from the bits; the last tile writes the count. Traffic
is the inputs once, the IDs once, and 1/32 of a word per row in bits
(written once, read once); no workgroup waits on another.
"""

from __future__ import annotations

import operator

import numpy as np
import wgpu

from ..algorithms.compaction import add_count_clear
from ..algorithms.dispatch import ceil_div, use_subgroups
from ..algorithms.validation import check_topology, chunks_of, refuse_overlaps, single_row
from ..algorithms.views import StorageBinding, binding_range, storage_alignment, uniform_slot, view_binding
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.errors import GraphValidationError
from ..graph.shaders import wgsl

__all__ = ["GPUVisibilityWorkflow", "VISIBILITY_TILE", "WRITE_TILE", "TILE_ROWS", "TILE_BY_ROWS", "tile_for_rows"]

#: Rows one workgroup handles by default (256 lanes x 4 quads; see
#: :attr:`GPUVisibilityWorkflow.tile_rows`). On the H200 (06:43 sweep, 1M to
#: 26M rows) 4096-row tiles were 4-6 µs faster than 8192 at 10M spheres and
#: 25M intervals, as fast at 25M spheres; 2048 was as fast at 10M spheres,
#: slower elsewhere, 1024 slower everywhere (more tiles' fixed work).
VISIBILITY_TILE = 4096
#: The tile sizes the shader is written for: 256 lanes x 1, 2, 4, 8 or 16
#: quads of rows (a lane's bit word holds 8 quads; below 8192 rows the tile's
#: bit words are fewer than the lanes, the rest scan as zero words).
TILE_ROWS = (1024, 2048, 4096, 8192, 16384)
#: Rows per workgroup of the ID writes by default (see
#: :attr:`GPUVisibilityWorkflow.write_tile_rows`).
WRITE_TILE = 16384
#: The tile for a row count when :attr:`GPUVisibilityWorkflow.tile_rows` is
#: None: ``(most rows, tile)`` pairs in order, the first whose bound the
#: workflow's total row count does not exceed (None: any count).
TILE_BY_ROWS = ((None, VISIBILITY_TILE),)
# The kernels run without wgpu's bounds checks and loop bounding: every loop
# has a constant bound and every index is in range by construction (the bits
# and counts are sized by the tile count, IDs land below the kept count,
# which never exceeds the rows the output was checked to hold).
# GPUVIZ_RUNTIME_CHECKS=1 restores both.
_TRUSTED = {"bounds_checks": False, "loop_bounding": False}
STORAGE = wgpu.BufferUsage.STORAGE
NAME = "GPUVisibilityWorkflow"
# visibility.wgsl: bindings of the roles (masks follow at 10 + k, then the tickets); VisParams is (n, num_tiles,
# ticket), then the view
# offsets of ROLES and the masks in that order
ROLES = {"bits": 1, "counts": 2, "mask_out": 3, "spheres": 4, "planes": 5, "intervals": 6, "window": 7, "lod": 8,
         "lod_range": 9}
# visibility_write.wgsl: bindings of its roles (4: the output chunk table, 6: the tickets, 7 on: the output
# buffers); WriteParams is (n, num_tiles, row_base, out_off, tile_base, per, last, ticket), then the view offsets of WRITE_ROLES in that order
WRITE_ROLES = {"bits": 1, "counts": 2, "ids": 3, "count": 5}
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
    One pass evaluates every predicate (not a pass per predicate) and a
    second writes the IDs: nodes ``"{id}-predicate"`` and ``"{id}-write"``,
    with the per-row bits and the tile counts (:func:`tile_for_rows`, 4096
    rows a tile by default) in graph transients (``"{id}-bits"``,
    ``"{id}-tile-counts"``); each tile of the second pass sums the counts
    before it. Predicate parameters and
    mask contents are read from their buffers at every encoding, so changing
    them is a buffer write, never a recompile; which predicates exist is
    structural. Vectors keep their chunks: one dispatch per non-empty chunk
    in each pass, nothing concatenated. Zero rows add only a node that writes
    count = 0. Float32 intervals cannot hold 64-bit nanosecond times
    precisely: give times relative to a view origin. Does not evaluate
    application predicates, draw, submit, or read back.
    """

    #: Rows per workgroup tile: one of :data:`TILE_ROWS`, or None (the
    #: default) for :func:`tile_for_rows` of the row count. Larger tiles
    #: spread each tile's fixed work (clearing, count, scan) over more rows;
    #: smaller ones shorten the tail the last tiles leave (see
    #: :data:`VISIBILITY_TILE` for what the H200 measured).
    tile_rows = None
    #: vec4 loads a lane may have in flight in a full tile before it tests
    #: the first of them: the loop is unrolled into batches of whole quads
    #: (intervals + a mask load 3 vec4 per quad, spheres 4). Below two quads
    #: per batch (or 0) every tile keeps the bounds-checked loop. Measured on
    #: the one-pass design (sessions 5-6): 6, two quads of intervals + mask,
    #: beat the loop and batches of 3 or 4 quads; spheres stayed in the loop.
    preload = 6
    #: Rows per workgroup of the second pass (the ID writes): one of
    #: :data:`TILE_ROWS` and a whole number of predicate tiles, or None for
    #: :data:`WRITE_TILE` (or the predicate tile, when that is larger). Its
    #: fixed work (the bit words' and counts' loads, a group scan) is
    #: latency; larger tiles spread it over more rows.
    write_tile_rows = None
    #: Most workgroups of a predicate dispatch (each takes tiles until the
    #: chunk's are gone): at least as many as the device keeps resident
    #: (an H200: 132 SMs x 8 workgroups of 256 lanes).
    resident_groups = 2048
    #: Rows a lane of the write pass takes at a time: 1 (lane l of iteration
    #: r: row 256 r + l; a warp's kept rows are consecutive output words) or 4
    #: (a quad: fewer iterations, each lane writing up to four IDs in a row).
    write_rows_per_lane = 1

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
        pairs = sum(getattr(self, row) is not None for row, _ in PAIRS)
        # the predicate pass: bits, counts, tickets, masks, mask_output, predicate pairs; the write pass: bits,
        # counts, tickets, count, source_ids, output buffers (+ their chunk table)
        need = max(3 + len(self.masks) + (self.mask_output is not None) + 2 * pairs,
                   4 + (self.source_ids is not None) + buffers + (buffers > 1))
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
        if tile not in TILE_ROWS or not isinstance(preload, int) or preload < 0:
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: tile_rows must be one of {TILE_ROWS} (got '
                                       f"{tile!r}) and preload an int >= 0 (got {preload!r})")
        loads = (len(self.masks) + 4 * (self.spheres is not None) + 2 * (self.intervals is not None)
                 + (self.lod is not None))
        iters = tile // 1024
        batch = min(iters, preload // max(loads, 1))
        write = max(WRITE_TILE, tile) if self.write_tile_rows is None else self.write_tile_rows
        if write not in TILE_ROWS or write % tile:
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: write_tile_rows must be one of {TILE_ROWS} and a '
                                       f"multiple of the predicate tile {tile} (got {write!r})")
        groups = self.resident_groups
        if not isinstance(groups, int) or groups < 1:
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: resident_groups must be an int >= 1 (got '
                                       f"{groups!r})")
        if self.write_rows_per_lane not in (1, 4):
            raise GraphValidationError(f'{NAME} "{self.id}" tuning: write_rows_per_lane must be 1 or 4 (got '
                                       f"{self.write_rows_per_lane!r})")
        return {"tile": tile, "batch": batch if batch >= 2 else 0, "write_tile": write, "groups": groups,
                "quads": self.write_rows_per_lane == 4}

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
        tile = tuning["tile"]
        tiles = [ceil_div(n, tile) for n in rows]
        total_tiles = sum(tiles)
        most = int(graph.device.limits["max-storage-buffer-binding-size"])
        if max(tiles) * tile // 8 > most:  # only a huge length= without per-row inputs gets here
            raise GraphValidationError(f'{NAME} "{self.id}" length {max(rows)} needs {max(tiles) * tile // 8} bytes '
                                       f"of row bits in one binding, the device allows {most}")
        bits = graph.create_transient_buffer(id=f"{self.id}-bits", byte_length=tile // 8 * total_tiles,
                                             usage=STORAGE)
        # the write pass reads the counts in steps of 4096 words (visibility_write.wgsl): padded to whole ones
        padded = -(-total_tiles // 4096) * 4096
        counts = graph.create_transient_buffer(id=f"{self.id}-tile-counts", byte_length=4 * padded, usage=STORAGE)

        def words(handle, per_tile, first, n):
            return graph.create_data_view(handle, format="uint32", length=per_tile * n,
                                          byte_offset=4 * per_tile * first)

        chunks = []
        for c, (n, t) in enumerate(zip(rows, tiles)):
            if not n:
                continue
            first = sum(tiles[:c])
            chunks.append(dict(n=n, tiles=t, row_base=sum(rows[:c]), tile_base=first, ticket=len(chunks),
                               groups=min(t, tuning["groups"]),
                               write_tiles=ceil_div(n, tuning["write_tile"]), last=c == max(np.nonzero(rows)[0]),
                               views={role: views[c] for role, views in roles.items()},
                               mask_out=masks_out[c] if masks_out is not None and kind == "vector" else
                               (masks_out[0] if masks_out is not None else None),
                               bits=words(bits, tile // 32, first, t), counts=words(counts, 1, first, t)))
        all_counts = words(counts, 1, 0, padded)
        # one word per chunk: the next tile a predicate workgroup takes; reset by the write pass (WebGPU
        # creates buffers zeroed, so the first encoding starts at 0 too)
        size = 16 * -(-len(chunks) // 4)
        self.tickets = graph.device.create_buffer(label=f"{self.id}-tickets", size=size, usage=STORAGE)
        tickets = graph.import_buffer(id=f"{self.id}-tickets", byte_length=size, usage=STORAGE, buffer=self.tickets)
        self.node_ids = [self._predicate_node(graph, chunks, params, tickets, tuning),
                         self._write_node(graph, chunks, outs, count, all_counts, tickets, tuning)]
        return self.node_ids

    def _predicate_node(self, graph, chunks, params, tickets, tuning) -> str:
        masks = len(self.masks)
        resources = [(v, "storage-read") for ch in chunks for k, v in ch["views"].items() if k != "source_ids"]
        resources += [(v, "storage-read") for v in params.values()]
        resources += [(ch["mask_out"], "storage-write") for ch in chunks if ch["mask_out"] is not None]
        resources += [(ch[k], "storage-write") for ch in chunks for k in ("bits", "counts")]
        resources.append((tickets, "storage-read-write"))

        def compile_predicate(ctx):
            align = storage_alignment(ctx.device)
            template = dict(masks=masks, subgroups=use_subgroups(ctx, None), iters=tuning["tile"] // 1024,
                            batch=tuning["batch"])
            views = [{**ch["views"], **params, "mask_out": ch["mask_out"], "bits": ch["bits"],
                      "counts": ch["counts"], **{f"mask{k}": ch["views"][f"masks[{k}]"] for k in range(masks)}}
                     for ch in chunks]
            numbers = {**ROLES, **{f"mask{k}": 10 + k for k in range(masks)}}

            def kernel(bound):
                layouts = {name: bound[name].layout if name in bound else "none" for name in numbers}
                code = wgsl("workflows/shaders/visibility.wgsl", layouts=layouts, spheres="spheres" in bound,
                            intervals="intervals" in bound, lod="lod" in bound, **template)
                return ComputeKernel(ctx.device, code=code, label=ctx.node_id, **_TRUSTED)

            return _chunk_dispatches(ctx, chunks, views, numbers, align, kernel,
                                     lambda ch: [ch["n"], ch["tiles"], ch["ticket"]],
                                     [StorageBinding(10 + masks, tickets, 0, tickets.byte_length)], groups="groups")

        return graph.add_compute_node(id=f"{self.id}-predicate", resources=resources, compile=compile_predicate)

    def _write_node(self, graph, chunks, outs, count, all_counts, tickets, tuning) -> str:
        used = [v for v in outs if v.length]
        resources = [(ch["bits"], "storage-read") for ch in chunks] + [(all_counts, "storage-read")]
        resources += [(ch["views"]["source_ids"], "storage-read") for ch in chunks if "source_ids" in ch["views"]]
        resources += [(v, "storage-write") for v in used] + [(count, "storage-write"), (tickets, "storage-write")]

        def compile_write(ctx):
            align = storage_alignment(ctx.device)
            dst, scatter, out_rows, out_off = _scatter_plan(used, align, 7)
            fixed = {}
            if out_rows is not None:
                chunk_table = ctx.own(ctx.device.create_buffer_with_data(
                    label=f"{ctx.node_id}-output-chunks", data=out_rows.tobytes(), usage=STORAGE))
                fixed[4] = (chunk_table, 0, chunk_table.size)
            write = tuning["write_tile"]
            template = dict(subgroups=use_subgroups(ctx, None), scatter=scatter, iters=write // 1024,
                            wpl=max(1, write // 8192), quads=tuning["quads"])
            views = [{"bits": ch["bits"], "counts": all_counts, "ids": ch["views"].get("source_ids"), "count": count}
                     for ch in chunks]

            def kernel(bound):
                layouts = {name: bound[name].layout if name in bound else "none" for name in WRITE_ROLES}
                code = wgsl("workflows/shaders/visibility_write.wgsl", layouts=layouts, **template)
                return ComputeKernel(ctx.device, code=code, label=ctx.node_id, **_TRUSTED)

            return _chunk_dispatches(ctx, chunks, views, WRITE_ROLES, align, kernel,
                                     lambda ch: [ch["n"], ch["write_tiles"], ch["row_base"], out_off, ch["tile_base"],
                                                 write // tuning["tile"], int(ch["last"]), ch["ticket"]],
                                     [*dst, StorageBinding(6, tickets, 0, tickets.byte_length)], fixed,
                                     groups="write_tiles")

        return graph.add_compute_node(id=f"{self.id}-write", resources=resources, compile=compile_write)


def _chunk_dispatches(ctx, chunks, views, numbers, align, make_kernel, header, extra=(), fixed=None, groups="tiles"):
    """The encode callback of one dispatch per chunk: chunk c's ``views[c]``
    bound at ``numbers`` (absent or None: the role's layout is "none"), a
    kernel from ``make_kernel({role: ViewBinding})``, and a uniform slot
    holding ``header(chunk)`` then the bound views' element offsets in
    ``numbers`` order (0 for absent roles). ``extra`` storage bindings and
    ``fixed`` resolved bindings are the same for every chunk; the chunk's
    ``groups`` entry is its workgroup count."""
    rows = []
    for ch, chunk_views in zip(chunks, views):
        bound = {name: view_binding(number, chunk_views[name], alignment=align)
                 for name, number in numbers.items() if chunk_views.get(name) is not None}
        offsets = [bound[name].offset if name in bound else 0 for name in numbers]
        rows.append((make_kernel(bound), [*extra, *(b.storage for b in bound.values())],
                     [*header(ch), *offsets], ch[groups]))
    slot = uniform_slot(ctx.device, max(16, -(-4 * len(rows[0][2]) // 16) * 16))
    table = np.zeros((len(rows), slot // 4), np.uint32)
    for row, (_, _, words, _) in enumerate(rows):
        table[row, :len(words)] = words
    uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=table.tobytes(),
                                                         usage=wgpu.BufferUsage.UNIFORM))
    fixed = dict(fixed or {})

    def encode(compute_pass, frame):
        for row, (kernel, bindings, _, groups) in enumerate(rows):
            resolved = {b.binding: b.resolve(frame) for b in bindings}
            resolved.update(fixed)
            resolved[0] = (uniform, row * slot, slot)
            kernel.dispatch(compute_pass, frame, bindings=resolved, workgroups=groups)
    return encode

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
    value = {"dst": [b.binding for b in dst], "table": len(used) > 1}
    if len(used) == 1:
        return dst, value, None, (used[0].byte_offset - dst[0].start) // 4
    rows, end = np.zeros((len(used), 4), np.uint32), 0
    for i, view in enumerate(used):
        j = slots[view.handle]
        rows[i, :3] = (end + view.length, ((view.byte_offset - dst[j].start) // 4 - end) % (1 << 32), j)
        end += view.length
    return dst, value, rows, 0
