"""Jupyter widgets: the GPU canvas and the graph inspector, shared by every
consumer widget, and one subpackage per consumer (:mod:`.analysis`:
:class:`DataAnalysis`; :mod:`.culling`: :class:`FrustumCulling`; :mod:`.trace`: :class:`TraceViewer`).

Importing this package imports ipywidgets, anywidget and jupyter_rfb (through
rendercanvas's Jupyter backend); ``import gpuviz`` alone does not.
"""

from .canvas import TEXTURE_FORMAT, GPUCanvas, draw_offscreen
from .inspector import GraphInspector
from .analysis import DataAnalysis
from .culling import FrustumCulling
from .trace import TraceViewer
from .show import show
from . import registry  # registers the GPU side panel's comm target

__all__ = ["GPUCanvas", "GraphInspector", "draw_offscreen", "TEXTURE_FORMAT", "DataAnalysis", "FrustumCulling", "TraceViewer", "show", "registry"]
