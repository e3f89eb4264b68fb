"""DrawCommandBuffer: fixed indirect draw records that compute work can rewrite.

WebGPU's ``draw_indirect`` / ``draw_indexed_indirect`` read one fixed record
from a buffer; there is no indirect-count multi-draw. The CPU therefore owns
a bounded set of stable draw slots (pipeline, geometry, bindings, and one
record each) while GPU work decides how many instances each record draws.
A render pass or render bundle records ``dcb.draw(pass, i)`` once; later
writes to record ``i`` change what it draws without re-recording.
"""

from __future__ import annotations

import operator

import numpy as np
import wgpu

from ..graph.compat import owning_device
from ..errors import (DeviceMismatchError, GraphIndexError, GraphStateError, GraphTypeError,
                             GraphValidationError, UsageError, ViewRangeError)
from ..tables.data import GPUData

__all__ = ["DrawCommandBuffer", "DRAW_RECORD_FIELDS"]

BU = wgpu.BufferUsage

#: Record fields (one 4-byte word each) in buffer order, per command type.
#: ``base_vertex`` is a signed int32; every other field is uint32.
DRAW_RECORD_FIELDS = {
    "draw": ("vertex_count", "instance_count", "first_vertex", "first_instance"),
    "draw-indexed": ("index_count", "instance_count", "first_index", "base_vertex", "first_instance"),
}

_OWNED_USAGE = BU.STORAGE | BU.INDIRECT | BU.COPY_SRC | BU.COPY_DST
_REQUIRED_USAGE = {"INDIRECT": BU.INDIRECT, "STORAGE": BU.STORAGE}
_UINT32_MAX = 2**32 - 1


