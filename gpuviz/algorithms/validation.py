"""Validation shared by the algorithms: the views they take and their tuning.

Every check raises at ``add_to_graph`` (or construction) time with the
owner's class and quoted ID first; nothing here touches the device.
"""

from __future__ import annotations

from ..formats import vector_format
from ..graph.errors import GraphTypeError, GraphValidationError, ViewRangeError
from ..graph.resources import GraphDataView, GraphVectorView

__all__ = ["chunks_of", "check_topology", "overlaps", "single_row", "checked_tuning"]


def checked_tuning(owner: str, id: str, tuning, cls):
    """``tuning`` when it is a ``cls``, a default ``cls()`` when it is None.

    Raises
    ------
    GraphTypeError
        For anything else (e.g. a ScanTuning given to a reduction).
    """
    if tuning is None:
        return cls()
    if not isinstance(tuning, cls):
        raise GraphTypeError(f'{owner} "{id}" tuning must be a {cls.__name__} (got {type(tuning).__name__})')
    return tuning


def chunks_of(owner: str, id: str, name: str, value, graph, *, formats=("uint32",)) -> tuple:
    """Validate a packed data view or vector view of one of ``formats`` that
    belongs to ``graph``; return ``(kind, views)`` with kind "data" or "vector"."""
    if isinstance(value, GraphDataView):
        kind, views, fmt = "data", (value,), value.format
    elif isinstance(value, GraphVectorView):
        kind, views, fmt = "vector", tuple(value.views), value.format
    else:
        raise GraphValidationError(
            f'{owner} "{id}" {name} must be a GraphDataView or GraphVectorView (got {type(value).__name__})')
    if fmt.name not in formats:
        raise GraphValidationError(
            f'{owner} "{id}" {name} must be {" or ".join(formats)} (got {fmt.name})')
    for view in views:
        if vector_format(view.format) != fmt:
            raise GraphValidationError(f'{owner} "{id}" {name} mixes formats {fmt.name} and {view.format.name}')
        if not view.is_packed:
            raise ViewRangeError(
                f'{owner} "{id}" {name} must be packed (byte stride {view.byte_stride}, row '
                f'{view.row_byte_length}, {fmt.name} needs {fmt.byte_size})')
        if view.byte_offset % 4:
            raise ViewRangeError(
                f'{owner} "{id}" {name} byte offset {view.byte_offset} is not a multiple of 4')
        if graph.buffers.get(view.handle.id) is not view.handle:
            raise GraphValidationError(
                f'{owner} "{id}" {name} belongs to graph "{view.handle.graph_id}", not "{graph.id}"')
    return kind, views


def check_topology(owner: str, id: str, name: str, ref_name: str, kind, views, ref_kind, ref_views) -> None:
    """Vector against vector with identical ordered chunk lengths, or data view
    against data view."""
    if kind != ref_kind:
        raise GraphValidationError(
            f'{owner} "{id}" {name} is a {kind} view but {ref_name} is a {ref_kind} view (use the same kind)')
    if kind == "vector":
        a = [v.length for v in views]
        b = [v.length for v in ref_views]
        if a != b:
            raise GraphValidationError(
                f'{owner} "{id}" {name} chunk lengths {a} do not match {ref_name} chunk lengths {b}')


def overlaps(a: GraphDataView, b: GraphDataView) -> bool:
    """True when two views share bytes of one logical buffer."""
    if a.handle is not b.handle or a.length == 0 or b.length == 0:
        return False
    return a.byte_offset < b.byte_offset + b.byte_length and b.byte_offset < a.byte_offset + a.byte_length


def single_row(owner: str, id: str, name: str, value, graph, *, formats=("uint32",), rows: int = 1) -> GraphDataView:
    """Validate a packed data view with at least ``rows`` rows (counts, totals)."""
    kind, views = chunks_of(owner, id, name, value, graph, formats=formats)
    if kind != "data":
        raise GraphValidationError(f'{owner} "{id}" {name} must be a GraphDataView (got a vector view)')
    view = views[0]
    if view.length < rows:
        raise GraphValidationError(
            f'{owner} "{id}" {name} is shorter than needed (needs {rows} row{"s" * (rows > 1)}, got {view.length})')
    return view
