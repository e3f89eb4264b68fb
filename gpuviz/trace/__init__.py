"""Real traces into Arrow: Chrome JSON, Kineto, OTLP and Parquet importers,
saved ``.gpuviz`` files and the columnar import cache (:func:`save`,
:mod:`.cache`),
lane packing, multi-rank merge, synthetic traces, the GPU scene
(:class:`GPUTraceScene`) and the trace viewer's GPU policy
(:class:`GPUTraceInteraction`, :class:`TraceViewState`; :mod:`.interaction`;
``GPUTraceFrame`` is its earlier name) and the trace's one CPU index
(:class:`TraceIndex`, :mod:`.index`).

``import gpuviz`` does not import this package (it needs pyarrow). Heavier
pieces (loaders, the synthetic generator, the GPU scene) load on first use.
"""

from .errors import TraceFormatError, TraceSchemaError
from .model import Trace
# Eager: these functions share their module's name, and importing the module
# (``import gpuviz.trace.load``) would otherwise bind the module here instead.
from .load import load
from .cache import TraceCacheWarning, save
from .synthetic import synthetic

__all__ = ["load", "save", "Trace", "TraceCacheWarning", "TraceFormatError", "TraceSchemaError", "synthetic", "GPUTraceScene", "TraceIndex",
           "GPUTraceInteraction", "GPUTraceFrame", "TraceViewState"]

# These import wgpu: only on use.
_LAZY = {
    "GPUTraceScene": ("gpuviz.trace.scene", "GPUTraceScene"),
    "TraceIndex": ("gpuviz.trace.index", "TraceIndex"),
    "GPUTraceInteraction": ("gpuviz.trace.interaction", "GPUTraceInteraction"),
    "GPUTraceFrame": ("gpuviz.trace.interaction", "GPUTraceFrame"),
    "TraceViewState": ("gpuviz.trace.interaction", "TraceViewState"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gpuviz.trace' has no attribute {name!r}")
