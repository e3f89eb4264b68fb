"""The one place gpuviz touches wgpu-py's private internals.

Each function wraps an internal that wgpu-py 0.32 (pinned below 0.33 in
pyproject.toml) has no public API for, says why, and degrades to public
behaviour when the internal is missing. Nothing else in gpuviz reads a
private wgpu-py attribute.
"""

from __future__ import annotations

__all__ = ["native_api", "create_trusted_shader_module", "poll_device", "promise_settled"]


def native_api():
    """wgpu-native's API module when it can create trusted shader modules,
    else None (another backend, or a wgpu-native too old)."""
    try:
        from wgpu.backends.wgpu_native import _api
    except ImportError:  # pragma: no cover - only another backend lacks it
        return None
    if not hasattr(_api.libf, "wgpuDeviceCreateShaderModuleTrusted"):
        return None  # pragma: no cover - older wgpu-native
    return _api


def create_trusted_shader_module(device, *, code: str, label: str, bounds_checks: bool, loop_bounding: bool):
    """A shader module compiled with only the runtime checks asked for, through
    ``wgpuDeviceCreateShaderModuleTrusted`` (wgpu-py exposes no descriptor
    field for it). Returns None where the entry point is unavailable, or when
    compilation failed (the caller then compiles normally, which raises wgpu's
    own error with the shader's diagnostics)."""
    api = native_api()
    if api is None or not isinstance(device, api.GPUDevice):
        return None
    ffi, lib = api.ffi, api.lib
    checks = ((lib.WGPUShaderRuntimeChecks_BoundsChecks if bounds_checks else 0)
              | (lib.WGPUShaderRuntimeChecks_ForceLoopBounding if loop_bounding else 0))
    source = api.new_struct_p("WGPUShaderSourceWGSL *", code=api.to_c_string_view(code))
    source[0].chain.next = ffi.NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = api.new_struct_p("WGPUShaderModuleDescriptor *",
                                  nextInChain=ffi.cast("WGPUChainedStruct *", source),
                                  label=api.to_c_string_view(label))
    module_id = api.libf.wgpuDeviceCreateShaderModuleTrusted(device._internal, descriptor, checks)
    if module_id == ffi.NULL:
        return None
    return api.GPUShaderModule(label, module_id, device)
