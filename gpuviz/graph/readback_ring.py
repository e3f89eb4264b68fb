"""GPUReadbackRing: reusable staging buffers for asynchronous readback.

A ring owns ``slot_count`` small ``MAP_READ | COPY_DST`` buffers. A caller
acquires a slot (:class:`~gpuviz.graph.readback_slot.ReadbackSlot`), records
copies into it, submits, starts the map and reads the bytes later (possibly
out of order), which hands the slot back. A slot whose buffer is pending or
mapped is never handed out again until that map has resolved and been
unmapped, so frames can overlap rendering and readback without serializing
on one mapped buffer. The buffers and the state slots share live in
:mod:`~gpuviz.graph.readback_staging`.

Imports nothing from gpuviz above the graph's error family and compat
layer, because the compiled command graph reads timestamps through it.
"""

from __future__ import annotations

import threading
import time

import wgpu

from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from .compat import poll_device
from .readback_errors import ReadbackMapError, ReadbackRingExhaustedError, ReadbackTimeoutError
from .readback_slot import ReadbackSlot
from .readback_staging import StagingPool, deadline_after, wait_settled

__all__ = ["GPUReadbackRing"]


class GPUReadbackRing:
    """A fixed ring of reusable staging buffers for asynchronous readback.

    Parameters
    ----------
    device : wgpu.GPUDevice
        The device whose buffers will be copied.
    byte_length : int
        Bytes per slot; rounded up to a multiple of 4, at most the device's
        ``max-buffer-size`` limit.
    slot_count : int
        Number of staging buffers (default 3: one being written, one in
        flight, one being read), at most :attr:`MAX_SLOT_COUNT`.
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
    while its map was pending) when that map resolves. A map failure or a
    lost device (``device.destroy()`` included) marks the ring lost: the
    slot in use raises :class:`ReadbackMapError` and so do later
    acquisitions; nothing aborts the process. Thread-safe: any thread may
    acquire, read or cancel, and ``acquire`` waits for a slot another thread
    releases.
    """

    #: Most slots a ring may have: a ring needs one per readback in flight,
    #: a handful; more is a mistake that would create that many buffers.
    MAX_SLOT_COUNT = 256

    def __init__(self, device, *, byte_length, slot_count=3, label="readback-ring"):
        self.label = str(label)
        if not isinstance(device, wgpu.GPUDevice):
            raise GraphTypeError(f'GPUReadbackRing "{self.label}" needs a wgpu.GPUDevice (got {type(device).__name__})')
        if isinstance(byte_length, bool) or not isinstance(byte_length, int) or byte_length <= 0:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" byte_length must be a positive integer (got {byte_length!r})')
        if isinstance(slot_count, bool) or not isinstance(slot_count, int) or slot_count < 1:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" slot_count must be an integer >= 1 (got {slot_count!r})')
        rounded, limit = (byte_length + 3) & ~3, int(device.limits["max-buffer-size"])
        if rounded > limit:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" byte_length {byte_length} (rounded up to {rounded}) is over the '
                f"device's max-buffer-size {limit}")
        if slot_count > self.MAX_SLOT_COUNT:
            raise GraphValidationError(
                f'GPUReadbackRing "{self.label}" slot_count {slot_count} is over MAX_SLOT_COUNT {self.MAX_SLOT_COUNT}')
        self.device = device
        self.byte_length = rounded
        self.slot_count = slot_count
        self._pool = StagingPool(device, label=self.label, byte_length=self.byte_length, count=slot_count)

    def __repr__(self):
        return (f'<GPUReadbackRing "{self.label}" {self.slot_count} x {self.byte_length} bytes, '
                f"{self.free_count} free, {self.in_flight_count} in flight>")

    @property
    def free_count(self) -> int:
        """Staging buffers ready to acquire now (0 once destroyed); never waits."""
        pool = self._pool
        with pool.lock:
            if pool.destroyed:
                return 0
            pool.collect()
            return sum(stage.free for stage in pool.stages)

    @property
    def in_flight_count(self) -> int:
        """Maps requested whose promise has not settled yet; never polls the device."""
        with self._pool.lock:
            return sum(not stage.settled for stage in self._pool.in_flight)

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy`."""
        return self._pool.destroyed

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
        with self._pool.lock:
            return self._take()

    def acquire(self, timeout=None):
        """Return a free :class:`ReadbackSlot`, waiting until one is free.

        Waits for a slot to be released by any thread (``read()`` or
        ``cancel()``), and for maps of cancelled slots to resolve, which it
        drives by polling the device.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most; None waits as long as a wait can end.

        Notes
        -----
        A finite ``timeout`` always waits up to ``timeout`` seconds, even when
        the calling thread acquired every slot: it may have handed a slot to
        another thread that will read or cancel it. An unbounded wait
        (``timeout=None``) that only the calling thread could end raises
        :class:`ReadbackRingExhaustedError` at once instead of hanging: no
        cancelled map is in flight and every slot was acquired by the
        calling thread. A slot held by another thread is always waited for,
        without a ``timeout`` for as long as that thread holds it.

        Raises
        ------
        ReadbackRingExhaustedError
            ``timeout`` is None and every slot is held by the calling thread.
        ReadbackTimeoutError
            No slot became free within ``timeout`` seconds.
        GraphStateError
            The ring was destroyed.
        ReadbackMapError
            The ring is lost (an earlier map failed, or the device was lost).
        """
        pool = self._pool
        deadline = deadline_after(timeout, f'GPUReadbackRing "{self.label}" acquire')
        while True:
            with pool.lock:
                slot = self._take()
                if slot is not None:
                    return slot
                orphans = [stage for stage in pool.in_flight if stage.slot is None]
                if not orphans and timeout is None:
                    self._raise_if_only_the_caller_can_free()
                if deadline is not None and time.monotonic() >= deadline:
                    raise ReadbackTimeoutError(
                        f'GPUReadbackRing "{self.label}" had no free slot within {timeout} s '
                        f"({self.slot_count} slots, {self.in_flight_count} in flight)")
                if not orphans:
                    # a release notifies; the bound re-checks a device loss or destroy, which do not
                    remaining = 0.05 if deadline is None else deadline - time.monotonic()
                    pool.released.wait(min(remaining, 0.05))
                    continue
            wait_settled(self.device, orphans[0].promise, deadline)  # outside the lock: others may release

    def _raise_if_only_the_caller_can_free(self):
        """Raise ReadbackRingExhaustedError where an unbounded wait could never
        end (see ``acquire``): every slot is held by the calling thread; the
        caller holds the lock and no orphaned map is in flight."""
        pool, me = self._pool, threading.get_ident()
        held = [stage for stage in pool.stages if stage.slot is not None]
        if any(stage.owner != me for stage in held) or len(held) < self.slot_count:
            return
        states = [stage.slot.state for stage in held]
        raise ReadbackRingExhaustedError(
            f'GPUReadbackRing "{self.label}" has no slot that can become free without a read() or '
            f"cancel(): all {self.slot_count} are held by this thread ({states.count('acquired')} acquired and not "
            f"mapped, {states.count('pending')} pending, {states.count('mapped')} mapped and unread); pass a "
            f"timeout to wait for another thread to release one")

    def cancel(self, slot) -> None:
        """Return ``slot`` without reading it; same as ``slot.cancel()``."""
        if not isinstance(slot, ReadbackSlot) or slot.ring is not self:
            raise GraphValidationError(f'GPUReadbackRing "{self.label}" cannot cancel {slot!r}: not one of its slots')
        slot.cancel()

    def destroy(self) -> None:
        """Destroy the staging buffers; idempotent.

        Held slots become unusable (their methods raise GraphStateError;
        ``cancel`` is a no-op). Maps still pending are aborted by the driver.
        Does not wait for the GPU.
        """
        with self._pool.lock:
            self._pool.destroy()

    def _take(self):
        """A new slot on a free stage, or None; the caller holds the lock."""
        pool = self._pool
        if pool.destroyed:
            raise GraphStateError(f'GPUReadbackRing "{self.label}" was destroyed')
        if pool.lost is None:
            pool.device_lost()
        if pool.lost is not None:
            raise ReadbackMapError(f'GPUReadbackRing "{self.label}" is lost: {pool.lost_reason}') from pool.lost
        if pool.in_flight:
            poll_device(self.device)
        pool.collect()
        stage = pool.take_free()
        if stage is None:
            return None
        stage.slot = ReadbackSlot(self, stage)
        stage.owner = threading.get_ident()
        return stage.slot
