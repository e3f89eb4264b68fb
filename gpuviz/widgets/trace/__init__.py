"""TraceViewer: the hierarchical trace timeline widget (issue 14)."""

from .widget import FOCUS_MODES, TraceViewer

__all__ = ["TraceViewer", "FOCUS_MODES"]
