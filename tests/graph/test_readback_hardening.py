"""GPUReadbackRing under faults (issue 10): device loss at every point of a
slot's life, threads contending for few slots, and over-limit rings.

A device loss used to abort the process (a Rust panic in
wgpuBufferGetMappedRange), so each loss scenario runs in a subprocess and
checks its exit status as well as the named error."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import wgpu

import gpuviz
from gpuviz import GPUReadbackRing, ReadbackRingExhaustedError
from gpuviz.graph import compat
from gpuviz.graph.device_loss import device_lost_reason

BU = wgpu.BufferUsage

# One readback, with the device destroyed at ``point``; each call of the ring
# and its slot after that must work or raise a GraphError, and the scenario
# prints the first one raised. The caller's own submit may raise wgpu's error.
SCENARIO = """
import sys
import numpy as np, wgpu, gpuviz
from gpuviz import GPUReadbackRing, GraphError
point = sys.argv[1]
device = gpuviz.request_device(shared=False)
ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="lost")
source = device.create_buffer_with_data(data=np.array([1, 2], np.uint32), usage=wgpu.BufferUsage.COPY_SRC)

def at(name):
    if point == name:
        device.destroy()

def guarded(call):
    try:
        return call()
    except GraphError as error:
        print(f"RAISED {type(error).__name__}: {error}")
        ring.destroy()  # never raises, lost device or not
        raise SystemExit(0) from None

at("acquire")
slot = guarded(ring.acquire)
encoder = device.create_command_encoder()
at("acquired")
guarded(lambda: slot.copy(encoder, source))
at("recorded")
try:
    device.queue.submit([encoder.finish()])
except wgpu.GPUError:
    pass
at("submitted")
guarded(slot.map_async)
if point.startswith("mapped"):
    while not slot.ready:
        pass
at(point if point.startswith(("pending", "mapped")) else None)
if point.endswith("-cancel"):
    guarded(slot.cancel)  # releases quietly; the loss surfaces at the next acquire
else:
    guarded(lambda: slot.ready)
    guarded(slot.read)
