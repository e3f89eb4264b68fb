"""Every error case of the spec's "Error handling" list fails early, named."""

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz import (DeviceMismatchError, DuplicateIdError, GPUCommandGraph, GraphError, GraphStateError,
                    GraphValidationError, NodeCompileError, OverrideError, UsageError, ViewRangeError)

from .helpers import STORAGE, noop_compile, run, upload

BU = wgpu.BufferUsage


def test_non_webgpu_device_is_rejected():
    with pytest.raises(DeviceMismatchError, match='GPUCommandGraph "g" needs a wgpu.GPUDevice'):
        GPUCommandGraph(object(), id="g")


def test_duplicate_ids(device):
    graph = GPUCommandGraph(device, id="dups")
    graph.create_transient_buffer(id="x", byte_length=4, usage=STORAGE)
    with pytest.raises(DuplicateIdError, match='already has a resource "x"'):
        graph.import_buffer(id="x", byte_length=4, usage=STORAGE)
    graph.add_compute_node(id="n", compile=noop_compile)
    with pytest.raises(DuplicateIdError, match='already has a node "n"'):
        graph.add_copy_node(id="n", compile=noop_compile)


@pytest.mark.parametrize("size", [-1, 1.5, 2**53, True, "8"])
def test_unsafe_byte_lengths(device, size):
    graph = GPUCommandGraph(device, id="sizes")
    with pytest.raises(GraphValidationError, match='"b" needs a safe non-negative integer byte_length'):
        graph.create_transient_buffer(id="b", byte_length=size, usage=STORAGE)


def test_size_past_the_device_limit(device):
    graph = GPUCommandGraph(device, id="huge")
    limit = device.limits["max-buffer-size"]
    with pytest.raises(GraphValidationError, match=f"max {limit}"):
        graph.create_transient_buffer(id="b", byte_length=limit + 4, usage=STORAGE)


def test_zero_usage_and_mappable_transients(device):
    graph = GPUCommandGraph(device, id="usage")
    with pytest.raises(UsageError, match="nonzero usage"):
        graph.import_buffer(id="a", byte_length=4, usage=0)
    with pytest.raises(UsageError, match="cannot be mappable"):
        graph.create_transient_buffer(id="b", byte_length=4, usage=BU.MAP_READ | BU.COPY_DST)


def test_declared_use_needs_the_usage_flag_and_a_legal_node_kind(device):
    graph = GPUCommandGraph(device, id="uses")
    only_storage = graph.create_transient_buffer(id="s", byte_length=16, usage=BU.STORAGE)
    with pytest.raises(UsageError, match='"copy-source" of "s" but its usage'):
        graph.add_copy_node(id="copy", resources=[(only_storage, "copy-source")], compile=noop_compile)
    with pytest.raises(UsageError, match='compute node "c" cannot declare "vertex"'):
        graph.add_compute_node(id="c", resources=[(only_storage, "vertex")], compile=noop_compile)
    with pytest.raises(UsageError, match='unknown use "storage"'):
        graph.add_compute_node(id="d", resources=[(only_storage, "storage")], compile=noop_compile)


def test_views_must_fit_and_align(device):
    graph = GPUCommandGraph(device, id="views")
    handle = graph.create_transient_buffer(id="buf", byte_length=64, usage=STORAGE)
    assert graph.create_data_view(handle, format="uint32", length=16).byte_length == 64
    assert graph.create_data_view(handle, format="uint32", length=0, byte_offset=64).byte_length == 0
    with pytest.raises(ViewRangeError, match=r"needs 68 bytes, buffer has 64"):
        graph.create_data_view(handle, format="uint32", length=16, byte_offset=4)
    with pytest.raises(ViewRangeError, match="not aligned to 4 bytes"):
        graph.create_data_view(handle, format="uint32", length=1, byte_offset=2)
    with pytest.raises(ViewRangeError, match="byte_stride >= row_byte_length"):
        graph.create_data_view(handle, format="float32x2", length=2, byte_stride=4)
    with pytest.raises(GraphValidationError, match='GPUVectorFormat "uint64" is unknown'):
        graph.create_data_view(handle, format="uint64", length=1)


def test_handles_of_another_graph_are_rejected(device):
    first = GPUCommandGraph(device, id="first")
    foreign = first.create_transient_buffer(id="shared-name", byte_length=16, usage=STORAGE)
    second = GPUCommandGraph(device, id="second")
    second.create_transient_buffer(id="shared-name", byte_length=16, usage=STORAGE)
    with pytest.raises(GraphValidationError, match='does not own .* belongs to graph "first"'):
        second.add_compute_node(id="n", resources=[(foreign, "storage-read")], compile=noop_compile)


def test_imports_from_another_device_are_rejected(device):
    other = gpuviz.request_device(shared=False)
    buffer = other.create_buffer(size=16, usage=STORAGE)
    graph = GPUCommandGraph(device, id="devices")
    with pytest.raises(DeviceMismatchError, match='"x" import belongs to another device'):
        graph.import_buffer(id="x", byte_length=16, usage=STORAGE, buffer=buffer)


def test_undersized_or_underflagged_import(device):
    graph = GPUCommandGraph(device, id="imports")
    small = device.create_buffer(size=16, usage=STORAGE)
    with pytest.raises(GraphValidationError, match=r'"big" is smaller than compiled capacity \(needs 32 bytes, got 16\)'):
        graph.import_buffer(id="big", byte_length=32, usage=STORAGE, buffer=small)
    with pytest.raises(GraphValidationError, match='lacks declared usage'):
        graph.import_buffer(id="flags", byte_length=16, usage=STORAGE | BU.INDIRECT, buffer=small)


