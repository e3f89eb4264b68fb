"""Plumbing shared by the algorithms: shader text, view validation and the
storage bindings that kernels declare for views.

Private: the public objects live in ``scan``, ``compaction``, ``mask`` and
``reduction``.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from pathlib import Path

import wgpu

from ..formats import vector_format
from ..graph.errors import GraphValidationError, ViewRangeError
from ..graph.resources import GraphBufferHandle, GraphDataView, GraphVectorView

SHADER_DIR = Path(__file__).with_name("shaders")
STORAGE = wgpu.BufferUsage.STORAGE
WORKGROUP = 256


@functools.lru_cache(maxsize=None)
def shader_source(name: str) -> str:
    """The text of ``shaders/<name>``, read once per process."""
    return (SHADER_DIR / name).read_text()


def render(name: str, **subs) -> str:
    """``shaders/<name>`` with ``$KEY`` placeholders substituted (the one
    template step: structural constants WGSL cannot take as overrides, such as
    function-scope array sizes and binding declarations)."""
    return string.Template(shader_source(name)).substitute({k: str(v) for k, v in subs.items()})


def unroll(text: str, rows: int) -> str:
    """Expand ``//#rows`` ... ``//#end`` blocks once per row (``@R`` -> row) and
    ``//#quads`` ... ``//#end`` blocks once per four rows (``@Q`` -> quad,
    ``@A``..``@D`` -> its rows). WGSL has no unroll hint, and arrays indexed in
    loops can be kept in slow local memory; separate variables stay in registers."""

    def block(match):
        kind, body = match.group(1), match.group(2)
        if kind == "rows":
            return "".join(body.replace("@R", str(r)) for r in range(rows))
        out = []
        for q in range(rows // 4):
            b = body.replace("@Q", str(q))
            for k, letter in enumerate("ABCD"):
                b = b.replace(f"@{letter}", str(4 * q + k))
            out.append(b)
        return "".join(out)

    return re.sub(r"//#(rows|quads)\n(.*?)//#end\n", block, text, flags=re.S)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------- validation
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


# ------------------------------------------------------------------ bindings
@dataclass(frozen=True)
class StorageBinding:
    """One storage binding over a byte range of a graph buffer handle."""

    binding: int
    handle: GraphBufferHandle
    start: int
    size: int

    def resolve(self, frame):
        """``(buffer, offset, size)`` for :meth:`ComputeKernel.dispatch`."""
        return (frame.buffer(self.handle), self.start, self.size)


def binding_range(views, alignment: int) -> tuple:
    """``(start, size)`` of the aligned byte range covering every view."""
    start = min(v.byte_offset for v in views) // alignment * alignment
    end = max(v.byte_offset + max(v.byte_length, 4) for v in views)
    return start, max(4, ceil_div(end - start, 4) * 4)


def view_accessor(name: str, binding: int, view: GraphDataView, *, access: str, alignment: int,
                  vec4: bool = True) -> tuple:
    """WGSL accessors ``<name>_get4/get1`` (and ``set4/set1`` when writable)
    for one view, plus its :class:`StorageBinding`.

    Rows are read as vec4 words when the view starts on a 16-byte boundary of
    its bound range and that range is whole vec4 words; otherwise as scalars.
    """
    start, size = binding_range([view], alignment)
    offset = (view.byte_offset - start) // 4
    as_vec4 = vec4 and alignment % 16 == 0 and offset % 4 == 0 and size % 16 == 0
    kind = "vec4" if as_vec4 else "scalar"
    subs = dict(NAME=name, BINDING=binding, ACCESS=access, OFF=f"{offset}u")
    text = render(f"view_{kind}.wgsl", **subs)
    if access == "read_write":
        text += render(f"view_{kind}_write.wgsl", **subs)
    return text, StorageBinding(binding, view.handle, start, size)


def null_accessor(name: str) -> str:
    """Accessors for a role a kernel variant does not use (no binding)."""
    return render("view_none.wgsl", NAME=name)


def storage_alignment(device) -> int:
    return int(device.limits["min-storage-buffer-offset-alignment"])
