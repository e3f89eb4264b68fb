"""Compute rasterisation: pixels written by compute kernels instead of the
rasteriser, shared by every consumer that draws many small items.

A data-centre GPU runs vertex and pixel shaders on a few of its processor
clusters only, so a primitive per pixel-sized item costs far more there than
the bandwidth the pixels need; TraceViewer's tracks and FrustumCulling's
dense views write those pixels by compute. The splat and resolve formats
live here and in ``render/shaders/raster.wgsl`` (imported by a kernel as
``{% import "render/shaders/raster.wgsl" as raster %}``); a consumer keeps
only its policy: which items, which pixels, what a key means and how a
resolved pixel is coloured.

Two targets:

* **Packed** — one ``u32`` word per pixel, cleared to :data:`RASTER_EMPTY`.
  An item splats ``atomicMax(word, packed_word(key, id))`` with the key in the
  top ``key_bits`` bits and ``id + 1`` below: the highest key wins (a
  priority, or a quantised depth written so that nearer is larger), among
  equal keys the highest ID (the later item in draw order, as instanced
  primitives overdraw). The words do not depend on the order of the splats.
* **Depth** — two ``u32`` per pixel (depth bits, ``id + 1``) for a depth too
  fine to share a word with an ID: one pass keeps each pixel's nearest depth
  (``atomicMin`` of the bits of a depth >= 0, which order as the floats do;
  cleared to :data:`RASTER_FAR`), a second gives the pixel the highest ID
  among the items at that depth.

This module holds the formats as Python for hosts that size, validate or
decode targets. It allocates nothing, records nothing, never submits or reads
back; the consumer owns the target buffers and its kernels' bindings. The
CPU oracle of both targets is :mod:`gpuviz.oracles.render`.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphValidationError

__all__ = ["RASTER_SHADER", "RASTER_EMPTY", "RASTER_FAR", "packed_words", "packed_id_limit", "unpack_words"]

#: The WGSL macros (``packed_format``, ``packed_target``, ``depth_format``, ``depth_target``).
RASTER_SHADER = "render/shaders/raster.wgsl"
#: A packed target's empty pixel.
RASTER_EMPTY = 0
#: A depth target's empty depth bits (behind everything).
RASTER_FAR = 0xFFFFFFFF


def _key_bits(key_bits) -> int:
    if isinstance(key_bits, bool) or not isinstance(key_bits, (int, np.integer)) or not 1 <= key_bits <= 31:
        raise GraphValidationError(f"compute raster key_bits must be an integer in 1..31 (got {key_bits!r})")
    return int(key_bits)


def packed_id_limit(key_bits: int) -> int:
    """IDs a packed target with ``key_bits`` of key holds: ``0 <= id < limit``
    (one word value, 0, is the empty pixel, not an ID)."""
    return (1 << (32 - _key_bits(key_bits))) - 1


def packed_words(*, keys, ids, key_bits: int) -> np.ndarray:
    """The words items splat into a packed target (uint32): ``key`` in the top
    ``key_bits`` bits, ``id + 1`` below. A key or ID out of range raises
    GraphValidationError; nothing is clipped or wrapped."""
    bits = _key_bits(key_bits)
    keys, ids = np.asarray(keys, np.int64), np.asarray(ids, np.int64)
    if keys.size and (keys.min() < 0 or keys.max() >= 1 << bits):
        raise GraphValidationError(f"compute raster key out of range for key_bits {bits} "
                                   f"(needs 0..{(1 << bits) - 1}, got {keys.min()}..{keys.max()})")
    if ids.size and (ids.min() < 0 or ids.max() >= packed_id_limit(bits)):
        raise GraphValidationError(f"compute raster ID out of range for key_bits {bits} "
                                   f"(needs 0..{packed_id_limit(bits) - 1}, got {ids.min()}..{ids.max()})")
    return ((keys << (32 - bits)) | (ids + 1)).astype(np.uint32)


def unpack_words(words, *, key_bits: int):
    """``(empty, keys, ids)`` of packed words, as a resolve reads them:
    ``empty`` a bool array; keys and IDs (int64) are 0 and -1 where empty.
    Does not check that the words came from a target of these ``key_bits``."""
    bits = _key_bits(key_bits)
    words = np.asarray(words, np.uint32).astype(np.int64)
    empty = words == RASTER_EMPTY
    keys = np.where(empty, 0, words >> (32 - bits))
    ids = np.where(empty, -1, (words & ((1 << (32 - bits)) - 1)) - 1)
    return empty, keys, ids
