"""GPUSchema, GPURecordBatch and GPUTable."""

import numpy as np
import pytest

import gpuviz
import gpuviz.formats
import gpuviz.tables
from gpuviz import GPUData, GPURecordBatch, GPUSchema, GPUTable, GPUVector, read_array


def batch(device, n, offset=0):
    return GPURecordBatch(
        GPUSchema({"x": "float32", "pos": "float32x2"}),
        columns={
            "pos": GPUData.from_numpy(device, (np.arange(2 * n, dtype=np.float32) + offset).reshape(n, 2)),
            "x": GPUData.from_numpy(device, np.arange(n, dtype=np.float32) + offset),
        },
    )


def test_exports():
    for name in ("GPUData", "GPUVector", "GPURecordBatch", "GPUTable", "GPUSchema", "read_array"):
        assert getattr(gpuviz, name) is getattr(gpuviz.tables, name)
    assert gpuviz.tables.GPUVectorFormat is gpuviz.formats.GPUVectorFormat


def test_schema_is_an_ordered_mapping_of_formats():
    schema = GPUSchema([("b", "uint32"), ("a", gpuviz.GPUVectorFormat.get("float16x4"))])
    assert schema.names == ("b", "a") and list(schema) == ["b", "a"] and len(schema) == 2
    assert schema["a"].name == "float16x4"
    assert schema == GPUSchema({"b": "uint32", "a": "float16x4"}, metadata={"ignored": 1})
    assert schema != GPUSchema({"a": "float16x4", "b": "uint32"})  # order matters
    assert schema.field_metadata("a") == {}
    with pytest.raises(gpuviz.GraphKeyError, match=r'^GPUSchema field "c" not found \(2 fields: "b", "a"\)$') as info:
        schema["c"]
    assert isinstance(info.value, KeyError)  # a Mapping: `in` and .get() rely on it
    assert schema.get("c") is None and "c" not in schema
    with pytest.raises(gpuviz.GraphKeyError, match='GPUSchema field "c" not found'):
        schema.field_metadata("c")


def test_schema_errors():
    with pytest.raises(gpuviz.GraphValidationError, match='field "a" appears twice'):
        GPUSchema([("a", "uint32"), ("a", "float32")])
    with pytest.raises(gpuviz.GraphValidationError, match='GPUVectorFormat "int64" is unknown'):
        GPUSchema({"a": "int64"})
    with pytest.raises(gpuviz.GraphValidationError, match="unknown fields"):
        GPUSchema({"a": "uint32"}, field_metadata={"b": {}})


def test_record_batch_basics(device):
    b = batch(device, 4)
    assert b.num_rows == 4 and b.column_names == ("x", "pos")
    assert list(b.columns) == ["x", "pos"]  # schema order, not dict order
    assert b.column("pos").format.name == "float32x2"
    assert b.device is device
    message = r'^GPURecordBatch column "y" not found \(2 columns: "x", "pos"\)$'
    with pytest.raises(gpuviz.GraphKeyError, match=message) as info:
        b.column("y")
    assert isinstance(info.value, KeyError)


def test_record_batch_infers_schema_and_accepts_plain_mappings(device):
    cols = {"a": GPUData.from_numpy(device, np.zeros(3, np.uint8)),
            "b": GPUData.from_numpy(device, np.zeros((3, 4), np.uint8))}
    inferred = GPURecordBatch(columns=cols)
    assert inferred.schema == GPUSchema({"a": "uint8", "b": "uint8x4"})
    assert GPURecordBatch({"a": "uint8", "b": "uint8x4"}, columns=cols).schema == inferred.schema
    empty = GPURecordBatch(GPUSchema({}), columns={})
    assert (empty.num_rows, empty.device) == (0, None)


