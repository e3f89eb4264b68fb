"""Resource declarations refused at the call (issue 10, items 2, 6 and 10,
graph parts): undefined usage bits, texture descriptors wgpu would refuse or
abort on, bogus views and attachments, None and silently coerced arguments."""

import numpy as np
import pytest
import wgpu

from gpuviz import (DeviceMismatchError, GPUCommandGraph, GPUData, GraphStateError, GraphTypeError,
                    GraphValidationError, UsageError, ViewRangeError)
from gpuviz.graph.checks import check_count, check_id

from .helpers import STORAGE, noop_compile
from .test_imports_hardening import assert_refused, run_isolated

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage
RENDER = TU.RENDER_ATTACHMENT | TU.TEXTURE_BINDING


# ------------------------------------------------------------ item 2: usage bits
def test_undefined_buffer_usage_bits_no_longer_abort_compile():
    result = run_isolated("""
        graph = GPUCommandGraph(device, id="bits")
        try:
            graph.create_transient_buffer(id="t", byte_length=64, usage=wgpu.BufferUsage.STORAGE | (1 << 20))
            graph.compile()
        except GraphError as error:
            print("REFUSED", type(error).__name__, error)
    """)
    assert_refused(result, "UsageError", 'transient buffer "t" usage 0x100080 has bits 0x100000')


@pytest.mark.parametrize("call", ["import_buffer", "create_transient_buffer"])
def test_undefined_buffer_usage_bits_are_refused_at_the_call(device, call):
    graph = GPUCommandGraph(device, id="bits")
    with pytest.raises(UsageError, match='"b" usage 0x100080 has bits 0x100000 that wgpu.BufferUsage does not define'):
        getattr(graph, call)(id="b", byte_length=64, usage=BU.STORAGE | (1 << 20))
    with pytest.raises(UsageError, match="mappable buffer may combine MAP_READ only with COPY_DST"):
        graph.import_buffer(id="m", byte_length=64, usage=BU.MAP_READ | BU.STORAGE)
    with pytest.raises(UsageError, match="needs integer BufferUsage flags"):
        graph.import_buffer(id="s", byte_length=64, usage="STORAGE")


@pytest.mark.parametrize("call", ["import_texture", "create_transient_texture"])
@pytest.mark.parametrize("bit", [1 << 6, TU.TRANSIENT_ATTACHMENT])  # wgpu-native 0.32 aborts on both
def test_undefined_texture_usage_bits_are_refused_at_the_call(device, call, bit):
    graph = GPUCommandGraph(device, id="bits")
    with pytest.raises(UsageError, match=f'texture "t" usage {int(RENDER | bit):#x} has bits {int(bit):#x}'):
        getattr(graph, call)(id="t", size=(4, 4), format="rgba8unorm", usage=RENDER | bit)


# ------------------------------------------------------------ item 6: texture descriptors, views, attachments
@pytest.mark.parametrize("call", ["import_texture", "create_transient_texture"])
def test_unknown_texture_format_is_refused_at_the_call(device, call):
    graph = GPUCommandGraph(device, id="fmt")
    with pytest.raises(GraphValidationError, match="texture \"t\" has unknown format 'rgba9unorm'"):
        getattr(graph, call)(id="t", size=(4, 4), format="rgba9unorm", usage=RENDER)


def test_textures_over_the_device_limit_are_refused_naming_it(device):
    graph = GPUCommandGraph(device, id="limits")
    limit = device.limits["max-texture-dimension-2d"]
    with pytest.raises(GraphValidationError, match=f"max-texture-dimension-2d {limit}"):
        graph.create_transient_texture(id="wide", size=(limit + 1, 4), format="rgba8unorm", usage=RENDER)
    layers = device.limits["max-texture-array-layers"]
    with pytest.raises(GraphValidationError, match=f"max-texture-array-layers {layers}"):
        graph.create_transient_texture(id="deep", size=(4, 4, layers + 1), format="rgba8unorm", usage=RENDER)
    with pytest.raises(GraphValidationError, match="needs 1..3 mip levels for size"):
        graph.create_transient_texture(id="mips", size=(4, 4), format="rgba8unorm", usage=RENDER, mip_level_count=4)
    with pytest.raises(GraphValidationError, match="needs sample_count 1, or 4"):
        graph.create_transient_texture(id="ms", size=(4, 4), format="rgba8unorm", usage=RENDER, sample_count=2)
    with pytest.raises(GraphValidationError, match="unknown dimension '4d'"):
        graph.create_transient_texture(id="dim", size=(4, 4), format="rgba8unorm", usage=RENDER, dimension="4d")
    graph.create_transient_texture(id="ok", size=(limit, 1), format="rgba8unorm", usage=RENDER)


