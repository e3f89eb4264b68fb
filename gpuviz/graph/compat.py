"""The one place gpuviz touches wgpu-py's private internals.

Each function wraps an internal that wgpu-py 0.32 (pinned below 0.33 in
pyproject.toml) has no public API for, says why, and degrades to public
behaviour when the internal is missing. Nothing else in gpuviz reads a
private wgpu-py attribute.
"""

from __future__ import annotations

import time

__all__ = ["native_api", "create_trusted_shader_module", "owning_device", "poll_device", "promise_settled",
           "wait_for_promise", "map_for_read", "device_cache"]


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


def owning_device(obj, default):
    """The device ``obj`` (a buffer or texture) was created on; ``default``
    where the backend does not say. WebGPU has no public ``buffer.device``."""
    return getattr(obj, "_device", default)


def poll_device(device) -> None:
    """One non-blocking poll, so completed maps fire their callbacks even when
    wgpu-py's per-device poll thread is stopped (after ``device.destroy()``)."""
    poll = getattr(device, "_poll", None)
    if poll is not None:
        poll(False)


def promise_settled(promise) -> bool:
    """True once a ``GPUPromise`` has its outcome, before anything resolved it.

    wgpu-py's map callback only moves the promise to "pending-fulfilled" (or
    "pending-rejected"); the public ways of learning that do not serve a
    synchronous caller in 0.32: ``then()`` raises RuntimeError outside an
    event loop, and inside one its callbacks run only when the loop runs,
    which a blocking Jupyter cell never lets it do. So the state is read.
    """
    return promise._state != "pending"


def wait_for_promise(promise, timeout: float) -> None:
    """Block up to ``timeout`` seconds, waking as soon as ``promise``'s
    callback fires (wgpu-py sets a threading.Event then); sleeps where the
    event is missing. Returns without saying which happened."""
    event = getattr(promise, "_thread_event", None)
    if event is not None:
        event.wait(timeout)
    else:  # pragma: no cover - a wgpu-py without the event
        time.sleep(timeout)


# wgpu-py's map_async(READ) first submits an empty command buffer (a
# workaround for data written through a mapping, gfx-rs/wgpu-native#305). On
# lavapipe a submit blocks until earlier work finishes, so that hidden submit
# would make map_async wait for the GPU. Staging buffers are only written by
# GPU copies the caller submitted, so they map with wgpu-py's internal
# "READ_NOSYNC" mode (what its queue.read_buffer uses), or READ once it is gone.
_read_mode = ["READ_NOSYNC"]


def map_for_read(buffer, byte_length: int):
    """``buffer.map_async`` for reading ``[0, byte_length)`` without the hidden
    submit; returns the map's ``GPUPromise``."""
    try:
        return buffer.map_async(_read_mode[0], 0, byte_length)
    except ValueError as error:
        if _read_mode[0] == "READ" or "flag" not in str(error):
            raise
        _read_mode[0] = "READ"
        return buffer.map_async("READ", 0, byte_length)


def device_cache(device, name: str) -> dict:
    """A dict that lives exactly as long as ``device`` (one per ``name``).

    It hangs off the device object itself. A global
    ``weakref.WeakKeyDictionary`` keyed by device would never let a device
    go: the cached modules and pipelines hold their device strongly (wgpu-py's
    ``_device``), so the dictionary's values would keep its keys alive. Kept
    here, the cache and the device form one cycle that Python's collector
    frees with the device.
    """
    caches = getattr(device, "_gpuviz_caches", None)
    if caches is None:
        caches = {}
        device._gpuviz_caches = caches
    return caches.setdefault(name, {})
