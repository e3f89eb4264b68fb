"""ReadbackSlot: one acquired staging buffer of a :class:`GPUReadbackRing`.

Lifecycle of one slot (``ReadbackSlot.state``)::

    acquired --map_async()--> pending --(GPU)--> mapped --read()--> released
        \\                        \\                   \\
         cancel() -> released     cancel(): released; the buffer returns to
                                  the ring only after its map resolves

A lost device (``device.destroy()`` included) at any point moves the slot
to ``"failed"``: ``copy`` raises :class:`ReadbackMapError` at once,
``map_async`` keeps the failure for ``read``, which raises it, and
``cancel`` releases quietly. Mapped memory is never touched once the device
is lost (wgpu-native would abort the process).
"""

from __future__ import annotations

import wgpu

from ..errors import DeviceMismatchError, GraphStateError, UsageError, ViewRangeError
from .compat import map_for_read, owning_device, poll_device
from .readback_errors import ReadbackMapError, ReadbackTimeoutError
from .readback_staging import deadline_after, wait_settled

__all__ = ["ReadbackSlot"]


class ReadbackSlot:
    """One acquired staging buffer of a :class:`GPUReadbackRing`.

    Obtained from ``ring.acquire()`` / ``ring.try_acquire()``; a slot object
    is a one-use ticket: after ``read()`` or ``cancel()`` it is released and
    its buffer may serve a later ticket.

    Attributes
    ----------
    ring : GPUReadbackRing
    index : int
        Position of the staging buffer in the ring.
    id : str
        ``"{ring label}[{index}]"``, used in messages.
    buffer : wgpu.GPUBuffer
        The staging buffer (``MAP_READ | COPY_DST``), for copies ``copy``
        does not cover, e.g. ``copy_texture_to_buffer``. Valid only while
        the slot is held.
    state : str
        ``"acquired"``, ``"pending"``, ``"mapped"``, ``"failed"`` or
        ``"released"``.

    Notes
    -----
    A slot records into the caller's encoder and maps after the caller
    submitted; it never submits and never waits unless ``read(wait=True)``
    or an ``acquire`` asks it to.
    """

    def __init__(self, ring, stage):
        self.ring = ring
        self.index = stage.index
        self.id = f"{ring.label}[{stage.index}]"
        self._stage = stage
        self._pool = stage.pool
        self._state = "acquired"
        self._extent = 0  # bytes from 0 that copy() has written
        self._error = None

    def __repr__(self):
        return f'<ReadbackSlot "{self.id}" {self.state}>'

    @property
    def state(self) -> str:
        """``"acquired"``, ``"pending"``, ``"mapped"``, ``"failed"`` or ``"released"``
        (see the module docstring); reading it never polls the device."""
        if self._pool.destroyed and self._state != "released":
            return "released"
        return self._state

    @property
    def buffer(self):
        """The MAP_READ staging buffer this slot holds; GraphStateError once
        released. Do not destroy it: the ring owns it."""
        self._check_held()
        return self._stage.buffer

    @property
    def byte_length(self) -> int:
        """Bytes ``read()`` returns: the furthest byte ``copy`` wrote, or the
        whole slot if nothing was recorded through ``copy``."""
        return self._extent or self.ring.byte_length

    def _check_held(self, *allowed):
        if self._pool.destroyed:
            raise GraphStateError(f'ReadbackSlot "{self.id}" belongs to a destroyed ring')
        if self._state == "released":
            raise GraphStateError(f'ReadbackSlot "{self.id}" was already read or cancelled; acquire a new slot')
        if allowed and self._state not in allowed:
            raise GraphStateError(f'ReadbackSlot "{self.id}" is {self._state}, expected {" or ".join(allowed)}')

    def copy(self, encoder, source_buffer, *, source_offset=0, byte_length=None, destination_offset=0) -> None:
        """Record ``copy_buffer_to_buffer`` from ``source_buffer`` into this slot.

        Parameters
        ----------
        encoder : wgpu.GPUCommandEncoder
            The caller's encoder; not finished or submitted here.
        source_buffer : wgpu.GPUBuffer
            Needs ``COPY_SRC`` usage and the ring's device.
        source_offset, destination_offset : int
            Byte offsets, multiples of 4.
        byte_length : int, optional
            Bytes to copy, a multiple of 4; defaults to the rest of the
            source buffer. 0 records nothing.

        Notes
        -----
        Several copies may fill one slot (e.g. three count words from three
        buffers). Only records; never submits. Call ``map_async`` after the
        encoder's command buffer was submitted.

        Raises
        ------
        ViewRangeError
            Misaligned offsets or size, or a range outside either buffer.
        UsageError
            The source buffer lacks ``COPY_SRC``.
        DeviceMismatchError
            The source buffer belongs to another device.
        GraphStateError
            The slot is not in the ``acquired`` state.
        ReadbackMapError
            The device was lost; the slot is failed and the ring lost.
        """
        self._check_held("acquired")
        with self._pool.lock:
            lost = self._pool.device_lost()
            if lost is not None:
                self._fail(lost)
                raise ReadbackMapError(f'ReadbackSlot "{self.id}" cannot copy: {lost}') from lost
        source_size = int(source_buffer.size)
        numbers = {"source_offset": source_offset, "destination_offset": destination_offset}
        if byte_length is None and isinstance(source_offset, int):
            byte_length = source_size - source_offset
        numbers["byte_length"] = byte_length
        for name, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value % 4:
                raise ViewRangeError(
                    f'ReadbackSlot "{self.id}" copy {name} must be a non-negative multiple of 4 (got {value!r})')
        if owning_device(source_buffer, self.ring.device) is not self.ring.device:
            raise DeviceMismatchError(
                f'ReadbackSlot "{self.id}" copy source "{source_buffer.label}" belongs to another device than the ring')
        if not int(source_buffer.usage) & wgpu.BufferUsage.COPY_SRC:
            raise UsageError(f'ReadbackSlot "{self.id}" copy source "{source_buffer.label}" lacks COPY_SRC '
                             f"usage (usage flags {int(source_buffer.usage)})")
        if source_offset + byte_length > source_size:
            raise ViewRangeError(f'ReadbackSlot "{self.id}" copy reads past source "{source_buffer.label}" '
                                 f"(needs {source_offset + byte_length} bytes, got {source_size})")
        if destination_offset + byte_length > self.ring.byte_length:
            raise ViewRangeError(f'ReadbackSlot "{self.id}" copy writes past the slot '
                                 f"(needs {destination_offset + byte_length} bytes, got {self.ring.byte_length})")
        if byte_length == 0:
            return
        encoder.copy_buffer_to_buffer(source_buffer, source_offset, self._stage.buffer, destination_offset,
                                      byte_length)
        self._extent = max(self._extent, destination_offset + byte_length)

    def map_async(self) -> None:
        """Start mapping ``[0, byte_length)`` of the slot for reading; returns at once.

        Call after the command buffer holding this slot's copies was
        submitted. A failure to start the map (a lost device) is kept and
        raised by ``read()`` as :class:`ReadbackMapError`.
        """
        with self._pool.lock:
            self._check_held("acquired")
            lost = self._pool.device_lost()
            if lost is not None:
                self._fail(lost)
                return
            try:
                promise = map_for_read(self._stage.buffer, self.byte_length)
            except Exception as error:  # wgpu raises at once on a lost device
                self._fail(error)
                return
            self._pool.begin_map(self._stage, promise)
            self._state = "pending"

    @property
    def ready(self) -> bool:
        """True once ``read(wait=False)`` would return data (or raise a map
        failure). Non-blocking: polls the device once."""
        with self._pool.lock:
            self._check_held("pending", "mapped", "failed")
            if self._state == "pending":
                poll_device(self.ring.device)
                self._settle()
            return self._state != "pending"

    def read(self, *, wait=True, timeout=None):
        """Return a ``bytes`` copy of the mapped range, then unmap and release the slot.

        Parameters
        ----------
        wait : bool
            True waits (polling the device) until the map resolves; False
            returns None while it is still pending.
        timeout : float, optional
            With ``wait``, seconds to wait at most.

        Raises
        ------
        ReadbackMapError
            The map failed, or the device was lost at any point before the
            bytes were copied out (buffers destroyed, ``device.destroy()``);
            the slot is released and the ring is lost.
        ReadbackTimeoutError
            The map did not resolve within ``timeout``; the slot stays pending.
        GraphStateError
            ``map_async`` was not called, or the slot was already released.
        """
        deadline = deadline_after(timeout, f'ReadbackSlot "{self.id}" read')
        with self._pool.lock:
            pending = not self.ready
            promise = self._stage.promise
        if pending:  # wait outside the lock, so other threads can read or cancel meanwhile
            if not wait:
                return None
            if not wait_settled(self.ring.device, promise, deadline):
                raise ReadbackTimeoutError(f'ReadbackSlot "{self.id}" map did not resolve within {timeout} s')
        with self._pool.lock:
            self._check_held("pending", "mapped", "failed")
            self._settle()
            if self._state == "failed":
                error = self._error
                self._release()
                raise ReadbackMapError(f'ReadbackSlot "{self.id}" could not be mapped ({error})') from error
            error = self._pool.device_lost()  # checked first: read_mapped on a lost device aborts
            if error is None:
                data = bytes(self._stage.buffer.read_mapped(0, self.byte_length, copy=False))  # one copy
                error = self._pool.unmap(self._stage)
            self._release()
            if error is not None:
                raise ReadbackMapError(f'ReadbackSlot "{self.id}" could not be read ({error})') from error
            return data

    def cancel(self) -> None:
        """Release the slot without reading; idempotent.

        A mapped buffer is unmapped now; a pending one returns to the ring
        only after its map resolves. Cancel an acquired slot only if the
        encoder with its copies is discarded or already submitted.
        """
        with self._pool.lock:
            if self._pool.destroyed or self._state == "released":
                return
            self._settle()
            if self._state == "mapped":
                self._pool.unmap(self._stage)  # a lost device leaves it mapped; the ring is lost then
            self._release()

    def _settle(self):
        """Move a pending slot to mapped/failed once its promise settled."""
        if self._state != "pending" or not self._stage.settled:
            return
        error = self._pool.settle(self._stage)
        if error is None:
            self._state = "mapped"
        else:
            self._fail(error)

    def _fail(self, error):
        self._state = "failed"
        self._error = error
        self._pool.mark_lost(error)

    def _release(self):
        self._pool.release(self._stage, pending=self._state == "pending")
        self._state = "released"
