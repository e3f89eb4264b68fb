"""The shader builder: templates, includes, strictness, per-device caches and
modules without wgpu's runtime checks."""

import gc
import weakref

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz.graph import ComputeKernel, compat, shaders
from gpuviz.graph.shaders import (ShaderTemplateError, compute_pipeline, runtime_checks_forced, shader_module,
                                  trusted_modules_available, wgsl)

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


def run_module(device, module, x: np.ndarray) -> np.ndarray:
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    src = device.create_buffer_with_data(data=x.tobytes(), usage=usage)
    dst = device.create_buffer(size=x.nbytes, usage=usage)
    pipeline = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": src, "offset": 0, "size": x.nbytes}},
        {"binding": 1, "resource": {"buffer": dst, "offset": 0, "size": x.nbytes}}])
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    compute_pass.set_pipeline(pipeline)
    compute_pass.set_bind_group(0, group)
    compute_pass.dispatch_workgroups(-(-x.size // 64))
    compute_pass.end()
    device.queue.submit([encoder.finish()])
    return np.frombuffer(device.queue.read_buffer(dst), np.uint32)


# ---------------------------------------------------------------- templates
def test_views_macro_takes_the_offset_as_an_expression():
    text = wgsl("algorithms/shaders/views.wgsl")  # only macros: renders to comments and blank lines
    assert "@binding" not in text
    module = shaders._ENV.get_template("algorithms/shaders/views.wgsl").module
    vec4 = module.view("data", 3, "read_write", "vec4", "params.off")
    assert "@group(0) @binding(3) var<storage, read_write> data: array<vec4<u32>>;" in vec4
    assert "data[(params.off + i) >> 2u]" in vec4 and "fn data_set1" in vec4
    scalar = module.view("data", 1, "read", "scalar", "7u")
    assert "array<u32>" in scalar and "data[7u + i]" in scalar and "fn data_set1" not in scalar
    start = module.view("data", 1, "read", "vec4-start", "params.off")  # the view begins its bound range
    assert "params.off" not in start and "data[(0u + i) >> 2u]" in start
    none = module.view("data", 1, "read", "none", "0u")
    assert "@binding" not in none and "fn data_get4" in none and "fn data_set1" in none
    with pytest.raises(ShaderTemplateError, match="unknown layout bogus"):
        module.view("data", 1, "read", "bogus", "0u")


def test_missing_values_and_files_raise_named_errors():
    with pytest.raises(ShaderTemplateError, match='"algorithms/shaders/nope.wgsl" not found'):
        wgsl("algorithms/shaders/nope.wgsl")
    assert issubclass(ShaderTemplateError, gpuviz.GraphError) and issubclass(ShaderTemplateError, LookupError)


def test_strict_undefined_refuses_a_missing_loop_bound(tmp_path, monkeypatch):
    # range(ROWS) with ROWS missing must name ROWS, not render an empty loop
    # or surface jinja's TypeError.
    (tmp_path / "rows.wgsl").write_text("{% for r in range(ROWS) %}let x{{ r }} = {{ r | u32 }};\n{% endfor %}")
    (tmp_path / "outer.wgsl").write_text('// outer\n{% include "rows.wgsl" %}')
    monkeypatch.setattr(shaders._ENV, "loader", shaders.jinja2.FileSystemLoader(tmp_path))
    shaders._ENV.cache.clear()
    try:
        assert wgsl("outer.wgsl", ROWS=2) == "// outer\nlet x0 = 0u;\nlet x1 = 1u;\n"
        with pytest.raises(ShaderTemplateError, match="'ROWS' is undefined"):
            wgsl("outer.wgsl")
    finally:
        shaders._ENV.cache.clear()


# ------------------------------------------------------------------ caches
def test_pipelines_are_cached_per_device_and_die_with_it():
    adapter = wgpu.gpu.request_adapter_sync()
    device, other = adapter.request_device_sync(), adapter.request_device_sync()
    first = compute_pipeline(device, SQUARE_PLUS_LOOP, constants={})
    assert compute_pipeline(device, SQUARE_PLUS_LOOP) is first
    assert compute_pipeline(other, SQUARE_PLUS_LOOP) is not first
    ref = weakref.ref(device)
    del device, first
    gc.collect()
    assert ref() is None  # the cache did not keep the device (or its pipelines) alive


def test_kernels_cache_modules_per_check_combination(device):
    pipelines = {checks: ComputeKernel(device, code=SQUARE_PLUS_LOOP, bounds_checks=checks[0],
                                       loop_bounding=checks[1]).pipeline for checks in CHECKS}
    assert len({id(p) for p in pipelines.values()}) == len(CHECKS)
    again = ComputeKernel(device, code=SQUARE_PLUS_LOOP, bounds_checks=False, loop_bounding=False)
    assert again.pipeline is pipelines[(False, False)]


def test_caches_are_lru_bounded_and_evicting_keeps_kernels_working(monkeypatch):
    """At most MODULE_CACHE_SIZE modules and PIPELINE_CACHE_SIZE pipelines
    per device, least recently used evicted first; a kernel whose pipeline
    was evicted still runs, and asking again compiles a new one."""
    assert (shaders.MODULE_CACHE_SIZE, shaders.PIPELINE_CACHE_SIZE) == (256, 512)  # the documented caps
    monkeypatch.setattr(shaders, "MODULE_CACHE_SIZE", 3)
    monkeypatch.setattr(shaders, "PIPELINE_CACHE_SIZE", 4)
    device = wgpu.gpu.request_adapter_sync().request_device_sync()
    codes = [f"// variant {i}\n{SQUARE_PLUS_LOOP}" for i in range(6)]
    first = ComputeKernel(device, code=codes[0])
    for code in codes[1:4]:
        compute_pipeline(device, code)
    assert compute_pipeline(device, codes[0]) is first.pipeline  # a hit refreshes codes[0]...
    compute_pipeline(device, codes[4])  # ...so codes[1], the least recently used, goes
    pipelines, modules = compat.device_cache(device, "compute-pipelines"), compat.device_cache(device, "shader-modules")
    assert [key[0] for key in pipelines] == [codes[2], codes[3], codes[0], codes[4]]
    assert len(modules) == 3 and all(code in {c for c, _ in modules} for code in codes[2:5])
    for code in codes[5:] + codes[1:4]:
        compute_pipeline(device, code)
    assert len(pipelines) == 4 and codes[0] not in {key[0] for key in pipelines}
    x = np.arange(100, dtype=np.uint32)  # the evicted pipeline still computes through its kernel
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    src = device.create_buffer_with_data(data=x.tobytes(), usage=usage)
    dst = device.create_buffer(size=x.nbytes, usage=usage)
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    first.dispatch(compute_pass, None, bindings={0: src, 1: dst}, workgroups=2)
    compute_pass.end()
    device.queue.submit([encoder.finish()])
    np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(dst), np.uint32), x * x + 3)
    assert compute_pipeline(device, codes[0]) is not first.pipeline


