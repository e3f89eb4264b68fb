"""Bad constructor inputs of the primitives (issue 10, items 10 and 11):
every primitive refuses an ID that is not a non-empty str at construction,
and GPUSegmentedSort copies its offsets and lengths there."""

import numpy as np
import pytest
import wgpu

from gpuviz import GraphTypeError, GraphValidationError
from gpuviz.algorithms import (GPUAncestorProjection, GPUBatchSort, GPUGraphTraversal, GPUHierarchyLayout,
                               GPUCompaction, GPUGridAggregation, GPUGridBinning, GPUGroupAggregation,
                               GPUHistogram, GPUIndexedRangeCompaction, GPUMask, GPUPartitionedIndexedRangeCompaction,
                               GPUReduction, GPUScan, GPUSegmentedSort, GPUSort, GPUHashIndex, GPUBatchHashIndex,
                               GPUHashIndexQuery, GPUHashJoin, GPUBatchHashJoin, GPUGroupFilter, GPUGridStatistic,
                               GPUGather)
from gpuviz.graph import GPUCommandGraph
from gpuviz.tables import GPUData, GPUVector, read_array

from .conftest import run

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST | BU.INDIRECT


def view(graph, name, values):
    return graph.import_gpu_data(name, GPUData.from_numpy(graph.device, np.asarray(values), USAGE))


def u32(graph, name, n=8):
    return view(graph, name, np.zeros(n, np.uint32))


def f32(graph, name, n=8, components=1):
    return view(graph, name, np.zeros((n, components) if components > 1 else n, np.float32))


def vector(graph, name, lengths=(3, 5)):
    return graph.import_gpu_vector(name, GPUVector.from_numpy(graph.device, [np.zeros(n, np.uint32) for n in lengths],
                                                              USAGE))


def ranges(graph):
    return dict(flags=u32(graph, "flags", 6), ranges=view(graph, "ranges", np.array([0, 3, 3, 3], np.uint32)),
                range_count=2, range_layout=(2, 0, 1),
                active_range_ids=view(graph, "active", np.array([0, 1], np.uint32)),
                active_range_dispatch=view(graph, "dispatch", np.ones(3, np.uint32)), maximum_range_length=3,
                output=u32(graph, "out", 6), count=u32(graph, "count", 1))


#: Every primitive, built over small valid views with the given id.
BUILDERS = {
    GPUScan: lambda g, id: GPUScan(id=id, input=u32(g, "x"), output=u32(g, "y")),
    GPUCompaction: lambda g, id: GPUCompaction(id=id, input=u32(g, "x"), flags=u32(g, "f"), output=u32(g, "y"),
                                               count=u32(g, "n", 1)),
    GPUIndexedRangeCompaction: lambda g, id: GPUIndexedRangeCompaction(id=id, **ranges(g)),
    GPUPartitionedIndexedRangeCompaction: lambda g, id: GPUPartitionedIndexedRangeCompaction(
        id=id, partition_range_ends=[2], **(ranges(g) | dict(flags=vector(g, "fv", (6,)),
                                                             output=vector(g, "ov", (6,))))),
    GPUReduction: lambda g, id: GPUReduction(id=id, input=u32(g, "x"), output=u32(g, "y", 1)),
    GPUMask: lambda g, id: GPUMask(id=id, inputs=[u32(g, "a")], output=u32(g, "o")),
    GPUSort: lambda g, id: GPUSort(id=id, keys=u32(g, "k"), output_keys=u32(g, "o")),
    GPUBatchSort: lambda g, id: GPUBatchSort(id=id, keys=vector(g, "k"), output_keys=vector(g, "o")),
    GPUSegmentedSort: lambda g, id: GPUSegmentedSort(id=id, keys=u32(g, "k"), output_keys=u32(g, "o"),
                                                     offsets=[0, 4], lengths=[4, 4]),
    GPUHistogram: lambda g, id: GPUHistogram(id=id, input=f32(g, "x"), output=u32(g, "h", 4), domain=(0.0, 1.0)),
    GPUGroupAggregation: lambda g, id: GPUGroupAggregation(id=id, codes=u32(g, "c"), output=u32(g, "o", 4)),
    GPUGridBinning: lambda g, id: GPUGridBinning(id=id, positions=f32(g, "xy", components=2), output=u32(g, "o", 6),
                                                 grid_size=(3, 2), bounds=(0.0, 0.0, 1.0, 1.0)),
    GPUGridAggregation: lambda g, id: GPUGridAggregation(
        id=id, positions=f32(g, "xy", components=2), weights=f32(g, "w"), output=f32(g, "o", 6), grid_size=(3, 2),
        bounds=(0.0, 0.0, 1.0, 1.0), operation="sum"),
    GPUHierarchyLayout: lambda g, id: GPUHierarchyLayout(id=id, parent_states=u32(g, "ps", 2), child_states=u32(g, "cs"),
                                                         offsets=u32(g, "o"), children_per_parent=4),
    GPUGraphTraversal: lambda g, id: GPUGraphTraversal(
        id=id, offsets=view(g, "csr", np.zeros(9, np.uint32)), neighbors=u32(g, "nb", 4), seeds=u32(g, "s", 1),
        output=u32(g, "o"), max_depth=2),
    GPUAncestorProjection: lambda g, id: GPUAncestorProjection(id=id, parents=u32(g, "p"), visibility=u32(g, "v"),
                                                               output=u32(g, "o")),
    GPUGroupFilter: lambda g, id: GPUGroupFilter(id=id, values=f32(g, "v"), codes=u32(g, "c"),
                                                 enabled=u32(g, "e", 4), output=f32(g, "o")),
    GPUGather: lambda g, id: GPUGather(id=id, indices=u32(g, "i"), table=u32(g, "t", 4), output=u32(g, "o")),
    GPUGridStatistic: lambda g, id: GPUGridStatistic(
        id=id, counts=u32(g, "n", 6), sums=f32(g, "s", 6), mins=f32(g, "lo", 6), maxs=f32(g, "hi", 6),
        output=f32(g, "o", 6), grid_size=(3, 2), operation="mean"),
    GPUHashIndex: lambda g, id: GPUHashIndex(id=id, keys=u32(g, "k")),
    GPUBatchHashIndex: lambda g, id: GPUBatchHashIndex(id=id, keys=vector(g, "k")),
    GPUHashIndexQuery: lambda g, id: GPUHashIndexQuery(id=id, index=hash_index(g), keys=u32(g, "q"),
                                                       output=u32(g, "o")),
    GPUHashJoin: lambda g, id: GPUHashJoin(id=id, left_keys=u32(g, "q"), index=hash_index(g), count=u32(g, "n", 1),
                                           pairs=u32x2(g, "pairs", 4), capacity=4),
    GPUBatchHashJoin: lambda g, id: GPUBatchHashJoin(id=id, left_keys=vector(g, "q"), index=hash_index(g),
                                                     pairs=[u32x2(g, "p0", 3), u32x2(g, "p1", 5)],
                                                     counts=u32(g, "n", 2)),
}


