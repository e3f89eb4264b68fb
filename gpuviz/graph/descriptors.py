"""Checks of texture descriptors, texture views and render attachments.

The builder runs them when a texture, view or render node is declared, so a
wrong format, an over-limit size or a misspelled ``load_op`` fails at that
call with a named error instead of a ``KeyError`` or a wgpu validation error
at compile or encode time. Checks only: nothing here touches the GPU.
"""

from __future__ import annotations

import wgpu

from .checks import check_count
from ..errors import GraphValidationError

__all__ = ["check_texture_descriptor", "check_texture_view_options", "check_attachment"]

TEXTURE_FORMATS = frozenset(wgpu.TextureFormat)
TEXTURE_DIMENSIONS = frozenset(wgpu.TextureDimension)
VIEW_DIMENSIONS = frozenset(wgpu.TextureViewDimension)
ASPECTS = frozenset(wgpu.TextureAspect)
LOAD_OPS = frozenset(wgpu.LoadOp)
STORE_OPS = frozenset(wgpu.StoreOp)

#: Keys a color attachment may have, and the enum each op key must name.
COLOR_KEYS = {"view": None, "resolve_target": None, "load_op": LOAD_OPS, "store_op": STORE_OPS,
              "clear_value": None, "depth_slice": None}
DEPTH_KEYS = {"view": None, "depth_load_op": LOAD_OPS, "depth_store_op": STORE_OPS, "depth_clear_value": None,
              "depth_read_only": None, "stencil_load_op": LOAD_OPS, "stencil_store_op": STORE_OPS,
              "stencil_clear_value": None, "stencil_read_only": None}


def check_texture_descriptor(device, owner: str, *, size, format, dimension, mip_level_count,
                             sample_count) -> tuple:
    """Validate a texture descriptor against WebGPU's rules and ``device``'s limits.

    ``owner`` starts every message (``'GPUCommandGraph texture "plot"'``).
    Returns the size as a 3-tuple of ints. Raises :class:`GraphTypeError` for
    non-integer sizes or counts (1.9 is not rounded) and
    :class:`GraphValidationError` for an unknown format or dimension, a size
    outside ``1..limit`` (naming the limit), too many mip levels or a sample
    count other than 1 or 4. Does not check format features (storage or
    render support of a format, compressed-format features).
    """
    if isinstance(size, (str, bytes)) or not hasattr(size, "__len__") or not 1 <= len(size) <= 3:
        raise GraphValidationError(f"{owner} needs a size of 1 to 3 integers (got {size!r})")
    dims = tuple(check_count(owner, "size", s) for s in size) + (1,) * (3 - len(size))
    if min(dims) < 1:
        raise GraphValidationError(f"{owner} needs a positive size (got {size!r})")
    if format not in TEXTURE_FORMATS:
        raise GraphValidationError(f"{owner} has unknown format {format!r} (see wgpu.TextureFormat)")
    if dimension not in TEXTURE_DIMENSIONS:
        raise GraphValidationError(f"{owner} has unknown dimension {dimension!r} (known: 1d, 2d, 3d)")
    limits = device.limits
    if dimension == "3d":
        checks = [("width, height and depth", max(dims), "max-texture-dimension-3d")]
    else:
        checks = [("width" if dimension == "1d" else "width and height",
                   dims[0] if dimension == "1d" else max(dims[:2]), f"max-texture-dimension-{dimension}"),
                  ("array layers", dims[2], "max-texture-array-layers")]
    for what, value, limit_name in checks:
        if value > limits[limit_name]:
            raise GraphValidationError(f"{owner} {what} exceed the device limit (size {dims}, "
                                       f"{limit_name} {limits[limit_name]})")
    if dimension == "1d" and dims[1:] != (1, 1):
        raise GraphValidationError(f"{owner} is 1d and needs height and depth 1 (got size {dims})")
    mips = check_count(owner, "mip_level_count", mip_level_count)
    largest = max(dims[:1] if dimension == "1d" else dims if dimension == "3d" else dims[:2])
    most = largest.bit_length() if dimension != "1d" else 1
    if not 1 <= mips <= most:
        raise GraphValidationError(f"{owner} needs 1..{most} mip levels for size {dims} (got {mips})")
    samples = check_count(owner, "sample_count", sample_count)
    if samples not in (1, 4) or (samples == 4 and (dimension != "2d" or mips != 1)):
        raise GraphValidationError(f"{owner} needs sample_count 1, or 4 for a 2d texture of one mip level "
                                   f"(got {samples}, {dimension}, {mips} mips)")
    return dims


def check_texture_view_options(owner: str, *, aspect, dimension) -> None:
    """Raise :class:`GraphValidationError` unless ``aspect`` is a
    wgpu.TextureAspect and ``dimension`` (None: the texture's) a
    wgpu.TextureViewDimension. Does not check them against the texture's format."""
    if aspect not in ASPECTS:
        raise GraphValidationError(f"{owner} has unknown aspect {aspect!r} (known: {', '.join(sorted(ASPECTS))})")
    if dimension is not None and dimension not in VIEW_DIMENSIONS:
        raise GraphValidationError(
            f"{owner} has unknown view dimension {dimension!r} (known: {', '.join(sorted(VIEW_DIMENSIONS))})")


def check_attachment(owner: str, attachment, *, depth: bool) -> dict:
    """A copy of one render attachment dict after checking its keys and ops.

    It must be a mapping with a ``"view"``; keys other than wgpu-py's
    attachment fields and op names outside wgpu.LoadOp / wgpu.StoreOp raise
    :class:`GraphValidationError` naming ``owner``. Whether the view is a
    texture of the graph is the builder's check, not this one's.
    """
    kind = "depth_stencil_attachment" if depth else "color attachment"
    try:
        att = dict(attachment)
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} {kind} must be a dict (got {type(attachment).__name__})") from None
    keys = DEPTH_KEYS if depth else COLOR_KEYS
    unknown = sorted(set(att) - set(keys), key=str)
    if unknown:
        raise GraphValidationError(f"{owner} {kind} has unknown keys {unknown} (known: {', '.join(keys)})")
    if att.get("view") is None:
        raise GraphValidationError(f'{owner} {kind} needs a "view" (a texture handle or view)')
    for key, allowed in keys.items():
        if allowed is not None and key in att and att[key] not in allowed:
            raise GraphValidationError(
                f"{owner} {kind} has unknown {key} {att[key]!r} (known: {', '.join(sorted(allowed))})")
    return att