def test_compiled_graph_cannot_change_or_compile_again(device):
    graph = GPUCommandGraph(device, id="frozen")
    graph.add_compute_node(id="n", compile=noop_compile)
    graph.compile()
    with pytest.raises(GraphStateError, match='"frozen" is compiled: compile is not allowed'):
        graph.compile()
    with pytest.raises(GraphStateError, match="add_compute_node is not allowed"):
        graph.add_compute_node(id="m", compile=noop_compile)
    with pytest.raises(GraphStateError, match="create_transient_buffer is not allowed"):
        graph.create_transient_buffer(id="t", byte_length=4, usage=STORAGE)


def test_destroyed_graph_refuses_encode(device):
    graph = GPUCommandGraph(device, id="gone")
    graph.add_compute_node(id="n", compile=noop_compile)
    compiled = graph.compile()
    compiled.destroy()
    compiled.destroy()  # idempotent
    with pytest.raises(GraphStateError, match='"gone" is destroyed and cannot encode'):
        compiled.encode(device.create_command_encoder())


def test_failed_node_compile_cleans_up(device):
    graph = GPUCommandGraph(device, id="broken")
    scratch = graph.create_transient_buffer(id="scratch", byte_length=64, usage=STORAGE)
    destroyed = []

    class Owned:
        def destroy(self):
            destroyed.append(self)

    def good(ctx):
        ctx.own(Owned())
        return lambda target, frame: None

    def bad(ctx):
        raise RuntimeError("shader exploded")

    graph.add_compute_node(id="good", resources=[(scratch, "storage-write")], compile=good)
    graph.add_compute_node(id="bad", resources=[(scratch, "storage-read")], compile=bad)
    with pytest.raises(NodeCompileError, match='node "bad" failed to compile: shader exploded'):
        graph.compile()
    assert len(destroyed) == 1  # the node-owned object was released exactly once
    with pytest.raises(GraphStateError, match="is failed"):
        graph.compile()


def test_compile_callback_must_return_an_encoder(device):
    graph = GPUCommandGraph(device, id="none")
    graph.add_compute_node(id="n", compile=lambda ctx: None)
    with pytest.raises(NodeCompileError, match="returned None"):
        graph.compile()


def test_overrides_are_revalidated_before_recording(device):
    graph = GPUCommandGraph(device, id="override")
    data = graph.import_buffer(id="data", byte_length=64, usage=STORAGE)
    recorded = []
    graph.add_compute_node(id="n", resources=[(data, "storage-read")],
                           compile=lambda ctx: lambda target, frame: recorded.append(frame.buffer(data)))
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    with pytest.raises(OverrideError, match='import "data" has no buffer'):
        compiled.encode(encoder)
    with pytest.raises(OverrideError, match=r'"data" is smaller than compiled capacity \(needs 64 bytes, got 32\)'):
        compiled.encode(encoder, buffers={"data": device.create_buffer(size=32, usage=STORAGE)})
    with pytest.raises(OverrideError, match="lacks declared usage"):
        compiled.encode(encoder, buffers={"data": device.create_buffer(size=64, usage=BU.STORAGE)})
    with pytest.raises(OverrideError, match='no imported buffer "other"'):
        compiled.encode(encoder, buffers={"other": device.create_buffer(size=64, usage=STORAGE)})
    other_device = gpuviz.request_device(shared=False)
    with pytest.raises(DeviceMismatchError):
        compiled.encode(encoder, buffers={"data": other_device.create_buffer(size=64, usage=STORAGE)})
    assert recorded == []  # nothing was recorded by any failed encode
    good = upload(device, np.zeros(16, np.uint32))
    run(device, compiled, buffers={"data": good})
    assert recorded == [good]


def test_undeclared_resource_access_is_an_error(device):
    graph = GPUCommandGraph(device, id="undeclared")
    a = graph.create_transient_buffer(id="a", byte_length=16, usage=STORAGE)
    b = graph.create_transient_buffer(id="b", byte_length=16, usage=STORAGE)
    graph.add_compute_node(id="uses-a", resources=[(a, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="sneaky", resources=[(b, "storage-write")],
                           compile=lambda ctx: lambda target, frame: frame.buffer(a))
    compiled = graph.compile()
    with pytest.raises(GraphError, match='node "sneaky" did not declare "a"'):
        compiled.encode(device.create_command_encoder())


def test_errors_are_one_family():
    for cls in (DuplicateIdError, UsageError, ViewRangeError, OverrideError, GraphStateError, NodeCompileError):
        assert issubclass(cls, GraphError)
    assert issubclass(ViewRangeError, ValueError)


@pytest.mark.parametrize("name, builtin", [
    ("GraphValidationError", ValueError), ("GraphTypeError", TypeError), ("GraphLookupError", LookupError),
    ("GraphKeyError", KeyError), ("GraphIndexError", IndexError), ("GraphKeyError", LookupError),
    ("GraphIndexError", LookupError),
])
def test_family_classes_are_also_the_matching_builtin(name, builtin):
    cls = getattr(gpuviz, name)
    assert cls is getattr(gpuviz.errors, name)
    assert issubclass(cls, GraphError) and issubclass(cls, builtin)
    assert name in gpuviz.errors.__all__
    with pytest.raises(builtin):
        raise cls(f'Thing "x" is wrong ({name})')


def test_key_error_message_is_not_quoted_twice():
    message = 'GPUTable column "fare" not found (2 columns: "a", "b")'
    assert str(gpuviz.GraphKeyError(message)) == message
    assert str(KeyError(message)) == repr(message)  # what the override avoids


def test_gpuviz_exports_the_whole_family():
    for name in gpuviz.errors.__all__:
        assert getattr(gpuviz, name) is getattr(gpuviz.errors, name)
