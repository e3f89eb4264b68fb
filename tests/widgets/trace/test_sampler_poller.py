"""SamplePoller polls from the event loop while other threads may draw: each
poll holds the widget's call lock (no GPU: a stand-in sampler records it)."""

import asyncio
import threading

from gpuviz.widgets.trace.sampler import SamplePoller


class _Sampler:
    def __init__(self, lock):
        self.lock, self.pending, self.held = lock, True, []

    def poll(self):
        self.held.append(self.lock._is_owned())
        self.pending = len(self.held) < 3
        return not self.pending


def test_each_poll_holds_the_lock_and_a_sample_redraws():
    lock = threading.RLock()
    sampler = _Sampler(lock)
    redraws = []

    async def run():
        poller = SamplePoller(sampler, on_sample=lambda: True, redraw=lambda: redraws.append(1),
                              alive=lambda: True, lock=lock)
        poller.later()
        for _ in range(200):
            await asyncio.sleep(0.01)
            if redraws:
                break

    asyncio.run(run())
    assert sampler.held == [True, True, True] and redraws == [1]


def test_a_poll_waits_while_another_thread_holds_the_lock():
    lock = threading.RLock()
    sampler = _Sampler(lock)
    sampler.pending = True
    order = []
    entered = threading.Event()

    def draw():
        with lock:
            entered.set()
            order.append("draw-start")
            threading.Event().wait(0.2)
            order.append("draw-end")

    async def run():
        poller = SamplePoller(sampler, on_sample=lambda: order.append("sample") or False, redraw=lambda: None,
                              alive=lambda: True, lock=lock)
        thread = threading.Thread(target=draw)
        thread.start()
        entered.wait(5)
        poller.later()
        await asyncio.sleep(0.5)
        thread.join()

    sampler.held = [False, False]  # the next poll delivers
    asyncio.run(run())
    assert order[:2] == ["draw-start", "draw-end"] and "sample" in order
