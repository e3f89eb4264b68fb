"""Argument checks every layer shares: IDs, devices, counts and usage flags.

A leaf of the graph package (it imports only wgpu and the error family), so
the graph builder, the tables and every primitive raise the same named
errors for the same mistakes, at the call, before anything reaches wgpu.
"""

from __future__ import annotations

import operator

import numpy as np
import wgpu

from ..errors import GraphTypeError, GraphValidationError, UsageError

__all__ = ["check_id", "check_device", "check_count", "check_buffer_usage", "check_texture_usage",
           "BUFFER_USAGE_MASK", "TEXTURE_USAGE_MASK"]

#: Every bit wgpu.BufferUsage defines; wgpu-native aborts on any other bit.
BUFFER_USAGE_MASK = 0
for _flag in wgpu.BufferUsage:
    BUFFER_USAGE_MASK |= int(_flag)

#: The texture usage bits wgpu-native 0.32 accepts. wgpu-py's enum also lists
#: TRANSIENT_ATTACHMENT, which this wgpu-native rejects with a panic.
TEXTURE_USAGE_MASK = 0
for _flag in ("COPY_SRC", "COPY_DST", "TEXTURE_BINDING", "STORAGE_BINDING", "RENDER_ATTACHMENT"):
    TEXTURE_USAGE_MASK |= int(getattr(wgpu.TextureUsage, _flag))

_BU = wgpu.BufferUsage


def check_id(owner: str, id, *, kind: str = "id") -> str:
    """Return ``id`` if it is a non-empty ``str``.

    ``owner`` starts the message (``"GPUScan"``, ``"GPUCommandGraph node"``).
    Raises :class:`GraphTypeError` for a non-string (``None`` included) and
    :class:`GraphValidationError` for an empty one; never converts.
    """
    if not isinstance(id, str):
        raise GraphTypeError(f"{owner} needs a non-empty string {kind} (got {type(id).__name__} {id!r})")
    if not id:
        raise GraphValidationError(f"{owner} needs a non-empty string {kind} (got '')")
    return id


def check_device(owner: str, device) -> wgpu.GPUDevice:
    """Return ``device`` if it is a ``wgpu.GPUDevice``, else raise
    :class:`GraphTypeError` naming ``owner`` (``None`` included). Does not
    check that the device is alive."""
    if not isinstance(device, wgpu.GPUDevice):
        raise GraphTypeError(f"{owner} needs a wgpu.GPUDevice (got {type(device).__name__})")
    return device


def check_count(owner: str, name: str, value, *, low=None, high=None, error=GraphTypeError) -> int:
    """``value`` as a Python ``int`` if it is an integer: ``int`` or a numpy
    integer (``np.int64(5)`` is a fine length). ``bool`` is refused (True is
    not a row count), and so are floats, even integral ones: no silent
    coercion. Raises ``error`` (default :class:`GraphTypeError`) for a
    non-integer and :class:`GraphValidationError` when the value is below
    ``low`` or above ``high`` (``None``: no bound, the caller's to check).
    Messages start with ``owner`` (``'GPUScan "scan"'``), then ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise error(f"{owner} {name} must be an integer (got {type(value).__name__} {value!r})")
    value = operator.index(value)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = (f"in [{low}, {high}]" if low is not None and high is not None
                  else f">= {low}" if low is not None else f"<= {high}")
        raise GraphValidationError(f"{owner} {name} must be {bounds} (got {value})")
    return value


def _check_flags(owner: str, usage, mask: int, enum_name: str) -> int:
    if isinstance(usage, (bool, np.bool_)) or not isinstance(usage, (int, np.integer)):
        raise UsageError(f"{owner} needs integer {enum_name} flags (got {type(usage).__name__} {usage!r})")
    usage = int(usage)
    if usage <= 0:
        raise UsageError(f"{owner} needs nonzero usage flags (got {usage!r})")
    if usage & ~mask:
        raise UsageError(f"{owner} usage {usage:#x} has bits {usage & ~mask:#x} that wgpu.{enum_name} does not "
                         f"define (defined: {mask:#x})")
    return usage


def check_buffer_usage(owner: str, usage) -> int:
    """``usage`` as an ``int`` if it is nonzero, uses only bits wgpu.BufferUsage
    defines and pairs MAP_READ only with COPY_DST and MAP_WRITE only with
    COPY_SRC (WebGPU's rule); else :class:`UsageError` naming ``owner``.
    Checks flags only, never creates a buffer."""
    usage = _check_flags(owner, usage, BUFFER_USAGE_MASK, "BufferUsage")
    for mapped, partner in ((_BU.MAP_READ, _BU.COPY_DST), (_BU.MAP_WRITE, _BU.COPY_SRC)):
        if usage & mapped and usage & ~(mapped | partner):
            raise UsageError(f"{owner} usage {usage:#x}: a mappable buffer may combine "
                             f"{'MAP_READ' if mapped == _BU.MAP_READ else 'MAP_WRITE'} only with "
                             f"{'COPY_DST' if partner == _BU.COPY_DST else 'COPY_SRC'}")
    return usage


def check_texture_usage(owner: str, usage) -> int:
    """``usage`` as an ``int`` if it is nonzero and uses only texture usage bits
    wgpu-native accepts (:data:`TEXTURE_USAGE_MASK`); else :class:`UsageError`.
    Checks flags only, never creates a texture."""
    return _check_flags(owner, usage, TEXTURE_USAGE_MASK, "TextureUsage")
