"""DrawCommandBuffer: layouts, offsets, borrowed-buffer validation, CPU
uploads, and real offscreen indirect draws whose counts GPU work wrote."""

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.render import DrawCommandBuffer
from gpuviz.tables import GPUData, read_array

BU = wgpu.BufferUsage
SIZE = 64  # render target is SIZE x SIZE rgba8unorm; one row is 256 bytes
CELL = 8  # instance i covers a 4x4 pixel square inside cell (i % 8, i // 8)


def read_words(device, dcb):
    return np.frombuffer(device.queue.read_buffer(dcb.buffer), dtype=np.uint32)


# -- layouts, offsets, validation -------------------------------------------------


@pytest.mark.parametrize(
    "kind, record, fields",
    [
        ("draw", 16, ("vertex_count", "instance_count", "first_vertex", "first_instance")),
        ("draw-indexed", 20, ("index_count", "instance_count", "first_index", "base_vertex", "first_instance")),
    ],
)
def test_layouts_and_offsets(device, kind, record, fields):
    dcb = DrawCommandBuffer(device, type=kind, capacity=5, label="groups")
    assert dcb.type == kind and dcb.capacity == 5 and dcb.fields == fields
    assert dcb.record_byte_length == record and dcb.byte_length == 5 * record
    assert dcb.owned and dcb.buffer.size == 5 * record
    assert dcb.buffer.usage == BU.STORAGE | BU.INDIRECT | BU.COPY_SRC | BU.COPY_DST
    assert [dcb.record_byte_offset(i) for i in range(5)] == [i * record for i in range(5)]
    assert [dcb.instance_count_byte_offset(i) for i in range(5)] == [i * record + 4 for i in range(5)]
    assert not read_words(device, dcb).any()  # a fresh buffer draws nothing
    for bad in (-1, 5, 100):
        message = f'^DrawCommandBuffer "groups" record index {bad} is out of range \\(capacity 5\\)$'
        with pytest.raises(gpuviz.GraphIndexError, match=message) as info:
            dcb.record_byte_offset(bad)
        assert isinstance(info.value, IndexError)
    with pytest.raises(gpuviz.GraphIndexError, match="capacity 5"):
        dcb.instance_count_byte_offset(5)
    with pytest.raises(gpuviz.GraphIndexError):
        dcb.get_instance_count_data(5)
    with pytest.raises(gpuviz.GraphTypeError, match="must be an integer") as info:
        dcb.record_byte_offset(1.5)
    assert isinstance(info.value, TypeError)
    with pytest.raises(gpuviz.GraphTypeError, match="must be an integer"):
        dcb.write_records(np.zeros((1, len(dcb.fields)), np.uint32), first_record="0")
    dcb.destroy()


def test_constructor_errors(device):
    with pytest.raises(gpuviz.GraphValidationError, match='"x" type must be "draw" or "draw-indexed"'):
        DrawCommandBuffer(device, type="drawIndexed", capacity=1, label="x")
    with pytest.raises(gpuviz.GraphValidationError, match="capacity must be at least 1 record \\(got 0\\)"):
        DrawCommandBuffer(device, capacity=0)
    with pytest.raises(gpuviz.GraphValidationError, match="capacity must be an integer"):
        DrawCommandBuffer(device, capacity=2.0)


