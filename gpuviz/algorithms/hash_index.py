"""GPUHashIndex: a fixed-capacity open-addressing map from uint32 keys (one
or two words) to uint32 values, rebuilt on the GPU every encoding.

The build is three dispatches in one node (``shaders/hash_build.wgsl``):
clear the table, insert every row (one dispatch per key chunk), finalize the
claimed slots into values. :class:`GPUBatchHashIndex` is the same build over
a vector's chunks. Queries and joins read the table in later nodes of the
same graph (:class:`GPUHashIndexQuery`, :class:`GPUHashJoin`).
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.compat import is_destroyed
from ..graph.resources import GraphDataView, GraphVectorView
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .hash_table import (INDEX_STATS, WithStatistics, check_index_graph, key_chunks, record_words, stat_property,
                         stat_rows, stats_view)
from .validation import chunks_of, refuse_overlaps
from .views import storage_alignment, uniform_slot, view_binding

__all__ = ["GPUHashIndex", "check_index", "default_capacity"]

STORAGE = wgpu.BufferUsage.STORAGE
MAX_CAPACITY = 1 << 30  # slot * record words stays a u32 (hash_build.wgsl)
PARAMS_BYTES = 32  # hash_build.wgsl: BuildParams


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def default_capacity(rows: int) -> int:
    """The next power of two at least twice ``rows`` (1 for no rows)."""
    return 1 << max(0, 2 * rows - 1).bit_length() if rows else 1


class GPUHashIndex(WithStatistics):
    """A uint32-keyed map of one packed batch of keys, rebuilt every encoding.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-build"``, ``"{id}-table"``).
    keys : GraphDataView
        Packed keys of this graph: ``uint32`` rows for ``key_words=1``,
        ``uint32x2`` rows (low word, then high word: e.g. an int64 split, or
        (process group, sequence number)) for ``key_words=2``.
    values : GraphDataView, optional
        Packed ``uint32``, at least one row per key: what a lookup of the
        row's key returns. Default: the source row (0, 1, ...).
    capacity : int, optional
        Table slots, a power of two from 1 to 2**30. Default: the next power
        of two at least twice the rows. Structural: a new capacity is a new
        graph.
    key_words : {1, 2}
    max_load_factor : float
        The most rows per slot accepted at construction (default 0.9; at
        most 1.0, which allows an exactly full table).
    max_probe_length : int, optional
        Slots one row may visit before it counts as ``overflow`` (default:
        the capacity, so no row overflows). A bound caps the work a
        hash-flooding key set can cause.
    stats : GraphDataView, optional
        Eight packed uint32 rows receiving the statistics (fields in
        :data:`~gpuviz.algorithms.hash_table.INDEX_STATS` order). Default:
        a graph transient ``"{id}-stats"``.

    Attributes
    ----------
    table : GraphDataView
        After ``add_to_graph``: the graph transient ``"{id}-table"``,
        ``capacity`` records of 2 words (key, value) or 4 words (low, high,
        value, pad); an empty slot has every key word equal to
        :data:`~gpuviz.algorithms.EMPTY_KEY` and value :data:`~gpuviz.algorithms.NOT_FOUND`.
    stats : GraphDataView
    inserted_count, duplicate_count, overflow, invalid, max_probe_length, total_probe_length : GraphDataView
        One-row views of ``stats`` (total_probe_length: two rows, low word
        first). ``inserted_count`` counts distinct keys stored;
        ``duplicate_count`` rows whose key an earlier-stored row already
        holds; ``overflow`` rows that found no slot; ``invalid`` rows whose
        key is the reserved :data:`~gpuviz.algorithms.EMPTY_KEY` (0xFFFFFFFF in every word).
        They sum to the source rows.

    Notes
    -----
    Linear probing from ``hash(key) & (capacity - 1)``; the hash is
    murmur3's 32-bit finalizer (one word) or murmur3_32 of both words (two),
    a real mixing function, so keys that are multiples of the capacity
    spread out; a key set crafted to share one probe chain still finishes
    (each row visits at most ``max_probe_length`` slots) and shows up in
    the probe statistics.

    Duplicate keys are deterministic: the value of the lowest source row
    wins (a claimed slot's row is lowered with atomicMin by every equal
    key). Which slot a key lands in, and so the probe statistics, may vary
    between encodings when rows race; the key-to-value map does not, as
    long as ``overflow`` is 0. With overflow, which keys are missing is
    unspecified, and a query reports the index as incomplete.

    Every encoding rebuilds the table from the current key and value
    contents (write them between encodings: no recompile). Zero rows still
    clears the table and the statistics. Does not submit, map or read back,
    does not delete or update single keys (rebuild instead), and does not
    store more than one value per key.
    """

    owner = "GPUHashIndex"

    def __init__(self, *, id: str, keys, values=None, capacity: int | None = None, key_words: int = 1,
                 max_load_factor: float = 0.9, max_probe_length: int | None = None, stats=None):
        owner = self.owner
        self.id = check_id(owner, id)
        if key_words not in (1, 2) or isinstance(key_words, bool):
            raise GraphValidationError(f'{owner} "{id}" key_words must be 1 or 2 (got {key_words!r})')
        self._check_keys_type(keys)
        rows = keys.length
        if not isinstance(max_load_factor, (int, float)) or not 0 < max_load_factor <= 1:
            raise GraphValidationError(f'{owner} "{id}" max_load_factor must be in (0, 1] (got {max_load_factor!r})')
        if capacity is None:
            capacity = default_capacity(rows)
        elif not _is_int(capacity):
            raise GraphTypeError(f'{owner} "{id}" capacity must be an int (got {type(capacity).__name__})')
        capacity = int(capacity)
        if capacity < 1 or capacity > MAX_CAPACITY or capacity & (capacity - 1):
            raise GraphValidationError(f'{owner} "{id}" capacity must be a power of two from 1 to {MAX_CAPACITY} '
                                       f"(got {capacity})")
        if rows > capacity:
            raise GraphValidationError(f'{owner} "{id}" capacity {capacity} is below the {rows} rows to insert')
        if rows > max_load_factor * capacity:
            raise GraphValidationError(
                f'{owner} "{id}" load factor {rows / capacity:.3f} ({rows} rows in {capacity} slots) is over the '
                f"maximum {max_load_factor} (raise capacity to {default_capacity(rows)})")
        if max_probe_length is None:
            max_probe_length = capacity
        elif not _is_int(max_probe_length) or not 1 <= max_probe_length <= capacity:
            raise GraphValidationError(f'{owner} "{id}" max_probe_length must be an int from 1 to the capacity '
                                       f"{capacity} (got {max_probe_length!r})")
        if values is not None and not isinstance(values, GraphDataView):
            raise GraphValidationError(f'{owner} "{id}" values must be a GraphDataView (got {type(values).__name__})')
        if values is not None and values.length < rows:
            raise GraphValidationError(f'{owner} "{id}" values is shorter than keys (needs {rows} rows, '
                                       f"got {values.length})")
        self.keys = keys
        self.values = values
        self.capacity = capacity
        self.key_words = int(key_words)
        self.rows = rows
        self.max_load_factor = max_load_factor
        self.max_probe_length_limit = int(max_probe_length)
        self._stats_arg = stats
        self.graph = None
        self.table = self.stats = None
        self.key_views: tuple = ()
        self.node_ids: list = []

    def _check_keys_type(self, keys) -> None:
        if not isinstance(keys, GraphDataView):
            hint = " (use GPUBatchHashIndex for chunked keys)" if isinstance(keys, GraphVectorView) else ""
            raise GraphValidationError(f'{self.owner} "{self.id}" keys must be a GraphDataView{hint} '
                                       f"(got {type(keys).__name__})")

    # ----------------------------------------------------------------- stats
    inserted_count = stat_property("inserted_count", "Distinct keys stored (one row).")
    duplicate_count = stat_property("duplicate_count", "Rows whose key was already stored (one row).")
    overflow = stat_property("overflow", "Rows that found no slot (one row).")
    invalid = stat_property("invalid", "Rows keyed EMPTY_KEY, not inserted (one row).")
    max_probe_length = stat_property("max_probe_length", "Most slots one row visited (one row).")

    @property
    def total_probe_length(self):
        """Slots visited by all rows, two rows (low word, high word)."""
        low = self._stat("total_probe_length_low")
        return self.graph.create_data_view(low.handle, format="uint32", length=2, byte_offset=low.byte_offset)

    # ----------------------------------------------------------------- graph
    def _key_views(self, graph) -> tuple:
        return key_chunks(self.owner, self.id, "keys", self.keys, graph, self.key_words)[1]

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph``, declare the table and add the build
        node; returns its ID."""
        owner, id = self.owner, self.id
        if self.graph is not None:
            raise GraphStateError(f'{owner} "{id}" was already added to graph "{self.graph.id}"')
        chunks = self._key_views(graph)
        values = None
        if self.values is not None:
            values = chunks_of(owner, id, "values", self.values, graph)[1][0]
        words = self.capacity * record_words(self.key_words)
        limit = int(graph.device.limits["max-storage-buffer-binding-size"])
        if 4 * words > limit:
            raise GraphValidationError(f'{owner} "{id}" table needs {4 * words} bytes ({self.capacity} slots), over '
                                       f"the device's max-storage-buffer-binding-size of {limit} bytes")
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        refuse_overlaps(owner, id, reads={"keys": chunks, "values": values}, writes={"stats": stats}, separate=True)
        handle = graph.create_transient_buffer(id=f"{id}-table", byte_length=4 * words, usage=STORAGE)
        self.table = graph.create_data_view(handle, format="uint32", length=words)
        self.stats = stats
        self._stat_views = stat_rows(graph, stats, INDEX_STATS)
        self.key_views = tuple(chunks)
        resources = [(self.table, "storage-read-write"), (stats, "storage-read-write")]
        resources += [(v, "storage-read") for v in chunks if v.length]
        if values is not None and values.length:
            resources.append((values, "storage-read"))
        self.graph = graph
        node = graph.add_compute_node(id=f"{id}-build", resources=resources,
                                      compile=lambda ctx: self._compile(ctx, chunks, values, stats))
        self.node_ids = [node]
        return self.node_ids

    def _compile(self, ctx, chunks, values, stats):
        align = storage_alignment(ctx.device)
        stats_b = view_binding(2, stats, alignment=align, vec4=False)
        values_b = None if values is None or not self.rows else view_binding(4, values, alignment=align, vec4=False)
        template = dict(key_words=self.key_words, values=values_b is not None)
        code = wgsl("algorithms/shaders/hash_build.wgsl", **template)
        constants = {"CAPACITY": self.capacity, "MAX_PROBE": self.max_probe_length_limit}
        kernels = {entry: ComputeKernel(ctx.device, code=code, entry_point=entry, constants=constants,
                                        label=f"{ctx.node_id}-{entry}")
                   for entry in ("clear", "insert", "finalize")}
        work = [(c, base) for c, base in zip(chunks, np.cumsum([0] + [v.length for v in chunks])) if c.length]
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((len(work) + 1, slot // 4), np.uint32)
        params[:, 4] = stats_b.offset
        params[:, 5] = self.rows
        if values_b is not None:
            params[-1, 3] = values_b.offset
        key_bindings = []
        for row, (view, base) in enumerate(work):
            kb = view_binding(3, view, alignment=align, vec4=False)
            params[row, :3] = (view.length, base, kb.offset)
            key_bindings.append(kb.storage)
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        table, clear_groups = self.table, ceil_div(self.capacity, WORKGROUP)
        last = (uniform, len(work) * slot, PARAMS_BYTES)

        def encode(compute_pass, frame):
            shared = {1: table, 2: stats_b.storage.resolve(frame)}
            kernels["clear"].dispatch(compute_pass, frame, bindings={0: last, **shared}, workgroups=clear_groups)
            for row, (kb, (view, _)) in enumerate(zip(key_bindings, work)):
                kernels["insert"].dispatch(compute_pass, frame, workgroups=ceil_div(view.length, WORKGROUP),
                                           bindings={0: (uniform, row * slot, PARAMS_BYTES), 3: kb.resolve(frame),
                                                     **shared})
            final = {0: last, **shared}
            if values_b is not None:
                final[4] = values_b.storage.resolve(frame)
            kernels["finalize"].dispatch(compute_pass, frame, bindings=final, workgroups=clear_groups)
        return encode


def check_index(owner: str, id: str, index, graph) -> None:
    """Refuse an index that is not a hash index added to ``graph``, or whose
    source keys live in a destroyed buffer, before anything is recorded."""
    if not isinstance(index, GPUHashIndex):
        raise GraphValidationError(f'{owner} "{id}" index must be a GPUHashIndex or GPUBatchHashIndex '
                                   f"(got {type(index).__name__})")
    check_index_graph(owner, id, index, graph)
    for view in index.key_views:
        buffer = view.handle.buffer
        if buffer is not None and is_destroyed(buffer):
            raise GraphStateError(f'{owner} "{id}" index "{index.id}" keys buffer "{view.handle.id}" was destroyed')

