"""Encoding never leaves the caller's encoder broken and never lets a user
mistake escape the GraphError family (issue 10, items 6, 8 and 10).

Cases that aborted the process (a Rust panic, exit status 134) run in a
subprocess that checks the exit status and the named error."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import wgpu

from gpuviz import ComputeKernel, GPUCommandGraph, GraphError, GraphStateError, GraphTypeError

from .helpers import AFFINE_WGSL, STORAGE, affine_node, read_u32, upload

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage
N = 64


def _needs_timestamps(device):
    if "timestamp-query" not in device.features:
        pytest.skip("adapter has no timestamp-query")


def _affine_graph(device, graph_id="hard"):
    """source -> *2 -> target, over two imported buffers; returns (graph, source, target, target buffer)."""
    graph = GPUCommandGraph(device, id=graph_id)
    target_buffer = upload(device, np.zeros(N, np.uint32))
    src = graph.import_buffer(id="source", byte_length=N * 4, usage=STORAGE,
                              buffer=upload(device, np.arange(N, dtype=np.uint32)))
    dst = graph.import_buffer(id="target", byte_length=N * 4, usage=STORAGE, buffer=target_buffer)
    view = lambda h: graph.create_data_view(h, format="uint32", length=N)
    affine_node(graph, "times-2", view(src), view(dst), factor=2)
    return graph, src, dst, target_buffer


def _raising(ctx):
    def encode(target, frame):
        raise RuntimeError("node exploded")
    return encode


def _assert_finishable(device, encoder):
    """The caller's encoder still finishes and submits, and the device still works."""
    device.queue.submit([encoder.finish()])
    probe = upload(device, np.full(4, 7, np.uint32))
    assert (read_u32(device, probe) == 7).all()


# ------------------------------------------------------------- item 8
@pytest.mark.parametrize("kind", ["compute", "render", "copy"])
@pytest.mark.parametrize("timestamps", [False, True])
def test_a_raising_node_leaves_the_encoder_finishable(device, kind, timestamps):
    if timestamps:
        _needs_timestamps(device)
    graph, src, dst, target_buffer = _affine_graph(device)
    if kind == "compute":
        graph.add_compute_node(id="bad", resources=[(dst, "storage-read")], compile=_raising)
    elif kind == "copy":
        graph.add_copy_node(id="bad", resources=[(dst, "copy-source")], compile=_raising)
    else:
        color = graph.create_transient_texture(id="color", size=(4, 4), format="rgba8unorm",
                                               usage=TU.RENDER_ATTACHMENT)
        graph.add_render_node(id="bad", resources=[(dst, "storage-read")], compile=_raising,
                              color_attachments=[{"view": graph.create_texture_view(color)}])
    compiled = graph.compile()
    assert compiled.node_order == ["times-2", "bad"]
    for _ in range(4):  # more than the timing ring's slots: a failed encoding gives its slot back
        encoder = device.create_command_encoder()
        with pytest.raises(RuntimeError, match="node exploded"):
            compiled.encode(encoder, timestamps=timestamps)
        _assert_finishable(device, encoder)
    # What was recorded before the failing node ran; the graph keeps working.
    assert (read_u32(device, target_buffer) == np.arange(N) * 2).all()
    assert compiled.dropped_timing_frames == 0
    assert compiled.read_timings() is None  # nothing of a failed encoding is pending


def test_an_undeclared_resource_leaves_the_encoder_finishable(device):
    graph, src, dst, target_buffer = _affine_graph(device)
    other = graph.create_transient_buffer(id="other", byte_length=64, usage=BU.STORAGE)
    graph.add_compute_node(id="only-other", resources=[(other, "storage-write")],
                           compile=lambda ctx: lambda p, frame: None)
    graph.add_compute_node(id="sneaky", resources=[(dst, "storage-read")],
                           compile=lambda ctx: lambda p, frame: frame.buffer(other))
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    with pytest.raises(GraphError, match='node "sneaky" did not declare "other"'):
        compiled.encode(encoder)
    _assert_finishable(device, encoder)


def test_an_unhashable_resource_is_a_graph_type_error(device):
    graph, src, dst, _ = _affine_graph(device)
    graph.add_compute_node(id="odd", resources=[(dst, "storage-read")],
                           compile=lambda ctx: lambda p, frame: frame.buffer([dst]))
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    with pytest.raises(GraphTypeError, match='node "odd"'):
        compiled.encode(encoder)
    _assert_finishable(device, encoder)


# ------------------------------------------------------------- item 6
def test_timestamped_encode_of_an_empty_graph_works(device):
    _needs_timestamps(device)
    compiled = GPUCommandGraph(device, id="empty").compile()
    encoder = device.create_command_encoder()
    assert compiled.encode(encoder, timestamps=True) == {}
    device.queue.submit([encoder.finish()])
    assert compiled.read_timings() == {}
    assert compiled.read_timings() is None  # nothing pending any more
    compiled.destroy()


def test_read_timings_before_submit_says_so(device):
    _needs_timestamps(device)
    graph, *_ = _affine_graph(device)
    compiled = graph.compile()
    early = device.create_command_encoder()
    compiled.encode(early, timestamps=True)
    with pytest.raises(GraphStateError, match='"hard" .*not submitted'):
        compiled.read_timings()
    for _ in range(2):  # the failed read cost no slot: later frames read real timings
        encoder = device.create_command_encoder()
        compiled.encode(encoder, timestamps=True)
        device.queue.submit([encoder.finish()])
        timings = compiled.read_timings()
        assert set(timings) == {"times-2"} and timings["times-2"] >= 0
    device.queue.submit([early.finish()])  # submitting the early encoder late is still safe
    assert compiled.read_timings() is None
    compiled.destroy()


