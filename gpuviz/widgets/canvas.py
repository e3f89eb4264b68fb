"""GPUCanvas: a wgpu canvas widget for Jupyter that draws only on demand.

Built on rendercanvas's Jupyter backend (a jupyter_rfb RemoteFrameBuffer).
The owner of the canvas is a *drawable*: any object with

``draw(encoder, target_view, size)``
    Record the frame into ``encoder``, rendering to ``target_view`` (a
    ``rgba8unorm`` texture view of ``size = (width, height)`` pixels). Must not
    submit: the canvas submits once per frame.
``handle_event(event) -> bool`` (optional)
    Receive pointer, wheel, key and resize events; return True when the
    frame must be redrawn.
``frame_submitted()`` (optional)
    Called right after the canvas submitted the frame ``draw`` recorded:
    readbacks recorded in it may map from then on (a draw that raised is
    never submitted, and this is not called for it).
``handle_device_lost(message)`` (optional)
    Called once when the canvas finds its device lost
    (``"GPU device lost: ..."``); the canvas draws nothing after that.

Frame production, not the GPU, limits interactive notebooks: each frame is
rendered, read back, JPEG-encoded and sent over the kernel's websocket. While
the pointer is down or the wheel turning the canvas renders at a reduced
scale (chosen from the measured frame cost, see :mod:`.frame_rate`) and the
browser upscales it; when the interaction ends (pointer up, or a short idle
time after the last event) one full-resolution lossless frame follows. It
keeps more frames in flight than jupyter_rfb's default and encodes the RGBA
readback directly, skipping the RGBA to RGB copy. Until the first frame
exists the browser shows a placeholder (``"compiling…"``), and a pending
indicator while a frame takes longer than ``pending_after`` seconds.

Internals of rendercanvas and jupyter_rfb used here (all in this module):
rendercanvas's size record (to render below the browser's pixel ratio),
jupyter_rfb's frame counters, stats and lossless-redraw timer (to send a
frame it encoded itself) and its front-end module's default export (renamed
so that ``canvas.js`` can wrap it; without a match the overlays are left out).
"""

from __future__ import annotations

import asyncio
import contextlib
import operator
import time
from pathlib import Path

import jupyter_rfb.widget
import numpy as np
import traitlets
from rendercanvas.jupyter import JupyterRenderCanvas
from rendercanvas.offscreen import OffscreenRenderCanvas

from ..device import request_device
from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from .device_loss import device_lost_message
from .frame_rate import FrameWindow, InteractionScale
from .lifecycle import close_widget_tree

__all__ = ["GPUCanvas", "draw_offscreen", "check_offscreen_size", "TEXTURE_FORMAT"]

#: The target format every gpuviz drawable renders into.
TEXTURE_FORMAT = "rgba8unorm"

try:  # simplejpeg encodes RGBA without an intermediate RGB copy
    import simplejpeg
except ImportError:  # pragma: no cover - jupyter_rfb then falls back on its own encoders
    simplejpeg = None


_HERE = Path(__file__).parent
#: A started frame not sent after this long counts as failed (rendercanvas logs a failed present).
_STUCK_SECONDS = 5.0


#: The custom message type of a frame confirmation sent by canvas.js.
_FEEDBACK = "gpuviz_frame_feedback"


def _front_end() -> tuple:
    """jupyter_rfb's ESM with its default export renamed, then canvas.js (which
    wraps it and replaces how frames are confirmed); the CSS likewise, and
    whether canvas.js is in. Falls back on jupyter_rfb's own module."""
    rfb_js, rfb_css = jupyter_rfb.widget.JS, jupyter_rfb.widget.CSS
    marker = "export default () =>"
    known = ("class RendercanvasAnywidgetModel {", "  _send_response () {", "  _request_animation_frame () {")
    if (rfb_js.count(marker) != 1 or not all(rfb_js.count(k) == 1 for k in known)
            or "  onEvent (event) {" not in rfb_js):  # pragma: no cover
        return rfb_js, rfb_css, False  # a jupyter_rfb whose module we do not know
    js = rfb_js.replace(marker, "const rfbWidget = () =>") + "\n" + (_HERE / "canvas.js").read_text()
    return js, rfb_css + "\n" + (_HERE / "canvas.css").read_text(), True


