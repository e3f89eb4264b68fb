"""When :class:`~gpuviz.widgets.DataAnalysis` renders a parameter change.

Two rules, kept in one place. Frames never nest: while a frame is encoded
or drawn, something it sets (the inspector's report) may have observers
that change a parameter; that change is drawn by the next frame, never by
a frame recorded inside this one (which rendered twice per change and
submitted an encoder while another was still open). And on a page,
changes that arrive faster than the canvas shows frames (a slider or brush
drag while the browser is behind) do not each encode and submit the graph:
once an update frame waits to be shown, the canvas frame that shows it
encodes every later change at once.

Host-side only: never encodes, submits or reads back.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["FrameGate"]


class FrameGate:
    """Frame-loop state of one DataAnalysis.

    Parameters
    ----------
    canvas : GPUCanvas
        Its ``get_closed`` says whether frames may still follow.

    Attributes
    ----------
    rendering : bool
        True while a frame is encoded or drawn (inside :meth:`scope`).
    """

    def __init__(self, canvas):
        self.canvas = canvas
        self.rendering = False
        self._waiting = False  # an update frame was submitted and no canvas frame has shown it yet
        self._presenting = False  # the canvas has drawn a frame (it is on a page)

    @contextlib.contextmanager
    def scope(self):
        """Marks a frame in progress (nestable: the outer one ends it)."""
        outer, self.rendering = self.rendering, True
        try:
            yield
        finally:
            self.rendering = outer

    def update_submitted(self) -> None:
        """The widget submitted an update frame; the canvas is asked to show it."""
        self._waiting = True

    def canvas_frame(self) -> None:
        """A live canvas frame is being drawn: it shows every update so far."""
        self._presenting, self._waiting = True, False

    def defer_update(self) -> bool:
        """Whether a parameter change should wait for the canvas frame that
        shows the waiting update (which then encodes it): only when such a
        frame will come, i.e. the canvas has drawn before and an event loop
        runs (a Jupyter kernel; not scripts or tests without one)."""
        if not (self._waiting and self._presenting) or self.canvas.get_closed():
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True
