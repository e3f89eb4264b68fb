"""The presentation pass of a TraceViewer frame: the tracks' frame corner
copied into the canvas target (the shared
:class:`~gpuviz.widgets.presenter.FramePresenter`), the overlay drawn over it."""

from __future__ import annotations

from ..presenter import FramePresenter
from .graph import BACKGROUND

__all__ = ["Presenter"]


class Presenter(FramePresenter):
    """Copies a TraceGraph's frame corner into a target and draws an overlay
    over it. Records only; never submits."""

    def __init__(self, device, graph):
        super().__init__(device, graph.color, label="trace-viewer-present", clear_color=(*BACKGROUND, 1))
        self.graph = graph

    def present(self, encoder, target_view, dst_size, overlay) -> None:
        super().present(encoder, target_view, self.graph.render_size, dst_size, overlay)
