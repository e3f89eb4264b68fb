"""GPUGridIndex: a uniform grid over 2-D or 3-D float32 points, rebuilt on
the GPU every encoding as exclusive row-major cell offsets plus the row IDs
of each cell in source order.

The build is count, scan, stable scatter: a key node classifies every row
(cell, or rejected as non-finite or out of domain) and counts rows per
cell (``shaders/grid_build.wgsl``); a chained :class:`~gpuviz.GPUScan` of
the counts gives the offsets and the accepted count; a stable
:class:`~gpuviz.GPUSort` of (cell, row) pairs is the scatter that keeps
source order inside a cell; a finalize node copies the first ``capacity``
sorted rows into ``ids``.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..algorithms import GPUSort
from ..algorithms.dispatch import WORKGROUP, ceil_div
from ..algorithms.hash_table import WithStatistics, check_index_graph, stat_property, stat_rows, stats_view
from ..algorithms.scan import ChainedScan
from ..algorithms.validation import check_topology, chunks_of, refuse_overlaps
from ..algorithms.views import storage_alignment, uniform_slot, view_binding
from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.resources import GraphDataView, GraphVectorView
from ..graph.shaders import wgsl
from .outputs import output_view

__all__ = ["GPUGridIndex", "GRID_STATS", "GridDomain", "POINT_FORMATS", "point_chunks", "grid_words"]

STORAGE = wgpu.BufferUsage.STORAGE
#: Point view formats by dimension.
POINT_FORMATS = {2: "float32x2", 3: "float32x3"}
#: Index statistics, one uint32 word each: accepted rows (all of them, also
#: those past capacity), rows that did not fit ``ids`` (count - capacity, or
#: 0), rows with a NaN or infinite coordinate, finite rows outside the
#: domain, source rows, capacity, and two reserved words.
GRID_STATS = ("count", "overflow", "nonfinite", "outside", "rows", "capacity", "reserved0", "reserved1")
PARAMS_BYTES = 112  # grid_build.wgsl: BuildParams (Grid, then twelve words)
MAX_CELLS = (1 << 32) - 2  # a cell key below the sort's SKIP key, cells + 1 offsets in u32


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def point_chunks(owner: str, id: str, name: str, points, graph) -> tuple:
    """``(dims, kind, views)`` of packed float32x2 / float32x3 points of ``graph``."""
    kind, views = chunks_of(owner, id, name, points, graph, formats=tuple(POINT_FORMATS.values()))
    dims = 2 if views and views[0].format.name == "float32x2" else 3
    if not views:  # an empty vector: its format names the dimension
        dims = 2 if points.format.name == "float32x2" else 3
    return dims, kind, views


class GridDomain:
    """A checked grid: domain corners, cells per axis, and the float32
    values the cell function uses (internal; the oracle mirrors it).

    The cell of a coordinate ``x`` on an axis is
    ``min(floor((x - lo) * scale), cells - 1)`` in float32 arithmetic, with
    ``scale = float32(cells / (hi - lo))``: monotone in ``x``, and the
    maximum coordinate lands in the last cell.
    """

    def __init__(self, owner: str, domain, cells, dims: int):
        try:
            lo, hi = domain
            lo = np.asarray(lo, np.float64).reshape(-1)
            hi = np.asarray(hi, np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} domain must be ((min...), (max...)) (got {domain!r})") from None
        if lo.size != dims or hi.size != dims:
            raise GraphValidationError(f"{owner} domain corners need {dims} coordinates for {dims}-D points "
                                       f"(got {lo.size} and {hi.size})")
        if not isinstance(cells, (tuple, list)) or len(cells) != dims:
            raise GraphValidationError(f"{owner} cells must be {dims} positive ints (got {cells!r})")
        for n in cells:
            if not _is_int(n) or n <= 0:
                raise GraphValidationError(f"{owner} cells must be positive ints (got {list(cells)})")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            lo32, hi32 = lo.astype(np.float32), hi.astype(np.float32)
            extent = hi32 - lo32
            scale = (np.asarray(cells, np.float64) / extent.astype(np.float64)).astype(np.float32)
        if not (np.isfinite(lo32).all() and np.isfinite(hi32).all()):
            raise GraphValidationError(f"{owner} domain must be finite float32 values (got {lo.tolist()}, "
                                       f"{hi.tolist()})")
        if not (extent > 0).all() or not np.isfinite(extent).all() or not (np.isfinite(scale) & (scale > 0)).all():
            axis = int(np.argmin((extent > 0) & np.isfinite(extent) & np.isfinite(scale) & (scale > 0)))
            raise GraphValidationError(f"{owner} domain axis {axis} has no usable extent in float32 "
                                       f"(min {lo32[axis]!r}, max {hi32[axis]!r}, {cells[axis]} cells)")
        total = int(np.prod([int(n) for n in cells], dtype=object))
        if total > MAX_CELLS:
            raise GraphValidationError(f"{owner} has {total} cells, over the {MAX_CELLS} a uint32 offset table holds")
        self.dims = dims
        self.lo, self.hi, self.scale = lo32, hi32, scale
        self.cells = tuple(int(n) for n in cells)
        self.total = total

    def words(self) -> np.ndarray:
        """The 16 words of the WGSL ``Grid`` record (grid_common.wgsl)."""
        words = np.zeros(16, np.uint32)
        floats = words.view(np.float32)
        d = self.dims
        floats[0:d], floats[4:4 + d], floats[8:8 + d] = self.lo, self.hi, self.scale
        words[12:15] = 1
        words[12:12 + d] = self.cells
        words[15] = self.total
        return words


def grid_words(domain: GridDomain, slot_words: int) -> np.ndarray:
    """A uniform slot of ``slot_words`` words starting with the Grid record."""
    words = np.zeros(slot_words, np.uint32)
    words[:16] = domain.words()
    return words


class GPUGridIndex(WithStatistics):
    """A uniform grid of 2-D or 3-D points: cell offsets and stable row IDs.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-key"``, ``"{id}-sort"``...).
    points : GraphDataView or GraphVectorView
        Packed ``float32x2`` or ``float32x3`` points; a vector's chunks are
        one logical sequence (row IDs run across them; empty chunks allowed).
    domain : ((float, ...), (float, ...))
        ``(minimum, maximum)`` corners, finite, ``minimum < maximum`` on every
        axis in float32. Rows outside it (inclusive) are ignored and counted.
    cells : (int, ...)
        Cells per axis (``nx, ny[, nz]``), row-major with x fastest: cell
        ``cx + nx * (cy + ny * cz)``. At most 2**32 - 2 in all, and the
        offsets must fit one storage binding.
    source_ids : GraphDataView or GraphVectorView, optional
        Packed ``uint32`` IDs aligned with ``points`` (same kind; a vector
        with the same chunk lengths): ``ids`` then holds these instead of
        row numbers, and a query's mask is addressed by them. Default: the
        global row number. An index with explicit IDs cannot feed
        :class:`GPUPointSpatialFilter` candidates (an ID no longer locates
        its point).
    capacity : int, optional
        Rows ``ids`` holds (default: the source rows, at least 1). Must be
        positive: a capacity of 0 is refused.
    ids, cell_offsets, stats : GraphDataView, optional
        Caller-owned packed ``uint32`` outputs of at least ``capacity``,
        ``cells + 1`` and 8 rows; by default graph transients
        ``"{id}-ids"``, ``"{id}-cell-offsets"`` and ``"{id}-stats"``.

    Attributes
    ----------
    ids, cell_offsets, stats : GraphDataView
        After ``add_to_graph``. ``cell_offsets[c]..cell_offsets[c + 1]`` are
        the positions in ``ids`` of cell ``c``'s rows, ascending (source
        order); positions at or past ``capacity`` were not written.
    count, overflow, nonfinite, outside : GraphDataView
        One-row views of ``stats`` (:data:`GRID_STATS`).
    rows, dims, cell_count : int

    Notes
    -----
    The cell of coordinate ``x`` on an axis is
    ``min(floor((x - lo) * scale), cells - 1)`` in float32, with
    ``scale = float32(cells / (hi - lo))``: the maximum coordinate falls in
    the last cell, and the function is monotone, so a query's cell range
    holds every point of its region. Rows with a NaN or infinite coordinate
    and finite rows outside the domain are ignored and counted, never
    clamped into a border cell.

    The update policy is "rebuild": every encoding clears the counts, counts,
    scans and scatters from the current point contents (write them between
    encodings; no recompile). Does not submit, map or read back, does not
    update single rows incrementally, and does not store rows past
    ``capacity`` (``overflow`` says how many).
    """

    owner = "GPUGridIndex"

    def __init__(self, *, id: str, points, domain, cells, capacity: int | None = None, ids=None,
                 cell_offsets=None, stats=None, source_ids=None):
        owner = self.owner
        self.id = check_id(owner, id)
        label = f'{owner} "{id}"'
        if not isinstance(points, (GraphDataView, GraphVectorView)):
            raise GraphValidationError(f"{label} points must be a GraphDataView or GraphVectorView "
                                       f"(got {type(points).__name__})")
        fmt = points.format.name
        if fmt not in POINT_FORMATS.values():
            raise GraphValidationError(f"{label} points must be float32x2 or float32x3 (got {fmt})")
        self.dims = 2 if fmt == "float32x2" else 3
        self.domain = GridDomain(label, domain, cells, self.dims)
        views = points.views if isinstance(points, GraphVectorView) else (points,)
        self.rows = sum(v.length for v in views)
        if capacity is None:
            capacity = max(self.rows, 1)
        elif not _is_int(capacity):
            raise GraphTypeError(f"{label} capacity must be an int (got {type(capacity).__name__})")
        if capacity < 1:
            raise GraphValidationError(f"{label} capacity must be at least 1 (got {capacity})")
        self.capacity = int(capacity)
        self.points = points
        self.source_ids = source_ids
        self.cell_count = self.domain.total
        self._outputs = {"ids": ids, "cell_offsets": cell_offsets, "stats": stats}
        self.ids = self.cell_offsets = self.stats = None
        self.graph = None
        self.point_views: tuple = ()
        self.node_ids: list = []

    count = stat_property("count", "Accepted rows, also those past capacity (one row).")
    overflow = stat_property("overflow", "Accepted rows not stored in ids (one row).")
    nonfinite = stat_property("nonfinite", "Rows with a NaN or inf coordinate (one row).")
    outside = stat_property("outside", "Finite rows outside the domain (one row).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph``, declare the outputs and add the build
        nodes; returns their IDs."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        dims, kind, views = point_chunks(owner, id, "points", self.points, graph)
        sources = None
        if self.source_ids is not None:
            source_kind, sources = chunks_of(owner, id, "source_ids", self.source_ids, graph)
            check_topology(owner, id, "source_ids", "points", source_kind, sources, kind, views)
            if kind == "data" and sources[0].length < self.rows:
                raise GraphValidationError(f'{owner} "{id}" source_ids is shorter than points (needs {self.rows} '
                                           f"rows, got {sources[0].length})")
        cells = self.cell_count
        limit = int(graph.device.limits["max-storage-buffer-binding-size"])
        if 4 * (cells + 1) > limit:
            raise GraphValidationError(f'{owner} "{id}" cell offsets need {4 * (cells + 1)} bytes ({cells} cells), '
                                       f"over the device's max-storage-buffer-binding-size of {limit} bytes")
        if 4 * max(self.rows, self.capacity) > limit:
            raise GraphValidationError(f'{owner} "{id}" needs {4 * max(self.rows, self.capacity)} bytes of row IDs '
                                       f"in one binding, over the device's limit of {limit} bytes")
        ids = output_view(owner, id, "ids", self._outputs["ids"], graph, self.capacity)
        offsets = output_view(owner, id, "cell_offsets", self._outputs["cell_offsets"], graph, cells + 1)
        stats = stats_view(owner, id, graph, self._outputs["stats"], "stats")
        refuse_overlaps(owner, id, reads={"points": views, "source_ids": sources},
                        writes={"ids": ids, "cell_offsets": offsets, "stats": stats}, separate=True)
        self.ids, self.cell_offsets, self.stats = ids, offsets, stats
        self._stat_views = stat_rows(graph, stats, GRID_STATS)
        self.point_views = tuple(views)
        self.graph = graph
        n = max(self.rows, 1)

        def transient(name, rows):
            handle = graph.create_transient_buffer(id=f"{id}-{name}", byte_length=4 * rows, usage=STORAGE)
            return graph.create_data_view(handle, format="uint32", length=rows)

        counts = transient("cell-counts", cells)
        keys, rowids = transient("keys", n), transient("rows", n)
        sorted_keys, sorted_rows = transient("sorted-keys", n), transient("sorted-rows", n)
        resources = [(counts, "storage-read-write"), (stats, "storage-read-write")]
        if self.rows:
            resources += [(keys, "storage-write"), (rowids, "storage-write")]
            resources += [(v, "storage-read") for v in views if v.length]
            resources += [(sources[c], "storage-read") for c, v in enumerate(views) if sources and v.length]
        node_ids = [graph.add_compute_node(id=f"{id}-key", resources=resources,
                                           compile=lambda ctx: self._compile_key(ctx, views, sources, counts, keys,
                                                                                 rowids))]
        head = graph.create_data_view(offsets.handle, format="uint32", length=cells, byte_offset=offsets.byte_offset)
        node_ids += ChainedScan(id=f"{id}-scan", data=[counts], out=[head], total=self._stat_views["count"],
                                owner=owner, owner_id=id).add_to_graph(graph)
        if self.rows:
            key_view = graph.create_data_view(keys.handle, format="uint32", length=self.rows)
            row_view = graph.create_data_view(rowids.handle, format="uint32", length=self.rows)
            out_keys = graph.create_data_view(sorted_keys.handle, format="uint32", length=self.rows)
            out_rows = graph.create_data_view(sorted_rows.handle, format="uint32", length=self.rows)
            node_ids += GPUSort(id=f"{id}-sort", keys=key_view, values=row_view, output_keys=out_keys,
                                output_values=out_rows, key_bits=max(1, cells.bit_length())).add_to_graph(graph)
        # with no rows sorted_rows is never written, but finalize still binds it (and reads none of it)
        resources = [(stats, "storage-read-write"), (ids, "storage-write"), (offsets, "storage-read-write"),
                     (sorted_rows, "storage-read")]
        node_ids.append(graph.add_compute_node(id=f"{id}-finalize", resources=resources,
                                               compile=lambda ctx: self._compile_finalize(ctx, ids, offsets,
                                                                                          sorted_rows)))
        self.node_ids = node_ids
        return node_ids

    def _params(self, ctx, rows: int):
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((rows, slot // 4), np.uint32)
        params[:] = grid_words(self.domain, slot // 4)
        return slot, params

    def _compile_key(self, ctx, views, sources, counts, keys, rowids):
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/grid_build.wgsl", dims=self.dims, source_ids=sources is not None)
        kernels = {entry: ComputeKernel(ctx.device, code=code, entry_point=entry, label=f"{ctx.node_id}-{entry}")
                   for entry in ("clear", "key")}
        stats_b = view_binding(5, self.stats, alignment=align, vec4=False)
        work = [(c, v, base) for c, (v, base) in enumerate(zip(views, np.cumsum([0] + [v.length for v in views])))
                if v.length]
        slot, params = self._params(ctx, len(work) + 1)
        params[:, 19] = stats_b.offset
        point_bindings = []
        for row, (c, view, base) in enumerate(work):
            pb = view_binding(1, view, alignment=align, vec4=False)
            params[row, 16:19] = (view.length, base, pb.offset)
            bound = [pb.storage]
            if sources is not None:
                sb = view_binding(9, sources[c], alignment=align, vec4=False)
                params[row, 24] = sb.offset
                bound.append(sb.storage)
            point_bindings.append(bound)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        clear_params = (uniform, len(work) * slot, PARAMS_BYTES)
        clear_groups = ceil_div(max(self.cell_count, 8), WORKGROUP)

        def encode(compute_pass, frame):
            shared = {2: counts, 5: stats_b.storage.resolve(frame)}
            kernels["clear"].dispatch(compute_pass, frame, bindings={0: clear_params, **shared},
                                      workgroups=clear_groups)
            for row, (bound, (_, view, _)) in enumerate(zip(point_bindings, work)):
                kernels["key"].dispatch(compute_pass, frame, workgroups=ceil_div(view.length, WORKGROUP),
                                        bindings={0: (uniform, row * slot, PARAMS_BYTES), 3: keys, 4: rowids,
                                                  **{b.binding: b.resolve(frame) for b in bound}, **shared})
        return encode

    def _compile_finalize(self, ctx, ids, offsets, sorted_rows):
        align = storage_alignment(ctx.device)
        code = wgsl("spatial/shaders/grid_build.wgsl", dims=self.dims, source_ids=False)
        kernel = ComputeKernel(ctx.device, code=code, entry_point="finalize", label=ctx.node_id)
        stats_b = view_binding(5, self.stats, alignment=align, vec4=False)
        ids_b = view_binding(7, ids, alignment=align, vec4=False)
        off_b = view_binding(8, offsets, alignment=align, vec4=False)
        slot, params = self._params(ctx, 1)
        params[0, 19:24] = (stats_b.offset, off_b.offset, ids_b.offset, self.capacity, self.rows)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        groups = ceil_div(self.capacity, WORKGROUP)

        def encode(compute_pass, frame):
            kernel.dispatch(compute_pass, frame, workgroups=groups,
                            bindings={0: (uniform, 0, PARAMS_BYTES), 5: stats_b.storage.resolve(frame),
                                      6: sorted_rows, 7: ids_b.storage.resolve(frame),
                                      8: off_b.storage.resolve(frame)})
        return encode


def check_grid_index(owner: str, id: str, index, graph) -> None:
    """Refuse an index that is not a GPUGridIndex added to ``graph``."""
    if not isinstance(index, GPUGridIndex):
        raise GraphValidationError(f'{owner} "{id}" index must be a GPUGridIndex (got {type(index).__name__})')
    check_index_graph(owner, id, index, graph)
