"""Stable compaction: GPUCompaction, GPUIndexedRangeCompaction and
GPUPartitionedIndexedRangeCompaction.

GPUCompaction fuses the scatter into the chained scan (``shaders/scan.wgsl``
with COMPACT): flags and values are read once, survivors written once, and
the count is written by the last tile straight into any one-row uint32 view,
such as the instanceCount word of a DrawCommandBuffer record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphTypeError, GraphValidationError
from ..graph.resources import GraphBufferHandle
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div, use_subgroups
from .scan import ChainedScan, ScanTuning
from .validation import (byte_span, check_topology, checked_tuning, chunks_of, indirect_record,
                         overlaps, refuse_overlaps, single_row)
from .views import storage_alignment, view_binding

__all__ = ["GPUCompaction", "GPUIndexedRangeCompaction", "GPUPartitionedIndexedRangeCompaction",
           "IndexedRangeLayout"]

STORAGE = wgpu.BufferUsage.STORAGE
RANGE_ROLES = ("flags", "ranges", "actives", "counts", "offsets", "output")  # range_compaction.wgsl bindings 1-6


def add_count_clear(graph, node_id: str, count) -> str:
    """A node that writes 0 into one uint32 row (a count of nothing)."""

    def compile_clear(ctx):
        offset = ComputeKernel.element_offset(count, ctx.device)
        kernel = ComputeKernel(ctx.device, code=wgsl("algorithms/shaders/clear.wgsl"),
                               constants={"OFF": offset, "WORDS": 1}, label=ctx.node_id)

        def encode(compute_pass, frame):
            kernel.dispatch(compute_pass, frame, bindings={0: count}, workgroups=1)
        return encode

    return graph.add_compute_node(id=node_id, resources=[(count, "storage-write")], compile=compile_clear)


def _check_disjoint(owner, id, pairs):
    for (name_a, views_a), (name_b, views_b) in pairs:
        for a in views_a:
            for b in views_b:
                if overlaps(a, b):
                    raise GraphValidationError(
                        f'{owner} "{id}" {name_a} overlaps {name_b} in buffer "{a.handle.id}" (bytes '
                        f"{byte_span(a)} and {byte_span(b)})")


class GPUCompaction:
    """Stable selection of packed uint32 values by uint32 flags, with a GPU count.

    Parameters
    ----------
    id : str
        Prefix of node and transient IDs (``"{id}-compact-tiles"``...).
    input, flags, output : GraphDataView or GraphVectorView
        All packed uint32 data views (flags and output at least as long as
        input) or all vector views with identical ordered chunk lengths.
        Nonzero flags select (they are read as canonical 0/1). Survivors keep
        source order and fill output (across its chunks, as one sequence).
    count : GraphDataView
        Any one-row uint32 view, e.g. the instanceCount word of a
        DrawCommandBuffer record (``byte_offset`` 4 of the record); only that
        word is written, neighbours are untouched.
    tuning : ScanTuning, optional
        Knobs of the chained scan (anything else raises
        :class:`~gpuviz.GraphTypeError`).

    Notes
    -----
    One pass reads flags and values once and writes only survivors and the
    count (the chained scan of :class:`GPUScan` with the scatter fused in;
    its tile state needs no clear pass, see :class:`GPUScan`). Zero length
    adds only a node that writes count = 0. Output rows past the count are
    left as they were. Never allocates during encode, submits, or reads back.
    """

    def __init__(self, *, id: str, input, flags, output, count, tuning: ScanTuning | None = None):
        checked_tuning("GPUCompaction", id, tuning, ScanTuning)
        self.id = check_id("GPUCompaction", id)
        self.input = input
        self.flags = flags
        self.output = output
        self.count = count
        self.tuning = tuning
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the nodes; returns their IDs."""
        name = "GPUCompaction"
        kind, ins = chunks_of(name, self.id, "input", self.input, graph)
        flag_kind, flags = chunks_of(name, self.id, "flags", self.flags, graph)
        out_kind, outs = chunks_of(name, self.id, "output", self.output, graph)
        check_topology(name, self.id, "flags", "input", flag_kind, flags, kind, ins)
        check_topology(name, self.id, "output", "input", out_kind, outs, kind, ins)
        count = single_row(name, self.id, "count", self.count, graph)
        if kind == "data":
            for label, view in (("flags", flags[0]), ("output", outs[0])):
                if view.length < ins[0].length:
                    raise GraphValidationError(f'{name} "{self.id}" {label} is shorter than input (needs '
                                               f"{ins[0].length} rows, got {view.length})")
        shared = {f.handle.id for f in flags} & {o.handle.id for o in outs}
        if shared:
            raise GraphValidationError(f'{name} "{self.id}" flags share buffer "{sorted(shared)[0]}" with output')
        _check_disjoint(name, self.id, [(("output", outs), ("input", ins)), (("count", [count]), ("output", outs)),
                                        (("count", [count]), ("input", ins)), (("count", [count]), ("flags", flags))])
        refuse_overlaps(name, self.id, reads={"input": ins, "flags": flags}, writes={"output": outs, "count": count})
        if sum(v.length for v in ins) == 0:
            self.node_ids = [add_count_clear(graph, f"{self.id}-count-clear", count)]
            return self.node_ids
        if kind == "data":  # scan exactly the input's rows
            flags = (graph.create_data_view(flags[0].handle, format="uint32", length=ins[0].length,
                                            byte_offset=flags[0].byte_offset),)
        scan = ChainedScan(id=f"{self.id}-compact", data=flags, vals=ins, scatter=outs, total=count,
                           tuning=self.tuning, owner=name, owner_id=self.id)
        self.chained = scan
        self.node_ids = scan.add_to_graph(graph)
        return self.node_ids


