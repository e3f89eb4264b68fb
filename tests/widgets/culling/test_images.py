"""FrustumCulling images: the overview shows visible instances bright and
culled ones muted where numpy puts them, culling off brightens all of
them, the perspective view is depth tested, pick returns the instance
under a pixel in either view and highlights it.

A ring of spheres around the eye (the camera looks along +x with a 60°
field of view) plus two spheres on the view axis, the nearer one smaller
and earlier in row order. Pixel positions come from the documented layout:
the perspective view is the left half, the overview (``overview_bounds``,
x to the right, z down) the right half.
"""

import math
import os
import struct
import zlib

import numpy as np
import pytest

from gpuviz.oracles.workflows import frustum_spheres
from gpuviz.widgets.culling.graph import COLORS
from gpuviz.widgets.culling.widget import FrustumCulling

from .frames import render as render_frame

W, H = 640, 320
RING = 36
NEAR_ROW, FAR_ROW = RING, RING + 1


def ring_scene():
    theta = np.radians(np.arange(RING) * 360.0 / RING)
    s = np.zeros((RING + 2, 4), np.float32)
    s[:RING, 0], s[:RING, 2], s[:RING, 3] = 30 * np.cos(theta), 30 * np.sin(theta), 1.5
    s[NEAR_ROW] = (10.0, 0.0, 0.0, 1.0)
    s[FAR_ROW] = (20.0, 0.0, 0.0, 3.0)
    return s, np.degrees(theta)


def rgb(name):
    return np.round(np.array(COLORS[name]) * 255)


