"""Staging buffers of a readback ring and the state their slots share.

A :class:`StagingPool` owns the ring's ``MAP_READ | COPY_DST`` buffers, one
:class:`StagingBuffer` each, plus the lock, the list of pending maps and the
ring's lost/destroyed state. :class:`GPUReadbackRing` hands buffers out and
:class:`ReadbackSlot` maps and reads them; both go through the pool, so
neither reads the other's internals.

wgpu-py 0.32 notes that shaped this module:

- ``buffer.map_async`` returns a ``GPUPromise``; the map callback fires on
  wgpu-py's per-device poll thread, but the promise only *finalizes*
  (``buffer.map_state`` becomes ``"mapped"``) when something resolves it:
  ``sync_wait()`` or an event loop. Readiness is therefore read from the
  promise (:attr:`StagingBuffer.settled`), not ``map_state``.
- ``device.destroy()`` stops the poll thread; pending maps then settle only
  when the device is polled again, which every waiting path here does.
- A rejected map leaves wgpu-py's ``map_state`` at ``"pending"`` forever, so
  that buffer can never be mapped again; a map failure (device loss, or a
  destroyed ring) therefore marks the whole pool lost.
- ``device.destroy()`` frees the staging buffers' memory, yet a map pending
  at that moment may still *succeed*; reading it then panics inside
  wgpu-native (``wgpuBufferGetMappedRange``: the buffer "has been
  destroyed"), aborting the process, and unmapping raises wgpu's validation
  error. So the pool checks :func:`~gpuviz.graph.device_loss.device_lost_reason`
  before every mapped-memory or unmap call (:meth:`StagingPool.device_lost`).
"""

from __future__ import annotations

import threading
import time

import wgpu

from ..errors import GraphTypeError
from . import compat  # called through the module: tests stand in for wgpu-py's promise state there
from .device_loss import device_lost_reason

__all__ = ["STAGING_USAGE", "StagingBuffer", "StagingPool", "wait_settled", "deadline_after"]

STAGING_USAGE = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST


