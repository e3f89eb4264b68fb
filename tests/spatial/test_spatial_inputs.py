"""Bad constructor inputs of the spatial primitives, as for the algorithms
(tests/algorithms/test_primitive_inputs.py): every primitive refuses an ID
that is not a non-empty str at construction, and every exported spatial
primitive has a valid builder here."""

import numpy as np
import pytest

import gpuviz.spatial as spatial
from gpuviz import GraphTypeError, GraphValidationError
from gpuviz.graph import GPUCommandGraph
from gpuviz.tables import GPUData
from gpuviz.spatial import (QUERY_WORDS, GPUBVH, GPUBVHQuery, GPUGridIndex, GPUGridIndexQuery,
                            GPUPointSpatialFilter, GPUSegmentedBVH)

from .conftest import filled, points_view

DOM2 = ((0.0, 0.0), (1.0, 1.0))


def _points(graph):
    return points_view(graph.device, graph, np.zeros((4, 2), np.float32))[0]


def _u32(graph, name, n, value=0):
    return graph.import_gpu_data(name, filled(graph.device, n, value))


def _index(graph, id="index"):
    index = GPUGridIndex(id=id, points=_points(graph), domain=DOM2, cells=(2, 2))
    index.add_to_graph(graph)
    return index


def _grid_query(graph, id):
    return GPUGridIndexQuery(id=id, index=_index(graph), query=_u32(graph, "query", QUERY_WORDS),
                             candidates=_u32(graph, "candidates", 4))


def _bounds(graph):
    lo = graph.import_gpu_data("lo", GPUData.from_numpy(graph.device, np.zeros((4, 2), np.float32)))
    hi = graph.import_gpu_data("hi", GPUData.from_numpy(graph.device, np.ones((4, 2), np.float32)))
    return lo, hi


def _bvh(graph, id="bvh"):
    return GPUBVH(id=id, bounds=_bounds(graph), leaf_capacity=4)


def _bvh_query(graph, id):
    bvh = _bvh(graph)
    bvh.add_to_graph(graph)
    return GPUBVHQuery(id=id, bvh=bvh, query=_u32(graph, "query", QUERY_WORDS), output=_u32(graph, "out", 4))


def _filter(graph, id):
    return GPUPointSpatialFilter(id=id, points=_points(graph), query=_u32(graph, "query", QUERY_WORDS),
                                 mask=_u32(graph, "mask", 4))


BUILDERS = {
    GPUGridIndex: lambda graph, id: GPUGridIndex(id=id, points=_points(graph), domain=DOM2, cells=(2, 2)),
    GPUGridIndexQuery: _grid_query,
    GPUPointSpatialFilter: _filter,
    GPUBVH: _bvh,
    GPUBVHQuery: _bvh_query,
    GPUSegmentedBVH: lambda graph, id: GPUSegmentedBVH(id=id, bounds=_bounds(graph), tree_rows=[1, 3]),
}


def test_every_spatial_primitive_is_covered():
    primitives = {getattr(spatial, name) for name in spatial.__all__ if name.startswith("GPU")}
    assert primitives == set(BUILDERS)


@pytest.mark.parametrize("primitive", list(BUILDERS), ids=lambda c: c.__name__)
def test_the_builders_are_valid(device, primitive):
    graph = GPUCommandGraph(device, id="inputs")
    BUILDERS[primitive](graph, "p").add_to_graph(graph)
    graph.compile()


@pytest.mark.parametrize("bad, error", [(None, GraphTypeError), (3, GraphTypeError), (b"p", GraphTypeError),
                                        ("", GraphValidationError)], ids=["None", "int", "bytes", "empty"])
@pytest.mark.parametrize("primitive", list(BUILDERS), ids=lambda c: c.__name__)
def test_an_id_that_is_not_a_non_empty_str_is_refused_at_construction(device, primitive, bad, error):
    graph = GPUCommandGraph(device, id="inputs")
    with pytest.raises(error) as info:
        BUILDERS[primitive](graph, bad)
    assert str(info.value).startswith(f"{primitive.__name__} needs a non-empty string id (got ")
