"""Shader modules with or without wgpu's runtime checks.

By default wgpu compiles every WGSL index into a clamped (bounds-checked)
access and gives every loop a hidden 64-bit iteration counter ("forced loop
bounding"), so that no shader can read outside its bindings or hang the
device. Both cost instructions, and loop bounding can keep a driver from
unrolling a short loop. A kernel whose every index is in range and every
loop ends by construction can drop them through wgpu-native's
``wgpuDeviceCreateShaderModuleTrusted``; where that entry point is missing
the module is created normally, with the checks: slower, never wrong.

Measured on an H200: the sorts gain (the one-workgroup bitonic kernel runs
36 % faster, the radix sort 7 %); the scan and the analysis primitives did
not, so they keep the checks. Setting ``GPUVIZ_RUNTIME_CHECKS=1`` before a
module is first created compiles it with both checks (to debug a suspected
hang or overrun).
"""

from __future__ import annotations

import os

__all__ = ["create_shader_module", "runtime_checks_forced", "trusted_modules_available"]


def _native():
    """wgpu-native's API module, or None when not that backend or too old."""
    try:
        from wgpu.backends.wgpu_native import _api
    except ImportError:  # pragma: no cover - only another backend lacks it
        return None
    if not hasattr(_api.libf, "wgpuDeviceCreateShaderModuleTrusted"):
        return None  # pragma: no cover - older wgpu-native
    return _api


def trusted_modules_available(device) -> bool:
    """Whether this device can compile modules without wgpu's runtime checks."""
    api = _native()
    return api is not None and isinstance(device, api.GPUDevice)


def runtime_checks_forced() -> bool:
    """``GPUVIZ_RUNTIME_CHECKS=1``: every module keeps wgpu's checks."""
    return os.environ.get("GPUVIZ_RUNTIME_CHECKS", "") not in ("", "0")


def create_shader_module(device, *, code: str, label: str = "", bounds_checks: bool = True,
                         loop_bounding: bool = True):
    """A ``GPUShaderModule`` for WGSL ``code``.

    ``bounds_checks=False``: the caller guarantees every index of the shader
    is in range. ``loop_bounding=False``: the caller guarantees every loop
    ends. Either is honoured where the backend allows (see the module
    docstring). Compilation errors raise like ``device.create_shader_module``.
    """
    if runtime_checks_forced() or (bounds_checks and loop_bounding) or not trusted_modules_available(device):
        return device.create_shader_module(label=label, code=code)
    api = _native()
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
        raise RuntimeError(f'Shader module "{label}" creation failed')
    return api.GPUShaderModule(label, module_id, device)
