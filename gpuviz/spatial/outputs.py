"""The uint32 outputs the spatial builders write (grid ids and cell offsets,
BVH ids and nodes): the caller's view, checked, or a graph transient."""

from __future__ import annotations

import wgpu

from ..algorithms.validation import single_row

STORAGE = wgpu.BufferUsage.STORAGE


def output_view(owner: str, id: str, name: str, value, graph, rows: int):
    """A packed uint32 view of ``rows`` rows: ``value`` (checked to be one
    packed range of this graph holding ``rows`` rows) viewed as uint32, or,
    when ``value`` is None, a transient ``"{id}-{name}"`` (underscores
    written as hyphens)."""
    if value is None:
        handle = graph.create_transient_buffer(id=f"{id}-{name.replace('_', '-')}", byte_length=4 * rows,
                                               usage=STORAGE)
        return graph.create_data_view(handle, format="uint32", length=rows)
    view = single_row(owner, id, name, value, graph, rows=rows)
    return graph.create_data_view(view.handle, format="uint32", length=rows, byte_offset=view.byte_offset)
