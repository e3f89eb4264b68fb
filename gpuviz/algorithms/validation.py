"""Validation shared by the algorithms: their IDs, the views they take, how
those views may alias (:func:`refuse_overlaps`), and their tuning.

Every check raises at ``add_to_graph`` (or construction) time with the
owner's class and quoted ID first; nothing here touches the device.
"""

from __future__ import annotations

from ..formats import vector_format
from ..errors import GraphTypeError, GraphValidationError, ViewRangeError
from ..graph.resources import GraphDataView, GraphVectorView

__all__ = ["byte_span", "chunks_of", "check_topology", "indirect_record", "overlaps",
           "refuse_overlaps", "single_row", "checked_tuning"]

_identity = id  # builtins.id; the functions here take an argument named ``id``


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


def indirect_record(handle, byte_offset: int) -> GraphDataView:
    """The three uint32 words of an indirect dispatch record, as a view (for
    :func:`refuse_overlaps`)."""
    u32 = vector_format("uint32")
    return GraphDataView(handle, u32, 3, byte_offset, u32.byte_size, u32.byte_size)


def _physical(handle):
    """What identifies the bytes behind a handle: an import's default buffer,
    else the handle itself (transients, imports bound only by overrides)."""
    return handle if handle.buffer is None else handle.buffer


def _entries(roles: dict, written: bool) -> list:
    """``(label, view, written, role)`` of every non-empty view of ``roles``;
    a chunk of a multi-chunk role is labelled ``"{role} chunk {i}"``."""
    out = []
    for role, value in roles.items():
        if value is None:
            continue
        views = [value] if isinstance(value, GraphDataView) else list(getattr(value, "views", value))
        for i, view in enumerate(views):
            if view is not None and view.length:
                out.append((role if len(views) == 1 else f"{role} chunk {i}", view, written, role))
    return out


def byte_span(view) -> str:
    """``"start..end"``: the bytes a view covers, for messages."""
    return f"{view.byte_offset}..{_end(view)}"


def refuse_overlaps(owner: str, id: str, *, reads: dict, writes: dict, separate=False) -> None:
    """Refuse a primitive's views that alias: a written view whose bytes
    overlap another written view (another chunk of the same output included)
    or a read view, and one physical buffer reached through two handles when
    either is written (the graph infers no hazard between two handles, and
    wgpu refuses a buffer bound read-only and writable in one dispatch).

    Parameters
    ----------
    owner, id : str
        The primitive's class name and ID (the message starts with them).
    reads, writes : dict
        Role name -> a GraphDataView, a GraphVectorView or sequence of data
        views (chunks), or None; empty views are ignored. Writes come first
        in messages.
    separate : bool or collection of (str, str)
        True when written views may not share even a logical buffer with a
        read view (kernels that bind inputs read-only next to outputs); or
        the ``(write role, read role)`` pairs that may not (e.g. an output
        next to an indirect dispatch record).

    Raises
    ------
    GraphValidationError
        Naming both roles, the buffer(s) and the byte ranges. Nothing here
        touches the device; the cost is one sort of the views.
    """
    entries = _entries(writes, True) + _entries(reads, False)
    if not any(e[2] for e in entries):
        return
    groups = {}  # physical buffer -> its entries
    for entry in entries:
        groups.setdefault(_identity(_physical(entry[1].handle)), []).append(entry)
    for group in groups.values():
        w = next((e for e in group if e[2]), None)
        other = None if w is None else next((e for e in group if e[1].handle is not w[1].handle), None)
        if other is not None:
            raise GraphValidationError(
                f'{owner} "{id}" {w[0]} and {other[0]} are one physical buffer imported twice (as '
                f'"{w[1].handle.id}" and "{other[1].handle.id}", bytes {byte_span(w[1])} and '
                f"{byte_span(other[1])}): import it once and take views of that handle")
    if separate:
        _refuse_shared_buffers(owner, id, entries, separate)
    _refuse_byte_overlaps(owner, id, entries)


def _refuse_shared_buffers(owner, id, entries, separate) -> None:
    reads = {}  # handle -> its read entries, one per role
    for entry in entries:
        if not entry[2]:
            reads.setdefault(entry[1].handle, {}).setdefault(entry[3], entry)
    for label, view, written, role in entries:
        candidates = reads.get(view.handle, {}).values() if written else ()
        other = next((r for r in candidates if separate is True or (role, r[3]) in separate), None)
        if other is not None:
            raise GraphValidationError(
                f'{owner} "{id}" {label} and {other[0]} share buffer "{view.handle.id}" (bytes {byte_span(view)} '
                f"and {byte_span(other[1])}): {role} must not share a buffer with an input")


def _refuse_byte_overlaps(owner, id, entries) -> None:
    """Sweep each handle's views by start byte: a view overlaps an earlier one
    exactly when it starts before the furthest end seen so far (of any view
    for a written one, of a written view for a read one)."""
    by_handle = {}
    for k, entry in enumerate(entries):
        by_handle.setdefault(entry[1].handle, []).append(k)
    for ks in by_handle.values():
        reach_any = reach_written = None
        for k in sorted(ks, key=lambda k: entries[k][1].byte_offset):
            label, view, written, _ = entries[k]
            reach = reach_any if written else reach_written
            if reach is not None and _end(entries[reach][1]) > view.byte_offset:
                a, b = sorted((reach, k))
                raise GraphValidationError(
                    f'{owner} "{id}" {entries[a][0]} and {entries[b][0]} overlap in buffer "{view.handle.id}" '
                    f"(bytes {byte_span(entries[a][1])} and {byte_span(entries[b][1])})")
            if reach_any is None or _end(view) > _end(entries[reach_any][1]):
                reach_any = k
            if written and (reach_written is None or _end(view) > _end(entries[reach_written][1])):
                reach_written = k


def _end(view) -> int:
    return view.byte_offset + view.byte_length
