"""Argument checks the widgets share (named errors, messages that start with
the widget's name)."""

from __future__ import annotations

import operator

from ..errors import GraphTypeError, GraphValidationError

__all__ = ["check_integer"]


def check_integer(owner: str, name: str, value, *, low=None) -> int:
    """``value`` as a Python int: GraphTypeError unless it is an integer (a
    bool is not), GraphValidationError when below ``low`` (None: no bound).
    It does not convert floats or strings; messages start with ``owner``."""
    if isinstance(value, bool):
        raise GraphTypeError(f"{owner} {name} must be an integer (got {value!r})")
    try:
        value = operator.index(value)
    except TypeError:
        raise GraphTypeError(f"{owner} {name} must be an integer (got {value!r})") from None
    if low is not None and value < low:
        raise GraphValidationError(f"{owner} {name} must be >= {low} (got {value})")
    return value
