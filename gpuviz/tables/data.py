"""GPUData: one contiguous, typed range of rows inside a ``wgpu.GPUBuffer``.

The smallest unit of the tables layer. A GPUData names bytes that already
live on the GPU (or uploads them once, in :meth:`GPUData.from_numpy`); it
never records commands, submits work after construction, or reads back.
Readback is explicit: :func:`gpuviz.read_array`.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..formats import GPUVectorFormat, span_byte_length, vector_format
from ..graph.checks import check_buffer_usage, check_count, check_device
from ..graph.compat import is_destroyed, owning_device
from ..errors import GraphTypeError, GraphValidationError, ViewRangeError

__all__ = ["GPUData", "DEFAULT_USAGE", "format_for_array", "padded_size"]

#: Usage of buffers created by :meth:`GPUData.from_numpy` and :meth:`GPUData.allocate`.
DEFAULT_USAGE = (
    wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.VERTEX | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
)


def padded_size(byte_length: int) -> int:
    """Bytes to allocate for ``byte_length`` bytes: a multiple of 4, at least 4."""
    return max(4, (byte_length + 3) // 4 * 4)


def format_for_array(array: np.ndarray, *, what: str = "GPUData.from_numpy") -> GPUVectorFormat:
    """The :class:`GPUVectorFormat` storing ``array`` row by row.

    ``(n,)`` gives a one-component format, ``(n, k)`` a ``k``-component one
    (``(n, 1)`` counts as one component). Raises GraphValidationError (a
    ValueError) naming the dtype and shape when no format fits; never casts.
    """
    if array.ndim == 1:
        components = 1
    elif array.ndim == 2 and 1 <= array.shape[1] <= 4:
        components = array.shape[1]
    else:
        raise GraphValidationError(
            f"{what} cannot store an array of shape {array.shape} (dtype {array.dtype}): "
            f"expected (n,) or (n, k) with k in 1..4"
        )
    try:
        return GPUVectorFormat.from_numpy(array.dtype.newbyteorder("="), components=components)
    except GraphValidationError:
        hint = ""
        if array.dtype.kind in "iuf" and array.dtype.itemsize == 8:
            hint = "; cast 64-bit values first, e.g. array.astype(np.float32) or np.int32"
        elif array.dtype.kind == "b":
            hint = "; cast booleans first, e.g. array.astype(np.uint32)"
        elif components == 3:
            hint = "; WebGPU has no 3-component 8/16-bit formats, pad to 4 components"
        raise GraphValidationError(
            f"{what} has no GPU format for dtype {array.dtype} with shape {array.shape} "
            f"({components} components){hint}"
        ) from None


def _checked_size(device, name: str, byte_length: int) -> int:
    """The padded allocation size, refused past the device's buffer limit."""
    size = padded_size(byte_length)
    limit = device.limits["max-buffer-size"]
    if size > limit:
        raise GraphValidationError(f"{name} needs {size} bytes, over the device limit max-buffer-size {limit}")
    return size


