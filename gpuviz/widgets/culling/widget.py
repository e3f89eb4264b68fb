"""FrustumCulling: GPU frustum culling of many instances, made visible.

Bounding spheres are tested against the camera's six planes by
:class:`~gpuviz.workflows.GPUVisibilityWorkflow`, which compacts the visible
rows' IDs (ascending) and writes their number into the instanceCount word of
an indexed indirect draw record; both views replay render bundles recorded
once that read those IDs and that record. The CPU never sees the count in
the frame loop: a readback ring samples it for the readout.
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets
import numpy as np

from ...device import device_capabilities, request_device
from ...errors import GraphStateError, GraphTypeError, GraphValidationError
from ...graph.checks import check_count
from ...tables import GPUData
from ..canvas import GPUCanvas, draw_offscreen
from ..inspector import GraphInspector
from ..lifecycle import WidgetLifecycle, close_widget_tree, guarded
from .camera import Camera, OrbitControl
from .frame import CullingFrame
from .graph import view_rects
from .scene import SCENES, check_spheres, generated_spheres, scene_extent

__all__ = ["FrustumCulling", "INSTANCE_CHOICES"]

NAME = "FrustumCulling"
#: The instance-count selector's sizes (10M only where the device can bind its spheres).
INSTANCE_CHOICES = (50_000, 250_000, 1_000_000, 10_000_000)
_TIMESTAMP_INTERVAL = 0.5
_HINTS = ("drag: rotate · right-drag: pan · wheel: dolly",)


def _count(name, value, *, low=0):
    return check_count(NAME, name, value, low=low)


def count_label(count: int) -> str:
    """An instance count as the selector shows it: ``"50K"``, ``"1.5M"``
    where that is exact, otherwise with thousands separators (``"12,345"``)."""
    for unit, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= unit and count * 10 % unit == 0:
            return f"{count / unit:g}{suffix}"
    return f"{count:,}"


class FrustumCulling(WidgetLifecycle, widgets.HBox):
    """Frustum culling of bounding spheres on the GPU, in a split view.

    Parameters
    ----------
    spheres : (n, 4) float32 array or GPUData, optional
        ``(cx, cy, cz, r)`` per instance (a GPUData: packed float32x4 rows
        with STORAGE usage, borrowed, read back once to frame the views).
        Without it, ``instances`` spheres of a generated ``scene`` are used.
    instances : int
        Generated instances when ``spheres`` is None.
    scene : {"city", "galaxy"}
        The generated layout: a city (stacks of cubes on a street grid,
        taller downtown) or a spiral galaxy (bulge and three arms in the
        x / z plane, radii log-normal). Ignored with ``spheres``.
    seed : int
        Seed of the generated scene.
    size : (int, int)
        Canvas size in CSS pixels: the left half is the camera's
        perspective, the right half a top-down overview.
    device : wgpu.GPUDevice, optional
        Defaults to :func:`gpuviz.request_device`.

    Attributes
    ----------
    canvas : GPUCanvas
    inspector : GraphInspector
    auto_orbit_toggle, culling_toggle, instances_dropdown : ipywidgets
        Controls; ``instances_dropdown`` (generated scenes only) rebuilds the
        scene and graph at 50K / 250K / 1M (10M where the device's storage
        bindings can hold its spheres): a new capacity, so a new compilation.
    readout : ipywidgets.HTML
        The sampled visible / total count (also drawn in the frame).
    overview_bounds : (x0, z0, x1, z1)
        The world rectangle the overview shows: x grows to the right, z
        downwards, filling the right half of the frame.
    device_lost : str or None

    Notes
    -----
    Each instance is drawn as a cube whose corners touch its sphere, with
    ONE indexed indirect draw whose instanceCount the compaction writes; the
    instance shader reads the compacted IDs. Depth tested. From 250K
    instances on (``DENSE_INSTANCES``) a compute pass draws what would cost
    the rasteriser a primitive per pixel-sized instance: the overview's rows
    (one pixel each) and the perspective's instances whose sphere projects
    under 2 pixels (flat-shaded squares with depth and ID); the others are
    rasterised from a second indirect record, depth tested against them. A row with a
    non-finite centre or radius, or a negative radius, is culled and never
    drawn; with ``culling = False`` every other row is drawn (instanceCount
    = n for a scene without such rows) through the same indirect path.
    Camera, culling and hover changes are buffer writes: the graph compiles
    once per scene (:attr:`compile_count`). No frame reads anything back
    but the sampled count (a readback ring, never waited for);
    :meth:`visible_count`, :meth:`visible_ids` and :meth:`pick` read back
    explicitly. After :meth:`close` (or a lost device) the methods raise
    GraphStateError. Public calls, the controls' callbacks and each canvas
    frame (draw to submission) hold one re-entrant lock
    (:attr:`call_lock`), so calls from other threads wait for the frame
    being recorded instead of tearing it.
    """

    def __init__(self, spheres=None, *, instances: int = 100_000, seed: int = 0, size=(960, 480), device=None,
                 scene: str = "city"):
        super().__init__()
        self.device = device or request_device()
        self.device_lost = None
        try:
            size = tuple(int(v) for v in size)
        except (TypeError, ValueError):
            size = ()
        if len(size) != 2 or min(size) < 2:
            raise GraphValidationError(f"{NAME} size must be two integers >= 2 (got {size!r})")
        self._seed = _count("seed", seed)
        if not isinstance(scene, str) or scene not in SCENES:
            raise GraphValidationError(f"{NAME} scene must be one of {', '.join(map(repr, SCENES))} (got {scene!r})")
        self._generated = spheres is None
        self._scene = scene
        self._frame = None
        if spheres is None:
            spheres = generated_spheres(scene, _count("instances", instances), seed=self._seed)
        host, gpu, n = check_spheres(self.device, spheres)
        self._size = size
        self._build(host, gpu)
        self._timestamps = device_capabilities(self.device).timestamps
        self._last_timestamps = float("-inf")
        self._gpu_times = {}
        self._orbit = OrbitControl()
        self._auto_orbit, self._last_tick = False, None
        self._offscreen = False
        self.inspector = GraphInspector(self._frame.graph.compiled)
        self._watch()
        self.canvas = GPUCanvas(self, device=self.device, size=size)
        self._make_controls(n)
        self.readout = widgets.HTML(self._frame.readout())
        controls = widgets.HBox([self.culling_toggle, self.auto_orbit_toggle, self.instances_dropdown, self.readout])
        left = widgets.VBox([controls, self.canvas], layout=widgets.Layout(flex="0 0 auto"))
        self.inspector.layout.flex = "1 1 320px"
        # the box's own Layout, changed in place: a replaced one would stay registered
        self.layout.flex_flow, self.layout.align_items = "row wrap", "flex-start"
        self.children = [left, self.inspector]

    # ------------------------------------------------------------ building
    def _build(self, host, gpu) -> None:
        """Upload (or borrow) the spheres and build the frame and its graph."""
        if gpu is not None:
            from ...tables.readback import read_array
            host = read_array(self.device, gpu)  # once: the extent frames the views and the default camera
            data, own = gpu, False
        else:
            # an empty scene still binds one (unused) row: bindings of runtime arrays need at least 16 bytes
            padded = host if len(host) else np.zeros((1, 4), np.float32)
            data, own = GPUData.from_numpy(self.device, padded, label="frustum-culling-spheres"), True
            if not len(host):
                data = GPUData(data.buffer, format="float32x4", length=0, owned=True)
        try:
            frame = CullingFrame(self.device, data, extent=scene_extent(host), own_spheres=own)
        except BaseException:
            if own:
                data.destroy()
            raise
        if self._frame is not None:
            frame.culling = self._frame.culling
            self._frame.destroy()
        self._frame = frame
        frame.set_render_size(self._size)

    def _watch(self) -> None:
        draws = self._frame.graph.draws
        self.inspector.watch_counts({"visible instances (instanceCount)": draws.get_instance_count_data(0)})

    def _make_controls(self, n) -> None:
        self.culling_toggle = widgets.ToggleButton(value=True, description="culling", icon="eye")
        self.culling_toggle.observe(lambda change: self._set_culling(change["new"]), "value")
        self.auto_orbit_toggle = widgets.ToggleButton(value=False, description="auto-orbit", icon="refresh")
        self.auto_orbit_toggle.observe(lambda change: self._set_auto_orbit(change["new"]), "value")
        limit = min(int(self.device.limits["max-storage-buffer-binding-size"]),
                    int(self.device.limits["max-buffer-size"]))
        counts = sorted({c for c in INSTANCE_CHOICES if 16 * c <= limit} | {n})
        options = [(count_label(c), c) for c in counts]
        self.instances_dropdown = widgets.Dropdown(options=options, value=n, description="instances",
                                                   disabled=not self._generated,
                                                   layout=widgets.Layout(width="200px"))
        self.instances_dropdown.observe(lambda change: self._set_instances(change["new"]), "value")

    def _set_instances(self, n) -> None:
        with self.call_lock:
            if not self._generated or n == self._frame.n or self._check_usable("instances", raise_lost=False):
                return
            camera_kept = self._frame.camera
            self._build(generated_spheres(self._scene, n, seed=self._seed), None)
            self._frame.set_camera(camera_kept)
            self.inspector.attach(self._frame.graph.compiled)
            self._watch()
            self._redraw()

    # ------------------------------------------------------------ the camera
    @property
    def camera(self) -> dict:
        """The current camera: ``eye``, ``target``, ``up`` (tuples), ``fov_y``
        (degrees), ``near`` and ``far`` (the effective far plane: with
        ``far=None`` just past the scene's bounding sphere). Does not read the GPU."""
        with self.call_lock:
            self._check_usable("camera", raise_lost=False)
            c = self._frame.camera
            return {"eye": c.eye, "target": c.target, "up": c.up, "fov_y": c.fov_y, "near": c.near,
                    "far": self._frame.far}

    @guarded
    def set_camera(self, *, eye, target, up=(0.0, 1.0, 0.0), fov_y: float = 60.0, near: float = 0.1,
                   far=None) -> None:
        """Look from ``eye`` at ``target`` (right-handed, y up by default;
        vertical ``fov_y`` in degrees; the aspect is the perspective view's).
        ``far=None`` puts the far plane just past the scene. A buffer write:
        never recompiles.

        Raises
        ------
        GraphValidationError
            Non-finite values, ``eye == target``, ``up`` parallel to the view,
            ``fov_y`` outside (0, 180), ``near <= 0`` or ``far <= near``
            (nothing changes).
        """
        self._frame.set_camera(Camera.checked(eye=eye, target=target, up=up, fov_y=fov_y, near=near, far=far))
        self._redraw()

    @guarded
    def frustum_planes(self) -> np.ndarray:
        """The six planes the GPU tests with culling on: float32 (6, 4)
        ``(n.x, n.y, n.z, d)``, unit normals pointing inwards, a point p inside
        when ``dot(n, p) + d >= 0`` (left, right, bottom, top, near, far).
        Computed on the host from the current camera and aspect: no readback."""
        return self._frame.planes()

    @property
    def culling(self) -> bool:
        """Whether spheres are tested against the frustum. False draws every
        drawable row through the same indirect record (pass-all planes are
        written: a buffer write, no recompilation)."""
        with self.call_lock:
            self._check_usable("culling", raise_lost=False)
            return self._frame.culling

    @culling.setter
    @guarded
    def culling(self, on) -> None:
        if not isinstance(on, (bool, np.bool_)):
            raise GraphTypeError(f"{NAME} culling must be a bool (got {on!r})")
        self.culling_toggle.value = bool(on)  # the observer applies it
        self._set_culling(bool(on))

    def _set_culling(self, on) -> None:
        with self.call_lock:
            if self._check_usable("culling", raise_lost=False) or on == self._frame.culling:
                return
            self._frame.set_culling(on)
            self._redraw()

    @property
    def auto_orbit(self) -> bool:
        """Whether the eye turns about the target by itself (redraws continuously)."""
        return self._auto_orbit

    def _set_auto_orbit(self, on) -> None:
        with self.call_lock:
            if self._check_usable("auto_orbit", raise_lost=False):
                return
            self._auto_orbit, self._last_tick = bool(on), None
            self._redraw()

    @property
    def compile_count(self) -> int:
        """Graph compilations so far: 1 per scene (camera changes never recompile)."""
        return self.inspector.compile_count

    @property
    def overview_bounds(self) -> tuple:
        """``(x0, z0, x1, z1)``: the world rectangle the overview shows (the
        scene's x / z box grown by 8 % and widened to the right half's
        aspect; x to the right, z down). Host state only: no GPU call."""
        with self.call_lock:
            self._check_usable("overview_bounds", raise_lost=False)
            if self._frame.overview_bounds is None:
                self._frame.write_parameters()
            return self._frame.overview_bounds

    # ---------------------------------------------------------- readbacks
    @guarded
    def visible_count(self) -> int:
        """The number of instances the current camera keeps, read back
        explicitly (one encode, submit and wait; never used by frames)."""
        return self._frame.read_visible()[0]

    @guarded
    def visible_ids(self) -> np.ndarray:
        """The kept rows, ascending (uint32): the compacted IDs the draw reads,
        read back explicitly (one encode, submit and wait; never used by frames)."""
        return self._frame.read_visible()[1]

    @guarded
    def pick(self, x, y):
        """The instance ID drawn at canvas pixel ``(x, y)`` (logical pixels,
        origin top-left, either view), or None over the background. Renders
        one frame and reads its ID attachment (GPUIndexPickingTarget) back:
        an explicit wait, never part of a frame. The picked instance is then
        highlighted, as under the pointer."""
        pixel = self._frame_pixel(x, y)
        if pixel is None:
            return None
        picked = self._frame.pick_pixel(pixel)
        self.canvas.request_draw()
        return picked

    def _frame_pixel(self, x, y):
        """Canvas logical pixel -> frame pixel, or None outside the frame."""
        for name, value in (("x", x), ("y", y)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(value):
                raise GraphValidationError(f"{NAME} pick {name} must be a finite number of pixels (got {value!r})")
        w, h = self._size
        if not (0 <= x < w and 0 <= y < h):
            return None
        rw, rh = self._frame.render_size
        return (min(int(x * rw / w), rw - 1), min(int(y * rh / h), rh - 1))

    # --------------------------------------------------------------- frames
    def _redraw(self) -> None:
        self.canvas.request_draw()

    def draw(self, encoder, target_view, size) -> None:
        """GPUCanvas drawable hook: write the camera (if it changed), record
        the graph and the presentation pass. Never submits; records nothing
        once the device is lost. GPUCanvas holds :attr:`call_lock` from here
        to :meth:`frame_submitted`; a host that draws itself holds it too."""
        with self.call_lock:
            if self._check_usable("draw", raise_lost=False):
                return
            width, height = (max(2, int(v)) for v in size)
            fw, fh = self._frame.graph.frame_size
            scale = min(1.0, fw / width, fh / height)
            self._frame.set_render_size((max(2, int(width * scale)), max(1, int(height * scale))))
            if self._auto_orbit and not self._offscreen:
                now = time.perf_counter()
                if self._last_tick is not None:
                    self._frame.set_camera(self._orbit.advance(self._frame.camera, now - self._last_tick))
                self._last_tick = now
            if self._frame.poll():
                self.readout.value = html.escape(self._frame.readout())
            self._collect_timings()
            now = time.perf_counter()
            timestamps = self._timestamps and now - self._last_timestamps >= _TIMESTAMP_INTERVAL
            if timestamps:
                self._last_timestamps = now
            self.inspector.poll()
            cpu = self._frame.encode(encoder, timestamps=timestamps)
            self.inspector.sample_counts(encoder)
            self.inspector.record_encode(cpu, gpu_times=self._gpu_times)
            ratio = 1.0 if self._offscreen else self._pixel_ratio()
            self._frame.present(encoder, target_view, (width, height), pixel_ratio=ratio, extra=_HINTS)
            if not self._offscreen and (self._auto_orbit or not self._frame.readout_current):
                self.canvas.request_draw()  # keep orbiting / until a count sample of these parameters is read

    def frame_submitted(self) -> None:
        """GPUCanvas drawable hook: the frame :meth:`draw` recorded was
        submitted, so its readout sample may map."""
        with self.call_lock:
            if not self._check_usable("frame_submitted", raise_lost=False):
                self._frame.submitted()

    def _collect_timings(self) -> None:
        compiled = self._frame.graph.compiled
        while True:
            try:
                timings = compiled.read_timings(wait=False)
            except GraphStateError:  # a timestamped frame that was never submitted (a draw that raised):
                return  # read_timings discarded it; later frames' timings are read next time
            if timings is None:
                return
            self._gpu_times = timings

    def _pixel_ratio(self) -> float:
        try:
            return max(float(self.canvas.get_pixel_ratio()), 0.25)
        except (AttributeError, TypeError, ValueError):
            return 1.0

    def handle_event(self, event) -> bool:
        """GPUCanvas event hook: left drag orbits, right drag pans, the wheel
        dollies, pointer moves set the highlighted instance. Returns True to
        redraw; ignores everything once the device is lost."""
        with self.call_lock:
            if self._event_ignored(event):
                return False
            kind = event.get("event_type")
            if kind == "resize":
                self._size = (max(2, int(event.get("width", self._size[0]))),
                              max(2, int(event.get("height", self._size[1]))))
                return True
            if kind == "pointer_leave":
                self._frame.set_hover(None)
                return True
            _, _, _, view_height = view_rects(*self._size)["perspective"]
            camera = self._orbit.handle(event, self._frame.camera, view_height=view_height)
            if camera is not None:
                self._frame.set_camera(camera)
                return True
            if kind == "pointer_move":
                try:
                    self._frame.set_hover(self._frame_pixel(event.get("x", -1), event.get("y", -1)))
                except GraphValidationError:
                    return False
                return True
            return False

    @guarded
    def draw_offscreen(self, *, width: int, height: int) -> np.ndarray:
        """The widget's canvas content rendered offscreen: ``(height, width, 4)``
        uint8 RGBA, with an exact readout (the count is read back first). The
        camera's aspect follows the image while it renders."""
        kept = self._size
        self._offscreen = True
        try:
            self._size = (int(width), int(height)) if isinstance(width, int) and isinstance(height, int) else kept
            self._frame.set_render_size(self._size)
            self._frame.visible = self._frame.read_visible()[0]
            return draw_offscreen(self, width=width, height=height, device=self.device)
        finally:
            self._offscreen = False
            self._size = kept
            self._frame.set_render_size(kept)

    # ------------------------------------------------------------ lifecycle
    _LIFECYCLE_NAME = NAME
    _LIFECYCLE_OWNED = "_frame"  # WidgetLifecycle: None once closed
    _LIFECYCLE_PANEL = "readout"  # WidgetLifecycle: shows a device loss

    def close(self) -> None:
        """Close every ipywidget this widget made (canvas, inspector, controls,
        readout, their boxes, layouts and styles) and free the graph, its
        buffers and textures (borrowed spheres are left alone), so nothing
        of it stays registered or reachable. Waits for a frame or call in
        progress on another thread (it holds :attr:`call_lock`); from then
        on every public method raises GraphStateError. Idempotent; does not
        wait for the GPU."""
        with self.call_lock:
            if getattr(self, "_frame", None) is not None:
                close_widget_tree(self, root=False)  # the canvas's close event still finds the widget open
                frame, self._frame = self._frame, None
                frame.destroy()
            super().close()
