"""The gpuviz error family.

A leaf module (it imports nothing) so that every layer, :mod:`gpuviz.formats`
below the graph included, raises the same classes, and every module imports
them from here (``gpuviz`` re-exports them as public names). Each class that matches a builtin also subclasses it
(``ValueError``, ``TypeError``, ``LookupError``, ``KeyError``, ``IndexError``),
so ``except KeyError`` keeps working while ``except GraphError`` catches all.

Every message starts with the class of object and its quoted ID, then states
the numbers: ``GPUCommandGraph buffer "visible-ids" is smaller than compiled
capacity (needs 16000000 bytes, got 8000000)``.
"""

__all__ = [
    "GraphError",
    "GraphValidationError",
    "DuplicateIdError",
    "UsageError",
    "ViewRangeError",
    "DeviceMismatchError",
    "DependencyError",
    "GraphCycleError",
    "GraphStateError",
    "OverrideError",
    "NodeCompileError",
    "GraphTypeError",
    "GraphLookupError",
    "GraphKeyError",
    "GraphIndexError",
]


class GraphError(Exception):
    """Root of every gpuviz graph, table and algorithm error."""


class GraphValidationError(GraphError, ValueError):
    """A value given to the graph is wrong (size, format, range, usage)."""


class DuplicateIdError(GraphValidationError):
    """A buffer, texture or node ID is used twice in one graph."""


class UsageError(GraphValidationError):
    """A declared use is unknown or not allowed by the resource's usage flags."""


class ViewRangeError(GraphValidationError):
    """A view does not fit inside its logical buffer, or is misaligned."""


class DeviceMismatchError(GraphValidationError):
    """A resource belongs to another device than the graph."""


class DependencyError(GraphValidationError):
    """An explicit dependency names a node that does not exist."""


class GraphCycleError(GraphError):
    """The combined hazard and explicit edges form a cycle."""


class GraphStateError(GraphError):
    """The operation is not allowed in the graph's current lifecycle state
    (mutating a compiled graph, compiling twice, encoding after destroy)."""


class OverrideError(GraphValidationError):
    """A per-encoding buffer or texture override does not match the compiled
    capacity, usage or device."""


class NodeCompileError(GraphError):
    """A node's compile callback raised; the graph cleaned up what it had made."""


class GraphTypeError(GraphError, TypeError):
    """An argument has the wrong type (a tuning object of another primitive,
    a non-integer index, an object that is not GPUData or GPUVector)."""


class GraphLookupError(GraphError, LookupError):
    """A name or index does not resolve to anything (an unknown adapter,
    column, field or record); the base of :class:`GraphKeyError` and
    :class:`GraphIndexError`."""


class GraphKeyError(GraphLookupError, KeyError):
    """A named entry does not exist (a table column, a schema field).

    Also a ``KeyError`` so that mapping-style callers keep working; unlike a
    plain ``KeyError``, ``str()`` gives the message without added quotes.
    """

    def __str__(self) -> str:
        # KeyError.__str__ returns repr(key); the message is prose, not a key.
        return Exception.__str__(self)


class GraphIndexError(GraphLookupError, IndexError):
    """An integer index is outside its range (a draw record past capacity)."""
