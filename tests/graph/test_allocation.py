"""Transient lifetime reuse: whole-buffer sharing between disjoint lifetimes."""

import wgpu

from gpuviz import GPUCommandGraph
from gpuviz.graph.allocation import plan_graph_transients, plan_transients

from .helpers import noop_compile

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage


def test_disjoint_lifetimes_share_one_allocation_with_max_size_and_union_usage(device):
    graph = GPUCommandGraph(device, id="reuse")
    a = graph.create_transient_buffer(id="level-a", byte_length=4000, usage=BU.STORAGE)
    b = graph.create_transient_buffer(id="level-b", byte_length=8000, usage=BU.STORAGE | BU.COPY_SRC)
    graph.add_compute_node(id="use-a", resources=[(a, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="use-b", resources=[(b, "storage-write")], compile=noop_compile)
    seen = {}

    def probe(ctx):
        def encode(target, frame):
            seen["b"] = frame.buffer(b)
        return encode

    graph.add_compute_node(id="probe", resources=[(b, "storage-read")], compile=probe)
    compiled = graph.compile()
    stats = compiled.stats
    assert stats.logical_transient_count == 2 and stats.logical_transient_bytes == 12000
    assert stats.physical_transient_count == 1 and stats.physical_transient_bytes == 8000
    assert stats.reused_bytes == 4000 and round(stats.reuse_percent, 3) == round(100 * 4000 / 12000, 3)
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    assert seen["b"].size == 8000
    assert seen["b"].usage & (BU.STORAGE | BU.COPY_SRC) == BU.STORAGE | BU.COPY_SRC
    assert not seen["b"].usage & (BU.MAP_READ | BU.MAP_WRITE)


def test_overlapping_lifetimes_get_separate_allocations(device):
    graph = GPUCommandGraph(device, id="overlap")
    a = graph.create_transient_buffer(id="a", byte_length=256, usage=BU.STORAGE)
    b = graph.create_transient_buffer(id="b", byte_length=256, usage=BU.STORAGE)
    graph.add_compute_node(id="write-both", resources=[(a, "storage-write"), (b, "storage-write")],
                           compile=noop_compile)
    graph.add_compute_node(id="read-a", resources=[(a, "storage-read")], compile=noop_compile)
    stats = graph.compile().stats
    assert stats.physical_transient_count == 2 and stats.reused_bytes == 0


class _Handle:
    def __init__(self, name, size, usage=1):
        self.id, self.byte_length, self.usage = name, size, usage


def test_planner_prefers_smallest_fitting_free_slot():
    big, small, mid = _Handle("big", 1000), _Handle("small", 10), _Handle("mid", 50)
    slots, assignment = plan_transients([(big, 0, 0), (small, 0, 0), (mid, 1, 1)])
    assert len(slots) == 2
    assert assignment[mid] is assignment[big]  # small cannot hold mid: the 1000-byte slot fits
    late = _Handle("late", 5)
    slots, assignment = plan_transients([(big, 0, 0), (small, 0, 0), (late, 2, 2)])
    assert assignment[late] is assignment[small]


def test_textures_share_only_identical_descriptors(device):
    graph = GPUCommandGraph(device, id="textures")
    usage = wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
    t1 = graph.create_transient_texture(id="t1", size=(8, 8), format="rgba8unorm", usage=usage)
    t2 = graph.create_transient_texture(id="t2", size=(8, 8), format="rgba8unorm", usage=usage)
    t3 = graph.create_transient_texture(id="t3", size=(4, 4), format="rgba8unorm", usage=usage)
    for i, tex in enumerate((t1, t2, t3)):
        graph.add_render_node(id=f"draw-{i}", compile=noop_compile, color_attachments=[{"view": tex}])
    stats = graph.compile().stats
    assert stats.transient_texture_count == 3 and stats.physical_texture_count == 2


def test_plan_graph_transients_pads_buffers_and_keys_textures(device):
    graph = GPUCommandGraph(device, id="plan")
    a = graph.create_transient_buffer(id="a", byte_length=6, usage=BU.STORAGE)
    b = graph.create_transient_buffer(id="b", byte_length=2, usage=BU.STORAGE)
    t = graph.create_transient_texture(id="t", size=(4, 4), format="rgba8unorm", usage=TU.COPY_DST)
    u = graph.create_transient_texture(id="u", size=(8, 4), format="rgba8unorm", usage=TU.COPY_DST)
    graph.add_compute_node(id="use-a", resources=[(a, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="use-b", resources=[(b, "storage-write")], compile=noop_compile)
    graph.add_copy_node(id="use-t", resources=[(t, "copy-destination")], compile=noop_compile)
    graph.add_copy_node(id="use-u", resources=[(u, "copy-destination")], compile=noop_compile)
    buffer_slots, texture_slots, assignment = plan_graph_transients(graph.nodes)
    assert len(buffer_slots) == 1 and buffer_slots[0].byte_length == 8  # 6 bytes padded to whole words
    assert assignment[a] is assignment[b] is buffer_slots[0]
    assert len(texture_slots) == 2 and assignment[t] is not assignment[u]  # different sizes never share