def overview_pixel(widget, x, z):
    x0, z0, x1, z1 = widget.overview_bounds
    return int(W // 2 + (x - x0) / (x1 - x0) * (W - W // 2)), int((z - z0) / (z1 - z0) * H)


def perspective_pixel(x, z):
    """Eye at the origin looking along +x, up +y: screen right is +z; aspect 1."""
    half = W // 2
    return int(half / 2 + half / 2 * (z / x) / math.tan(math.radians(30))), H // 2


def save(name, image):
    """Keep the image for a human look when GPUVIZ_TEST_IMAGES names a folder."""
    folder = os.environ.get("GPUVIZ_TEST_IMAGES")
    if not folder:
        return
    h, w, _ = image.shape
    raw = b"".join(b"\0" + image[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def ring(device):
    spheres, angles = ring_scene()
    widget = FrustumCulling(spheres, size=(W, H), device=device)
    widget.set_camera(eye=(0.0, 0.0, 0.0), target=(10.0, 0.0, 0.0), fov_y=60.0, near=0.5)
    yield widget, spheres, angles
    widget.close()


def checked_rows(widget, spheres, angles):
    """Ring rows clear of the frustum's side edges (±30°) and of the title band."""
    rows = []
    for i in range(RING):
        a = (angles[i] + 180) % 360 - 180
        if abs(abs(a) - 30) < 9:
            continue
        if overview_pixel(widget, spheres[i, 0], spheres[i, 2])[1] < 32:
            continue
        rows.append(i)
    return rows


def test_overview_shows_visible_and_culled_colours_where_expected(ring):
    widget, spheres, angles = ring
    image = widget.draw_offscreen(width=W, height=H)
    save("culling-ring.png", image)
    visible = set(frustum_spheres(spheres, widget.frustum_planes()).tolist())
    assert set(widget.visible_ids().tolist()) == visible
    assert {NEAR_ROW, FAR_ROW} <= visible and 0 in visible and RING // 2 not in visible
    rows = checked_rows(widget, spheres, angles)
    assert len(rows) > 20
    seen = {"visible": 0, "culled": 0}
    for i in rows + [NEAR_ROW, FAR_ROW]:
        x, y = overview_pixel(widget, spheres[i, 0], spheres[i, 2])
        name = "visible" if i in visible else "culled"
        np.testing.assert_allclose(image[y, x, :3], rgb(name), atol=2, err_msg=f"row {i} at ({x}, {y})")
        seen[name] += 1
    assert seen["visible"] >= 4 and seen["culled"] >= 15
    # between the ring's squares the overview shows its background, not an instance colour
    x, y = overview_pixel(widget, -15.0, 8.0)
    np.testing.assert_allclose(image[y, x, :3], rgb("overview_background"), atol=2)
    # the perspective view draws the visible instances, lit: not the background
    for i in (0, 2, NEAR_ROW):
        px, py = perspective_pixel(spheres[i, 0], spheres[i, 2])
        assert np.abs(image[py, px, :3].astype(int) - rgb("background")).max() > 20, f"row {i} is drawn"


def test_culling_off_brightens_every_instance(ring):
    widget, spheres, angles = ring
    widget.culling = False
    try:
        image = widget.draw_offscreen(width=W, height=H)
        assert widget.visible_count() == len(spheres)
    finally:
        widget.culling = True
    save("culling-ring-off.png", image)
    for i in checked_rows(widget, spheres, angles):
        x, y = overview_pixel(widget, spheres[i, 0], spheres[i, 2])
        np.testing.assert_allclose(image[y, x, :3], rgb("visible"), atol=2, err_msg=f"row {i}")


def test_pick_returns_the_front_instance_and_highlights_it(ring):
    widget, spheres, angles = ring
    widget.draw_offscreen(width=W, height=H)
    # the near sphere hides the larger one behind it, though the far one is drawn later: depth testing
    assert widget.pick(*perspective_pixel(10.0, 0.0)) == NEAR_ROW
    target = 1  # 10 degrees to the right of the view axis
    px, py = perspective_pixel(spheres[target, 0], spheres[target, 2])
    assert widget.pick(px, py) == target
    assert widget.pick(W // 4, 6) is None, "the sky above the horizon holds no instance"
    culled = RING // 2
    assert widget.pick(*overview_pixel(widget, spheres[culled, 0], spheres[culled, 2])) == culled
    assert widget.pick(*overview_pixel(widget, spheres[target, 0], spheres[target, 2])) == target
    image = widget.draw_offscreen(width=W, height=H)
    save("culling-ring-hover.png", image)
    x, y = overview_pixel(widget, spheres[target, 0], spheres[target, 2])
    np.testing.assert_allclose(image[y, x, :3], rgb("hover"), atol=2)
    x, y = overview_pixel(widget, spheres[2, 0], spheres[2, 2])
    np.testing.assert_allclose(image[y, x, :3], rgb("visible"), atol=2, err_msg="only the picked one is highlighted")


def test_dense_overview_points_show_the_same_colours(device):
    """The overview of dense scenes draws culled rows as one-pixel points
    (forced here on the ring): the same colours at the same places."""
    from gpuviz.tables import GPUData
    from gpuviz.widgets.culling.camera import Camera
    from gpuviz.widgets.culling.frame import CullingFrame
    from gpuviz.widgets.culling.scene import scene_extent

    spheres, angles = ring_scene()
    frame = CullingFrame(device, GPUData.from_numpy(device, spheres), extent=scene_extent(spheres), own_spheres=True,
                         overview_points=True)
    frame.set_render_size((W, H))
    frame.set_camera(Camera.checked(eye=(0.0, 0.0, 0.0), target=(10.0, 0.0, 0.0), near=0.5))
    image = render_frame(device, frame, (W, H))
    save("culling-ring-points.png", image)
    visible = set(frustum_spheres(spheres, frame.planes()).tolist())
    x0, z0, x1, z1 = frame.overview_bounds
    checked = 0
    for i in range(RING):
        a = (angles[i] + 180) % 360 - 180
        x = W // 2 + (spheres[i, 0] - x0) / (x1 - x0) * (W - W // 2)
        y = (spheres[i, 2] - z0) / (z1 - z0) * H
        if abs(abs(a) - 30) < 9 or y < 32:
            continue
        patch = image[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2, :3].reshape(-1, 3).astype(int)
        want = rgb("visible" if i in visible else "culled")
        assert (np.abs(patch - want).max(1) <= 2).any(), f"row {i} near ({x:.1f}, {y:.1f})"
        if i not in visible:  # a point is one pixel: most of the patch is background
            assert (np.abs(patch - want).max(1) <= 2).sum() <= 4
        checked += 1
    assert checked > 20
    frame.destroy()
