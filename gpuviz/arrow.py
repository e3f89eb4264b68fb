"""Arrow adapters: upload pyarrow data to GPU tables and read it back.

The only module outside :mod:`gpuviz.widgets` that imports pyarrow, so
``import gpuviz`` stays free of it. Supported columns are primitive numbers
that WebGPU can store (uint8/16/32, int8/16/32, float16/32), booleans
(stored as uint32 0/1) and ``fixed_size_list<primitive>[2..4]`` (stored as
``float32x2``-style formats). Everything else is refused with a
GraphValidationError naming the column and its type:

- 64-bit numbers (int64, uint64, float64): no silent narrowing; cast first,
  e.g. ``pc.cast(col, pa.float32())``.
- nulls: no validity adapter yet; fill or drop them first.
- variable-length, nested and dictionary columns (string, binary, list,
  struct, map, dictionary): refused until their adapters exist.

The Arrow type of each column rides along as tables metadata (keys
``"arrow.type"``, ``"arrow.field"``, ``"arrow.schema"``, ``"arrow.container"``)
so that :func:`gpu_to_arrow` rebuilds the original types, field names and
batch boundaries.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .formats import GPUVectorFormat
from .errors import GraphTypeError, GraphValidationError
from .tables import GPUData, GPURecordBatch, GPUSchema, GPUTable, GPUVector
from .tables.readback import read_many

__all__ = ["table_to_gpu", "gpu_to_arrow"]

_SCALARS = {
    pa.uint8(): "uint8", pa.uint16(): "uint16", pa.uint32(): "uint32",
    pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32",
    pa.float16(): "float16", pa.float32(): "float32",
}
_WIDE = {pa.int64(): "int32", pa.uint64(): "uint32", pa.float64(): "float32"}
_VARIABLE = (
    "is_string", "is_large_string", "is_string_view", "is_binary", "is_large_binary",
    "is_binary_view", "is_list", "is_large_list", "is_list_view", "is_large_list_view",
    "is_struct", "is_map", "is_union", "is_fixed_size_binary",
)


def _column_format(what: str, dtype: pa.DataType) -> GPUVectorFormat:
    """The GPU format storing Arrow type ``dtype``; a named error when there is none."""
    if dtype in _SCALARS:
        return GPUVectorFormat.from_numpy(_SCALARS[dtype])
    if pa.types.is_boolean(dtype):
        return GPUVectorFormat.from_numpy("uint32")
    if dtype in _WIDE:
        raise GraphValidationError(
            f"table_to_gpu {what} has type {dtype}, which WebGPU cannot store; cast it first, "
            f"e.g. pyarrow.compute.cast(column, pa.{_WIDE[dtype]}())"
        )
    if pa.types.is_fixed_size_list(dtype):
        value = dtype.value_type
        if value not in _SCALARS or not 2 <= dtype.list_size <= 4:
            raise GraphValidationError(
                f"table_to_gpu {what} has type {dtype}; fixed-size lists need 2 to 4 values of "
                f"uint8/16/32, int8/16/32, float16 or float32 (got {dtype.list_size} of {value})"
            )
        try:
            return GPUVectorFormat.from_numpy(_SCALARS[value], components=dtype.list_size)
        except GraphValidationError:
            raise GraphValidationError(
                f"table_to_gpu {what} has type {dtype}; WebGPU has no {dtype.list_size}-component "
                f"{value} format (pad the list to 4 values)"
            ) from None
    if pa.types.is_dictionary(dtype):
        raise GraphValidationError(
            f"table_to_gpu {what} has type {dtype}: dictionary columns are not supported until "
            f"their adapters exist (decode with column.dictionary_decode() or upload the indices)"
        )
    if any(getattr(pa.types, check, lambda _: False)(dtype) for check in _VARIABLE):
        raise GraphValidationError(
            f"table_to_gpu {what} has type {dtype}: variable-length and nested columns "
            f"(string, binary, list, struct, map) are not supported until their adapters exist"
        )
    raise GraphValidationError(
        f"table_to_gpu {what} has type {dtype}, which has no GPU format (supported: "
        f"uint8/16/32, int8/16/32, float16/32, bool, fixed_size_list of those [2..4])"
    )


def _to_numpy(what: str, array: pa.Array, fmt: GPUVectorFormat) -> np.ndarray:
    """Host values of one Arrow chunk in ``fmt``'s layout; honours ``array.offset``."""
    if array.null_count:
        raise GraphValidationError(
            f"table_to_gpu {what} ({array.type}) has {array.null_count} nulls in {len(array)} rows; "
            f"fill or drop them first (no validity adapter yet)"
        )
    if pa.types.is_fixed_size_list(array.type):
        values = array.flatten()  # only the sliced range's values
        if values.null_count:
            raise GraphValidationError(
                f"table_to_gpu {what} ({array.type}) has {values.null_count} null list values; "
                f"fill or drop them first (no validity adapter yet)"
            )
        return values.to_numpy(zero_copy_only=False).reshape(len(array), fmt.components)
    values = array.to_numpy(zero_copy_only=False)
    return values.astype(np.uint32) if values.dtype == np.bool_ else values


