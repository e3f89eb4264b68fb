"""GPUReadbackRing: acquisition, out-of-order reads, cancellation, reuse
safety, destruction and device loss, against real copies on the device."""

import asyncio
import threading
import time

import numpy as np
import pytest
import wgpu
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz import GPUReadbackRing, ReadbackMapError, ReadbackRingExhaustedError, ReadbackSlot, ReadbackTimeoutError
from gpuviz.graph import compat

BU = wgpu.BufferUsage


def source_buffer(device, values, *, usage=BU.COPY_SRC | BU.COPY_DST | BU.STORAGE):
    data = np.asarray(values, dtype=np.uint32)
    buffer = device.create_buffer(label="source", size=max(4, data.nbytes), usage=usage)
    if data.nbytes:
        device.queue.write_buffer(buffer, 0, data)
    return buffer


def copy_and_map(device, slot, source, **kwargs):
    encoder = device.create_command_encoder()
    slot.copy(encoder, source, **kwargs)
    device.queue.submit([encoder.finish()])
    slot.map_async()


def words(data):
    return np.frombuffer(data, dtype=np.uint32).tolist()


class HeldMaps:
    """Makes every map started from now on look pending to the ring until
    released, while the real copy and map run underneath.

    A map that is still in flight on the GPU cannot be produced on demand
    (the device may finish any kernel before the next line runs), so the
    tests stand in for wgpu-py's promise state at its one seam,
    ``gpuviz.graph.compat``. ``release()`` then waits for the real maps.
    """

    def __init__(self, monkeypatch):
        self._settled, self._wait = compat.promise_settled, compat.wait_for_promise
        self.holding = False
        self.release_on_wait = False  # the GPU "finishes" once the ring waits
        self.seen = []
        monkeypatch.setattr(compat, "promise_settled", self.settled)
        monkeypatch.setattr(compat, "wait_for_promise", self.wait)

    def settled(self, promise):
        if self.holding:
            self.seen.append(promise)
            return False
        return self._settled(promise)

    def wait(self, promise, timeout):
        if self.holding and self.release_on_wait:
            self.holding = False
        self._wait(promise, timeout)

    def hold(self):
        self.holding = True

    def release(self, device):
        """Stop holding; return once every map seen held has really settled."""
        self.holding = False
        for promise in self.seen:
            while not self._settled(promise):
                compat.poll_device(device)
                self._wait(promise, 1.0)


@pytest.fixture
def held_maps(monkeypatch):
    return HeldMaps(monkeypatch)


def pending_slot(device, ring, held_maps):
    """A slot whose map the ring sees pending until ``held_maps.release``."""
    slot = ring.acquire()
    held_maps.hold()
    copy_and_map(device, slot, source_buffer(device, [1, 60_000]))
    return slot


def test_construction_and_attributes(device):
    ring = GPUReadbackRing(device, byte_length=10, slot_count=2, label="timestamps")
    assert ring.byte_length == 12 and ring.slot_count == 2
    assert ring.free_count == 2 and ring.in_flight_count == 0
    assert 'GPUReadbackRing "timestamps"' in repr(ring)
    with pytest.raises(gpuviz.GraphValidationError, match='"bad" byte_length'):
        GPUReadbackRing(device, byte_length=0, label="bad")
    with pytest.raises(gpuviz.GraphValidationError, match='"bad" slot_count .*got 0'):
        GPUReadbackRing(device, byte_length=4, slot_count=0, label="bad")
    ring.destroy()


def test_values_match_what_the_gpu_copied(device):
    ring = GPUReadbackRing(device, byte_length=64, label="copy-check")
    source = source_buffer(device, np.arange(100, 116))
    slot = ring.acquire()
    assert isinstance(slot, ReadbackSlot) and slot.state == "acquired"
    copy_and_map(device, slot, source, source_offset=8, byte_length=24, destination_offset=4)
    assert slot.state == "pending"
    data = slot.read()
    assert isinstance(data, bytes) and len(data) == 28 == slot.byte_length
    assert words(data)[1:] == list(range(102, 108))
    assert slot.state == "released" and ring.free_count == 3
    ring.destroy()


