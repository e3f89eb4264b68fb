"""The perspective camera of :class:`~gpuviz.widgets.FrustumCulling`: checked
parameters, its matrices and frustum (numpy), and the orbit interaction.

Right-handed, y up; clip depth ``0 <= z <= w`` (WebGPU). The planes the GPU
tests are extracted from the same view-projection matrix the instance shader
draws with (Gribb and Hartmann's rows, as :func:`gpuviz.workflows.frustum_planes`
does), so what is drawn and what is kept cannot disagree. A frame computes
all of it once per camera change in plain Python floats
(:func:`camera_frame`): a dozen numpy calls on 4x4 matrices cost ~10x more
than the arithmetic, and more still in a frame loop's cold caches. Nothing
here touches the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...errors import GraphTypeError, GraphValidationError

__all__ = ["Camera", "look_at", "perspective", "frustum_corners", "camera_frame", "CameraFrame", "OrbitControl",
           "PASS_ALL_PLANES"]

NAME = "FrustumCulling"
_FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Planes that keep every finite sphere (``culling = False``): zero normals, d = float32 max.
PASS_ALL_PLANES = np.tile(np.array([0.0, 0.0, 0.0, _FLOAT32_MAX], np.float32), (6, 1))


def _vector(name: str, value) -> np.ndarray:
    try:
        v = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        raise GraphTypeError(f"{NAME} set_camera {name} must be 3 numbers (got {value!r})") from None
    if v.shape != (3,):
        raise GraphValidationError(f"{NAME} set_camera {name} must be 3 numbers (got shape {v.shape})")
    if not np.isfinite(v).all():
        raise GraphValidationError(f"{NAME} set_camera {name} must be finite (got {v.tolist()})")
    if np.abs(v).max() > _FLOAT32_MAX:
        raise GraphValidationError(f"{NAME} set_camera {name} must lie within float32's range (|v| <= "
                                   f"{_FLOAT32_MAX:.6g}; got {v.tolist()})")
    return v


def _scalar(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise GraphTypeError(f"{NAME} set_camera {name} must be a number (got {value!r})")
    value = float(value)
    if not math.isfinite(value):
        raise GraphValidationError(f"{NAME} set_camera {name} must be finite (got {value})")
    if abs(value) > _FLOAT32_MAX:
        raise GraphValidationError(f"{NAME} set_camera {name} must lie within float32's range (|v| <= "
                                   f"{_FLOAT32_MAX:.6g}; got {value})")
    return value


@dataclass(frozen=True)
class Camera:
    """Checked camera values (degrees; ``far=None`` means "just past the scene").

    Use :meth:`checked` to build one from user input; raises
    GraphValidationError (a ValueError) for non-finite values or values past
    float32's range (the GPU's), ``eye ==
    target``, an ``up`` parallel to the view direction, ``fov_y`` outside
    (0, 180), ``near <= 0`` or ``far <= near``. Holds no GPU state.
    """

    eye: tuple
    target: tuple
    up: tuple = (0.0, 1.0, 0.0)
    fov_y: float = 60.0
    near: float = 0.1
    far: float | None = None

    @classmethod
    def checked(cls, *, eye, target, up=(0.0, 1.0, 0.0), fov_y=60.0, near=0.1, far=None) -> "Camera":
        e, t, u = _vector("eye", eye), _vector("target", target), _vector("up", up)
        forward = t - e
        length = float(np.linalg.norm(forward))
        if length == 0.0 or length < 1e-7 * max(1.0, float(np.abs(e).max())):
            raise GraphValidationError(f"{NAME} set_camera eye and target must differ (both {e.tolist()})")
        if np.linalg.norm(u) == 0.0 or np.linalg.norm(_cross(forward / length, u / np.linalg.norm(u))) < 1e-6:
            raise GraphValidationError(f"{NAME} set_camera up {u.tolist()} is zero or parallel to the view "
                                       f"direction {(forward / length).tolist()}")
        fov = _scalar("fov_y", fov_y)
        if not 0.0 < fov < 180.0:
            raise GraphValidationError(f"{NAME} set_camera fov_y must be between 0 and 180 degrees (got {fov})")
        n = _scalar("near", near)
        if n <= 0.0:
            raise GraphValidationError(f"{NAME} set_camera near must be > 0 (got {n})")
        f = None if far is None else _scalar("far", far)
        if f is not None and f <= n:
            raise GraphValidationError(f"{NAME} set_camera far must be greater than near {n} (got {f})")
        return cls(tuple(e.tolist()), tuple(t.tolist()), tuple(u.tolist()), fov, n, f)

    def resolved_far(self, scene_center, scene_radius) -> float:
        """``far``, or with ``far=None`` the distance past the scene's bounding sphere (at least 2 near)."""
        if self.far is not None:
            return self.far
        reach = math.dist(self.eye, scene_center) + float(scene_radius)
        return max(reach * 1.02, 2.0 * self.near)

    def view_projection(self, aspect: float, far: float) -> np.ndarray:
        """float64 (4, 4): ``clip = M @ (x, y, z, 1)`` (``perspective @ look_at``)."""
        return np.array(camera_frame(self, aspect, far).view_projection).reshape(4, 4)