def _upload(device, staged, usage) -> list:
    """Upload (label, values) pairs; on failure destroy what was made."""
    made = []
    try:
        for label, values in staged:
            made.append(GPUData.from_numpy(device, values, usage, label=label))
    except BaseException:
        for data in made:
            data.destroy()
        raise
    return made


def _chunks_to_vector(device, what, dtype, chunks, usage, container) -> GPUVector:
    fmt = _column_format(what, dtype)
    staged = [(f"arrow-{what}-{i}", _to_numpy(what, chunk, fmt)) for i, chunk in enumerate(chunks)]
    metadata = {"arrow.type": dtype, "arrow.container": container}
    return GPUVector(_upload(device, staged, usage), format=fmt, metadata=metadata)


def _table_batches(table: pa.Table) -> list:
    """Per batch, one Arrow array per column, keeping every boundary (empty batches too)."""
    layouts = {tuple(len(chunk) for chunk in column.chunks) for column in table.columns}
    if len(layouts) == 1:
        # Aligned chunks: use them as they are (Table.to_batches drops trailing empty batches).
        return [list(arrays) for arrays in zip(*(column.chunks for column in table.columns))]
    return [batch.columns for batch in table.to_batches()]


def _to_gpu_table(device, arrow_schema: pa.Schema, batches, usage, container) -> GPUTable:
    names = arrow_schema.names
    if len(set(names)) != len(names):
        raise GraphValidationError(f"table_to_gpu has duplicate column names {names}")
    formats = {name: _column_format(f'column "{name}"', arrow_schema.field(name).type) for name in names}
    staged = [
        [(f"arrow-{name}-{b}", _to_numpy(f'column "{name}"', array, formats[name]))
         for name, array in zip(names, arrays)]
        for b, arrays in enumerate(batches)
    ]
    schema = GPUSchema(
        formats,
        metadata={"arrow.schema": arrow_schema, "arrow.container": container},
        field_metadata={f.name: {"arrow.type": f.type, "arrow.field": f} for f in arrow_schema},
    )
    uploaded = _upload(device, [pair for batch in staged for pair in batch], usage)
    gpu_batches, i = [], 0
    for batch in staged:
        gpu_batches.append(GPURecordBatch(schema, columns=dict(zip(names, uploaded[i : i + len(batch)]))))
        i += len(batch)
    return GPUTable(schema, batches=gpu_batches)


def table_to_gpu(device, obj, *, usage=None):
    """Upload a pyarrow object to GPU tables, chunk for chunk.

    Parameters
    ----------
    device : wgpu.GPUDevice
    obj : pyarrow.Array, ChunkedArray, RecordBatch or Table
        Array -> GPUVector with one chunk; ChunkedArray -> GPUVector with one
        chunk per Arrow chunk (empty chunks kept); RecordBatch -> GPUTable
        with one batch; Table -> GPUTable with one batch per record batch.
    usage : wgpu.BufferUsage, optional
        Buffer usage, as in :meth:`GPUData.from_numpy`.

    Returns
    -------
    GPUVector or GPUTable
        Owning one new buffer per chunk and column.

    Raises
    ------
    GraphValidationError
        An unsupported type (64-bit, variable-length, dictionary...) or a
        column with nulls, naming the column and its type; nothing is
        uploaded then.
    GraphTypeError
        ``obj`` is not one of the four pyarrow types.

    Notes
    -----
    Never concatenates chunks or batches and never casts except bool to
    uint32. Sliced arrays upload only their visible rows. A table whose
    columns share chunk boundaries keeps them exactly (empty chunks too);
    otherwise it is split at ``Table.to_batches()`` boundaries.
    """
    if isinstance(obj, pa.ChunkedArray):
        return _chunks_to_vector(device, "array", obj.type, obj.chunks, usage, "chunked_array")
    if isinstance(obj, pa.Array):
        return _chunks_to_vector(device, "array", obj.type, [obj], usage, "array")
    if isinstance(obj, (pa.RecordBatch, pa.Table)):
        if obj.num_columns == 0 and obj.num_rows:
            raise GraphValidationError(
                f"table_to_gpu got {obj.num_rows} rows without columns; a GPUTable needs columns"
            )
        if isinstance(obj, pa.RecordBatch):
            return _to_gpu_table(device, obj.schema, [obj.columns], usage, "record_batch")
        return _to_gpu_table(device, obj.schema, _table_batches(obj), usage, "table")
    raise GraphTypeError(
        f"table_to_gpu expects a pyarrow Array, ChunkedArray, RecordBatch or Table (got {type(obj).__name__})"
    )


