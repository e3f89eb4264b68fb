"""Workflows: primitives combined around an application-level outcome.

:class:`GPUVisibilityWorkflow` turns source-aligned predicates (selection
masks, bounding spheres against frustum planes, time intervals against a
window, LOD against a range) into compacted stable IDs and one GPU-resident
count that an indirect draw consumes; :func:`frustum_planes` turns a
view-projection matrix into its six planes. Like the algorithms, workflows only
declare graph nodes: they never submit, map or read back.
"""

from .frustum import frustum_planes
from .visibility import VISIBILITY_TILE, GPUVisibilityWorkflow

__all__ = ["GPUVisibilityWorkflow", "VISIBILITY_TILE", "frustum_planes"]
