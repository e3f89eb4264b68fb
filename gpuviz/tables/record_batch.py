"""GPURecordBatch: equal-length GPUData columns under one GPUSchema."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import DeviceMismatchError, GraphKeyError, GraphValidationError
from .data import GPUData
from .schema import GPUSchema, quote_names

__all__ = ["GPURecordBatch"]


class GPURecordBatch:
    """One batch of rows: a :class:`GPUData` per schema field, all of equal length.

    Parameters
    ----------
    schema : GPUSchema or mapping, optional
        Column names and formats; a plain mapping or (name, format) pairs are
        turned into a GPUSchema. Inferred from ``columns`` (in their order)
        when omitted.
    columns : mapping of name to GPUData
        Exactly one GPUData per schema field; stored in schema order.
        Keyword-only.

    Raises
    ------
    GraphValidationError
        Missing or extra columns, a column whose format differs from the
        schema, or columns of unequal lengths.
    DeviceMismatchError
        Columns on different devices.

    Notes
    -----
    Holds references only: no copy, no upload, no readback. :meth:`destroy`
    frees the owned buffers of its columns. A batch without columns has 0 rows.
    """

    def __init__(self, schema=None, *, columns=None):
        if not isinstance(columns, Mapping):
            raise GraphValidationError(
                f"GPURecordBatch columns must be a mapping of name to GPUData, got {type(columns).__name__}"
            )
        for name, data in columns.items():
            if not isinstance(data, GPUData):
                raise GraphValidationError(
                    f'GPURecordBatch column "{name}" is a {type(data).__name__}, expected GPUData'
                )
        if schema is None:
            schema = GPUSchema((name, data.format) for name, data in columns.items())
        elif not isinstance(schema, GPUSchema):
            schema = GPUSchema(schema)
        missing = [name for name in schema if name not in columns]
        extra = [name for name in columns if name not in schema]
        if missing or extra:
            raise GraphValidationError(
                f"GPURecordBatch columns do not match its schema (missing {quote_names(missing)}; "
                f"unexpected {quote_names(extra)}; "
                f"schema has {len(schema)} fields)"
            )
        self.schema = schema
        self.columns = MappingProxyType({name: columns[name] for name in schema})
        first = None
        for name, data in self.columns.items():
            if data.format != schema[name]:
                raise GraphValidationError(
                    f'GPURecordBatch column "{name}" has format {data.format.name}, '
                    f"schema says {schema[name].name}"
                )
            if first is None:
                first = name
                continue
            head = self.columns[first]
            if data.length != head.length:
                raise GraphValidationError(
                    f'GPURecordBatch column "{name}" has {data.length} rows, column "{first}" has '
                    f"{head.length} (columns must have equal lengths)"
                )
            if data.device is not head.device:
                raise DeviceMismatchError(
                    f'GPURecordBatch column "{name}" is on another device than column "{first}"'
                )

    @property
    def num_rows(self) -> int:
        """Rows in the batch (0 for a batch without columns)."""
        for data in self.columns.values():
            return data.length
        return 0

    @property
    def column_names(self) -> tuple:
        """Column names in schema order."""
        return self.schema.names

    @property
    def device(self):
        """The columns' device, or None for a batch without columns."""
        for data in self.columns.values():
            return data.device
        return None

    def column(self, name: str) -> GPUData:
        """The GPUData of column ``name``; no copy.

        Raises :class:`~gpuviz.GraphKeyError` (a ``KeyError``) naming the
        available columns.
        """
        try:
            return self.columns[name]
        except KeyError:
            raise GraphKeyError(
                f'GPURecordBatch column "{name}" not found ({len(self.columns)} columns: '
                f"{quote_names(self.schema.names)})"
            ) from None

    def destroy(self) -> None:
        """Destroy the owned buffers of every column; idempotent."""
        for data in self.columns.values():
            data.destroy()

    def __repr__(self) -> str:
        return f"GPURecordBatch(num_rows={self.num_rows}, schema={self.schema!r})"