def deadline_after(timeout, what: str):
    """The ``time.monotonic()`` deadline ``timeout`` seconds from now (None
    for None); ``what`` names the caller in the error for a bad timeout."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout != timeout:
        raise GraphTypeError(f"{what} timeout must be a number of seconds or None (got {timeout!r})")
    return time.monotonic() + max(0.0, float(timeout))


def wait_settled(device, promise, deadline) -> bool:
    """Poll ``device`` until ``promise`` has settled; False if the
    ``time.monotonic()`` ``deadline`` (None: none) passed first."""
    delay = 0.0005
    while True:
        compat.poll_device(device)
        if compat.promise_settled(promise):
            return True
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            delay = min(delay, remaining)
        compat.wait_for_promise(promise, delay)  # wakes as soon as the map callback fires
        delay = min(delay * 2, 0.01)


class StagingBuffer:
    """One staging buffer and what currently holds it.

    Attributes
    ----------
    pool : StagingPool
    index : int
    buffer : wgpu.GPUBuffer
    slot : ReadbackSlot or None
        The ticket holding it; None when free or orphaned by a cancel.
    promise : GPUPromise or None
        The map's promise while a map is pending or not yet consumed.
    """

    __slots__ = ("pool", "index", "buffer", "slot", "promise", "owner")

    def __init__(self, pool, index, buffer):
        self.pool = pool
        self.index = index
        self.buffer = buffer
        self.slot = None
        self.promise = None
        self.owner = None  # threading.get_ident() of the thread that acquired the slot

    @property
    def free(self) -> bool:
        return self.slot is None and self.promise is None

    @property
    def settled(self) -> bool:
        """True once the started map has its outcome (call only while ``promise`` is set)."""
        return compat.promise_settled(self.promise)


class StagingPool:
    """The staging buffers of one ring and their shared, lock-guarded state.

    Parameters
    ----------
    device : wgpu.GPUDevice
    label : str
        The ring's ID; buffers are labelled ``"{label}[{index}]"``.
    byte_length : int
        Bytes per buffer (a multiple of 4).
    count : int
        Number of buffers.

    Attributes
    ----------
    lock : threading.RLock
        Guards every attribute and every stage.
    released : threading.Condition
        Notified whenever a buffer may have become free.
    stages : list of StagingBuffer
    in_flight : list of StagingBuffer
        Stages with a map started and not yet consumed, oldest first.
    destroyed : bool
    lost : Exception or None
        The first map failure (or device loss), once the pool is lost.
    lost_reason : str or None
        ``lost`` in words, for messages.

    Notes
    -----
    Creates its buffers and nothing else; never submits and never waits.
    """

    def __init__(self, device, *, label, byte_length, count):
        self.device = device
        self.lock = threading.RLock()
        self.released = threading.Condition(self.lock)
        self.stages = [StagingBuffer(self, i, device.create_buffer(label=f"{label}[{i}]", size=byte_length,
                                                                   usage=STAGING_USAGE))
                       for i in range(count)]
        self.in_flight = []
        self.destroyed = False
        self.lost = None
        self.lost_reason = None
        device_lost_reason(device)  # starts watching the device for a reported loss

    def take_free(self):
        """The first free stage, or None (the caller attaches a slot to it)."""
        return next((stage for stage in self.stages if stage.free), None)

    def begin_map(self, stage, promise) -> None:
        """Record that ``stage``'s map started."""
        stage.promise = promise
        self.in_flight.append(stage)

    def mark_lost(self, error, reason=None) -> None:
        """Keep the first map failure; later acquisitions raise it."""
        if self.lost is None and not self.destroyed:
            self.lost = error
            self.lost_reason = reason or f"a staging buffer failed to map ({error})"

    def device_lost(self):
        """A RuntimeError saying the device was lost (the pool is then lost),
        or None while the device is usable; no GPU call."""
        reason = device_lost_reason(self.device)
        if reason is None:
            return None
        error = RuntimeError(f"the device was lost ({reason})")
        self.mark_lost(error, str(error))
        return error

    def unmap(self, stage) -> Exception | None:
        """Unmap ``stage``'s buffer unless the device is lost (its memory is
        gone); return the error that kept it mapped, or None."""
        error = self.device_lost()
        if error is not None:
            return error
        try:
            stage.buffer.unmap()
        except wgpu.GPUError as unmap_error:  # a loss not reported yet
            self.mark_lost(unmap_error, f"unmapping a staging buffer failed ({unmap_error})")
            return unmap_error
        return None

    def settle(self, stage):
        """Finalize ``stage``'s settled map; return its error (and mark the
        pool lost) or None. The stage leaves ``in_flight``."""
        self.in_flight.remove(stage)
        try:
            stage.promise.sync_wait()  # settled: does not block, runs wgpu-py's handler
        except Exception as error:
            self.mark_lost(error)
            return error
        return None

    def collect(self) -> None:
        """Hand back cancelled stages whose maps have settled."""
        for stage in list(self.in_flight):
            if stage.slot is None and stage.settled:
                if self.settle(stage) is None and stage.buffer.map_state == "mapped":
                    self.unmap(stage)
                stage.promise = None
                self.released.notify_all()

    def release(self, stage, *, pending: bool) -> None:
        """Detach ``stage`` from its slot; a still-``pending`` map keeps it in
        flight until :meth:`collect` sees the map settle."""
        stage.slot = None
        stage.owner = None
        if not pending:
            stage.promise = None
        self.released.notify_all()

    def destroy(self) -> None:
        """Unmap and destroy every buffer; idempotent. Pending maps are aborted by the driver."""
        if self.destroyed:
            return
        lost = device_lost_reason(self.device) is not None
        self.destroyed = True
        for stage in self.stages:
            try:
                if stage.buffer.map_state == "mapped" and not lost:
                    stage.buffer.unmap()
                stage.buffer.destroy()
            except wgpu.GPUError:  # a device lost since the check refuses; destroy the rest anyway
                pass
        self.in_flight.clear()
        self.released.notify_all()
