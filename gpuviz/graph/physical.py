"""Checks that a physical buffer or texture keeps its logical descriptor.

The builder runs them on imports and the compiled graph on per-encoding
overrides, so both live here rather than in either module. wgpu-native aborts
the process on a submit that uses a destroyed buffer, so destroyed objects are
refused here too, before anything is recorded.
"""

from __future__ import annotations

import wgpu

from .compat import is_destroyed, owning_device
from ..errors import DeviceMismatchError, GraphStateError, GraphValidationError, OverrideError

__all__ = ["check_physical_buffer", "check_physical_texture", "check_resolved_imports"]


def check_physical_buffer(device, graph_id: str, id: str, buffer, *, byte_length: int, usage: int, where: str):
    """Raise unless ``buffer`` belongs to ``device`` and has at least ``byte_length`` bytes and ``usage``.

    ``where`` is ``"import"`` (raises :class:`GraphValidationError`) or
    ``"override"`` (raises :class:`OverrideError`); a foreign device raises
    :class:`DeviceMismatchError`, a destroyed buffer :class:`GraphStateError`.
    Checks only: touches no GPU state.
    """
    error = GraphValidationError if where == "import" else OverrideError
    if not isinstance(buffer, wgpu.GPUBuffer):
        raise error(f'GPUCommandGraph buffer "{id}" {where} is not a wgpu.GPUBuffer (got {type(buffer).__name__})')
    if is_destroyed(buffer):
        raise GraphStateError(f'GPUCommandGraph buffer "{id}" {where} was destroyed (graph "{graph_id}")')
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
    if is_destroyed(texture):
        raise GraphStateError(f'GPUCommandGraph texture "{handle.id}" {where} was destroyed')
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


def check_resolved_imports(graph_id: str, resources: dict) -> None:
    """Check the physical objects one encoding binds to its imports.

    ``resources`` maps every handle to its physical buffer or texture (imports
    after overrides, transients). Raises :class:`OverrideError` for an import
    with none, :class:`GraphStateError` naming the import whose buffer or
    texture was destroyed since it was imported (submitting it would abort the
    process), and :class:`OverrideError` when two imports that do not share a
    hazard chain are bound to one object and a node writes either (their
    hazards were never ordered; two read-only imports of one buffer are fine).
    O(imports), no GPU call; records nothing.
    """
    bound = {}
    for handle, physical in resources.items():
        if handle.lifetime != "imported":
            continue
        if physical is None:
            raise OverrideError(f'CompiledGPUCommandGraph "{graph_id}" import "{handle.id}" has no buffer or '
                                "texture: pass it in encode(buffers=...) or textures=...")
        if is_destroyed(physical):
            raise GraphStateError(f'CompiledGPUCommandGraph "{graph_id}" import "{handle.id}" was destroyed after '
                                  "it was imported: pass a live one in encode(buffers=...) or build a new graph")
        entry = bound.get(id(physical))
        if entry is None:  # [first handle, its hazard key, any written, several hazard keys]
            bound[id(physical)] = [handle, handle.hazard_key, handle.written, False]
            continue
        entry[2] = entry[2] or handle.written
        entry[3] = entry[3] or handle.hazard_key is not entry[1]
        if entry[2] and entry[3]:
            raise OverrideError(f'CompiledGPUCommandGraph "{graph_id}" imports "{entry[0].id}" and "{handle.id}" '
                                "are bound to one physical object and a node writes it: their hazards are not "
                                "ordered (import it once, or pass separate objects)")
