"""Helpers for the spatial tests: point uploads (packed or chunked), one
graph holding an index, a query and both filters, and readback."""

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz.graph import GPUCommandGraph
from gpuviz.spatial import (QUERY_WORDS, GPUGridIndex, GPUGridIndexQuery, GPUPointSpatialFilter, query_record,
                            write_query)
from gpuviz.spatial.grid import GRID_STATS
from gpuviz.spatial.grid_query import QUERY_STATS
from gpuviz.spatial.point_filter import FILTER_STATS
from gpuviz.tables import GPUData, GPUVector, read_array

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
SENTINEL = 0xDEADBEEF


def filled(device, rows, value=SENTINEL):
    return GPUData.from_numpy(device, np.full(max(rows, 1), value, np.uint32), USAGE)


def points_view(device, graph, points, chunks=None):
    """(n, dims) float32 points as a data view, or as a vector view split at
    ``chunks`` (a list of chunk lengths summing to n; zeros allowed)."""
    points = np.asarray(points, np.float32)
    dims = points.shape[1]
    if chunks is None:
        data = GPUData.from_numpy(device, points if len(points) else np.zeros((0, dims), np.float32), USAGE)
        return graph.import_gpu_data("points", data), data
    assert sum(chunks) == len(points)
    parts = np.split(points, np.cumsum(chunks)[:-1])
    vector = GPUVector.from_numpy(device, [p.reshape(-1, dims) for p in parts], USAGE,
                                  format=f"float32x{dims}")
    return graph.import_gpu_vector("points", vector), vector


def as_dict(words, fields):
    return {f: int(w) for f, w in zip(fields, words)}


@pytest.fixture
def compiled_pipelines(monkeypatch):
    """The compute pipelines every ComputeKernel asks the shader builder for
    from here on (a new query must add none)."""
    from gpuviz.graph import kernel

    pipelines = []
    original = kernel.compute_pipeline

    def spy(*args, **kwargs):
        pipelines.append(original(*args, **kwargs))
        return pipelines[-1]

    monkeypatch.setattr(kernel, "compute_pipeline", spy)
    return pipelines


class SpatialRun:
    """An index over ``points``, a query, and the filter over candidates and
    over every row, in one compiled graph. ``run(**query)`` writes the
    query record, encodes once and reads everything back."""

    def __init__(self, device, points, *, domain, cells, capacity=None, out_capacity=None, chunks=None,
                 with_mask=True):
        self.device = device
        self.points = np.asarray(points, np.float32)
        rows = len(self.points)
        self.dims = self.points.shape[1]
        graph = GPUCommandGraph(device, id="spatial")
        self.view, self.source = points_view(device, graph, self.points, chunks)
        cap = capacity if capacity is not None else max(rows, 1)
        self.cells = cells
        self.bufs = {"ids": filled(device, cap), "offsets": filled(device, int(np.prod(cells)) + 1),
                     "istats": filled(device, 8), "query": filled(device, QUERY_WORDS, 0),
                     "cands": filled(device, out_capacity if out_capacity is not None else max(rows, 1)),
                     "cmask": filled(device, rows), "qstats": filled(device, 8),
                     "imask": filled(device, rows), "fstats": filled(device, 8),
                     "umask": filled(device, rows), "ustats": filled(device, 8)}
        v = {k: graph.import_gpu_data(k, b) for k, b in self.bufs.items()}
        self.index = GPUGridIndex(id="grid", points=self.view, domain=domain, cells=cells, capacity=capacity,
                                  ids=v["ids"], cell_offsets=v["offsets"], stats=v["istats"])
        self.index.add_to_graph(graph)
        self.query = GPUGridIndexQuery(id="query", index=self.index, query=v["query"], candidates=v["cands"],
                                       mask=v["cmask"] if with_mask else None, stats=v["qstats"])
        self.query.add_to_graph(graph)
        GPUPointSpatialFilter(id="indexed", points=self.view, query=v["query"], candidates=self.query,
                              mask=v["imask"], stats=v["fstats"]).add_to_graph(graph)
        GPUPointSpatialFilter(id="scan", points=self.view, query=v["query"], mask=v["umask"],
                              stats=v["ustats"]).add_to_graph(graph)
        self.graph = graph
        self.compiled = graph.compile()

    def run(self, encodings=1, **query):
        words = write_query(self.bufs["query"], queue=self.device.queue, dims=self.dims, **query)
        encoder = self.device.create_command_encoder()
        for _ in range(encodings):
            self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        got = {k: read_array(self.device, b) for k, b in self.bufs.items()}
        rows = len(self.points)
        return words, {
            "ids": got["ids"], "offsets": got["offsets"], "istats": as_dict(got["istats"], GRID_STATS),
            "cands": got["cands"], "cmask": got["cmask"][:rows], "qstats": as_dict(got["qstats"], QUERY_STATS),
            "imask": got["imask"][:rows], "fstats": as_dict(got["fstats"], FILTER_STATS),
            "umask": got["umask"][:rows], "ustats": as_dict(got["ustats"], FILTER_STATS)}


__all__ = ["SpatialRun", "points_view", "filled", "as_dict", "query_record", "gpuviz"]
