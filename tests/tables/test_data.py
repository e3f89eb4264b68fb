"""GPUData: format inference, uploads, ranges and ownership."""

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz import GPUData, read_array
from gpuviz.formats import GPUVectorFormat

SUPPORTED = [
    ("uint8", "uint8", (1, 2, 4)),
    ("uint16", "uint16", (1, 2, 4)),
    ("uint32", "uint32", (1, 2, 3, 4)),
    ("int8", "sint8", (1, 2, 4)),
    ("int16", "sint16", (1, 2, 4)),
    ("int32", "sint32", (1, 2, 3, 4)),
    ("float16", "float16", (1, 2, 4)),
    ("float32", "float32", (1, 2, 3, 4)),
]
CASES = [(dtype, base, n) for dtype, base, counts in SUPPORTED for n in counts]


@pytest.mark.parametrize("dtype,base,components", CASES, ids=[f"{d}x{n}" for d, _, n in CASES])
def test_from_numpy_infers_format_and_round_trips(device, dtype, base, components):
    rows = 7
    values = (np.arange(rows * components) % 100).astype(dtype)
    array = values if components == 1 else values.reshape(rows, components)
    data = GPUData.from_numpy(device, array)
    expected_name = base if components == 1 else f"{base}x{components}"
    assert data.format.name == expected_name
    assert data.format == GPUVectorFormat.from_numpy(dtype, components=components)
    assert (data.length, data.byte_offset, data.owned) == (rows, 0, True)
    assert data.byte_stride == data.row_byte_length == np.dtype(dtype).itemsize * components
    assert data.byte_length == rows * data.row_byte_length
    assert data.buffer.size % 4 == 0 and data.buffer.size >= data.byte_length
    assert data.device is device
    back = read_array(device, data)
    assert back.dtype == np.dtype(dtype) and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    data.destroy()


def test_column_vector_shape_counts_as_one_component(device):
    data = GPUData.from_numpy(device, np.arange(5, dtype=np.uint32).reshape(5, 1))
    assert data.format.name == "uint32"
    np.testing.assert_array_equal(read_array(device, data), np.arange(5, dtype=np.uint32))


def test_from_numpy_accepts_non_native_byte_order_and_non_contiguous(device):
    big = np.arange(6, dtype=">u4")
    np.testing.assert_array_equal(read_array(device, GPUData.from_numpy(device, big)), np.arange(6))
    strided = np.arange(24, dtype=np.float32).reshape(6, 4)[::2, :2]
    data = GPUData.from_numpy(device, strided)
    assert data.format.name == "float32x2"
    np.testing.assert_array_equal(read_array(device, data), strided)


@pytest.mark.parametrize(
    "array,fragment",
    [
        (np.zeros(4, np.float64), "float64"),
        (np.zeros(4, np.int64), "int64"),
        (np.zeros(4, np.uint64), "uint64"),
        (np.zeros(4, bool), "bool"),
        (np.zeros((4, 3), np.uint8), "(4, 3)"),
        (np.zeros((4, 3), np.float16), "(4, 3)"),
        (np.zeros((4, 5), np.float32), "(4, 5)"),
        (np.zeros((2, 2, 2), np.float32), "(2, 2, 2)"),
        (np.zeros((), np.float32), "()"),
        (np.array(["a", "b"]), "<U1"),
    ],
)
def test_from_numpy_rejects_unsupported_dtype_or_shape(device, array, fragment):
    with pytest.raises(gpuviz.GraphValidationError) as info:
        GPUData.from_numpy(device, array)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert message.startswith("GPUData.from_numpy")
    assert fragment in message and str(array.shape) in message


def test_64_bit_error_suggests_a_cast(device):
    with pytest.raises(gpuviz.GraphValidationError, match="cast") as info:
        GPUData.from_numpy(device, np.zeros(3, np.float64))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("shape,fmt", [((0,), "float32"), ((0, 2), "float32x2"), ((0, 4), "float32x4")])
def test_zero_length_data(device, shape, fmt):
    data = GPUData.from_numpy(device, np.zeros(shape, np.float32))
    assert data.format.name == fmt
    assert (data.length, data.byte_length) == (0, 0)
    assert data.buffer.size == 4  # never a zero-byte buffer
    back = read_array(device, data)
    assert back.shape == shape and back.dtype == np.float32


def test_zero_length_view_at_end_of_buffer(device):
    base = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32))
    empty = GPUData(base.buffer, format="uint32", length=0, byte_offset=base.buffer.size)
    assert empty.byte_length == 0
    assert read_array(device, empty).shape == (0,)


@pytest.mark.parametrize("count,dtype,size", [(1, np.uint8, 4), (3, np.uint8, 4), (5, np.uint8, 8), (5, np.uint16, 12)])
def test_buffer_size_rounds_up_to_four_bytes(device, count, dtype, size):
    data = GPUData.from_numpy(device, np.arange(count, dtype=dtype))
    assert data.buffer.size == size
    np.testing.assert_array_equal(read_array(device, data), np.arange(count, dtype=dtype))


