"""One FrustumCulling frame without Jupyter: camera state turned into buffer
writes, the graph encoded, the visible count sampled through a readback
ring, and the presentation pass (the frame corner copied into the target,
titles and the readout drawn over it).

:class:`~gpuviz.widgets.FrustumCulling` drives a :class:`CullingFrame` from
its canvas; the benchmark drives one directly. Nothing here submits except
the explicit readbacks (:meth:`CullingFrame.read_visible`).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...graph.frame_readbacks import FrameReadbacks
from ...graph.readback_ring import GPUReadbackRing
from ...render.overlay import MUTED_COLOR, TEXT_COLOR, PlotOverlay
from ...render.picking import NO_ID
from ...tables.readback import read_array
from ..presenter import FramePresenter
from .camera import PASS_ALL_PLANES, Camera, camera_frame, planes_of
from .graph import COLORS, CullingGraph, view_rects

__all__ = ["CullingFrame", "overview_fit", "default_camera"]

_READOUT_INTERVAL = 0.1  # seconds between two count samples
_OVERVIEW_MARGIN = 1.08
_MIN_HALF_PIXELS = 1.25  # largest smallest half-size of an instance square in the overview (pixels)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_PASS_ALL = tuple(PASS_ALL_PLANES.ravel().tolist())


def default_camera(extent) -> Camera:
    """A camera standing inside the edge of the scene, above the roofs,
    looking across its centre: about a quarter of a round scene is in view."""
    cx, cy, cz = extent.center
    lo, hi = extent.lo, extent.hi
    reach = max((hi[0] - lo[0]) / 2, (hi[2] - lo[2]) / 2, 3.0 * extent.typical_radius, 1e-3)
    height = max(hi[1] - lo[1], 0.05 * reach)
    eye = (cx + 0.3 * reach, lo[1] + max(1.3 * height, 0.12 * reach), cz + 0.62 * reach)
    target = (cx - 0.12 * reach, lo[1] + 0.2 * height, cz - 0.12 * reach)
    # a scene reaching float32's limits keeps the camera inside them (the GPU's range)
    eye, target = (np.clip(v, -_FLOAT32_MAX, _FLOAT32_MAX) for v in (eye, target))
    return Camera.checked(eye=eye, target=target, near=max(1e-3, 0.002 * reach))


def overview_fit(extent, rect) -> tuple:
    """``(bounds, matrix, clip_per_world)`` of the top-down overview in a
    viewport ``rect = (x, y, w, h)``: the scene's x / z box (centres) grown by
    8 % and widened to the viewport's aspect; x to the right, z down.
    ``bounds = (x0, z0, x1, z1)`` is the world rectangle the viewport shows."""
    _, _, w, h = rect
    lo, hi = extent.lo, extent.hi
    cx, cz = (lo[0] + hi[0]) / 2, (lo[2] + hi[2]) / 2
    hx = max((hi[0] - lo[0]) / 2 * _OVERVIEW_MARGIN, 1e-3)
    hz = max((hi[2] - lo[2]) / 2 * _OVERVIEW_MARGIN, 1e-3)
    if hx / hz < w / h:
        hx = hz * w / h
    else:
        hz = hx * h / w
    m = np.zeros((4, 4))
    m[0, 0], m[0, 3] = 1 / hx, -cx / hx
    m[1, 2], m[1, 3] = -1 / hz, cz / hz
    m[2, 3], m[3, 3] = 0.5, 1.0
    return (cx - hx, cz - hz, cx + hx, cz + hz), m, (1 / hx, 1 / hz)


class _Replay:
    """An overlay stand-in for FramePresenter: ``draw(render_pass)`` replays recorded bundles."""

    def __init__(self, bundles):
        self.bundles = bundles

    def draw(self, render_pass) -> None:
        render_pass.execute_bundles(self.bundles)


class CullingFrame:
    """Camera, culling switch, graph and presentation of one scene.

    Parameters
    ----------
    device : wgpu.GPUDevice
    spheres : GPUData
        See :class:`CullingGraph`.
    extent : SceneExtent
    own_spheres : bool
    overview_points, splat_radius, split_views : optional
        See :class:`CullingGraph`.

    Notes
    -----
    :meth:`encode` writes only what changed (camera, planes, hover) with
    ``queue.write_buffer`` and records the graph; :meth:`present` records
    the presentation pass. Neither submits nor waits; the visible count is
    sampled into a GPUReadbackRing and read when its map has resolved (a
    later frame), never waited for. A sample maps only after its frame's
    host calls :meth:`submitted` (the widget's ``frame_submitted`` hook); a
    sample of a frame never submitted is cancelled when the next frame
    encodes (:class:`~gpuviz.graph.frame_readbacks.FrameReadbacks`).
    """

    def __init__(self, device, spheres, *, extent, own_spheres: bool, overview_points=None, splat_radius=None,
                 split_views=False):
        self.device = device
        self.extent = extent
        self.graph = CullingGraph(device, spheres, own_spheres=own_spheres, overview_points=overview_points,
                                  splat_radius=splat_radius, split_views=split_views)
        self.n = self.graph.n
        self.camera = default_camera(extent)
        self.culling = True
        self.render_size = self.graph.render_size
        self.overview_bounds = None
        self.visible = None  # last sampled instanceCount (None until a sample was read)
        self._dirty = True
        self._parameters = 0  # bumped by every parameter write; a sample is tagged with the one it counted
        self._visible_parameters = None  # the tag of the sample ``visible`` holds
        self._hover_pixel = None
        self._hover_dirty = False
        self._overview = None  # (rect, bounds, column-major matrix floats, overview_size) of overview_fit
        self._ring = GPUReadbackRing(device, byte_length=4, slot_count=3, label="frustum-culling-readout")
        self._samples = FrameReadbacks()
        self._last_sample = float("-inf")
        self._overlay = None
        self._presented = None
        self._overlay_bundle = None
        self._presenter = FramePresenter(device, self.graph.color, label="frustum-culling-present",
                                         clear_color=(*COLORS["background"], 1))

    # ----------------------------------------------------------- parameters
    def set_camera(self, camera: Camera) -> None:
        self.camera = camera
        self._dirty = True

    def set_culling(self, on: bool) -> None:
        self.culling = bool(on)
        self._dirty = True

    def set_render_size(self, size) -> None:
        size = tuple(max(1, int(v)) for v in size)
        if size != self.render_size:
            self.render_size = self.graph.render_size = size
            self._dirty = True

    def set_hover(self, pixel) -> None:
        """The frame pixel to highlight (None: nothing); written at the next encoding."""
        if pixel != self._hover_pixel:
            self._hover_pixel, self._hover_dirty = pixel, True

    @property
    def aspect(self) -> float:
        _, _, w, h = view_rects(*self.render_size)["perspective"]
        return w / h

    @property
    def far(self) -> float:
        return self.camera.resolved_far(self.extent.center, self.extent.radius)

    def planes(self) -> np.ndarray:
        """The camera's float32 (6, 4) frustum planes at the current aspect (culling on)."""
        return planes_of(self.camera, self.aspect, self.far)

    def write_parameters(self) -> None:
        """Write the camera uniform and the planes for the current camera, culling switch and size
        (one ``queue.write_buffer``; the camera's matrix, planes and corners in plain floats)."""
        far = self.far
        rects = view_rects(*self.render_size)
        rect = rects["overview"]
        _, _, w, h = rects["perspective"]
        view = camera_frame(self.camera, w / h, far)
        if self._overview is None or self._overview[0] != rect:
            bounds, matrix, per_world = overview_fit(self.extent, rect)
            # smallest square: 1.25 px half-size, less where instances crowd the view (down to 0.5 px: one pixel)
            density = self.n / max(rect[2] * rect[3], 1)
            least = min(_MIN_HALF_PIXELS, max(0.5, 0.45 / max(density, 1e-9) ** 0.5))
            size = (*per_world, 2 * least / rect[2], 2 * least / rect[3])
            self._overview = (rect, bounds, tuple(matrix.T.ravel().tolist()), size)
        _, self.overview_bounds, overview, overview_size = self._overview
        self.graph.write_camera(planes=view.planes if self.culling else _PASS_ALL, view_projection=view.view_projection,
                                overview=overview, eye=self.camera.eye, far=far, overview_size=overview_size,
                                overview_rect=rect, perspective_rect=rects["perspective"], corners=view.corners)
        self._dirty = False
        self._parameters += 1
        self._last_sample = float("-inf")  # the next frame samples the count these parameters give

    # --------------------------------------------------------------- frames
    def encode(self, encoder, *, timestamps: bool = False) -> dict:
        """Write what changed, record the graph and a sample of the visible
        count (at most every 0.1 s, and in the first frame after a parameter
        change); per-node CPU seconds."""
        if self._dirty:
            self.write_parameters()
        if self._hover_dirty:
            self.graph.write_hover(self._hover_pixel)
            self._hover_dirty = False
        if self._samples.drop_unsubmitted():
            self._last_sample = float("-inf")  # the dropped frame's sample is taken again now
        cpu = self.graph.encode(encoder, timestamps=timestamps)
        now = time.perf_counter()
        if now - self._last_sample >= _READOUT_INTERVAL:
            slot = self._ring.try_acquire()
            if slot is not None:
                slot.copy(encoder, self.graph.draws.buffer, source_offset=self.graph.draws.instance_count_byte_offset(0),
                          byte_length=4)
                self._samples.add(slot, self._parameters)
                self._last_sample = now
        return cpu

    def submitted(self) -> None:
        """The encoder of the last :meth:`encode` was submitted: its sample may map."""
        self._samples.submitted()

    def poll(self) -> bool:
        """Start the maps of submitted samples and take the newest one that
        resolved; never waits. True when the readout changed."""
        changed = False
        for parameters, data in self._samples.read():
            value = int(np.frombuffer(data, np.uint32)[0])
            changed |= value != self.visible
            self.visible, self._visible_parameters = value, parameters
        return changed

    @property
    def readout_current(self) -> bool:
        """Whether :attr:`visible` was sampled with the current camera,
        culling switch and size (False: a host keeps drawing frames until
        such a sample is read, or the readout would show an older count)."""
        return not self._dirty and self.visible is not None and self._visible_parameters == self._parameters

    def present(self, encoder, target_view, dst_size, *, pixel_ratio: float = 1.0, extra=()) -> None:
        """Copy the frame corner into ``target_view`` (``dst_size`` physical
        pixels) and draw the titles, the readout and ``extra`` lines over it."""
        ratio = max(float(pixel_ratio), 0.25)
        if self._overlay is None or self._overlay.pixel_ratio != ratio:
            if self._overlay is not None:
                self._overlay.destroy()
            self._overlay = PlotOverlay(self.device, pixel_ratio=ratio, label="frustum-culling-overlay")
        overlay = self._overlay
        target_format = target_view.texture.format
        key = (tuple(dst_size), ratio, self.readout(), self.culling, tuple(extra), id(overlay), self.render_size,
               target_format)
        if key != self._presented:  # a steady frame (orbiting, hovering) reuses the labels and their bundle
            self._queue_labels(overlay, (dst_size[0] / ratio, dst_size[1] / ratio), extra)
            overlay.upload(self.device.queue, target_size=dst_size)
            # the overlay's draws recorded once per label change: a steady frame replays them in one call
            bundle = self.device.create_render_bundle_encoder(label="frustum-culling-overlay",
                                                             color_formats=[target_format])
            overlay.draw(bundle)
            self._overlay_bundle = _Replay([bundle.finish()])
            self._presented = key
        self._presenter.present(encoder, target_view, self.render_size, dst_size, self._overlay_bundle)

    def readout(self) -> str:
        total = f"{self.n:,}"
        if self.visible is None:
            return f"visible (sampling) / {total}"
        share = 100.0 * self.visible / self.n if self.n else 0.0
        return f"visible {self.visible:,} / {total} ({share:.1f} %)"

    def _queue_labels(self, overlay, size, extra) -> None:
        w, h = size
        overlay.clear()
        half = math.floor(w / 2)
        band = overlay.line_height + 10
        overlay.rect(0, 0, w, band, color=(0.0, 0.0, 0.0, 0.55))  # titles stay legible over the scene
        if extra:
            overlay.rect(0, h - band - (len(extra) - 1) * overlay.line_height, half, h, color=(0.0, 0.0, 0.0, 0.55))
        overlay.rect(half, 0, half, h, color=(0.3, 0.32, 0.38, 1.0))
        status = "" if self.culling else " · culling OFF"
        overlay.text(f"camera · {self.readout()}{status}", x=8, y=6, color=TEXT_COLOR, max_width=half - 16)
        overlay.text("overview (top-down) · bright: visible · muted: culled", x=half + 8, y=6, color=TEXT_COLOR,
                     max_width=w - half - 16)
        for i, line in enumerate(extra):
            overlay.text(line, x=8, y=h - 6 - (len(extra) - i) * overlay.line_height, color=MUTED_COLOR,
                         max_width=half - 16)

    # ----------------------------------------------------------- readbacks
    def read_visible(self) -> tuple:
        """``(count, ids)`` of the current camera: one encode, submit and an
        explicit wait (for tests and notebooks; the frame loop never calls it)."""
        encoder = self.device.create_command_encoder(label="frustum-culling-readback")
        self.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        self.submitted()
        count = int(read_array(self.device, self.graph.draws.get_instance_count_data(0))[0])
        ids = read_array(self.device, self.graph.ids)[:count] if count else np.zeros(0, np.uint32)
        self._samples.read(wait=True)  # older samples would overwrite the readout with a stale count
        self.visible, self._visible_parameters = count, self._parameters
        return count, ids

    def pick_pixel(self, pixel):
        """The instance ID at frame pixel ``(x, y)`` or None (encodes, submits, waits)."""
        self.set_hover(pixel)
        encoder = self.device.create_command_encoder(label="frustum-culling-pick")
        self.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        self.submitted()
        value = int(np.frombuffer(self.device.queue.read_buffer(self.graph.hover, 0, 4), np.uint32)[0])
        return None if value == NO_ID else value

    def destroy(self) -> None:
        self._samples.cancel_all()
        self._ring.destroy()
        if self._overlay is not None:
            self._overlay.destroy()
        self._presenter.destroy()
        self.graph.destroy()
