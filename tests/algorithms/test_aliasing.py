"""Aliasing between a primitive's own views is refused at the call (issue 10,
items 5, 6 and 11): output chunks over the same bytes, two outputs over the
same bytes, an output over an input it reads, and one physical buffer
imported under two handles. Disjoint views of one buffer keep working and
give numpy's answers."""

import numpy as np
import pytest
import wgpu

from gpuviz import GraphValidationError
from gpuviz.algorithms import (GPUBatchSort, GPUCompaction, GPUGridAggregation, GPUGridBinning, GPUGroupAggregation,
                               GPUHistogram, GPUIndexedRangeCompaction, GPUMask, GPUPartitionedIndexedRangeCompaction,
                               GPUReduction, GPUScan, GPUSegmentedSort, GPUSort)
from gpuviz.graph import GPUCommandGraph
from gpuviz.graph.resources import GraphVectorView
from gpuviz.tables import GPUData, GPUVector, read_array

from .conftest import run, scan_oracle

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST | BU.INDIRECT


class Pool:
    """One graph; ``at`` views a shared buffer imported once as "pool" (or
    "pool2"), ``twice`` views the pool's buffer through a second import,
    ``fresh`` is a buffer of its own."""

    def __init__(self, device, words=None):
        self.device = device
        self.graph = GPUCommandGraph(device, id="aliasing")
        self.data = {}
        self.handles = {}
        for name in ("pool", "pool2"):
            values = np.zeros(256, np.uint32) if words is None or name not in words else words[name]
            self.data[name] = GPUData.from_numpy(device, values, USAGE)
            buffer = self.data[name].buffer
            self.handles[name] = self.graph.import_buffer(id=name, byte_length=buffer.size, usage=USAGE,
                                                          buffer=buffer)
        self.count = 0

    def at(self, start, n, format="uint32", pool="pool"):
        return self.graph.create_data_view(self.handles[pool], format=format, length=n, byte_offset=4 * start)

    def twice(self, start, n, format="uint32"):
        self.count += 1
        backing = self.data["pool"]
        return self.graph.import_gpu_data(f"again-{self.count}", GPUData(backing.buffer, format=format, length=n,
                                                                          byte_offset=4 * start))

    def twice_vector(self, starts, n):
        """A vector of ``n``-row chunks at word ``starts`` of the pool's buffer, imported again."""
        self.count += 1
        backing = self.data["pool"]
        return self.graph.import_gpu_vector(f"again-{self.count}", GPUVector(
            [GPUData(backing.buffer, format="uint32", length=n, byte_offset=4 * s) for s in starts]))

    def fresh(self, n, dtype=np.uint32, fill=1):
        self.count += 1
        return self.graph.import_gpu_data(f"fresh-{self.count}",
                                          GPUData.from_numpy(self.device, np.full(n, fill, dtype), USAGE))

    @staticmethod
    def vec(*views):
        return GraphVectorView("v", tuple(views), views[0].format)

    def read(self, pool="pool"):
        return read_array(self.device, self.data[pool])


def ranges_args(p, **changes):
    """Two ranges [0, 3) and [3, 6) over six flags, all in their own buffers."""
    args = dict(flags=p.fresh(6), ranges=p.fresh(4), range_count=2, range_layout=(2, 0, 1),
                active_range_ids=p.fresh(2), active_range_dispatch=p.fresh(3), maximum_range_length=3,
                output=p.fresh(6), count=p.fresh(1))
    return args | changes


def group(p, **changes):
    args = dict(id="a", codes=p.fresh(8, fill=0), output=p.fresh(4), group_count=4)
    return GPUGroupAggregation(**(args | changes))