def _arrow_type(fmt: GPUVectorFormat, metadata) -> pa.DataType:
    """The Arrow type recorded at upload when it still matches ``fmt``, else one derived from it."""
    recorded = metadata.get("arrow.type")
    if isinstance(recorded, pa.DataType):
        try:
            if _column_format("column", recorded) == fmt:
                return recorded
        except GraphValidationError:
            pass
    scalar = pa.from_numpy_dtype(fmt.dtype)
    return scalar if fmt.components == 1 else pa.list_(scalar, fmt.components)


def _from_numpy(values: np.ndarray, dtype: pa.DataType) -> pa.Array:
    if pa.types.is_boolean(dtype):
        return pa.array(values != 0, type=dtype)
    if pa.types.is_fixed_size_list(dtype):
        flat = pa.array(values.reshape(-1), type=dtype.value_type)
        return pa.FixedSizeListArray.from_arrays(flat, type=dtype)
    return pa.array(values, type=dtype)


def gpu_to_arrow(device, gpu_obj):
    """Read GPU tables back into pyarrow, synchronously (one submit per call).

    Parameters
    ----------
    device : wgpu.GPUDevice
    gpu_obj : GPUData, GPUVector, GPURecordBatch or GPUTable

    Returns
    -------
    pyarrow.Array, ChunkedArray, RecordBatch or Table
        What :func:`table_to_gpu` was given when the object came from it
        (same types, field names, schema metadata and chunk boundaries);
        otherwise GPUData -> Array, GPUVector -> ChunkedArray,
        GPURecordBatch -> RecordBatch, GPUTable -> Table, with types
        derived from the formats (multi-component -> fixed_size_list;
        normalized formats as their raw integers).

    Raises
    ------
    GraphTypeError
        ``gpu_obj`` is not one of the four GPU table types.

    Notes
    -----
    Produces no nulls and never concatenates, except a vector that came
    from a single Array. Leaves the GPU objects alive.
    """
    if isinstance(gpu_obj, GPUData):
        (values,) = read_many(device, [gpu_obj])
        return _from_numpy(values, _arrow_type(gpu_obj.format, {}))
    if isinstance(gpu_obj, GPUVector):
        dtype = _arrow_type(gpu_obj.format, gpu_obj.metadata)
        chunks = [_from_numpy(v, dtype) for v in read_many(device, gpu_obj.chunks)]
        if gpu_obj.metadata.get("arrow.container") == "array":
            return chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)
        return pa.chunked_array(chunks, type=dtype)
    if isinstance(gpu_obj, GPURecordBatch):
        gpu_obj = GPUTable(gpu_obj.schema, batches=[gpu_obj])
        container = "record_batch"
    elif isinstance(gpu_obj, GPUTable):
        container = gpu_obj.schema.metadata.get("arrow.container", "table")
    else:
        raise GraphTypeError(
            f"gpu_to_arrow expects GPUData, GPUVector, GPURecordBatch or GPUTable (got {type(gpu_obj).__name__})"
        )
    schema = gpu_obj.schema
    fields = []
    for name, fmt in schema.items():
        dtype = _arrow_type(fmt, schema.field_metadata(name))
        field = schema.field_metadata(name).get("arrow.field")
        fields.append(field if isinstance(field, pa.Field) and field.type == dtype else pa.field(name, dtype))
    recorded = schema.metadata.get("arrow.schema")
    arrow_schema = pa.schema(fields, metadata=recorded.metadata if isinstance(recorded, pa.Schema) else None)
    values = iter(read_many(device, [data for batch in gpu_obj.batches for data in batch.columns.values()]))
    batches = [
        pa.RecordBatch.from_arrays([_from_numpy(next(values), f.type) for f in fields], schema=arrow_schema)
        for _ in gpu_obj.batches
    ]
    if container == "record_batch" and len(batches) == 1:
        return batches[0]
    return pa.Table.from_batches(batches, schema=arrow_schema)