def test_bogus_texture_view_options_are_refused(device):
    graph = GPUCommandGraph(device, id="views")
    texture = graph.create_transient_texture(id="t", size=(4, 4), format="rgba8unorm", usage=RENDER)
    with pytest.raises(GraphValidationError, match="view of \"t\" has unknown aspect 'colour'"):
        graph.create_texture_view(texture, aspect="colour")
    with pytest.raises(GraphValidationError, match="unknown view dimension 'flat'"):
        graph.create_texture_view(texture, dimension="flat")
    with pytest.raises(GraphTypeError, match="base_mip_level must be an integer"):
        graph.create_texture_view(texture, base_mip_level=0.5)
    with pytest.raises(GraphTypeError, match="needs a GraphTextureHandle"):
        graph.create_texture_view(None)


@pytest.mark.parametrize("attachment, message", [
    ({"load_op": "clear"}, 'color attachment needs a "view"'),
    ({"view": "T", "load_op": "keep"}, "color attachment has unknown load_op 'keep'"),
    ({"view": "T", "store_op": "save"}, "color attachment has unknown store_op 'save'"),
    ({"view": "T", "loadop": "clear"}, "color attachment has unknown keys \\['loadop'\\]"),
    ("T", "color attachment must be a dict"),
])
def test_bogus_color_attachments_are_refused_at_add_render_node(device, attachment, message):
    graph = GPUCommandGraph(device, id="rp")
    texture = graph.create_transient_texture(id="t", size=(4, 4), format="rgba8unorm", usage=RENDER)
    attachment = texture if attachment == "T" else {k: texture if v == "T" else v for k, v in attachment.items()}
    with pytest.raises(GraphValidationError, match=f'render node "draw" {message}'):
        graph.add_render_node(id="draw", compile=noop_compile, color_attachments=[attachment])
    assert not graph.nodes


def test_bogus_depth_attachments_are_refused_at_add_render_node(device):
    graph = GPUCommandGraph(device, id="rp")
    depth = graph.create_transient_texture(id="d", size=(4, 4), format="depth32float", usage=RENDER)
    with pytest.raises(GraphValidationError, match="depth_stencil_attachment has unknown depth_load_op 'keep'"):
        graph.add_render_node(id="draw", compile=noop_compile,
                              depth_stencil_attachment={"view": depth, "depth_load_op": "keep"})
    with pytest.raises(GraphValidationError, match='depth_stencil_attachment needs a "view"'):
        graph.add_render_node(id="draw", compile=noop_compile, depth_stencil_attachment={"depth_load_op": "clear"})
    graph.add_render_node(id="draw", compile=noop_compile, depth_stencil_attachment={
        "view": depth, "depth_load_op": "clear", "depth_store_op": "store", "depth_clear_value": 1.0})