def test_borrowed_buffer_validation(device):
    good = device.create_buffer(label="shared-cmds", size=64, usage=BU.STORAGE | BU.INDIRECT | BU.COPY_DST | BU.COPY_SRC)
    dcb = DrawCommandBuffer(device, type="draw-indexed", capacity=3, buffer=good)
    assert not dcb.owned and dcb.buffer is good and dcb.label == "shared-cmds"
    with pytest.raises(gpuviz.ViewRangeError, match='"shared-cmds" buffer is smaller than its capacity '
                                                    "\\(needs 80 bytes for 4 draw-indexed records, got 64\\)"):
        DrawCommandBuffer(device, type="draw-indexed", capacity=4, buffer=good)
    no_indirect = device.create_buffer(label="plain", size=64, usage=BU.STORAGE)
    with pytest.raises(gpuviz.UsageError, match='"plain" buffer lacks INDIRECT usage'):
        DrawCommandBuffer(device, capacity=1, buffer=no_indirect)
    neither = device.create_buffer(label="vtx", size=64, usage=BU.VERTEX)
    with pytest.raises(gpuviz.UsageError, match="lacks INDIRECT and STORAGE usage"):
        DrawCommandBuffer(device, capacity=1, buffer=neither)
    other = gpuviz.request_device(shared=False)
    foreign = other.create_buffer(label="foreign", size=64, usage=BU.STORAGE | BU.INDIRECT)
    with pytest.raises(gpuviz.DeviceMismatchError, match='"foreign" buffer belongs to another device'):
        DrawCommandBuffer(device, capacity=1, buffer=foreign)
    assert isinstance(gpuviz.UsageError("x"), gpuviz.GraphValidationError)
    # a borrowed buffer without COPY_DST can be drawn from but not uploaded to
    gpu_only = device.create_buffer(label="gpu-only", size=32, usage=BU.STORAGE | BU.INDIRECT)
    gpu_only_dcb = DrawCommandBuffer(device, capacity=2, buffer=gpu_only)
    with pytest.raises(gpuviz.UsageError, match='"gpu-only" buffer lacks COPY_DST usage'):
        gpu_only_dcb.write(0, vertex_count=3)
    # destroying a borrowed wrapper leaves the buffer alone
    dcb.destroy()
    dcb.destroy()
    device.queue.write_buffer(good, 0, np.ones(4, np.uint32))
    assert np.frombuffer(device.queue.read_buffer(good, 0, 16), np.uint32).tolist() == [1, 1, 1, 1]
    with pytest.raises(gpuviz.GraphStateError, match='"shared-cmds" was destroyed'):
        dcb.write(0, index_count=3)


def test_instance_count_data_is_borrowed(device):
    for kind, record in (("draw", 16), ("draw-indexed", 20)):
        dcb = DrawCommandBuffer(device, type=kind, capacity=4, label=f"{kind}-counts")
        for i in range(4):
            data = dcb.get_instance_count_data(i)
            assert isinstance(data, GPUData) and data.buffer is dcb.buffer
            assert data.format.name == "uint32" and data.length == 1
            assert data.byte_offset == i * record + 4 and not data.owned
        dcb.write_records(np.arange(4 * len(dcb.fields)).reshape(4, -1) + 100)
        assert read_array(device, dcb.get_instance_count_data(2)).tolist() == [100 + 2 * len(dcb.fields) + 1]
        dcb.get_instance_count_data(1).destroy()  # borrowed: the buffer survives
        assert read_words(device, dcb)[len(dcb.fields) + 1] == 100 + len(dcb.fields) + 1
        dcb.destroy()


