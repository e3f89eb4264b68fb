"""GPUHashIndexQuery: bounded lookup of packed or chunked keys in a
GPUHashIndex or GPUBatchHashIndex built earlier in the same graph
(``shaders/hash_lookup.wgsl``). :func:`add_lookup_node` is the lookup node
GPUHashJoin shares."""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div
from .hash_index import check_index
from .hash_table import LOOKUP_STATS, WithStatistics, key_chunks, stat_property, stat_rows, stats_view
from .validation import check_topology, chunks_of, refuse_overlaps
from .views import storage_alignment, uniform_slot, view_binding

__all__ = ["GPUHashIndexQuery", "add_lookup_node"]

PARAMS_BYTES = 32  # hash_lookup.wgsl: LookupParams


def add_lookup_node(graph, node_id: str, index, keys, outputs, founds, stats) -> str:
    """A node that zeroes ``stats`` (copying the index's overflow into it)
    and looks every key chunk up: ``outputs[c]`` gets values, ``founds[c]``
    (when not None) 0/1. Chunks are packed data views, already validated."""
    work = [c for c, view in enumerate(keys) if view.length]
    resources = [(index.table, "storage-read"), (index.stats, "storage-read"), (stats, "storage-read-write")]
    for c in work:
        resources += [(keys[c], "storage-read"), (outputs[c], "storage-write")]
        if founds is not None:
            resources.append((founds[c], "storage-write"))

    def compile_lookup(ctx):
        align = storage_alignment(ctx.device)
        stats_b = view_binding(6, stats, alignment=align, vec4=False)
        istats_b = view_binding(2, index.stats, alignment=align, vec4=False)
        code = wgsl("algorithms/shaders/hash_lookup.wgsl", key_words=index.key_words, found=founds is not None)
        kernels = {entry: ComputeKernel(ctx.device, code=code, entry_point=entry, label=f"{ctx.node_id}-{entry}",
                                        constants={"CAPACITY": index.capacity}) for entry in ("reset", "lookup")}
        slot = uniform_slot(ctx.device, PARAMS_BYTES)
        params = np.zeros((len(work) + 1, slot // 4), np.uint32)
        params[:, 4:6] = (stats_b.offset, istats_b.offset)
        chunk_bindings = []
        for row, c in enumerate(work):
            kb = view_binding(3, keys[c], alignment=align, vec4=False)
            ob = view_binding(4, outputs[c], alignment=align, vec4=False)
            bound = [kb.storage, ob.storage]
            params[row, :3] = (keys[c].length, kb.offset, ob.offset)
            if founds is not None:
                fb = view_binding(5, founds[c], alignment=align, vec4=False)
                params[row, 3] = fb.offset
                bound.append(fb.storage)
            chunk_bindings.append((row, keys[c].length, bound))
        uniform = ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=params.tobytes(),
                                                             usage=wgpu.BufferUsage.UNIFORM))
        reset_params = (uniform, len(work) * slot, PARAMS_BYTES)

        def encode(compute_pass, frame):
            shared = {2: istats_b.storage.resolve(frame), 6: stats_b.storage.resolve(frame)}
            kernels["reset"].dispatch(compute_pass, frame, bindings={0: reset_params, **shared}, workgroups=1)
            for row, n, bound in chunk_bindings:
                bindings = {0: (uniform, row * slot, PARAMS_BYTES), 1: index.table, **shared}
                bindings.update({b.binding: b.resolve(frame) for b in bound})
                kernels["lookup"].dispatch(compute_pass, frame, bindings=bindings, workgroups=ceil_div(n, WORKGROUP))
        return encode

    return graph.add_compute_node(id=node_id, resources=resources, compile=compile_lookup)