def test_read_timings_after_destroy_is_a_state_error(device):
    graph, *_ = _affine_graph(device)
    compiled = graph.compile()
    compiled.destroy()
    with pytest.raises(GraphStateError, match='"hard" is destroyed'):
        compiled.read_timings()
    with pytest.raises(GraphStateError, match='"hard" is destroyed'):
        compiled.encode(device.create_command_encoder())


# ------------------------------------------------------------- item 10
def test_encode_refuses_what_is_not_an_encoder_or_a_mapping(device):
    graph, *_ = _affine_graph(device)
    compiled = graph.compile()
    with pytest.raises(GraphTypeError, match='CompiledGPUCommandGraph "hard" encode needs a wgpu.GPUCommandEncoder'):
        compiled.encode(None)
    empty = GPUCommandGraph(device, id="empty").compile()
    with pytest.raises(GraphTypeError, match='"empty"'):
        empty.encode(None)  # refused even when there is nothing to record
    encoder = device.create_command_encoder()
    with pytest.raises(GraphTypeError, match='"hard" encode buffers must be a mapping'):
        compiled.encode(encoder, buffers=[("source", None)])
    with pytest.raises(GraphTypeError, match='"hard" encode textures must be a mapping'):
        compiled.encode(encoder, textures="target")
    _assert_finishable(device, encoder)


@pytest.mark.parametrize("bad", [None, 5, "device"])
def test_compute_kernel_needs_a_device(bad):
    with pytest.raises(GraphTypeError, match='ComputeKernel "k" needs a wgpu.GPUDevice'):
        ComputeKernel(bad, code=AFFINE_WGSL, label="k")


def test_compute_kernel_refuses_bad_bindings_and_workgroups(device):
    kernel = ComputeKernel(device, code=AFFINE_WGSL, label="k", constants={"N": N})
    x, y = upload(device, np.ones(N, np.uint32)), upload(device, np.zeros(N, np.uint32))
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    with pytest.raises(GraphTypeError, match='ComputeKernel "k" bindings'):
        kernel.dispatch(compute_pass, None, bindings=None, workgroups=1)
    with pytest.raises(GraphError, match='ComputeKernel "k" cannot bind'):
        kernel.dispatch(compute_pass, None, bindings={0: x, 1: (None, 0, 4)}, workgroups=1)
    with pytest.raises(GraphError, match='ComputeKernel "k" workgroups must be'):
        kernel.dispatch(compute_pass, None, bindings={0: x, 1: y}, workgroups=-1)
    compute_pass.end()
    _assert_finishable(device, encoder)


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (a Rust panic aborts only that one)."""
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    prelude = textwrap.dedent("""
        import numpy as np, wgpu, gpuviz
        from gpuviz import ComputeKernel, GraphError
        from tests.graph.helpers import AFFINE_WGSL, upload
        device = gpuviz.request_device()
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("cached", [False, True])
def test_dispatch_with_a_destroyed_buffer_is_a_named_error(cached):
    """Binding a destroyed buffer raised wgpu's error (fresh bind group) or
    aborted the process at submit (a cached one)."""
    result = _run_isolated(f"""
        kernel = ComputeKernel(device, code=AFFINE_WGSL, label="k", constants={{"N": 64}})
        x = upload(device, np.ones(64, np.uint32))
        y = upload(device, np.zeros(64, np.uint32))

        def dispatch():
            encoder = device.create_command_encoder()
            compute_pass = encoder.begin_compute_pass()
            try:
                kernel.dispatch(compute_pass, None, bindings={{0: x, 1: y}}, workgroups=1)
            finally:
                compute_pass.end()
                device.queue.submit([encoder.finish()])

        if {cached}:
            dispatch()
        x.destroy()
        try:
            dispatch()
        except GraphError as error:
            print("named:", type(error).__name__, error)
        else:
            print("no error")
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'named: GraphStateError ComputeKernel "k" binding 0' in result.stdout, result.stdout + result.stderr[-2000:]


def test_encode_refuses_a_destroyed_node_owned_buffer():
    """A node binds a buffer it owns (a raw wgpu buffer, reused through the
    kernel's bind-group cache); destroying it outside the graph aborted the
    next submit. Encode now refuses it before recording."""
    result = _run_isolated("""
        from gpuviz import GPUCommandGraph
        from tests.graph.helpers import STORAGE
        graph = GPUCommandGraph(device, id="owner")
        out = graph.import_buffer(id="out", byte_length=256, usage=STORAGE, buffer=upload(device, np.zeros(64, np.uint32)))
        owned = []

        def compile(ctx):
            kernel = ComputeKernel(ctx.device, code=AFFINE_WGSL, label="k", constants={"N": 64})
            source = owned.append(ctx.own(upload(ctx.device, np.ones(64, np.uint32)))) or owned[0]
            return lambda p, frame: kernel.dispatch(p, frame, bindings={0: source, 1: out}, workgroups=1)

        graph.add_compute_node(id="uses-owned", resources=[(out, "storage-write")], compile=compile)
        compiled = graph.compile()
        for attempt in range(2):
            encoder = device.create_command_encoder()
            try:
                compiled.encode(encoder)
            except GraphError as error:
                print("named:", type(error).__name__, error)
            device.queue.submit([encoder.finish()])
            owned[0].destroy()
        print("done")
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'named: GraphStateError CompiledGPUCommandGraph "owner" resource' in result.stdout, result.stderr[-2000:]
    assert "done" in result.stdout
