"""The one place gpuviz touches wgpu-py's private internals.

Each function wraps an internal that wgpu-py 0.32 (pinned below 0.33 in
pyproject.toml) has no public API for, says why, and degrades to public
behaviour when the internal is missing. Nothing else in gpuviz reads a
private wgpu-py attribute.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
import weakref

import wgpu

__all__ = ["native_api", "create_trusted_shader_module", "owning_device", "poll_device", "promise_settled",
           "wait_for_promise", "map_for_read", "device_cache", "device_destroyed", "watch_device_loss",
           "reported_device_loss", "is_destroyed", "DestroyWatch", "PassDescriptor", "compute_pass_descriptor",
           "render_pass_descriptor"]


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


def device_destroyed(device) -> bool:
    """True once ``device.destroy()`` ran. wgpu-py records nothing public:
    ``device.lost`` raises NotImplementedError in 0.32, but destroy stops and
    drops the device's poll thread (``_poller``), which is set from creation on."""
    return hasattr(device, "_poller") and device._poller is None


# wgpu-py 0.32's device-lost callback only logs: "DEVICE LOST!" to the "wgpu"
# logger, then the reason (deduplicated, hidden after 10 alike). A handler on
# that logger reads the callback's arguments from its frame, which is on the
# stack while the record is handled, to learn which device was lost.
_watched = weakref.WeakValueDictionary()  # device handle address -> device


def _address(pointer) -> int:
    from wgpu.backends.wgpu_native import _api
    return int(_api.ffi.cast("uintptr_t", pointer))


class _DeviceLossHandler(logging.Handler):
    def emit(self, record):
        if record.msg != "DEVICE LOST!":
            return
        frame = sys._getframe()
        while frame is not None and frame.f_code.co_name != "device_lost_callback":
            frame = frame.f_back
        if frame is None:  # pragma: no cover - a wgpu-py whose callback is named otherwise
            return
        try:
            from wgpu.backends.wgpu_native import _api
            args = frame.f_locals
            device = _watched.get(_address(args["c_device"][0]))
            if device is not None:
                reason = _api.enum_int2str["DeviceLostReason"].get(args["c_reason"], "Unknown")
                device._gpuviz_lost = f"{reason}: {_api.from_c_string_view(args['c_message'])}"
        except Exception:  # pragma: no cover - never let a log record raise
            pass


_loss_handler = []


def watch_device_loss(device) -> None:
    """From now on, note a loss of ``device`` that wgpu-native reports (see
    :func:`reported_device_loss`); idempotent and cheap. A no-op for a device
    of another backend."""
    internal = getattr(device, "_internal", None)
    if internal is None or getattr(device, "_gpuviz_watched", False):
        return
    if not _loss_handler:
        _loss_handler.append(_DeviceLossHandler(logging.ERROR))
        logging.getLogger("wgpu").addHandler(_loss_handler[0])
    _watched[_address(internal)] = device
    device._gpuviz_watched = True


def reported_device_loss(device):
    """``"reason: message"`` of the device-lost callback for a watched
    ``device`` (e.g. ``"destroyed: Device lost"``), or None. The callback
    runs on a later call into wgpu-native, not at the loss itself."""
    return getattr(device, "_gpuviz_lost", None)


# WebGPU has no "was this buffer destroyed?" query, and wgpu-native 0.32 panics
# (aborting the process) on a submit that uses a destroyed buffer, and on
# wgpuBufferGetMapState ("not implemented"). So every backend's destroy() is
# wrapped to leave a mark on the object: the backend classes are subclasses of
# wgpu.GPUBuffer / GPUTexture, wrapped when defined (the backend is imported
# lazily, by the first request_adapter) or here when already imported. Only
# objects destroyed before gpuviz was imported go unseen.
_DESTROYED = "_gpuviz_destroyed"
_WATCHES = "_gpuviz_destroy_watches"  # WeakSet of the DestroyWatch objects told about a destroy()


def is_destroyed(obj) -> bool:
    """True once ``destroy()`` was called on ``obj`` (a wgpu buffer or texture),
    by gpuviz or anyone else. Reads a Python attribute: no GPU call, O(1)."""
    return getattr(obj, _DESTROYED, False)


def _mark_destroys(cls) -> None:
    destroy = cls.__dict__.get("destroy")
    if destroy is None or getattr(destroy, "_gpuviz_marks", False):
        return

    @functools.wraps(destroy)
    def marking_destroy(self, *args, **kwargs):
        setattr(self, _DESTROYED, True)  # first: a destroy that raises still leaves the object unusable
        for watch in tuple(getattr(self, _WATCHES, ())):
            watch.stale = True
        return destroy(self, *args, **kwargs)

    marking_destroy._gpuviz_marks = True
    cls.destroy = marking_destroy


