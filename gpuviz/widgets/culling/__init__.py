"""The frustum-culling consumer: :class:`FrustumCulling` and the parts it composes.

One module per concept: :mod:`.scene` (generated city, sphere checks, scene
extent, the cube mesh), :mod:`.camera` (checked camera values, matrices,
orbit interaction), :mod:`.graph` (the compiled command graph: visibility
workflow, the two views' render bundles, hover picking), :mod:`.frame` (one
frame without Jupyter: parameter writes, readout sampling, presentation) and
:mod:`.widget` (the notebook widget); WGSL in ``shaders/``. The public path
is ``gpuviz.widgets.FrustumCulling``.
"""

from .widget import FrustumCulling

__all__ = ["FrustumCulling"]
