"""GraphInspector: a live notebook panel over a compiled command graph.

Shows the nodes in encoding order grouped into passes, each node's declared
uses, the transient memory plan, compile count and time, per-node CPU encode
time, per-node GPU time (when the device has timestamps) and GPU-resident
counts sampled through a readback ring at low frequency.

The panel never gates a frame: the owner reports what it measured, count
samples are read only when their slot is already mapped, and the HTML is
re-rendered at most every ``refresh_interval`` seconds.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping

import ipywidgets as widgets
import wgpu

from ..errors import DeviceMismatchError, GraphStateError, GraphTypeError, GraphValidationError, UsageError
from ..graph import compat
from ..graph.compiled import CompiledGPUCommandGraph
from ..graph.readback_ring import GPUReadbackRing
from ..tables import GPUData
from .device_loss import device_lost_message

__all__ = ["GraphInspector"]

_COUNT_SLOTS = 3


class GraphInspector(widgets.VBox):
    """A panel reporting what a :class:`CompiledGPUCommandGraph` does.

    Parameters
    ----------
    compiled : CompiledGPUCommandGraph, optional
        The graph to show; :meth:`attach` replaces it (a structural rebuild,
        counted in ``compile_count``).
    refresh_interval : float
        Minimum seconds between two re-renders of the panel.
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
    counts is lost, sampling stops and the panel says so.
    """

    def __init__(self, compiled=None, *, refresh_interval: float = 0.5, count_interval: float = 1.0):
        self._html = widgets.HTML()
        super().__init__([self._html], layout=widgets.Layout(min_width="320px", max_width="560px",
                                                             max_height="640px", overflow="auto"))
        self.refresh_interval = refresh_interval
        self.count_interval = count_interval
        self.compiled = None
        self.compile_count = 0
        self.compile_seconds_total = 0.0
        self.cpu_times: dict = {}
        self.gpu_times: dict = {}
        self.counts: dict = {}
        self.frames = 0
        self._count_views: dict = {}
        self._count_ring = None
        self._count_device = None
        self.device_lost = None  # "GPU device lost: ..." once sampling found the device lost
        self._pending_counts = []
        self._last_count_sample = float("-inf")
        self._last_render = float("-inf")
        if compiled is not None:
            self.attach(compiled)

    # ------------------------------------------------------------ reporting
    def attach(self, compiled) -> None:
        """Show ``compiled`` (after a rebuild); resets per-node timings.
        Does not encode it; raises GraphTypeError for anything but a
        CompiledGPUCommandGraph."""
        if not isinstance(compiled, CompiledGPUCommandGraph):
            raise GraphTypeError(f"GraphInspector shows a CompiledGPUCommandGraph (GPUCommandGraph.compile()), "
                                 f"got {type(compiled).__name__}")
        self.compiled = compiled
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
        """Re-render the panel if ``refresh_interval`` elapsed (or ``force``)."""
        now = time.perf_counter()
        if not force and now - self._last_render < self.refresh_interval:
            return
        self._last_render = now
        self._html.value = self.to_html()

    def to_html(self) -> str:
        """The panel's current HTML (also what tests inspect)."""
        if self.compiled is None:
            return "<i>No graph attached.</i>"
        esc = html.escape
        if self.compiled.destroyed:
            return (f'<div style="font: 12px monospace"><b>CompiledGPUCommandGraph "{esc(self.compiled.id)}" was '
                    f"destroyed</b>: its plan and resources are gone; attach() a compiled graph to inspect it.</div>")
        stats = self.compiled.stats
        rows = []
        for index, gpu_pass in enumerate(self.compiled.describe()):
            for position, node in enumerate(gpu_pass["nodes"]):
                uses = "<br>".join(esc(line) for line in summarize_uses(node["uses"])) or "—"
                cpu = self.cpu_times.get(node["id"])
                gpu = self.gpu_times.get(node["id"])
                pass_cell = (f'<td rowspan="{len(gpu_pass["nodes"])}">{index} · {esc(gpu_pass["kind"])}</td>'
                             if position == 0 else "")
                rows.append(f"<tr>{pass_cell}<td><b>{esc(node['id'])}</b></td><td>{uses}</td>"
                            f"<td>{_us(cpu)}</td><td>{_us(gpu)}</td></tr>")
        counts = "".join(f"<li>{esc(label)}: <b>{value:,}</b></li>" for label, value in self.counts.items())
        summary = (
            f"<b>{esc(self.compiled.id)}</b> · {len(stats.node_order)} nodes in {stats.pass_count} passes · "
            f"compiled {self.compile_count}× ({stats.compile_seconds * 1e3:.1f} ms last) · {self.frames} frames<br>"
            f"transients: {_bytes(stats.logical_transient_bytes)} logical → "
            f"{_bytes(stats.physical_transient_bytes)} physical "
            f"({_bytes(stats.reused_bytes)} reused, {stats.reuse_percent:.0f}%) · "
            f"imports {_bytes(stats.imported_bytes)}"
        )
        gpu_note = "" if stats.capabilities.get("timestamps") else " (no timestamp-query on this device)"
        return (
            f'<div style="font: 12px monospace">{summary}'
            f'<table style="border-collapse: collapse"><thead><tr><th>pass</th><th>node</th><th>declared uses</th>'
            f"<th>CPU µs</th><th>GPU µs{gpu_note}</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + (f"<div>GPU counts (sampled):<ul>{counts}</ul></div>" if counts else "")
            + (f'<div style="color: #c33">{esc(self.device_lost)}: counts are no longer sampled</div>'
               if self.device_lost else "")
            + "</div>"
        )

    def close(self) -> None:
        """Free the count ring and close the panel; never waits for pending samples."""
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


def summarize_uses(uses) -> list:
    """One line per (use, resource family): chunk resources that differ only in
    a trailing number collapse to ``x-buffer-{0..7}``; repeats show ``×N``."""
    families = {}
    for resource_id, use in uses:
        stem, _, number = resource_id.rpartition("-")
        key = (use, stem) if number.isdigit() and stem else (use, resource_id)
        entry = families.setdefault(key, {"numbers": [], "count": 0, "plain": not (number.isdigit() and stem)})
        entry["count"] += 1
        if not entry["plain"]:
            entry["numbers"].append(int(number))
    lines = []
    for (use, name), entry in families.items():
        numbers = sorted(set(entry["numbers"]))
        if entry["plain"]:
            label = name
        elif len(numbers) == 1:
            label = f"{name}-{numbers[0]}"
        else:
            label = f"{name}-{{{numbers[0]}..{numbers[-1]}}}"
        repeats = entry["count"] if entry["plain"] else entry["count"] // max(1, len(numbers))
        lines.append(f"{use} {label}" + (f" ×{repeats}" if repeats > 1 else ""))
    return lines


def _us(seconds) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:,.1f}"


def _bytes(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    return ""
