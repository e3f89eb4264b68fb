"""Region selection of a TraceViewer: the span IDs of a time x row region,
found on the GPU over every span record (sub-pixel spans included).

Why not :meth:`GPUIndexPickingTarget.add_region_pass`: the picking texture
holds one ID per pixel, the top one, and merged sub-pixel spans write none,
so a region pass over it misses every span that shares a pixel column with
another or is merged. Here one pass tests each span's own record instead::

    region-keep   the interaction's region predicate
                  (:func:`~gpuviz.trace.interaction.nodes.add_region_keep`):
                  keep = shown in the current frame (the frame
                  predicate's code 1: drawn or merged) and layout row
                  in [row0, row1) and [start, start + max(duration, 1))
                  overlapping [t0, t1) (exact 64-bit times); ids = span IDs
    region-*      GPUVisibilityWorkflow (masks=[keep], source_ids=ids):
                  the kept IDs, compacted in record order, and their count

A graph of its own (compiled once, on the first region): the frame graph
never runs it, so frames cost nothing more and the frame graph's
``compile_count`` stays 1. A region is a 32-byte uniform write.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...errors import GraphStateError, GraphValidationError
from ...graph import GPUCommandGraph
from .geometry import GUTTER, ROW_HEIGHT, TRACKS_TOP
from ...trace.interaction.nodes import add_region_keep, record_pieces
from ...workflows.visibility import GPUVisibilityWorkflow

__all__ = ["RegionSelection", "check_region", "merged_column", "longest_in_column", "summary_html", "queue_band"]

BU = wgpu.BufferUsage
_MASK = (1 << 64) - 1


class RegionSelection:
    """The region graph of one :class:`~gpuviz.widgets.trace.graph.TraceGraph`.

    Parameters
    ----------
    device : wgpu.GPUDevice
    frame : GPUTraceInteraction
        Its ``shown`` and ``thread_rows`` buffers (written by the frame
        graph) and its scene's records are read, never written.

    Notes
    -----
    :meth:`run` encodes the region graph into the caller's encoder after
    the frame graph, submits and waits for one readback (count, then the
    IDs): an explicit wait, never part of a frame. Records are read in
    the frame's pieces (one binding each); it does NOT handle a scene
    whose 4-byte-per-span masks exceed one storage binding
    (GraphStateError). Spans of collapsed processes (drawn as density
    bins) and hidden spans are never selected.
    """

    def __init__(self, device, frame):
        self.device, self.frame = device, frame
        self.n = frame.span_count
        self.compiled = None
        self._owned = []
        limit = int(device.limits["max-storage-buffer-binding-size"])
        if 4 * self.n > limit:
            raise GraphStateError(f'RegionSelection "{frame.id}" needs 4 bytes per span in one storage binding '
                                  f"({self.n} spans: {4 * self.n} bytes > {limit})")
        rw = BU.STORAGE | BU.COPY_DST | BU.COPY_SRC
        size = 4 * max(self.n, 4)
        self.params = self._buffer("params", 32, BU.UNIFORM | BU.COPY_DST)
        self.keep = self._buffer("keep", size, rw)
        self.ids = self._buffer("ids", size, rw)
        self.output = self._buffer("output", size, rw)
        self.count = self._buffer("count", 16, rw)

    def _buffer(self, label, size, usage):
        buffer = self.device.create_buffer(label=f"trace-viewer-region-{label}", size=max(16, size), usage=usage)
        self._owned.append(buffer)
        return buffer

    def _view(self, graph, id, buffer, length):
        handle = graph.import_buffer(id=id, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
        return graph.create_data_view(handle, format="uint32", length=length)

    def _build(self) -> None:
        n, f = self.n, self.frame
        graph = GPUCommandGraph(self.device, id="trace-viewer-region")
        v = {"params": self._view(graph, "params", self.params, 8),
             "shown": self._view(graph, "shown", f.shown, max(n, 1)),
             "thread-rows": self._view(graph, "thread-rows", f.thread_rows, max(f.thread_rows.size // 4, 1)),
             "keep": self._view(graph, "keep", self.keep, max(n, 1)),
             "ids": self._view(graph, "ids", self.ids, max(n, 1)),
             "output": self._view(graph, "output", self.output, max(n, 1)),
             "count": self._view(graph, "count", self.count, 1)}
        if n:
            chunks = {}  # record chunk buffer -> its handle (scenes past one buffer hold several)
            for k, (base, rows, buffer, offset) in enumerate(record_pieces(f)):  # each fits one binding
                if id(buffer) not in chunks:
                    chunks[id(buffer)] = graph.import_buffer(id=f"records-{len(chunks)}", byte_length=buffer.size,
                                                             usage=buffer.usage, buffer=buffer)
                records = graph.create_data_view(chunks[id(buffer)], format="uint32", length=rows * 12,
                                                 byte_offset=offset)
                self._add_keep(graph, v, k, base, rows, records)
            keep = graph.create_data_view(v["keep"].handle, format="uint32", length=n)
            ids = graph.create_data_view(v["ids"].handle, format="uint32", length=n)
            output = graph.create_data_view(v["output"].handle, format="uint32", length=n)
            GPUVisibilityWorkflow(id="region", output=output, count=v["count"], masks=(keep,),
                                  source_ids=ids).add_to_graph(graph)
        else:
            GPUVisibilityWorkflow(id="region", output=v["output"], count=v["count"], length=0).add_to_graph(graph)
        self.compiled = graph.compile()

    def _add_keep(self, graph, v, k, base, rows, records) -> None:
        """The region predicate over scene rows [base, base + rows)."""
        def part(name):
            return graph.create_data_view(v[name].handle, format="uint32", length=rows, byte_offset=4 * base)
        add_region_keep(graph, id=f"region-keep-{k}", params=v["params"], records=records, shown=part("shown"),
                        thread_rows=v["thread-rows"], keep=part("keep"), ids=part("ids"), rows=rows)

    def run(self, encoder, *, t0_rel: int, t1_rel: int, row0: int, row1: int) -> np.ndarray:
        """Span IDs (int64, ascending) shown in the frame the ``encoder``
        already holds, with layout row in ``[row0, row1)`` overlapping
        ``[t0_rel, t1_rel)`` ns after the scene's origin; submits ``encoder``
        and waits for the readback."""
        if self.compiled is None:
            self._build()
        words = np.zeros(8, np.uint32)
        t0, t1 = (min(max(int(t), 0), _MASK) for t in (t0_rel, t1_rel))
        words[0], words[1], words[2], words[3] = t0 & 0xFFFFFFFF, t0 >> 32, t1 & 0xFFFFFFFF, t1 >> 32
        words[4], words[5] = (min(max(int(r), 0), 0xFFFFFFFF) for r in (row0, row1))
        queue = self.device.queue
        queue.write_buffer(self.params, 0, words.tobytes())
        self.compiled.encode(encoder)
        queue.submit([encoder.finish()])
        count = int(np.frombuffer(queue.read_buffer(self.count, 0, 4), np.uint32)[0])
        if not count:
            return np.zeros(0, np.int64)
        ids = np.frombuffer(queue.read_buffer(self.output, 0, 4 * count), np.uint32)
        return np.sort(ids.astype(np.int64))

    def destroy(self) -> None:
        """Free the region graph and its buffers (idempotent)."""
        if self.compiled is not None:
            self.compiled.destroy()
            self.compiled = None
        for buffer in self._owned:
            buffer.destroy()
        self._owned.clear()


def _pair(name, value):
    try:
        a, b = value
    except (TypeError, ValueError):
        a = b = None
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in (a, b)):
        raise GraphValidationError(f"TraceViewer select_region {name} must be two integers (got {value!r})")
    if int(a) >= int(b):
        raise GraphValidationError(f"TraceViewer select_region {name} must have start < end (got {value!r})")
    return int(a), int(b)


def check_region(window, rows, default_rows) -> tuple:
    """``((t0, t1), (row0, row1))`` of a :meth:`TraceViewer.select_region`
    call (``rows`` None: ``default_rows``); GraphValidationError otherwise."""
    t0, t1 = _pair("window", window)
    row0, row1 = _pair("rows", default_rows if rows is None else rows)
    if row0 < 0:
        raise GraphValidationError(f"TraceViewer select_region rows must be >= 0 (got {rows!r})")
    return (t0, t1), (row0, row1)


def merged_column(geometry, columns, x, y):
    """``(t0, t1, row)`` of the frame column (its exact ns bounds, on the
    grid of ``columns`` columns) and layout row under logical ``(x, y)``, or
    None off the tracks."""
    from ...trace.interaction import column_bounds
    if x < GUTTER or y < TRACKS_TOP or y >= geometry.bottom:
        return None
    w0, w1 = geometry.window
    c = min(int((x - GUTTER) / (geometry.plot_width / columns)), columns - 1)
    bounds = column_bounds((0, w1 - w0), columns)
    row = geometry.first_row + int((y - TRACKS_TOP) // ROW_HEIGHT)
    return w0 + int(bounds[c]), w0 + int(bounds[c + 1]), row


def longest_in_column(index, ids, t0, t1):
    """The span a click on a merged sub-pixel column means, of the spans
    ``ids`` (ascending) shown in that column ``[t0, t1)``: the longest of
    those inside the one column (the merged ones; ties: the lowest ID),
    else the longest of all; None when there are none."""
    if not len(ids):
        return None
    inside = ids[(index.start[ids] >= t0) & (index.end[ids] <= t1)]
    ids = inside if len(inside) else ids
    return int(ids[np.argmax(index.duration[ids])])  # ids ascend: argmax keeps the lowest on ties


def summary_html(frame) -> str:
    """The selection's summary table (count and durations per name) as HTML for the details panel."""
    import html
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in record) + "</tr>"
                   for record in frame.head(20).itertuples(index=False))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    more = f"<div>… {len(frame) - 20} more names</div>" if len(frame) > 20 else ""
    return (f"<div><b>Region summary</b> ({len(frame)} names)</div>"
            f"<table style='font-size:11px'><tr>{head}</tr>{rows}</table>{more}")


def queue_band(overlay, band) -> None:
    """The rubber band of a shift-drag: a translucent fill and a 1-px outline."""
    x0, y0, x1, y1 = band
    overlay.rect(x0, y0, x1, y1, color=(0.55, 0.75, 1.0, 0.18))
    for rect in ((x0, y0, x1, y0 + 1), (x0, y1 - 1, x1, y1), (x0, y0, x0 + 1, y1), (x1 - 1, y0, x1, y1)):
        overlay.rect(*rect, color=(0.55, 0.75, 1.0, 0.9))
