"""Whether a device was lost, for code that must stop using it gracefully.

wgpu-py 0.32 has no working ``device.lost`` (its promise raises
NotImplementedError) and only logs a loss, so the observations are gathered
in :mod:`~gpuviz.graph.compat`: a ``device.destroy()`` call, and the
device-lost callback of wgpu-native. Widgets poll :func:`device_lost_reason`
each frame and stop drawing ("GPU device lost: <reason>"); the readback ring
checks it before touching a mapped buffer, whose memory a lost device frees.
"""

from __future__ import annotations

import wgpu

from ..errors import GraphTypeError
from . import compat

__all__ = ["device_lost_reason"]


def device_lost_reason(device) -> str | None:
    """Why ``device`` is lost, or None while it is usable.

    Parameters
    ----------
    device : wgpu.GPUDevice

    Returns
    -------
    str or None
        ``"destroyed"`` once ``device.destroy()`` ran; else the reason and
        message wgpu-native reported (e.g. ``"unknown: <driver message>"``);
        None when no loss was seen.

    Notes
    -----
    Cheap (no GPU call), so it can run every frame; it never waits and never
    polls the device. The first call starts watching ``device``: a loss
    reported by wgpu-native before any call of this function or before a
    :class:`~gpuviz.GPUReadbackRing` on the device existed goes unseen
    (``destroy()`` is always seen).

    Raises
    ------
    GraphTypeError
        ``device`` is not a ``wgpu.GPUDevice``.
    """
    if not isinstance(device, wgpu.GPUDevice):
        raise GraphTypeError(f"device_lost_reason needs a wgpu.GPUDevice (got {type(device).__name__})")
    compat.watch_device_loss(device)
    if compat.device_destroyed(device):
        return "destroyed"
    return compat.reported_device_loss(device)
