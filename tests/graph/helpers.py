"""Small builders shared by the graph tests."""

import numpy as np
import wgpu

BU = wgpu.BufferUsage
STORAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST

# y[i + OUT] = x[i + IN] * FACTOR + ADD, for i < N.
AFFINE_WGSL = """
override N: u32 = 0u;
override IN: u32 = 0u;
override OUT: u32 = 0u;
override FACTOR: u32 = 1u;
override ADD: u32 = 0u;
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 64u + lid;
    if (i < N) { y[i + OUT] = x[i + IN] * FACTOR + ADD; }
}
"""


def copy_node(graph, node_id, source, target, **kwargs):
    """A copy node moving ``source``'s bytes onto ``target`` (two buffer views)."""
    def compile(ctx):
        def encode(encoder, frame):
            encoder.copy_buffer_to_buffer(frame.buffer(source), source.byte_offset, frame.buffer(target),
                                          target.byte_offset, source.byte_length)
        return encode
    graph.add_copy_node(id=node_id, resources=[(source, "copy-source"), (target, "copy-destination")],
                        compile=compile, **kwargs)


def noop_compile(ctx):
    return lambda target, frame: None


def affine_node(graph, node_id, source, target, *, factor=1, add=0, log=None):
    """Add a compute node writing target = source * factor + add (views)."""
    from gpuviz import ComputeKernel

    def compile(ctx):
        kernel = ComputeKernel(ctx.device, code=AFFINE_WGSL, label=node_id, constants={
            "N": source.length, "FACTOR": factor, "ADD": add,
            "IN": ComputeKernel.element_offset(source, ctx.device),
            "OUT": ComputeKernel.element_offset(target, ctx.device)})

        def encode(compute_pass, frame):
            if log is not None:
                log.append(node_id)
            kernel.dispatch(compute_pass, frame, bindings={0: source, 1: target},
                            workgroups=-(-source.length // 64))
        return encode

    graph.add_compute_node(id=node_id, resources=[(source, "storage-read"), (target, "storage-write")],
                           compile=compile)


def upload(device, array, usage=STORAGE):
    return device.create_buffer_with_data(data=np.ascontiguousarray(array), usage=usage)


def read_u32(device, buffer):
    return np.frombuffer(device.queue.read_buffer(buffer), dtype=np.uint32)


def run(device, compiled, **kwargs):
    encoder = device.create_command_encoder()
    times = compiled.encode(encoder, **kwargs)
    device.queue.submit([encoder.finish()])
    return times