#: (class name, builder over a Pool, fragments the message must hold). The
#: builder runs inside pytest.raises (keyed aggregations refuse at construction).
REFUSED = [
    pytest.param("GPUScan", lambda p: GPUScan(id="a", input=p.vec(p.fresh(4), p.fresh(4)),
                                              output=p.vec(p.at(0, 4), p.at(0, 4))),
                 ("output chunk 0 and output chunk 1 overlap", 'buffer "pool"', "bytes 0..16 and 0..16"),
                 id="scan-output-chunks"),
    pytest.param("GPUScan", lambda p: GPUScan(id="a", input=p.at(0, 8), output=p.at(4, 8)),
                 ("output overlaps input", "bytes 16..48 and 0..32", "in-place"), id="scan-output-over-input"),
    pytest.param("GPUScan", lambda p: GPUScan(id="a", input=p.at(0, 8), output=p.twice(4, 8)),
                 ("output", "input"), id="scan-output-over-input-imported-twice"),
    pytest.param("GPUCompaction", lambda p: GPUCompaction(
        id="a", input=p.vec(p.fresh(4), p.fresh(4)), flags=p.vec(p.fresh(4), p.fresh(4)),
        output=p.vec(p.at(0, 4), p.at(2, 4)), count=p.fresh(1)),
        ("output chunk 0 and output chunk 1 overlap", "bytes 0..16 and 8..24"), id="compaction-output-chunks"),
    pytest.param("GPUCompaction", lambda p: GPUCompaction(id="a", input=p.at(0, 8), flags=p.fresh(8),
                                                          output=p.fresh(8), count=p.at(3, 1)),
                 ("count overlaps input", "bytes 12..16 and 0..32"), id="compaction-count-in-input"),
    pytest.param("GPUCompaction", lambda p: GPUCompaction(id="a", input=p.at(0, 8), flags=p.fresh(8),
                                                          output=p.twice(4, 8), count=p.fresh(1)),
                 ("output", "input"), id="compaction-output-over-input-imported-twice"),
    pytest.param("GPUIndexedRangeCompaction", lambda p: GPUIndexedRangeCompaction(
        id="a", **ranges_args(p, ranges=p.at(0, 4), output=p.at(2, 6))),
        ("output and ranges overlap", "bytes 8..32 and 0..16"), id="range-output-over-ranges"),
    pytest.param("GPUIndexedRangeCompaction", lambda p: GPUIndexedRangeCompaction(
        id="a", **ranges_args(p, active_range_ids=p.at(0, 2), count=p.at(1, 1))),
        ("count and active_range_ids overlap", "bytes 4..8 and 0..8"), id="range-count-in-active-ids"),
    pytest.param("GPUIndexedRangeCompaction", lambda p: GPUIndexedRangeCompaction(
        id="a", **ranges_args(p, active_range_dispatch=p.at(0, 3), output=p.at(64, 6))),
        ("output and active_range_dispatch share buffer", "bytes 256..280 and 0..12"),
        id="range-output-next-to-dispatch-record"),
    pytest.param("GPUPartitionedIndexedRangeCompaction", lambda p: GPUPartitionedIndexedRangeCompaction(
        id="a", partition_range_ends=[1, 2], **ranges_args(p, flags=p.vec(p.fresh(3), p.fresh(3)),
                                                           output=p.vec(p.at(0, 3), p.at(1, 3)))),
        ("output chunk 0 and output chunk 1 overlap", "bytes 0..12 and 4..16"), id="partitioned-output-chunks"),
    pytest.param("GPUPartitionedIndexedRangeCompaction", lambda p: GPUPartitionedIndexedRangeCompaction(
        id="a", partition_range_ends=[1, 2], **ranges_args(p, flags=p.vec(p.fresh(3), p.fresh(3)),
                                                           output=p.vec(p.fresh(3), p.fresh(3)), count=p.at(1, 1)),
        partition_counts=p.at(0, 2)),
        ("count and partition_counts overlap", "bytes 4..8 and 0..8"), id="partitioned-two-outputs"),
    pytest.param("GPUReduction", lambda p: GPUReduction(id="a", input=p.at(0, 8), output=p.twice(16, 1)),
                 ("output", "input"), id="reduction-output-imported-twice"),
    pytest.param("GPUMask", lambda p: GPUMask(id="a", inputs=[p.vec(p.fresh(4), p.fresh(4))],
                                              output=p.vec(p.at(0, 4), p.at(3, 4))),
                 ("output chunk 0 and output chunk 1 overlap", "bytes 0..16 and 12..28"), id="mask-output-chunks"),
    pytest.param("GPUMask", lambda p: GPUMask(id="a", inputs=[p.at(0, 8)], output=p.twice(16, 8)),
                 ("output", "inputs[0]"), id="mask-output-imported-twice"),
    pytest.param("GPUSort", lambda p: GPUSort(id="a", keys=p.at(0, 8), output_keys=p.twice(0, 8)),
                 ("output_keys and keys", "bytes 0..32 and 0..32"), id="sort-keys-in-is-keys-out"),
    pytest.param("GPUSort", lambda p: GPUSort(id="a", keys=p.fresh(8), values=p.fresh(8), output_keys=p.at(0, 8),
                                              output_values=p.at(4, 8)),
                 ("output_keys and output_values overlap", "bytes 0..32 and 16..48"), id="sort-two-outputs"),
    pytest.param("GPUBatchSort", lambda p: GPUBatchSort(id="a", keys=p.vec(p.at(0, 4), p.at(4, 4)),
                                                        output_keys=p.twice_vector([0, 4], 4)),
                 ("output_keys chunk 0 and keys chunk 0", "bytes 0..16 and 0..16"),
                 id="batch-sort-keys-in-is-keys-out"),
    pytest.param("GPUBatchSort", lambda p: GPUBatchSort(id="a", keys=p.vec(p.fresh(4), p.fresh(4)),
                                                        output_keys=p.vec(p.at(0, 4), p.at(2, 4))),
                 ("output_keys chunk 0 and output_keys chunk 1 overlap", "bytes 0..16 and 8..24"),
                 id="batch-sort-output-chunks"),
    pytest.param("GPUSegmentedSort", lambda p: GPUSegmentedSort(id="a", keys=p.at(0, 8), output_keys=p.twice(0, 8),
                                                                offsets=[0, 4], lengths=[4, 4]),
                 ("output_keys and keys", "bytes 0..32 and 0..32"), id="segmented-sort-keys-in-is-keys-out"),
    pytest.param("GPUGroupAggregation", lambda p: group(p, codes=p.at(0, 8), overflow=p.at(16, 1)),
                 ("overflow and codes share buffer", "bytes 64..68 and 0..32"), id="group-overflow-in-codes-buffer"),
    pytest.param("GPUGroupAggregation", lambda p: group(p, operation="sum", values=p.at(0, 8, "float32"),
                                                        output=p.fresh(4, np.float32), overflow=p.at(4, 1)),
                 ("overflow and values share buffer", "bytes 16..20 and 0..32"), id="group-overflow-over-values"),
    pytest.param("GPUGroupAggregation", lambda p: group(p, codes=p.at(0, 8), output=p.twice(16, 4)),
                 ("output", "codes"), id="group-output-imported-twice"),
    pytest.param("GPUHistogram", lambda p: GPUHistogram(id="a", input=p.at(0, 8, "float32"), output=p.twice(16, 4),
                                                        domain=(0.0, 1.0)),
                 ("output", "input"), id="histogram-output-imported-twice"),
    pytest.param("GPUHistogram", lambda p: GPUHistogram(id="a", input=p.fresh(8, np.float32), output=p.at(16, 4),
                                                        domain=(0.0, 1.0), filter_values=p.at(0, 8, "float32")),
                 ("output and filter_values share buffer", "bytes 64..80 and 0..32"), id="histogram-output-by-filter"),
    pytest.param("GPUGridBinning", lambda p: GPUGridBinning(id="a", positions=p.at(0, 8, "float32x2"),
                                                            output=p.twice(32, 6), grid_size=(3, 2),
                                                            bounds=(0.0, 0.0, 1.0, 1.0)),
                 ("output", "positions"), id="grid-binning-output-imported-twice"),
    pytest.param("GPUGridAggregation", lambda p: GPUGridAggregation(
        id="a", positions=p.fresh((8, 2), np.float32), weights=p.fresh(8, np.float32), output=p.at(8, 6, "float32"),
        grid_size=(3, 2), bounds=p.at(0, 4, "float32"), operation="sum"),
        ("output and parameters share buffer", "bytes 32..56 and 0..16"), id="grid-output-by-gpu-bounds"),
]


