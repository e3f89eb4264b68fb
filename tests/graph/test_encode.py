"""Real encoding on the GPU: compute chains, render and copy nodes, overrides,
timestamps and destruction, all checked on the CPU."""

import numpy as np
import pytest
import wgpu

from gpuviz import ComputeKernel, GPUCommandGraph

from .helpers import STORAGE, affine_node, read_u32, run, upload

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage


def _chain(device, n, source_buffer, target_buffer, *, log=None, target_offset=0):
    """source -> *2 -> scratch-1 -> +5 -> scratch-2 -> *3 -> target."""
    graph = GPUCommandGraph(device, id="chain")
    src = graph.import_buffer(id="source", byte_length=n * 4, usage=STORAGE, buffer=source_buffer)
    dst = graph.import_buffer(id="target", byte_length=target_offset + n * 4, usage=STORAGE, buffer=target_buffer)
    s1 = graph.create_transient_buffer(id="scratch-1", byte_length=n * 4, usage=BU.STORAGE)
    s2 = graph.create_transient_buffer(id="scratch-2", byte_length=n * 4, usage=BU.STORAGE)
    s3 = graph.create_transient_buffer(id="scratch-3", byte_length=n * 4, usage=BU.STORAGE)
    view = lambda h, off=0: graph.create_data_view(h, format="uint32", length=n, byte_offset=off)
    # Added out of dependency order on purpose: hazards, not insertion, decide.
    affine_node(graph, "times-2", view(src), view(s1), factor=2, log=log)
    affine_node(graph, "plus-5", view(s1), view(s2), add=5, log=log)
    affine_node(graph, "copy-out", view(s2), view(s3), log=log)
    affine_node(graph, "times-3", view(s3), view(dst, target_offset), factor=3, log=log)
    return graph


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1000])
def test_compute_chain_matches_cpu(device, n):
    values = np.arange(n, dtype=np.uint32) * 7
    source, target = upload(device, values), upload(device, np.zeros(n + 64, np.uint32))
    compiled = _chain(device, n, source, target, target_offset=4).compile()
    assert compiled.stats.pass_count == 1  # consecutive compute nodes share one pass
    # scratch-1 and scratch-3 have disjoint lifetimes and share one allocation
    assert compiled.stats.physical_transient_count == 2
    run(device, compiled)
    out = read_u32(device, target)
    np.testing.assert_array_equal(out[1:n + 1], (values * 2 + 5) * 3)
    assert out[0] == 0 and out[n + 1] == 0  # neighbours of the offset view untouched
    compiled.destroy()


def test_encode_records_but_never_submits(device):
    n = 64
    source, target = upload(device, np.ones(n, np.uint32)), upload(device, np.zeros(n, np.uint32))
    compiled = _chain(device, n, source, target).compile()
    encoder = device.create_command_encoder()
    times = compiled.encode(encoder)
    assert set(times) == {"times-2", "plus-5", "copy-out", "times-3"}
    assert all(t >= 0 for t in times.values())
    assert not read_u32(device, target).any()  # nothing ran: the encoder is still the caller's
    device.queue.submit([encoder.finish()])
    assert (read_u32(device, target) == 21).all()


def test_overrides_swap_buffers_between_encodings(device):
    n = 100
    a, b = upload(device, np.full(n, 1, np.uint32)), upload(device, np.full(n, 2, np.uint32))
    out_a, out_b = (upload(device, np.zeros(n, np.uint32)) for _ in range(2))
    compiled = _chain(device, n, a, out_a).compile()
    run(device, compiled)
    run(device, compiled, buffers={"source": b, "target": out_b})
    assert (read_u32(device, out_a) == 21).all()
    assert (read_u32(device, out_b) == 27).all()


def test_imports_survive_destroy(device):
    n = 16
    source, target = upload(device, np.ones(n, np.uint32)), upload(device, np.zeros(n, np.uint32))
    compiled = _chain(device, n, source, target).compile()
    run(device, compiled)
    compiled.destroy()
    device.queue.write_buffer(source, 0, np.full(n, 9, np.uint32))
    assert (read_u32(device, source) == 9).all()
    assert (read_u32(device, target) == 21).all()


def test_timestamps_give_one_pass_per_node_and_gpu_durations(device):
    if "timestamp-query" not in device.features:
        pytest.skip("adapter has no timestamp-query")
    n = 256
    source, target = upload(device, np.ones(n, np.uint32)), upload(device, np.zeros(n, np.uint32))
    log = []
    compiled = _chain(device, n, source, target, log=log).compile()
    for _ in range(2):
        run(device, compiled, timestamps=True)
    first, second = compiled.read_timings(), compiled.read_timings()
    for timings in (first, second):
        assert set(timings) == {"times-2", "plus-5", "copy-out", "times-3"}
        assert all(0 <= t < 10 for t in timings.values())
    assert compiled.read_timings() is None  # nothing pending
    assert log == ["times-2", "plus-5", "copy-out", "times-3"] * 2
    assert (read_u32(device, target) == 21).all()


