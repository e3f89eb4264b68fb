"""Hover values of :class:`~gpuviz.widgets.DataAnalysis`: the numbers under
the cursor, read back from the GPU without ever waiting, and the tooltip
lines that show them.

A hover target is one element of one panel (a displayed heatmap cell, a
histogram bin, a group bar). :class:`HoverProbe` copies that element's
words (value and row count, bin count and CDF, group count and mean) from
the widget's output buffers into a slot of a small
:class:`~gpuviz.GPUReadbackRing`, in its own command buffer submitted after
the graph's, and starts the map; :meth:`HoverProbe.poll` hands back the
newest finished sample, or None while it is still in flight. Nothing here
waits for the GPU, so a frame never does either. :func:`tooltip_lines`
turns a sample into text (host-side only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...graph.readback_errors import ReadbackMapError
from ...graph.readback_ring import GPUReadbackRing
from ...render.number_format import format_number

__all__ = ["HoverTarget", "HoverProbe", "tooltip_lines", "hover_target", "SLOT_WORDS"]

#: 32-bit words one sample holds at most.
SLOT_WORDS = 4


@dataclass(frozen=True)
class HoverTarget:
    """One element under the cursor.

    Attributes
    ----------
    panel : {"heatmap", "histogram", "groups"}
    index : int
        Displayed cell (row-major ``j * w + i``), bin or group.
    x, y : float
        The cursor in canvas logical pixels (where the tooltip goes).
    """

    panel: str
    index: int
    x: float
    y: float


def hover_target(rects: dict, x: float, y: float, *, grid_size, bins: int, groups: int):
    """The :class:`HoverTarget` under canvas point ``(x, y)``, or None
    outside every panel. Heatmap row 0 is at the bottom (ymin); bars are
    equal-width slots, one per bin or group."""
    for panel, (rx, ry, rw, rh) in rects.items():
        if not (rx <= x <= rx + rw and ry <= y <= ry + rh):
            continue
        u, v = (x - rx) / rw, 1.0 - (y - ry) / rh
        if panel == "heatmap":
            w, h = grid_size
            i, j = min(int(u * w), w - 1), min(int(v * h), h - 1)
            return HoverTarget("heatmap", j * w + i, x, y)
        count = bins if panel == "histogram" else groups
        if count:
            return HoverTarget(panel, min(int(u * count), count - 1), x, y)
    return None


class HoverProbe:
    """Reads the words behind a hover target through a GPUReadbackRing.

    Parameters
    ----------
    device : wgpu.GPUDevice
    slot_count : int
        Samples in flight at most; a request finding every slot busy is kept
        and issued by the next :meth:`poll` that frees one (only the newest
        waiting request is kept).

    Notes
    -----
    Each request records ``copy_buffer_to_buffer`` of up to
    :data:`SLOT_WORDS` 4-byte words into its own encoder and submits it, so
    it reads what every earlier submission (the graph's encodings) wrote.
    Samples older than the newest request are dropped, and so are samples
    whose map failed (a lost device). Never waits, never reads a buffer the
    caller did not name; :meth:`destroy` frees the ring.
    """

    def __init__(self, device, *, slot_count: int = 4):
        self.device = device
        self.ring = GPUReadbackRing(device, byte_length=4 * SLOT_WORDS, slot_count=slot_count,
                                    label="data-analysis-hover")
        self._serial = 0
        self._pending = []  # (serial, slot, target, formats)
        self._waiting = None  # (serial, target, sources) that found no free slot

    @property
    def in_flight(self) -> bool:
        """A request is pending (in flight or waiting for a slot)."""
        return bool(self._pending) or self._waiting is not None

    def request(self, target, sources) -> None:
        """Sample ``sources`` for ``target``: a list of ``(buffer, word index,
        format)`` with format ``"uint32"`` or ``"float32"``."""
        self._serial += 1
        self._waiting = None
        self._issue(self._serial, target, list(sources))

    def cancel(self) -> None:
        """Forget the current target: pending samples are dropped when they land."""
        self._serial += 1
        self._waiting = None

    def _issue(self, serial, target, sources) -> None:
        slot = self.ring.try_acquire()
        if slot is None:
            self._waiting = (serial, target, sources)
            return
        encoder = self.device.create_command_encoder(label="data-analysis-hover")
        for k, (buffer, index, _fmt) in enumerate(sources[:SLOT_WORDS]):
            slot.copy(encoder, buffer, source_offset=4 * int(index), byte_length=4, destination_offset=4 * k)
        self.device.queue.submit([encoder.finish()])
        slot.map_async()
        self._pending.append((serial, slot, target, [fmt for _b, _i, fmt in sources[:SLOT_WORDS]]))

    def poll(self):
        """``(target, values)`` of the newest finished sample of the current
        request, or None (nothing finished, or only stale samples). Reads
        every finished slot (freeing it) without waiting."""
        found, still = None, []
        for serial, slot, target, formats in self._pending:
            if not slot.ready:
                still.append((serial, slot, target, formats))
                continue
            try:
                data = slot.read(wait=False)
            except ReadbackMapError:  # a lost device: no tooltip (the widget reports the loss itself)
                continue
            if serial == self._serial and data is not None:
                words = np.frombuffer(data, np.uint32)
                found = (target, [float(words[k].view(np.float32)) if fmt == "float32" else int(words[k])
                                  for k, fmt in enumerate(formats)])
        self._pending = still
        if self._waiting is not None:
            serial, target, sources = self._waiting
            self._waiting = None
            self._issue(serial, target, sources)
        return found

    def destroy(self) -> None:
        for _serial, slot, _target, _formats in self._pending:
            slot.cancel()
        self._pending, self._waiting = [], None
        self.ring.destroy()


def _value(v) -> str:
    return "empty" if not np.isfinite(v) else format_number(float(v), digits=4)


def tooltip_lines(target, values, *, params, labels=(), group=None, cells=None, grid_size=None) -> list:
    """The tooltip of one sample.

    Parameters
    ----------
    target : HoverTarget
    values : list
        heatmap ``[value, rows]``; histogram ``[count, cdf, total]``;
        groups ``[rows, mean]``.
    params : AnalysisParameters
        Columns, bounds, edges, operation, group mask.
    labels, group : the group labels and the group column's name.
    cells : dict
        ``params.grid_cells(grid_size)`` (which axes bin whole numbers).
    """
    value = params.columns["value"]
    if target.panel == "heatmap":
        w, h = grid_size
        i, j = target.index % w, target.index // w
        lines = [_axis_line(params, cells, role, k, n) for role, k, n in (("x", i, w), ("y", j, h))]
        v, rows = values
        name = "rows" if params.operation == "count" else f"{params.operation} {value}"
        lines += [f"{name}: {_value(v)}"] if params.operation != "count" else []
        return lines + [f"rows: {rows:,}"]
    if target.panel == "histogram":
        count, cdf, total = values
        e = params.edges
        b = target.index
        close = "]" if b == len(e) - 2 else ")"
        share = f"{cdf / total:.3f}" if total else "-"
        return [f"{value} [{format_number(float(e[b]), digits=4)}, {format_number(float(e[b + 1]), digits=4)}{close}",
                f"rows: {count:,}", f"CDF: {share}"]
    rows, mean = values
    label = labels[target.index] if target.index < len(labels) else "?"
    hidden = "" if params.group_enabled[target.index] else " (hidden: click to show)"
    return [f"{group} = {label}{hidden}", f"mean {value}: {_value(mean)}", f"rows: {rows:,}"]


def _axis_line(params, cells, role, k, n) -> str:
    """``hour = 7`` on an integer axis, ``x 1.25 … 1.5`` on a linear one."""
    name = params.columns[role]
    lo, hi = (params.bounds[0], params.bounds[2]) if role == "x" else (params.bounds[1], params.bounds[3])
    axis = 0 if role == "x" else 1
    if cells["binning"][role] == "integer":
        start = cells["bounds"][axis]
        src = np.floor(np.float32(cells["offset"][axis]) + (np.float32(k) + np.float32(0.5))
                       * np.float32(cells["scale"][axis]))
        return f"{name} = {format_number(float(start + src + 0.5), digits=6)}"
    a, b = lo + k * (hi - lo) / n, lo + (k + 1) * (hi - lo) / n
    return f"{name} {format_number(a, digits=4)} … {format_number(b, digits=4)}"
