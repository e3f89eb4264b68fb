"""The one wording of device loss in every widget.

Widgets ask :func:`~gpuviz.graph.device_loss.device_lost_reason` (no GPU
call) before each frame and before reading any sampled value: after a loss,
most calls on the device raise ``GPUValidationError``, but reading a map that
was pending when the device went aborts the process inside wgpu-native.
"""

from __future__ import annotations

from ..graph.device_loss import device_lost_reason

__all__ = ["device_lost_message"]


def device_lost_message(device) -> str | None:
    """``"GPU device lost: <reason>"`` (what widgets show and raise), or None
    while ``device`` is usable. Never calls the GPU."""
    reason = device_lost_reason(device)
    return None if reason is None else f"GPU device lost: {reason}"
