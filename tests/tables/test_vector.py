"""GPUVector: ordered chunks of one format."""

import numpy as np
import pytest

import gpuviz
from gpuviz import GPUData, GPUVector, read_array


def test_uneven_and_empty_chunks_are_kept(device):
    arrays = [np.arange(5, dtype=np.float32), np.zeros(0, np.float32), np.arange(1, dtype=np.float32) + 9,
              np.zeros(0, np.float32), np.arange(3, dtype=np.float32) + 20]
    vector = GPUVector.from_numpy(device, arrays)
    assert isinstance(vector.chunks, tuple) and len(vector.chunks) == 5
    assert [c.length for c in vector.chunks] == [5, 0, 1, 0, 3]
    assert vector.length == 9
    assert vector.format.name == "float32"
    assert vector.chunk_offsets == (0, 5, 5, 6, 6, 9)
    assert vector.device is device
    np.testing.assert_array_equal(read_array(device, vector), np.concatenate(arrays))


def test_chunks_may_share_a_buffer(device):
    base = GPUData.from_numpy(device, np.arange(12, dtype=np.uint32).reshape(6, 2))
    halves = [GPUData(base.buffer, format="uint32x2", length=3, byte_offset=24),
              GPUData(base.buffer, format="uint32x2", length=3)]
    np.testing.assert_array_equal(read_array(device, GPUVector(halves)),
                                  np.r_[np.arange(6, 12), np.arange(6)].reshape(6, 2))


def test_mismatched_formats_are_rejected(device):
    a = GPUData.from_numpy(device, np.zeros(2, np.float32), label="a")
    b = GPUData.from_numpy(device, np.zeros((2, 2), np.float32), label="b")
    with pytest.raises(gpuviz.GraphValidationError, match=r'chunk 1 "b" has format float32x2, expected float32'):
        GPUVector([a, b])
    with pytest.raises(gpuviz.GraphValidationError, match="expected uint32"):
        GPUVector([a], format="uint32")


def test_no_chunks_needs_a_format(device):
    with pytest.raises(gpuviz.GraphValidationError, match="no chunks and no format"):
        GPUVector([])
    empty = GPUVector([], format="uint8x4")
    assert (empty.length, empty.chunks, empty.format.name, empty.device) == (0, (), "uint8x4", None)


def test_non_data_chunks_are_rejected():
    with pytest.raises(gpuviz.GraphValidationError, match="chunk 0 is a ndarray"):
        GPUVector([np.zeros(3)])


def test_chunks_on_two_devices_are_rejected(device):
    other = gpuviz.request_device(shared=False)
    a = GPUData.from_numpy(device, np.zeros(2, np.float32))
    b = GPUData.from_numpy(other, np.zeros(2, np.float32), label="elsewhere")
    with pytest.raises(gpuviz.DeviceMismatchError, match='chunk 1 "elsewhere"'):
        GPUVector([a, b])


def test_metadata_is_carried_read_only(device):
    vector = GPUVector.from_numpy(device, [np.zeros(1, np.int8)], metadata={"source": "test"})
    assert vector.metadata["source"] == "test"
    with pytest.raises(TypeError):
        vector.metadata["source"] = "other"


def test_destroy_frees_owned_chunks_only(device):
    owner = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32))
    borrowed = GPUData(owner.buffer, format="uint32", length=2)
    own = GPUData.from_numpy(device, np.arange(2, dtype=np.uint32))
    vector = GPUVector([borrowed, own])
    vector.destroy()
    vector.destroy()
    assert own.destroyed and borrowed.destroyed and not owner.destroyed
    np.testing.assert_array_equal(read_array(device, owner), np.arange(4))
