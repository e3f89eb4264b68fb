"""What a GPU widget leaves behind: live wgpu buffers and registered ipywidgets.

Shared by the widget lifetime tests (create, draw, close, repeat; compare
with before). Two views of "live GPU buffer":

* :func:`live_gpu_buffers` counts the ``GPUBuffer`` objects wgpu-py tracks
  (``wgpu.diagnostics.object_counts``) after a full garbage collection:
  what the process still holds, destroyed or not. A closed widget that
  stays reachable (an ipywidget left in the registry keeps its parent and
  everything it refers to) shows up here.
* :class:`GPUBufferLedger` records the buffers created while it is active
  and reports those neither destroyed nor collected: what a ``close()``
  forgot to destroy even while the caller still holds the closed widget.
"""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import ipywidgets
import wgpu
from wgpu.backends.wgpu_native import GPUBuffer

__all__ = ["live_gpu_buffers", "registered_widgets", "GPUBufferLedger", "run_threads",
           "check_close_destroys_every_buffer", "check_cycles_leave_nothing", "check_close_during_calls"]


def live_gpu_buffers() -> int:
    """``GPUBuffer`` objects alive in this process after ``gc.collect()``,
    as wgpu-py's object counter reports them."""
    gc.collect()
    counts = wgpu.diagnostics.object_counts.get_dict()
    return int(counts.get("Buffer", {}).get("count", 0))


def registered_widgets() -> dict:
    """A copy of the ipywidgets registry (model id -> widget): every widget
    created and not closed, layouts and styles included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Widget.widgets is the documented registry
        return dict(ipywidgets.Widget.widgets)


def widget_types(widgets) -> dict:
    """``{class name: count}`` of ``widgets`` (a failure message's summary)."""
    out = {}
    for widget in widgets:
        name = type(widget).__name__
        out[name] = out.get(name, 0) + 1
    return dict(sorted(out.items()))


class GPUBufferLedger:
    """Context manager recording every wgpu buffer created inside it.

    Examples
    --------
    >>> with GPUBufferLedger() as ledger:
    ...     w = make_widget(); w.close()
    >>> ledger.undestroyed()  # labels of buffers neither destroyed nor collected
    []

    Notes
    -----
    Wraps ``GPUBuffer.__init__`` and ``GPUBuffer.destroy`` of wgpu-py's native
    backend for its duration (every thread's buffers count); holds the
    buffers weakly, so a collected buffer is no longer live.
    """

    def __init__(self):
        self._created = weakref.WeakSet()
        self._destroyed = weakref.WeakSet()
        self._saved = None

    def __enter__(self) -> "GPUBufferLedger":
        init, destroy = GPUBuffer.__init__, GPUBuffer.destroy
        created, destroyed = self._created, self._destroyed

        def recording_init(buffer, *args, **kwargs):
            init(buffer, *args, **kwargs)
            created.add(buffer)

        def recording_destroy(buffer):
            destroyed.add(buffer)
            destroy(buffer)

        self._saved = (init, destroy)
        GPUBuffer.__init__, GPUBuffer.destroy = recording_init, recording_destroy
        return self

    def __exit__(self, *exc) -> None:
        GPUBuffer.__init__, GPUBuffer.destroy = self._saved

    def undestroyed(self) -> list:
        """Labels of buffers created inside that are still alive (after
        ``gc.collect()``) and were never destroyed, sorted."""
        gc.collect()
        return sorted(buffer.label for buffer in list(self._created) if buffer not in self._destroyed)


def run_threads(*targets) -> list:
    """Run each callable in its own thread, wait for all (a thread still
    running after 300 s fails the test) and return what they raised."""
    errors = []

    def guard(target):
        def run():
            try:
                target()
            except BaseException as error:  # reported by the test thread
                errors.append(error)
        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "a thread did not finish"
    return errors


def check_close_destroys_every_buffer(cycle, *, name: str):
    """``cycle()`` creates, draws and closes a widget; every buffer it made
    must be destroyed while the closed widget is still held. Returns it."""
    with GPUBufferLedger() as ledger:
        widget = cycle()
        left = ledger.undestroyed()
    assert left == [], f"{len(left)} buffers of a closed {name} were never destroyed: {left}"
    return widget


def check_cycles_leave_nothing(cycle, *, name: str, cycles: int = 20) -> None:
    """``cycles`` calls of ``cycle()`` (create, draw, close) leave no live
    GPU buffer and no registered ipywidget behind. A first cycle runs before
    counting: per-device caches (pipelines, glyph atlases) are made once."""
    cycle()
    buffers, widgets = live_gpu_buffers(), registered_widgets()
    for _ in range(cycles):
        cycle()
    left = {k: w for k, w in registered_widgets().items() if k not in widgets}
    assert not left, f"{len(left)} ipywidgets stay registered after {cycles} closed {name}: " \
                     f"{widget_types(left.values())}"
    assert live_gpu_buffers() - buffers == 0


def check_close_during_calls(widget, calls, *, closed_error) -> None:
    """One thread repeats ``calls(widget)`` (draws and setters) while another
    closes ``widget`` after the first round: the calling thread may only
    see ``closed_error`` (GraphStateError) once closed, nothing else."""
    started = threading.Event()
    rounds = []

    def call():
        while True:
            try:
                calls(widget)
            except closed_error:
                return  # closed: the only error a call after close may raise
            rounds.append(1)
            started.set()

    def close():
        started.wait(timeout=120)
        widget.close()

    assert run_threads(call, close) == []
    assert rounds
