"""How algorithm kernels bind packed views: the Python side of
``shaders/views.wgsl``.

A view is bound through the offset-aligned byte range that contains it. The
accessor layout (vec4 words or scalars) is structural and goes into the
shader text; the view's element offset inside its bound range goes into the
kernel's uniform, so chunks that differ only in where they start share one
pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..graph.resources import GraphBufferHandle, GraphDataView

__all__ = ["StorageBinding", "ViewBinding", "binding_range", "view_binding", "storage_alignment", "uniform_slot"]


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


@dataclass(frozen=True)
class ViewBinding:
    """A view as one kernel binds it.

    Attributes
    ----------
    layout : {"vec4", "scalar", "vec4-start", "scalar-start"}
        The accessor layout of ``views.view`` (a template value); "-start"
        when the view begins its bound range (offset 0, folded into the code).
    offset : int
        The view's element offset inside its bound range (a uniform value).
    storage : StorageBinding
    """

    layout: str
    offset: int
    storage: StorageBinding


def binding_range(views, alignment: int) -> tuple:
    """``(start, size)`` of the aligned byte range covering every view."""
    start = min(v.byte_offset for v in views) // alignment * alignment
    end = max(v.byte_offset + max(v.byte_length, 4) for v in views)
    return start, max(4, -(-(end - start) // 4) * 4)


def view_binding(binding: int, view: GraphDataView, *, alignment: int, vec4: bool = True) -> ViewBinding:
    """How ``view`` is bound at ``binding``.

    Rows are read as vec4 words when the view starts on a 16-byte boundary of
    its bound range and that range is whole vec4 words (and ``vec4`` allows
    it); otherwise as scalars. A view at the start of its range gets a
    "-start" layout (its offset folded to 0).
    """
    start, size = binding_range([view], alignment)
    offset = (view.byte_offset - start) // 4
    as_vec4 = vec4 and alignment % 16 == 0 and offset % 4 == 0 and size % 16 == 0
    layout = ("vec4" if as_vec4 else "scalar") + ("-start" if offset == 0 else "")
    return ViewBinding(layout, offset, StorageBinding(binding, view.handle, start, size))


def storage_alignment(device) -> int:
    """The device's storage-buffer offset alignment in bytes."""
    return int(device.limits["min-storage-buffer-offset-alignment"])


def uniform_slot(device, nbytes: int) -> int:
    """Bytes per dispatch slot of a per-dispatch uniform table: ``nbytes``
    rounded up to the device's uniform-buffer offset alignment."""
    align = int(device.limits["min-uniform-buffer-offset-alignment"])
    return -(-nbytes // align) * align
