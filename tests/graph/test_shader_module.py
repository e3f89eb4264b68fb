"""Trusted shader modules: the same results without Naga's runtime checks."""

import numpy as np
import pytest
import wgpu

from gpuviz.graph import ComputeKernel
from gpuviz.graph.shader_module import create_shader_module, trusted_modules_available

SQUARE_PLUS_LOOP = """
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&src)) { return; }
    var acc = src[i] * src[i];
    for (var k = 0u; k < 3u; k++) { acc += k; }
    dst[i] = acc;
}
"""


def run_kernel(device, runtime_checks: bool, x: np.ndarray) -> np.ndarray:
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    src = device.create_buffer_with_data(data=x.tobytes(), usage=usage)
    dst = device.create_buffer(size=x.nbytes, usage=usage)
    kernel = ComputeKernel(device, code=SQUARE_PLUS_LOOP, runtime_checks=runtime_checks)
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    kernel.dispatch(compute_pass, None, bindings={0: src, 1: dst}, workgroups=-(-x.size // 64))
    compute_pass.end()
    device.queue.submit([encoder.finish()])
    return np.frombuffer(device.queue.read_buffer(dst), np.uint32)


def test_trusted_module_matches_checked_module(device):
    assert trusted_modules_available(device)
    x = np.arange(1000, dtype=np.uint32)
    expected = x * x + 3
    assert np.array_equal(run_kernel(device, True, x), expected)
    assert np.array_equal(run_kernel(device, False, x), expected)


def test_kernels_cache_checked_and_trusted_modules_separately(device):
    checked = ComputeKernel(device, code=SQUARE_PLUS_LOOP, runtime_checks=True)
    trusted = ComputeKernel(device, code=SQUARE_PLUS_LOOP, runtime_checks=False)
    assert checked.pipeline is not trusted.pipeline
    assert ComputeKernel(device, code=SQUARE_PLUS_LOOP, runtime_checks=False).pipeline is trusted.pipeline


@pytest.mark.parametrize("runtime_checks", [True, False])
def test_compile_errors_raise(device, runtime_checks):
    with pytest.raises(wgpu.GPUError, match="expected"):
        create_shader_module(device, code="fn broken( {", label="broken", runtime_checks=runtime_checks)
