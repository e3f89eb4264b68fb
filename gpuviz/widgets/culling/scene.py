"""Scenes of :class:`~gpuviz.widgets.FrustumCulling`: the generated city, the
checks on caller spheres, the extent the overview and the default camera
frame, and the instance mesh (host side, numpy; nothing is uploaded here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from ...errors import DeviceMismatchError, GraphTypeError, GraphValidationError, UsageError
from ...graph.compat import owning_device

__all__ = ["city_spheres", "galaxy_spheres", "generated_spheres", "SCENES", "check_spheres", "SceneExtent",
           "scene_extent", "cube_mesh", "CUBE_HALF"]

NAME = "FrustumCulling"
#: The cube drawn for a sphere of radius r has half-extent ``CUBE_HALF * r``
#: (its corners touch the sphere, so a culled sphere never hides a drawn cube).
CUBE_HALF = 1.0 / math.sqrt(3.0)


def city_spheres(n: int, *, seed: int = 0) -> np.ndarray:
    """``n`` float32 spheres ``(cx, cy, cz, r)`` of a city: a round town of
    unit lots on a street grid (every eighth row and column is a street),
    each lot a stack of equal cubes, taller and wider downtown.

    Deterministic for a given ``(n, seed)``; does not upload anything.
    """
    if n <= 0:
        return np.zeros((0, 4), np.float32)
    rng = np.random.default_rng(seed)
    # stacks average ~2.2 cubes; lots per side so that enough lots exist, streets included
    side = int(math.ceil(math.sqrt(n / 2.0 * 64 / 49 * 4 / math.pi))) + 8
    g = np.arange(side) - side // 2
    gx, gz = np.meshgrid(g, g, indexing="ij")
    lots = (gx % 8 != 0) & (gz % 8 != 0)
    gx, gz = gx[lots].astype(np.float64), gz[lots].astype(np.float64)
    order = np.argsort(np.hypot(gx, gz) * (1.0 + 0.15 * rng.random(gx.size)))
    gx, gz = gx[order], gz[order]
    reach = max(np.hypot(gx[-1], gz[-1]), 1.0)
    centre = np.exp(-(np.hypot(gx, gz) / (0.35 * reach)) ** 2)  # 1 downtown, 0 at the edge
    half = np.clip(0.12 + 0.30 * rng.random(gx.size) * (0.35 + 0.65 * centre), 0.08, 0.45)
    floors = 1 + np.floor(rng.random(gx.size) ** 2 * (1 + 11 * centre)).astype(np.int64)
    cum = np.cumsum(floors)
    lots_used = int(np.searchsorted(cum, n)) + 1
    floors = floors[:lots_used].copy()
    floors[-1] -= int(cum[lots_used - 1] - n)
    lot = np.repeat(np.arange(lots_used), floors)
    level = np.arange(n) - np.repeat(np.concatenate([[0], np.cumsum(floors)[:-1]]), floors)
    h = half[lot]
    jitter = (rng.random((lots_used, 2)) - 0.5) * (0.9 - 2 * half[:lots_used, None]).clip(0)
    out = np.empty((n, 4), np.float32)
    out[:, 0] = gx[lot] + jitter[lot, 0]
    out[:, 1] = h * (1 + 2 * level)
    out[:, 2] = gz[lot] + jitter[lot, 1]
    out[:, 3] = h / CUBE_HALF
    return out


def galaxy_spheres(n: int, *, seed: int = 0) -> np.ndarray:
    """``n`` float32 spheres ``(cx, cy, cz, r)`` of a spiral galaxy in the
    x / z plane (y up): a flattened central bulge (15 % of the rows) and a
    thin exponential disk whose stars crowd along three logarithmic spiral
    arms; radii log-normal (most small, a few large), larger in the bulge.

    Sized like :func:`city_spheres` of the same ``n`` (a disk about
    ``sqrt(n)`` units across). Deterministic for a given ``(n, seed)``;
    does not upload anything; rows in no spatial order.
    """
    if n <= 0:
        return np.zeros((0, 4), np.float32)
    rng = np.random.default_rng(seed)
    reach = 0.6 * math.sqrt(n) + 4.0  # the disk's outer edge
    bulge = rng.random(n) < 0.15
    out = np.empty((n, 4), np.float32)
    # bulge: a flattened Gaussian ball
    b = int(bulge.sum())
    out[bulge, :3] = rng.normal(0.0, 0.09 * reach, (b, 3)) * np.array([1.0, 0.45, 1.0])
    # disk: exponential in distance, angle along one of three log spirals (pitch ~14 degrees), scattered
    d = rng.exponential(0.32 * reach, n - b) + 0.05 * reach
    past = d > reach  # past the edge: spread over the disk instead (a clip would draw a ring at the edge)
    d[past] = rng.uniform(0.05 * reach, reach, int(past.sum()))
    arm = rng.integers(0, 3, n - b) * (2 * math.pi / 3)
    theta = arm + np.log(d / (0.05 * reach)) / math.tan(math.radians(14.0)) + rng.normal(0.0, 0.22, n - b)
    out[~bulge, 0] = d * np.cos(theta)
    out[~bulge, 2] = d * np.sin(theta)
    out[~bulge, 1] = rng.normal(0.0, 0.012 * reach, n - b) * (1.0 + 2.0 * np.exp(-d / (0.15 * reach)))
    radius = 0.18 * np.exp(rng.normal(0.0, 0.5, n))
    radius[bulge] *= 1.6
    out[:, 3] = np.clip(radius, 0.03, 2.5)
    return out


#: Generated scenes by name: ``scene=`` of :class:`~gpuviz.widgets.FrustumCulling`.
SCENES = {"city": city_spheres, "galaxy": galaxy_spheres}


def generated_spheres(scene: str, n: int, *, seed: int = 0) -> np.ndarray:
    """The spheres of the generated scene named ``scene`` (see :data:`SCENES`).

    Raises
    ------
    GraphValidationError
        An unknown scene name.
    """
    if scene not in SCENES:
        raise GraphValidationError(f"{NAME} scene must be one of {', '.join(map(repr, SCENES))} (got {scene!r})")
    return SCENES[scene](n, seed=seed)


def check_spheres(device, spheres):
    """``(numpy copy or None, GPUData or None, n)`` of caller spheres.

    Raises
    ------
    GraphTypeError
        Not a numpy array (or array-like) nor a GPUData.
    GraphValidationError
        Not (n, 4) float32 (no silent casts: float64 is refused), or a GPUData
        that is not float32x4 rows, packed.
    UsageError
        A GPUData whose buffer lacks STORAGE (culling and drawing bind it)
        or COPY_SRC (read back once for the scene's extent).
    """
    from ...tables import GPUData

    if isinstance(spheres, GPUData):
        if spheres.destroyed:
            raise GraphValidationError(f'{NAME} spheres GPUData "{spheres.label}" was destroyed')
        if spheres.format.name != "float32x4" or not spheres.is_packed:
            raise GraphValidationError(f'{NAME} spheres GPUData "{spheres.label}" must be packed float32x4 rows '
                                       f"(cx, cy, cz, r) (got {spheres.format.name}, stride {spheres.byte_stride})")
        needs = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        if spheres.buffer.usage & needs != needs:
            raise UsageError(f'{NAME} spheres GPUData "{spheres.label}" needs a STORAGE | COPY_SRC buffer (culled '
                             f"and drawn from storage, read back once to frame the views; usage "
                             f"{int(spheres.buffer.usage)})")
        if spheres.buffer.size - spheres.byte_offset < 16:
            raise GraphValidationError(f'{NAME} spheres GPUData "{spheres.label}" needs at least 16 bytes of buffer '
                                       f"from its byte_offset (one float32x4 row), got "
                                       f"{spheres.buffer.size - spheres.byte_offset}")
        align = int(device.limits["min-storage-buffer-offset-alignment"])
        if spheres.byte_offset % align:
            raise GraphValidationError(f'{NAME} spheres GPUData "{spheres.label}" byte_offset {spheres.byte_offset} '
                                       f"is not a multiple of the device's storage offset alignment ({align})")
        if owning_device(spheres.buffer, device) is not device:
            raise DeviceMismatchError(f'{NAME} spheres GPUData "{spheres.label}" belongs to another device')
        return None, spheres, spheres.length
    if isinstance(spheres, (str, bytes)) or not hasattr(spheres, "__len__") and not hasattr(spheres, "__array__"):
        raise GraphTypeError(f"{NAME} spheres must be an (n, 4) float32 array or a GPUData "
                             f"(got {type(spheres).__name__})")
    array = np.asarray(spheres)
    if array.ndim != 2 or array.shape[1] != 4:
        raise GraphValidationError(f"{NAME} spheres must have shape (n, 4): cx, cy, cz, r (got shape {array.shape})")
    if array.dtype != np.float32:
        raise GraphValidationError(f"{NAME} spheres must be float32 (got dtype {array.dtype}; "
                                   "convert with .astype(np.float32) if that precision is enough)")
    return np.ascontiguousarray(array), None, array.shape[0]


@dataclass(frozen=True)
class SceneExtent:
    """What frames a scene: the box of its finite centres (``lo``, ``hi``,
    float64 xyz), the bounding sphere (``center``, ``radius``) that sets the
    default far plane, and the typical radius."""

    lo: tuple
    hi: tuple
    center: tuple
    radius: float
    typical_radius: float


def scene_extent(spheres: np.ndarray) -> SceneExtent:
    """The extent of the drawable rows (finite, r >= 0). Huge radii do not
    stretch the box (centres only); they are counted in ``radius`` and
    ``typical_radius`` only up to the box's size (at least 1), so giant
    spheres (radii up to float32's ~3.4e38) cannot push the far plane or
    the default camera away from the centres."""
    s = np.asarray(spheres, np.float64).reshape(-1, 4)
    ok = np.isfinite(s).all(1) & (s[:, 3] >= 0) if len(s) else np.zeros(0, bool)
    s = s[ok]
    if len(s) == 0:
        return SceneExtent((-1.0, -1.0, -1.0), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), math.sqrt(3.0), 0.1)
    lo, hi = s[:, :3].min(0), s[:, :3].max(0)
    size = float(np.linalg.norm(hi - lo))
    center = (lo + hi) / 2
    reach = float(np.sqrt(((s[:, :3] - center) ** 2).sum(1)).max())
    radius = reach + float(min(s[:, 3].max(), max(size, 1.0)))
    typical = min(float(np.median(s[:, 3])), max(size, 1.0)) or max(size, 1.0) * 0.01
    return SceneExtent(tuple(lo.tolist()), tuple(hi.tolist()), tuple(center.tolist()), max(radius, 1e-3), typical)


def cube_mesh() -> tuple:
    """``(corners, indices, overview_indices)`` of a unit cube (corners at +-1).

    ``corners``: 8 float32 ``(x, y, z)``, corner ``k`` having x, y, z signs
    from bits 0, 1, 2 of k (the shader shades faces flat from screen-space
    derivatives, so no per-face normals).
    ``indices``: 18 uint16, the +x, +y and +z faces only (7 corners, 6
    triangles): the vertex shader mirrors each axis towards the eye, so these
    are the (at most three) faces a viewer outside the cube can see. Half the
    triangles of a closed cube, none of them back faces for the rasteriser to
    set up and throw away; the pipeline culls nothing (mirroring flips the
    winding), the depth test orders what remains.
    ``overview_indices``: 18 uint16 for the same draw record seen from above:
    the top face's two triangles, then degenerate ones (one repeated corner:
    no area, no raster work).
    """
    corners = np.array([[(k & 1) * 2 - 1, (k >> 1 & 1) * 2 - 1, (k >> 2 & 1) * 2 - 1] for k in range(8)], np.float32)
    # each face walks its four corners around (no crossing), split along one diagonal
    faces = [(1, 3, 7, 5), (2, 3, 7, 6), (4, 5, 7, 6)]
    indices = [c for a, b, c2, d in faces for c in (a, b, c2, a, c2, d)]
    top = [2, 3, 7, 2, 7, 6]
    overview = top + [top[0]] * 12
    return corners, np.array(indices, np.uint16), np.array(overview, np.uint16)
