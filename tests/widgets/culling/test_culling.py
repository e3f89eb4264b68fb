"""FrustumCulling against numpy: visible IDs over random cameras (spheres
straddling each plane, zero and huge radii, non-finite and negative rows,
all culled, all visible), the planes against an independent geometric
derivation, culling off, no recompilation on camera changes, named errors.

One widget borrows a GPUData of spheres whose contents each case rewrites
(``queue.write_buffer``: the compiled graph reads the buffer at every
encoding), so the cases share one compilation.
"""

import math

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings, strategies as st

from gpuviz.errors import GraphStateError, GraphTypeError, GraphValidationError, UsageError
from gpuviz.oracles.workflows import frustum_spheres
from gpuviz.tables import GPUData
from gpuviz.widgets.culling.scene import city_spheres
from gpuviz.widgets.culling.widget import FrustumCulling

N = 2048
SIZE = (640, 320)  # the perspective view is 320 x 320: aspect 1
BU = wgpu.BufferUsage


def geometric_planes(eye, target, up, fov_y, aspect, near, far):
    """The frustum's six inward planes from its corners (no matrices):
    left, right, bottom, top, near, far."""
    eye, target, up = (np.asarray(v, np.float64) for v in (eye, target, up))
    f = (target - eye) / np.linalg.norm(target - eye)
    r = np.cross(f, up)
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    th = math.tan(math.radians(fov_y) / 2)

    def corner(dist, sx, sy):
        return eye + f * dist + r * (sx * th * aspect * dist) + u * (sy * th * dist)

    def plane(a, b, c, inside):
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        d = -n @ a
        return np.append(n, d) if n @ inside + d > 0 else -np.append(n, d)

    inside = eye + f * (near + far) / 2
    fl = {k: corner(far, *k) for k in ((-1, -1), (1, -1), (1, 1), (-1, 1))}
    return np.array([
        plane(eye, fl[(-1, -1)], fl[(-1, 1)], inside), plane(eye, fl[(1, -1)], fl[(1, 1)], inside),
        plane(eye, fl[(-1, -1)], fl[(1, -1)], inside), plane(eye, fl[(-1, 1)], fl[(1, 1)], inside),
        np.append(f, -f @ (eye + f * near)), np.append(-f, f @ (eye + f * far))])


