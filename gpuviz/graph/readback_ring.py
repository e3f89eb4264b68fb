"""GPUReadbackRing: reusable staging buffers for asynchronous readback.

A ring owns ``slot_count`` small ``MAP_READ | COPY_DST`` buffers. A caller
acquires a slot, records copies into it, submits, starts the map and reads
the bytes later (possibly out of order), which hands the slot back. A slot
whose buffer is pending or mapped is never handed out again until that map
has resolved and been unmapped, so frames can overlap rendering and readback
without serializing on one mapped buffer.

Lifecycle of one slot (``ReadbackSlot.state``)::

    acquired --map_async()--> pending --(GPU)--> mapped --read()--> released
        \\                        \\                   \\
         cancel() -> released     cancel(): released; the buffer returns to
                                  the ring only after its map resolves

wgpu-py 0.32 notes that shaped this module:

- ``buffer.map_async`` returns a ``GPUPromise``; the map callback fires on
  wgpu-py's per-device poll thread, but the promise only *finalizes*
  (``buffer.map_state`` becomes ``"mapped"``) when something resolves it:
  ``sync_wait()`` or an event loop. Without a running loop
  ``buffer.map_state`` stays ``"pending"`` until then, so readiness here is
  read from the promise, not from ``map_state``.
- ``device.destroy()`` stops the poll thread; pending maps then settle only
  when the device is polled again, which every waiting path here does.
- ``map_async(READ)`` first submits an empty command buffer, and on Mesa's
  lavapipe a submit blocks until earlier GPU work has finished; slots
  therefore map with wgpu-py's internal ``"READ_NOSYNC"`` mode so that
  ``map_async`` returns at once.
- A rejected map leaves wgpu-py's ``map_state`` at ``"pending"`` forever, so
  that buffer can never be mapped again; a map failure (device loss, or a
  destroyed ring) therefore marks the whole ring lost.

This module imports nothing from gpuviz except the error family, because
the compiled command graph uses it to read timestamp results.
"""

from __future__ import annotations

import threading
import time

import wgpu

from .errors import (
    DeviceMismatchError,
    GraphError,
    GraphStateError,
    GraphValidationError,
    UsageError,
    ViewRangeError,
)

__all__ = [
    "GPUReadbackRing",
    "ReadbackSlot",
    "ReadbackTimeoutError",
    "ReadbackRingExhaustedError",
    "ReadbackMapError",
]

_STAGING_USAGE = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST


class ReadbackTimeoutError(GraphError, TimeoutError):
    """A readback wait (``acquire`` or ``read``) ran past its timeout."""


class ReadbackRingExhaustedError(GraphStateError):
    """Every slot waits on the caller (recording, or submitted but unread),
    so waiting for a free slot would never end."""


class ReadbackMapError(GraphError):
    """Mapping a staging buffer failed: the device was lost or the ring's
    buffers were destroyed while a map was pending."""


def _poll(device) -> None:
    # One non-blocking poll so completed maps fire their callbacks even when
    # wgpu-py's poll thread is stopped (after device.destroy()).
    poll = getattr(device, "_poll", None)
    if poll is not None:
        poll(False)


# wgpu-py's map_async(READ) first submits an empty command buffer (a
# workaround for data written through a mapping, gfx-rs/wgpu-native#305). On
# lavapipe a submit blocks until earlier work finishes, so that hidden submit
# would make map_async wait for the GPU. Slots are only written by GPU copies
# the caller submitted, so the ring maps with wgpu-py's own "READ_NOSYNC"
# (what its queue.read_buffer uses), falling back to READ if it disappears.
_read_mode = "READ_NOSYNC"


def _map_for_read(buffer, byte_length):
    global _read_mode
    try:
        return buffer.map_async(_read_mode, 0, byte_length)
    except ValueError as error:
        if _read_mode == "READ" or "flag" not in str(error):
            raise
        _read_mode = "READ"
        return buffer.map_async(_read_mode, 0, byte_length)