class GPUHashIndexQuery(WithStatistics):
    """Look packed or chunked keys up in a hash index: value or not-found.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-lookup"``).
    index : GPUHashIndex or GPUBatchHashIndex
        Added to the same graph before this query (its table is read by a
        later node of the same encoding).
    keys : GraphDataView or GraphVectorView
        Packed keys in the index's key format (``uint32``, or ``uint32x2``
        for two key words); a vector is looked up chunk by chunk in place.
    output : GraphDataView or GraphVectorView
        Packed ``uint32``, same kind as keys (a data view at least as long;
        a vector with identical chunk lengths): the stored value of each
        key, or :data:`~gpuviz.algorithms.hash_table.NOT_FOUND`
        (0xFFFFFFFF) for a missing or invalid key.
    found : GraphDataView or GraphVectorView, optional
        Same form as output: 1 where the key was found, else 0 (the
        canonical 0/1 mask GPUMask writes, for composition with GPUMask or
        a visibility workflow).
    stats : GraphDataView, optional
        Eight packed uint32 rows (fields in
        :data:`~gpuviz.algorithms.hash_table.LOOKUP_STATS` order; the two
        join words stay 0). Default: a graph transient ``"{id}-stats"``.

    Attributes
    ----------
    stats, found_count, invalid_count, max_probe_length, index_overflow : GraphDataView
        After ``add_to_graph``: the statistics and one-row views of it.
        ``index_overflow`` non-zero means the index dropped rows, so a miss
        may be wrong.

    Notes
    -----
    Each lookup visits at most the index's longest insert probe (read on
    the GPU), so misses stay bounded even in a full table. Keys equal to
    the reserved empty key count as invalid and are never found. Does not
    submit or read back, does not compact the hits (see
    :class:`GPUHashJoin`) and does not modify the index.
    """

    owner = "GPUHashIndexQuery"

    def __init__(self, *, id: str, index, keys, output, found=None, stats=None):
        self.id = check_id(self.owner, id)
        self.index, self.keys, self.output, self.found = index, keys, output, found
        self._stats_arg = stats
        self.stats = None
        self.node_ids: list = []

    found_count = stat_property("found_count", "Keys found (one row).")
    invalid_count = stat_property("invalid_count", "Keys equal to EMPTY_KEY (one row).")
    max_probe_length = stat_property("max_probe_length", "Most slots one key visited.")
    index_overflow = stat_property("index_overflow",
                                   "The index's overflow when looked up (one row; non-zero: incomplete).")

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the lookup node; returns its ID."""
        owner, id = self.owner, self.id
        check_index(owner, id, self.index, graph)
        kind, keys = key_chunks(owner, id, "keys", self.keys, graph, self.index.key_words)
        out_kind, outs = chunks_of(owner, id, "output", self.output, graph)
        check_topology(owner, id, "output", "keys", out_kind, outs, kind, keys)
        founds = None
        if self.found is not None:
            found_kind, founds = chunks_of(owner, id, "found", self.found, graph)
            check_topology(owner, id, "found", "keys", found_kind, founds, kind, keys)
        if kind == "data":
            for label, views in (("output", outs), ("found", founds)):
                if views is not None and views[0].length < keys[0].length:
                    raise GraphValidationError(f'{owner} "{id}" {label} is shorter than keys (needs '
                                               f"{keys[0].length} rows, got {views[0].length})")
            outs = (graph.create_data_view(outs[0].handle, format="uint32", length=keys[0].length,
                                           byte_offset=outs[0].byte_offset),)
            if founds is not None:
                founds = (graph.create_data_view(founds[0].handle, format="uint32", length=keys[0].length,
                                                 byte_offset=founds[0].byte_offset),)
        stats = stats_view(owner, id, graph, self._stats_arg, "stats")
        refuse_overlaps(owner, id, reads={"keys": keys, "index stats": self.index.stats},
                        writes={"output": outs, "found": founds, "stats": stats}, separate=True)
        self.stats = stats
        self._stat_views = stat_rows(graph, stats, LOOKUP_STATS)
        self.node_ids = [add_lookup_node(graph, f"{id}-lookup", self.index, keys, outs, founds, stats)]
        return self.node_ids