# ----------------------------------------------------------------- fixture
@pytest.fixture(scope="module")
def scene(device):
    rng = np.random.default_rng(3)
    spheres = GPUData.from_numpy(device, cloud(rng), BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
    widget = FrustumCulling(spheres, size=SIZE, device=device)
    yield widget, spheres
    widget.close()
    spheres.destroy()


def cloud(rng, n=N):
    s = np.empty((n, 4), np.float32)
    s[:, :3] = rng.uniform(-40, 40, (n, 3))
    s[:, 3] = rng.uniform(0, 3, n)
    return s


def write(device, gpu, spheres):
    device.queue.write_buffer(gpu.buffer, 0, np.ascontiguousarray(spheres, np.float32).tobytes())


def straddlers(rng, planes, eye, forward, near, far, per_plane=24):
    """Spheres centred at -1.5r, -0.5r, +0.5r (and on) each plane, around points inside the frustum."""
    rows = []
    for n_d in planes.astype(np.float64):
        n, d = n_d[:3], n_d[3]
        for k in range(per_plane):
            inside = eye + forward * rng.uniform(near * 2 + 1, far * 0.8)
            on = inside - (n @ inside + d) * n
            r = rng.uniform(0.2, 2.0)
            t = (-1.5, -0.5, 0.0, 0.5)[k % 4]
            rows.append([*(on + n * t * r), r])
    return np.array(rows, np.float32)


def specials():
    """Non-finite, negative, zero and huge radii around the origin."""
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    return np.array([[nan, 0, 0, 1], [0, nan, 0, 1], [0, 0, 0, nan], [inf, 0, 0, 1], [0, 0, 0, inf],
                     [0, 0, 0, -1], [1, 1, 1, 0], [0, 0, 0, 0], [5e3, 5e3, 5e3, 1e30], [-1e4, 0, 0, 3e4],
                     [2, -1, 3, -0.0]], np.float32)


def check_against_oracle(widget, spheres):
    planes = widget.frustum_planes()
    want, close = frustum_spheres(spheres, planes, tolerance=1e-5)
    got = widget.visible_ids()
    assert got.dtype == np.uint32 and np.all(np.diff(got.astype(np.int64)) > 0), "IDs ascend (stable compaction)"
    assert widget.visible_count() == got.size
    differ = np.setxor1d(got, want)
    assert np.isin(differ, close).all(), f"rows {differ[~np.isin(differ, close)][:8]} differ from the oracle"
    assert close.size < 0.02 * len(spheres) + 2
    return got


# ------------------------------------------------------------------- tests
camera_values = st.tuples(st.floats(-60, 60), st.floats(-60, 60), st.floats(-60, 60),
                          st.floats(-20, 20), st.floats(-20, 20), st.floats(-20, 20),
                          st.floats(20, 120), st.floats(0.05, 2.0), st.one_of(st.none(), st.floats(20, 200)))


@settings(max_examples=6, deadline=None)
@given(values=camera_values, seed=st.integers(0, 2**16))
def test_visible_ids_match_numpy_over_random_cameras(device, scene, values, seed):
    widget, gpu = scene
    ex, ey, ez, tx, ty, tz, fov, near, far = values
    eye, target = np.array([ex, ey, ez]), np.array([tx, ty, tz])
    view = target - eye
    if np.linalg.norm(view) < 1.0 or np.hypot(view[0], view[2]) < 1e-3 * np.linalg.norm(view):
        target = eye + np.array([3.0, 0.5, -2.0])  # too short, or straight up / down (parallel to up)
    widget.set_camera(eye=tuple(eye), target=tuple(target), fov_y=fov, near=near, far=far)
    rng = np.random.default_rng(seed)
    planes = widget.frustum_planes()
    forward = (target - eye) / np.linalg.norm(target - eye)
    extra = np.concatenate([straddlers(rng, planes, eye, forward, near, widget.camera["far"]), specials()])
    spheres = cloud(rng)
    rows = rng.choice(N, extra.shape[0], replace=False)
    spheres[rows] = extra
    write(device, gpu, spheres)
    got = check_against_oracle(widget, spheres)
    bad = rows[-len(specials()):][:6]
    assert not np.isin(bad, got).any(), "non-finite rows and the negative radius are culled"


def test_straddling_zero_and_huge_radii_at_fixed_camera(device, scene):
    widget, gpu = scene
    widget.set_camera(eye=(0.0, 0.0, 30.0), target=(0.0, 0.0, 0.0), fov_y=50.0, near=1.0, far=80.0)
    planes = widget.frustum_planes()
    rng = np.random.default_rng(9)
    spheres = cloud(rng)
    s = np.concatenate([specials(), straddlers(rng, planes, np.array([0, 0, 30.0]), np.array([0, 0, -1.0]), 1.0,
                                               80.0, per_plane=40)])
    spheres[:len(s)] = s
    write(device, gpu, spheres)
    got = check_against_oracle(widget, spheres)
    sp = specials()
    huge = [i for i in range(len(sp)) if np.isfinite(sp[i]).all() and sp[i, 3] > 1e4]
    assert set(huge) <= set(got.tolist()), "a huge radius reaches into the frustum"
    assert {6, 7} <= set(got.tolist()), "zero radii inside the frustum are kept"
    assert not {0, 1, 2, 3, 4, 5}.intersection(got.tolist()), "non-finite and negative radii are culled"
    # straddlers: centre 1.5 r outside a plane is culled by that plane, 0.5 r outside is kept by it
    base = len(sp)
    margins = s[base:, :3] @ planes[:, :3].T + planes[:, 3]
    for k in range(len(s) - base):
        t = (-1.5, -0.5, 0.0, 0.5)[k % 4]
        if t == -1.5:
            assert base + k not in got
        elif (margins[k] + s[base + k, 3] >= 1e-3).all():
            assert base + k in got


def test_all_culled_and_all_visible(device, scene):
    widget, gpu = scene
    rng = np.random.default_rng(5)
    spheres = cloud(rng)
    spheres[:, 2] = np.abs(spheres[:, 2]) + 50  # everything behind the camera at z=40 looking at -z
    write(device, gpu, spheres)
    widget.set_camera(eye=(0.0, 0.0, 40.0), target=(0.0, 0.0, 0.0), near=0.5, far=300.0)
    assert widget.visible_count() == 0 and widget.visible_ids().size == 0
    widget.set_camera(eye=(0.0, 0.0, -300.0), target=(0.0, 0.0, 60.0), fov_y=60.0, near=0.5, far=2000.0)
    got = check_against_oracle(widget, spheres)
    assert got.size == N, "the whole cloud fits this frustum"
    widget.set_camera(eye=(0.0, 0.0, 40.0), target=(0.0, 0.0, 0.0), near=0.5, far=300.0)
    spheres[:3] = specials()[:3]
    write(device, gpu, spheres)
    widget.culling = False
    try:
        assert widget.culling is False
        np.testing.assert_array_equal(widget.visible_ids(), np.arange(3, N, dtype=np.uint32))
        assert widget.visible_count() == N - 3, "culling off draws every finite row"
    finally:
        widget.culling = True
    assert widget.visible_count() == 0


@pytest.mark.parametrize("camera", [
    dict(eye=(10.0, 5.0, 20.0), target=(0.0, 0.0, 0.0), fov_y=60.0, near=0.1, far=150.0),
    dict(eye=(-3.0, 40.0, 0.5), target=(2.0, 0.0, -1.0), up=(0.0, 0.0, -1.0), fov_y=35.0, near=2.0, far=90.0),
    dict(eye=(0.0, 1.0, 0.0), target=(5.0, 1.2, -3.0), fov_y=100.0, near=0.01, far=10.0),
])
def test_frustum_planes_match_an_independent_derivation(scene, camera):
    widget, _ = scene
    widget.set_camera(**camera)
    planes = widget.frustum_planes()
    assert planes.dtype == np.float32 and planes.shape == (6, 4)
    np.testing.assert_allclose(np.linalg.norm(planes[:, :3], axis=1), 1.0, rtol=1e-5)
    c = widget.camera
    assert c["far"] == camera["far"] and c["fov_y"] == camera["fov_y"]
    want = geometric_planes(c["eye"], c["target"], c["up"], c["fov_y"], 1.0, c["near"], c["far"])
    scale = 1.0 + np.abs(want[:, 3:])
    np.testing.assert_allclose(planes / scale, want / scale, atol=2e-5)


def test_far_none_reaches_past_the_scene(scene):
    widget, _ = scene
    widget.set_camera(eye=(0.0, 0.0, 100.0), target=(0.0, 0.0, 0.0))
    far = widget.camera["far"]
    assert widget.camera["near"] == 0.1
    assert far > 100.0 + 40 * math.sqrt(3), "the default far plane lies beyond every scene centre"


def test_camera_changes_never_recompile(scene):
    widget, _ = scene
    compiled = widget.inspector.compiled
    for k in range(5):
        widget.set_camera(eye=(20.0 * math.cos(k), 10.0, 20.0 * math.sin(k)), target=(0.0, 0.0, 0.0), fov_y=40 + k)
        widget.visible_count()
        widget.culling = bool(k % 2)
    widget.culling = True
    widget.draw_offscreen(width=64, height=32)
    event = {"event_type": "pointer_down", "x": 10.0, "y": 10.0, "button": 1}
    assert widget.handle_event(event) is False
    assert widget.handle_event({"event_type": "pointer_move", "x": 30.0, "y": 14.0, "buttons": (1,)}) is True
    widget.handle_event({"event_type": "pointer_up", "x": 30.0, "y": 14.0, "button": 1})
    assert widget.handle_event({"event_type": "wheel", "x": 30.0, "y": 14.0, "dx": 0.0, "dy": 120.0}) is True
    assert widget.compile_count == 1 and widget.inspector.compiled is compiled


def test_orbit_events_move_the_eye_around_the_target(scene):
    widget, _ = scene
    widget.set_camera(eye=(0.0, 0.0, 20.0), target=(1.0, 2.0, 3.0))
    before = widget.camera
    widget.handle_event({"event_type": "pointer_down", "x": 100.0, "y": 100.0, "button": 1})
    widget.handle_event({"event_type": "pointer_move", "x": 160.0, "y": 90.0, "buttons": (1,)})
    widget.handle_event({"event_type": "pointer_up", "x": 160.0, "y": 90.0, "button": 1})
    after = widget.camera
    d0 = np.linalg.norm(np.subtract(before["eye"], before["target"]))
    d1 = np.linalg.norm(np.subtract(after["eye"], after["target"]))
    assert after["target"] == before["target"] and after["eye"] != before["eye"]
    assert d1 == pytest.approx(d0, rel=1e-9), "rotating keeps the distance"
    widget.handle_event({"event_type": "wheel", "x": 0.0, "y": 0.0, "dx": 0.0, "dy": 200.0})
    assert np.linalg.norm(np.subtract(widget.camera["eye"], after["target"])) > d1, "wheel down dollies out"
    widget.handle_event({"event_type": "pointer_down", "x": 100.0, "y": 100.0, "button": 2})
    widget.handle_event({"event_type": "pointer_move", "x": 120.0, "y": 100.0, "buttons": (2,)})
    widget.handle_event({"event_type": "pointer_up", "x": 120.0, "y": 100.0, "button": 2})
    assert widget.camera["target"] != after["target"], "right drag pans the target"


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(eye=(1.0, 2.0, 3.0), target=(1.0, 2.0, 3.0)), GraphValidationError, "eye and target must differ"),
    (dict(eye=(np.nan, 0.0, 0.0), target=(0.0, 0.0, 0.0)), GraphValidationError, "eye must be finite"),
    (dict(eye=(0.0, 0.0, 1.0), target=(0.0, np.inf, 0.0)), GraphValidationError, "target must be finite"),
    (dict(eye=(0.0, 5.0, 0.0), target=(0.0, 0.0, 0.0)), GraphValidationError, "parallel"),
    (dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), fov_y=180.0), GraphValidationError, "fov_y"),
    (dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), near=0.0), GraphValidationError, "near must be > 0"),
    (dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), near=1.0, far=0.5), GraphValidationError, "far must"),
    (dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), fov_y=np.nan), GraphValidationError, "fov_y must be finite"),
    (dict(eye=(0.0, 0.0), target=(0.0, 0.0, 0.0)), GraphValidationError, "eye must be 3 numbers"),
    (dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), near="x"), GraphTypeError, "near must be a number"),
])
def test_bad_cameras_raise_named_errors_and_change_nothing(scene, kwargs, error, text):
    widget, _ = scene
    widget.set_camera(eye=(0.0, 0.0, 30.0), target=(0.0, 0.0, 0.0))
    before = widget.camera
    with pytest.raises(error, match=text) as info:
        widget.set_camera(**kwargs)
    assert str(info.value).startswith("FrustumCulling set_camera")
    assert widget.camera == before