@dataclass(frozen=True, kw_only=True)
class IndexedRangeLayout:
    """Where a range record keeps its fields, in uint32 words.

    Describes the layout only; it does not validate the records themselves
    (the range compactions check offsets against the stride).

    Attributes
    ----------
    word_stride : int
        Words per record.
    first_index_word_offset : int
        Word holding the range's first source row (a global source ID).
    count_word_offset : int
        Word holding the range's row count.
    """

    word_stride: int
    first_index_word_offset: int = 0
    count_word_offset: int = 1

    @classmethod
    def get(cls, value) -> "IndexedRangeLayout":
        """A layout from an IndexedRangeLayout (passed through), a dict of
        fields, or a ``(word_stride, first_index_word_offset,
        count_word_offset)`` tuple (missing trailing words take the
        defaults); does not check the words against the stride."""
        if isinstance(value, cls):
            return value
        names = ("word_stride", "first_index_word_offset", "count_word_offset")
        if isinstance(value, dict) and set(value) <= set(names) and "word_stride" in value:
            return cls(**value)
        if isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
            return cls(**dict(zip(names, value)))
        raise GraphTypeError(f"IndexedRangeLayout needs an IndexedRangeLayout, a dict of {', '.join(names)} or a "
                             f"1-3 word tuple (got {value!r})")


