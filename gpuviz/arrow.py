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
import pyarrow.compute as pc
import wgpu

from .algorithms import EMPTY_KEY, NOT_FOUND, GPUHashIndex, GPUHashIndexQuery, GPUHashJoin
from .device import request_device
from .formats import GPUVectorFormat
from .graph import GPUCommandGraph
from .errors import GraphKeyError, GraphTypeError, GraphValidationError
from .tables import GPUData, GPURecordBatch, GPUSchema, GPUTable, GPUVector
from .tables.readback import read_many

__all__ = ["table_to_gpu", "gpu_to_arrow", "hash_join"]

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


# ------------------------------------------------------------------ joins
JOIN_HOWS = ("inner", "left")
JOIN_VALIDATE = (None, "many_to_one", "m:1", "first")


def _as_table(what: str, obj) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "columns"):
        return pa.Table.from_pandas(obj, preserve_index=False)
    raise GraphTypeError(f"hash_join {what} must be a pyarrow Table or RecordBatch or a pandas DataFrame "
                         f"(got {type(obj).__name__})")


def _join_columns(left: pa.Table, right: pa.Table, on, left_on, right_on) -> tuple:
    """``(left key names, right key names)``, checked."""
    listed = lambda v: [v] if isinstance(v, str) else list(v)  # noqa: E731
    if on is not None and (left_on is not None or right_on is not None):
        raise GraphValidationError("hash_join takes on= or left_on= and right_on=, not both")
    if on is None and left_on is None and right_on is None:
        on = [n for n in left.column_names if n in set(right.column_names)]
        if not on:
            raise GraphValidationError("hash_join: left and right share no column name; pass on= or left_on= and "
                                       "right_on=")
    if on is not None:
        left_on = right_on = listed(on)
    elif left_on is None or right_on is None:
        raise GraphValidationError("hash_join needs both left_on= and right_on=")
    left_on, right_on = listed(left_on), listed(right_on)
    if len(left_on) != len(right_on):
        raise GraphValidationError(f"hash_join left_on has {len(left_on)} columns but right_on has {len(right_on)}")
    if not 1 <= len(left_on) <= 2:
        raise GraphValidationError(f"hash_join joins on one or two key columns (got {len(left_on)}: {left_on})")
    for side, table, names in (("left", left, left_on), ("right", right, right_on)):
        for name in names:
            if name not in table.column_names:
                raise GraphKeyError(f'hash_join {side} has no column "{name}" (columns: {table.column_names})')
    return left_on, right_on


def _key_kind(what: str, dtype: pa.DataType) -> str:
    value = dtype.value_type if pa.types.is_dictionary(dtype) else dtype
    if pa.types.is_integer(value):
        return "int"
    if (pa.types.is_string(value) or pa.types.is_large_string(value) or pa.types.is_binary(value)
            or pa.types.is_large_binary(value)):
        return "str"
    kind = "float" if pa.types.is_floating(value) else str(value)
    raise GraphValidationError(f"hash_join {what} has type {dtype}: keys must be integer, string or dictionary "
                               f"columns ({kind} keys are refused: equality on them is ill-defined or unsupported)")


def _decoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    if not pa.types.is_dictionary(column.type):
        return column
    return pa.chunked_array([chunk.dictionary_decode() for chunk in column.chunks], type=column.type.value_type)


def _factorize(left_values, right_values) -> tuple:
    """Shared dense codes (uint64) of two value arrays, via one host dictionary."""
    both = np.concatenate([np.asarray(left_values, object), np.asarray(right_values, object)]) \
        if left_values.dtype != right_values.dtype else np.concatenate([left_values, right_values])
    codes = np.unique(both, return_inverse=True)[1].astype(np.uint64).reshape(-1)
    return codes[:len(left_values)], codes[len(left_values):]


