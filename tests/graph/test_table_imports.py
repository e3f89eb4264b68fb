"""import_gpu_data / import_gpu_vector keep table metadata and chunk topology."""

import numpy as np
import wgpu

from gpuviz import GPUCommandGraph, GPUData, GPUVector, read_array

from .helpers import affine_node, run

BU = wgpu.BufferUsage


def test_import_gpu_data_keeps_range_and_borrows(device):
    data = GPUData.from_numpy(device, np.arange(10, dtype=np.float32).reshape(5, 2))
    graph = GPUCommandGraph(device, id="data")
    view = graph.import_gpu_data("points", data)
    assert view.format.name == "float32x2" and view.length == 5 and view.byte_stride == 8
    assert view.handle.lifetime == "imported" and view.handle.byte_length == data.buffer.size
    graph.add_compute_node(id="n", resources=[(view, "storage-read")], compile=lambda ctx: lambda p, f: None)
    graph.compile().destroy()
    np.testing.assert_array_equal(read_array(device, data), np.arange(10, dtype=np.float32).reshape(5, 2))


def test_vector_chunks_keep_order_empty_chunks_and_shared_buffers(device):
    shared = device.create_buffer(size=64, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
    chunks = [GPUData(shared, format="uint32", length=4),
              GPUData(shared, format="uint32", length=0, byte_offset=16),
              GPUData(shared, format="uint32", length=3, byte_offset=32),
              GPUData.from_numpy(device, np.arange(5, dtype=np.uint32))]
    graph = GPUCommandGraph(device, id="vector")
    vv = graph.import_gpu_vector("column", GPUVector(chunks))
    assert vv.chunk_lengths == (4, 0, 3, 5) and vv.length == 12
    assert vv.views[0].handle is vv.views[2].handle  # one hazard chain per physical buffer
    assert vv.views[3].handle is not vv.views[0].handle
    assert [v.byte_offset for v in vv.views] == [0, 16, 32, 0]


def test_vector_chunks_run_through_a_kernel(device):
    arrays = [np.arange(n, dtype=np.uint32) + 100 * i for i, n in enumerate((70, 0, 5))]
    source = GPUVector([GPUData.from_numpy(device, a) for a in arrays])
    target = GPUVector([GPUData.allocate(device, format="uint32", length=len(a)) for a in arrays])
    graph = GPUCommandGraph(device, id="per-chunk")
    src, dst = graph.import_gpu_vector("src", source), graph.import_gpu_vector("dst", target)
    for i, (a, b) in enumerate(zip(src.views, dst.views)):
        affine_node(graph, f"chunk-{i}", a, b, factor=2)
    run(device, graph.compile())
    np.testing.assert_array_equal(read_array(device, target), np.concatenate(arrays) * 2)


def test_empty_vector_is_valid(device):
    graph = GPUCommandGraph(device, id="empty")
    vv = graph.import_gpu_vector("nothing", GPUVector([], format="float32"))
    assert vv.views == () and vv.length == 0 and vv.format.name == "float32"
