"""What a compiled graph reuses between encodings (pass plans, the O(1)
destroyed-resource check, bind groups and render attachments keyed by the
encoding's resource mapping) never outlives what it was made for: a destroy
is still refused after any number of cached encodings, and an override
rebinds, then the compiled resources come back.

A refused encoding records nothing, so these tests never submit after a
destroy (a submit with a destroyed buffer aborts the process)."""

import numpy as np
import pytest
import wgpu

from gpuviz import ComputeKernel, GPUCommandGraph, GraphStateError

from .helpers import AFFINE_WGSL, STORAGE, affine_node, read_u32, run, upload

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage
N = 64


def _graph(device, *, graph_id="cache", add=1):
    """source -> +add -> scratch (transient) -> *2 -> target; returns (compiled, source buffer, target buffer)."""
    source = upload(device, np.arange(N, dtype=np.uint32))
    target = upload(device, np.zeros(N, np.uint32))
    graph = GPUCommandGraph(device, id=graph_id)
    src = graph.import_buffer(id="source", byte_length=4 * N, usage=STORAGE, buffer=source)
    dst = graph.import_buffer(id="target", byte_length=4 * N, usage=STORAGE, buffer=target)
    scratch = graph.create_transient_buffer(id="scratch", byte_length=4 * N, usage=BU.STORAGE)
    view = lambda h: graph.create_data_view(h, format="uint32", length=N)
    affine_node(graph, "plus", view(src), view(scratch), add=add)
    affine_node(graph, "times-2", view(scratch), view(dst), factor=2)
    return graph.compile(), source, target


def _expected(values, add=1):
    return (np.asarray(values, np.uint32) + add) * 2


@pytest.mark.parametrize("what", ["import", "owned"])
def test_cached_encodings_still_refuse_a_destroyed_buffer(device, what):
    """After several encodings (the O(1) path) a destroyed import or node-owned
    buffer is refused before anything is recorded, as on the first encoding."""
    owned = []
    graph = GPUCommandGraph(device, id="watch")
    source = upload(device, np.arange(N, dtype=np.uint32))
    src = graph.import_buffer(id="source", byte_length=4 * N, usage=STORAGE, buffer=source)
    out = graph.import_buffer(id="out", byte_length=4 * N, usage=STORAGE, buffer=upload(device, np.zeros(N, np.uint32)))

    def compile(ctx):
        kernel = ComputeKernel(ctx.device, code=AFFINE_WGSL, label="k", constants={"N": N, "ADD": 3})
        extra = ctx.own(upload(ctx.device, np.ones(N, np.uint32)))
        owned.append(extra)
        view = graph.create_data_view(src, format="uint32", length=N)
        return lambda p, frame: (kernel.dispatch(p, frame, bindings={0: view, 1: out}, workgroups=1),
                                 kernel.bind_group(frame, bindings={0: extra, 1: out}))

    graph.add_compute_node(id="uses", resources=[(src, "storage-read"), (out, "storage-write")], compile=compile)
    compiled = graph.compile()
    for _ in range(3):
        run(device, compiled)
    (source if what == "import" else owned[0]).destroy()
    encoder = device.create_command_encoder()
    match = 'import "source" was destroyed' if what == "import" else 'resource ".*" was destroyed outside the graph'
    for _ in range(2):  # and it stays refused
        with pytest.raises(GraphStateError, match=match):
            compiled.encode(encoder)
    encoder.finish()  # nothing was recorded: the encoder is still finishable (not submitted)


def test_cached_encodings_refuse_a_destroyed_transient(device):
    compiled, _, _ = _graph(device)
    run(device, compiled)
    run(device, compiled)
    compiled._physical[0].destroy()  # what a user reaching into the graph could do
    with pytest.raises(GraphStateError, match="was destroyed outside the graph"):
        compiled.encode(device.create_command_encoder())


def test_a_destroyed_import_can_still_be_overridden(device):
    """The watch turns stale, but an encoding that overrides the destroyed
    import with a live buffer is checked in full and runs."""
    compiled, source, target = _graph(device)
    run(device, compiled)
    source.destroy()
    fresh = upload(device, np.full(N, 10, np.uint32))
    for _ in range(2):
        run(device, compiled, buffers={"source": fresh})
    assert (read_u32(device, target) == _expected(10)).all()
    with pytest.raises(GraphStateError, match='import "source" was destroyed'):
        compiled.encode(device.create_command_encoder())