def _key_words(lcol: pa.ChunkedArray, rcol: pa.ChunkedArray, one_word: bool) -> tuple:
    """``(left words, right words, left valid, right valid)``: the key as one
    (uint64 < 2**32 - 1) or two uint32 words per row; nulls are invalid."""
    lcol, rcol = _decoded(lcol), _decoded(rcol)
    lvalid = np.asarray(lcol.is_valid(), bool) if len(lcol) else np.zeros(0, bool)
    rvalid = np.asarray(rcol.is_valid(), bool) if len(rcol) else np.zeros(0, bool)
    if pa.types.is_integer(lcol.type):
        fill = lambda c: c.fill_null(0).to_numpy() if len(c) else np.zeros(0, c.type.to_pandas_dtype())  # noqa: E731
        lv, rv = fill(lcol), fill(rcol)
        valid_values = [int(v) for a, ok in ((lv, lvalid), (rv, rvalid)) if ok.any()
                        for v in (a[ok].min(), a[ok].max())]
        lo, hi = (min(valid_values), max(valid_values)) if valid_values else (0, 0)
        if hi - lo < EMPTY_KEY:  # one word, never the reserved one
            def shifted(a):
                if lo < 0:  # then every value fits int64 (hi < 2**32)
                    return (a.astype(np.int64) - lo).astype(np.uint64)
                return a.astype(np.uint64) - np.uint64(lo)
            return shifted(lv), shifted(rv), lvalid, rvalid, 1
        if hi - lo < (1 << 64) - 1 and not one_word:
            shift = np.uint64(lo % (1 << 64))
            return (lv.astype(np.uint64) - shift, rv.astype(np.uint64) - shift, lvalid, rvalid, 2)
        lcodes, rcodes = _factorize(lv, rv)
        return lcodes, rcodes, lvalid, rvalid, 1
    target = pa.large_binary() if pa.types.is_binary(lcol.type) or pa.types.is_large_binary(lcol.type) \
        else pa.large_string()
    both = pa.chunked_array(lcol.cast(target).chunks + rcol.cast(target).chunks, type=target).combine_chunks()
    indices = pc.dictionary_encode(both).indices.fill_null(0).to_numpy().astype(np.uint64)
    return indices[:len(lcol)], indices[len(lcol):], lvalid, rvalid, 1


def _encode_keys(left, right, left_on, right_on) -> tuple:
    """``(left words (n, w), right words (m, w), w)``: uint32 key words,
    every word of a null key set to the reserved empty key."""
    columns = []
    for lname, rname in zip(left_on, right_on):
        lkind = _key_kind(f'left key "{lname}"', left.schema.field(lname).type)
        rkind = _key_kind(f'right key "{rname}"', right.schema.field(rname).type)
        if lkind != rkind:
            raise GraphValidationError(
                f'hash_join key types do not match: left "{lname}" is {left.schema.field(lname).type} but right '
                f'"{rname}" is {right.schema.field(rname).type} (cast one side first)')
        columns.append(_key_words(left.column(lname), right.column(rname), one_word=len(left_on) > 1))
    sides = []
    for side in (0, 1):
        valid = np.logical_and.reduce([c[2 + side] for c in columns])
        if len(columns) == 2:
            words = np.stack([columns[0][side], columns[1][side]], axis=1)
        elif columns[0][4] == 2:
            v = columns[0][side]
            words = np.stack([v & np.uint64(0xFFFFFFFF), v >> np.uint64(32)], axis=1)
        else:
            words = columns[0][side].reshape(-1, 1)
        words = words.astype(np.uint32)
        words[~valid] = EMPTY_KEY
        sides.append(words)
    width = sides[0].shape[1]
    return sides[0], sides[1], width


