"""The data-analysis consumer: :class:`DataAnalysis` and the parts it composes.

One module per concept: :mod:`.data` (Arrow ingestion and edge arithmetic),
:mod:`.parameters` (host-side view state and defaults), :mod:`.graph` (the
compiled command graph and its GPU resources), :mod:`.render` (panel layout,
render node, presentation), :mod:`.controls` (ipywidgets), :mod:`.interaction`
(pointer events: pan and zoom), :mod:`.brushing` (histogram brush, group-bar
toggles), :mod:`.hover` (values under the cursor, read back without waiting),
:mod:`.frame_gate` (when a change renders) and :mod:`.widget` (the widget and
its frame loop); WGSL in ``shaders/``. The public path is ``gpuviz.widgets.DataAnalysis``.
"""

from .widget import DataAnalysis

__all__ = ["DataAnalysis"]
