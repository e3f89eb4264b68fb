"""GPUTable: GPURecordBatches under one schema, read column-wise as GPUVectors."""

from __future__ import annotations

from ..errors import DeviceMismatchError, GraphKeyError, GraphValidationError
from .record_batch import GPURecordBatch
from .schema import GPUSchema, quote_names
from .vector import GPUVector

__all__ = ["GPUTable"]


class GPUTable:
    """A list of :class:`GPURecordBatch` sharing one :class:`GPUSchema`.

    Parameters
    ----------
    schema : GPUSchema or mapping, optional
        Defaults to the first batch's schema; required when ``batches`` is empty.
    batches : iterable of GPURecordBatch
        The batches in row order; empty batches are kept. Keyword-only.

    Raises
    ------
    GraphValidationError
        A batch whose schema differs from the table's (names, order or
        formats), a non-batch entry, or no batches and no schema.
    DeviceMismatchError
        Batches on different devices.

    Notes
    -----
    Never concatenates batches: :meth:`column` returns a GPUVector with one
    chunk per batch. Holds references only; :meth:`destroy` frees the owned
    buffers of every batch.
    """

    def __init__(self, schema=None, *, batches=None):
        self.batches = tuple(batches or ())
        for i, batch in enumerate(self.batches):
            if not isinstance(batch, GPURecordBatch):
                raise GraphValidationError(
                    f"GPUTable batch {i} is a {type(batch).__name__}, expected GPURecordBatch"
                )
        if schema is None:
            if not self.batches:
                raise GraphValidationError("GPUTable has no batches and no schema (pass schema=)")
            schema = self.batches[0].schema
        elif not isinstance(schema, GPUSchema):
            schema = GPUSchema(schema)
        self.schema = schema
        device = None
        for i, batch in enumerate(self.batches):
            if batch.schema != schema:
                raise GraphValidationError(
                    f"GPUTable batch {i} has schema {batch.schema!r}, expected {schema!r} "
                    f"({len(self.batches)} batches)"
                )
            if batch.device is not None:
                if device is not None and batch.device is not device:
                    raise DeviceMismatchError(f"GPUTable batch {i} is on another device than batch 0")
                device = device or batch.device

    @property
    def num_rows(self) -> int:
        """Rows over all batches."""
        return sum(batch.num_rows for batch in self.batches)

    @property
    def num_columns(self) -> int:
        """Number of schema fields."""
        return len(self.schema)

    @property
    def column_names(self) -> tuple:
        """Column names in schema order."""
        return self.schema.names

    @property
    def device(self):
        """The batches' device, or None when no batch has columns."""
        for batch in self.batches:
            if batch.device is not None:
                return batch.device
        return None

    def column(self, name: str) -> GPUVector:
        """Column ``name`` as a GPUVector with one chunk per batch (empty batches included).

        The vector carries the schema's metadata for that field. Raises
        :class:`~gpuviz.GraphKeyError` (a ``KeyError``) naming the column
        and the available ones. No copy.
        """
        if name not in self.schema:
            raise GraphKeyError(
                f'GPUTable column "{name}" not found ({len(self.schema)} columns: '
                f"{quote_names(self.schema.names)})"
            )
        return GPUVector(
            [batch.columns[name] for batch in self.batches],
            format=self.schema[name],
            metadata=self.schema.field_metadata(name),
        )

    def destroy(self) -> None:
        """Destroy the owned buffers of every batch; idempotent."""
        for batch in self.batches:
            batch.destroy()

    def __repr__(self) -> str:
        return f"GPUTable(num_rows={self.num_rows}, batches={len(self.batches)}, schema={self.schema!r})"