at("read")
guarded(lambda: ring.acquire(timeout=5))
print("NO ERROR")
"""


def run_scenario(point):
    env = {**os.environ, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(SCENARIO), point], env=env,
                            capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("point", ["acquire", "acquired", "recorded", "submitted", "pending", "mapped", "read",
                                   "pending-cancel", "mapped-cancel"])
def test_device_loss_at_any_point_raises_readback_map_error(point):
    returncode, stdout, stderr = run_scenario(point)
    assert returncode == 0, f"exit status {returncode}\n{stdout}\n{stderr[-3000:]}"
    assert 'RAISED ReadbackMapError: GPUReadbackRing "lost"' in stdout or \
        'RAISED ReadbackMapError: ReadbackSlot "lost[0]"' in stdout, stdout + stderr[-3000:]
    assert "device was lost (destroyed)" in stdout, stdout


def test_device_lost_reason_reports_destroy_for_that_device_only():
    lost = gpuviz.request_device(shared=False)
    other = gpuviz.request_device(shared=False)
    assert device_lost_reason(lost) is None and device_lost_reason(other) is None
    lost.destroy()
    assert device_lost_reason(lost) == "destroyed"
    lost.create_command_encoder()  # wgpu-native calls the device-lost callback on the next call
    assert device_lost_reason(lost) == "destroyed"
    assert compat.reported_device_loss(lost) == "destroyed: Device lost"  # seen through wgpu's callback
    assert device_lost_reason(other) is None and compat.reported_device_loss(other) is None


def test_device_lost_reason_refuses_a_non_device():
    with pytest.raises(gpuviz.GraphTypeError, match="device_lost_reason needs a wgpu.GPUDevice"):
        device_lost_reason(None)


def test_acquire_waits_for_a_slot_another_thread_holds(device):
    ring = GPUReadbackRing(device, byte_length=4, slot_count=2, label="shared")
    held, go = threading.Event(), threading.Event()
    slots = []

    def worker():
        slots.extend([ring.acquire(), ring.acquire()])  # recording both: only this thread can free one
        held.set()
        go.wait()
        slots[0].cancel()  # blocks on the ring's lock until the main thread's acquire waits

    for timeout in (30, None):
        slots.clear()
        held.clear(), go.clear()
        thread = threading.Thread(target=worker)
        thread.start()
        held.wait()
        with ring._pool.lock:  # a condition wait releases it: the cancel lands only during acquire's wait
            go.set()
            again = ring.acquire(timeout)
        thread.join()
        assert again.index == slots[0].index
        again.cancel(), slots[1].cancel()
    ring.destroy()


def test_exhausted_at_once_only_when_the_caller_holds_every_slot(device):
    ring = GPUReadbackRing(device, byte_length=4, slot_count=2, label="own")
    a, b = ring.acquire(), ring.acquire()
    with pytest.raises(ReadbackRingExhaustedError, match=r'"own" .*held by this thread.*2 acquired and not mapped'):
        ring.acquire()
    a.cancel(), b.cancel()
    ring.destroy()


def test_four_threads_share_a_two_slot_ring(device):
    ring = GPUReadbackRing(device, byte_length=8, slot_count=2, label="workers")
    rounds, workers = 12, 4
    start = threading.Barrier(workers)
    results, errors = {}, []

    def work(worker):
        source = device.create_buffer(size=8, usage=BU.COPY_SRC | BU.COPY_DST)
        start.wait()
        try:
            for i in range(rounds):
                device.queue.write_buffer(source, 0, np.array([worker, i], np.uint32))
                slot = ring.acquire(timeout=120)
                encoder = device.create_command_encoder()
                slot.copy(encoder, source)
                device.queue.submit([encoder.finish()])
                slot.map_async()
                results[worker, i] = np.frombuffer(slot.read(timeout=120), np.uint32).tolist()
        except Exception as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == {(w, i): [w, i] for w in range(workers) for i in range(rounds)}
    assert ring.free_count == 2 and ring.in_flight_count == 0
    ring.destroy()


def test_over_limit_rings_are_refused_at_construction(device):
    limit = int(device.limits["max-buffer-size"])
    with pytest.raises(gpuviz.GraphValidationError,
                       match=rf'GPUReadbackRing "huge" byte_length {limit + 4} .*max-buffer-size {limit}'):
        GPUReadbackRing(device, byte_length=limit + 4, label="huge")
    if limit % 4:  # rounding up to whole words must not pass the limit either
        with pytest.raises(gpuviz.GraphValidationError, match="max-buffer-size"):
            GPUReadbackRing(device, byte_length=limit, label="huge")
    cap = GPUReadbackRing.MAX_SLOT_COUNT
    with pytest.raises(gpuviz.GraphValidationError,
                       match=rf'GPUReadbackRing "many" slot_count {cap + 1} is over MAX_SLOT_COUNT {cap}'):
        GPUReadbackRing(device, byte_length=4, slot_count=cap + 1, label="many")
    GPUReadbackRing(device, byte_length=4, slot_count=cap, label="many").destroy()


def test_bad_arguments_raise_graph_errors(device):
    with pytest.raises(gpuviz.GraphTypeError, match='GPUReadbackRing "none" needs a wgpu.GPUDevice'):
        GPUReadbackRing(None, byte_length=4, label="none")
    ring = GPUReadbackRing(device, byte_length=4, slot_count=1, label="args")
    with pytest.raises(gpuviz.GraphTypeError, match='"args" acquire timeout must be a number'):
        ring.acquire("soon")
    slot = ring.acquire()
    with pytest.raises(gpuviz.GraphTypeError, match=r'"args\[0\]" read timeout must be a number'):
        slot.read(timeout=float("nan"))
    slot.cancel()
    ring.destroy()
