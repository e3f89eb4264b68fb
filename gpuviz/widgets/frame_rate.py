"""When a canvas should render below full resolution, and how far below.

While the pointer is down or the wheel turning, a notebook canvas renders
and sends smaller frames (the browser upscales them), then one
full-resolution lossless frame once the interaction ends. This module is
the decision alone, on an explicit clock, with no widget, GPU or event loop,
so that tests can drive it event by event.
"""

from __future__ import annotations

import math

__all__ = ["InteractionScale", "SCALE_LEVELS"]

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
        no end event; a held, unmoving pointer settles too).
    frame_budget : float
        Seconds a frame may cost (render, readback, encode) while
        interacting; the scale is the largest level whose predicted cost fits.
    min_scale : float
        The smallest scale ever chosen.
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
                 fixed_scale: float | None = None):
        self.idle_delay = float(idle_delay)
        self.frame_budget = float(frame_budget)
        self.min_scale = float(min_scale)
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

    def settle_due(self, now: float) -> bool:
        """End the interaction if ``idle_delay`` passed since its last event;
        True when it ended now (the owner then draws the full frame)."""
        if self.interacting and now - self.last_event >= self.idle_delay:
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
        cap = 0.5 if self.delivery_seconds_per_pixel is None else 1.0
        if cost is None or cost <= self.frame_budget:
            return min(cap, 1.0 if cost is not None else 0.5)
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