def test_timing_ring_drops_frames_instead_of_stalling(device):
    if "timestamp-query" not in device.features:
        pytest.skip("adapter has no timestamp-query")
    n = 16
    compiled = _chain(device, n, upload(device, np.ones(n, np.uint32)), upload(device, np.zeros(n, np.uint32))).compile()
    for _ in range(5):  # three slots: the 4th and 5th frames encode without timings
        run(device, compiled, timestamps=True)
    assert compiled.dropped_timing_frames == 2
    assert compiled.read_timings() is not None


def test_copy_node_and_tiled_dispatch(device):
    """A kernel dispatch wider than 65535 workgroups is tiled in 2-D, then a
    copy node moves the result into a readback buffer."""
    groups = 70000
    code = """
    @group(0) @binding(0) var<storage, read_write> out: array<u32>;
    @compute @workgroup_size(1)
    fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
        let g = wid.x + wid.y * nwg.x;
        if (g < 70000u) { out[g] = g + 1u; }
    }"""
    graph = GPUCommandGraph(device, id="tiled")
    scratch = graph.create_transient_buffer(id="ids", byte_length=groups * 4, usage=BU.STORAGE | BU.COPY_SRC)
    host = device.create_buffer(size=groups * 4, usage=BU.COPY_DST | BU.MAP_READ)
    result = graph.import_buffer(id="host", byte_length=groups * 4, usage=BU.COPY_DST, buffer=host)

    def compile_fill(ctx):
        kernel = ComputeKernel(ctx.device, code=code, label="fill")
        assert kernel.workgroup_grid(groups) == (65535, 2, 1)
        return lambda p, frame: kernel.dispatch(p, frame, bindings={0: scratch}, workgroups=groups)

    graph.add_compute_node(id="fill", resources=[(scratch, "storage-write")], compile=compile_fill)
    graph.add_copy_node(id="download", resources=[(scratch, "copy-source"), (result, "copy-destination")],
                        compile=lambda ctx: lambda enc, frame: enc.copy_buffer_to_buffer(
                            frame.buffer(scratch), 0, frame.buffer(result), 0, groups * 4))
    compiled = graph.compile()
    assert compiled.stats.node_order == ["fill", "download"] and compiled.stats.pass_count == 2
    timed = "timestamp-query-inside-encoders" in device.features
    run(device, compiled, timestamps=timed)
    if timed:  # copy nodes are timed with encoder-level timestamps
        assert set(compiled.read_timings()) == {"fill", "download"}
    host.map_sync(wgpu.MapMode.READ)
    out = np.frombuffer(host.read_mapped(), dtype=np.uint32)
    host.unmap()
    np.testing.assert_array_equal(out, np.arange(1, groups + 1, dtype=np.uint32))


RECT_WGSL = """
struct Rect { x0: f32, y0: f32, x1: f32, y1: f32 };
@group(0) @binding(0) var<storage, read> rects: array<Rect>;
@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {
    let r = rects[i];
    let corner = vec2<u32>(v & 1u, select(0u, 1u, v == 2u || v == 4u || v == 5u));
    let xy = vec2<f32>(select(r.x0, r.x1, corner.x == 1u), select(r.y0, r.y1, corner.y == 1u));
    return vec4<f32>(xy, 0.0, 1.0);
}
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0, 0.0, 0.0, 1.0); }
"""