class GPUData:
    """One contiguous typed range of a ``wgpu.GPUBuffer``: ``length`` rows of
    ``format``, the first at ``byte_offset``, consecutive rows ``byte_stride``
    bytes apart.

    Parameters
    ----------
    buffer : wgpu.GPUBuffer
        The buffer holding the rows.
    format : GPUVectorFormat or str
        Row format, as an object or a name such as ``"float32x2"``.
    length : int
        Number of rows; 0 is valid.
    byte_offset : int
        Byte offset of the first row inside ``buffer``.
    byte_stride : int, optional
        Bytes from one row to the next; defaults to ``format.byte_size`` and
        must not be smaller.
    owned : bool
        True when this object owns ``buffer`` and :meth:`destroy` may free it.

    Raises
    ------
    GraphTypeError
        ``buffer`` is not a ``wgpu.GPUBuffer``, or a length, offset or stride
        is not an integer (numpy integers are; ``bool`` and floats are not).
    ViewRangeError
        Negative length or offset, a stride below the row size, or a range
        that ends past ``buffer.size``.

    Notes
    -----
    Checks only what the tables layer needs. Does not check alignment
    (storage bindings need 256-byte offsets, vertex buffers 4-byte strides;
    the graph validates the uses it declares) or usage flags. Never copies,
    submits or reads back.
    """

    def __init__(self, buffer, *, format, length, byte_offset=0, byte_stride=None, owned=False):
        if not isinstance(buffer, wgpu.GPUBuffer):
            raise GraphTypeError(f"GPUData needs a wgpu.GPUBuffer (got {type(buffer).__name__})")
        self.buffer = buffer
        self.format = vector_format(format)
        name = f'GPUData "{self.label}"'
        self.length = check_count(name, "length", length)
        self.byte_offset = check_count(name, "byte_offset", byte_offset)
        self.byte_stride = self.format.byte_size if byte_stride is None else check_count(name, "byte_stride",
                                                                                          byte_stride)
        self.owned = bool(owned)
        self._destroyed = False
        if self.length < 0:
            raise ViewRangeError(f"{name} has a negative length ({self.length} rows)")
        if self.byte_offset < 0:
            raise ViewRangeError(f"{name} has a negative byte_offset ({self.byte_offset} bytes)")
        if self.byte_stride < self.row_byte_length:
            raise ViewRangeError(
                f"{name} byte_stride is smaller than one {self.format.name} row "
                f"(needs at least {self.row_byte_length} bytes, got {self.byte_stride})"
            )
        end = self.byte_offset + self.byte_length
        if end > buffer.size:
            raise ViewRangeError(
                f"{name} ends past its buffer (needs bytes {self.byte_offset}..{end}, "
                f"buffer has {buffer.size} bytes; {self.length} rows of {self.format.name}, "
                f"stride {self.byte_stride})"
            )

    # -- construction helpers ------------------------------------------------

    @classmethod
    def from_numpy(cls, device, array, usage=None, *, label=None) -> "GPUData":
        """Upload ``array`` into a new owned buffer.

        Parameters
        ----------
        device : wgpu.GPUDevice
        array : array-like
            ``(n,)`` or ``(n, k)`` (k in 1..4) of uint8/16/32, int8/16/32,
            float16 or float32; ``(n, 2)`` float32 becomes ``float32x2``.
        usage : wgpu.BufferUsage, optional
            Defaults to STORAGE | VERTEX | COPY_SRC | COPY_DST; COPY_DST is
            always added because the upload uses ``queue.write_buffer``.
        label : str, optional
            Buffer label, used in error messages.

        Notes
        -----
        Never casts: bool, 64-bit and 3-component 8/16-bit arrays raise a
        GraphValidationError (a ValueError) naming dtype and shape; a numpy
        masked array is refused (the GPU copy would lose its mask: pass
        ``array.filled(value)`` or the mask as its own column). Usage bits
        outside wgpu.BufferUsage raise UsageError, and a size over the
        device's ``max-buffer-size`` a GraphValidationError naming the limit.
        The buffer size is rounded up to a multiple of 4 (at least 4 bytes);
        padding is zero. The upload is queued, not waited for.
        """
        check_device("GPUData.from_numpy", device)
        if isinstance(array, np.ma.MaskedArray):
            raise GraphValidationError(
                f"GPUData.from_numpy cannot upload a masked array (shape {array.shape}, "
                f"{int(np.ma.count_masked(array))} masked): the mask would be lost; pass array.filled(value) "
                "and upload the mask as its own column")
        array = np.asarray(array)
        fmt = format_for_array(array)
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))
        raw = data.view(np.uint8).reshape(-1)
        name = f'GPUData "{label or f"gpuviz-{fmt.name}"}"'
        usage = check_buffer_usage(name, (DEFAULT_USAGE if usage is None else usage) | wgpu.BufferUsage.COPY_DST)
        size = _checked_size(device, name, raw.nbytes)
        buffer = device.create_buffer(label=label or f"gpuviz-{fmt.name}", size=size, usage=usage)
        if raw.nbytes:
            padded = np.zeros(size, np.uint8)
            padded[: raw.nbytes] = raw
            device.queue.write_buffer(buffer, 0, padded)
        return cls(buffer, format=fmt, length=len(data), owned=True)

    @classmethod
    def allocate(cls, device, *, format, length, usage=None, label=None) -> "GPUData":
        """A new owned, zero-filled buffer holding ``length`` packed rows of ``format``.

        Uses ``usage`` (default STORAGE | VERTEX | COPY_SRC | COPY_DST) as
        given; bits outside wgpu.BufferUsage raise UsageError, a size over the
        device's ``max-buffer-size`` a GraphValidationError naming the limit.
        Relies on WebGPU zero-initializing new buffers; writes nothing.
        """
        check_device("GPUData.allocate", device)
        fmt = vector_format(format)
        name = f'GPUData "{label or fmt.name}"'
        length = check_count(name, "length", length)
        if length < 0:
            raise ViewRangeError(f"{name} has a negative length ({length} rows)")
        usage = check_buffer_usage(name, DEFAULT_USAGE if usage is None else usage)
        size = _checked_size(device, name, length * fmt.byte_size)
        buffer = device.create_buffer(label=label or f"gpuviz-{fmt.name}", size=size, usage=usage)
        return cls(buffer, format=fmt, length=length, owned=True)

    # -- derived facts -------------------------------------------------------

    @property
    def label(self) -> str:
        """The buffer's label (used to name this data in errors)."""
        return getattr(self.buffer, "label", "") or ""

    @property
    def device(self):
        """The ``wgpu.GPUDevice`` that owns the buffer."""
        return owning_device(self.buffer, None)

    @property
    def row_byte_length(self) -> int:
        """Bytes of one row's value (``format.byte_size``), without stride padding."""
        return self.format.byte_size

    @property
    def byte_length(self) -> int:
        """Bytes spanned from the first row's start to the last row's end (0 when empty)."""
        return span_byte_length(self.length, self.byte_stride, self.row_byte_length)

    @property
    def is_packed(self) -> bool:
        """True when rows are back to back (stride equals the row size)."""
        return self.byte_stride == self.row_byte_length

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy` was called, or once the buffer itself was
        destroyed (by another GPUData over it, or directly)."""
        return self._destroyed or is_destroyed(self.buffer)

    def destroy(self) -> None:
        """Destroy the buffer if this data owns it; borrowed buffers are left alone.

        Idempotent. Does not wait for queued work that uses the buffer.
        """
        if self._destroyed:
            return
        self._destroyed = True
        if self.owned:
            self.buffer.destroy()

    def __repr__(self) -> str:
        return (
            f"GPUData(label={self.label!r}, format={self.format.name}, length={self.length}, "
            f"byte_offset={self.byte_offset}, byte_stride={self.byte_stride}, owned={self.owned})"
        )
