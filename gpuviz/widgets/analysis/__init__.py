"""The data-analysis consumer: :class:`DataAnalysis` and the parts it composes.

One module per concept: :mod:`.data` (Arrow ingestion and edge arithmetic),
:mod:`.parameters` (host-side view state), :mod:`.graph` (the compiled command
graph and its GPU resources), :mod:`.render` (panel layout, render node,
presentation), :mod:`.controls` (ipywidgets), :mod:`.interaction` (pan and
zoom) and :mod:`.widget` (the widget and its frame loop); WGSL in
``shaders/``. The public path is ``gpuviz.widgets.DataAnalysis``.
"""

from .widget import DataAnalysis

__all__ = ["DataAnalysis"]