def test_several_copies_fill_one_slot(device):
    ring = GPUReadbackRing(device, byte_length=12, slot_count=1, label="counts")
    sources = [source_buffer(device, [7 * (i + 1), 99]) for i in range(3)]
    slot = ring.acquire()
    encoder = device.create_command_encoder()
    for i, source in enumerate(sources):
        slot.copy(encoder, source, byte_length=4, destination_offset=4 * i)
    device.queue.submit([encoder.finish()])
    slot.map_async()
    assert words(slot.read()) == [7, 14, 21]
    ring.destroy()


def test_exhaustion(device):
    ring = GPUReadbackRing(device, byte_length=4, slot_count=2, label="small")
    a, b = ring.try_acquire(), ring.try_acquire()
    assert a is not None and b is not None and {a.index, b.index} == {0, 1}
    assert ring.try_acquire() is None and ring.free_count == 0
    # every slot acquired and never mapped: waiting would deadlock
    with pytest.raises(ReadbackRingExhaustedError, match=r'"small" .*\(2 acquired and not mapped'):
        ring.acquire()
    # a finite timeout waits (another thread might release a slot) and then says so
    with pytest.raises(ReadbackTimeoutError, match='"small" had no free slot within 0.05 s'):
        ring.acquire(timeout=0.05)
    a.cancel()
    assert ring.free_count == 1
    c = ring.acquire(timeout=0)
    assert c.index == a.index and c is not a
    ring.destroy()


def test_out_of_order_completion(device):
    ring = GPUReadbackRing(device, byte_length=16, slot_count=3, label="frames")
    slots = []
    for frame in range(3):
        slot = ring.acquire()
        copy_and_map(device, slot, source_buffer(device, [frame * 10 + k for k in range(4)]))
        slots.append(slot)
    assert ring.try_acquire() is None
    assert words(slots[2].read()) == [20, 21, 22, 23]
    assert words(slots[1].read(wait=True)) == [10, 11, 12, 13]
    assert ring.free_count == 2
    reused = ring.acquire()
    assert reused.index in (slots[1].index, slots[2].index)
    assert words(slots[0].read()) == [0, 1, 2, 3]
    reused.cancel()
    assert ring.free_count == 3 and ring.in_flight_count == 0
    ring.destroy()


def test_ready_is_non_blocking_and_read_without_wait(device, held_maps):
    ring = GPUReadbackRing(device, byte_length=16, slot_count=1, label="poll")
    slot = pending_slot(device, ring, held_maps)
    start = time.perf_counter()
    assert slot.ready is False
    assert slot.read(wait=False) is None
    assert time.perf_counter() - start < 0.5  # neither waited for the map
    assert slot.state == "pending" and ring.in_flight_count == 1
    with pytest.raises(ReadbackTimeoutError, match='"poll\\[0\\]" map did not resolve within 0.001'):
        slot.read(timeout=0.001)
    assert slot.state == "pending"
    held_maps.release(device)
    assert slot.ready and slot.state == "mapped" and ring.in_flight_count == 0
    assert words(slot.read(wait=False)) == [1, 60_000]
    ring.destroy()


def test_cancel_pending_returns_slot_only_after_the_map_resolves(device, held_maps):
    ring = GPUReadbackRing(device, byte_length=16, slot_count=1, label="cancel")
    slot = pending_slot(device, ring, held_maps)
    buffer = slot.buffer
    slot.cancel()
    assert slot.state == "released"
    slot.cancel()  # idempotent
    assert ring.try_acquire() is None  # the buffer's map is still pending
    assert ring.in_flight_count == 1
    held_maps.release_on_wait = True
    again = ring.acquire(timeout=60)  # waits for the cancelled map, then unmaps it
    assert not held_maps.holding  # acquire did wait on the map
    assert again.buffer is buffer and buffer.map_state == "unmapped"
    assert ring.in_flight_count == 0
    with pytest.raises(gpuviz.GraphStateError, match='"cancel\\[0\\]" was already read or cancelled'):
        slot.read()
    ring.cancel(again)
    assert ring.free_count == 1
    ring.destroy()


def test_cancel_acquired_and_mapped(device):
    ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="cancel2")
    acquired = ring.acquire()
    ring.cancel(acquired)
    assert ring.free_count == 2
    mapped = ring.acquire()
    copy_and_map(device, mapped, source_buffer(device, [5, 6]))
    while not mapped.ready:
        pass
    buffer = mapped.buffer
    mapped.cancel()
    assert buffer.map_state == "unmapped" and ring.free_count == 2
    other = GPUReadbackRing(device, byte_length=4, label="other")
    with pytest.raises(gpuviz.GraphValidationError, match='"other" cannot cancel'):
        other.cancel(ring.acquire())
    other.destroy()
    ring.destroy()