_ESM, _CSS, _OWN_FRONT_END = _front_end()


def _configure(canvas, device):
    """Create and configure the canvas's wgpu context (before any draw: a
    canvas without a context cancels its draws)."""
    context = canvas.get_context("wgpu")
    context.configure(device=device, format=TEXTURE_FORMAT)
    return context


def _render_into(context, device, drawable) -> None:
    """One frame: record the drawable into the context's texture, submit.
    Holds the drawable's ``call_lock`` where it has one, so a call from
    another thread cannot change the widget between draw and submission."""
    with getattr(drawable, "call_lock", None) or contextlib.nullcontext():
        texture = context.get_current_texture()
        encoder = device.create_command_encoder(label="gpuviz-frame")
        drawable.draw(encoder, texture.create_view(), (texture.width, texture.height))
        device.queue.submit([encoder.finish()])
        submitted = getattr(drawable, "frame_submitted", None)
        if submitted is not None:
            submitted()


def check_offscreen_size(device, *, width, height) -> tuple:
    """``(width, height)`` as ints, each checked against 1 to the device's
    ``max-texture-dimension-2d`` (rendercanvas would log a failed draw and
    return a non-image).

    Raises
    ------
    GraphTypeError
        A size that is not an integer (bools and floats included).
    GraphValidationError
        A size below 1 or above the device limit.
    """
    limit = int(device.limits["max-texture-dimension-2d"])
    sizes = []
    for name, value in (("width", width), ("height", height)):
        try:
            if isinstance(value, bool):
                raise TypeError
            value = operator.index(value)
        except TypeError:
            raise GraphTypeError(f"draw_offscreen {name} must be an integer number of pixels (got {value!r})") from None
        if not 1 <= value <= limit:
            raise GraphValidationError(
                f"draw_offscreen {name} must be from 1 to the device's max-texture-dimension-2d of {limit} "
                f"pixels (got {value})")
        sizes.append(value)
    return tuple(sizes)


def draw_offscreen(drawable, *, width: int, height: int, device=None) -> np.ndarray:
    """Render ``drawable`` once through rendercanvas's offscreen backend.

    Returns an ``(height, width, 4)`` uint8 RGBA array: the path for tests,
    documentation images and CI, with no browser or event loop.

    Raises
    ------
    GraphTypeError, GraphValidationError
        See :func:`check_offscreen_size`.
    GraphStateError
        The device is lost, or the backend produced no image.
    Exception
        Whatever ``drawable.draw`` raised (rendercanvas alone would only log it).
    """
    device = device or request_device()
    width, height = check_offscreen_size(device, width=width, height=height)
    lost = device_lost_message(device)
    if lost is not None:
        raise GraphStateError(f"draw_offscreen cannot render: {lost}")
    canvas = OffscreenRenderCanvas(size=(width, height), pixel_ratio=1.0)
    failures = []

    def frame():
        try:
            _render_into(context, device, drawable)
        except Exception as error:  # raised below, after rendercanvas has finished its draw
            failures.append(error)

    try:
        context = _configure(canvas, device)
        canvas.request_draw(frame)
        image = np.asarray(canvas.draw())
    finally:
        canvas.close()
    if failures:
        raise failures[0]
    if image.shape != (height, width, 4) or image.dtype != np.uint8:
        raise GraphStateError(f"draw_offscreen got no {width}x{height} image from the offscreen canvas "
                              f"(shape {image.shape}, dtype {image.dtype})")
    return image


