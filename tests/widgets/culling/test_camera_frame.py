"""camera_frame (plain floats, what a frame writes) against the numpy
derivations it replaced on the frame path: perspective @ look_at,
gpuviz.workflows.frustum_planes of that matrix and frustum_corners (its
inverse), over random cameras; and the camera buffer a CullingFrame writes,
read back, against the same values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.workflows import frustum_planes
from gpuviz.widgets.culling.camera import (Camera, camera_frame, frustum_corners, look_at, perspective, planes_of)

coords = st.floats(-500, 500)


def _camera(values):
    ex, ey, ez, tx, ty, tz, fov, near, far_scale, aspect = values
    eye, target = np.array([ex, ey, ez]), np.array([tx, ty, tz])
    if np.linalg.norm(target - eye) < 1.0 or np.hypot(*(target - eye)[[0, 2]]) < 1e-2 * np.linalg.norm(target - eye):
        target = eye + np.array([3.0, 0.5, -2.0])
    camera = Camera.checked(eye=tuple(eye), target=tuple(target), fov_y=fov, near=near)
    return camera, aspect, near * far_scale


@settings(max_examples=60, deadline=None)
@given(values=st.tuples(coords, coords, coords, coords, coords, coords, st.floats(5, 170), st.floats(1e-3, 10),
                        st.floats(1.5, 1e5), st.floats(0.1, 10)))
def test_camera_frame_matches_the_numpy_derivation(values):
    camera, aspect, far = _camera(values)
    got = camera_frame(camera, aspect, far)
    vp = perspective(camera.fov_y, aspect, camera.near, far) @ look_at(camera.eye, camera.target, camera.up)
    np.testing.assert_allclose(np.array(got.view_projection).reshape(4, 4), vp, rtol=1e-12, atol=1e-12 * np.abs(vp).max())
    np.testing.assert_allclose(np.array(got.planes, np.float32).reshape(6, 4), frustum_planes(vp), rtol=1e-6, atol=1e-6 * max(1.0, np.abs(frustum_planes(vp)[:, 3]).max()))
    want = frustum_corners(vp)
    scale = max(1.0, np.abs(want).max())
    np.testing.assert_allclose(np.array(got.corners).reshape(8, 3), want, atol=1e-6 * scale * max(1.0, far / camera.near))
    np.testing.assert_array_equal(planes_of(camera, aspect, far), np.array(got.planes, np.float32).reshape(6, 4))


def test_corners_lie_on_their_planes():
    """Each corner is on the three planes that meet there (and inside the other three)."""
    camera = Camera.checked(eye=(3.0, 4.0, 10.0), target=(-1.0, 0.5, 0.0), fov_y=50.0, near=0.5)
    view = camera_frame(camera, 1.6, 40.0)
    planes = np.array(view.planes).reshape(6, 4)
    corners = np.array(view.corners).reshape(8, 3)
    distance = corners @ planes[:, :3].T + planes[:, 3]
    assert (distance > -1e-9 * 40).all()
    assert ((np.abs(distance) < 1e-9 * 40).sum(axis=1) == 3).all()


class _Recorder:
    """A device stand-in whose queue records each write_buffer (the camera buffer cannot be copied from)."""

    def __init__(self, device):
        self.queue, self.device, self.writes = self, device, []

    def write_buffer(self, buffer, offset, data):
        self.writes.append((buffer, offset, bytes(data)))
        self.device.queue.write_buffer(buffer, offset, data)


@pytest.mark.parametrize("culling", [True, False])
def test_the_camera_buffer_holds_the_frame(device, culling):
    """What CullingFrame.write_parameters writes in its one buffer write: the
    WGSL Camera (matrices column-major, eye + far, corners with w = 1) and the planes."""
    from gpuviz.tables import GPUData
    from gpuviz.widgets.culling.camera import PASS_ALL_PLANES
    from gpuviz.widgets.culling.frame import CullingFrame, overview_fit
    from gpuviz.widgets.culling.graph import view_rects
    from gpuviz.widgets.culling.scene import city_spheres, scene_extent

    spheres = city_spheres(2000, seed=3)
    frame = CullingFrame(device, GPUData.from_numpy(device, spheres), extent=scene_extent(spheres), own_spheres=True)
    try:
        frame.set_render_size((300, 200))
        frame.set_culling(culling)
        frame.set_camera(Camera.checked(eye=(30.0, 12.0, 40.0), target=(0.0, 0.0, 0.0), fov_y=55.0, near=0.3))
        frame.graph.device = recorder = _Recorder(device)
        try:
            frame.write_parameters()
        finally:
            frame.graph.device = device
        assert len(recorder.writes) == 1
        buffer, offset, data = recorder.writes[0]
        assert buffer is frame.graph.camera and offset == 0 and len(data) == buffer.size
        words = np.frombuffer(data, np.float32)
        rects = view_rects(300, 200)
        _, _, w, h = rects["perspective"]
        vp = frame.camera.view_projection(w / h, frame.far)
        np.testing.assert_allclose(words[:16].reshape(4, 4).T, vp, rtol=1e-6, atol=1e-7)
        _, overview, _ = overview_fit(frame.extent, rects["overview"])
        np.testing.assert_allclose(words[16:32].reshape(4, 4).T, overview, rtol=1e-6)
        np.testing.assert_allclose(words[32:36], (*frame.camera.eye, frame.far), rtol=1e-6)
        np.testing.assert_array_equal(words[40:48], (*rects["overview"], *rects["perspective"]))
        corners = words[48:80].reshape(8, 4)
        assert (corners[:, 3] == 1.0).all()
        np.testing.assert_allclose(corners[:, :3], frustum_corners(vp), rtol=1e-4, atol=1e-3)
        planes = words[frame.graph.planes_offset // 4:].reshape(6, 4)
        np.testing.assert_array_equal(planes, frame.planes() if culling else PASS_ALL_PLANES)
        assert not words[80:frame.graph.planes_offset // 4].any()
    finally:
        frame.destroy()
