"""gpuviz.arrow: Arrow -> GPU tables -> Arrow round trips and the refusals."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuviz
from gpuviz import GPUData, GPUTable, GPUVector, read_array
from gpuviz.arrow import gpu_to_arrow, table_to_gpu

PRIMITIVES = [
    (pa.uint8(), "uint8"), (pa.uint16(), "uint16"), (pa.uint32(), "uint32"),
    (pa.int8(), "sint8"), (pa.int16(), "sint16"), (pa.int32(), "sint32"),
    (pa.float16(), "float16"), (pa.float32(), "float32"),
]


def values_for(dtype, n, start=0):
    """n distinct-ish small values for an Arrow type, as an Arrow array."""
    if pa.types.is_boolean(dtype):
        return pa.array((np.arange(start, start + n) % 3) == 0)
    if pa.types.is_fixed_size_list(dtype):
        flat = values_for(dtype.value_type, n * dtype.list_size, start)
        return pa.FixedSizeListArray.from_arrays(flat, type=dtype)
    numbers = (np.arange(start, start + n) % 113) - (50 if pa.types.is_signed_integer(dtype) else 0)
    return pa.array(numbers.astype(dtype.to_pandas_dtype()), type=dtype)


def chunk_lengths(obj):
    return [len(chunk) for chunk in obj.chunks]


def test_import_gpuviz_does_not_import_pyarrow():
    subprocess.run(
        [sys.executable, "-c", "import gpuviz, sys; assert 'pyarrow' not in sys.modules, 'pyarrow imported'"],
        check=True, cwd=Path(__file__).resolve().parents[1], env={"XDG_RUNTIME_DIR": "/tmp", "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize("dtype,fmt", PRIMITIVES + [(pa.bool_(), "uint32")], ids=lambda v: str(v))
def test_array_round_trip(device, dtype, fmt):
    array = values_for(dtype, 11)
    vector = table_to_gpu(device, array)
    assert isinstance(vector, GPUVector) and len(vector.chunks) == 1
    assert vector.format.name == fmt and vector.length == 11
    back = gpu_to_arrow(device, vector)
    assert isinstance(back, pa.Array) and back.type == dtype
    assert back.equals(array)
    vector.destroy()


def test_bool_is_stored_as_uint32_zero_one(device):
    vector = table_to_gpu(device, pa.array([True, False, True, True]))
    np.testing.assert_array_equal(read_array(device, vector), np.array([1, 0, 1, 1], np.uint32))


@pytest.mark.parametrize(
    "dtype,fmt",
    [(pa.list_(pa.float32(), 2), "float32x2"), (pa.list_(pa.float32(), 3), "float32x3"),
     (pa.list_(pa.uint8(), 4), "uint8x4"), (pa.list_(pa.int32(), 3), "sint32x3"),
     (pa.list_(pa.float16(), 4), "float16x4"), (pa.list_(pa.field("xy", pa.uint16()), 2), "uint16x2")],
    ids=str,
)
def test_fixed_size_list_round_trip(device, dtype, fmt):
    array = values_for(dtype, 6)
    vector = table_to_gpu(device, array)
    assert vector.format.name == fmt
    host = read_array(device, vector)
    assert host.shape == (6, dtype.list_size)
    np.testing.assert_array_equal(host.reshape(-1), array.flatten().to_numpy())
    back = gpu_to_arrow(device, vector)
    assert back.type == dtype and back.equals(array)


def test_chunked_array_keeps_empty_chunks(device):
    chunked = pa.chunked_array([values_for(pa.int16(), 3), values_for(pa.int16(), 0),
                                values_for(pa.int16(), 2, 7), values_for(pa.int16(), 0)], type=pa.int16())
    vector = table_to_gpu(device, chunked)
    assert [c.length for c in vector.chunks] == [3, 0, 2, 0]
    back = gpu_to_arrow(device, vector)
    assert isinstance(back, pa.ChunkedArray) and chunk_lengths(back) == [3, 0, 2, 0]
    assert back.equals(chunked)


def test_chunked_array_without_chunks(device):
    vector = table_to_gpu(device, pa.chunked_array([], type=pa.list_(pa.float32(), 2)))
    assert vector.chunks == () and vector.format.name == "float32x2"
    back = gpu_to_arrow(device, vector)
    assert back.num_chunks == 0 and back.type == pa.list_(pa.float32(), 2)


def test_record_batch_round_trip(device):
    batch = pa.record_batch(
        {"id": values_for(pa.uint32(), 9), "pos": values_for(pa.list_(pa.float32(), 2), 9),
         "flag": values_for(pa.bool_(), 9)},
        metadata={"origin": "test"},
    )
    table = table_to_gpu(device, batch)
    assert isinstance(table, GPUTable) and len(table.batches) == 1
    assert table.column_names == ("id", "pos", "flag") and table.num_rows == 9
    assert [table.schema[n].name for n in table.column_names] == ["uint32", "float32x2", "uint32"]
    back = gpu_to_arrow(device, table)
    assert isinstance(back, pa.RecordBatch)
    assert back.schema.equals(batch.schema, check_metadata=True) and back.equals(batch)
    single = gpu_to_arrow(device, table.batches[0])
    assert isinstance(single, pa.RecordBatch) and single.equals(batch)


def test_multi_batch_table_keeps_batch_boundaries(device):
    schema = pa.schema([("t", pa.float32()), ("rgba", pa.list_(pa.uint8(), 4))])
    sizes = [4, 0, 3, 0]
    batches = [pa.record_batch([values_for(f.type, n, 5 * i) for f in schema], schema=schema)
               for i, n in enumerate(sizes)]
    arrow_table = pa.Table.from_batches(batches)
    table = table_to_gpu(device, arrow_table)
    assert [b.num_rows for b in table.batches] == sizes
    column = table.column("rgba")
    assert [c.length for c in column.chunks] == sizes
    np.testing.assert_array_equal(read_array(device, column).reshape(-1),
                                  arrow_table.column("rgba").combine_chunks().flatten().to_numpy())
    back = gpu_to_arrow(device, table)
    assert isinstance(back, pa.Table) and back.schema.equals(arrow_table.schema)
    assert back.equals(arrow_table)
    assert [chunk_lengths(back.column(name)) for name in back.column_names] == [sizes, sizes]
    assert gpu_to_arrow(device, column).equals(arrow_table.column("rgba"))


def test_table_with_misaligned_column_chunks_splits_at_common_boundaries(device):
    arrow_table = pa.table({
        "a": pa.chunked_array([[1, 2], [3]], type=pa.int32()),
        "b": pa.chunked_array([[10], [20, 30]], type=pa.uint16()),
    })
    table = table_to_gpu(device, arrow_table)
    assert [b.num_rows for b in table.batches] == [1, 1, 1]
    assert gpu_to_arrow(device, table).equals(arrow_table)


def test_empty_table(device):
    arrow_table = pa.table({"a": pa.array([], pa.float32())})
    back = gpu_to_arrow(device, table_to_gpu(device, arrow_table))
    assert back.equals(arrow_table) and back.num_rows == 0


def test_sliced_arrays_upload_only_their_rows(device):
    base = values_for(pa.int32(), 20)
    for sliced in (base.slice(3, 9), base.slice(19), base.slice(5, 0)):
        assert gpu_to_arrow(device, table_to_gpu(device, sliced)).equals(sliced)
    bytes_ = values_for(pa.uint8(), 11).slice(1, 7)
    np.testing.assert_array_equal(read_array(device, table_to_gpu(device, bytes_)), bytes_.to_numpy())
    flags = values_for(pa.bool_(), 30).slice(5, 13)  # bit offset inside a byte
    assert gpu_to_arrow(device, table_to_gpu(device, flags)).equals(flags)
    lists = values_for(pa.list_(pa.float32(), 3), 8).slice(2, 4)
    assert lists.offset == 2
    vector = table_to_gpu(device, lists)
    np.testing.assert_array_equal(read_array(device, vector), lists.flatten().to_numpy().reshape(4, 3))
    assert gpu_to_arrow(device, vector).equals(lists)
    batch = pa.record_batch({"a": values_for(pa.float32(), 10)}).slice(4, 3)
    assert gpu_to_arrow(device, table_to_gpu(device, batch)).equals(batch)


def test_hand_made_objects_get_types_from_their_formats(device):
    data = GPUData.from_numpy(device, np.arange(6, dtype=np.uint16).reshape(3, 2))
    array = gpu_to_arrow(device, data)
    assert array.type == pa.list_(pa.uint16(), 2)
    assert array.flatten().to_pylist() == list(range(6))
    chunked = gpu_to_arrow(device, GPUVector([data, data]))
    assert isinstance(chunked, pa.ChunkedArray) and chunk_lengths(chunked) == [3, 3]
    raw = GPUData(data.buffer, format="unorm16x2", length=3)
    assert gpu_to_arrow(device, raw).type == pa.list_(pa.uint16(), 2)
    table = GPUTable(batches=[gpuviz.GPURecordBatch(columns={"h": data})])
    assert gpu_to_arrow(device, table).schema == pa.schema([("h", pa.list_(pa.uint16(), 2))])


REFUSED = [
    (pa.array(["a", "b"]), "string", "until their adapters exist"),
    (pa.array(["a"], pa.large_string()), "large_string", "until their adapters exist"),
    (pa.array([b"x"]), "binary", "until their adapters exist"),
    (pa.array([[1, 2], [3]], pa.list_(pa.int32())), "list<item: int32>", "until their adapters exist"),
    (pa.array([{"x": 1}]), "struct", "until their adapters exist"),
    (pa.array(["a", "b", "a"]).dictionary_encode(), "dictionary<values=string", "until their adapters exist"),
    (pa.array([1, 2], pa.int32()).dictionary_encode(), "dictionary<values=int32", "until their adapters exist"),
    (pa.array([1, 2], pa.int64()), "int64", "cast it first"),
    (pa.array([1, 2], pa.uint64()), "uint64", "cast it first"),
    (pa.array([1.0], pa.float64()), "double", "cast it first"),
    (pa.array([[1, 2, 3]], pa.list_(pa.uint8(), 3)), "fixed_size_list<item: uint8>[3]", "no 3-component"),
    (pa.array([[1] * 5], pa.list_(pa.float32(), 5)), "fixed_size_list<item: float>[5]", "2 to 4 values"),
    (pa.array([[1.0, 2.0]], pa.list_(pa.float64(), 2)), "fixed_size_list<item: double>[2]", "2 to 4 values"),
    (pa.array([0], pa.date32()), "date32", "no GPU format"),
    (pa.array([None, None]), "null", "no GPU format"),
]


@pytest.mark.parametrize("array,type_text,reason", REFUSED, ids=[r[1] for r in REFUSED])
def test_unsupported_columns_are_refused_by_name_and_type(device, array, type_text, reason):
    with pytest.raises(gpuviz.GraphValidationError) as info:
        table_to_gpu(device, pa.table({"col": array}))
    message = str(info.value)
    assert message.startswith('table_to_gpu column "col" has type') and type_text in message and reason in message
    with pytest.raises(gpuviz.GraphValidationError, match="table_to_gpu array has type"):
        table_to_gpu(device, array)


def test_cast_suggestion_works(device):
    column = pc.cast(pa.array([1, 2, 3], pa.int64()), pa.int32())
    assert gpu_to_arrow(device, table_to_gpu(device, column)).to_pylist() == [1, 2, 3]


def test_nulls_are_refused(device):
    with pytest.raises(gpuviz.GraphValidationError, match=r'column "v" \(float\) has 1 nulls in 3 rows.*validity'):
        table_to_gpu(device, pa.table({"v": pa.array([1.0, None, 2.0], pa.float32())}))
    with pytest.raises(gpuviz.GraphValidationError, match=r"has 1 nulls in 2 rows"):
        table_to_gpu(device, pa.array([[1, 2], None], pa.list_(pa.int32(), 2)))
    with pytest.raises(gpuviz.GraphValidationError, match=r"1 null list values"):
        table_to_gpu(device, pa.array([[1, None]], pa.list_(pa.int32(), 2)))
    with pytest.raises(gpuviz.GraphValidationError, match="nulls"):
        table_to_gpu(device, pa.chunked_array([[1], [None]], type=pa.uint8()))
    # A slice that leaves the null out is fine.
    sliced = pa.array([1, None, 3, 4], pa.uint32()).slice(2)
    assert gpu_to_arrow(device, table_to_gpu(device, sliced)).to_pylist() == [3, 4]


def test_other_errors():
    wrong = ((lambda: table_to_gpu(None, [1, 2]), "list"), (lambda: gpu_to_arrow(None, np.zeros(2)), "ndarray"))
    for call, got in wrong:
        with pytest.raises(gpuviz.GraphTypeError, match=rf"\(got {got}\)$") as info:
            call()
        assert isinstance(info.value, TypeError)
    with pytest.raises(gpuviz.GraphValidationError, match="duplicate column names"):
        table_to_gpu(None, pa.table([pa.array([1], pa.int8()), pa.array([2], pa.int8())], names=["a", "a"]))
    with pytest.raises(gpuviz.GraphValidationError, match="3 rows without columns"):
        table_to_gpu(None, pa.table({"a": [1, 2, 3]}).drop_columns(["a"]))


COLUMN_TYPES = [t for t, _ in PRIMITIVES] + [
    pa.bool_(), pa.list_(pa.float32(), 2), pa.list_(pa.uint8(), 4), pa.list_(pa.int32(), 3)
]


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=0, max_size=4),
    types=st.lists(st.sampled_from(COLUMN_TYPES), min_size=1, max_size=3),
    offset=st.integers(0, 3),
)
def test_round_trip_property(device, sizes, types, offset):
    schema = pa.schema([(f"c{i}", t) for i, t in enumerate(types)])
    batches = [
        pa.RecordBatch.from_arrays([values_for(t, n + offset, 7 * b).slice(offset) for t in types], schema=schema)
        for b, n in enumerate(sizes)
    ]
    arrow_table = pa.Table.from_batches(batches, schema=schema)
    table = table_to_gpu(device, arrow_table)
    try:
        assert [b.num_rows for b in table.batches] == sizes
        back = gpu_to_arrow(device, table)
        assert back.schema.equals(schema) and back.equals(arrow_table)
        for name in schema.names:
            assert chunk_lengths(back.column(name)) == sizes
        vector = table_to_gpu(device, arrow_table.column(0))
        assert gpu_to_arrow(device, vector).equals(arrow_table.column(0))
        vector.destroy()
    finally:
        table.destroy()
