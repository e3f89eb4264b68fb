"""GPUIndexedRangeCompaction and GPUPartitionedIndexedRangeCompaction against
numpy: active subsets changed on the GPU side without recompiling, canonical
range order, partitions and per-partition counts."""

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import (GPUIndexedRangeCompaction, GPUPartitionedIndexedRangeCompaction, IndexedRangeLayout,
                               ReductionTuning)
from gpuviz.oracles.algorithms import indexed_range_compaction as expected_ids

from .conftest import gpu_data, gpu_vector, new_graph, read

BU = wgpu.BufferUsage


def imported(graph, device, name, values, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST):
    values = np.asarray(values, np.uint32)
    buffer = device.create_buffer_with_data(data=values.tobytes(), usage=usage)
    handle = graph.import_buffer(id=name, byte_length=buffer.size, usage=usage, buffer=buffer)
    return buffer, handle, graph.create_data_view(handle, format="uint32", length=values.size)


def encode(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def words(device, buffer, n):
    return np.frombuffer(device.queue.read_buffer(buffer), np.uint32)[:n].tolist()


def test_partitioned_reference_example(device):
    graph = new_graph(device)
    flags = gpu_vector(device, [[1, 0, 1, 0, 1, 1], [0, 1, 1, 0, 1]])
    out = gpu_vector(device, [np.zeros(6), np.zeros(5)])
    _, _, ranges = imported(graph, device, "ranges", [0, 3, 3, 3, 6, 2, 8, 3])
    active_buf, _, active = imported(graph, device, "active", [0, 1, 2, 3])
    dispatch_buf, dispatch, _ = imported(graph, device, "dispatch", [1, 4, 1], BU.STORAGE | BU.INDIRECT | BU.COPY_DST)
    count_buf, _, count = imported(graph, device, "count", [99])
    pcount_buf, _, pcounts = imported(graph, device, "pcounts", [99, 99])
    job = GPUPartitionedIndexedRangeCompaction(
        id="visible", flags=graph.import_gpu_vector("flags", flags), ranges=ranges, range_count=4,
        range_layout=IndexedRangeLayout(word_stride=2), partition_range_ends=[2, 4], active_range_ids=active,
        active_range_dispatch=dispatch, maximum_range_length=3, output=graph.import_gpu_vector("out", out),
        count=count, partition_counts=pcounts)
    job.add_to_graph(graph)
    compiled = graph.compile()
    encode(device, compiled)
    assert read(device, out.chunks[0])[:4].tolist() == [0, 2, 4, 5]
    assert read(device, out.chunks[1])[:3].tolist() == [7, 8, 10]
    assert words(device, count_buf, 1) == [7] and words(device, pcount_buf, 2) == [4, 3]
    # a new candidate set, written on the GPU side, with no recompilation
    device.queue.write_buffer(active_buf, 0, np.array([1, 3, 2, 0], np.uint32))
    device.queue.write_buffer(dispatch_buf, 0, np.array([1, 2, 1], np.uint32))
    encode(device, compiled)
    assert read(device, out.chunks[0])[:2].tolist() == [4, 5]
    assert read(device, out.chunks[1])[:2].tolist() == [8, 10]
    assert words(device, count_buf, 1) == [4] and words(device, pcount_buf, 2) == [2, 2]


@settings(max_examples=8, deadline=None)
@given(lengths=st.lists(st.integers(0, 600), min_size=1, max_size=12), gaps=st.booleans(),
       seed=st.integers(0, 10000), density=st.sampled_from([0.0, 0.3, 1.0]))
def test_indexed_ranges_match_numpy(device, lengths, gaps, seed, density):
    rng = np.random.default_rng(seed)
    ranges, start = [], 0
    for n in lengths:
        start += int(rng.integers(0, 5)) if gaps else 0
        ranges.append((start, n))
        start += n
    source = start + 3
    flags = (rng.random(source) < density).astype(np.uint32)
    count_active = int(rng.integers(0, len(ranges) + 1))
    active = rng.permutation(len(ranges))[:count_active].tolist()
    graph = new_graph(device)
    _, _, ranges_view = imported(graph, device, "ranges", [w for r in ranges for w in (7, r[0], r[1])])
    _, _, active_view = imported(graph, device, "active", active + [0] * (len(ranges) - count_active))
    _, dispatch, _ = imported(graph, device, "dispatch", [1, count_active, 1], BU.STORAGE | BU.INDIRECT)
    out = gpu_data(device, np.full(source, 0xFFFFFFFF, np.uint32))
    count_buf, _, count = imported(graph, device, "count", [99])
    job = GPUIndexedRangeCompaction(id="r", flags=graph.import_gpu_data("flags", gpu_data(device, flags)),
                                    ranges=ranges_view, range_count=len(ranges), range_layout=(3, 1, 2),
                                    active_range_ids=active_view, active_range_dispatch=dispatch,
                                    maximum_range_length=max(lengths + [1]), output=graph.import_gpu_data("out", out),
                                    count=count)
    job.add_to_graph(graph)
    encode(device, graph.compile())
    expected = expected_ids(flags, ranges, active)
    assert words(device, count_buf, 1) == [len(expected)]
    assert read(device, out)[:len(expected)].tolist() == expected


def test_maximum_range_length_bounds_each_range(device):
    graph = new_graph(device)
    _, _, ranges = imported(graph, device, "ranges", [0, 10])
    _, _, active = imported(graph, device, "active", [0])
    _, dispatch, _ = imported(graph, device, "dispatch", [1, 1, 1], BU.STORAGE | BU.INDIRECT)
    out = gpu_data(device, np.zeros(10))
    count_buf, _, count = imported(graph, device, "count", [99])
    GPUIndexedRangeCompaction(id="r", flags=graph.import_gpu_data("f", gpu_data(device, np.ones(10))), ranges=ranges,
                              range_count=1, range_layout=(2, 0, 1), active_range_ids=active,
                              active_range_dispatch=dispatch, maximum_range_length=4,
                              output=graph.import_gpu_data("o", out), count=count).add_to_graph(graph)
    encode(device, graph.compile())
    assert words(device, count_buf, 1) == [4] and read(device, out)[:4].tolist() == [0, 1, 2, 3]


def test_errors(device, graph):
    _, _, ranges = imported(graph, device, "ranges", [0, 3, 3, 3])
    _, _, active = imported(graph, device, "active", [0, 1])
    _, not_indirect, _ = imported(graph, device, "plain", [1, 2, 1], BU.STORAGE)
    _, dispatch, _ = imported(graph, device, "dispatch", [1, 2, 1], BU.STORAGE | BU.INDIRECT)
    flags = graph.import_gpu_data("f", gpu_data(device, np.ones(6)))
    out = graph.import_gpu_data("o", gpu_data(device, np.ones(6)))
    short = graph.import_gpu_data("s", gpu_data(device, np.ones(5)))
    _, _, count = imported(graph, device, "count", [0])
    base = dict(flags=flags, ranges=ranges, range_count=2, range_layout=(2, 0, 1), active_range_ids=active,
                active_range_dispatch=dispatch, maximum_range_length=3, output=out, count=count)
    with pytest.raises(gpuviz.GraphValidationError, match="INDIRECT usage"):
        GPUIndexedRangeCompaction(id="r", **{**base, "active_range_dispatch": not_indirect}).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="output is shorter than flags"):
        GPUIndexedRangeCompaction(id="r", **{**base, "output": short}).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="ranges is shorter than needed \\(needs 6 rows, got 4\\)"):
        GPUIndexedRangeCompaction(id="r", **{**base, "range_count": 3}).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="word offsets outside its stride"):
        GPUIndexedRangeCompaction(id="r", **{**base, "range_layout": (2, 0, 2)}).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphTypeError, match='GPUIndexedRangeCompaction "r" tuning must be a ScanTuning '
                                                    r"\(got ReductionTuning\)"):
        GPUIndexedRangeCompaction(id="r", **base, tuning=ReductionTuning())
    vec = graph.import_gpu_vector("fv", gpu_vector(device, [np.ones(3), np.ones(3)]))
    outv = graph.import_gpu_vector("ov", gpu_vector(device, [np.ones(3), np.ones(3)]))
    with pytest.raises(gpuviz.GraphValidationError, match="partition_range_ends \\[1\\] must be 2 non-decreasing"):
        GPUPartitionedIndexedRangeCompaction(id="p", **{**base, "flags": vec, "output": outv},
                                             partition_range_ends=[1]).add_to_graph(graph)