def test_bad_spheres_and_arguments(device):
    with pytest.raises(GraphValidationError, match=r"FrustumCulling spheres must have shape \(n, 4\).*\(5, 3\)"):
        FrustumCulling(np.zeros((5, 3), np.float32), device=device)
    with pytest.raises(GraphValidationError, match="FrustumCulling spheres must be float32 .*float64"):
        FrustumCulling(np.zeros((5, 4)), device=device)
    with pytest.raises(GraphValidationError, match="FrustumCulling spheres must have shape"):
        FrustumCulling(np.zeros(8, np.float32), device=device)
    flat = GPUData.from_numpy(device, np.zeros(8, np.float32))
    with pytest.raises(GraphValidationError, match='FrustumCulling spheres GPUData .* float32x4'):
        FrustumCulling(flat, device=device)
    storage_only = GPUData.from_numpy(device, np.zeros((4, 4), np.float32), BU.STORAGE)
    with pytest.raises(UsageError, match='FrustumCulling spheres GPUData .* needs a STORAGE . COPY_SRC buffer'):
        FrustumCulling(storage_only, device=device)
    storage_only.destroy()
    with pytest.raises(GraphTypeError, match="FrustumCulling spheres must be an"):
        FrustumCulling("spheres", device=device)
    with pytest.raises(GraphTypeError, match="FrustumCulling instances must be an integer"):
        FrustumCulling(instances=True, device=device)
    with pytest.raises(GraphValidationError, match="FrustumCulling instances must be >= 0"):
        FrustumCulling(instances=-1, device=device)
    with pytest.raises(GraphValidationError, match="FrustumCulling size"):
        FrustumCulling(instances=10, size=(0, 10), device=device)
    flat.destroy()


