"""read_array: offsets, strides, alignment, vectors and errors, against a numpy oracle."""

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuviz
from gpuviz import GPUData, GPUVector, read_array
from gpuviz.formats import vector_format
from gpuviz.oracles.tables import read_rows

RAW = (np.arange(256) * 37 % 251).astype(np.uint8)  # distinct-ish bytes, no NaN patterns in float16/32 rows


@pytest.fixture(scope="module")
def raw_data(device):
    return GPUData.from_numpy(device, RAW, label="raw-bytes")


def oracle(fmt, *, length, byte_offset, byte_stride):
    """Rows read on the CPU from RAW."""
    return read_rows(RAW, fmt, length=length, byte_offset=byte_offset, byte_stride=byte_stride)


@pytest.mark.parametrize(
    "fmt,length,byte_offset,byte_stride",
    [
        ("uint8", 5, 1, None),
        ("uint8", 3, 3, 5),
        ("uint16", 7, 2, None),
        ("uint16", 4, 6, 6),
        ("uint8x2", 3, 1, 3),
        ("uint32", 5, 4, 12),
        ("sint32x3", 4, 8, 16),
        ("float32x3", 4, 4, 20),
        ("float16x4", 3, 2, 10),
        ("unorm8x4", 6, 5, 7),
        ("snorm16x2", 3, 2, 6),
        ("uint32", 1, 252, None),
    ],
)
def test_offset_and_strided_views(device, raw_data, fmt, length, byte_offset, byte_stride):
    view = GPUData(raw_data.buffer, format=fmt, length=length, byte_offset=byte_offset, byte_stride=byte_stride)
    back = read_array(device, view)
    expected = oracle(fmt, length=length, byte_offset=byte_offset, byte_stride=view.byte_stride)
    assert back.dtype == expected.dtype and back.shape == expected.shape
    np.testing.assert_array_equal(back.view(np.uint8), expected.view(np.uint8))


def test_normalized_formats_return_raw_integers(device, raw_data):
    back = read_array(device, GPUData(raw_data.buffer, format="unorm8x4", length=2))
    assert back.dtype == np.uint8
    np.testing.assert_array_equal(back, RAW[:8].reshape(2, 4))


FORMATS = ["uint8", "uint16x2", "sint16", "float32x3", "unorm8x4", "uint32x4"]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_any_view_inside_the_buffer_reads_back(device, raw_data, data):
    fmt = vector_format(data.draw(st.sampled_from(FORMATS)))
    stride = data.draw(st.integers(fmt.byte_size, fmt.byte_size + 9))
    offset = data.draw(st.integers(0, 64))
    most = (256 - offset - fmt.byte_size) // stride + 1
    length = data.draw(st.integers(0, max(0, most)))
    view = GPUData(raw_data.buffer, format=fmt, length=length, byte_offset=offset, byte_stride=stride)
    back = read_array(device, view)
    expected = oracle(fmt, length=length, byte_offset=offset, byte_stride=stride)
    np.testing.assert_array_equal(back.view(np.uint8), expected.view(np.uint8))


def test_vector_chunks_concatenate_in_order(device, raw_data):
    chunks = [
        GPUData(raw_data.buffer, format="uint16", length=3, byte_offset=10),
        GPUData(raw_data.buffer, format="uint16", length=0, byte_offset=0),
        GPUData.from_numpy(device, np.array([7, 8], np.uint16)),
        GPUData(raw_data.buffer, format="uint16", length=2, byte_offset=1, byte_stride=5),
    ]
    back = read_array(device, GPUVector(chunks))
    expected = np.concatenate(
        [oracle("uint16", length=3, byte_offset=10, byte_stride=2), [7, 8],
         oracle("uint16", length=2, byte_offset=1, byte_stride=5)]
    )
    np.testing.assert_array_equal(back, expected)
    assert back.dtype == np.uint16


def test_empty_vectors(device):
    assert read_array(device, GPUVector([], format="float32x2")).shape == (0, 2)
    zero = GPUVector.from_numpy(device, [np.zeros(0, np.int16), np.zeros(0, np.int16)])
    back = read_array(device, zero)
    assert back.shape == (0,) and back.dtype == np.int16


def test_buffer_without_copy_src_is_a_usage_error(device):
    buffer = device.create_buffer(label="vertex-only", size=16, usage=wgpu.BufferUsage.VERTEX)
    with pytest.raises(gpuviz.UsageError, match='GPUData "vertex-only".*COPY_SRC'):
        read_array(device, GPUData(buffer, format="uint32", length=4))
    assert read_array(device, GPUData(buffer, format="uint32", length=0)).shape == (0,)


def test_other_device_is_a_mismatch(device, raw_data):
    other = gpuviz.request_device(shared=False)
    with pytest.raises(gpuviz.DeviceMismatchError, match='GPUData "raw-bytes"'):
        read_array(other, raw_data)


def test_partial_last_word_of_odd_sized_buffer(device):
    buffer = device.create_buffer(label="odd", size=6, usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    device.queue.write_buffer(buffer, 0, np.arange(4, dtype=np.uint8))  # writes come in 4-byte words
    np.testing.assert_array_equal(read_array(device, GPUData(buffer, format="uint8", length=4)), np.arange(4))
    with pytest.raises(gpuviz.ViewRangeError, match=r"rows end at byte 6, buffer has 6 bytes"):
        read_array(device, GPUData(buffer, format="uint8", length=6))


def test_read_array_rejects_other_objects(device):
    with pytest.raises(gpuviz.GraphTypeError, match=r"read_array expects GPUData or GPUVector \(got ndarray\)") as info:
        read_array(device, np.zeros(3))
    assert isinstance(info.value, TypeError)