def _cross(a, b) -> np.ndarray:
    """3-vector cross product (numpy's ``cross`` costs ~100 µs a call in a frame)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def look_at(eye, target, up) -> np.ndarray:
    """The right-handed view matrix (camera looks down its -z)."""
    # plain floats: a frame builds this once per camera change and numpy's per-call cost dominates 3-vectors
    ex, ey, ez = (float(v) for v in eye)
    fx, fy, fz = float(target[0]) - ex, float(target[1]) - ey, float(target[2]) - ez
    length = math.sqrt(fx * fx + fy * fy + fz * fz)
    fx, fy, fz = fx / length, fy / length, fz / length
    ux, uy, uz = (float(v) for v in up)
    sx, sy, sz = fy * uz - fz * uy, fz * ux - fx * uz, fx * uy - fy * ux
    length = math.sqrt(sx * sx + sy * sy + sz * sz)
    sx, sy, sz = sx / length, sy / length, sz / length
    vx, vy, vz = sy * fz - sz * fy, sz * fx - sx * fz, sx * fy - sy * fx
    return np.array([[sx, sy, sz, -(sx * ex + sy * ey + sz * ez)],
                     [vx, vy, vz, -(vx * ex + vy * ey + vz * ez)],
                     [-fx, -fy, -fz, fx * ex + fy * ey + fz * ez],
                     [0.0, 0.0, 0.0, 1.0]])


def perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    """Right-handed perspective to WebGPU clip space (depth 0 at near, 1 at far)."""
    t = 1.0 / math.tan(math.radians(fov_y) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0], m[1, 1] = t / aspect, t
    m[2, 2], m[2, 3] = far / (near - far), near * far / (near - far)
    m[3, 2] = -1.0
    return m


_NDC_CORNERS = np.array([[x, y, z, 1.0] for z in (0.0, 1.0) for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def frustum_corners(view_projection) -> np.ndarray:
    """float64 (8, 3): the near corners then the far corners, each in the order
    (-1,-1), (1,-1), (1,1), (-1,1) of normalised device x, y."""
    world = _NDC_CORNERS @ np.linalg.inv(np.asarray(view_projection, np.float64)).T
    return world[:, :3] / world[:, 3:4]


def planes_of(camera: Camera, aspect: float, far: float) -> np.ndarray:
    """The float32 (6, 4) unit planes of the camera's frustum (what the GPU tests)."""
    return np.array(camera_frame(camera, aspect, far).planes, np.float32).reshape(6, 4)


@dataclass(frozen=True)
class CameraFrame:
    """What a frame draws and culls with, as flat tuples of Python floats.

    Attributes
    ----------
    view_projection : 16 floats
        ``perspective @ look_at``, row-major (``M[i][j]`` at ``4 * i + j``).
    planes : 24 floats
        Six unit planes ``(n.x, n.y, n.z, d)``: left, right, bottom, top,
        near, far (the rows of :func:`gpuviz.workflows.frustum_planes` of that
        matrix, in float64; the GPU gets them as float32).
    corners : 24 floats
        The frustum's 8 corners ``(x, y, z)``: near then far, each in the
        order (-1,-1), (1,-1), (1,1), (-1,1) of normalised device x, y (as
        :func:`frustum_corners`, but from the camera's basis: no inverse).
    """

    view_projection: tuple
    planes: tuple
    corners: tuple


def camera_frame(camera: Camera, aspect: float, far: float) -> CameraFrame:
    """The view-projection matrix, frustum planes and corners of ``camera`` at
    ``aspect`` with this ``far``, in plain floats (see :class:`CameraFrame`).
    Same conventions as :func:`look_at` and :func:`perspective`; touches no GPU."""
    ex, ey, ez = (float(v) for v in camera.eye)
    fx, fy, fz = float(camera.target[0]) - ex, float(camera.target[1]) - ey, float(camera.target[2]) - ez
    length = math.sqrt(fx * fx + fy * fy + fz * fz)
    fx, fy, fz = fx / length, fy / length, fz / length
    ux, uy, uz = (float(v) for v in camera.up)
    sx, sy, sz = fy * uz - fz * uy, fz * ux - fx * uz, fx * uy - fy * ux
    length = math.sqrt(sx * sx + sy * sy + sz * sz)
    sx, sy, sz = sx / length, sy / length, sz / length
    vx, vy, vz = sy * fz - sz * fy, sz * fx - sx * fz, sx * fy - sy * fx
    near, far, aspect = float(camera.near), float(far), float(aspect)
    tan = math.tan(math.radians(camera.fov_y) / 2.0)
    t = 1.0 / tan
    a, b = far / (near - far), near * far / (near - far)
    fe = fx * ex + fy * ey + fz * ez
    # perspective @ look_at, written out: the projection has five nonzero entries
    r0 = (t / aspect * sx, t / aspect * sy, t / aspect * sz, -(t / aspect) * (sx * ex + sy * ey + sz * ez))
    r1 = (t * vx, t * vy, t * vz, -t * (vx * ex + vy * ey + vz * ez))
    r2 = (-a * fx, -a * fy, -a * fz, a * fe + b)
    r3 = (fx, fy, fz, -fe)
    planes = []
    for plane in ([r3[k] + r0[k] for k in range(4)], [r3[k] - r0[k] for k in range(4)],
                  [r3[k] + r1[k] for k in range(4)], [r3[k] - r1[k] for k in range(4)], r2,
                  [r3[k] - r2[k] for k in range(4)]):
        norm = math.sqrt(plane[0] * plane[0] + plane[1] * plane[1] + plane[2] * plane[2]) or 1.0
        planes += [plane[0] / norm, plane[1] / norm, plane[2] / norm, plane[3] / norm]
    corners = []
    for d in (near, far):
        cx, cy, cz = ex + d * fx, ey + d * fy, ez + d * fz
        half_w, half_h = d * tan * aspect, d * tan
        for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
            corners += [cx + x * half_w * sx + y * half_h * vx, cy + x * half_w * sy + y * half_h * vy,
                        cz + x * half_w * sz + y * half_h * vz]
    return CameraFrame((*r0, *r1, *r2, *r3), tuple(planes), tuple(corners))


