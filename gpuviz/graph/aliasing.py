"""Which declared buffer uses can touch the same bytes.

Two logical handles imported over one physical buffer share a hazard chain
(:attr:`GraphBufferHandle.hazard_key`), and one node may not declare two
writable uses whose bytes overlap: the result would depend on the order of
the GPU's writes. Views are compared row by row, so two interleaved fields
of one strided buffer (x at byte 0, y at byte 4, stride 8) do not overlap.
"""

from __future__ import annotations

from ..errors import GraphValidationError
from .resources import WRITE_USES, GraphBufferHandle

__all__ = ["rows_of", "rows_overlap", "check_node_writes"]


def rows_of(handle, view) -> tuple:
    """``(byte_offset, byte_stride, row_byte_length, row_count)`` of a declared
    buffer use: a :class:`GraphDataView`, or the whole handle (``view`` None).
    A packed view is one row spanning all its bytes."""
    if view is None:
        return 0, max(1, handle.byte_length), handle.byte_length, 1 if handle.byte_length else 0
    if view.length == 0:
        return view.byte_offset, 1, 0, 0
    if view.byte_stride == view.row_byte_length or view.length == 1:
        return view.byte_offset, max(1, view.byte_length), view.byte_length, 1
    return view.byte_offset, view.byte_stride, view.row_byte_length, view.length


def rows_overlap(a: tuple, b: tuple) -> bool:
    """Whether two :func:`rows_of` tuples share a byte.

    Exact when either is one row or both have one stride; two strided views
    of different strides are reported as not overlapping (conservatively
    accepted: a refusal must be certain).
    """
    (oa, sa, ra, na), (ob, sb, rb, nb) = a, b
    if not (na and nb and ra and rb):
        return False
    if na == 1 or nb == 1:
        if na != 1:  # make ``a`` the single row
            (oa, sa, ra, na), (ob, sb, rb, nb) = (ob, sb, rb, nb), (oa, sa, ra, na)
        # rows j of b with ob + j*sb < oa + ra and ob + j*sb + rb > oa
        low = max(0, (oa - rb - ob) // sb + 1)
        high = min(nb - 1, -(-(oa + ra - ob) // sb) - 1)
        return low <= high
    if sa != sb:
        return False
    # row i of a, row j = i + k of b overlap iff -rb < (ob - oa) + k*s < ra
    delta = ob - oa
    for k in ((-rb - delta) // sa + 1, (-rb - delta) // sa + 2):
        if -rb < delta + k * sa < ra and -(na - 1) <= k <= nb - 1:
            return True
    return False


def check_node_writes(node_id: str, uses) -> None:
    """Raise :class:`GraphValidationError` when node ``node_id`` declares two
    writable uses of the same bytes (``uses``: ``(handle, use, view)``
    triples, handles compared by hazard key). Texture uses are not compared."""
    written = []
    for handle, use, view in uses:
        if use in WRITE_USES and isinstance(handle, GraphBufferHandle):
            rows = rows_of(handle, view)
            for other, other_use, other_rows in written:
                if other.hazard_key is handle.hazard_key and rows_overlap(rows, other_rows):
                    raise GraphValidationError(
                        f'GPUCommandGraph node "{node_id}" declares overlapping writable views of buffer '
                        f'"{handle.hazard_key.id}" ("{other_use}" bytes {_span(other_rows)} and "{use}" bytes '
                        f"{_span(rows)}): the result would depend on the GPU's write order")
            written.append((handle, use, rows))


def _span(rows) -> str:
    offset, stride, row, count = rows
    return f"{offset}..{offset + (count - 1) * stride + row}"
