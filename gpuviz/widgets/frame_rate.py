"""When a canvas should render below full resolution, and how far below.

While the pointer is down or the wheel turning, a notebook canvas renders
and sends smaller frames (the browser upscales them), then one
full-resolution lossless frame once the interaction ends. This module is
the decision alone, on an explicit clock, with no widget, GPU or event loop,
so that tests can drive it event by event.
"""

from __future__ import annotations

import math

__all__ = ["InteractionScale", "FrameWindow", "SCALE_LEVELS"]

#: Render scales (per direction) an interaction may pick: few levels, so a
#: drag does not recreate its target texture on every frame.
SCALE_LEVELS = (1.0, 0.75, 0.5, 0.375, 0.25)

_STARTS = frozenset({"pointer_down", "wheel"})


class InteractionScale:
    """Tracks pointer and wheel interaction and picks the render scale.

    Parameters
    ----------
    idle_delay : float
        Seconds after the last pointer or wheel event at which the
        interaction counts as over even without a ``pointer_up`` (a wheel has
        no end event).
    hold_delay : float
        The same while a button is held (a held, unmoving pointer settles
        too, later: on a busy machine a drag's events may arrive this far
        apart, and settling mid-drag costs a full-size lossless frame).
    frame_budget : float
        Seconds a frame may cost (render, readback, encode) while
        interacting; the scale is the largest level whose predicted cost fits.
    min_scale : float
        The smallest scale ever chosen.
    max_scale : float
        The largest scale chosen while interacting (default 0.5: the browser
        and the kernel-to-browser path, not measured by the cost models well
        enough, carry a quarter of the pixels; 1.0 lets a cheap canvas stay
        at full size).
    fixed_scale : float, optional
        Always use this scale while interacting (no adaptation).

    Notes
    -----
    Two cost models, each in seconds per pixel and an exponential average,
    so that predictions follow the machine's load: producing a frame
    (:meth:`record_frame`: render, readback, encode) and delivering it
    (:meth:`record_delivery`: the interval between two confirmations from a
    browser that had more frames waiting, i.e. its decode-and-show rate). A
    frame's predicted cost is the larger of the two, so a slow browser or
    link lowers the scale as a slow GPU does. It does not schedule anything:
    the owner asks :meth:`scale` before each frame and :meth:`settle_due`
    from a timer.
    """

    def __init__(self, *, idle_delay: float = 0.2, frame_budget: float = 1 / 30, min_scale: float = 0.25,
                 max_scale: float = 0.5, fixed_scale: float | None = None, hold_delay: float = 0.5):
        self.idle_delay = float(idle_delay)
        self.hold_delay = max(self.idle_delay, float(hold_delay))
        self.frame_budget = float(frame_budget)
        self.min_scale = float(min_scale)
        self.max_scale = max(self.min_scale, min(1.0, float(max_scale)))
        self.fixed_scale = None if fixed_scale is None else float(fixed_scale)
        #: True from a pointer_down, a drag's move or a wheel until the interaction ends.
        self.interacting = False
        self.last_event = float("-inf")
        #: Exponential averages of seconds per pixel to produce / to deliver a frame (None: none measured).
        self.seconds_per_pixel = None
        self.delivery_seconds_per_pixel = None
        self._buttons = False

    def on_event(self, event, now: float) -> bool:
        """Note one canvas event at time ``now``; True while an interaction goes on."""
        kind = event.get("event_type")
        if kind == "pointer_up":
            self._buttons = bool(event.get("buttons"))
            if not self._buttons:
                self.interacting = False
            return self.interacting
        dragging = kind == "pointer_move" and bool(event.get("buttons"))
        if kind in _STARTS or dragging:
            self._buttons = self._buttons or kind == "pointer_down" or dragging
            self.interacting = True
            self.last_event = now
        return self.interacting

    def touch(self, now: float) -> None:
        """A frame of the interaction just finished: the idle time counts from
        here too (events that arrived while the kernel was busy with it are
        only seen after it, so a slow frame must not end the interaction)."""
        if self.interacting:
            self.last_event = max(self.last_event, now)

    def delay(self) -> float:
        """Seconds without events after which the current interaction ends."""
        return self.hold_delay if self._buttons else self.idle_delay

    def settle_due(self, now: float) -> bool:
        """End the interaction if :meth:`delay` passed since its last event;
        True when it ended now (the owner then draws the full frame)."""
        if self.interacting and now - self.last_event >= self.delay():
            self.interacting = False
            return True
        return False

    def record_frame(self, seconds: float, pixels: int) -> None:
        """One frame's measured production cost for ``pixels`` rendered pixels."""
        self.seconds_per_pixel = _average(self.seconds_per_pixel, seconds, pixels)

    def record_delivery(self, seconds: float, pixels: int) -> None:
        """Seconds the browser took for one frame of ``pixels`` pixels while it had more waiting."""
        self.delivery_seconds_per_pixel = _average(self.delivery_seconds_per_pixel, seconds, pixels)

    def predicted_cost(self, pixels: int) -> float | None:
        """Seconds a frame of ``pixels`` pixels is expected to cost: the larger
        of producing and delivering it (None: no frame measured yet)."""
        rates = [r for r in (self.seconds_per_pixel, self.delivery_seconds_per_pixel) if r is not None]
        return max(rates) * pixels if rates else None

    def production_cost(self, pixels: int) -> float | None:
        """Seconds producing a frame of ``pixels`` pixels is expected to take (the kernel's share)."""
        return None if self.seconds_per_pixel is None else self.seconds_per_pixel * pixels

    def scale(self, full_pixels: int) -> float:
        """The render scale for the next frame of a ``full_pixels`` canvas:
        1 when not interacting, else the largest level that fits the budget."""
        if not self.interacting:
            return 1.0
        if self.fixed_scale is not None:
            return self.fixed_scale
        cost = self.predicted_cost(full_pixels)
        # Until the browser's delivery rate is known, at most half: the usual win, and a first
        # interaction must not queue full-size frames in a slow browser.
        cap = min(self.max_scale, 0.5 if self.delivery_seconds_per_pixel is None else 1.0)
        if cost is None or cost <= self.frame_budget:
            return max((level for level in SCALE_LEVELS if level <= cap), default=self.min_scale)
        wanted = math.sqrt(self.frame_budget / cost)
        for level in SCALE_LEVELS:
            if level <= min(wanted, cap) and level >= self.min_scale:
                return level
        return max(self.min_scale, SCALE_LEVELS[-1])