class _RangePlan:
    """Validation and node building shared by the two range compactions."""

    owner = ""

    def _validate_common(self, graph):
        owner, id = self.owner, self.id
        self.layout = IndexedRangeLayout.get(self.range_layout)
        lay = self.layout
        if not isinstance(self.range_count, int) or self.range_count < 1:
            raise GraphValidationError(f'{owner} "{id}" range_count must be a positive integer (got {self.range_count!r})')
        if lay.word_stride < 1 or not (0 <= lay.first_index_word_offset < lay.word_stride
                                       and 0 <= lay.count_word_offset < lay.word_stride):
            raise GraphValidationError(f'{owner} "{id}" range_layout {lay} has word offsets outside its stride')
        if not isinstance(self.maximum_range_length, int) or self.maximum_range_length < 1:
            raise GraphValidationError(f'{owner} "{id}" maximum_range_length must be a positive integer '
                                       f"(got {self.maximum_range_length!r})")
        ranges = single_row(owner, id, "ranges", self.ranges, graph, rows=self.range_count * lay.word_stride)
        active = single_row(owner, id, "active_range_ids", self.active_range_ids, graph, rows=self.range_count)
        count = single_row(owner, id, "count", self.count, graph)
        dispatch = self.active_range_dispatch
        if isinstance(dispatch, GraphBufferHandle):
            offset, handle = 0, dispatch
        else:
            handle = single_row(owner, id, "active_range_dispatch", dispatch, graph, rows=3).handle
            offset = dispatch.byte_offset
        if graph.buffers.get(handle.id) is not handle or not handle.usage & wgpu.BufferUsage.INDIRECT:
            raise GraphValidationError(f'{owner} "{id}" active_range_dispatch must be a buffer of this graph with '
                                       "INDIRECT usage")
        if offset + 12 > handle.byte_length:
            raise GraphValidationError(f'{owner} "{id}" active_range_dispatch needs 12 bytes at offset {offset} '
                                       f"(buffer has {handle.byte_length})")
        return ranges, active, count, (handle, offset)

    # the scatter pass writes output in the dispatch that reads the record (wgpu: conflicting usages)
    _SEPARATE = {("output", "active_range_dispatch")}

    @staticmethod
    def _range_reads(ranges, active, dispatch) -> dict:
        """The range inputs every node reads, as roles for refuse_overlaps."""
        return {"ranges": ranges, "active_range_ids": active, "active_range_dispatch": indirect_record(*dispatch)}

    def _transient(self, graph, name, rows):
        handle = graph.create_transient_buffer(id=f"{self.id}-{name}", byte_length=4 * rows, usage=STORAGE)
        return graph.create_data_view(handle, format="uint32", length=rows)

    def _range_node(self, graph, node_id, phase, *, flags, ranges, active, counts, offsets, output, dispatch,
                    params):
        """One indirect node running ``count_phase`` or ``scatter_phase``."""
        handle, indirect_offset = dispatch
        roles = [("flags", 1, flags, "storage-read"), ("ranges", 2, ranges, "storage-read"),
                 ("actives", 3, active, "storage-read")]
        if phase == "count":
            roles.append(("counts", 4, counts, "storage-write"))
        else:
            roles += [("offsets", 5, offsets, "storage-read"), ("output", 6, output, "storage-write")]
        resources = [(view, use) for _, _, view, use in roles] + [(handle, "indirect")]
        subgroups = (self.tuning or ScanTuning()).subgroups

        def compile_range(ctx):
            align = storage_alignment(ctx.device)
            written = {view.handle for _, _, view, use in roles if use == "storage-write"}
            layouts = dict.fromkeys(RANGE_ROLES, "none")
            access = dict.fromkeys(RANGE_ROLES, "read")
            offsets = dict.fromkeys(RANGE_ROLES, 0)
            bindings = []
            for name, binding, view, use in roles:
                vb = view_binding(binding, view, alignment=align, vec4=False)
                layouts[name], offsets[name] = vb.layout, vb.offset
                access[name] = "read_write" if view.handle in written else "read"
                bindings.append(vb.storage)
            code = wgsl("algorithms/shaders/range_compaction.wgsl", subgroups=use_subgroups(ctx, subgroups),
                        layouts=layouts, access=access, phase=phase)
            kernel = ComputeKernel(ctx.device, code=code, label=ctx.node_id)
            data = np.zeros(16, np.uint32)  # range_compaction.wgsl: RangeParams
            data[:15] = [*params, *offsets.values()]
            uniform = ctx.own(ctx.device.create_buffer_with_data(
                label=f"{ctx.node_id}-params", data=data.tobytes(), usage=wgpu.BufferUsage.UNIFORM))

            def encode(compute_pass, frame):
                resolved = {b.binding: b.resolve(frame) for b in bindings}
                resolved[0] = (uniform, 0, uniform.size)
                kernel.dispatch_indirect(compute_pass, frame, bindings=resolved,
                                         indirect_buffer=frame.buffer(handle), indirect_offset=indirect_offset)
            return encode

        return graph.add_compute_node(id=node_id, resources=resources, compile=compile_range)

    def _params(self, *, range_start, range_end, source_start, source_end, output_length):
        lay = self.layout
        return [range_start, range_end, source_start, source_end, self.maximum_range_length, lay.word_stride,
                lay.first_index_word_offset, lay.count_word_offset, output_length]

    def _clear(self, graph, node_id, view):
        def compile_clear(ctx):
            kernel = ComputeKernel(ctx.device, code=wgsl("algorithms/shaders/clear.wgsl"), label=ctx.node_id)

            def encode(compute_pass, frame):
                kernel.dispatch(compute_pass, frame, bindings={0: view},
                                workgroups=ceil_div(view.length, WORKGROUP))
            return encode
        return graph.add_compute_node(id=node_id, resources=[(view, "storage-write")], compile=compile_clear)