@pytest.mark.parametrize("owner, build, fragments", REFUSED)
def test_aliased_views_are_refused_before_anything_is_added(device, owner, build, fragments):
    p = Pool(device)
    with pytest.raises(GraphValidationError) as info:
        build(p).add_to_graph(p.graph)
    message = str(info.value)
    assert message.startswith(f'{owner} "a" '), message
    for fragment in fragments:
        assert fragment in message, message
    assert p.graph.nodes == ()


def test_same_physical_buffer_through_two_handles_names_both(device):
    """Today's second import is a second handle: the graph would infer no
    hazard, and wgpu fails at encoder.finish() ("conflicting usages")."""
    p = Pool(device)
    keys = p.at(0, 8)
    again = p.twice(0, 8)
    with pytest.raises(GraphValidationError) as info:
        GPUSort(id="a", keys=keys, output_keys=again).add_to_graph(p.graph)
    if again.handle is not keys.handle:  # a graph that reuses the first handle refuses as "share buffer"
        assert f'imported twice (as "{again.handle.id}" and "pool"' in str(info.value)


# ------------------------------------------------------------------ accepted
def words(**placed):
    """A 256-word pool with ``values`` placed at word offsets: name=(start, values)."""
    out = np.zeros(256, np.uint32)
    for start, values in placed.values():
        out[start:start + len(values)] = np.asarray(values).view(np.uint32) if np.asarray(values).dtype == np.float32 \
            else values
    return out


def test_scan_with_every_chunk_in_one_buffer(device):
    x = np.arange(1, 9, dtype=np.uint32)
    p = Pool(device, {"pool": words(a=(0, x[:5]), b=(8, x[5:]))})
    GPUScan(id="a", input=p.vec(p.at(0, 5), p.at(8, 3)), output=p.vec(p.at(64, 5), p.at(72, 3))).add_to_graph(p.graph)
    run(p.graph)
    pool = p.read()
    np.testing.assert_array_equal(np.concatenate([pool[64:69], pool[72:75]]), scan_oracle(x))
    np.testing.assert_array_equal(pool[:11], words(a=(0, x[:5]), b=(8, x[5:]))[:11])  # the input is untouched