def test_bind_groups_follow_overrides_and_come_back(device):
    """compiled, override, compiled again: each encoding's results land in
    the buffers it bound (a cached bind group must not leak across)."""
    compiled, source, target = _graph(device)
    other_source = upload(device, np.full(N, 7, np.uint32))
    other_target = upload(device, np.zeros(N, np.uint32))
    run(device, compiled)
    assert (read_u32(device, target) == _expected(np.arange(N))).all()
    run(device, compiled, buffers={"source": other_source, "target": other_target})
    assert (read_u32(device, other_target) == _expected(7)).all()
    device.queue.write_buffer(target, 0, np.zeros(N, np.uint32))
    device.queue.write_buffer(source, 0, np.full(N, 5, np.uint32))
    run(device, compiled)
    assert (read_u32(device, target) == _expected(5)).all()
    assert (read_u32(device, other_target) == _expected(7)).all()  # the override's target untouched since


def test_frame_resources_key_follows_the_mapping(device):
    """One key for the compiled imports, one per override mapping (the same
    buffers again: the same key), and new keys once a destroy dropped them."""
    keys = []
    compiled, source, _ = _graph(device)
    graph = GPUCommandGraph(device, id="keys")
    handle = graph.import_buffer(id="x", byte_length=4 * N, usage=STORAGE, buffer=source)
    graph.add_compute_node(id="look", resources=[(handle, "storage-read")],
                           compile=lambda ctx: lambda p, frame: keys.append(frame.resources_key))
    looked = graph.compile()
    a, b = upload(device, np.zeros(N, np.uint32)), upload(device, np.zeros(N, np.uint32))
    for overrides in (None, None, {"x": a}, {}, {"x": a}, {"x": b}, {"x": a}):
        run(device, looked, **({} if overrides is None else {"buffers": overrides}))
    base, with_a, with_b = keys[0], keys[2], keys[5]
    assert None not in keys and keys == [base, base, with_a, base, with_a, with_b, with_a]
    assert len({id(base), id(with_a), id(with_b)}) == 3
    b.destroy()
    with pytest.raises(GraphStateError, match='buffer "x" override was destroyed'):
        looked.encode(device.create_command_encoder(), buffers={"x": b})
    run(device, looked, buffers={"x": a})
    assert keys[-1] is not with_a  # checked again after the destroy: a new mapping key
    run(device, looked)
    assert keys[-1] is base


def test_one_kernel_in_two_graphs_binds_each_graphs_buffers(device):
    """A kernel made outside compile and used by nodes of two graphs: the
    bind-group key includes the encoding, so each graph writes its own target."""
    kernel = ComputeKernel(device, code=AFFINE_WGSL, label="shared", constants={"N": N, "ADD": 1})
    compiled, targets = [], []
    for k in range(2):
        graph = GPUCommandGraph(device, id=f"shared-{k}")
        src = graph.import_buffer(id="source", byte_length=4 * N, usage=STORAGE,
                                  buffer=upload(device, np.full(N, 100 * (k + 1), np.uint32)))
        targets.append(upload(device, np.zeros(N, np.uint32)))
        dst = graph.import_buffer(id="target", byte_length=4 * N, usage=STORAGE, buffer=targets[-1])
        bindings = {0: src, 1: dst}  # the same handles' objects are per graph; the dict shape is the same
        graph.add_compute_node(id="add", resources=[(src, "storage-read"), (dst, "storage-write")],
                               compile=lambda ctx, b=bindings: lambda p, frame: kernel.dispatch(
                                   p, frame, bindings=b, workgroups=1))
        compiled.append(graph.compile())
    for _ in range(2):
        for c in compiled:
            run(device, c)
    assert (read_u32(device, targets[0]) == 101).all() and (read_u32(device, targets[1]) == 201).all()


def test_a_bindings_dict_changed_between_encodings_rebinds(device):
    """A node that reuses one bindings dict and points it elsewhere between
    encodings gets a group for what the dict holds now."""
    graph = GPUCommandGraph(device, id="swap")
    src = graph.import_buffer(id="source", byte_length=4 * N, usage=STORAGE,
                              buffer=upload(device, np.full(N, 4, np.uint32)))
    outs = [upload(device, np.zeros(N, np.uint32)) for _ in range(2)]
    handles = [graph.import_buffer(id=f"out-{k}", byte_length=4 * N, usage=STORAGE, buffer=b)
               for k, b in enumerate(outs)]
    bindings = {0: src, 1: handles[0]}

    def compile(ctx):
        kernel = ComputeKernel(ctx.device, code=AFFINE_WGSL, label="swap", constants={"N": N, "FACTOR": 3})
        return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=1)

    graph.add_compute_node(id="write", resources=[(src, "storage-read"), *((h, "storage-write") for h in handles)],
                           compile=compile)
    compiled = graph.compile()
    run(device, compiled)
    bindings[1] = handles[1]
    run(device, compiled)
    assert (read_u32(device, outs[0]) == 12).all() and (read_u32(device, outs[1]) == 12).all()
    device.queue.write_buffer(outs[0], 0, np.zeros(N, np.uint32))
    bindings[1] = handles[0]
    run(device, compiled)
    assert (read_u32(device, outs[0]) == 12).all()