class OrbitControl:
    """Turns rendercanvas pointer and wheel events into camera changes.

    Left drag orbits the eye around the target (yaw about ``up``, pitch
    clamped short of the poles), the wheel dollies (the distance scales by
    ``exp(dy * 0.0015)``), right or middle drag pans the target and eye in
    the view plane. ``advance(seconds)`` turns the eye about ``up`` (auto
    orbit). Returns new :class:`Camera` values; does not draw or write GPU
    buffers.
    """

    ROTATE = 0.006  # radians per logical pixel
    DOLLY = 0.0015  # log distance per wheel unit
    SPIN = 0.35  # radians per second of auto orbit

    def __init__(self):
        self._drag = None  # (button, x, y)

    def handle(self, event, camera: Camera, *, view_height: float):
        """The camera after ``event``, or None when the event changes nothing."""
        kind = event.get("event_type")
        x, y = float(event.get("x", 0.0)), float(event.get("y", 0.0))
        if kind == "pointer_down":
            self._drag = (int(event.get("button", 1)), x, y)
            return None
        if kind == "pointer_up":
            self._drag = None
            return None
        if kind == "wheel":
            return self.dolly(camera, float(event.get("dy", 0.0)))
        if kind != "pointer_move" or self._drag is None:
            return None
        button, x0, y0 = self._drag
        self._drag = (button, x, y)
        dx, dy = x - x0, y - y0
        if button == 1:
            return self.rotate(camera, -dx * self.ROTATE, dy * self.ROTATE)
        return self.pan(camera, dx, dy, view_height=view_height)

    @staticmethod
    def _frame(camera: Camera):
        eye, target, up = (np.asarray(v, np.float64) for v in (camera.eye, camera.target, camera.up))
        return eye, target, up / np.linalg.norm(up)

    def rotate(self, camera: Camera, yaw: float, pitch: float) -> Camera:
        eye, target, up = self._frame(camera)
        offset = eye - target
        offset = _rotate(offset, up, yaw)
        side = _cross(up, offset)
        side /= np.linalg.norm(side)
        turned = _rotate(offset, side, -pitch)
        # keep the eye short of the poles (the view direction must not become parallel to up)
        if abs(np.dot(turned / np.linalg.norm(turned), up)) < 0.995:
            offset = turned
        return replace(camera, eye=tuple((target + offset).tolist()))

    def dolly(self, camera: Camera, dy: float) -> Camera:
        eye, target, _ = self._frame(camera)
        factor = math.exp(max(-5.0, min(5.0, dy * self.DOLLY)))
        offset = (eye - target) * factor
        if np.linalg.norm(offset) < 1e-4:
            return camera
        return replace(camera, eye=tuple((target + offset).tolist()))

    def pan(self, camera: Camera, dx: float, dy: float, *, view_height: float) -> Camera:
        eye, target, up = self._frame(camera)
        forward = target - eye
        distance = np.linalg.norm(forward)
        side = _cross(forward, up)
        side /= np.linalg.norm(side)
        true_up = _cross(side, forward / distance)
        per_pixel = 2.0 * distance * math.tan(math.radians(camera.fov_y) / 2) / max(view_height, 1.0)
        shift = (-dx * side + dy * true_up) * per_pixel
        return replace(camera, eye=tuple((eye + shift).tolist()), target=tuple((target + shift).tolist()))

    def advance(self, camera: Camera, seconds: float) -> Camera:
        return self.rotate(camera, self.SPIN * max(0.0, min(seconds, 0.25)), 0.0)


def _rotate(v, axis, angle):
    """Rodrigues' rotation of ``v`` about the unit ``axis``."""
    c, s = math.cos(angle), math.sin(angle)
    return v * c + _cross(axis, v) * s + axis * np.dot(axis, v) * (1 - c)