def test_never_reuses_a_mapped_slot(device):
    ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="mapped")
    held = ring.acquire()
    copy_and_map(device, held, source_buffer(device, [1, 2]))
    while not held.ready:
        pass
    assert held.state == "mapped" and held.buffer.map_state == "mapped"
    for _ in range(5):
        other = ring.acquire()
        assert other.index != held.index
        assert ring.try_acquire() is None
        # without a timeout, waiting on a slot only the caller can free raises
        with pytest.raises(ReadbackRingExhaustedError, match="1 acquired and not mapped, 0 pending, 1 mapped"):
            ring.acquire()
        with pytest.raises(ReadbackTimeoutError, match='"mapped" had no free slot within 0.02 s'):
            ring.acquire(timeout=0.02)
        copy_and_map(device, other, source_buffer(device, [3, 4]))
        assert words(other.read()) == [3, 4]
    assert held.buffer.map_state == "mapped"
    assert words(held.read()) == [1, 2]
    ring.destroy()


def test_acquire_waits_for_a_read_on_another_thread(device):
    ring = GPUReadbackRing(device, byte_length=4, slot_count=1, label="threads")
    slot = ring.acquire()
    copy_and_map(device, slot, source_buffer(device, [42]))
    results = []
    reader = threading.Thread(target=lambda: results.append(words(slot.read())))
    # The ring's lock is held here until acquire waits (a condition wait
    # releases it), so the reader's read() can only land during that wait.
    with ring._pool.lock:
        reader.start()
        again = ring.acquire(timeout=30)
    reader.join()
    assert results == [[42]] and again.index == slot.index
    ring.destroy()


def test_a_finite_timeout_waits_for_a_slot_this_thread_handed_to_another(device):
    """The caller acquired every slot, but gave one to a thread that records,
    maps and reads it 0.5 s later: acquire(timeout) waits for that read
    instead of raising at once (only an unbounded wait raises at once)."""
    ring = GPUReadbackRing(device, byte_length=4, slot_count=1, label="handed")
    slot = ring.acquire()
    source = source_buffer(device, [9])
    results = []

    def reader():
        time.sleep(0.5)
        copy_and_map(device, slot, source)
        results.append(words(slot.read()))

    thread = threading.Thread(target=reader)
    thread.start()
    with pytest.raises(ReadbackRingExhaustedError, match="pass a timeout"):
        ring.acquire()
    started = time.monotonic()
    again = ring.acquire(timeout=5)
    waited = time.monotonic() - started
    thread.join()
    assert results == [[9]] and again.index == slot.index
    assert waited < 5, "returned when the other thread read the slot, not at the timeout"
    again.cancel()
    ring.destroy()


def test_inside_a_running_event_loop(device):
    # Jupyter runs cells inside an asyncio loop: wgpu-py then schedules promise
    # resolution on that loop, which cannot run while the cell blocks.
    ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="loop")

    async def cell():
        first = ring.acquire(5)
        copy_and_map(device, first, source_buffer(device, [3, 1]))
        second = ring.acquire()
        copy_and_map(device, second, source_buffer(device, [4, 1]))
        while not second.ready:
            await asyncio.sleep(0)  # yield to the loop; no timed wait
        return words(second.read()), words(first.read(timeout=30))

    assert asyncio.run(cell()) == ([4, 1], [3, 1])
    assert ring.free_count == 2
    ring.destroy()


def test_destroy_is_idempotent_and_final(device):
    ring = GPUReadbackRing(device, byte_length=8, slot_count=3, label="gone")
    held = ring.acquire()
    mapped = ring.acquire()
    copy_and_map(device, mapped, source_buffer(device, [1, 2]))
    while not mapped.ready:
        pass
    ring.destroy()
    ring.destroy()
    assert ring.destroyed and held.state == "released" and ring.free_count == 0
    with pytest.raises(gpuviz.GraphStateError, match='"gone" was destroyed'):
        ring.acquire()
    with pytest.raises(gpuviz.GraphStateError, match='"gone" was destroyed'):
        ring.try_acquire()
    with pytest.raises(gpuviz.GraphStateError, match='"gone\\[1\\]" belongs to a destroyed ring'):
        mapped.read()
    held.cancel()  # no-op after destroy


