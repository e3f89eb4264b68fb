"""The GPU policy of a trace view (issue 14): time window, expansion,
filters, focus and level of detail, as buffers a compiled graph reads.

:class:`TraceViewState` is the CPU state and :class:`GPUTraceInteraction`
the per-frame compute work (built once per capacity tier; ``GPUTraceFrame``
is its earlier name, kept for one release); its numpy model is
:class:`gpuviz.oracles.trace.TraceViewOracle`. The widget that draws the
outputs is :mod:`gpuviz.widgets.trace`.
"""

from .frame import (DENSITY, EDGES, MERGED, SPANS, STATS, GPUTraceFrame, GPUTraceInteraction,
                    TraceLayout)
from .state import FOCUS_MODES, SEARCH_MODES, TraceViewState, column_bounds

__all__ = ["GPUTraceInteraction", "GPUTraceFrame", "TraceLayout", "TraceViewState", "column_bounds",
           "SPANS", "MERGED", "DENSITY", "EDGES", "STATS", "FOCUS_MODES", "SEARCH_MODES"]
