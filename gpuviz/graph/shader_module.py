"""Shader modules with or without Naga's runtime checks.

By default wgpu compiles every WGSL index into a clamped (bounds-checked)
access and gives every loop a hidden 64-bit iteration counter ("forced loop
bounding"), so that no shader can read outside its bindings or hang the
device. Both cost instructions in the innermost loops of bandwidth-bound
kernels. A kernel whose every index is in range by construction (and whose
loops all end) can ask for a *trusted* module without them: wgpu-native's
``wgpuDeviceCreateShaderModuleTrusted``. Where that entry point is missing
(another backend, an older wgpu-native) the module is created normally, with
the checks: slower, never wrong.

Only gpuviz's own audited kernels opt out; user shaders never do.
"""

from __future__ import annotations

__all__ = ["create_shader_module", "trusted_modules_available"]


def _native():
    """(ffi, lib, libf) of wgpu-native, or None when not that backend."""
    try:
        from wgpu.backends.wgpu_native import _api
    except ImportError:  # pragma: no cover - only another backend lacks it
        return None
    if not hasattr(_api.libf, "wgpuDeviceCreateShaderModuleTrusted"):
        return None  # pragma: no cover - older wgpu-native
    return _api


def trusted_modules_available(device) -> bool:
    """Whether ``create_shader_module(..., runtime_checks=False)`` really drops the checks."""
    api = _native()
    return api is not None and isinstance(device, api.GPUDevice)


def create_shader_module(device, *, code: str, label: str = "", runtime_checks: bool = True):
    """A ``GPUShaderModule`` for WGSL ``code``.

    ``runtime_checks=False`` compiles it without bounds checks and forced
    loop bounding where the backend allows (see the module docstring); the
    caller guarantees that every index of the shader is in range and every
    loop ends. Compilation errors raise like ``device.create_shader_module``.
    """
    if runtime_checks or not trusted_modules_available(device):
        return device.create_shader_module(label=label, code=code)
    api = _native()
    ffi, lib = api.ffi, api.lib
    source = api.new_struct_p("WGPUShaderSourceWGSL *", code=api.to_c_string_view(code))
    source[0].chain.next = ffi.NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = api.new_struct_p("WGPUShaderModuleDescriptor *",
                                  nextInChain=ffi.cast("WGPUChainedStruct *", source),
                                  label=api.to_c_string_view(label))
    module_id = api.libf.wgpuDeviceCreateShaderModuleTrusted(device._internal, descriptor,
                                                             lib.WGPUShaderRuntimeChecks_None)
    if module_id == ffi.NULL:
        raise RuntimeError(f'Shader module "{label}" creation failed')
    return api.GPUShaderModule(label, module_id, device)

