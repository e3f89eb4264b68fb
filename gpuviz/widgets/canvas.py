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

Frame delivery, not the GPU, limits interactive notebooks: each frame is
read back, JPEG-encoded and sent over the kernel's websocket while the
browser confirms earlier ones. The canvas keeps more frames in flight than
jupyter_rfb's default and encodes the RGBA readback directly, skipping the
RGBA to RGB copy.
"""

from __future__ import annotations

import time

import numpy as np
from rendercanvas.jupyter import JupyterRenderCanvas
from rendercanvas.offscreen import OffscreenRenderCanvas

from ..device import request_device

__all__ = ["GPUCanvas", "draw_offscreen", "TEXTURE_FORMAT"]

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


def draw_offscreen(drawable, *, width: int, height: int, device=None) -> np.ndarray:
    """Render ``drawable`` once through rendercanvas's offscreen backend.

    Returns an ``(height, width, 4)`` uint8 RGBA array: the path for tests,
    documentation images and CI, with no browser or event loop.
    """
    device = device or request_device()
    canvas = OffscreenRenderCanvas(size=(int(width), int(height)), pixel_ratio=1.0)
    context = _configure(canvas, device)
    canvas.request_draw(lambda: _render_into(context, device, drawable))
    image = np.asarray(canvas.draw())
    canvas.close()
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
        self._context = _configure(self, self.device)
        self.add_event_handler(self._route_event, "*")
        self.request_draw(self._draw_frame_now)

    def _draw_frame_now(self) -> None:
        _render_into(self._context, self.device, self.drawable)
        self.frames_drawn += 1

    def _route_event(self, event) -> None:
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
