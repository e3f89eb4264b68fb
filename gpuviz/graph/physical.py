"""Checks that a physical buffer or texture keeps its logical descriptor.

The builder runs them on imports and the compiled graph on per-encoding
overrides, so both live here rather than in either module.
"""

from __future__ import annotations

import wgpu

from .compat import owning_device
from .errors import DeviceMismatchError, GraphValidationError, OverrideError

__all__ = ["check_physical_buffer", "check_physical_texture"]


def check_physical_buffer(device, graph_id: str, id: str, buffer, *, byte_length: int, usage: int, where: str):
    """Raise unless ``buffer`` belongs to ``device`` and has at least ``byte_length`` bytes and ``usage``.

    ``where`` is ``"import"`` (raises :class:`GraphValidationError`) or
    ``"override"`` (raises :class:`OverrideError`); a foreign device raises
    :class:`DeviceMismatchError`. Checks only: touches no GPU state.
    """
    error = GraphValidationError if where == "import" else OverrideError
    if not isinstance(buffer, wgpu.GPUBuffer):
        raise error(f'GPUCommandGraph buffer "{id}" {where} is not a wgpu.GPUBuffer (got {type(buffer).__name__})')
    if owning_device(buffer, device) is not device:
        raise DeviceMismatchError(f'GPUCommandGraph buffer "{id}" {where} belongs to another device than graph '
                                  f'"{graph_id}"')
    if buffer.size < byte_length:
        raise error(f'GPUCommandGraph buffer "{id}" is smaller than compiled capacity '
                    f"(needs {byte_length} bytes, got {buffer.size})")
    if buffer.usage & usage != usage:
        raise error(f'GPUCommandGraph buffer "{id}" {where} lacks declared usage '
                    f"(needs {usage:#x}, got {buffer.usage:#x})")


def check_physical_texture(device, handle, texture, *, where: str):
    """Raise unless ``texture`` belongs to ``device`` and matches ``handle``'s
    size, format, sample count and usage (errors as :func:`check_physical_buffer`)."""
    error = GraphValidationError if where == "import" else OverrideError
    if not isinstance(texture, wgpu.GPUTexture):
        raise error(f'GPUCommandGraph texture "{handle.id}" {where} is not a wgpu.GPUTexture')
    if owning_device(texture, device) is not device:
        raise DeviceMismatchError(f'GPUCommandGraph texture "{handle.id}" {where} belongs to another device')
    size = tuple(texture.size)
    if size != handle.size or str(texture.format) != handle.format or texture.sample_count != handle.sample_count:
        raise error(f'GPUCommandGraph texture "{handle.id}" {where} does not match its descriptor (needs '
                    f'{handle.size} {handle.format} x{handle.sample_count}, got {size} {texture.format} '
                    f"x{texture.sample_count})")
    if texture.usage & handle.usage != handle.usage:
        raise error(f'GPUCommandGraph texture "{handle.id}" {where} lacks declared usage '
                    f"(needs {handle.usage:#x}, got {texture.usage:#x})")