def test_write_and_write_records(device):
    dcb = DrawCommandBuffer(device, type="draw-indexed", capacity=3, label="idx")
    dcb.write(1, index_count=6, instance_count=7, first_index=3, base_vertex=-4)
    words = read_words(device, dcb).reshape(3, 5)
    assert words[1].tolist() == [6, 7, 3, 2**32 - 4, 0] and not words[[0, 2]].any()
    dcb.write(2, index_count=9)  # defaults like render_pass.draw: one instance
    assert read_words(device, dcb).reshape(3, 5)[2].tolist() == [9, 1, 0, 0, 0]
    dcb.write_records([[1, 2, 3, -1, 0], [4, 5, 6, 7, 0]], first_record=1)
    words = read_words(device, dcb).reshape(3, 5)
    assert words[1:].view(np.int32).tolist() == [[1, 2, 3, -1, 0], [4, 5, 6, 7, 0]]
    dcb.write_records(np.zeros((0, 5), np.uint32))  # nothing to write
    with pytest.raises(gpuviz.GraphValidationError, match='"idx" draw-indexed records have no field vertex_count'):
        dcb.write(0, vertex_count=3)
    with pytest.raises(gpuviz.GraphValidationError, match="write of record 0 needs index_count"):
        dcb.write(0, instance_count=2)
    with pytest.raises(gpuviz.GraphValidationError, match="record 0 instance_count must be in 0..4294967295 \\(got -1\\)"):
        dcb.write(0, index_count=3, instance_count=-1)
    with pytest.raises(gpuviz.GraphValidationError, match="record 2 base_vertex must be in"):
        dcb.write(2, index_count=3, base_vertex=2**31)
    with pytest.raises(gpuviz.GraphValidationError, match="index_count must be an integer"):
        dcb.write(0, index_count=1.5)
    with pytest.raises(gpuviz.GraphValidationError, match="needs shape \\(n, 5\\).*got \\(2, 4\\)"):
        dcb.write_records(np.zeros((2, 4), np.uint32))
    with pytest.raises(gpuviz.GraphValidationError, match="needs integer values \\(got dtype float32\\)"):
        dcb.write_records(np.zeros((1, 5), np.float32))
    with pytest.raises(gpuviz.GraphIndexError, match="record index 3 is out of range \\(capacity 3\\)"):
        dcb.write_records(np.zeros((2, 5), np.uint32), first_record=2)
    with pytest.raises(gpuviz.GraphIndexError):
        dcb.write(3, index_count=1)
    plain = wgpu.gpu.request_adapter_sync().request_device_sync()  # no optional features
    no_first_instance = DrawCommandBuffer(plain, capacity=2, label="plain")
    with pytest.raises(gpuviz.GraphValidationError, match='"plain" record 1 has first_instance 2 but the '
                                                          "device lacks indirect-first-instance"):
        no_first_instance.write_records([[3, 1, 0, 0], [3, 1, 0, 2]])
    no_first_instance.write(0, vertex_count=3, first_instance=0)
    dcb.destroy()
    dcb.destroy()
    with pytest.raises(gpuviz.GraphStateError, match='"idx" was destroyed'):
        dcb.write_records(np.zeros((1, 5), np.uint32))


@settings(max_examples=25, deadline=None)
@given(
    capacity=st.integers(1, 9),
    kind=st.sampled_from(["draw", "draw-indexed"]),
    data=st.data(),
)
def test_write_touches_only_its_record(device, capacity, kind, data):
    dcb = DrawCommandBuffer(device, type=kind, capacity=capacity, label="prop")
    words = len(dcb.fields)
    expected = np.full((capacity, words), 0xA5A5A5A5, dtype=np.uint32)
    expected[:, 3 if kind == "draw-indexed" else 0] = 1  # stay inside int32 for base_vertex
    expected[:, -1] = 0  # first_instance 0 works without the optional feature
    dcb.write_records(expected)
    i = data.draw(st.integers(0, capacity - 1))
    count = data.draw(st.integers(0, 2**32 - 1))
    device.queue.write_buffer(dcb.buffer, dcb.instance_count_byte_offset(i), np.array([count], np.uint32))
    expected[i, 1] = count
    assert (read_words(device, dcb).reshape(capacity, words) == expected).all()
    dcb.destroy()


# -- real offscreen indirect draws ---------------------------------------------------

