"""GraphInspector: a live notebook panel over a compiled command graph.

An anywidget (front end: ``inspector.js`` and ``inspector.css`` beside this
module) laid out for a side panel of 360 px: a per-frame timeline bar of GPU
time per node (CPU encode time when the device has no timestamps), grouped
by pass and coloured by kind; a sortable node table (CPU µs, GPU µs, share
of the frame) whose declared uses are one line per node, expanded on click;
the transient memory plan as a bar (logical vs physical, reuse); compile
count and time; GPU-resident counts sampled through a readback ring.

The panel never gates a frame: the owner reports what it measured, count
samples are read only when their slot is already mapped, and the model state
(``snapshot``, a plain dict the browser renders) is rebuilt and sent at most
every ``refresh_interval`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path

import anywidget
import traitlets
import wgpu

from ..errors import DeviceMismatchError, GraphStateError, GraphTypeError, GraphValidationError, UsageError
from ..graph import compat
from ..graph.compiled import CompiledGPUCommandGraph
from ..graph.readback_ring import GPUReadbackRing
from ..tables import GPUData
from .device_loss import device_lost_message
from .inspector_state import panel_state, render_html, summarize_uses

__all__ = ["GraphInspector", "summarize_uses"]

_COUNT_SLOTS = 3
_HERE = Path(__file__).parent


class GraphInspector(anywidget.AnyWidget):
    """A panel reporting what a :class:`CompiledGPUCommandGraph` does.

    Parameters
    ----------
    compiled : CompiledGPUCommandGraph, optional
        The graph to show; :meth:`attach` replaces it (a structural rebuild,
        counted in ``compile_count``).
    refresh_interval : float
        Minimum seconds between two updates of the panel's model state
        (0.5: at most 2 updates a second reach the browser).
    count_interval : float
        Minimum seconds between two count samples (see :meth:`watch_counts`).

    Raises
    ------
    GraphTypeError
        ``compiled`` is not a CompiledGPUCommandGraph (e.g. a graph not yet
        compiled).

    Notes
    -----
    Does not encode, submit or wait. The owner calls :meth:`record_encode`
    after each encode, :meth:`sample_counts` with its encoder before
    submitting, and :meth:`poll` after submitting. A destroyed graph is
    shown as destroyed, without its plan. Once the device of the watched
    counts is lost, sampling stops and the panel says so. :meth:`to_html`
    renders the same state as static HTML (hosts without widgets).
    """

    # Text, not paths: anywidget connects each instance to a path's change signal
    # (a strong reference held by the class), so no closed inspector would ever be freed.
    _esm = (_HERE / "inspector.js").read_text(encoding="utf-8")
    _css = (_HERE / "inspector.css").read_text(encoding="utf-8")
    #: What the browser shows: see :meth:`state`.
    snapshot = traitlets.Dict().tag(sync=True)

    def __init__(self, compiled=None, *, refresh_interval: float = 0.5, count_interval: float = 1.0):
        super().__init__()
        # fits a 360 px side panel; inline beside a canvas a long graph scrolls vertically, never sideways
        self.layout.min_width = "0"
        self.layout.max_width = "560px"
        self.layout.max_height = "720px"
        self.layout.overflow = "hidden auto"
        self.refresh_interval = refresh_interval
        self.count_interval = count_interval
        self.compiled = None
        self.compile_count = 0
        self.compile_seconds_total = 0.0
        self.cpu_times: dict = {}
        self.gpu_times: dict = {}
        self.counts: dict = {}
        self.frames = 0
        self._plan = []  # describe() of the attached graph, taken once (the plan does not change)
        self._count_views: dict = {}
        self._count_ring = None
        self._count_device = None
        self.device_lost = None  # "GPU device lost: ..." once sampling found the device lost
        self._pending_counts = []
        self._last_count_sample = float("-inf")
        self._last_render = float("-inf")
        self._trailing = None  # call_later handle of a throttled refresh
        if compiled is not None:
            self.attach(compiled)
        else:
            self.refresh(force=True)

    # ------------------------------------------------------------ reporting
    def attach(self, compiled) -> None:
        """Show ``compiled`` (after a rebuild); resets per-node timings.
        Does not encode it; raises GraphTypeError for anything but a
        CompiledGPUCommandGraph."""
        if not isinstance(compiled, CompiledGPUCommandGraph):
            raise GraphTypeError(f"GraphInspector shows a CompiledGPUCommandGraph (GPUCommandGraph.compile()), "
                                 f"got {type(compiled).__name__}")
        self.compiled = compiled
        self._plan = [] if compiled.destroyed else compiled.describe()
        self.compile_count += 1
        self.compile_seconds_total += compiled.stats.compile_seconds
        self.cpu_times, self.gpu_times = {}, {}
        self.refresh(force=True)

    def record_encode(self, cpu_times: dict, *, gpu_times: dict | None = None) -> None:
        """Report one encode's per-node CPU seconds (and GPU seconds if known);
        does not read anything back."""
        if not isinstance(cpu_times, Mapping) or not (gpu_times is None or isinstance(gpu_times, Mapping)):
            raise GraphTypeError(f"GraphInspector record_encode takes {{node id: seconds}} mappings "
                                 f"(got {type(cpu_times).__name__}, {type(gpu_times).__name__})")
        self.frames += 1
        self.cpu_times = dict(cpu_times)
        if gpu_times:
            self.gpu_times = dict(gpu_times)
        self.refresh()

    def watch_counts(self, counts: dict) -> None:
        """Sample these one-word uint32 ``GPUData`` (e.g. indirect instance
        counts) at low frequency: ``{label: GPUData}``. Does not sample
        until :meth:`sample_counts`; an empty mapping stops watching.

        Raises
        ------
        GraphTypeError
            ``counts`` is not a mapping, or a value is not a GPUData.
        GraphValidationError
            A count that is not one 4-byte-aligned uint32 word, whose buffer
            lacks COPY_SRC (UsageError), or counts on two devices.
        GraphStateError
            A count that was destroyed.
        """
        if not isinstance(counts, Mapping):
            raise GraphTypeError(f"GraphInspector watch_counts takes {{label: GPUData}} (got {type(counts).__name__})")
        counts = {str(label): data for label, data in counts.items()}
        devices = {id(_check_count(label, data)): label for label, data in counts.items()}
        if len(devices) > 1:
            raise DeviceMismatchError(f"GraphInspector counts {', '.join(map(repr, devices.values()))} "
                                      f"belong to {len(devices)} devices; watch counts of one device")
        self._count_views = counts
        if self._count_ring is not None:
            self._count_ring.destroy()
            self._pending_counts.clear()
        self._count_ring = self._count_device = None
        if counts:
            self._count_device = compat.owning_device(next(iter(counts.values())).buffer, None)
            self._count_ring = GPUReadbackRing(self._count_device, byte_length=4 * len(counts),
                                               slot_count=_COUNT_SLOTS, label="inspector-counts")

    def sample_counts(self, encoder) -> bool:
        """Record copies of the watched counts into a free ring slot, if the
        sampling interval elapsed and a slot is free. Returns True if recorded.
        Never submits; records nothing once the device is lost.

        Raises
        ------
        GraphStateError
            A watched count was destroyed since :meth:`watch_counts` (raised
            before anything is recorded, naming its label).
        """
        now = time.perf_counter()
        if self._count_ring is None or now - self._last_count_sample < self.count_interval:
            return False
        for label, data in self._count_views.items():
            if data.destroyed:
                raise GraphStateError(f'GraphInspector count "{label}" (GPUData "{data.label}") was destroyed; '
                                      f"watch_counts() again without it")
        if self._lost():
            return False
        slot = self._count_ring.try_acquire()
        if slot is None:
            return False
        for i, data in enumerate(self._count_views.values()):
            slot.copy(encoder, data.buffer, source_offset=data.byte_offset, byte_length=4, destination_offset=4 * i)
        self._pending_counts.append(slot)
        self._last_count_sample = now
        return True

    def _lost(self) -> bool:
        """True once the counts' device is lost: pending samples are dropped
        unread (reading a map that was pending at the loss aborts the process)."""
        if self.device_lost is None and self._count_device is not None:
            self.device_lost = device_lost_message(self._count_device)
        if self.device_lost is None:
            return False
        if self._count_ring is not None:
            self._pending_counts.clear()
            self._count_ring.destroy()
            self._count_ring = None
        return True

    def poll(self) -> None:
        """After submission: start maps of sampled counts and read the ones
        already mapped, never waiting."""
        if self._pending_counts and self._lost():
            self.refresh(force=True)
            return
        still = []
        for slot in self._pending_counts:
            if slot.state == "acquired":
                slot.map_async()
            data = slot.read(wait=False)
            if data is None:
                still.append(slot)
            else:
                words = memoryview(data).cast("I")
                self.counts = {label: int(words[i]) for i, label in enumerate(self._count_views)}
        self._pending_counts = still
        self.refresh()

    # ------------------------------------------------------------ rendering
    def refresh(self, *, force: bool = False) -> None:
        """Send the current state to the browser if ``refresh_interval``
        elapsed since the last update (or ``force``)."""
        now = time.perf_counter()
        wait = self._last_render + self.refresh_interval - now
        if not force and wait > 0:
            self._refresh_later(wait)  # the last report of a burst still reaches the browser
            return
        self._last_render = now
        self.snapshot = self.state()

    def _refresh_later(self, delay: float) -> None:
        if self._trailing is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (scripts, tests): the next report refreshes
        self._trailing = loop.call_later(delay, self._trailing_refresh)

    def _trailing_refresh(self) -> None:
        self._trailing = None
        if self.comm is not None:  # still open
            self.refresh()

    def state(self) -> dict:
        """The panel's current state as plain JSON-able data (what
        ``snapshot`` holds after a refresh); times in µs, sizes in bytes."""
        return panel_state(compiled=self.compiled, plan=self._plan, cpu_times=self.cpu_times,
                           gpu_times=self.gpu_times, counts=self.counts, frames=self.frames,
                           compile_count=self.compile_count, compile_seconds_total=self.compile_seconds_total,
                           device_lost=self.device_lost)

    def to_html(self) -> str:
        """The current state as static HTML (hosts without widgets; tests)."""
        return render_html(self.state())

    def close(self) -> None:
        """Free the count ring and close the panel; never waits for pending samples."""
        if self._trailing is not None:
            self._trailing.cancel()
            self._trailing = None
        if self._count_ring is not None:
            self._count_ring.destroy()
            self._count_ring = None
        super().close()


def _check_count(label, data):
    """The device of one watched count, after checking it can be copied from."""
    if not isinstance(data, GPUData):
        raise GraphTypeError(f'GraphInspector count "{label}" must be a GPUData (got {type(data).__name__})')
    if data.destroyed:
        raise GraphStateError(f'GraphInspector count "{label}" (GPUData "{data.label}") was destroyed')
    if data.format.name != "uint32" or data.length != 1 or data.byte_offset % 4:
        raise GraphValidationError(f'GraphInspector count "{label}" must be one uint32 word at a 4-byte-aligned '
                                   f"offset (got {data.length} rows of {data.format.name} at byte "
                                   f"{data.byte_offset})")
    if not data.buffer.usage & wgpu.BufferUsage.COPY_SRC:
        raise UsageError(f'GraphInspector count "{label}" (GPUData "{data.label}") needs a COPY_SRC buffer '
                         f"(usage {int(data.buffer.usage)})")
    return compat.owning_device(data.buffer, None)
