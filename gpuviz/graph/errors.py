"""The gpuviz error family, as the graph layer and its users import it.

The classes are defined in :mod:`gpuviz.errors`, a leaf module, so that
:mod:`gpuviz.formats` (below the graph) raises the same family without
importing the graph package. ``from gpuviz.graph.errors import X`` keeps
working for every name below. Every message starts with the class of object
and its quoted ID, then states the numbers.
"""

from ..errors import (DependencyError, DeviceMismatchError, DuplicateIdError, GraphCycleError, GraphError,
                      GraphIndexError, GraphKeyError, GraphLookupError, GraphStateError, GraphTypeError,
                      GraphValidationError, NodeCompileError, OverrideError, UsageError, ViewRangeError)

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
