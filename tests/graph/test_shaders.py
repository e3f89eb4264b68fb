"""Shader modules without wgpu's runtime checks: the same results, cached apart."""

import numpy as np
import pytest
import wgpu

from gpuviz.graph import ComputeKernel
from gpuviz.graph.shaders import runtime_checks_forced, shader_module, trusted_modules_available

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
CHECKS = [(True, True), (True, False), (False, True), (False, False)]


def run_kernel(device, x: np.ndarray, **checks) -> np.ndarray:
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    src = device.create_buffer_with_data(data=x.tobytes(), usage=usage)
    dst = device.create_buffer(size=x.nbytes, usage=usage)
    kernel = ComputeKernel(device, code=SQUARE_PLUS_LOOP, **checks)
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    kernel.dispatch(compute_pass, None, bindings={0: src, 1: dst}, workgroups=-(-x.size // 64))
    compute_pass.end()
    device.queue.submit([encoder.finish()])
    return np.frombuffer(device.queue.read_buffer(dst), np.uint32)


@pytest.mark.parametrize("bounds_checks, loop_bounding", CHECKS)
def test_every_check_combination_computes_the_same(device, bounds_checks, loop_bounding):
    assert trusted_modules_available(device)
    x = np.arange(1000, dtype=np.uint32)
    got = run_kernel(device, x, bounds_checks=bounds_checks, loop_bounding=loop_bounding)
    np.testing.assert_array_equal(got, x * x + 3)


def test_kernels_cache_modules_per_check_combination(device):
    pipelines = {checks: ComputeKernel(device, code=SQUARE_PLUS_LOOP, bounds_checks=checks[0],
                                       loop_bounding=checks[1]).pipeline for checks in CHECKS}
    assert len({id(p) for p in pipelines.values()}) == len(CHECKS)
    again = ComputeKernel(device, code=SQUARE_PLUS_LOOP, bounds_checks=False, loop_bounding=False)
    assert again.pipeline is pipelines[(False, False)]


@pytest.mark.parametrize("bounds_checks, loop_bounding", CHECKS)
def test_compile_errors_raise(device, bounds_checks, loop_bounding):
    with pytest.raises(wgpu.GPUError, match="expected"):
        shader_module(device, "fn broken( {", label="broken", bounds_checks=bounds_checks,
                             loop_bounding=loop_bounding)


def test_environment_forces_the_checks(device, monkeypatch):
    monkeypatch.setenv("GPUVIZ_RUNTIME_CHECKS", "1")
    assert runtime_checks_forced()
    module = shader_module(device, SQUARE_PLUS_LOOP, bounds_checks=False, loop_bounding=False)
    assert isinstance(module, wgpu.GPUShaderModule)
    monkeypatch.setenv("GPUVIZ_RUNTIME_CHECKS", "0")
    assert not runtime_checks_forced()