class DrawCommandBuffer:
    """A buffer of ``capacity`` indirect draw records of one layout.

    Parameters
    ----------
    device : wgpu.GPUDevice
    type : {"draw", "draw-indexed"}
        Record layout. ``"draw"``: vertex_count, instance_count,
        first_vertex, first_instance (16 bytes). ``"draw-indexed"``:
        index_count, instance_count, first_index, base_vertex (int32),
        first_instance (20 bytes).
    capacity : int
        Number of records (at least 1).
    buffer : wgpu.GPUBuffer, optional
        A borrowed buffer to use instead of creating one. It must belong to
        ``device``, hold ``capacity`` records and carry INDIRECT and STORAGE
        usage; records start at byte 0.
    label : str, optional
        ID used in errors and as the owned buffer's label; defaults to the
        borrowed buffer's label or ``"draw-commands"``.

    Attributes
    ----------
    buffer : wgpu.GPUBuffer
    type : str
    capacity : int
    record_byte_length : int
        16 for ``"draw"``, 20 for ``"draw-indexed"``.
    byte_length : int
        ``capacity * record_byte_length``: the bytes the records span.
    owned : bool
        True when this object created the buffer (STORAGE | INDIRECT |
        COPY_SRC | COPY_DST, zero-filled: every record draws nothing).
    label : str

    Raises
    ------
    GraphValidationError
        Unknown type or a capacity below 1.
    DeviceMismatchError
        The borrowed buffer belongs to another device.
    ViewRangeError
        The borrowed buffer is smaller than ``capacity`` records.
    UsageError
        The borrowed buffer lacks INDIRECT or STORAGE usage.

    Notes
    -----
    Records draws only into the render pass or bundle it is given; never
    sets pipelines, bind groups or vertex/index buffers, never submits and
    never reads back. ``write`` and ``write_records`` are CPU upload helpers
    (``queue.write_buffer``), not graph work. Record offsets are 4-byte
    aligned, not 256-byte: a compute shader that writes a count binds the
    whole buffer as ``array<u32>`` and writes word
    ``instance_count_byte_offset(i) // 4``. A non-zero first_instance draws
    nothing unless the device has ``indirect-first-instance``.
    """

    def __init__(self, device, *, type="draw", capacity, buffer=None, label=None):
        self.label = str(label or getattr(buffer, "label", "") or "draw-commands")
        name = f'DrawCommandBuffer "{self.label}"'
        if type not in DRAW_RECORD_FIELDS:
            raise GraphValidationError(
                f'{name} type must be "draw" or "draw-indexed" (got {type!r})'
            )
        try:
            capacity = operator.index(capacity)
        except TypeError:
            raise GraphValidationError(f"{name} capacity must be an integer (got {capacity!r})") from None
        if capacity < 1:
            raise GraphValidationError(f"{name} capacity must be at least 1 record (got {capacity})")
        self.device = device
        self.type = type
        self.capacity = capacity
        self.record_byte_length = 4 * len(DRAW_RECORD_FIELDS[type])
        self.byte_length = capacity * self.record_byte_length
        self._destroyed = False
        if buffer is None:
            self.owned = True
            self.buffer = device.create_buffer(label=self.label, size=self.byte_length, usage=_OWNED_USAGE)
            return
        self.owned = False
        if owning_device(buffer, device) is not device:
            raise DeviceMismatchError(f"{name} buffer belongs to another device than the one given")
        if buffer.size < self.byte_length:
            raise ViewRangeError(
                f"{name} buffer is smaller than its capacity (needs {self.byte_length} bytes for "
                f"{capacity} {type} records, got {buffer.size})"
            )
        missing = [flag for flag, bit in _REQUIRED_USAGE.items() if not int(buffer.usage) & bit]
        if missing:
            raise UsageError(
                f"{name} buffer lacks {' and '.join(missing)} usage (usage flags {int(buffer.usage)})"
            )
        self.buffer = buffer

    def __repr__(self):
        return (
            f'<DrawCommandBuffer "{self.label}" {self.type} x {self.capacity} '
            f"({self.byte_length} bytes, {'owned' if self.owned else 'borrowed'})>"
        )

    @property
    def fields(self) -> tuple:
        """Field names of one record, in buffer order."""
        return DRAW_RECORD_FIELDS[self.type]

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy`."""
        return self._destroyed

    # -- offsets ----------------------------------------------------------

    def record_byte_offset(self, index) -> int:
        """Byte offset of record ``index``; never reads the buffer.

        Raises :class:`~gpuviz.GraphIndexError` (an ``IndexError``) outside
        ``0..capacity-1`` and :class:`~gpuviz.GraphTypeError` (a
        ``TypeError``) for a non-integer index.
        """
        try:
            i = operator.index(index)
        except TypeError:
            raise GraphTypeError(
                f'DrawCommandBuffer "{self.label}" record index must be an integer (got {index!r})'
            ) from None
        if not 0 <= i < self.capacity:
            raise GraphIndexError(
                f'DrawCommandBuffer "{self.label}" record index {i} is out of range '
                f"(capacity {self.capacity})"
            )
        return i * self.record_byte_length

    def instance_count_byte_offset(self, index) -> int:
        """Byte offset of record ``index``'s instance_count word (record offset + 4)."""
        return self.record_byte_offset(index) + 4

    def get_instance_count_data(self, index) -> GPUData:
        """A borrowed ``GPUData`` (uint32, length 1) over record ``index``'s
        instance_count word, for compactions that publish a count.

        The returned data does not own the buffer: destroying it never frees
        the command buffer.
        """
        return GPUData(
            self.buffer, format="uint32", length=1,
            byte_offset=self.instance_count_byte_offset(index), owned=False,
        )

    # -- CPU uploads ------------------------------------------------------

    def write(self, index, *, vertex_count=None, index_count=None, instance_count=1,
              first_vertex=None, first_index=None, base_vertex=None, first_instance=0) -> None:
        """Upload one whole record with ``queue.write_buffer``.

        Defaults follow ``render_pass.draw``: instance_count 1, every offset
        0. ``"draw"`` records take vertex_count (required) and first_vertex;
        ``"draw-indexed"`` records take index_count (required), first_index
        and base_vertex (int32).

        Raises
        ------
        GraphIndexError
            ``index`` outside the capacity.
        GraphValidationError
            A field of the other layout, a missing count, a value outside
            uint32 (int32 for base_vertex), or a non-zero first_instance on
            a device without ``indirect-first-instance``.
        UsageError
            A borrowed buffer lacks COPY_DST.
        GraphStateError
            The command buffer was destroyed.

        Notes
        -----
        Queued like any write_buffer: ordered before the next submission,
        after work already submitted. Not recorded into any encoder.
        """
        offset = self.record_byte_offset(index)
        given = {
            "vertex_count": vertex_count, "index_count": index_count, "instance_count": instance_count,
            "first_vertex": first_vertex, "first_index": first_index, "base_vertex": base_vertex,
            "first_instance": first_instance,
        }
        wrong = [k for k, v in given.items() if v is not None and k not in self.fields]
        if wrong:
            raise GraphValidationError(
                f'DrawCommandBuffer "{self.label}" {self.type} records have no field '
                f"{', '.join(wrong)} (fields: {', '.join(self.fields)})"
            )
        count_field = self.fields[0]
        if given[count_field] is None:
            raise GraphValidationError(
                f'DrawCommandBuffer "{self.label}" write of record {index} needs {count_field}'
            )
        row = [0 if given[k] is None else given[k] for k in self.fields]
        self._upload(np.asarray([row], dtype=object), offset, first_record=operator.index(index))

    def write_records(self, records, *, first_record=0) -> None:
        """Upload whole records from an ``(n, fields)`` integer array.

        Parameters
        ----------
        records : array-like
            ``(n, 4)`` for ``"draw"``, ``(n, 5)`` for ``"draw-indexed"`` (a
            flat array of ``n * fields`` words is accepted too), in field
            order; n may be 0.
        first_record : int
            Index of the record that receives row 0.

        Raises
        ------
        GraphIndexError
            The rows run past the capacity.
        GraphValidationError
            Wrong shape, a non-integer dtype, a value outside uint32 (int32
            for base_vertex), or a non-zero first_instance on a device
            without ``indirect-first-instance``.
        UsageError
            A borrowed buffer lacks COPY_DST.
        GraphStateError
            The command buffer was destroyed.

        Notes
        -----
        One ``queue.write_buffer``; never submits or waits.
        """
        name = f'DrawCommandBuffer "{self.label}"'
        array = np.asarray(records)
        words = len(self.fields)
        if array.ndim == 1 and array.size % words == 0:
            array = array.reshape(-1, words)
        if array.ndim != 2 or array.shape[1] != words:
            raise GraphValidationError(
                f"{name} write_records needs shape (n, {words}) for {self.type} records "
                f"(got {array.shape})"
            )
        if array.size and array.dtype.kind not in "iuO":
            raise GraphValidationError(
                f"{name} write_records needs integer values (got dtype {array.dtype})"
            )
        if len(array) == 0:
            self._check_alive()
            return
        offset = self.record_byte_offset(first_record)  # GraphTypeError / GraphIndexError
        first = offset // self.record_byte_length
        self.record_byte_offset(first + len(array) - 1)  # GraphIndexError past the capacity
        self._upload(array, offset, first_record=first)

    def _upload(self, rows, byte_offset, *, first_record):
        """Validate ``rows`` (n x fields, integer or object dtype) and queue one write."""
        self._check_alive()
        name = f'DrawCommandBuffer "{self.label}"'
        if rows.dtype == object:
            for (r, column), value in np.ndenumerate(rows):
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                    raise GraphValidationError(
                        f"{name} record {first_record + r} {self.fields[column]} must be an "
                        f"integer (got {value!r})"
                    )
        for column, field in enumerate(self.fields):
            low, high = (-(2**31), 2**31 - 1) if field == "base_vertex" else (0, _UINT32_MAX)
            values = rows[:, column]
            bad = np.flatnonzero((values < low) | (values > high))
            if len(bad):
                raise GraphValidationError(
                    f"{name} record {first_record + int(bad[0])} {field} must be in "
                    f"{low}..{high} (got {values[bad[0]]})"
                )
            if field == "first_instance" and "indirect-first-instance" not in self.device.features:
                nonzero = np.flatnonzero(values != 0)
                if len(nonzero):
                    raise GraphValidationError(
                        f"{name} record {first_record + int(nonzero[0])} has first_instance "
                        f"{values[nonzero[0]]} but the device lacks indirect-first-instance "
                        f"(the draw would draw nothing)"
                    )
        if not int(self.buffer.usage) & BU.COPY_DST:
            raise UsageError(
                f"{name} buffer lacks COPY_DST usage, so records cannot be uploaded "
                f"(usage flags {int(self.buffer.usage)})"
            )
        # every value fits int64 now; base_vertex wraps to its two's-complement word
        data = (rows.astype(np.int64) & _UINT32_MAX).astype(np.uint32)
        self.device.queue.write_buffer(self.buffer, byte_offset, data)

    # -- recording --------------------------------------------------------

    def draw(self, render_pass, index) -> None:
        """Record record ``index``'s indirect draw into ``render_pass``.

        ``render_pass`` is a ``GPURenderPassEncoder`` or a
        ``GPURenderBundleEncoder``; the caller has set the pipeline, bind
        groups and vertex/index buffers. Records ``draw_indirect`` or
        ``draw_indexed_indirect`` at ``record_byte_offset(index)``; never
        submits. The bundle or pass reads the record when it executes, so
        later writes to the record take effect without re-recording.
        """
        offset = self.record_byte_offset(index)
        self._check_alive()
        if self.type == "draw":
            render_pass.draw_indirect(self.buffer, offset)
        else:
            render_pass.draw_indexed_indirect(self.buffer, offset)

    def destroy(self) -> None:
        """Destroy the buffer if it is owned (a borrowed one is left alone); idempotent.

        Afterwards ``write``, ``write_records`` and ``draw`` raise
        GraphStateError. Does not wait for queued work that uses the buffer.
        """
        if self._destroyed:
            return
        self._destroyed = True
        if self.owned:
            self.buffer.destroy()

    def _check_alive(self):
        if self._destroyed:
            raise GraphStateError(f'DrawCommandBuffer "{self.label}" was destroyed')