def hash_index(graph):
    """A GPUHashIndex already added to ``graph`` (queries and joins read it)."""
    index = GPUHashIndex(id="right-index", keys=u32(graph, "right-keys"))
    index.add_to_graph(graph)
    return index


def u32x2(graph, name, n):
    handle = u32(graph, name, 2 * n).handle
    return graph.create_data_view(handle, format="uint32x2", length=n)


def test_every_primitive_is_covered():
    import gpuviz.algorithms as algorithms

    primitives = {getattr(algorithms, name) for name in algorithms.__all__ if name.startswith("GPU")}
    assert primitives == set(BUILDERS)


@pytest.mark.parametrize("primitive", list(BUILDERS), ids=lambda c: c.__name__)
def test_the_builders_are_valid(device, primitive):
    graph = GPUCommandGraph(device, id="inputs")
    BUILDERS[primitive](graph, "p").add_to_graph(graph)


@pytest.mark.parametrize("bad, error", [(None, GraphTypeError), (3, GraphTypeError), (b"p", GraphTypeError),
                                        ("", GraphValidationError)], ids=["None", "int", "bytes", "empty"])
@pytest.mark.parametrize("primitive", list(BUILDERS), ids=lambda c: c.__name__)
def test_an_id_that_is_not_a_non_empty_str_is_refused_at_construction(device, primitive, bad, error):
    graph = GPUCommandGraph(device, id="inputs")
    with pytest.raises(error) as info:
        BUILDERS[primitive](graph, bad)
    assert str(info.value).startswith(f"{primitive.__name__} needs a non-empty string id (got ")
    assert isinstance(info.value, TypeError if error is GraphTypeError else ValueError)


@pytest.mark.parametrize("container", [np.array, list], ids=["numpy", "list"])
def test_segmented_sort_copies_its_offsets_and_lengths_at_construction(device, container):
    keys = np.array([4, 3, 2, 1, 8, 7, 6, 5], np.uint32)
    graph = GPUCommandGraph(device, id="segments")
    out = GPUData.allocate(device, format="uint32", length=8)
    offsets, lengths = container([0, 4]), container([4, 4])
    sort = GPUSegmentedSort(id="s", keys=view(graph, "k", keys), output_keys=graph.import_gpu_data("o", out),
                            offsets=offsets, lengths=lengths)
    offsets[1], lengths[0] = 2, 2  # the caller reuses its arrays: the sort keeps the segments it was given
    sort.add_to_graph(graph)
    run(graph)
    np.testing.assert_array_equal(read_array(device, out), [1, 2, 3, 4, 5, 6, 7, 8])
    assert sort.offsets == (0, 4) and sort.lengths == (4, 4)


def test_segmented_sort_refuses_non_integer_segments_at_construction(device):
    graph = GPUCommandGraph(device, id="segments")
    with pytest.raises(GraphValidationError, match='GPUSegmentedSort "s" offsets and lengths must be sequences of '
                                                   "integers"):
        GPUSegmentedSort(id="s", keys=u32(graph, "k"), output_keys=u32(graph, "o"), offsets=np.array([0.5]),
                         lengths=[4])