class GPUCanvas(JupyterRenderCanvas):
    """A resizable notebook canvas whose frames a drawable records on the GPU.

    Parameters
    ----------
    drawable : object
        See the module docstring: ``draw(encoder, target_view, size)`` and an
        optional ``handle_event(event) -> bool``.
    device : wgpu.GPUDevice, optional
        Defaults to :func:`gpuviz.request_device`.
    size : (int, int)
        Initial logical size in CSS pixels.
    max_buffered_frames : int
        At most this many frames in flight to the browser (jupyter_rfb's
        default is 2); within it the window adapts to the measured round trip
        (see :class:`~gpuviz.widgets.frame_rate.FrameWindow`), 3 to it, from 4.
    quality : int
        JPEG quality while interacting; a lossless frame follows when idle.
    interaction_scale : float, optional
        Render scale per direction while the pointer is down or the wheel
        turns: None picks it from the measured frame cost (0.5, 0.375 or
        0.25; ``canvas.interaction.max_scale`` raises the ceiling, see
        :class:`~gpuviz.widgets.frame_rate.InteractionScale`); 1.0 turns
        reduced frames off.
    frame_budget : float
        Seconds a frame may cost while interacting (the adaptive scale's target).
    idle_delay : float
        Seconds without pointer or wheel events after which an interaction
        ends and the full-resolution frame is drawn (while a button is held:
        ``canvas.interaction.hold_delay``, 0.5 s; pointer up ends it at once).
    pending_after : float
        Seconds after which a requested frame that has not been sent shows
        the pending indicator (also set before a frame predicted to take longer).
    placeholder : str
        Text shown until the first frame exists.
    clock : callable
        Seconds on a monotonic clock (default ``time.perf_counter``): what
        frame costs, the pending indicator's lateness and the browser's
        delivery intervals are measured on. Tests pass a fake one to time
        frames without sleeping; the loop's timers still run in real time.

    Notes
    -----
    Draws only when something changed: on a resize, on an event the drawable
    accepts, or on :meth:`request_draw`. Nothing is sent while idle. The canvas
    submits one command buffer per frame; it never reads back anything but the
    presented frame. A reduced frame reaches the drawable as a smaller
    ``size`` with :meth:`get_pixel_ratio` scaled alike, while
    :meth:`get_logical_size` (what events are measured in) stays the
    browser's. It does not throttle events: every accepted event requests a
    draw, and the frame drawn after the last event reflects it.
    """

    _esm = _ESM
    _css = _CSS
    #: Shown by the browser until the first frame is sent (then "").
    placeholder = traitlets.Unicode("compiling…").tag(sync=True)
    #: True while a requested frame is late (``pending_after``) or predicted to be.
    pending = traitlets.Bool(False).tag(sync=True)
    #: Scale of the last frame sent (1.0: full resolution).
    render_scale = traitlets.Float(1.0).tag(sync=True)
    # The browser's last frame confirmation. canvas.js sends it as a custom message
    # (_FEEDBACK): a synced trait goes through ipywidgets, which sends an update only
    # once the kernel has answered the previous one and echoes each back, so frames in
    # flight were released a kernel round trip late. Set here, never sent to the browser.
    _frame_feedback = traitlets.Dict({}).tag(sync=not _OWN_FRONT_END, echo_update=False)

    def __init__(self, drawable, *, device=None, size=(640, 400), max_buffered_frames: int = 8,
                 quality: int = 80, interaction_scale: float | None = None, frame_budget: float = 1 / 30,
                 idle_delay: float = 0.2, pending_after: float = 0.3, placeholder: str = "compiling…",
                 clock=time.perf_counter, **kwargs):
        # min_fps=0: nothing is drawn or sent while idle. max_fps=60 lifts
        # rendercanvas's default 30 fps cap on the scheduler's ticks.
        kwargs.setdefault("max_fps", 60)
        self._native_size = None  # (logical w, logical h, pixel ratio) of the browser's last resize
        super().__init__(size=size, update_mode="ondemand", min_fps=0, **kwargs)
        self.drawable = drawable
        self.clock = clock
        self.device = device or request_device()
        self.max_buffered_frames = max_buffered_frames
        self.quality = quality
        self.placeholder = str(placeholder)
        self.pending_after = float(pending_after)
        self.interaction = InteractionScale(idle_delay=idle_delay, frame_budget=frame_budget,
                                            fixed_scale=interaction_scale)
        #: Frames allowed in flight now (adapts to the round trip, at most ``max_buffered_frames``).
        self.window = FrameWindow(low=3, high=max_buffered_frames, start=4)
        self.frames_drawn = 0
        #: Frames sent below full resolution, and full-resolution frames sent after an interaction.
        self.reduced_frames = 0
        self.settle_frames = 0
        #: Seconds the server side of the last sent frame took (render, readback, encode), or None.
        self.last_frame_seconds = None
        #: ``"GPU device lost: ..."`` once a frame found the device lost, else None.
        self.device_lost = None
        self._scale = 1.0  # the scale rendercanvas's size record holds now
        self._frame_started = None  # clock() at the start of the frame being produced
        self._frame_submitted = None  # clock() when that frame's commands were submitted
        self._requested_at = None  # clock() of the oldest draw request not yet sent
        self._settle_next = False  # the next frame ends an interaction: full size, lossless
        self._again = False  # a draw was requested while a frame was being produced
        self._wanted = False  # a draw was requested and no frame has started since
        self._soon = set()  # names of call_soon callbacks queued and not yet run
        self._timers = {}
        self._sent_pixels = {}  # frame index -> pixels, until the browser confirms it
        self._last_confirmed = None  # (index, clock()) of the last confirmation
        self._context = _configure(self, self.device)
        self.observe(self._on_feedback, names="_frame_feedback")
        self.add_event_handler(self._route_event, "*")
        self.request_draw(self._draw_frame_now)

    # ------------------------------------------------------------ frames
    def request_draw(self, draw_function=None) -> None:
        """Schedule a frame (see rendercanvas); arms the pending indicator's
        timer and starts the frame on the next loop iteration when none is
        being produced (not at the scheduler's next tick)."""
        super().request_draw(draw_function)
        if not hasattr(self, "_timers"):
            return  # rendercanvas's own set-up
        self._wanted = True
        if self._frame_started is not None:
            self._again = True  # requested while a frame is produced: the next one is on its way
        else:
            if self._requested_at is None:
                self._requested_at = self.clock()
                self._call_later("pending", self.pending_after, self._mark_pending)
            self._call_soon("start", self._start_frame)

    def _producing(self) -> bool:
        """A frame was started and is not sent yet (its readback may be pending:
        rendercanvas would cancel it if another draw started now)."""
        if self._frame_started is None:
            return False
        submitted = self._frame_submitted
        if submitted is not None and self.clock() - submitted > _STUCK_SECONDS:
            self._frame_started = None  # its present failed (rendercanvas logged it): do not wait forever
            return False
        return True

    def _in_flight(self) -> int:
        return self._rfb_frame_index - int(self._frame_feedback.get("index", 0))

    def _window_open(self) -> bool:
        return self._in_flight() < min(self.window.limit, self.max_buffered_frames)

    def _start_frame(self) -> None:
        """Hand a wanted frame to jupyter_rfb now (it draws it at once), unless
        one is being produced (then when it is sent) or the window is full
        (then at the next confirmation)."""
        if self._wanted and not self._producing() and self._window_open() and not self.get_closed():
            jupyter_rfb.widget.RemoteFrameBuffer.request_draw(self)

    def _rc_request_draw(self):
        # rendercanvas's scheduler tick: the same gate as the immediate path, so that a tick
        # never starts a draw over a frame whose readback is pending nor past the window.
        self._draw_request_time = time.perf_counter()
        self._wanted = True
        if self._producing():
            self._again = True  # the frame after it follows as soon as it is sent
        else:
            self._start_frame()

    def _draw_frame_now(self) -> None:
        if self.device_lost is None:
            lost = device_lost_message(self.device)
            if lost is not None:
                self._stop_drawing(lost)
        if self.device_lost is not None:
            self._requested_at = None  # nothing will be sent: no pending indicator either
            self._cancel("pending")
            self.pending = False
            return  # no texture taken: rendercanvas skips the present
        self._frame_started, self._frame_submitted = self.clock(), None
        self._wanted = self._again = False
        self._set_render_scale(self._next_scale())
        width, height = self.get_physical_size()
        predicted = self.interaction.production_cost(width * height)  # what blocks the kernel
        if predicted is not None and predicted > self.pending_after:
            self.pending = True  # sent before the long render blocks the kernel
        try:
            _render_into(self._context, self.device, self.drawable)
        except BaseException:
            self._frame_started = None  # rendercanvas logs it; no frame follows
            raise
        self._frame_submitted = self.clock()  # its readback is under way from here
        self.frames_drawn += 1

    def _next_scale(self) -> float:
        if self._settle_next or self._native_size is None:
            return 1.0
        width, height, ratio = self._native_size
        return self.interaction.scale(int(width * ratio) * int(height * ratio))

    def _frame_sent(self, array, *, reduced: bool) -> None:
        """Bookkeeping after a frame left: cost model, counters, overlays."""
        now = self.clock()
        started, self._frame_started = self._frame_started, None
        if started is not None:
            self.last_frame_seconds = now - started
            self.interaction.record_frame(now - started, array.shape[0] * array.shape[1])
        self._cancel("pending")
        if self._again:  # requested while this frame was produced: start the next one now
            self._again = False
            self._requested_at = now
            self._call_later("pending", self.pending_after, self._mark_pending)
            self._call_soon("start", self._start_frame)
        else:
            self._requested_at = None
        if self.pending:
            self.pending = False
        if self.placeholder:
            self.placeholder = ""
        self.render_scale = self._scale
        self.interaction.touch(now)
        self.window.sent(self._rfb_frame_index, now, in_flight=self._in_flight())
        self._sent_pixels[self._rfb_frame_index] = array.shape[0] * array.shape[1]
        if reduced:
            self.reduced_frames += 1

    def _on_feedback(self, change) -> None:
        """The browser confirmed frames up to an index: its delivery rate, when
        it had more frames waiting (so the interval is its own cost)."""
        index = int(change["new"].get("index", 0))
        now = self.clock()
        self.window.confirmed(index, now)
        if self._wanted:
            self._call_soon("start", self._start_frame)  # the window may have room now
        pixels = self._sent_pixels.pop(index, None)
        for old in [i for i in self._sent_pixels if i < index]:
            del self._sent_pixels[old]
        last, self._last_confirmed = self._last_confirmed, (index, now)
        if pixels is None or last is None or index != last[0] + 1:
            return
        if self._rfb_frame_index > index:  # still frames in flight: the browser was busy all along
            self.interaction.record_delivery(now - last[1], pixels)

    def _mark_pending(self) -> None:
        if self._requested_at is not None and not self.get_closed():
            self.pending = True

    # ------------------------------------------------------------ reduced resolution
    def _set_render_scale(self, scale: float) -> None:
        """Render ``scale`` times the browser's pixels per direction. The one
        place that writes rendercanvas's size record (its jupyter backend does
        the same on a resize); the change is not emitted as a resize event."""
        if self._native_size is None or scale == self._scale:
            return
        width, height, ratio = self._native_size
        info = self._size_info
        changed = info["changed"]
        info.set_physical_size(max(1, int(width * ratio * scale)), max(1, int(height * ratio * scale)),
                               ratio * scale)
        info["changed"] = changed  # a browser resize still emits its event; a scale change does not
        self._scale = scale

    def _rfb_handle_msg(self, widget, content, buffers):
        # canvas.js confirms frames in a message of their own (_FEEDBACK) or, while events
        # flow, riding on the next one (its "gpuviz_feedback"): fewer messages each way.
        if isinstance(content, dict) and isinstance(content.get("gpuviz_feedback"), dict):
            self._take_feedback(content.pop("gpuviz_feedback"))
        if content.get("type") == _FEEDBACK:
            self._take_feedback(content)
            return None
        return super()._rfb_handle_msg(widget, content, buffers)

    def _take_feedback(self, content) -> None:
        """A confirmation from canvas.js becomes ``_frame_feedback`` (what jupyter_rfb's own module syncs)."""
        try:
            feedback = {key: float(content[key]) for key in ("timestamp", "localtime")}
            feedback["index"] = int(content["index"])
            if content.get("received") is not None:  # when the frame reached the browser
                feedback["received"] = float(content["received"])
        except (KeyError, TypeError, ValueError):
            return  # not a confirmation canvas.js sends: ignored like any unknown message
        if feedback["index"] > int(self._frame_feedback.get("index", 0)):
            self._frame_feedback = feedback

    def handle_event(self, event):
        """jupyter_rfb hook, called as each browser event arrives: a resize
        keeps the current render scale; pointer and wheel events drive the
        interaction's scale and its end on arrival (rendercanvas hands them
        to the drawable only at the next frame, which may be waiting for the
        browser)."""
        if event.get("event_type") == "resize":
            self._native_size = (float(event["width"]), float(event["height"]), float(event["pixel_ratio"]))
            self._scale = None  # force the size record to be rewritten at the current scale
            scale = self._next_scale()
            width, height, ratio = self._native_size
            self._size_info.set_physical_size(max(1, int(width * ratio * scale)),
                                              max(1, int(height * ratio * scale)), ratio * scale)
            self._scale = scale
            return None
        if self.device_lost is None:
            was = self.interaction.interacting
            if self.interaction.on_event(event, self.clock()):
                self._call_later("idle", self.interaction.delay(), self._check_idle)
                self._settle_next = False
            elif was:
                self._settle()  # pointer up: the drawable sees it before that full frame is drawn
        result = super().handle_event(event)
        # Hand the event to the drawable on the next loop iteration rather than at the
        # scheduler's next tick (up to 1/max_fps later, and one more tick before its frame).
        self._call_soon("events", self._flush_events)
        return result

    def _flush_events(self) -> None:
        if not self.get_closed():
            self._process_events()  # the drawable's handler may request_draw: the frame starts next

    def get_logical_size(self) -> tuple:
        """The browser's logical size, whatever the render scale."""
        if self._native_size is None:
            return super().get_logical_size()
        return self._native_size[:2]

    def _route_event(self, event) -> None:
        if self.device_lost is not None:
            return
        handler = getattr(self.drawable, "handle_event", None)
        if handler is not None and handler(event):
            self.request_draw()

    def _check_idle(self) -> None:
        """Idle timer: end the interaction once ``idle_delay`` passed since its last event."""
        now = self.clock()
        if self.interaction.settle_due(now):
            self._settle()
        elif self.interaction.interacting:
            delay = self.interaction.last_event + self.interaction.delay() - now
            self._call_later("idle", max(delay, 0.01), self._check_idle)

    def _settle(self) -> None:
        """The interaction ended: the next frame is full size and lossless
        (only needed when a reduced frame is showing or on its way)."""
        self._cancel("idle")
        if self._scale != 1.0 or self.render_scale != 1.0:
            self._settle_next = True
            self.request_draw()

    # ------------------------------------------------------------ timers
    def _call_later(self, name, delay, callback) -> None:
        self._cancel(name)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (tests, offscreen): the owner drives the checks
        self._timers[name] = loop.call_later(delay, callback)

    def _call_soon(self, name, callback) -> None:
        """``callback`` on the next loop iteration, once however often asked before it runs."""
        if name in self._soon:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (tests, offscreen): the owner draws with force_draw
        self._soon.add(name)

        def run():
            self._soon.discard(name)
            callback()

        loop.call_soon(run)

    def _cancel(self, name) -> None:
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    # ------------------------------------------------------------ device loss, offscreen
    def _stop_drawing(self, message: str) -> None:
        """From now on draw nothing and route no events; tell the drawable once."""
        self.device_lost = message
        hook = getattr(self.drawable, "handle_device_lost", None)
        if hook is not None:
            hook(message)

    def draw_offscreen(self, *, width: int, height: int) -> np.ndarray:
        """The same content rendered offscreen: an ``(h, w, 4)`` uint8 array."""
        return draw_offscreen(self.drawable, width=width, height=height, device=self.device)

    def close(self, *args, **kwargs):
        """Close the widget and cancel its timers, and close the output widget
        jupyter_rfb displays for callback errors (it would stay registered)."""
        for name in list(getattr(self, "_timers", ())):
            self._cancel(name)
        output = getattr(self, "_output_context", None)
        if output is not None:
            close_widget_tree(output)
        return super().close(*args, **kwargs)

    # ------------------------------------------------------------ sending
    # jupyter_rfb hook: send one RGBA frame, JPEG-encoded without dropping alpha first;
    # a settle frame as PNG (lossless); a reduced frame schedules no lossless resend of itself.
    def _rfb_send_frame(self, array, is_lossless_redraw=False):
        if array.size == 0:
            return None
        reduced = self._scale is not None and self._scale < 1.0 and not is_lossless_redraw
        # A reduced frame still on its way when the interaction ended goes as it is;
        # the full frame asked for after it is the lossless one.
        if self._settle_next and not is_lossless_redraw and not reduced:
            self._settle_next = False
            self.settle_frames += 1
            quality, self.quality = self.quality, 100  # jupyter_rfb's PNG path, counted as a frame
            try:
                super()._rfb_send_frame(array, False)
            finally:
                self.quality = quality
            self._frame_sent(array, reduced=False)
            return None
        if simplejpeg is None or is_lossless_redraw or self.quality >= 100 or array.ndim != 3:
            super()._rfb_send_frame(array, is_lossless_redraw)
            if not is_lossless_redraw:
                self._frame_sent(array, reduced=reduced)
            return None
        self._send_jpeg(array, reduced=reduced)
        self._frame_sent(array, reduced=reduced)
        return None

    def _send_jpeg(self, array, *, reduced: bool) -> None:
        started = time.perf_counter()
        data = simplejpeg.encode_jpeg(np.ascontiguousarray(array), quality=int(self.quality),
                                      colorspace="RGBA" if array.shape[2] == 4 else "RGB",
                                      colorsubsampling="420", fastdct=True)
        encoded = time.perf_counter()
        self._rfb_frame_index += 1
        self._rfb_last_frame = array
        now = time.time()
        stats = self._rfb_stats
        stats["img_encoding_sum"] += encoded - started
        stats["sent_frames"] += 1
        if stats["start_time"] <= 0:
            stats["start_time"] = now
            self._rfb_last_confirmed_index = self._rfb_frame_index - 1
        if reduced:
            self._rfb_cancel_lossless_draw()  # the settle frame replaces it
        else:
            self._rfb_schedule_lossless_draw(array)
        if self._rfb_pending_display is not None and self._rfb_last_resize_event is not None:
            self._rfb_pending_display.update(self)
        self.send({"type": "framebufferdata", "mimetype": "image/jpeg", "data_b64": None,
                   "index": self._rfb_frame_index, "timestamp": now}, [data])
