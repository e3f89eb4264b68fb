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
import warnings
import weakref

import ipywidgets
import wgpu
from wgpu.backends.wgpu_native import GPUBuffer

__all__ = ["live_gpu_buffers", "registered_widgets", "GPUBufferLedger"]


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