def _average(current, seconds, pixels):
    """The exponential average of seconds per pixel after one sample (nonsense samples are ignored)."""
    if pixels <= 0 or not math.isfinite(seconds) or seconds < 0:
        return current
    sample = seconds / pixels
    return sample if current is None else current + 0.3 * (sample - current)


class FrameWindow:
    """How many frames may be on their way to the browser at once.

    Frames are pipelined: while one travels (kernel, Jupyter server,
    websocket, browser) the next is drawn, so the delivered rate is the
    window over the round trip. A larger window only helps while frames do
    not queue on the way; when they do, the round trip grows and so does the
    latency of every frame. The window therefore follows the round trip
    (confirmation time minus send time, both on the kernel's clock, as an
    exponential average so that one late frame on a busy machine does not
    count as a queue): it grows by one while the round trip stays near the
    fastest one seen lately and the window was full, and shrinks by one when
    it exceeds twice that (at most one change per round trip).

    Parameters
    ----------
    low, high : int
        The window's bounds (``high`` is the canvas's ``max_buffered_frames``).
    start : int
        The first window (clamped to the bounds).
    horizon : float
        Seconds over which the fastest round trip is remembered.

    Notes
    -----
    Pure bookkeeping on an explicit clock: it sends and blocks nothing; the
    owner asks :attr:`limit` before starting a frame. It does not tell a slow
    browser from a slow link (both queue frames).
    """

    def __init__(self, *, low: int = 2, high: int = 8, start: int = 4, horizon: float = 3.0):
        self.high = max(1, int(high))
        self.low = min(max(1, int(low)), self.high)
        self.limit = min(self.high, max(self.low, int(start)))
        self.horizon = float(horizon)
        self._sent = {}  # frame index -> (send time, whether the window was full after it)
        self._rtts = []  # (time, round trip) within the horizon
        self._changed = float("-inf")
        self._full = False
        self._average = None  # exponential average of the round trip

    def sent(self, index: int, now: float, *, in_flight: int) -> None:
        """Frame ``index`` left at ``now`` with ``in_flight`` frames unconfirmed (itself included)."""
        self._sent[index] = now
        self._full = self._full or in_flight >= self.limit

    def confirmed(self, index: int, now: float) -> float | None:
        """The browser showed frames up to ``index``: adapt; returns that frame's round trip (None: unknown)."""
        started = self._sent.pop(index, None)
        for old in [i for i in self._sent if i < index]:
            del self._sent[old]
        if started is None or now < started:
            return None
        rtt = now - started
        self._rtts = [(t, r) for t, r in self._rtts if now - t <= self.horizon] + [(now, rtt)]
        base = min(r for _, r in self._rtts)
        average = self._average = rtt if self._average is None else self._average + 0.25 * (rtt - self._average)
        if now - self._changed >= rtt:
            if average > 2 * base + 0.02 and self.limit > self.low:
                self.limit -= 1
                self._changed, self._full = now, False
            elif average <= 1.5 * base + 0.03 and self._full and self.limit < self.high:
                self.limit += 1
                self._changed, self._full = now, False
        return rtt