# ----------------------------------------------------------- runtime checks
@pytest.mark.parametrize("bounds_checks, loop_bounding", CHECKS)
def test_every_check_combination_computes_the_same(device, bounds_checks, loop_bounding):
    x = np.arange(1000, dtype=np.uint32)
    module = shader_module(device, SQUARE_PLUS_LOOP, bounds_checks=bounds_checks, loop_bounding=loop_bounding)
    np.testing.assert_array_equal(run_module(device, module, x), x * x + 3)


@pytest.mark.parametrize("bounds_checks, loop_bounding", CHECKS[1:])
def test_the_trusted_entry_point_itself_compiles_a_working_module(device, bounds_checks, loop_bounding):
    # The FFI path, not the fallback: None here would mean every "trusted"
    # module silently kept its checks.
    assert trusted_modules_available(device)
    module = compat.create_trusted_shader_module(device, code=SQUARE_PLUS_LOOP, label="trusted",
                                                 bounds_checks=bounds_checks, loop_bounding=loop_bounding)
    assert isinstance(module, wgpu.GPUShaderModule)
    x = np.arange(257, dtype=np.uint32)
    np.testing.assert_array_equal(run_module(device, module, x), x * x + 3)


def record_trusted_calls(monkeypatch):
    calls = []
    real = compat.create_trusted_shader_module

    def spy(device, **kwargs):
        calls.append((kwargs["bounds_checks"], kwargs["loop_bounding"]))
        return real(device, **kwargs)

    monkeypatch.setattr(compat, "create_trusted_shader_module", spy)
    return calls


def test_only_modules_that_drop_a_check_take_the_trusted_path(device, monkeypatch):
    calls = record_trusted_calls(monkeypatch)
    code = SQUARE_PLUS_LOOP + "// routing probe\n"  # not cached by other tests
    for bounds_checks, loop_bounding in CHECKS:
        shader_module(device, code, bounds_checks=bounds_checks, loop_bounding=loop_bounding)
    assert calls == [(True, False), (False, True), (False, False)]


def test_environment_forces_the_checks(device, monkeypatch):
    calls = record_trusted_calls(monkeypatch)
    monkeypatch.setenv("GPUVIZ_RUNTIME_CHECKS", "1")
    assert runtime_checks_forced()
    code = SQUARE_PLUS_LOOP + "// forced probe\n"
    forced = shader_module(device, code, bounds_checks=False, loop_bounding=False)
    assert calls == []  # compiled the normal (checked) way
    assert shader_module(device, code) is forced  # one module: the checked one
    monkeypatch.setenv("GPUVIZ_RUNTIME_CHECKS", "0")
    assert not runtime_checks_forced()
    trusted = shader_module(device, code, bounds_checks=False, loop_bounding=False)
    assert calls == [(False, False)] and trusted is not forced


@pytest.mark.parametrize("bounds_checks, loop_bounding", CHECKS)
def test_compile_errors_raise(device, bounds_checks, loop_bounding):
    with pytest.raises(wgpu.GPUError, match="expected"):
        shader_module(device, "fn broken( {", label="broken", bounds_checks=bounds_checks,
                      loop_bounding=loop_bounding)