# ------------------------------------------------------------ item 10: None and silent coercions
def test_none_arguments_are_graph_type_errors(device):
    with pytest.raises(GraphTypeError, match='GPUCommandGraph "g" needs a wgpu.GPUDevice \\(got None\\)'):
        GPUCommandGraph(None, id="g")
    with pytest.raises(DeviceMismatchError):  # another object keeps its device-mismatch error
        GPUCommandGraph(object(), id="g")
    graph = GPUCommandGraph(device, id="none")
    buffer = graph.create_transient_buffer(id="b", byte_length=16, usage=STORAGE)
    with pytest.raises(GraphTypeError, match='node "n" depends_on must be a list or tuple \\(got NoneType'):
        graph.add_compute_node(id="n", compile=noop_compile, depends_on=None)
    with pytest.raises(GraphTypeError, match='node "n" resources must be a list or tuple \\(got NoneType'):
        graph.add_compute_node(id="n", compile=noop_compile, resources=None)
    with pytest.raises(GraphTypeError, match="depends_on needs a non-empty string node id \\(got int 3\\)"):
        graph.add_copy_node(id="n", compile=noop_compile, depends_on=[3])
    with pytest.raises(GraphTypeError, match='render node "r" resources must be a list'):
        graph.add_render_node(id="r", compile=noop_compile, resources=None,
                              color_attachments=[{"view": graph.create_transient_texture(
                                  id="t", size=(4, 4), format="rgba8unorm", usage=RENDER)}])
    with pytest.raises(GraphTypeError, match="needs a non-empty string node id \\(got NoneType None\\)"):
        graph.add_compute_node(id=None, compile=noop_compile)
    with pytest.raises(GraphTypeError, match="needs a GraphBufferHandle"):
        graph.create_data_view(None, format="uint32", length=1)
    with pytest.raises(GraphTypeError, match='import_gpu_data "x" needs a GPUData \\(got ndarray'):
        graph.import_gpu_data("x", np.zeros(3))
    with pytest.raises(GraphTypeError, match='vector "v" needs a GPUVector'):
        graph.import_gpu_vector("v", None)
    graph.add_compute_node(id="n", resources=[(buffer, "storage-read")], compile=noop_compile)


@pytest.mark.parametrize("size", [(1.9, 4), (4, True), ("4", 4)])
def test_texture_sizes_are_not_coerced(device, size):
    graph = GPUCommandGraph(device, id="sizes")
    with pytest.raises(GraphTypeError, match='texture "t" size must be an integer'):
        graph.create_transient_texture(id="t", size=size, format="rgba8unorm", usage=RENDER)


def test_numpy_integer_lengths_are_accepted_and_bools_refused(device):
    graph = GPUCommandGraph(device, id="counts")
    handle = graph.create_transient_buffer(id="b", byte_length=np.int64(64), usage=STORAGE)
    view = graph.create_data_view(handle, format="uint32", length=np.int64(5), byte_offset=np.uint32(4))
    assert (view.length, view.byte_offset, type(view.length)) == (5, 4, int)
    with pytest.raises(ViewRangeError, match="invalid length \\(True\\)"):
        graph.create_data_view(handle, format="uint32", length=True)
    texture = graph.create_transient_texture(id="t", size=(np.int32(4), np.int64(2)), format="rgba8unorm",
                                             usage=RENDER)
    assert texture.size == (4, 2, 1) and all(type(s) is int for s in texture.size)


def test_the_shared_id_check():
    assert check_id("GPUScan", "scan") == "scan"
    with pytest.raises(GraphTypeError, match="GPUScan needs a non-empty string id \\(got NoneType None\\)"):
        check_id("GPUScan", None)
    with pytest.raises(GraphValidationError, match="GPUScan needs a non-empty string id"):
        check_id("GPUScan", "")
    assert check_count("GPUScan", "length", np.int64(3)) == 3
    with pytest.raises(GraphTypeError, match="GPUScan length must be an integer \\(got bool True\\)"):
        check_count("GPUScan", "length", True)


def test_a_refused_view_reaches_nothing(device):
    """A GPUData over a destroyed buffer is refused at import_gpu_data, not at encode."""
    graph = GPUCommandGraph(device, id="late")
    data = GPUData.from_numpy(device, np.zeros(4, np.uint32))
    borrowed = GPUData(data.buffer, format="uint32", length=4)
    data.destroy()
    with pytest.raises(GraphStateError, match='import_gpu_data "b" was destroyed'):
        graph.import_gpu_data("b", borrowed)
    assert not graph.buffers
