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
``handle_device_lost(message)`` (optional)
    Called once when the canvas finds its device lost
    (``"GPU device lost: ..."``); the canvas draws nothing after that.

Frame delivery, not the GPU, limits interactive notebooks: each frame is
read back, JPEG-encoded and sent over the kernel's websocket while the
browser confirms earlier ones. The canvas keeps more frames in flight than
jupyter_rfb's default and encodes the RGBA readback directly, skipping the
RGBA to RGB copy.
"""

from __future__ import annotations

import operator
import time

import numpy as np
from rendercanvas.jupyter import JupyterRenderCanvas
from rendercanvas.offscreen import OffscreenRenderCanvas

from ..device import request_device
from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from .device_loss import device_lost_message

__all__ = ["GPUCanvas", "draw_offscreen", "check_offscreen_size", "TEXTURE_FORMAT"]

#: The target format every gpuviz drawable renders into.
TEXTURE_FORMAT = "rgba8unorm"

try:  # simplejpeg encodes RGBA without an intermediate RGB copy
    import simplejpeg
except ImportError:  # pragma: no cover - jupyter_rfb then falls back on its own encoders
    simplejpeg = None


def _configure(canvas, device):
    """Create and configure the canvas's wgpu context (before any draw: a
    canvas without a context cancels its draws)."""
    context = canvas.get_context("wgpu")
    context.configure(device=device, format=TEXTURE_FORMAT)
    return context


def _render_into(context, device, drawable) -> None:
    """One frame: record the drawable into the context's texture, submit."""
    texture = context.get_current_texture()
    encoder = device.create_command_encoder(label="gpuviz-frame")
    drawable.draw(encoder, texture.create_view(), (texture.width, texture.height))
    device.queue.submit([encoder.finish()])


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
        Frames allowed in flight to the browser (jupyter_rfb's default is 2).
    quality : int
        JPEG quality while interacting; a lossless frame follows when idle.

    Notes
    -----
    Draws only when something changed: on a resize, on an event the drawable
    accepts, or on :meth:`request_draw`. Nothing is sent while idle. The canvas
    submits one command buffer per frame; it never reads back anything but the
    presented frame.
    """

    def __init__(self, drawable, *, device=None, size=(640, 400), max_buffered_frames: int = 4,
                 quality: int = 80, **kwargs):
        # min_fps=0: nothing is drawn or sent while idle. max_fps=60 lifts
        # rendercanvas's default 30 fps cap on the scheduler's ticks.
        kwargs.setdefault("max_fps", 60)
        super().__init__(size=size, update_mode="ondemand", min_fps=0, **kwargs)
        self.drawable = drawable
        self.device = device or request_device()
        self.max_buffered_frames = max_buffered_frames
        self.quality = quality
        self.frames_drawn = 0
        #: ``"GPU device lost: ..."`` once a frame found the device lost, else None.
        self.device_lost = None
        self._context = _configure(self, self.device)
        self.add_event_handler(self._route_event, "*")
        self.request_draw(self._draw_frame_now)

    def _draw_frame_now(self) -> None:
        if self.device_lost is None:
            lost = device_lost_message(self.device)
            if lost is not None:
                self._stop_drawing(lost)
        if self.device_lost is not None:
            return  # no texture taken: rendercanvas skips the present
        _render_into(self._context, self.device, self.drawable)
        self.frames_drawn += 1

    def _stop_drawing(self, message: str) -> None:
        """From now on draw nothing and route no events; tell the drawable once."""
        self.device_lost = message
        hook = getattr(self.drawable, "handle_device_lost", None)
        if hook is not None:
            hook(message)

    def _route_event(self, event) -> None:
        if self.device_lost is not None:
            return
        handler = getattr(self.drawable, "handle_event", None)
        if handler is not None and handler(event):
            self.request_draw()

    def draw_offscreen(self, *, width: int, height: int) -> np.ndarray:
        """The same content rendered offscreen: an ``(h, w, 4)`` uint8 array."""
        return draw_offscreen(self.drawable, width=width, height=height, device=self.device)

    # jupyter_rfb hook: send one RGBA frame, JPEG-encoded without dropping alpha first.
    def _rfb_send_frame(self, array, is_lossless_redraw=False):
        if simplejpeg is None or is_lossless_redraw or self.quality >= 100 or array.ndim != 3:
            return super()._rfb_send_frame(array, is_lossless_redraw)
        if array.size == 0:
            return None
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
        self._rfb_schedule_lossless_draw(array)
        if self._rfb_pending_display is not None and self._rfb_last_resize_event is not None:
            self._rfb_pending_display.update(self)
        self.send({"type": "framebufferdata", "mimetype": "image/jpeg", "data_b64": None,
                   "index": self._rfb_frame_index, "timestamp": now}, [data])
        return None
