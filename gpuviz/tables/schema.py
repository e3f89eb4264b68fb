"""GPUSchema: the ordered column names and row formats of a GPU table."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..formats import vector_format
from ..errors import GraphKeyError, GraphValidationError

__all__ = ["GPUSchema", "quote_names"]

_EMPTY = MappingProxyType({})


def quote_names(names) -> str:
    """``"a", "b"``: names for error messages (``"none"`` when empty); never truncates."""
    return ", ".join(f'"{name}"' for name in names) or "none"


class GPUSchema(Mapping):
    """Ordered mapping of column name to :class:`GPUVectorFormat`.

    Parameters
    ----------
    fields : mapping or iterable of (name, format)
        Column names (unique strings) and their formats, in column order;
        formats may be given by name.
    metadata : mapping, optional
        Adapter-defined facts about the whole schema.
    field_metadata : mapping of name to mapping, optional
        Adapter-defined facts per column (for example the Arrow field in
        :mod:`gpuviz.arrow`); :meth:`GPUTable.column` hands them to the
        vector it returns.

    Notes
    -----
    Equality compares names, order and formats, never metadata. The tables
    layer carries metadata but never interprets it. Holds no GPU resources.
    """

    def __init__(self, fields, *, metadata=None, field_metadata=None):
        items = fields.items() if isinstance(fields, Mapping) else fields
        formats = {}
        for entry in items:
            name, fmt = entry
            if not isinstance(name, str):
                raise GraphValidationError(f"GPUSchema field name {name!r} is not a string")
            if name in formats:
                raise GraphValidationError(f'GPUSchema field "{name}" appears twice')
            formats[name] = vector_format(fmt)
        self._formats = formats
        self.metadata = MappingProxyType(dict(metadata or {}))
        field_metadata = dict(field_metadata or {})
        unknown = [name for name in field_metadata if name not in formats]
        if unknown:
            raise GraphValidationError(
                f"GPUSchema field_metadata names unknown fields {quote_names(unknown)} (fields: {quote_names(formats)})"
            )
        self._field_metadata = {name: MappingProxyType(dict(value)) for name, value in field_metadata.items()}

    @property
    def names(self) -> tuple:
        """Column names in order."""
        return tuple(self._formats)

    def field_metadata(self, name: str) -> Mapping:
        """Adapter-defined metadata of column ``name`` (empty when none was given).

        Raises :class:`~gpuviz.GraphKeyError` (a ``KeyError``) for an unknown
        field; never interprets the metadata.
        """
        if name not in self._formats:
            raise self._unknown(name)
        return self._field_metadata.get(name, _EMPTY)

    def __getitem__(self, name):
        try:
            return self._formats[name]
        except KeyError:
            raise self._unknown(name) from None

    def _unknown(self, name) -> GraphKeyError:
        return GraphKeyError(
            f'GPUSchema field "{name}" not found ({len(self._formats)} fields: {quote_names(self._formats)})'
        )

    def __iter__(self):
        return iter(self._formats)

    def __len__(self) -> int:
        return len(self._formats)

    def __eq__(self, other) -> bool:
        if not isinstance(other, GPUSchema):
            return NotImplemented
        return list(self._formats.items()) == list(other._formats.items())

    __hash__ = None

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}: {fmt.name}" for name, fmt in self._formats.items())
        return f"GPUSchema({fields})"
