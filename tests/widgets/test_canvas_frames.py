"""GPUCanvas frame policy without a browser: reduced frames while the pointer
is down or the wheel turns, one full-resolution lossless frame after, the
placeholder before the first frame and the pending flag of a late frame.

Frame costs and delivery intervals are measured on the canvas's injected
clock (:class:`FakeClock`), not by sleeping; only the tests of the loop's
timers (idle settle, late-frame pending) wait in real time.
"""

import asyncio

import numpy as np
import simplejpeg

from gpuviz.widgets.canvas import GPUCanvas
from gpuviz.widgets.frame_rate import SCALE_LEVELS, InteractionScale

from .test_canvas import Quadrants


class Follower(Quadrants):
    """Redraws on every pointer and wheel event; remembers what each frame showed."""

    def __init__(self):
        super().__init__()
        self.last_x = None
        self.drawn = []  # (size, x of the last event this frame reflects)

    def draw(self, encoder, target, size):
        super().draw(encoder, target, size)
        self.drawn.append((tuple(size), self.last_x))

    def handle_event(self, event):
        self.events.append(event["event_type"])
        if event["event_type"] in ("pointer_down", "pointer_move", "pointer_up", "wheel"):
            self.last_x = event.get("x")
            return True
        return False


class FakeClock:
    """A monotonic clock the test moves by hand: ``clock()`` reads it, ``advance(s)`` moves it."""

    def __init__(self, start: float = 100.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _canvas(drawable, **kwargs):
    canvas = GPUCanvas(drawable, size=(64, 48), **kwargs)
    sent = []
    canvas.send = lambda msg, buffers=None: sent.append((msg, buffers))
    canvas._rfb_handle_msg(canvas, {"type": "resize", "width": 64, "height": 48, "pixel_ratio": 1}, [])
    return canvas, sent


def _event(canvas, kind, x, *, buttons=(1,), **extra):
    message = {"type": kind, "x": x, "y": 5, "button": 1 if buttons else 0, "buttons": list(buttons),
               "modifiers": [], "ntouches": 0, "touches": {}, "timestamp": 0, **extra}
    canvas._rfb_handle_msg(canvas, message, [])
    canvas._process_events()  # rendercanvas's scheduler does this on each tick


def _shape(message, buffers):
    if message["mimetype"] == "image/jpeg":
        return simplejpeg.decode_jpeg(bytes(buffers[0]), colorspace="RGB").shape[:2]
    data = bytes(buffers[0])  # PNG: width and height are the IHDR's first two words
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big")


def test_a_drag_renders_reduced_frames_then_one_full_lossless_frame():
    drawable = Follower()
    canvas, sent = _canvas(drawable, interaction_scale=0.5)
    canvas.force_draw()
    assert drawable.drawn[-1] == ((64, 48), None) and _shape(*sent[-1]) == (48, 64)
    _event(canvas, "pointer_down", 10)
    canvas.force_draw()
    for x in (12, 14, 16):
        _event(canvas, "pointer_move", x)
        canvas.force_draw()
    assert [d[0] for d in drawable.drawn[1:]] == [(32, 24)] * 4  # half each direction
    assert [m["mimetype"] for m, _ in sent[1:]] == ["image/jpeg"] * 4
    assert _shape(*sent[-1]) == (24, 32)
    assert canvas.render_scale == 0.5 and canvas.reduced_frames == 4
    assert canvas.get_logical_size() == (64, 48)  # events stay in the browser's coordinates
    assert canvas.get_pixel_ratio() == 0.5  # text drawn by the drawable scales with the frame
    _event(canvas, "pointer_up", 16, buttons=())
    canvas.force_draw()
    assert drawable.drawn[-1] == ((64, 48), 16)  # full size, and it shows the last event
    message, buffers = sent[-1]
    assert message["mimetype"] == "image/png" and _shape(message, buffers) == (48, 64)
    assert canvas.settle_frames == 1 and canvas.render_scale == 1.0
    canvas.force_draw()  # an ordinary redraw afterwards is a full-size JPEG again
    assert sent[-1][0]["mimetype"] == "image/jpeg" and _shape(*sent[-1]) == (48, 64)
    canvas.close()


def test_a_wheel_burst_settles_on_the_idle_timer():
    drawable = Follower()
    canvas, sent = _canvas(drawable, interaction_scale=0.25, idle_delay=0.05)

    async def burst():
        for x in (3, 5, 7):
            _event(canvas, "wheel", x, buttons=(), dx=0, dy=40)
            canvas.force_draw()
            await asyncio.sleep(0.01)  # each event re-arms the timer: no full frame mid-burst
        assert canvas.settle_frames == 0 and canvas.render_scale == 0.25
        await asyncio.sleep(0.15)  # the idle timer fires (on this loop) and asks for the full frame
        assert not canvas.interaction.interacting

    asyncio.run(burst())
    assert [d[0] for d in drawable.drawn] == [(16, 12)] * 3
    canvas.force_draw()
    assert drawable.drawn[-1] == ((64, 48), 7)
    assert sent[-1][0]["mimetype"] == "image/png" and _shape(*sent[-1]) == (48, 64)
    canvas.close()


def test_events_the_drawable_ignores_do_not_reduce_or_settle():
    drawable = Quadrants()  # redraws on pointer_down only
    canvas, sent = _canvas(drawable, interaction_scale=0.5)
    canvas.force_draw()
    _event(canvas, "pointer_move", 5, buttons=())  # hover: no interaction
    assert not canvas.interaction.interacting
    _event(canvas, "pointer_up", 5, buttons=())
    canvas.force_draw()  # nothing reduced was shown: an ordinary full frame, JPEG
    assert drawable.size == (64, 48) and sent[-1][0]["mimetype"] == "image/jpeg"
    assert canvas.settle_frames == 0
    canvas.close()


def test_placeholder_until_the_first_frame():
    canvas, sent = _canvas(Quadrants(), placeholder="compiling…")
    assert canvas.placeholder == "compiling…" and sent == [] and canvas.last_frame_seconds is None
    canvas.force_draw()
    assert canvas.placeholder == "" and len(sent) == 1
    assert 0 < canvas.last_frame_seconds < 60


class Slow(Quadrants):
    """Each draw costs ``seconds`` on ``clock`` (it moves the clock instead of sleeping)."""

    def __init__(self, seconds, clock):
        super().__init__()
        self.seconds, self.clock = seconds, clock

    def draw(self, encoder, target, size):
        self.clock.advance(self.seconds)
        super().draw(encoder, target, size)


def test_pending_is_set_before_a_frame_predicted_to_be_slow_and_cleared_when_sent():
    clock = FakeClock()
    canvas, sent = _canvas(Slow(0.12, clock), pending_after=0.1, clock=clock)
    seen = []
    canvas.observe(lambda change: seen.append(change["new"]), names="pending")
    canvas.force_draw()  # unmeasured: no prediction, nothing flagged
    assert seen == [] and canvas.interaction.predicted_cost(64 * 48) >= 0.1
    canvas.request_draw()
    canvas.force_draw()
    assert seen == [True, False] and not canvas.pending
    canvas.close()


def test_pending_is_set_by_a_timer_when_a_requested_frame_is_late():
    canvas, sent = _canvas(Quadrants(), pending_after=0.05)
    canvas.force_draw()

    async def wait():
        canvas.request_draw()  # nothing draws it here: no scheduler runs in this loop
        await asyncio.sleep(0.02)
        assert not canvas.pending
        await asyncio.sleep(0.1)
        assert canvas.pending

    asyncio.run(wait())
    canvas.force_draw()
    assert not canvas.pending
    canvas.close()


def test_scale_is_chosen_from_the_measured_cost():
    scale = InteractionScale(frame_budget=1 / 30, idle_delay=0.2, max_scale=1.0, hold_delay=0.2)
    assert scale.scale(1_000_000) == 1.0  # not interacting
    scale.on_event({"event_type": "pointer_down", "buttons": (1,)}, now=0.0)
    assert scale.interacting and scale.scale(1_000_000) == 0.5  # nothing measured yet
    for _ in range(20):
        scale.record_frame(0.2, 1_000_000)  # 200 ms at full size: sqrt(1/6) = 0.41 wanted
    assert scale.scale(1_000_000) == 0.375
    assert scale.scale(100_000) == 0.5  # fits the budget at full size, but the browser is not measured yet
    scale.record_delivery(0.001, 1_000_000)  # a fast browser
    assert scale.scale(100_000) == 1.0  # now a small canvas stays at full size
    for _ in range(40):
        scale.record_frame(10.0, 1_000_000)
    assert scale.scale(1_000_000) == SCALE_LEVELS[-1] == scale.min_scale
    assert not scale.settle_due(0.1) and scale.interacting
    scale.on_event({"event_type": "pointer_move", "buttons": (1,)}, now=0.15)
    assert not scale.settle_due(0.3)  # 0.15 s after the last event
    assert scale.settle_due(0.36) and not scale.interacting and scale.scale(1_000_000) == 1.0
    scale.on_event({"event_type": "wheel"}, now=1.0)
    assert scale.interacting
    scale.on_event({"event_type": "pointer_up", "buttons": ()}, now=1.01)
    assert not scale.interacting


def test_hover_moves_do_not_start_an_interaction():
    scale = InteractionScale()
    assert not scale.on_event({"event_type": "pointer_move", "buttons": ()}, now=0.0)
    assert not scale.on_event({"event_type": "key_down"}, now=0.0)
    scale.record_frame(-1.0, 10)  # nonsense samples are ignored
    scale.record_frame(float("nan"), 10)
    scale.record_frame(1.0, 0)
    assert scale.seconds_per_pixel is None
    assert np.isclose(InteractionScale(fixed_scale=0.5).scale(10), 1.0)


def test_a_busy_browser_lowers_the_scale_through_its_confirmations():
    drawable, clock = Follower(), FakeClock()
    canvas, sent = _canvas(drawable, clock=clock)
    for _ in range(3):
        canvas.force_draw()
    assert canvas.interaction.delivery_seconds_per_pixel is None
    canvas._frame_feedback = {"index": 1, "timestamp": 0, "localtime": 0}
    clock.advance(0.06)
    canvas._frame_feedback = {"index": 2, "timestamp": 0, "localtime": 0}  # frame 3 still waiting
    rate = canvas.interaction.delivery_seconds_per_pixel
    assert rate is not None and np.isclose(rate * 64 * 48, 0.06)  # exactly the interval on the clock
    clock.advance(0.05)
    canvas._frame_feedback = {"index": 3, "timestamp": 0, "localtime": 0}  # nothing left in flight
    assert canvas.interaction.delivery_seconds_per_pixel == rate  # an idle browser's interval says nothing
    _event(canvas, "pointer_down", 3)
    canvas.interaction.frame_budget = 0.02  # a 60 ms delivery wants about 0.58: 0.5
    canvas.force_draw()
    assert drawable.drawn[-1][0] == (32, 24)
    canvas.close()


def test_delivery_and_production_models_combine():
    scale = InteractionScale(frame_budget=0.04)
    scale.record_frame(0.01, 1000)
    assert scale.predicted_cost(1000) == scale.production_cost(1000) == 0.01
    scale.record_delivery(0.16, 1000)
    assert scale.predicted_cost(1000) == 0.16 and scale.production_cost(1000) == 0.01
    scale.on_event({"event_type": "wheel"}, now=0.0)
    assert scale.scale(1000) == 0.5  # sqrt(0.04 / 0.16)


def test_a_slow_frame_does_not_end_the_interaction():
    scale = InteractionScale(idle_delay=0.2, hold_delay=0.2)
    scale.on_event({"event_type": "pointer_down", "buttons": (1,)}, now=0.0)
    scale.touch(0.5)  # a frame that kept the kernel busy until 0.5 s (events queued behind it)
    assert not scale.settle_due(0.6) and scale.interacting
    assert scale.settle_due(0.71)
    scale.touch(2.0)  # not interacting: nothing to extend
    assert not scale.interacting and scale.last_event == 0.5


def test_a_reduced_frame_in_flight_when_the_pointer_lifts_is_not_the_lossless_one():
    drawable = Follower()
    canvas, sent = _canvas(drawable, interaction_scale=0.5)
    _event(canvas, "pointer_down", 10)
    canvas.force_draw()
    canvas._settle_next = True  # the pointer lifted while this reduced frame was still being read back
    canvas._rfb_send_frame(np.zeros((24, 32, 4), np.uint8))
    assert sent[-1][0]["mimetype"] == "image/jpeg" and canvas.settle_frames == 0
    canvas.interaction.interacting = False
    canvas.force_draw()
    assert sent[-1][0]["mimetype"] == "image/png" and _shape(*sent[-1]) == (48, 64) and canvas.settle_frames == 1
    canvas.close()


def test_an_interaction_stays_at_half_size_or_below_by_default():
    scale = InteractionScale(frame_budget=1 / 30)
    scale.on_event({"event_type": "wheel"}, now=0.0)
    scale.record_frame(0.001, 1_000_000)
    scale.record_delivery(0.001, 1_000_000)  # cheap everywhere: the ceiling still holds
    assert scale.scale(100_000) == 0.5
    for _ in range(30):
        scale.record_frame(0.5, 1_000_000)  # sqrt(1 / 15) = 0.26 wanted
    assert scale.scale(1_000_000) == 0.25
    assert InteractionScale(max_scale=0.1).max_scale == 0.25  # never below min_scale


def _message(kind, x, **extra):
    return {"type": kind, "x": x, "y": 5, "button": 1, "buttons": [1], "modifiers": [], "ntouches": 0,
            "touches": {}, "timestamp": 0, **extra}


def test_confirmations_arrive_alone_or_riding_on_an_event():
    drawable = Follower()
    canvas, sent = _canvas(drawable)
    for _ in range(3):
        canvas.force_draw()
    seen = []
    canvas.observe(lambda change: seen.append(change["new"]), names="_frame_feedback")
    canvas._rfb_handle_msg(canvas, {"type": "gpuviz_frame_feedback", "index": 1, "timestamp": 1.0,
                                    "localtime": 2.0, "received": 1.5}, [])
    assert seen == [{"index": 1, "timestamp": 1.0, "localtime": 2.0, "received": 1.5}]
    ride = {"index": 2, "timestamp": 3.0, "localtime": 4.0, "received": None}
    canvas._rfb_handle_msg(canvas, _message("pointer_down", 7, gpuviz_feedback=ride), [])
    canvas._process_events()
    assert seen[-1] == {"index": 2, "timestamp": 3.0, "localtime": 4.0}
    assert drawable.events[-1] == "pointer_down" and drawable.last_x == 7  # the event itself goes on
    canvas._rfb_handle_msg(canvas, {"type": "gpuviz_frame_feedback", "index": 1, "timestamp": 0,
                                    "localtime": 0}, [])  # older than the last: ignored
    canvas._rfb_handle_msg(canvas, {"type": "gpuviz_frame_feedback", "index": "x"}, [])  # malformed: ignored
    assert len(seen) == 2 and canvas._frame_feedback["index"] == 2
    canvas.close()


def test_a_full_window_holds_the_next_frame_until_a_confirmation():
    drawable = Follower()
    canvas, sent = _canvas(drawable)
    canvas.window.limit = 2
    for _ in range(2):
        canvas.force_draw()
    assert canvas._in_flight() == 2
    canvas.request_draw()
    canvas._start_frame()
    assert not canvas._rfb_draw_requested  # two in flight: jupyter_rfb is not asked yet
    canvas._frame_feedback = {"index": 1, "timestamp": 0, "localtime": 0}
    canvas._start_frame()
    assert canvas._rfb_draw_requested  # one slot free: the wanted frame goes to jupyter_rfb
    canvas.close()


def test_a_requested_frame_starts_on_the_loop_without_a_scheduler_tick():
    drawable = Follower()
    canvas, sent = _canvas(drawable, interaction_scale=0.5)
    canvas._has_visible_views = True  # jupyter_rfb draws only for a visible view

    async def drag():
        canvas._rfb_handle_msg(canvas, _message("pointer_down", 10), [])
        canvas._rfb_handle_msg(canvas, _message("pointer_move", 20), [])
        for _ in range(500):  # rendercanvas's scheduler does not run here: only the immediate path draws
            if sent:
                break
            await asyncio.sleep(0.01)

    asyncio.run(drag())
    assert sent and drawable.drawn[-1] == ((32, 24), 20)  # reduced, and it shows the move
    canvas.close()


def test_a_held_button_settles_later_than_a_wheel():
    scale = InteractionScale(idle_delay=0.2, hold_delay=0.5)
    scale.on_event({"event_type": "pointer_down", "buttons": (1,)}, now=0.0)
    assert scale.delay() == 0.5 and not scale.settle_due(0.3)  # a slow drag's next move may still come
    assert scale.settle_due(0.5)
    scale.on_event({"event_type": "pointer_up", "buttons": ()}, now=1.0)
    scale.on_event({"event_type": "wheel"}, now=2.0)
    assert scale.delay() == 0.2 and scale.settle_due(2.2)
    assert InteractionScale(idle_delay=0.3, hold_delay=0.1).hold_delay == 0.3  # never shorter than idle_delay
