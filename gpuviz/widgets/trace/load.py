"""What a TraceViewer opens: a Trace, a path or Arrow tables, turned into a
:class:`gpuviz.trace.Trace` (loading and conversion only, no GPU work)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ...errors import GraphTypeError

__all__ = ["as_trace"]

NAME = "TraceViewer"


def as_trace(trace):
    """A gpuviz.trace.Trace from what TraceViewer takes (a Trace, a path, a
    from_arrow table or dict); GraphTypeError otherwise (a GPUTraceScene
    alone included: it does not keep the names). Does NOT copy a Trace."""
    from ...trace.model import Trace
    from ...trace.scene import GPUTraceScene
    if isinstance(trace, Trace):
        return trace
    if isinstance(trace, (str, os.PathLike)):
        from ...trace.load import load
        return load(trace)
    if isinstance(trace, GPUTraceScene):
        raise GraphTypeError(f"{NAME} needs the Trace a GPUTraceScene was built from (a scene keeps no names, "
                             "threads or args on the CPU): pass TraceViewer(trace)")
    if isinstance(trace, Mapping):
        return Trace.from_arrow(**trace)
    try:
        return Trace.from_arrow(spans=trace)
    except (TypeError, ValueError) as error:
        raise GraphTypeError(f"{NAME} takes a gpuviz.trace.Trace, a path, or what Trace.from_arrow takes "
                             f"(got {type(trace).__name__}: {error})") from error
