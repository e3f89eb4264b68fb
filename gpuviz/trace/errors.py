"""Errors of the trace importers and the trace model.

A leaf module: it imports only :mod:`gpuviz.errors`, so every importer
(Chrome, Kineto, OTLP, Parquet) raises the same classes.
"""

from ..errors import GraphValidationError

__all__ = ["TraceFormatError", "TraceSchemaError"]


class TraceFormatError(GraphValidationError):
    """A trace file cannot be read (not a trace, empty, garbage), or, in
    strict mode, holds the first problem found.

    The message names the file, the byte offset or event index, and the
    reason: ``TraceFormatError "t.json" at event 12: E without B``.
    The attributes ``path``, ``offset``, ``index`` and ``reason`` hold the
    same facts (``None`` where unknown). It is a ``ValueError``.
    """

    def __init__(self, path, reason, *, offset=None, index=None):
        self.path = None if path is None else str(path)
        self.reason = reason
        self.offset = offset
        self.index = index
        where = ""
        if offset is not None:
            where = f" at byte {offset}"
        elif index is not None:
            where = f" at event {index}"
        super().__init__(f'TraceFormatError "{self.path}"{where}: {reason}')

    def __reduce__(self):
        # Picklable across worker processes (multi-rank load).
        return (TraceFormatError, (self.path, self.reason), {"offset": self.offset, "index": self.index,
                                                              "args": self.args})

    def __setstate__(self, state):
        self.offset, self.index, self.args = state["offset"], state["index"], state["args"]


class TraceSchemaError(TraceFormatError):
    """An Arrow table given to the trace model lacks a required column, has
    a column of the wrong type, or holds values out of range (negative
    duration, a thread row that does not exist, a link to no span)."""

    def __init__(self, table, reason):
        self.table = table
        super().__init__(table, reason)
        self.args = (f'TraceSchemaError "{table}": {reason}',)

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (TraceSchemaError, (self.table, self.reason))