def test_render_node_draws_into_an_offscreen_texture(device):
    """A compute node writes rectangles, a render node draws them into a
    transient texture, a copy node reads it back: red pixel count is checked."""
    size = 32
    graph = GPUCommandGraph(device, id="render")
    rects = graph.create_transient_buffer(id="rects", byte_length=32, usage=BU.STORAGE)
    color = graph.create_transient_texture(id="color", size=(size, size), format="rgba8unorm",
                                           usage=TU.RENDER_ATTACHMENT | TU.COPY_SRC)
    pixels = device.create_buffer(size=256 * size, usage=BU.COPY_DST | BU.MAP_READ)
    out = graph.import_buffer(id="pixels", byte_length=256 * size, usage=BU.COPY_DST, buffer=pixels)
    write_rects = """
    @group(0) @binding(0) var<storage, read_write> r: array<f32>;
    @compute @workgroup_size(1) fn main() {
        // left half [-1, 0] x [-1, 1] and a top-right quarter [0.5, 1] x [0.5, 1]
        r[0] = -1.0; r[1] = -1.0; r[2] = 0.0; r[3] = 1.0;
        r[4] = 0.5; r[5] = 0.5; r[6] = 1.0; r[7] = 1.0;
    }"""

    def compile_rects(ctx):
        kernel = ComputeKernel(ctx.device, code=write_rects, label="rects")
        return lambda p, frame: kernel.dispatch(p, frame, bindings={0: rects}, workgroups=1)

    def compile_draw(ctx):
        module = ctx.device.create_shader_module(code=RECT_WGSL)
        pipeline = ctx.device.create_render_pipeline(
            layout="auto", vertex={"module": module, "entry_point": "vs"},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": "rgba8unorm"}]},
            primitive={"topology": "triangle-list"})

        def encode(render_pass, frame):
            group = ctx.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": frame.buffer(rects)}}])
            render_pass.set_pipeline(pipeline)
            render_pass.set_bind_group(0, group)
            render_pass.draw(6, 2)
        return encode

    graph.add_compute_node(id="make-rects", resources=[(rects, "storage-write")], compile=compile_rects)
    graph.add_render_node(id="draw-rects", resources=[(rects, "storage-read")], compile=compile_draw,
                          color_attachments=[{"view": graph.create_texture_view(color), "clear_value": (0, 0, 1, 1)}])
    graph.add_copy_node(id="read-pixels", resources=[(color, "copy-source"), (out, "copy-destination")],
                        compile=lambda ctx: lambda enc, frame: enc.copy_texture_to_buffer(
                            {"texture": frame.texture(color)},
                            {"buffer": frame.buffer(out), "bytes_per_row": 256, "rows_per_image": size},
                            (size, size, 1)))
    compiled = graph.compile()
    assert compiled.stats.node_order == ["make-rects", "draw-rects", "read-pixels"]
    run(device, compiled)
    pixels.map_sync(wgpu.MapMode.READ)
    image = np.frombuffer(pixels.read_mapped(), dtype=np.uint8).reshape(size, 256)[:, : size * 4].reshape(size, size, 4)
    pixels.unmap()
    red = (image[..., 0] == 255) & (image[..., 2] == 0)
    blue = (image[..., 2] == 255) & (image[..., 0] == 0)
    assert red[:, : size // 2].all() and not red[size // 4 :, size // 2 :].any()
    assert red.sum() == size * size // 2 + (size // 4) ** 2
    assert blue.sum() == size * size - red.sum()


def test_imported_texture_views_and_overrides(device):
    """A render node clears one mip of an imported texture; overrides must
    match size, format and usage before anything is recorded."""
    from gpuviz import OverrideError, ViewRangeError

    usage = TU.RENDER_ATTACHMENT | TU.COPY_SRC
    make = lambda size=(8, 8), fmt="rgba8unorm", use=usage: device.create_texture(
        size=(*size, 1), format=fmt, usage=use, mip_level_count=2)
    first, second = make(), make()
    graph = GPUCommandGraph(device, id="textures")
    target = graph.import_texture(id="target", size=(8, 8), format="rgba8unorm", usage=usage, texture=first,
                                  mip_level_count=2)
    with pytest.raises(ViewRangeError, match=r"selects 0 mip levels from 2 \(texture has 2\)"):
        graph.create_texture_view(target, base_mip_level=2)
    mip1 = graph.create_texture_view(target, base_mip_level=1, mip_level_count=1)
    graph.add_render_node(id="clear-mip-1", compile=lambda ctx: lambda render_pass, frame: None,
                          color_attachments=[{"view": mip1, "clear_value": (0, 1, 0, 1)}])
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    with pytest.raises(OverrideError, match="does not match its descriptor"):
        compiled.encode(encoder, textures={"target": make(size=(4, 4))})
    with pytest.raises(OverrideError, match="lacks declared usage"):
        compiled.encode(encoder, textures={"target": make(use=TU.RENDER_ATTACHMENT)})
    run(device, compiled, textures={"target": second})
    pixels = device.queue.read_texture({"texture": second, "mip_level": 1}, {"bytes_per_row": 256}, (4, 4, 1))
    image = np.frombuffer(pixels, np.uint8).reshape(4, 256)[:, :16].reshape(4, 4, 4)
    assert (image == [0, 255, 0, 255]).all()
    untouched = device.queue.read_texture({"texture": first, "mip_level": 1}, {"bytes_per_row": 256}, (4, 4, 1))
    assert not np.frombuffer(untouched, np.uint8).any()  # the default was overridden, not used
