"""Per-name summaries of a set of spans on the GPU (GPUGroupAggregation).

For a row mask ``m`` over the spans (span ID order), one small graph of four
group aggregations keyed by name ID computes

* ``count``  spans per name,
* ``total``  the sum of their durations, ``max`` the largest,
* ``child``  the durations of the spans whose PARENT is in the set, keyed by
  the parent's name: ``self = total - child`` is the time the spans of a
  name spent outside their children (their self time).

The CPU writes the two masks (the set, and "my parent is in the set") and
reads the four short outputs back; ``mean = total / count``. Sums are
float32 on the GPU (about 7 significant digits).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import wgpu

from ...algorithms.group_aggregation import GPUGroupAggregation
from ...graph import GPUCommandGraph
from ...tables import GPUData
from ...tables.readback import read_array

__all__ = ["SpanSummary", "SUMMARY_COLUMNS"]

BU = wgpu.BufferUsage
SUMMARY_COLUMNS = ("name", "count", "total_ns", "mean_ns", "max_ns", "self_ns")


class SpanSummary:
    """The summary graph of one trace (compiled on the first :meth:`run`).

    Parameters
    ----------
    device : wgpu.GPUDevice
    index : TraceIndex
        The trace's CPU index (name codes, parents, durations).

    Notes
    -----
    A graph of its own, separate from the frame graph (it runs only when a
    summary is asked for, and waits for its readback). Does not sort the
    result beyond the total descending.
    """

    def __init__(self, device, index):
        self.device, self.index = device, index
        self.groups = max(len(index.names), 1)
        self.compiled = None
        self.compile_count = 0
        self._owned = []

    def _data(self, values, fmt):
        data = GPUData.from_numpy(self.device, np.ascontiguousarray(values, fmt))
        self._owned.append(data)
        return data

    def _build(self):
        index, n = self.index, max(self.index.n, 1)
        names = np.zeros(n, np.uint32)
        names[:index.n] = index.name_id
        parent_names = np.zeros(n, np.uint32)
        has_parent = index.parent >= 0
        parent_names[:index.n] = np.where(has_parent, index.name_id[np.maximum(index.parent, 0)], 0)
        durations = np.zeros(n, np.float32)
        durations[:index.n] = index.duration
        self.mask = self._data(np.zeros(n, np.uint32), np.uint32)
        self.child_mask = self._data(np.zeros(n, np.uint32), np.uint32)
        graph = GPUCommandGraph(self.device, id="trace-viewer-summary")
        codes = graph.import_gpu_data("names", self._data(names, np.uint32))
        parents = graph.import_gpu_data("parent-names", self._data(parent_names, np.uint32))
        values = graph.import_gpu_data("durations", self._data(durations, np.float32))
        mask = graph.import_gpu_data("mask", self.mask)
        child_mask = graph.import_gpu_data("child-mask", self.child_mask)
        self.outputs = {}
        for key, op, fmt, by, keep in (("count", "count", "uint32", codes, mask), ("total", "sum", "float32", codes, mask),
                                       ("max", "max", "float32", codes, mask),
                                       ("child", "sum", "float32", parents, child_mask)):
            out = GPUData.allocate(self.device, format=fmt, length=self.groups, label=f"trace-summary-{key}",
                                   usage=BU.STORAGE | BU.COPY_SRC)
            self._owned.append(out)
            self.outputs[key] = out
            GPUGroupAggregation(id=f"summary-{key}", codes=by, output=graph.import_gpu_data(f"out-{key}", out),
                                operation=op, values=None if op == "count" else values,
                                mask=keep).add_to_graph(graph)
        self.compiled = graph.compile()
        self.compile_count += 1

    def run(self, selected: np.ndarray) -> pa.Table:
        """Summary table of the spans where ``selected`` (bool per span) is True,
        one row per name that occurs, by total duration descending."""
        index = self.index
        if self.compiled is None:
            self._build()
        n = max(index.n, 1)
        mask = np.zeros(n, np.uint32)
        mask[:index.n] = selected
        child = np.zeros(n, np.uint32)
        has_parent = index.parent >= 0
        child[:index.n] = has_parent & selected[np.maximum(index.parent, 0)] if index.n else 0
        self.device.queue.write_buffer(self.mask.buffer, self.mask.byte_offset, mask.tobytes())
        self.device.queue.write_buffer(self.child_mask.buffer, self.child_mask.byte_offset, child.tobytes())
        encoder = self.device.create_command_encoder(label="trace-viewer-summary")
        self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        got = {k: read_array(self.device, v) for k, v in self.outputs.items()}
        count = got["count"].astype(np.int64)
        keep = np.flatnonzero(count > 0)
        total = got["total"].astype(np.float64)
        child_sum = np.nan_to_num(got["child"].astype(np.float64))
        order = keep[np.argsort(-total[keep], kind="stable")]
        return pa.table({
            "name": pa.array([index.names[i] for i in order], pa.string()),
            "count": pa.array(count[order]),
            "total_ns": pa.array(total[order]),
            "mean_ns": pa.array(total[order] / count[order]),
            "max_ns": pa.array(got["max"].astype(np.float64)[order]),
            "self_ns": pa.array(total[order] - child_sum[order]),
        })

    def destroy(self) -> None:
        if self.compiled is not None:
            self.compiled.destroy()
            self.compiled = None
        for data in self._owned:
            data.destroy()
        self._owned.clear()