def test_render_attachments_follow_texture_overrides(device):
    """A render node's attachments are reused between encodings of the
    compiled texture, rebuilt for an override, and a destroyed texture is refused."""
    usage = TU.RENDER_ATTACHMENT | TU.COPY_SRC
    make = lambda: device.create_texture(size=(4, 4, 1), format="rgba8unorm", usage=usage)
    first, second = make(), make()
    graph = GPUCommandGraph(device, id="clears")
    target = graph.import_texture(id="target", size=(4, 4), format="rgba8unorm", usage=usage, texture=first)
    graph.add_render_node(id="clear", compile=lambda ctx: lambda render_pass, frame: None,
                          color_attachments=[{"view": graph.create_texture_view(target), "clear_value": (1, 0, 0, 1)}])
    compiled = graph.compile()

    def pixel(texture):
        data = device.queue.read_texture({"texture": texture}, {"bytes_per_row": 256}, (4, 4, 1))
        return tuple(np.frombuffer(data, np.uint8)[:4])

    run(device, compiled)
    run(device, compiled, textures={"target": second})
    assert pixel(first) == (255, 0, 0, 255) and pixel(second) == (255, 0, 0, 255)
    third = make()
    run(device, compiled, textures={"target": third})
    run(device, compiled)
    assert pixel(third) == (255, 0, 0, 255)
    first.destroy()
    with pytest.raises(GraphStateError, match='import "target" was destroyed'):
        compiled.encode(device.create_command_encoder())


def test_debug_groups_record_the_same_work(device):
    compiled, source, target = _graph(device)
    compiled.debug_groups = True
    assert compiled.stats.pass_count == 1  # two compute nodes in one pass: one group each
    run(device, compiled)
    assert (read_u32(device, target) == _expected(np.arange(N))).all()


def test_reused_render_pass_draws_every_encoding(device):
    """A render node with colour and depth attachments, begun from its reused
    descriptor: each encoding draws what that frame's rectangle buffer holds,
    after clearing both attachments (the pixels are counted on the CPU)."""
    from .test_encode import RECT_WGSL

    size = 16
    rect_buffer = upload(device, np.zeros(8, np.float32))
    color = device.create_texture(size=(size, size, 1), format="rgba8unorm", usage=TU.RENDER_ATTACHMENT | TU.COPY_SRC)
    depth = device.create_texture(size=(size, size, 1), format="depth32float", usage=TU.RENDER_ATTACHMENT)
    graph = GPUCommandGraph(device, id="draws")
    rects = graph.import_buffer(id="rects", byte_length=32, usage=STORAGE, buffer=rect_buffer)
    target = graph.import_texture(id="color", size=(size, size), format="rgba8unorm", usage=color.usage, texture=color)
    depth_handle = graph.import_texture(id="depth", size=(size, size), format="depth32float", usage=depth.usage,
                                        texture=depth)

    def compile_draw(ctx):
        module = ctx.device.create_shader_module(code=RECT_WGSL)
        pipeline = ctx.device.create_render_pipeline(
            layout="auto", vertex={"module": module, "entry_point": "vs"},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": "rgba8unorm"}]},
            primitive={"topology": "triangle-list"},
            depth_stencil={"format": "depth32float", "depth_compare": "less", "depth_write_enabled": True})
        group = ctx.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": rect_buffer}}])

        def encode(render_pass, frame):
            render_pass.set_pipeline(pipeline)
            render_pass.set_bind_group(0, group)
            render_pass.draw(6, 1)
        return encode

    graph.add_render_node(id="draw", resources=[(rects, "storage-read")], compile=compile_draw,
                          color_attachments=[{"view": graph.create_texture_view(target), "clear_value": (0, 0, 1, 1)}],
                          depth_stencil_attachment={"view": graph.create_texture_view(depth_handle),
                                                    "depth_load_op": "clear", "depth_clear_value": 1.0,
                                                    "depth_store_op": "store"})
    compiled = graph.compile()
    for x1 in (-0.5, 0.0, 0.5, 1.0):  # the rectangle [-1, x1] x [-1, 1]: (x1 + 1) / 2 of the columns
        device.queue.write_buffer(rect_buffer, 0, np.array([-1, -1, x1, 1, 0, 0, 0, 0], np.float32))
        run(device, compiled)
        data = device.queue.read_texture({"texture": color}, {"bytes_per_row": 256}, (size, size, 1))
        image = np.frombuffer(data, np.uint8).reshape(size, 256)[:, :4 * size].reshape(size, size, 4)
        red = (image[..., 0] == 255) & (image[..., 2] == 0)
        blue = (image[..., 2] == 255) & (image[..., 0] == 0)
        assert red.sum() == size * round((x1 + 1) / 2 * size) and blue.sum() == size * size - red.sum()