class _GPUJoinRunner:
    """One compiled graph: the right index (rebuilt every encoding) and a
    fixed-capacity left batch that a lookup (``how="left"``) or a join
    (``"inner"``) reads; batches are written into it and read back."""

    def __init__(self, device, right_words, key_words, how, batch_rows):
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        fmt = "uint32" if key_words == 1 else "uint32x2"
        self.device, self.key_words, self.how, self.rows = device, key_words, how, batch_rows
        words = lambda n: GPUData.from_numpy(device, np.zeros(max(n, 1), np.uint32), usage)  # noqa: E731
        self.right = GPUData.from_numpy(device, right_words.reshape(-1) if right_words.size else
                                        np.zeros(1, np.uint32), usage)
        self.left, self.count = words(batch_rows * key_words), words(1)
        self.index_stats, self.stats = words(8), words(8)
        self.output = words(batch_rows * (2 if how == "inner" else 1))
        graph = GPUCommandGraph(device, id="hash-join")

        def view(name, data, fmt, length):
            return graph.create_data_view(graph.import_gpu_data(name, data).handle, format=fmt, length=length)

        self.index = GPUHashIndex(id="right-index", keys=view("right", self.right, fmt, len(right_words)),
                                  key_words=key_words, stats=graph.import_gpu_data("index-stats", self.index_stats))
        self.index.add_to_graph(graph)
        left = view("left", self.left, fmt, batch_rows)
        if how == "inner":
            GPUHashJoin(id="join", left_keys=left, index=self.index, pairs=view("pairs", self.output, "uint32x2",
                                                                                 batch_rows),
                        count=graph.import_gpu_data("count", self.count), capacity=batch_rows,
                        stats=graph.import_gpu_data("stats", self.stats)).add_to_graph(graph)
        else:
            GPUHashIndexQuery(id="lookup", index=self.index, keys=left,
                              output=view("output", self.output, "uint32", batch_rows),
                              stats=graph.import_gpu_data("stats", self.stats)).add_to_graph(graph)
        self.compiled = graph.compile()

    def run(self, left_words) -> tuple:
        """``(left rows, right rows or NOT_FOUND, index stats)`` of one batch."""
        n = len(left_words)
        padded = np.full((self.rows, self.key_words), EMPTY_KEY, np.uint32)
        padded[:n] = left_words
        self.device.queue.write_buffer(self.left.buffer, self.left.byte_offset, padded.tobytes())
        encoder = self.device.create_command_encoder()
        self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        stats, count, output = read_many(self.device, [self.index_stats, self.count, self.output])
        if self.how == "inner":
            pairs = output.reshape(-1, 2)[:int(count[0])]
            return pairs[:, 0].astype(np.int64), pairs[:, 1], stats
        return np.arange(n), output[:n], stats

    def destroy(self):
        for data in (self.right, self.left, self.index_stats, self.stats, self.count, self.output):
            data.destroy()