SHADER = f"""
const SIZE: f32 = {SIZE}.0;
const CELL: u32 = {CELL}u;

fn corner_position(corner: vec2<f32>, instance: u32) -> vec4<f32> {{
    let cell = vec2<f32>(f32(instance % CELL), f32(instance / CELL));
    let pixel = cell * f32(CELL) + 2.0 + corner * 4.0;
    return vec4<f32>(pixel.x / SIZE * 2.0 - 1.0, 1.0 - pixel.y / SIZE * 2.0, 0.0, 1.0);
}}

// six vertices per quad, no index buffer
@vertex
fn vs_draw(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {{
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
        vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0));
    return corner_position(corners[v % 6u], i);
}}

// four corners per quad through an index buffer; vertex_index includes
// base_vertex, and quads whose vertex_index < 4 are moved off screen, so only
// a record with base_vertex 4 draws anything
@vertex
fn vs_indexed(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {{
    let corner = vec2<f32>(f32(v & 1u), f32((v >> 1u) & 1u));
    var position = corner_position(corner, i);
    if (v < 4u) {{ position = vec4<f32>(5.0, 5.0, 0.0, 1.0); }}
    return position;
}}

@fragment
fn fs_main() -> @location(0) vec4<f32> {{
    return vec4<f32>(1.0, 0.0, 0.0, 1.0);
}}

// writes one instance_count word: params = (word index, count)
@group(0) @binding(0) var<storage, read_write> commands: array<u32>;
@group(0) @binding(1) var<uniform> params: vec4<u32>;

@compute @workgroup_size(1)
fn cs_set_count() {{
    commands[params.x] = params.y;
}}
"""


class Scene:
    """A 64x64 target, both render pipelines and the count-writing kernel."""

    def __init__(self, device):
        self.device = device
        module = device.create_shader_module(code=SHADER)
        self.target = device.create_texture(
            size=(SIZE, SIZE, 1), format="rgba8unorm",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
        )
        self.pipelines = {
            kind: device.create_render_pipeline(
                layout="auto",
                vertex={"module": module, "entry_point": entry},
                primitive={"topology": "triangle-list"},
                fragment={"module": module, "entry_point": "fs_main", "targets": [{"format": "rgba8unorm"}]},
            )
            for kind, entry in (("draw", "vs_draw"), ("draw-indexed", "vs_indexed"))
        }
        self.kernel = device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "cs_set_count"}
        )
        self.indices = device.create_buffer(size=12, usage=BU.INDEX | BU.COPY_DST)
        device.queue.write_buffer(self.indices, 0, np.array([0, 1, 2, 2, 1, 3], np.uint16))
        self.params = device.create_buffer(size=16, usage=BU.UNIFORM | BU.COPY_DST)

    def set_count_on_gpu(self, dcb, index, count, encoder):
        """Record a compute pass that writes record ``index``'s instance count."""
        word = dcb.instance_count_byte_offset(index) // 4
        self.device.queue.write_buffer(self.params, 0, np.array([word, count, 0, 0], np.uint32))
        group = self.device.create_bind_group(
            layout=self.kernel.get_bind_group_layout(0),
            entries=[
                {"binding": 0, "resource": {"buffer": dcb.buffer}},
                {"binding": 1, "resource": {"buffer": self.params}},
            ],
        )
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(self.kernel)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(1)
        compute.end()

    def begin(self, encoder):
        render = encoder.begin_render_pass(color_attachments=[{
            "view": self.target.create_view(), "load_op": "clear", "store_op": "store",
            "clear_value": (0, 0, 0, 0),
        }])
        return render

    def bind(self, render, kind):
        render.set_pipeline(self.pipelines[kind])
        if kind == "draw-indexed":
            render.set_index_buffer(self.indices, "uint16")

    def red_mask(self, encoder=None):
        """Submit ``encoder`` (if given) plus a texture copy; return the red-pixel mask."""
        encoder = encoder or self.device.create_command_encoder()
        staging = self.device.create_buffer(size=256 * SIZE, usage=BU.COPY_DST | BU.MAP_READ)
        encoder.copy_texture_to_buffer(
            {"texture": self.target},
            {"buffer": staging, "bytes_per_row": 256, "rows_per_image": SIZE},
            (SIZE, SIZE, 1),
        )
        self.device.queue.submit([encoder.finish()])
        staging.map_async(wgpu.MapMode.READ).sync_wait()
        pixels = np.frombuffer(staging.read_mapped(), np.uint8).reshape(SIZE, SIZE, 4).copy()
        staging.unmap()
        staging.destroy()
        return pixels[:, :, 0] == 255