def _settled(promise) -> bool:
    # GPUPromise states: "pending", "pending-fulfilled", "pending-rejected",
    # "fulfilled", "rejected". Anything but "pending" has its outcome. wgpu-py
    # 0.32 has no public accessor for this; the version is pinned below 0.33.
    return promise._state != "pending"


def _wait_settled(device, promise, deadline) -> bool:
    """Poll until ``promise`` has settled; False if ``deadline`` passed first."""
    delay = 0.0005
    while True:
        _poll(device)
        if _settled(promise):
            return True
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            delay = min(delay, remaining)
        event = getattr(promise, "_thread_event", None)
        if event is not None:
            event.wait(delay)  # wakes as soon as the map callback fires
        else:
            time.sleep(delay)
        delay = min(delay * 2, 0.01)


class _Stage:
    """One staging buffer and what currently holds it (internal)."""

    __slots__ = ("index", "buffer", "slot", "promise")

    def __init__(self, index, buffer):
        self.index = index
        self.buffer = buffer
        self.slot = None  # the ReadbackSlot holding it, None when free or orphaned
        self.promise = None  # map promise while a map is pending or unconsumed

    @property
    def free(self) -> bool:
        return self.slot is None and self.promise is None


class GPUReadbackRing:
    """A fixed ring of reusable staging buffers for asynchronous readback.

    Parameters
    ----------
    device : wgpu.GPUDevice
        The device whose buffers will be copied.
    byte_length : int
        Bytes per slot; rounded up to a multiple of 4.
    slot_count : int
        Number of staging buffers (default 3: one being written, one in
        flight, one being read).
    label : str
        The ring's ID, used in buffer labels and error messages.

    Attributes
    ----------
    device : wgpu.GPUDevice
    label : str
    slot_count : int
    byte_length : int
        Bytes per slot after rounding.
    free_count : int
        Slots that ``try_acquire`` could hand out now.
    in_flight_count : int
        Slots whose map is pending, including cancelled ones whose buffer
        returns to the ring when that map resolves.

    Notes
    -----
    The ring owns its staging buffers and nothing else. It records copies
    only into the caller's encoder and never creates, finishes or submits
    command buffers. It never waits for a mapped slot to be read: a slot is
    freed by ``ReadbackSlot.read`` or ``cancel``, or (for a slot cancelled
    while its map was pending) when that map resolves. A map failure (device
    loss) marks the ring lost; later acquisitions raise
    :class:`ReadbackMapError`. Thread-safe: another thread may read or cancel
    slots while ``acquire`` waits.
    """

    def __init__(self, device, *, byte_length, slot_count=3, label="readback-ring"):
        self.label = str(label)
        if isinstance(byte_length, bool) or not isinstance(byte_length, int) or byte_length <= 0:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" byte_length must be a positive integer '
                f"(got {byte_length!r})"
            )
        if isinstance(slot_count, bool) or not isinstance(slot_count, int) or slot_count < 1:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" slot_count must be an integer >= 1 '
                f"(got {slot_count!r})"
            )
        self.device = device
        self.byte_length = (byte_length + 3) & ~3
        self.slot_count = slot_count
        self._lock = threading.RLock()
        self._released = threading.Condition(self._lock)
        self._stages = [
            _Stage(i, device.create_buffer(label=f"{self.label}[{i}]", size=self.byte_length,
                                           usage=_STAGING_USAGE))
            for i in range(slot_count)
        ]
        self._in_flight = []  # stages with a pending map, oldest first
        self._destroyed = False
        self._lost = None  # the first map failure, once the ring is lost

    def __repr__(self):
        return (
            f'<GPUReadbackRing "{self.label}" {self.slot_count} x {self.byte_length} bytes, '
            f"{self.free_count} free, {self.in_flight_count} in flight>"
        )

    @property
    def free_count(self) -> int:
        with self._lock:
            if self._destroyed:
                return 0
            self._collect()
            return sum(stage.free for stage in self._stages)

    @property
    def in_flight_count(self) -> int:
        with self._lock:
            return sum(not _settled(stage.promise) for stage in self._in_flight)

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy`."""
        return self._destroyed

    # -- acquisition ------------------------------------------------------

    def try_acquire(self):
        """Return a free :class:`ReadbackSlot`, or None when every slot is in use.

        Never blocks and never waits on the GPU; polls the device once so
        that cancelled slots whose maps have resolved come back.

        Raises
        ------
        GraphStateError
            The ring was destroyed.
        ReadbackMapError
            The ring is lost (an earlier map failed).
        """
        with self._lock:
            self._check_usable()
            if self._in_flight:
                _poll(self.device)
            self._collect()
            return self._take_free()

    def acquire(self, timeout=None):
        """Return a free :class:`ReadbackSlot`, waiting until one is free.

        A slot frees itself only if it was cancelled while its map was
        pending; acquire waits for the oldest such map by polling the
        device. Every other busy slot needs a ``read()`` or ``cancel()``:
        with a ``timeout`` acquire waits that long for another thread to
        make one; without one it raises at once rather than block forever.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most; None waits only while a wait can end.

        Raises
        ------
        ReadbackRingExhaustedError
            Every slot is acquired and not yet mapped (the caller holds all
            of them un-submitted), or, without a timeout, no slot can become
            free without a call from the caller.
        ReadbackTimeoutError
            No slot became free within ``timeout`` seconds.
        GraphStateError
            The ring was destroyed.
        ReadbackMapError
            The ring is lost (an earlier map failed).
        """
        deadline = None if timeout is None else time.monotonic() + max(0.0, float(timeout))
        while True:
            with self._lock:
                self._check_usable()
                if self._in_flight:
                    _poll(self.device)
                self._collect()
                slot = self._take_free()
                if slot is not None:
                    return slot
                orphans = [s for s in self._in_flight if s.slot is None]
                states = [s.slot.state for s in self._stages if s.slot is not None]
                recording = states.count("acquired")
                if not orphans and (recording == self.slot_count or timeout is None):
                    raise ReadbackRingExhaustedError(
                        f'GPUReadbackRing "{self.label}" has no slot that can become free '
                        f"without a read() or cancel() ({recording} acquired and not mapped, "
                        f'{states.count("pending")} pending, {states.count("mapped")} mapped '
                        f"and unread, of {self.slot_count})"
                    )
            if deadline is not None and time.monotonic() >= deadline:
                raise ReadbackTimeoutError(
                    f'GPUReadbackRing "{self.label}" had no free slot within {timeout} s '
                    f"({self.slot_count} slots, {self.in_flight_count} in flight)"
                )
            if orphans:
                _wait_settled(self.device, orphans[0].promise, deadline)
            else:
                with self._released:
                    remaining = deadline - time.monotonic()
                    if remaining > 0:
                        self._released.wait(min(remaining, 0.01))

    def cancel(self, slot) -> None:
        """Return ``slot`` without reading it; same as ``slot.cancel()``."""
        if not isinstance(slot, ReadbackSlot) or slot.ring is not self:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" cannot cancel {slot!r}: not one of its slots'
            )
        slot.cancel()

    def destroy(self) -> None:
        """Destroy the staging buffers; idempotent.

        Held slots become unusable (their methods raise GraphStateError;
        ``cancel`` is a no-op). Maps still pending are aborted by the driver.
        Does not wait for the GPU.
        """
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            for stage in self._stages:
                buffer = stage.buffer
                if buffer.map_state == "mapped":
                    try:
                        buffer.unmap()
                    except Exception:  # a lost device may refuse; destroy anyway
                        pass
                buffer.destroy()
            self._in_flight.clear()
            self._released.notify_all()

    # -- internals --------------------------------------------------------

    def _check_usable(self):
        if self._destroyed:
            raise GraphStateError(f'GPUReadbackRing "{self.label}" was destroyed')
        if self._lost is not None:
            raise ReadbackMapError(
                f'GPUReadbackRing "{self.label}" is lost: a staging buffer failed to map '
                f"({self._lost})"
            ) from self._lost

    def _take_free(self):
        for stage in self._stages:
            if stage.free:
                slot = ReadbackSlot(self, stage)
                stage.slot = slot
                return slot
        return None

    def _collect(self):
        """Hand back cancelled stages whose maps have settled."""
        for stage in list(self._in_flight):
            if stage.slot is None and _settled(stage.promise):
                self._in_flight.remove(stage)
                error = self._finish_map(stage)
                if error is None and stage.buffer.map_state == "mapped":
                    stage.buffer.unmap()
                stage.promise = None
                self._released.notify_all()

    def _finish_map(self, stage):
        """Finalize a settled map; return its error (and mark the ring lost) or None."""
        try:
            stage.promise.sync_wait()  # settled: does not block, runs wgpu-py's handler
        except Exception as error:
            if self._lost is None and not self._destroyed:
                self._lost = error
            return error
        return None


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
        self._state = "acquired"
        self._extent = 0  # bytes from 0 that copy() has written
        self._error = None

    def __repr__(self):
        return f'<ReadbackSlot "{self.id}" {self.state}>'

    @property
    def state(self) -> str:
        if self.ring._destroyed and self._state != "released":
            return "released"
        return self._state

    @property
    def buffer(self):
        self._check_held()
        return self._stage.buffer

    @property
    def byte_length(self) -> int:
        """Bytes ``read()`` returns: the furthest byte ``copy`` wrote, or the
        whole slot if nothing was recorded through ``copy``."""
        return self._extent or self.ring.byte_length

    def _check_held(self, *allowed):
        if self.ring._destroyed:
            raise GraphStateError(f'ReadbackSlot "{self.id}" belongs to a destroyed ring')
        if self._state == "released":
            raise GraphStateError(
                f'ReadbackSlot "{self.id}" was already read or cancelled; acquire a new slot'
            )
        if allowed and self._state not in allowed:
            raise GraphStateError(
                f'ReadbackSlot "{self.id}" is {self._state}, expected {" or ".join(allowed)}'
            )

    def copy(self, encoder, source_buffer, *, source_offset=0, byte_length=None,
             destination_offset=0) -> None:
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
        """
        self._check_held("acquired")
        source_size = int(source_buffer.size)
        numbers = {"source_offset": source_offset, "destination_offset": destination_offset}
        if byte_length is None and isinstance(source_offset, int):
            byte_length = source_size - source_offset
        numbers["byte_length"] = byte_length
        for name, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value % 4:
                raise ViewRangeError(
                    f'ReadbackSlot "{self.id}" copy {name} must be a non-negative multiple '
                    f"of 4 (got {value!r})"
                )
        if getattr(source_buffer, "_device", self.ring.device) is not self.ring.device:
            raise DeviceMismatchError(
                f'ReadbackSlot "{self.id}" copy source "{source_buffer.label}" belongs to '
                f"another device than the ring"
            )
        if not int(source_buffer.usage) & wgpu.BufferUsage.COPY_SRC:
            raise UsageError(
                f'ReadbackSlot "{self.id}" copy source "{source_buffer.label}" lacks COPY_SRC '
                f"usage (usage flags {int(source_buffer.usage)})"
            )
        if source_offset + byte_length > source_size:
            raise ViewRangeError(
                f'ReadbackSlot "{self.id}" copy reads past source "{source_buffer.label}" '
                f"(needs {source_offset + byte_length} bytes, got {source_size})"
            )
        if destination_offset + byte_length > self.ring.byte_length:
            raise ViewRangeError(
                f'ReadbackSlot "{self.id}" copy writes past the slot '
                f"(needs {destination_offset + byte_length} bytes, got {self.ring.byte_length})"
            )
        if byte_length == 0:
            return
        encoder.copy_buffer_to_buffer(
            source_buffer, source_offset, self._stage.buffer, destination_offset, byte_length
        )
        self._extent = max(self._extent, destination_offset + byte_length)

    def map_async(self) -> None:
        """Start mapping ``[0, byte_length)`` of the slot for reading; returns at once.

        Call after the command buffer holding this slot's copies was
        submitted. A failure to start the map (a lost device) is kept and
        raised by ``read()`` as :class:`ReadbackMapError`.
        """
        ring = self.ring
        with ring._lock:
            self._check_held("acquired")
            stage = self._stage
            try:
                promise = _map_for_read(stage.buffer, self.byte_length)
            except Exception as error:  # wgpu raises at once on a lost device
                self._fail(error)
                return
            stage.promise = promise
            ring._in_flight.append(stage)
            self._state = "pending"

    @property
    def ready(self) -> bool:
        """True once ``read(wait=False)`` would return data (or raise a map
        failure). Non-blocking: polls the device once."""
        ring = self.ring
        with ring._lock:
            self._check_held("pending", "mapped", "failed")
            if self._state == "pending":
                _poll(ring.device)
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
            The map failed (device lost, buffers destroyed); the slot is
            released and the ring is lost.
        ReadbackTimeoutError
            The map did not resolve within ``timeout``; the slot stays pending.
        GraphStateError
            ``map_async`` was not called, or the slot was already released.
        """
        ring = self.ring
        deadline = None if timeout is None else time.monotonic() + max(0.0, float(timeout))
        with ring._lock:
            self._check_held("pending", "mapped", "failed")
            if self._state == "pending":
                _poll(ring.device)
                self._settle()
                promise = self._stage.promise
        if self._state == "pending":
            if not wait:
                return None
            if not _wait_settled(ring.device, promise, deadline):
                raise ReadbackTimeoutError(
                    f'ReadbackSlot "{self.id}" map did not resolve within {timeout} s'
                )
        with ring._lock:
            self._check_held("pending", "mapped", "failed")
            self._settle()
            if self._state == "failed":
                error = self._error
                self._release()
                raise ReadbackMapError(
                    f'ReadbackSlot "{self.id}" could not be mapped ({error})'
                ) from error
            buffer = self._stage.buffer
            data = bytes(buffer.read_mapped(0, self.byte_length, copy=False))  # one copy
            buffer.unmap()
            self._release()
            return data

    def cancel(self) -> None:
        """Release the slot without reading; idempotent.

        A mapped buffer is unmapped now; a pending one returns to the ring
        only after its map resolves. Cancel an acquired slot only if the
        encoder with its copies is discarded or already submitted.
        """
        ring = self.ring
        with ring._lock:
            if ring._destroyed or self._state == "released":
                return
            self._settle()
            if self._state == "mapped":
                self._stage.buffer.unmap()
            self._release()

    # -- internals --------------------------------------------------------

    def _settle(self):
        """Move a pending slot to mapped/failed once its promise settled."""
        stage = self._stage
        if self._state != "pending" or not _settled(stage.promise):
            return
        self.ring._in_flight.remove(stage)
        error = self.ring._finish_map(stage)
        if error is None:
            self._state = "mapped"
        else:
            self._fail(error)

    def _fail(self, error):
        self._state = "failed"
        self._error = error
        if self.ring._lost is None and not self.ring._destroyed:
            self.ring._lost = error

    def _release(self):
        """Detach from the stage; a still-pending map keeps the stage in flight."""
        stage = self._stage
        stage.slot = None
        if self._state != "pending":
            stage.promise = None
        self._state = "released"
        self.ring._released.notify_all()