def test_compaction_with_input_output_and_count_in_one_buffer(device):
    x = np.arange(10, 18, dtype=np.uint32)
    flags = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.uint32)
    p = Pool(device, {"pool": words(x=(0, x)), "pool2": words(f=(8, flags))})
    # flags may not share output's buffer (GPUCompaction's own rule); input, output and count may
    GPUCompaction(id="a", input=p.at(0, 8), flags=p.at(8, 8, pool="pool2"), output=p.at(64, 8),
                  count=p.at(96, 1)).add_to_graph(p.graph)
    run(p.graph)
    pool = p.read()
    assert pool[96] == flags.sum()
    np.testing.assert_array_equal(pool[64:64 + flags.sum()], x[flags != 0])


def test_range_compaction_with_its_inputs_and_outputs_in_one_buffer(device):
    flags = np.array([1, 0, 1, 1, 0, 1], np.uint32)
    p = Pool(device, {"pool": words(f=(0, flags), r=(16, [0, 3, 3, 3]), a=(24, [0, 1])),
                      "pool2": words(d=(0, [1, 2, 1]))})
    GPUIndexedRangeCompaction(id="a", flags=p.at(0, 6), ranges=p.at(16, 4), range_count=2, range_layout=(2, 0, 1),
                              active_range_ids=p.at(24, 2), active_range_dispatch=p.at(0, 3, pool="pool2"),
                              maximum_range_length=3, output=p.at(64, 6), count=p.at(96, 1)).add_to_graph(p.graph)
    run(p.graph)
    pool = p.read()
    assert pool[96] == 4
    np.testing.assert_array_equal(pool[64:68], [0, 2, 3, 5])


def test_sort_with_keys_and_values_sharing_a_buffer_and_outputs_sharing_another(device):
    keys = np.array([5, 1, 4, 1, 3, 9, 2, 6], np.uint32)
    values = np.arange(8, dtype=np.uint32) + 100
    p = Pool(device, {"pool": words(k=(0, keys), v=(64, values))})
    GPUSort(id="a", keys=p.at(0, 8), values=p.at(64, 8), output_keys=p.at(0, 8, pool="pool2"),
            output_values=p.at(64, 8, pool="pool2")).add_to_graph(p.graph)
    run(p.graph)
    out = p.read("pool2")
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out[:8], keys[order])
    np.testing.assert_array_equal(out[64:72], values[order])


def test_batch_sort_and_mask_with_output_chunks_in_one_buffer(device):
    a, b = np.array([3, 1, 2], np.uint32), np.array([9, 7, 8, 0, 5], np.uint32)
    p = Pool(device, {"pool": words(a=(0, a), b=(8, b))})
    GPUBatchSort(id="a", keys=p.vec(p.at(0, 3), p.at(8, 5)),
                 output_keys=p.vec(p.at(0, 3, pool="pool2"), p.at(8, 5, pool="pool2"))).add_to_graph(p.graph)
    GPUMask(id="m", inputs=[p.vec(p.at(0, 3), p.at(8, 5))], output=p.vec(p.at(64, 3, pool="pool2"),
                                                                         p.at(72, 5, pool="pool2")),
            operation="not").add_to_graph(p.graph)
    run(p.graph)
    out = p.read("pool2")
    np.testing.assert_array_equal(out[:3], np.sort(a))
    np.testing.assert_array_equal(out[8:13], np.sort(b))
    np.testing.assert_array_equal(np.concatenate([out[64:67], out[72:77]]), (np.concatenate([a, b]) == 0))


def test_group_aggregation_with_inputs_in_one_buffer_and_outputs_in_another(device):
    codes = np.array([0, 1, 1, 2, 5, 0, 1, 2], np.uint32)
    values = np.arange(8, dtype=np.float32)
    p = Pool(device, {"pool": words(c=(0, codes), v=(16, values))})
    overflow_data = GPUData.from_numpy(device, np.zeros(1, np.uint32), USAGE)
    overflow = p.graph.import_gpu_data("overflow", overflow_data)
    GPUGroupAggregation(id="a", codes=p.at(0, 8), values=p.at(16, 8, "float32"), operation="sum",
                        output=p.at(0, 3, "float32", pool="pool2"), overflow=overflow).add_to_graph(p.graph)
    run(p.graph)
    out = p.read("pool2")
    np.testing.assert_allclose(out[:3].view(np.float32), [values[codes == k].sum() for k in range(3)])
    assert read_array(device, overflow_data)[0] == 1  # code 5 is past the 3 groups
