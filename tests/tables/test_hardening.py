"""GPUData, GPUVector and read_array refuse, at the call, what wgpu would
abort or fail on, or what would silently change the data (issue 10, items 1,
2, 6 and 10, tables parts). Aborts run in a subprocess."""

import numpy as np
import pytest
import wgpu

from gpuviz import (GPUData, GPUVector, GraphStateError, GraphTypeError, GraphValidationError, UsageError,
                    read_array)

from ..graph.test_imports_hardening import assert_refused, run_isolated

BU = wgpu.BufferUsage


def test_read_array_refuses_a_gpu_data_whose_buffer_another_destroyed():
    result = run_isolated("""
        owner = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32), label="shared")
        borrower = GPUData(owner.buffer, format="uint32", length=4)
        owner.destroy()
        try:
            gpuviz.read_array(device, borrower)
        except GraphError as error:
            print("REFUSED", type(error).__name__, error)
    """)
    assert_refused(result, "GraphStateError", 'GPUData "shared": it or its buffer was destroyed')


def test_read_array_refuses_a_buffer_destroyed_directly(device):
    data = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32), label="direct")
    data.buffer.destroy()
    assert data.destroyed
    with pytest.raises(GraphStateError, match='"direct": it or its buffer was destroyed'):
        read_array(device, GPUVector([data]))


@pytest.mark.parametrize("call", ["allocate", "from_numpy"])
def test_undefined_usage_bits_are_refused_instead_of_aborting(call):
    make = ('GPUData.allocate(device, format="uint32", length=4, usage=wgpu.BufferUsage.STORAGE | (1 << 20))'
            if call == "allocate" else
            "GPUData.from_numpy(device, np.zeros(4, np.uint32), wgpu.BufferUsage.STORAGE | (1 << 20))")
    result = run_isolated(f"""
        try:
            {make}
        except GraphError as error:
            print("REFUSED", type(error).__name__, error)
    """)
    assert_refused(result, "UsageError", "has bits 0x100000 that wgpu.BufferUsage does not define")


def test_mappable_usage_pairs_are_checked(device):
    with pytest.raises(UsageError, match="MAP_READ only with COPY_DST"):
        GPUData.allocate(device, format="uint32", length=4, usage=BU.MAP_READ | BU.STORAGE)
    data = GPUData.allocate(device, format="uint32", length=4, usage=BU.MAP_READ | BU.COPY_DST)
    assert data.buffer.usage == BU.MAP_READ | BU.COPY_DST


def test_over_limit_sizes_are_refused_naming_the_limit(device):
    limit = device.limits["max-buffer-size"]
    with pytest.raises(GraphValidationError, match=f'GPUData "big" needs {4 * (limit // 4 + 1)} bytes, over the '
                                                   f"device limit max-buffer-size {limit}"):
        GPUData.allocate(device, format="uint32", length=limit // 4 + 1, label="big")


def test_masked_arrays_are_refused_not_unmasked(device):
    masked = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[0, 1, 0, 1])
    with pytest.raises(GraphValidationError, match="cannot upload a masked array \\(shape \\(4,\\), 2 masked\\): "
                                                   "the mask would be lost; pass array.filled"):
        GPUData.from_numpy(device, masked)
    assert read_array(device, GPUData.from_numpy(device, masked.filled(0))).tolist() == [0, 0, 2, 0]


def test_none_and_coerced_arguments(device):
    buffer = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC)
    with pytest.raises(GraphTypeError, match="GPUData needs a wgpu.GPUBuffer \\(got NoneType\\)"):
        GPUData(None, format="uint32", length=1)
    with pytest.raises(GraphTypeError, match='GPUData "" length must be an integer \\(got bool True\\)'):
        GPUData(buffer, format="uint32", length=True)
    with pytest.raises(GraphTypeError, match='GPUData "n" length must be an integer \\(got bool True\\)'):
        GPUData.allocate(device, format="uint32", length=True, label="n")
    with pytest.raises(GraphTypeError, match="GPUData.from_numpy needs a wgpu.GPUDevice \\(got NoneType\\)"):
        GPUData.from_numpy(None, np.zeros(2, np.uint32))
    with pytest.raises(GraphTypeError, match="GPUData.allocate needs a wgpu.GPUDevice"):
        GPUData.allocate(None, format="uint32", length=2)
    with pytest.raises(GraphTypeError, match="read_array needs a wgpu.GPUDevice \\(got NoneType\\)"):
        read_array(None, GPUData(buffer, format="uint32", length=1))
    with pytest.raises(GraphTypeError, match="GPUVector needs an iterable of GPUData chunks \\(got NoneType\\)"):
        GPUVector(None)
    data = GPUData(buffer, format="uint32", length=np.int64(4), byte_offset=np.uint8(0))
    assert (data.length, type(data.length)) == (4, int)
    assert GPUData.allocate(device, format="uint32", length=np.int32(3)).length == 3