def test_destroy_while_a_map_is_pending(device, held_maps):
    ring = GPUReadbackRing(device, byte_length=16, slot_count=1, label="abort")
    slot = pending_slot(device, ring, held_maps)
    ring.destroy()
    assert slot.state == "released" and ring.in_flight_count == 0
    with pytest.raises(gpuviz.GraphStateError, match='"abort\\[0\\]" belongs to a destroyed ring'):
        slot.read()
    held_maps.release(device)


def test_device_loss_surfaces_from_read():
    device = gpuviz.request_device(shared=False)
    ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="lost")
    slot = ring.acquire()
    encoder = device.create_command_encoder()
    slot.copy(encoder, source_buffer(device, [1, 2]))
    device.queue.submit([encoder.finish()])
    device.destroy()
    slot.map_async()  # does not raise: the failure is kept for read()
    assert slot.ready and slot.state == "failed"
    with pytest.raises(ReadbackMapError, match='"lost\\[0\\]" could not be mapped'):
        slot.read()
    with pytest.raises(ReadbackMapError, match='"lost" is lost'):
        ring.try_acquire()
    ring.destroy()
    ring.destroy()


def test_copy_validation(device):
    ring = GPUReadbackRing(device, byte_length=16, slot_count=1, label="check")
    slot = ring.acquire()
    source = source_buffer(device, range(8))
    encoder = device.create_command_encoder()
    with pytest.raises(gpuviz.ViewRangeError, match='"check\\[0\\]" copy source_offset .*got 2'):
        slot.copy(encoder, source, source_offset=2, byte_length=4)
    with pytest.raises(gpuviz.ViewRangeError, match="byte_length .*got 6"):
        slot.copy(encoder, source, byte_length=6)
    with pytest.raises(gpuviz.ViewRangeError, match="writes past the slot \\(needs 32 bytes, got 16\\)"):
        slot.copy(encoder, source)
    with pytest.raises(gpuviz.ViewRangeError, match='reads past source "source" \\(needs 36 bytes, got 32\\)'):
        slot.copy(encoder, source, source_offset=28, byte_length=8)
    no_copy = source_buffer(device, [1], usage=BU.STORAGE | BU.COPY_DST)
    with pytest.raises(gpuviz.UsageError, match="lacks COPY_SRC"):
        slot.copy(encoder, no_copy)
    foreign_device = gpuviz.request_device(shared=False)
    with pytest.raises(gpuviz.DeviceMismatchError, match="another device"):
        slot.copy(encoder, source_buffer(foreign_device, [1]))
    with pytest.raises(gpuviz.GraphStateError, match="is acquired, expected pending"):
        slot.read()
    with pytest.raises(gpuviz.GraphStateError, match="is acquired, expected pending"):
        slot.ready
    slot.copy(encoder, source, byte_length=0)  # records nothing
    slot.copy(encoder, source, byte_length=16)
    device.queue.submit([encoder.finish()])
    slot.map_async()
    with pytest.raises(gpuviz.GraphStateError, match="is pending, expected acquired"):
        slot.map_async()
    assert words(slot.read()) == [0, 1, 2, 3]
    ring.destroy()


def test_map_without_copy_reads_the_whole_slot(device):
    # callers may fill slot.buffer themselves (e.g. copy_texture_to_buffer)
    ring = GPUReadbackRing(device, byte_length=8, slot_count=1, label="raw")
    slot = ring.acquire()
    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(source_buffer(device, [8, 9]), 0, slot.buffer, 0, 8)
    device.queue.submit([encoder.finish()])
    slot.map_async()
    assert words(slot.read()) == [8, 9]
    ring.destroy()


@settings(max_examples=15, deadline=None)
@given(
    values=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=40),
    data=st.data(),
)
def test_round_trip_property(device, values, data):
    n = len(values)
    start = data.draw(st.integers(0, n - 1))
    count = data.draw(st.integers(1, n - start))
    offset_words = data.draw(st.integers(0, 3))
    ring = GPUReadbackRing(device, byte_length=4 * (count + offset_words), slot_count=2, label="prop")
    slot = ring.acquire()
    copy_and_map(
        device, slot, source_buffer(device, values),
        source_offset=4 * start, byte_length=4 * count, destination_offset=4 * offset_words,
    )
    assert words(slot.read())[offset_words:] == values[start:start + count]
    ring.destroy()
