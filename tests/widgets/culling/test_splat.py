"""The splatted perspective (dense scenes): instances smaller than
``splat_radius`` pixels are written by compute, the others rasterised from
a second indirect record, and the two are depth tested against each other.

Forced on a small scene here (``splat_radius=3``) so the cases are exact:
the large list equals numpy's projection of the visible spheres, pick
returns the nearer of a splat and a rasterised cube in either order, a
splat shows a building colour where numpy projects its centre, and the
overview (splatted or rasterised beside the splatted perspective) shows
every row.
"""

import math

import numpy as np
import pytest

from gpuviz.tables import GPUData
from gpuviz.tables.readback import read_array
from gpuviz.widgets.culling.camera import Camera
from gpuviz.widgets.culling.frame import CullingFrame
from gpuviz.widgets.culling.graph import COLORS
from gpuviz.widgets.culling.scene import scene_extent

from .frames import render as render_frame

W, H = 640, 320  # the perspective viewport is 320 x 320
HALF = W // 2
T = 3.0
SCALE = 1.0 / math.tan(math.radians(30.0))  # fov_y 60

# rows: A large near (rasterised) hides B small behind it; C a lone splat; D a small splat in front of
# the large E; then a fan of small splats at distinct depths and pixels
A, B, C, D, E = range(5)
FIXED = [(10.0, 0.0, 0.0, 1.0), (40.0, 0.0, 0.0, 0.2), (40.0, 0.0, 8.0, 0.2), (20.0, 0.0, -4.0, 0.1),
         (60.0, 0.0, -12.0, 3.0)]


def scene():
    fan = [(30.0 + 2 * i, 4.0 + 0.5 * i, -10.0 + 1.5 * i, 0.15) for i in range(14)]
    return np.array(FIXED + fan, np.float32)


def screen(s):
    """numpy: (pixel x, pixel y, projected radius px) of a sphere seen from the origin along +x."""
    x, y, z, r = (float(v) for v in s)
    return (HALF / 2 * (1 + SCALE * z / x), H / 2 * (1 - SCALE * y / x), r * SCALE / x * H / 2)


def splat_color(row, s, far):
    """numpy of draw.wgsl's splat colour: the row's hashed building colour, x 0.78, fogged (0..255)."""
    m = 0xFFFFFFFF
    h = (row * 0x9E3779B9) & m
    h = ((h ^ (h >> 16)) * 0x85EBCA6B) & m
    h ^= h >> 13
    a, b = np.array(COLORS["building_a"]), np.array(COLORS["building_b"])
    base = (a + (b - a) * ((h & 255) / 255.0)) * (0.85 + 0.15 * ((h >> 8) & 255) / 255.0) * 0.78
    fog = min(float(np.linalg.norm(s[:3])) / far, 1.0)
    color = base + (np.array(COLORS["background"]) - base) * 0.6 * fog ** 3
    return np.round(np.clip(color, 0, 1) * 255)


@pytest.fixture(scope="module", params=[True, False], ids=["overview-splat", "overview-raster"])
def frame(device, request):
    spheres = scene()
    frame = CullingFrame(device, GPUData.from_numpy(device, spheres), extent=scene_extent(spheres), own_spheres=True,
                         overview_points=request.param, splat_radius=T)
    frame.set_render_size((W, H))
    frame.set_camera(Camera.checked(eye=(0.0, 0.0, 0.0), target=(10.0, 0.0, 0.0), near=0.5))
    yield frame, spheres
    frame.destroy()


def render(device, frame):
    return render_frame(device, frame, (W, H))


def test_large_list_is_numpys_projection(device, frame):
    frame, spheres = frame
    count, ids = frame.read_visible()
    assert count == len(spheres), "the whole scene is in view"
    graph = frame.graph
    large_count = int(read_array(device, graph.draws.get_instance_count_data(1))[0])
    large = np.frombuffer(device.queue.read_buffer(graph.large, 0, 4 * max(large_count, 1)), np.uint32)[:large_count]
    expected = {i for i, s in enumerate(spheres) if screen(s)[2] >= T}
    assert expected == {A, E}
    assert sorted(large.tolist()) == sorted(expected), "each large instance once, no small one"


def test_pick_returns_the_nearer_of_splats_and_rasterised_cubes(device, frame):
    frame, spheres = frame
    frame.read_visible()
    for row, want in ((B, A), (C, C), (D, D), (E, E)):
        x, y, _ = screen(spheres[row])
        if row == E:  # E's centre is behind D: look beside D, still on E's cube
            x += 4.0
        assert frame.pick_pixel((int(x), int(y))) == want, f"row {row} at ({x:.1f}, {y:.1f})"
    for row in range(len(FIXED), len(spheres)):
        x, y, _ = screen(spheres[row])
        assert frame.pick_pixel((int(x), int(y))) == row, f"fan row {row}"
    assert frame.pick_pixel((HALF // 2, 4)) is None, "the sky is empty"


def test_splats_show_building_colours_and_the_overview_every_row(device, frame):
    frame, spheres = frame
    frame.set_hover(None)
    image = render(device, frame)
    background = np.round(np.array(COLORS["background"]) * 255)
    for row in [C, D] + list(range(len(FIXED), len(spheres))):
        x, y, _ = screen(spheres[row])
        np.testing.assert_allclose(image[int(y), int(x), :3], splat_color(row, spheres[row], frame.far), atol=3,
                                   err_msg=f"row {row} at ({x:.1f}, {y:.1f})")
    assert np.abs(image[50, 60, :3] - background).max() <= 2, "the sky (below the title band) is background"
    # every row is in view: the overview shows each bright
    x0, z0, x1, z1 = frame.overview_bounds
    visible = np.round(np.array(COLORS["visible"]) * 255)
    for row, s in enumerate(spheres):
        px = HALF + (s[0] - x0) / (x1 - x0) * (W - HALF)
        py = (s[2] - z0) / (z1 - z0) * H
        if py < 32:  # under the title band
            continue
        patch = image[int(py) - 1:int(py) + 2, int(px) - 1:int(px) + 2, :3].reshape(-1, 3).astype(int)
        assert (np.abs(patch - visible).max(1) <= 2).any(), f"overview row {row}"
