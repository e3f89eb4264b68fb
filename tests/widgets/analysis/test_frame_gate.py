"""FrameGate on its own (host-side): when a change may wait for the canvas."""

import asyncio

from gpuviz.widgets.analysis.frame_gate import FrameGate


class Canvas:
    closed = False

    def get_closed(self):
        return self.closed


def test_a_change_waits_only_for_a_canvas_frame_that_will_come():
    canvas = Canvas()
    gate = FrameGate(canvas)

    async def on_a_loop():
        assert not gate.defer_update()  # nothing waits to be shown
        gate.update_submitted()
        assert not gate.defer_update()  # the canvas never drew: maybe not on a page
        gate.canvas_frame()
        assert not gate.defer_update()  # that frame showed the update
        gate.update_submitted()
        assert gate.defer_update()  # the next canvas frame will show it: later changes join it
        canvas.closed = True
        assert not gate.defer_update()
        canvas.closed = False
        return gate.defer_update()

    assert asyncio.run(on_a_loop())
    assert not gate.defer_update()  # no event loop (a script): no canvas frame follows by itself


def test_scope_marks_a_frame_in_progress_and_nests():
    gate = FrameGate(Canvas())
    with gate.scope():
        assert gate.rendering
        with gate.scope():
            assert gate.rendering
        assert gate.rendering  # the outer frame is still in progress
    assert not gate.rendering
    try:
        with gate.scope():
            raise RuntimeError("encode failed")
    except RuntimeError:
        pass
    assert not gate.rendering