def test_usage_default_and_copy_dst_always_added(device):
    default = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32))
    want = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.VERTEX | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    assert default.buffer.usage == want
    custom = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32), wgpu.BufferUsage.COPY_SRC)
    assert custom.buffer.usage == wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    np.testing.assert_array_equal(read_array(device, custom), np.arange(4))


def test_allocate_is_zero_filled_and_owned(device):
    data = GPUData.allocate(device, format="uint16x2", length=5)
    assert (data.format.name, data.length, data.owned, data.buffer.size) == ("uint16x2", 5, True, 20)
    np.testing.assert_array_equal(read_array(device, data), np.zeros((5, 2), np.uint16))
    empty = GPUData.allocate(device, format="float32", length=0)
    assert empty.buffer.size == 4 and read_array(device, empty).shape == (0,)
    with pytest.raises(gpuviz.ViewRangeError, match=r"-1 rows"):
        GPUData.allocate(device, format="float32", length=-1)


def test_constructor_fields_and_byte_length(device):
    buffer = device.create_buffer(label="pos", size=64, usage=wgpu.BufferUsage.COPY_SRC)
    data = GPUData(buffer, format="float32x2", length=3, byte_offset=8, byte_stride=12)
    assert isinstance(data.format, GPUVectorFormat) and data.format.name == "float32x2"
    assert data.row_byte_length == 8
    assert data.byte_length == 2 * 12 + 8
    assert not data.owned and not data.is_packed
    assert data.device is device and data.label == "pos"
    assert GPUData(buffer, format="uint8", length=0).byte_length == 0
    # Exactly fitting range: last row ends at the buffer's end, no stride padding after it.
    assert GPUData(buffer, format="uint32", length=4, byte_offset=4, byte_stride=16).byte_length == 52
    assert GPUData(buffer, format="uint32", length=4, byte_offset=12, byte_stride=16).byte_length == 52


def test_range_errors_name_the_numbers(device):
    buffer = device.create_buffer(label="ids", size=64, usage=wgpu.BufferUsage.COPY_SRC)
    with pytest.raises(gpuviz.ViewRangeError, match=r'GPUData "ids" has a negative length \(-1 rows\)'):
        GPUData(buffer, format="uint32", length=-1)
    with pytest.raises(gpuviz.ViewRangeError, match=r"negative byte_offset \(-4 bytes\)"):
        GPUData(buffer, format="uint32", length=1, byte_offset=-4)
    with pytest.raises(gpuviz.ViewRangeError, match=r"needs at least 8 bytes, got 4"):
        GPUData(buffer, format="float32x2", length=2, byte_stride=4)
    with pytest.raises(gpuviz.ViewRangeError, match=r"needs bytes 4\.\.68, buffer has 64 bytes") as info:
        GPUData(buffer, format="uint32", length=16, byte_offset=4)
    assert isinstance(info.value, gpuviz.GraphValidationError) and isinstance(info.value, ValueError)
    with pytest.raises(gpuviz.ViewRangeError, match=r"buffer has 64 bytes"):
        GPUData(buffer, format="uint32", length=5, byte_stride=16)  # 4*16 + 4 = 68
    with pytest.raises(gpuviz.ViewRangeError):
        GPUData(buffer, format="uint8", length=0, byte_offset=65)


def test_unknown_format_name_is_rejected(device):
    buffer = device.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
    with pytest.raises(gpuviz.GraphValidationError, match='GPUVectorFormat "float64" is unknown') as info:
        GPUData(buffer, format="float64", length=1)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("field", ["length", "byte_offset", "byte_stride"])
def test_non_integer_ranges_are_type_errors(device, field):
    buffer = device.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
    kwargs = {"length": 1, "byte_offset": 0, "byte_stride": None, field: 1.5}
    with pytest.raises(gpuviz.GraphTypeError, match=f'GPUData "" {field} must be an integer \\(got float 1.5\\)'):
        GPUData(buffer, format="uint32", **kwargs)
    with pytest.raises(TypeError, match='GPUData "n" length must be an integer'):
        GPUData.allocate(device, format="uint32", length="4", label="n")


def test_destroy_owned_is_idempotent(device):
    data = GPUData.from_numpy(device, np.arange(4, dtype=np.uint32))
    data.destroy()
    data.destroy()
    assert data.destroyed
    with pytest.raises(gpuviz.GraphStateError, match="destroyed"):
        read_array(device, data)


def test_destroy_borrowed_leaves_the_buffer_alive(device):
    owner = GPUData.from_numpy(device, np.arange(8, dtype=np.uint32))
    view = GPUData(owner.buffer, format="uint32", length=4, byte_offset=8)
    view.destroy()
    view.destroy()
    np.testing.assert_array_equal(read_array(device, owner), np.arange(8))
    owner.destroy()