@pytest.fixture(scope="module")
def scene(device):
    return Scene(device)


def expected_mask(count):
    mask = np.zeros((SIZE, SIZE), bool)
    for i in range(count):
        x, y = (i % CELL) * CELL + 2, (i // CELL) * CELL + 2
        mask[y:y + 4, x:x + 4] = True
    return mask


@pytest.mark.parametrize("kind", ["draw", "draw-indexed"])
def test_gpu_written_instance_count_drives_the_draw(device, scene, kind):
    dcb = DrawCommandBuffer(device, type=kind, capacity=3, label=f"{kind}-groups")
    # neighbours hold a sentinel count that must survive the GPU write
    if kind == "draw":
        dcb.write_records([[6, 0xBEEF, 0, 0]] * 3)
    else:
        dcb.write_records([[6, 0xBEEF, 0, 4, 0]] * 3)
    before = read_words(device, dcb).copy()
    for count in (0, 1, 5, 13, 0):
        encoder = device.create_command_encoder()
        scene.set_count_on_gpu(dcb, 1, count, encoder)
        render = scene.begin(encoder)
        scene.bind(render, kind)
        dcb.draw(render, 1)
        render.end()
        mask = scene.red_mask(encoder)
        assert mask.sum() == 16 * count
        assert (mask == expected_mask(count)).all()
        after = read_words(device, dcb)
        changed = np.flatnonzero(after != before)
        assert set(changed) <= {dcb.instance_count_byte_offset(1) // 4}
        assert after[dcb.instance_count_byte_offset(1) // 4] == count
    dcb.destroy()


def test_base_vertex_and_zero_records(device, scene):
    dcb = DrawCommandBuffer(device, type="draw-indexed", capacity=2, label="bv")
    dcb.write(0, index_count=6, instance_count=3, base_vertex=0)  # moved off screen by the shader
    dcb.write(1, index_count=6, instance_count=3, base_vertex=4)
    for index, expected in ((0, 0), (1, 3 * 16)):
        encoder = device.create_command_encoder()
        render = scene.begin(encoder)
        scene.bind(render, "draw-indexed")
        dcb.draw(render, index)
        render.end()
        assert scene.red_mask(encoder).sum() == expected
    with pytest.raises(gpuviz.GraphIndexError, match='"bv" record index 2'):
        dcb.draw(object(), 2)
    dcb.destroy()
    with pytest.raises(gpuviz.GraphStateError):
        dcb.draw(object(), 0)


def test_first_instance_offsets_instance_index(device, scene):
    if "indirect-first-instance" not in device.features:
        pytest.skip("device lacks indirect-first-instance")
    dcb = DrawCommandBuffer(device, capacity=1, label="first")
    dcb.write(0, vertex_count=6, instance_count=2, first_instance=3)
    encoder = device.create_command_encoder()
    render = scene.begin(encoder)
    scene.bind(render, "draw")
    dcb.draw(render, 0)
    render.end()
    assert (scene.red_mask(encoder) == expected_mask(5) & ~expected_mask(3)).all()
    dcb.destroy()


def test_render_bundle_follows_count_changes_without_rerecording(device, scene):
    dcb = DrawCommandBuffer(device, type="draw", capacity=4, label="bundle")
    dcb.write_records([[6, 0, 0, 0]] * 4)
    bundle_encoder = device.create_render_bundle_encoder(color_formats=["rgba8unorm"])
    bundle_encoder.set_pipeline(scene.pipelines["draw"])
    dcb.draw(bundle_encoder, 2)
    bundle = bundle_encoder.finish()
    for count in (2, 0, 7):
        encoder = device.create_command_encoder()
        scene.set_count_on_gpu(dcb, 2, count, encoder)
        render = scene.begin(encoder)
        render.execute_bundles([bundle])
        render.end()
        assert scene.red_mask(encoder).sum() == 16 * count
    dcb.destroy()
