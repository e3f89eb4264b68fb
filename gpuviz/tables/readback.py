"""Explicit, synchronous readback of GPUData and GPUVector to numpy.

The only place in the tables layer that submits work and maps buffers.
Meant for tests, inspectors and adapters, not for per-frame paths: each call
waits for the GPU.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph.checks import check_device
from ..errors import DeviceMismatchError, GraphStateError, GraphTypeError, UsageError, ViewRangeError
from .data import GPUData
from .vector import GPUVector

__all__ = ["read_array", "read_many"]


def read_array(device, data_or_vector) -> np.ndarray:
    """Copy a GPUData or GPUVector back to a new numpy array, synchronously.

    Parameters
    ----------
    device : wgpu.GPUDevice
        The device that owns the buffers.
    data_or_vector : GPUData or GPUVector
        What to read; a vector's chunks are concatenated in order.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)`` for one-component formats, ``(n, components)``
        otherwise, with the format's scalar dtype. Normalized formats
        (``unorm8x4``...) come back as their raw integer storage.

    Raises
    ------
    GraphTypeError
        ``device`` is not a ``wgpu.GPUDevice``, or ``data_or_vector`` is
        neither GPUData nor GPUVector.
    DeviceMismatchError
        The data lives on another device.
    UsageError
        A buffer lacks COPY_SRC usage.
    GraphStateError
        The data or its buffer was destroyed (also by another GPUData over the
        same buffer): nothing is submitted.

    Notes
    -----
    Respects ``byte_offset`` and ``byte_stride``: copies the 4-byte aligned
    range that contains the rows into one MAP_READ staging buffer (one
    submit for all chunks) and slices on the CPU. Zero-length data returns an
    empty array without touching the GPU. Does not convert normalized values
    to floats and does not keep the staging buffer between calls.
    """
    if isinstance(data_or_vector, GPUData):
        return read_many(device, [data_or_vector])[0]
    if isinstance(data_or_vector, GPUVector):
        fmt = data_or_vector.format
        parts = read_many(device, data_or_vector.chunks)
        if not parts:
            return np.empty((0,) if fmt.components == 1 else (0, fmt.components), fmt.dtype)
        return np.concatenate(parts)
    raise GraphTypeError(f"read_array expects GPUData or GPUVector (got {type(data_or_vector).__name__})")


def read_many(device, datas) -> list:
    """Read several GPUData with one submit; returns one array per input, in order.

    Same contract as :func:`read_array` for each element.
    """
    check_device("read_array", device)
    datas = list(datas)
    copies = []  # (buffer, source offset, staging offset, size)
    leads = []  # byte offset of each data's first row inside the staging bytes, or None
    total = 0
    for data in datas:
        _check_readable(device, data)
        if data.length == 0:
            leads.append(None)
            continue
        start = data.byte_offset // 4 * 4
        end = (data.byte_offset + data.byte_length + 3) // 4 * 4
        if end > data.buffer.size:
            raise ViewRangeError(
                f'read_array cannot read GPUData "{data.label}": its rows end in the partial last '
                f"word of a buffer whose size is not a multiple of 4 (rows end at byte "
                f"{data.byte_offset + data.byte_length}, buffer has {data.buffer.size} bytes)"
            )
        copies.append((data.buffer, start, total, end - start))
        leads.append(total + data.byte_offset - start)
        total += end - start
    raw = _copy_to_host(device, copies, total) if copies else np.empty(0, np.uint8)
    return [_decode(raw, lead, data) for data, lead in zip(datas, leads)]


def _check_readable(device, data) -> None:
    if not isinstance(data, GPUData):
        raise GraphTypeError(f"read_array expects GPUData chunks (got {type(data).__name__})")
    if data.destroyed:  # a submit copying from a destroyed buffer aborts the process
        raise GraphStateError(f'read_array cannot read GPUData "{data.label}": it or its buffer was destroyed')
    if data.device is not device:
        raise DeviceMismatchError(f'read_array: GPUData "{data.label}" belongs to another device')
    if data.length and not data.buffer.usage & wgpu.BufferUsage.COPY_SRC:
        raise UsageError(
            f'read_array cannot read GPUData "{data.label}": its buffer lacks COPY_SRC usage '
            f"(usage flags {int(data.buffer.usage)})"
        )


def _copy_to_host(device, copies, total) -> np.ndarray:
    staging = device.create_buffer(
        label="gpuviz-readback", size=total, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
    )
    try:
        encoder = device.create_command_encoder(label="gpuviz-readback")
        for buffer, src, dst, size in copies:
            encoder.copy_buffer_to_buffer(buffer, src, staging, dst, size)
        device.queue.submit([encoder.finish()])
        staging.map_sync(wgpu.MapMode.READ)
        try:
            return np.frombuffer(staging.read_mapped(), np.uint8).copy()
        finally:
            staging.unmap()
    finally:
        staging.destroy()


def _decode(raw: np.ndarray, lead, data: GPUData) -> np.ndarray:
    fmt = data.format
    shape = (data.length,) if fmt.components == 1 else (data.length, fmt.components)
    if lead is None:
        return np.empty(shape, fmt.dtype)
    span = raw[lead : lead + data.byte_length]
    if not data.is_packed:
        rows = np.zeros(data.length * data.byte_stride, np.uint8)
        rows[: span.size] = span
        span = np.ascontiguousarray(rows.reshape(data.length, data.byte_stride)[:, : data.row_byte_length])
    return span.view(fmt.dtype).reshape(shape).copy()