def hash_join(left, right, *, on=None, left_on=None, right_on=None, how: str = "inner", validate=None, device=None,
              batch_rows: int = 1 << 20) -> pa.Table:
    """Many-to-one join of two Arrow tables on the GPU, as ``pandas.merge``.

    Parameters
    ----------
    left, right : pyarrow.Table, pyarrow.RecordBatch or pandas.DataFrame
    on : str or list of str, optional
        Key column(s) both sides share (one or two). Default, as pandas:
        every column name the two sides share.
    left_on, right_on : str or list of str, optional
        Key columns named differently on each side (instead of ``on``).
    how : {"inner", "left"}
    validate : {None, "many_to_one", "m:1", "first"}
        None and "many_to_one" refuse a right side whose keys repeat (the
        error says how many rows repeat an earlier key); "first" keeps the
        first right row of each key.
    device : wgpu.GPUDevice, optional
        Default :func:`gpuviz.request_device`.
    batch_rows : int
        Left rows per GPU batch: the graph is fixed-capacity, and larger
        left sides stream through it (a tqdm.auto bar appears past ~1 s).

    Returns
    -------
    pyarrow.Table
        The rows and column order of ``pandas.merge(left, right, how=how,
        on=..., sort=False)``: left columns, then right columns without the
        keys ``on`` shares, overlapping names suffixed ``_x`` / ``_y``;
        inner rows in left order; unmatched left rows carry nulls.

    Notes
    -----
    Integer keys (int8..uint64, either side any width) are matched by value
    as one or two uint32 words; string, binary and dictionary keys go
    through one dictionary built on the host for both sides; two key
    columns are one 64-bit key. Null keys never match (unlike pandas,
    which matches NaN to NaN). The right side is hashed into a
    :class:`~gpuviz.GPUHashIndex` and each left batch joined by a
    :class:`~gpuviz.GPUHashJoin` (inner) or looked up by a
    :class:`~gpuviz.GPUHashIndexQuery` (left); payload columns are
    gathered on the host with ``Table.take``. Raises GraphValidationError
    for float keys, mismatched key types or more than two key columns and
    GraphKeyError for a missing column before anything runs on the GPU;
    a repeating right key raises GraphValidationError after the first
    batch (from the index's duplicate count). Every batch rebuilds the
    right index (the graph is fixed-capacity and rebuilds on every
    encoding). Does not support many-to-many, outer or right joins, does
    not sort, and does not keep the GPU buffers it made.
    """
    if how not in JOIN_HOWS:
        raise GraphValidationError(f"hash_join how must be one of {', '.join(JOIN_HOWS)} (got {how!r})")
    if validate not in JOIN_VALIDATE:
        raise GraphValidationError(f"hash_join validate must be None, 'many_to_one', 'm:1' or 'first' "
                                   f"(got {validate!r})")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, (int, np.integer)) or batch_rows < 1:
        raise GraphValidationError(f"hash_join batch_rows must be a positive int (got {batch_rows!r})")
    left, right = _as_table("left", left), _as_table("right", right)
    left_on, right_on = _join_columns(left, right, on, left_on, right_on)
    lwords, rwords, key_words = _encode_keys(left, right, left_on, right_on)
    if device is None:
        device = request_device()
    n = left.num_rows
    runner = _GPUJoinRunner(device, rwords, key_words, how, int(min(batch_rows, max(n, 1))))
    left_rows, right_rows = [], []
    try:
        from tqdm.auto import tqdm

        with tqdm(total=n, delay=1.0, unit="rows", desc="hash_join", disable=n <= runner.rows) as bar:
            for start in range(0, max(n, 1), runner.rows):
                rows, values, stats = runner.run(lwords[start:start + runner.rows])
                if start == 0:
                    _check_right(stats, validate)
                left_rows.append(rows + start)
                right_rows.append(values)
                bar.update(len(lwords[start:start + runner.rows]))
    finally:
        runner.destroy()
    return _assemble(left, right, left_on, right_on, np.concatenate(left_rows), np.concatenate(right_rows))


def _check_right(stats, validate) -> None:
    """Refuse a right side with repeating keys (unless validate="first") or
    an index that dropped rows."""
    duplicates, overflow = int(stats[1]), int(stats[2])
    if overflow:
        raise GraphValidationError(f"hash_join right index dropped {overflow} rows (no slot found)")
    if duplicates and validate != "first":
        raise GraphValidationError(
            f"hash_join right keys are not unique: {duplicates} right rows repeat an earlier row's key (a many-to-one "
            "join needs unique right keys; validate='first' keeps the first row of each key)")


def _assemble(left, right, left_on, right_on, left_rows, right_rows) -> pa.Table:
    """The pandas.merge column layout over the gathered rows."""
    shared = {l for l, r in zip(left_on, right_on) if l == r}
    right_names = [name for name in right.column_names if name not in shared]
    overlap = set(left.column_names) & set(right_names)
    if len(left_rows) != left.num_rows or (len(left_rows) and (left_rows != np.arange(len(left_rows))).any()):
        left = left.take(pa.array(left_rows, pa.int64()))
    missing = right_rows == NOT_FOUND
    right = right.select(right_names).take(pa.array(right_rows.astype(np.int64), pa.int64(), mask=missing))
    names = [f"{n}_x" if n in overlap else n for n in left.column_names]
    names += [f"{n}_y" if n in overlap else n for n in right_names]
    return pa.Table.from_arrays(list(left.columns) + list(right.columns), names=names)