class GPUIndexedRangeCompaction(_RangePlan):
    """Stable compaction of the source IDs selected inside GPU-chosen ranges.

    Parameters
    ----------
    id : str
    flags : GraphDataView
        Source-aligned packed uint32 flags (row i belongs to source ID i);
        nonzero selects.
    ranges : GraphDataView
        Packed uint32 range records, ``range_count`` of them, laid out as
        ``range_layout`` says. Ranges must not overlap; canonical order is
        range-ID order.
    range_count : int
    range_layout : IndexedRangeLayout, dict or tuple
        ``(word_stride, first_index_word_offset, count_word_offset)``.
    active_range_ids : GraphDataView
        The IDs of the active ranges (capacity ``range_count``); only the
        first ``y`` are read, where ``y`` is the dispatch record's count.
    active_range_dispatch : GraphBufferHandle or GraphDataView
        An INDIRECT buffer holding the dispatch record ``(1, active count, 1)``
        (at the view's byte offset when a view is given), typically written by
        the compaction that chose the active ranges.
    maximum_range_length : int
        Rows of a range past this are ignored (bounds the work per range).
    output : GraphDataView
        At least as many rows as flags; receives the selected source IDs,
        grouped by range in canonical range order, source order inside a range.
    count : GraphDataView
        One uint32 row receiving the number of selected IDs.
    tuning : ScanTuning, optional
        Knobs of the chained scan (anything else raises
        :class:`~gpuviz.GraphTypeError`).

    Notes
    -----
    Work scales with the active ranges, not the source: a workgroup per
    active range counts its selected rows, a chained scan of the per-range
    counts gives offsets (and the count), and a second indirect pass writes
    the IDs. After ``add_to_graph``, ``range_counts`` and ``range_offsets``
    are the graph-owned per-range views (inactive ranges count 0) for later
    nodes. Does not read active counts on the CPU, submit, or read back.
    """

    owner = "GPUIndexedRangeCompaction"

    def __init__(self, *, id: str, flags, ranges, range_count: int, range_layout, active_range_ids,
                 active_range_dispatch, maximum_range_length: int, output, count, tuning: ScanTuning | None = None):
        checked_tuning(self.owner, id, tuning, ScanTuning)
        self.id = check_id(self.owner, id)
        self.flags = flags
        self.ranges = ranges
        self.range_count = range_count
        self.range_layout = range_layout
        self.active_range_ids = active_range_ids
        self.active_range_dispatch = active_range_dispatch
        self.maximum_range_length = maximum_range_length
        self.output = output
        self.count = count
        self.tuning = tuning
        self.range_counts = self.range_offsets = None
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the nodes; returns their IDs."""
        owner, id = self.owner, self.id
        ranges, active, count, dispatch = self._validate_common(graph)
        flags = single_row(owner, id, "flags", self.flags, graph, rows=0)
        output = single_row(owner, id, "output", self.output, graph, rows=0)
        if output.length < flags.length:
            raise GraphValidationError(f'{owner} "{id}" output is shorter than flags (needs {flags.length} rows, '
                                       f"got {output.length})")
        _check_disjoint(owner, id, [(("output", [output]), ("flags", [flags])),
                                    (("count", [count]), ("output", [output]))])
        refuse_overlaps(owner, id, reads={"flags": flags, **self._range_reads(ranges, active, dispatch)},
                        writes={"output": output, "count": count}, separate=self._SEPARATE)
        self.range_counts = self._transient(graph, "range-counts", self.range_count)
        self.range_offsets = self._transient(graph, "range-offsets", self.range_count)
        common = dict(flags=flags, ranges=ranges, active=active, counts=self.range_counts,
                      offsets=self.range_offsets, output=output, dispatch=dispatch,
                      params=self._params(range_start=0, range_end=self.range_count, source_start=0,
                                          source_end=flags.length, output_length=output.length))
        ids = [self._clear(graph, f"{id}-range-counts-clear", self.range_counts)]
        if flags.length:
            ids.append(self._range_node(graph, f"{id}-range-count", "count", **common))
        ids += ChainedScan(id=f"{id}-range-scan", data=[self.range_counts], out=[self.range_offsets], total=count,
                           tuning=self.tuning, owner=owner, owner_id=id).add_to_graph(graph)
        if flags.length:
            ids.append(self._range_node(graph, f"{id}-range-scatter", "scatter", **common))
        self.node_ids = ids
        return ids


class GPUPartitionedIndexedRangeCompaction(_RangePlan):
    """Range compaction that keeps its output partitioned like its flags.

    Parameters
    ----------
    id : str
    flags : GraphVectorView
        Source-aligned flags split into partitions: chunk p holds the source
        IDs that follow chunk p-1's, and every range of partition p lies
        inside chunk p.
    ranges, range_count, range_layout, active_range_ids, active_range_dispatch, maximum_range_length
        As for :class:`GPUIndexedRangeCompaction`; ``ranges`` is one shared
        canonical index over all partitions.
    partition_range_ends : sequence of int
        Exclusive range-ID end of each partition (non-decreasing, one per
        flags chunk, the last equal to ``range_count``).
    output : GraphVectorView
        Same chunk lengths as flags; chunk p receives partition p's selected
        global source IDs from its first row on.
    count : GraphDataView
        One uint32 row receiving the total over all partitions.
    partition_counts : GraphDataView, optional
        At least one row per partition, receiving each partition's count;
        without it a graph transient holds them (``self.partition_counts``).
    tuning : ScanTuning, optional
        Knobs of the chained scan (anything else raises
        :class:`~gpuviz.GraphTypeError`).

    Notes
    -----
    Each partition's range counts are scanned independently, so output IDs
    never leave their partition's buffer and no binding spans more than one
    partition. ``range_counts``, ``range_offsets`` (partition-local) and
    ``partition_counts`` are views for later nodes. Does not submit or read back.
    """

    owner = "GPUPartitionedIndexedRangeCompaction"

    def __init__(self, *, id: str, flags, ranges, range_count: int, range_layout, partition_range_ends,
                 active_range_ids, active_range_dispatch, maximum_range_length: int, output, count,
                 partition_counts=None, tuning: ScanTuning | None = None):
        checked_tuning(self.owner, id, tuning, ScanTuning)
        self.id = check_id(self.owner, id)
        self.flags = flags
        self.ranges = ranges
        self.range_count = range_count
        self.range_layout = range_layout
        self.partition_range_ends = tuple(partition_range_ends)
        self.active_range_ids = active_range_ids
        self.active_range_dispatch = active_range_dispatch
        self.maximum_range_length = maximum_range_length
        self.output = output
        self.count = count
        self.partition_counts = partition_counts
        self.tuning = tuning
        self.range_counts = self.range_offsets = None
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate against ``graph`` and add the nodes; returns their IDs."""
        owner, id = self.owner, self.id
        ranges, active, count, dispatch = self._validate_common(graph)
        flag_kind, flags = chunks_of(owner, id, "flags", self.flags, graph)
        out_kind, outs = chunks_of(owner, id, "output", self.output, graph)
        if flag_kind != "vector":
            raise GraphValidationError(f'{owner} "{id}" flags must be a GraphVectorView (one chunk per partition)')
        check_topology(owner, id, "output", "flags", out_kind, outs, flag_kind, flags)
        ends = self.partition_range_ends
        if (len(ends) != len(flags) or any(b < a for a, b in zip((0,) + ends, ends))
                or (ends and ends[-1] != self.range_count)):
            raise GraphValidationError(
                f'{owner} "{id}" partition_range_ends {list(ends)} must be {len(flags)} non-decreasing range ends '
                f"finishing at range_count {self.range_count}")
        parts = len(flags)
        if self.partition_counts is None:
            self.partition_counts = self._transient(graph, "partition-counts", parts)
        pcounts = single_row(owner, id, "partition_counts", self.partition_counts, graph, rows=parts)
        _check_disjoint(owner, id, [(("output", outs), ("flags", flags)), (("count", [count]), ("output", outs)),
                                    (("partition_counts", [pcounts]), ("output", outs))])
        refuse_overlaps(owner, id, reads={"flags": flags, **self._range_reads(ranges, active, dispatch)},
                        writes={"output": outs, "count": count, "partition_counts": pcounts},
                        separate=self._SEPARATE)
        self.range_counts = self._transient(graph, "range-counts", self.range_count)
        self.range_offsets = self._transient(graph, "range-offsets", self.range_count)
        ids = [self._clear(graph, f"{id}-range-counts-clear", self.range_counts)]
        source = 0
        start = 0
        for p, (flag, out, end) in enumerate(zip(flags, outs, ends)):
            prefix = f"{id}-partition-{p}"
            sub = lambda view: graph.create_data_view(view.handle, format="uint32", length=end - start,  # noqa: E731
                                                      byte_offset=view.byte_offset + 4 * start)
            row = graph.create_data_view(pcounts.handle, format="uint32", length=1,
                                         byte_offset=pcounts.byte_offset + 4 * p)
            common = dict(flags=flag, ranges=ranges, active=active, counts=self.range_counts,
                          offsets=self.range_offsets, output=out, dispatch=dispatch,
                          params=self._params(range_start=start, range_end=end, source_start=source,
                                              source_end=source + flag.length, output_length=out.length))
            if end == start:
                ids.append(add_count_clear(graph, f"{prefix}-count-clear", row))
            else:
                if flag.length:
                    ids.append(self._range_node(graph, f"{prefix}-range-count", "count", **common))
                ids += ChainedScan(id=f"{prefix}-range-scan", data=[sub(self.range_counts)],
                                   out=[sub(self.range_offsets)], total=row, tuning=self.tuning, owner=owner,
                                   owner_id=id).add_to_graph(graph)
                if flag.length:
                    ids.append(self._range_node(graph, f"{prefix}-range-scatter", "scatter", **common))
            source += flag.length
            start = end
        total_input = graph.create_data_view(pcounts.handle, format="uint32", length=parts,
                                             byte_offset=pcounts.byte_offset)
        ids += ChainedScan(id=f"{id}-total", data=[total_input], total=count, tuning=self.tuning, owner=owner,
                           owner_id=id).add_to_graph(graph)
        self.node_ids = ids
        return ids
