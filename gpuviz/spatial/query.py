"""The spatial query record: one small GPU-resident buffer that the grid
query and the exact point filter read, and the Python helpers that write it.

A query is data, not structure: changing from a box to a lasso, or moving
it, is a ``queue.write_buffer`` of :data:`QUERY_WORDS` words between
encodings, never a recompile. A GPU node may write the record too (the
layout is in ``shaders/query_common.wgsl``).
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphTypeError, GraphValidationError

__all__ = ["QUERY_WORDS", "QUERY_KINDS", "MAX_POLYGON_VERTICES", "query_record", "write_query"]

#: Words of a query record (a 16-word header, then 256 (x, y) vertices).
QUERY_WORDS = 16 + 2 * 256
#: The kind word of each query (0 is the empty query: it selects nothing).
QUERY_KINDS = {"empty": 0, "point": 1, "bounds": 2, "radius": 3, "polygon": 4}
#: The most vertices a polygon (lasso) query holds.
MAX_POLYGON_VERTICES = 256


def _coords(name, value, dims, owner):
    try:
        array = np.asarray(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} {name} must be {dims} numbers (got {value!r})") from None
    if array.size != dims:
        raise GraphValidationError(f"{owner} {name} must have {dims} coordinates (got {array.size})")
    with np.errstate(over="ignore"):
        array32 = array.astype(np.float32)
    if not np.isfinite(array32).all():
        raise GraphValidationError(f"{owner} {name} must be finite float32 values (got {array.tolist()})")
    return array32


def query_record(*, dims: int = 2, point=None, bounds=None, radius=None, polygon=None,
                 owner: str = "query_record") -> np.ndarray:
    """The :data:`QUERY_WORDS` uint32 words of one query.

    Parameters
    ----------
    dims : {2, 3}
        Coordinates per point of the data queried.
    point : sequence of float, optional
        One point: the grid query selects the cell holding it, the exact
        filter the rows equal to it.
    bounds : (sequence of float, sequence of float), optional
        ``(minimum, maximum)`` corners of an axis-aligned box, inclusive on
        every side; ``minimum <= maximum`` on every axis.
    radius : (sequence of float, float), optional
        ``(centre, r)``, ``r >= 0``: rows whose float32 squared distance to
        the centre is at most ``r * r``.
    polygon : sequence of (float, float), optional
        A lasso of 3 to 256 vertices (2-D only), closed implicitly; a point
        is inside by the even-odd rule, so self-intersecting lassos are
        still defined. The record also holds the vertices' bounds, which the
        grid query uses as its region.

    Give exactly one (none at all gives the empty query, which selects
    nothing). Values are rounded to float32 and must be finite.

    Raises
    ------
    GraphValidationError
        Naming the bad value. Does not touch the GPU; see :func:`write_query`.
    """
    if dims not in (2, 3) or isinstance(dims, bool):
        raise GraphValidationError(f"{owner} dims must be 2 or 3 (got {dims!r})")
    given = [name for name, v in (("point", point), ("bounds", bounds), ("radius", radius),
                                  ("polygon", polygon)) if v is not None]
    if len(given) > 1:
        raise GraphValidationError(f"{owner} takes exactly one of point, bounds, radius, polygon "
                                   f"(got {', '.join(given)})")
    words = np.zeros(QUERY_WORDS, np.uint32)
    floats = words.view(np.float32)
    if not given:
        return words
    kind = given[0]
    words[0] = QUERY_KINDS[kind]
    if kind == "point":
        floats[4:4 + dims] = _coords("point", point, dims, owner)
    elif kind == "bounds":
        try:
            lo, hi = bounds
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} bounds must be (minimum, maximum) (got {bounds!r})") from None
        lo, hi = _coords("bounds minimum", lo, dims, owner), _coords("bounds maximum", hi, dims, owner)
        if (lo > hi).any():
            raise GraphValidationError(f"{owner} bounds minimum {lo.tolist()} exceeds maximum {hi.tolist()}")
        floats[4:4 + dims], floats[8:8 + dims] = lo, hi
    elif kind == "radius":
        try:
            centre, r = radius
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} radius must be (centre, r) (got {radius!r})") from None
        floats[4:4 + dims] = _coords("radius centre", centre, dims, owner)
        r32 = _coords("radius", [r], 1, owner)[0]
        if r32 < 0:
            raise GraphValidationError(f"{owner} radius must be >= 0 (got {r})")
        floats[7] = r32
    else:
        if dims != 2:
            raise GraphValidationError(f"{owner} polygon queries are 2-D (dims is {dims})")
        try:
            vertices = np.asarray(polygon, dtype=np.float64)
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} polygon must be (x, y) vertices (got {polygon!r})") from None
        if vertices.ndim != 2 or vertices.shape[1] != 2:
            raise GraphValidationError(f"{owner} polygon must be a sequence of (x, y) vertices "
                                       f"(got shape {vertices.shape})")
        if not 3 <= len(vertices) <= MAX_POLYGON_VERTICES:
            raise GraphValidationError(f"{owner} polygon needs 3 to {MAX_POLYGON_VERTICES} vertices "
                                       f"(got {len(vertices)})")
        v32 = _coords("polygon", vertices, vertices.size, owner).reshape(-1, 2)
        words[1] = len(v32)
        floats[4:6], floats[8:10] = v32.min(axis=0), v32.max(axis=0)
        floats[16:16 + v32.size] = v32.reshape(-1)
    return words


def write_query(target, *, queue, dims: int = 2, point=None, bounds=None, radius=None, polygon=None) -> np.ndarray:
    """Write a query record (see :func:`query_record`) into ``target`` with
    ``queue.write_buffer`` (``queue``: the device's queue); returns the
    words written.

    ``target`` is a GPUData (its buffer and byte offset) or a
    ``(wgpu.GPUBuffer, byte_offset)`` pair holding at least
    :data:`QUERY_WORDS` words. Does not submit, wait or read back: the next
    submitted encoding sees the new query, with no recompile.
    """
    words = query_record(dims=dims, point=point, bounds=bounds, radius=radius, polygon=polygon,
                         owner="write_query")
    if isinstance(target, tuple) and len(target) == 2:
        buffer, offset = target
    elif hasattr(target, "buffer") and hasattr(target, "byte_offset"):
        buffer, offset = target.buffer, target.byte_offset
    else:
        raise GraphTypeError(f"write_query target must be a GPUData or a (buffer, byte_offset) pair "
                             f"(got {type(target).__name__})")
    if offset + 4 * QUERY_WORDS > buffer.size:
        raise GraphValidationError(f'write_query target "{getattr(buffer, "label", "")}" needs {4 * QUERY_WORDS} '
                                   f"bytes at offset {offset} (buffer has {buffer.size})")
    queue.write_buffer(buffer, offset, words.tobytes())
    return words
