"""Adapter and device acquisition for gpuviz.

One shared ``wgpu.GPUDevice`` per process serves every graph, table and
widget unless a caller asks for a private one. Optional features are
requested only where the adapter offers them, and buffer/binding limits are
raised to the adapter's so large tables fit in one binding.
"""

from __future__ import annotations

import os
import threading
import weakref
from dataclasses import dataclass, field

import wgpu

from .errors import GraphLookupError

__all__ = ["request_device", "device_capabilities", "DeviceCapabilities", "OPTIONAL_FEATURES"]

#: Features gpuviz uses when present; none is required.
OPTIONAL_FEATURES = (
    "timestamp-query",
    "timestamp-query-inside-encoders",
    "subgroup",
    "indirect-first-instance",
    "shader-float32-atomic",  # native atomicAdd on atomic<f32> (grid and group sums)
)

# Limits raised to the adapter's maximum: they bound how much one table or
# scratch allocation can hold and how many bindings a kernel may use.
_RAISED_LIMITS = (
    "max-buffer-size",
    "max-storage-buffer-binding-size",
    "max-uniform-buffer-binding-size",
    "max-storage-buffers-per-shader-stage",
    "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroups-per-dimension",
    "max-bind-groups",
)

_shared_device = None
_shared_lock = threading.Lock()
# The adapter each device came from, for capability reports; a side table
# rather than an attribute set on wgpu's device object.
_adapter_info = weakref.WeakKeyDictionary()


def _pick_adapter(name: str | None):
    """Return the adapter whose device name contains ``name`` (case-insensitive),
    or the high-performance adapter when ``name`` is empty."""
    if not name:
        return wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    adapters = wgpu.gpu.enumerate_adapters_sync()
    for adapter in adapters:
        info = adapter.info
        label = f"{info.get('device', '')} {info.get('vendor', '')} {info.get('description', '')}"
        if name.lower() in label.lower():
            return adapter
    found = ", ".join(repr(a.info.get("device", "?")) for a in adapters) or "none"
    raise GraphLookupError(f'request_device: no adapter matches GPUVIZ_ADAPTER "{name}" (found {found})')


def request_device(*, adapter_name: str | None = None, shared: bool = True) -> wgpu.GPUDevice:
    """Return a ``wgpu.GPUDevice`` ready for gpuviz.

    Parameters
    ----------
    adapter_name : str, optional
        Substring of the adapter's name to pick; defaults to the environment
        variable ``GPUVIZ_ADAPTER``, and without it the high-performance adapter.
    shared : bool
        With True (the default) every call returns the same process-wide
        device. False creates a new private device each call.

    Notes
    -----
    Requests ``timestamp-query``, ``timestamp-query-inside-encoders``,
    ``subgroup``, ``indirect-first-instance`` and ``shader-float32-atomic``
    only where the adapter has them. Does not create a canvas, submit work or install error handlers.

    Raises
    ------
    GraphLookupError
        No adapter's name contains ``adapter_name`` (also a ``LookupError``).
    """
    global _shared_device
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # silences a wgpu-native warning
    if shared:
        with _shared_lock:
            if _shared_device is None:
                _shared_device = _create_device(adapter_name)
            return _shared_device
    return _create_device(adapter_name)


def _create_device(adapter_name: str | None) -> wgpu.GPUDevice:
    adapter = _pick_adapter(adapter_name if adapter_name is not None else os.environ.get("GPUVIZ_ADAPTER"))
    features = [f for f in OPTIONAL_FEATURES if f in adapter.features]
    limits = {key: adapter.limits[key] for key in _RAISED_LIMITS if key in adapter.limits}
    device = adapter.request_device_sync(
        label="gpuviz", required_features=features, required_limits=limits
    )
    _adapter_info[device] = dict(adapter.info)
    return device


@dataclass(frozen=True)
class DeviceCapabilities:
    """Graph-relevant facts about a device: optional features and key limits.

    A frozen snapshot taken by :func:`device_capabilities`; it does not
    follow later changes and does not hold the device.
    """

    adapter: str
    backend: str
    timestamps: bool
    timestamps_inside_encoders: bool
    subgroups: bool
    indirect_first_instance: bool
    float32_atomics: bool
    max_buffer_size: int
    max_storage_buffer_binding_size: int
    max_storage_buffers_per_shader_stage: int
    max_compute_workgroups_per_dimension: int
    max_compute_invocations_per_workgroup: int
    max_compute_workgroup_storage_size: int
    min_storage_buffer_offset_alignment: int
    min_uniform_buffer_offset_alignment: int
    features: frozenset = field(default_factory=frozenset)

    def as_dict(self) -> dict:
        """Plain-dict form, for inspectors and logs."""
        out = dict(self.__dict__)
        out["features"] = sorted(self.features)
        return out


def device_capabilities(device: wgpu.GPUDevice) -> DeviceCapabilities:
    """Report the features and limits that graphs and kernels depend on.

    Reads what the device already knows; does not request features or
    limits, and does not touch the GPU.
    """
    feats = frozenset(device.features)
    lim = device.limits
    info = _adapter_info.get(device, {})
    return DeviceCapabilities(
        adapter=str(info.get("device", "unknown")),
        backend=str(info.get("backend_type", "unknown")),
        timestamps="timestamp-query" in feats,
        timestamps_inside_encoders="timestamp-query-inside-encoders" in feats,
        subgroups="subgroup" in feats,
        indirect_first_instance="indirect-first-instance" in feats,
        float32_atomics="shader-float32-atomic" in feats,
        max_buffer_size=int(lim["max-buffer-size"]),
        max_storage_buffer_binding_size=int(lim["max-storage-buffer-binding-size"]),
        max_storage_buffers_per_shader_stage=int(lim["max-storage-buffers-per-shader-stage"]),
        max_compute_workgroups_per_dimension=int(lim["max-compute-workgroups-per-dimension"]),
        max_compute_invocations_per_workgroup=int(lim["max-compute-invocations-per-workgroup"]),
        max_compute_workgroup_storage_size=int(lim["max-compute-workgroup-storage-size"]),
        min_storage_buffer_offset_alignment=int(lim["min-storage-buffer-offset-alignment"]),
        min_uniform_buffer_offset_alignment=int(lim["min-uniform-buffer-offset-alignment"]),
        features=feats,
    )
