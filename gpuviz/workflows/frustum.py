"""frustum_planes: the six planes GPUVisibilityWorkflow's sphere test takes,
from a view-projection matrix (CPU, numpy)."""

from __future__ import annotations

import numpy as np

from ..errors import GraphValidationError

__all__ = ["frustum_planes"]

DEPTH_RANGES = ("zero-to-one", "minus-one-to-one")


def frustum_planes(view_projection, *, depth_range: str = "zero-to-one") -> np.ndarray:
    """The six inward planes ``(n.x, n.y, n.z, d)`` of a view frustum.

    Parameters
    ----------
    view_projection : array-like, shape (4, 4)
        Maps world points to clip space as ``clip = M @ (x, y, z, 1)``
        (column vectors; ``M[i]`` is row i). A point is in the frustum when
        ``-w <= x, y <= w`` and the depth is inside ``depth_range``.
    depth_range : {"zero-to-one", "minus-one-to-one"}
        WebGPU's clip depth ``0 <= z <= w`` (default) or OpenGL's
        ``-w <= z <= w``.

    Returns
    -------
    numpy.ndarray
        float32, shape (6, 4): left, right, bottom, top, near, far. Each
        normal has unit length (when nonzero), so ``dot(n, c) + d`` is a
        distance and the workflow's ``>= -r`` keeps spheres that touch the
        frustum. Upload it as the workflow's ``planes`` (float32x4, 6 rows).

    Notes
    -----
    Planes come from sums and differences of the matrix rows (Gribb and
    Hartmann's extraction). The sphere test against them is conservative
    near the frustum's corners (a sphere outside a corner but within r of
    every plane is kept). Pure numpy: does not touch the GPU or upload.
    """
    m = np.asarray(view_projection, np.float64)
    if m.shape != (4, 4) or not np.isfinite(m).all():
        raise GraphValidationError(f"frustum_planes needs a finite 4x4 matrix (got shape {m.shape})")
    if depth_range not in DEPTH_RANGES:
        raise GraphValidationError(f"frustum_planes depth_range must be one of {', '.join(DEPTH_RANGES)} "
                                   f"(got {depth_range!r})")
    near = m[2] if depth_range == "zero-to-one" else m[3] + m[2]
    planes = np.stack([m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1], near, m[3] - m[2]])
    norms = np.linalg.norm(planes[:, :3], axis=1, keepdims=True)
    return (planes / np.where(norms > 0, norms, 1.0)).astype(np.float32)