def test_record_batch_validation(device):
    a3 = GPUData.from_numpy(device, np.zeros(3, np.float32))
    a5 = GPUData.from_numpy(device, np.zeros(5, np.float32))
    with pytest.raises(gpuviz.GraphValidationError, match=r'column "b" has 5 rows, column "a" has 3'):
        GPURecordBatch(columns={"a": a3, "b": a5})
    with pytest.raises(gpuviz.GraphValidationError, match=r'missing "b"; unexpected "c"; schema has 2 fields' ):
        GPURecordBatch({"a": "float32", "b": "float32"}, columns={"a": a3, "c": a3})
    with pytest.raises(gpuviz.GraphValidationError, match='column "a" has format float32, schema says uint32'):
        GPURecordBatch({"a": "uint32"}, columns={"a": a3})
    with pytest.raises(gpuviz.GraphValidationError, match='column "a" is a ndarray'):
        GPURecordBatch(columns={"a": np.zeros(3)})
    with pytest.raises(gpuviz.GraphValidationError, match="must be a mapping"):
        GPURecordBatch({"a": "float32"})


def test_table_column_is_a_chunked_vector_with_empty_batches(device):
    batches = [batch(device, 3), batch(device, 0), batch(device, 2, offset=100), batch(device, 0)]
    table = GPUTable(batches=batches)
    assert table.num_rows == 5 and table.num_columns == 2
    assert table.column_names == ("x", "pos") and table.batches == tuple(batches)
    assert table.device is device
    x = table.column("x")
    assert isinstance(x, GPUVector) and len(x.chunks) == 4
    assert [c.length for c in x.chunks] == [3, 0, 2, 0]
    np.testing.assert_array_equal(read_array(device, x), [0, 1, 2, 100, 101])
    pos = read_array(device, table.column("pos"))
    np.testing.assert_array_equal(pos, [[0, 1], [2, 3], [4, 5], [100, 101], [102, 103]])


def test_table_missing_column_names_the_available_ones(device):
    table = GPUTable(batches=[batch(device, 1)])
    with pytest.raises(gpuviz.GraphKeyError) as info:
        table.column("nope")
    assert isinstance(info.value, KeyError)
    # str() is the plain message: KeyError's own str() would wrap it in quotes.
    assert str(info.value) == 'GPUTable column "nope" not found (2 columns: "x", "pos")'


def test_table_without_batches(device):
    with pytest.raises(gpuviz.GraphValidationError, match="no batches and no schema"):
        GPUTable(batches=[])
    table = GPUTable({"v": "uint32x4"}, batches=[])
    assert table.num_rows == 0 and table.device is None
    vector = table.column("v")
    assert vector.chunks == () and vector.format.name == "uint32x4"
    assert read_array(device, vector).shape == (0, 4)


def test_table_rejects_other_schemas_and_devices(device):
    odd = GPURecordBatch(columns={"x": GPUData.from_numpy(device, np.zeros(2, np.uint32))})
    with pytest.raises(gpuviz.GraphValidationError, match=r"batch 1 has schema GPUSchema\(x: uint32\)"):
        GPUTable(batches=[batch(device, 1), odd])
    with pytest.raises(gpuviz.GraphValidationError, match="batch 0 is a dict"):
        GPUTable({"x": "uint32"}, batches=[{}])
    other = gpuviz.request_device(shared=False)
    with pytest.raises(gpuviz.DeviceMismatchError, match="batch 1"):
        GPUTable(batches=[batch(device, 1), batch(other, 1)])


def test_column_carries_field_metadata(device):
    schema = GPUSchema({"x": "uint32"}, field_metadata={"x": {"unit": "ms"}})
    column = GPUData.from_numpy(device, np.zeros(1, np.uint32))
    table = GPUTable(schema, batches=[GPURecordBatch(schema, columns={"x": column})])
    assert table.column("x").metadata["unit"] == "ms"


def test_destroy_releases_owned_buffers(device):
    batches = [batch(device, 2), batch(device, 0)]
    table = GPUTable(batches=batches)
    table.destroy()
    table.destroy()
    assert all(data.destroyed for b in batches for data in b.columns.values())