def test_bad_calls_and_closed_widget(device):
    widget = FrustumCulling(instances=500, size=(200, 100), device=device)
    assert widget.visible_count() > 0, "the default camera sees part of a generated city"
    with pytest.raises(GraphTypeError, match="FrustumCulling culling must be a bool"):
        widget.culling = "yes"
    with pytest.raises(GraphValidationError, match="FrustumCulling pick x must be a finite"):
        widget.pick(np.nan, 3)
    assert widget.pick(-5, 10) is None and widget.pick(50, 1000) is None
    with pytest.raises(GraphTypeError, match="handle_event"):
        widget.handle_event("click")
    widget.close()
    widget.close()
    for call in (widget.visible_ids, widget.visible_count, widget.frustum_planes, lambda: widget.camera,
                 lambda: widget.culling,
                 lambda: widget.set_camera(eye=(0, 0, 1), target=(0, 0, 0)), lambda: widget.pick(1, 1),
                 lambda: widget.draw_offscreen(width=8, height=8)):
        with pytest.raises(GraphStateError, match="FrustumCulling is closed"):
            call()


def test_empty_and_single_sphere_scenes(device):
    empty = FrustumCulling(np.zeros((0, 4), np.float32), size=(64, 32), device=device)
    assert empty.visible_count() == 0 and empty.visible_ids().size == 0
    assert empty.draw_offscreen(width=64, height=32).shape == (32, 64, 4)
    assert empty.pick(10, 10) is None
    empty.close()
    one = FrustumCulling(np.array([[0.0, 0.0, 0.0, 1.0]], np.float32), size=(64, 32), device=device)
    eye = np.array(one.camera["eye"])
    assert np.linalg.norm(eye) > 1.0, "the default camera stands outside a lone sphere"
    np.testing.assert_array_equal(one.visible_ids(), [0])
    one.close()


