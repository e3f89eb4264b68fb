"""GPUSegmentedSort: many small sort domains inside shared parent buffers."""

from __future__ import annotations

import operator

import numpy as np

from ..graph.checks import check_id
from ..errors import GraphValidationError
from .dispatch import WORKGROUP
from .sort import SortTuning, add_small_node, add_sort_domain, check_args, check_fits, check_views, width_class
from .validation import checked_tuning

__all__ = ["GPUSegmentedSort"]


class GPUSegmentedSort:
    """Stable sort of independent segments of shared parent key/value buffers.

    Parameters
    ----------
    id : str
        Prefix of the nodes: ``"{id}-width-{w}"`` per width class,
        ``"{id}-segment-{i}-..."`` for a segment sorted by radix passes.
    keys, output_keys : GraphDataView
        Packed ``uint32`` parent views of equal length.
    values, output_values : GraphDataView, optional
        Packed ``uint32`` parent payload views (both or neither).
    offsets, lengths : sequence of int
        Segment ``i`` is rows ``offsets[i] .. offsets[i] + lengths[i] - 1`` of
        the parent views. Segments may come in any order and leave gaps, but
        must not overlap; empty segments are ignored.
    direction : {"ascending", "descending"}
    key_bits : int
        Only the low ``key_bits`` bits (1..32) of a key order it.
    tuning : SortTuning, optional

    Notes
    -----
    Segments are bucketed by width class, the next power of two of their
    length (at least 2): every segment of one class is sorted by one dispatch
    (one graph node), several segments per workgroup for classes below 256.
    Segments of up to 256 rows therefore need at most eight nodes whatever
    their number. Segments up to ``max(256, tuning.small_max)`` rows also sort
    inside one workgroup each; longer ones are sorted one by one with radix
    passes (their own nodes and transients). Rows outside every segment (the
    gaps) are neither read nor written, and no packed copy is made. The
    segment table is uploaded once at graph compile. Outputs must live in
    other buffers than the inputs. Declares nodes only; never submits or
    reads back.
    """

    def __init__(self, *, id: str, keys, output_keys, offsets, lengths, values=None, output_values=None,
                 direction: str = "ascending", key_bits: int = 32, tuning: SortTuning | None = None):
        self.id = check_id("GPUSegmentedSort", id)
        self.keys, self.values = keys, values
        self.output_keys, self.output_values = output_keys, output_values
        # copied now (as the range compactions copy theirs): later changes to the caller's arrays do not
        # reach the segment table the graph uploads
        self.offsets, self.lengths = self._integers(offsets), self._integers(lengths)
        self.direction = direction
        self.key_bits = key_bits
        self.tuning = checked_tuning("GPUSegmentedSort", id, tuning, SortTuning)
        self.node_ids: list = []

    def _integers(self, values) -> tuple:
        """A tuple copy of a sequence (or numpy array) of integers."""
        try:
            return tuple(operator.index(v) for v in values)
        except TypeError:
            raise GraphValidationError(
                f'GPUSegmentedSort "{self.id}" offsets and lengths must be sequences of integers') from None

    def _segments(self, rows: int) -> np.ndarray:
        """Validated ``(offset, length, index)`` rows sorted by offset, empty segments dropped."""
        offsets, lengths = self.offsets, self.lengths
        if len(offsets) != len(lengths):
            raise GraphValidationError(f'GPUSegmentedSort "{self.id}" has {len(offsets)} offsets but '
                                       f"{len(lengths)} lengths")
        for i, (o, n) in enumerate(zip(offsets, lengths)):
            if o < 0 or n < 0 or o + n > rows:
                raise GraphValidationError(f'GPUSegmentedSort "{self.id}" segment {i} (offset {o}, length {n}) '
                                           f"lies outside the {rows} parent rows")
        segs = sorted((o, n, i) for i, (o, n) in enumerate(zip(offsets, lengths)) if n)
        end, previous = 0, None
        for o, n, i in segs:
            if o < end:
                raise GraphValidationError(f'GPUSegmentedSort "{self.id}" segments {previous} and {i} overlap '
                                           f"(rows {o}..{end - 1})")
            end, previous = o + n, i
        return np.array(segs, np.int64).reshape(-1, 3)

    def add_to_graph(self, graph) -> list:
        """Validate views and segments and add the nodes; returns their IDs."""
        check_args("GPUSegmentedSort", self.id, self.direction, self.key_bits, self.tuning, graph.device)
        kind, domains = check_views("GPUSegmentedSort", self.id, graph, self.keys, self.values, self.output_keys,
                                    self.output_values)
        if kind != "data":
            raise GraphValidationError(f'GPUSegmentedSort "{self.id}" needs GraphDataViews of the parent buffers '
                                       "(GPUBatchSort sorts the chunks of vector views)")
        check_fits("GPUSegmentedSort", self.id, domains, self.tuning, graph.device)
        keys, values, out_keys, out_values = domains[0]
        segs = self._segments(keys.length)
        descending = self.direction == "descending"
        small = max(WORKGROUP, self.tuning.small_max)
        widths = np.array([width_class(int(n)) for n in segs[:, 1]], np.int64)
        ids = []
        fits = segs[:, 1] <= small
        for width in sorted(set(widths[fits].tolist())):
            table = segs[fits & (widths == width), :2].astype(np.uint32)
            ids.append(add_small_node(graph, node_id=f"{self.id}-width-{width}", keys=keys, values=values,
                                      out_keys=out_keys, out_values=out_values, table=table, width=width,
                                      descending=descending, key_bits=self.key_bits,
                                      runtime_checks=self.tuning.runtime_checks))
        for o, n, i in segs[segs[:, 1] > small].tolist():
            sub = lambda view: None if view is None else graph.create_data_view(
                view.handle, format="uint32", length=n, byte_offset=view.byte_offset + 4 * o)
            ids += add_sort_domain(graph, prefix=f"{self.id}-segment-{i}", keys=sub(keys), values=sub(values),
                                   out_keys=sub(out_keys), out_values=sub(out_values), descending=descending,
                                   key_bits=self.key_bits, tuning=self.tuning)
        self.node_ids = ids
        return ids