def _track_destroys(base) -> None:
    def __init_subclass__(cls, **kwargs):
        super(base, cls).__init_subclass__(**kwargs)
        _mark_destroys(cls)

    base.__init_subclass__ = classmethod(__init_subclass__)
    pending = [base]
    while pending:
        cls = pending.pop()
        _mark_destroys(cls)
        pending.extend(cls.__subclasses__())


for _base in (wgpu.GPUBuffer, wgpu.GPUTexture):
    _track_destroys(_base)


class DestroyWatch:
    """Turns ``stale`` once ``destroy()`` was called on any object it watches.

    A compiled graph watches the buffers and textures it binds, so an
    encoding learns in O(1) that none was destroyed. Holds its objects weakly
    (each object holds the watch in a WeakSet), so it keeps nothing alive.
    """

    __slots__ = ("stale", "__weakref__")

    def __init__(self):
        self.stale = False

    def watch(self, obj) -> bool:
        """Watch a wgpu buffer or texture; False (nothing watched) for any other object."""
        if not isinstance(obj, (wgpu.GPUBuffer, wgpu.GPUTexture)):
            return False
        try:
            watches = obj.__dict__.get(_WATCHES)
            if watches is None:
                watches = weakref.WeakSet()
                setattr(obj, _WATCHES, watches)
        except AttributeError:  # pragma: no cover - an object without a __dict__: not watched
            return False
        watches.add(self)
        if is_destroyed(obj):
            self.stale = True
        return True


class PassDescriptor:
    """A compute or render pass descriptor made once and begun on many encoders.

    wgpu-py 0.32 rebuilds every cffi struct of a pass descriptor from its
    dicts on each ``begin_*_pass`` (for a render pass with several targets
    that costs several times the call itself); a compiled graph begins the same passes every
    frame. Built through wgpu-py's own struct helpers (its checks run once,
    here) and begun with the same wgpu-native entry point, errors included.
    Keeps the attachment dicts (their texture views) alive.
    """

    __slots__ = ("label", "_struct", "_begin", "_wrap", "_keep")

    def __init__(self, label, struct, begin, wrap, keep):
        self.label, self._struct, self._begin, self._wrap, self._keep = label, struct, begin, wrap, keep

    def begin(self, encoder):
        """Begin the pass on ``encoder`` (a wgpu-native GPUCommandEncoder); returns its pass encoder."""
        return self._wrap(self.label, self._begin(encoder._internal, self._struct), encoder._device)


def compute_pass_descriptor(label: str):
    """A :class:`PassDescriptor` of a compute pass without timestamps, or None
    where wgpu-native's internals are not there (begin passes normally then)."""
    try:
        from wgpu.backends.wgpu_native import _api
        struct = _api.new_struct_p("WGPUComputePassDescriptor *", label=_api.to_c_string_view(label),
                                   timestampWrites=_api.ffi.NULL)
        return PassDescriptor(label, struct, _api.libf.wgpuCommandEncoderBeginComputePass,
                              _api.GPUComputePassEncoder, None)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - another wgpu-py
        return None


def render_pass_descriptor(encoder, *, label: str, color_attachments, depth_stencil_attachment=None):
    """A :class:`PassDescriptor` of a render pass without timestamps or
    occlusion queries, built with ``encoder``'s own attachment helpers (they
    check the dicts as ``begin_render_pass`` does); None where wgpu-native's
    internals are not there."""
    try:
        from wgpu.backends.wgpu_native import _api
        if not isinstance(encoder, _api.GPUCommandEncoder):
            return None
        colors = [encoder._create_render_pass_color_attachment(a) for a in color_attachments]
        depth = _api.ffi.NULL
        if depth_stencil_attachment is not None:
            _api.check_struct("RenderPassDepthStencilAttachment", depth_stencil_attachment)
            depth = encoder._create_render_pass_stencil_attachment(depth_stencil_attachment)
        struct = _api.new_struct_p("WGPURenderPassDescriptor *", label=_api.to_c_string_view(label),
                                   colorAttachments=_api.new_array("WGPURenderPassColorAttachment[]", colors),
                                   colorAttachmentCount=len(colors), depthStencilAttachment=depth,
                                   timestampWrites=_api.ffi.NULL, occlusionQuerySet=_api.ffi.NULL)
        return PassDescriptor(label, struct, _api.libf.wgpuCommandEncoderBeginRenderPass, _api.GPURenderPassEncoder,
                              (list(color_attachments), depth_stencil_attachment))
    except (ImportError, AttributeError):  # pragma: no cover - another wgpu-py
        return None