def test_frames_sample_the_readout_through_the_ring_and_auto_orbit_turns(device):
    """Canvas frames (draw hook, then the submit the canvas does) never wait:
    the readout shows the sampled count a frame or more later."""
    import time

    widget = FrustumCulling(instances=3000, size=(128, 64), device=device)
    planes = widget.frustum_planes()
    spheres = city_spheres(3000, seed=0)  # the generated scene, re-derived on the host
    expected = frustum_spheres(spheres, planes).size
    texture = device.create_texture(size=(128, 64, 1), format="rgba8unorm", usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    for _ in range(40):
        encoder = device.create_command_encoder()
        widget.draw(encoder, texture.create_view(), (128, 64))
        device.queue.submit([encoder.finish()])
        widget.frame_submitted()  # as GPUCanvas does after its submit
        if f"visible {expected:,} / 3,000" in widget.readout.value:
            break
        time.sleep(0.03)
    assert f"visible {expected:,} / 3,000" in widget.readout.value
    widget.auto_orbit_toggle.value = True
    before = widget.camera
    for _ in range(3):
        encoder = device.create_command_encoder()
        widget.draw(encoder, texture.create_view(), (128, 64))
        device.queue.submit([encoder.finish()])
        widget.frame_submitted()  # as GPUCanvas does after its submit
        time.sleep(0.02)
    after = widget.camera
    assert after["eye"] != before["eye"] and after["target"] == before["target"]
    assert widget.compile_count == 1
    widget.instances_dropdown.value = 50_000  # a new capacity: a new scene and compilation
    assert widget.visible_count() == frustum_spheres(city_spheres(50_000, seed=0), widget.frustum_planes()).size
    assert widget.compile_count == 2
    drawn = widget.canvas.frames_drawn
    widget.canvas.force_draw()  # the canvas's own frame path (a headless canvas is tiny)
    assert widget.canvas.frames_drawn == drawn + 1 and widget.canvas.device_lost is None
    widget.close()
    texture.destroy()


def test_a_dropped_frame_leaves_no_stale_readout(device):
    """A frame drawn into an encoder that is never submitted (a host's draw
    that raised) must not feed the readout: its sample's copy never ran, so
    its slot holds whatever was there before (zeros: a count of 0 before
    this fix). The slot is cancelled when the next frame encodes, and the
    readout shows only counts of submitted frames."""
    import time

    widget = FrustumCulling(instances=3000, size=(128, 64), device=device)
    expected = frustum_spheres(city_spheres(3000, seed=0), widget.frustum_planes()).size
    texture = device.create_texture(size=(128, 64, 1), format="rgba8unorm", usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    ring = widget._frame._ring
    taken = []

    def frame(submit=True):
        encoder = device.create_command_encoder()
        widget.draw(encoder, texture.create_view(), (128, 64))
        if submit:
            device.queue.submit([encoder.finish()])
            widget.frame_submitted()

    acquire = ring.try_acquire
    ring.try_acquire = lambda: taken.append(acquire()) or taken[-1]
    try:
        frame(submit=False)  # the first frame samples at once
    finally:
        del ring.try_acquire
    assert len(taken) == 1 and taken[0] is not None, "the dropped frame took a sample"
    seen = []
    for _ in range(40):
        frame()
        seen.append(widget._frame.visible)
        if seen[-1] == expected:
            break
        time.sleep(0.03)
    assert all(v in (None, expected) for v in seen), seen  # never the dropped slot's bytes
    assert seen[-1] == expected and f"visible {expected:,} / 3,000" in widget.readout.value, seen
    assert taken[0].state == "released", "the dropped sample's slot went back to the ring"
    widget.close()
    texture.destroy()


def test_device_loss_stops_frames_and_refuses_calls():
    """In a child process (a lost device must not take the suite's shared one with it)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os
        os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
        import time
        import wgpu, gpuviz
        from gpuviz.errors import GraphStateError
        from gpuviz.widgets.culling.widget import FrustumCulling
        device = gpuviz.request_device(shared=False)
        widget = FrustumCulling(instances=300, size=(64, 32), device=device)
        texture = device.create_texture(size=(64, 32, 1), format="rgba8unorm",
                                        usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
        for _ in range(3):  # readout samples in flight when the device goes
            encoder = device.create_command_encoder()
            widget.draw(encoder, texture.create_view(), (64, 32))
            device.queue.submit([encoder.finish()])
            widget.frame_submitted()
            time.sleep(0.12)
        device.destroy()
        print("event", widget.handle_event({"event_type": "wheel", "x": 1, "y": 1, "dy": 50}))
        widget.draw(device.create_command_encoder(), None, (64, 32))  # records nothing, raises nothing
        print("readout", widget.readout.value)
        for name, call in (("visible_ids", widget.visible_ids), ("pick", lambda: widget.pick(3, 3))):
            try:
                call()
                print(name, "returned")
            except GraphStateError as error:
                print(name, "refused:", error)
        widget.close()
        print("end")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert lines["event"] == "False"
    assert "GPU device lost: " in lines["readout"]
    for name in ("visible_ids", "pick"):
        assert lines[name].startswith(f"refused: FrustumCulling cannot run {name}(): GPU device lost: "), lines[name]
    assert out.rstrip().endswith("end")


@pytest.mark.parametrize("rows", [
    [[0.0, 0.0, 0.0, 3e38]],
    [[0.0, 0.0, 0.0, 3e38], [5.0, 1.0, -2.0, 3e38], [-4.0, 2.0, 3.0, float(np.finfo(np.float32).max)]],
    [[3e38, 0.0, 0.0, 1.0], [-3e38, 0.0, 0.0, 1.0], [0.0, 3e38, -3e38, 2.0]],
], ids=["one-giant-radius", "giant-radii", "centres-near-float32-max"])
def test_spheres_near_float32_max_build_draw_and_count(device, rows):
    """Radii and centres near float32 max (3e38) frame, cull and draw: the
    camera uniform saturates at float32 max instead of raising
    OverflowError, giant radii frame the view from the centres, and a
    sphere that large contains the whole frustum."""
    spheres = np.array(rows, np.float32)
    widget = FrustumCulling(spheres, size=(64, 32), device=device)
    try:
        assert all(abs(v) < 1e6 for v in widget.camera["eye"]) or np.abs(spheres[:, :3]).max() > 1e6, \
            "giant radii alone do not push the default camera away from the centres"
        visible = widget.visible_ids()
        giant = np.flatnonzero(spheres[:, 3] >= 3e38)
        assert np.isin(giant, visible).all(), "a sphere of radius ~3e38 contains the frustum"
        assert widget.draw_offscreen(width=32, height=16).shape == (16, 32, 4)
        widget.culling = False
        assert widget.visible_count() == len(spheres)
    finally:
        widget.close()


def test_cameras_past_float32_range_are_refused(scene):
    widget, _ = scene
    kept = widget.camera
    for kwargs in (dict(eye=(1e39, 0.0, 0.0), target=(0.0, 0.0, 0.0)),
                   dict(eye=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), far=1e40)):
        with pytest.raises(GraphValidationError, match="FrustumCulling set_camera (eye|far) must lie within "
                                                       "float32's range"):
            widget.set_camera(**kwargs)
    assert widget.camera == kept


def test_the_readout_follows_culling_off_without_other_redraws(device):
    """A canvas draws only when asked (request_draw): after culling is
    switched off the widget keeps asking for frames until a count sampled
    with the new parameters is read, so the readout says every row is
    drawn instead of showing the culled count indefinitely."""
    import time

    widget = FrustumCulling(instances=3000, size=(128, 64), device=device)
    texture = device.create_texture(size=(128, 64, 1), format="rgba8unorm", usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    requests = []
    widget.canvas.request_draw = lambda *args: requests.append(True)

    def frames_while_requested():
        for _ in range(200):
            if not requests:
                return
            requests.clear()
            encoder = device.create_command_encoder()
            widget.draw(encoder, texture.create_view(), (128, 64))
            device.queue.submit([encoder.finish()])
            widget.frame_submitted()
            time.sleep(0.01)

    try:
        expected = frustum_spheres(city_spheres(3000, seed=0), widget.frustum_planes()).size
        assert 0 < expected < 3000
        requests.append(True)  # the canvas's first frame
        frames_while_requested()
        assert f"visible {expected:,} / 3,000" in widget.readout.value
        widget.culling = False
        frames_while_requested()
        assert "visible 3,000 / 3,000 (100.0 %)" in widget.readout.value, widget.readout.value
        widget.culling = True
        frames_while_requested()
        assert f"visible {expected:,} / 3,000" in widget.readout.value, widget.readout.value
    finally:
        widget.close()
        texture.destroy()


def test_instance_selector_is_sorted_and_formatted_alike(device):
    widget = FrustumCulling(instances=20_000, size=(64, 32), device=device)
    try:
        labels, counts = zip(*widget.instances_dropdown.options)
        assert list(counts) == sorted(counts) and counts[:4] == (20_000, 50_000, 250_000, 1_000_000)
        assert labels[:4] == ("20K", "50K", "250K", "1M")
        assert widget.instances_dropdown.value == 20_000
    finally:
        widget.close()
    from gpuviz.widgets.culling.widget import count_label

    assert [count_label(c) for c in (0, 999, 1000, 2500, 12_345, 1_500_000, 10_000_000)] == \
        ["0", "999", "1K", "2.5K", "12,345", "1.5M", "10M"]
