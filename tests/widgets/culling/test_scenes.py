"""The generated scenes: deterministic, finite, sized alike, radii varied;
the widget culls a galaxy exactly as numpy does; a bad scene name is a
named error."""

import numpy as np
import pytest

from gpuviz.errors import GraphValidationError
from gpuviz.widgets.culling.scene import SCENES, city_spheres, galaxy_spheres, generated_spheres
from gpuviz.widgets.culling.widget import FrustumCulling


@pytest.mark.parametrize("name", sorted(SCENES))
@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_generated_scenes_are_deterministic_finite_float32(name, n):
    a, b = generated_spheres(name, n, seed=3), generated_spheres(name, n, seed=3)
    assert a.shape == (n, 4) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.isfinite(a).all() and (a[:, 3] > 0).all()
    if n > 1:
        assert not np.array_equal(a, generated_spheres(name, n, seed=4)), "the seed matters"


def test_galaxy_is_a_thin_disk_with_varied_radii_sized_like_the_city():
    n = 20000
    g, c = galaxy_spheres(n, seed=1), city_spheres(n, seed=1)
    spread = np.ptp(g[:, [0, 2]], axis=0)
    assert np.ptp(g[:, 1]) < 0.5 * spread.min(), "flat: thinner than it is wide"
    assert 0.4 < spread.mean() / np.ptp(c[:, [0, 2]], axis=0).mean() < 2.5
    r = g[:, 3]
    assert np.percentile(r, 95) > 2.5 * np.percentile(r, 5), "radii varied"
    # most stars lie in the disk plane, a bulge crowds the centre
    d = np.hypot(g[:, 0], g[:, 2])
    assert (d < 0.15 * d.max()).mean() > 0.1


def test_galaxy_widget_culls_like_numpy(device):
    widget = FrustumCulling(instances=3000, scene="galaxy", seed=2, size=(320, 160), device=device)
    try:
        spheres = galaxy_spheres(3000, seed=2).astype(np.float64)
        planes = widget.frustum_planes().astype(np.float64)
        margin = spheres[:, :3] @ planes[:, :3].T + planes[:, 3] + spheres[:, 3:4]
        expected = np.flatnonzero((margin >= 0).all(1))
        close = np.flatnonzero((np.abs(margin) < 1e-4 * (np.abs(spheres).sum(1, keepdims=True) + 1)).any(1))
        got = widget.visible_ids()
        assert 0 < len(expected) < 3000, "the default camera sees part of the galaxy"
        assert set(np.setxor1d(got, expected).tolist()) <= set(close.tolist())
        assert np.all(np.diff(got.astype(np.int64)) > 0), "ascending rows"
    finally:
        widget.close()


def test_unknown_scene_is_a_named_error(device):
    with pytest.raises(GraphValidationError, match="FrustumCulling scene must be one of 'city', 'galaxy'"):
        FrustumCulling(instances=10, scene="forest", device=device)
    with pytest.raises(GraphValidationError, match="scene must be one of"):
        generated_spheres("forest", 10)
