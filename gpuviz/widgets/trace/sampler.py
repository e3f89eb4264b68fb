"""What a TraceViewer frame tells the CPU without a pass over every span:
the labels to draw, the span under the pointer and the frame's counts, and
the poll that brings them back once an interaction stops.

:func:`add_label_node` adds a compute node (``shaders/labels.wgsl``) that
picks the spans wide enough for a label out of the frame's compacted
visible set (``visible_rows``, ``SPANS`` instance count) into a small
buffer of at most :data:`MAX_LABELS` span IDs. :class:`ViewSampler` copies
that buffer, the picking pass's output word (the pointer's span) and the
frame's stats words into a slot of a :class:`~gpuviz.graph.readback_ring.GPUReadbackRing`
after the graph, and reads slots back when their maps have resolved: the
frame path never waits, so a sample describes a frame or two ago (labels
are placed from the current window on the CPU; only which spans get one
lags). :meth:`ViewSampler.poll` with ``wait=True`` is for explicit reads
(offscreen images, tests). :class:`SamplePoller` polls from the event loop
after the last frame of an interaction, so that frame still gets its
labels and hover (no frame waits for a sample).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from ...graph import ComputeKernel
from ...graph.frame_readbacks import FrameReadbacks
from ...graph.readback_errors import ReadbackMapError
from ...graph.readback_ring import GPUReadbackRing
from ...graph.shaders import wgsl
from ...render.picking import NO_ID

__all__ = ["MAX_LABELS", "LABEL_FOCUSED", "Sample", "ViewSampler", "SamplePoller", "add_label_node", "label_bytes",
           "label_items", "label_dimmed", "sample_hover"]

MAX_LABELS = 4096
LABEL_FOCUSED = 1  # flag: the span is in the focus mask (labels.wgsl FLAG_FOCUSED)
_GROUPS = 64  # workgroups of 256 striding over the visible count (labels.wgsl GRID)
_STATS_BYTES, _PICK_BYTES = 64, 16
_POLL_S = 0.008  # seconds between trailing polls
_POLL_TRIES = 250  # give up after ~2 s (a sample that never resolves: a lost device)


def label_bytes() -> int:
    """Bytes of the label buffer: a count, 3 pad words, (span ID, flags) pairs."""
    return 16 + 8 * MAX_LABELS


def add_label_node(graph, *, id, view, records, chunk_rows, frame_views, labels, spans_count_word) -> str:
    """Add the label node: ``view`` (our View uniform handle), ``records``
    (the scene's record chunk views, at most 4; ``chunk_rows`` records in
    each but the last), ``frame_views`` (GPUTraceInteraction.views), ``labels``
    (an imported handle of :func:`label_bytes` bytes)."""
    fv = frame_views
    commands = fv["draw_commands"]
    reads = [fv["thread_rows"], fv["visible_rows"], commands, fv["focus_mask"]]

    def compile_labels(ctx):
        code = wgsl("widgets/trace/shaders/labels.wgsl", chunk_rows=chunk_rows, records_bindings=(1, 7, 8, 9))
        constants = {"MAX_LABELS": MAX_LABELS, "SPANS_COUNT_WORD": spans_count_word, "GRID": _GROUPS * 256}
        clear = ComputeKernel(ctx.device, code=code, entry_point="clear", constants=constants,
                              label=f"{ctx.node_id}-clear")
        main = ComputeKernel(ctx.device, code=code, entry_point="main", constants=constants, label=ctx.node_id)
        chunks = list(records) + [records[0]] * (4 - len(records))  # unused bindings: never read
        bindings = {0: view, 1: chunks[0], 2: fv["thread_rows"], 3: fv["visible_rows"], 4: commands,
                    5: fv["focus_mask"], 6: labels, 7: chunks[1], 8: chunks[2], 9: chunks[3]}

        def encode(compute_pass, frame):
            clear.dispatch(compute_pass, frame, bindings={6: labels}, workgroups=1)
            main.dispatch(compute_pass, frame, bindings=bindings, workgroups=_GROUPS)
        return encode

    return graph.add_compute_node(id=id, compile=compile_labels, resources=[
        (view, "uniform"), *[(r, "storage-read") for r in records], *[(r, "storage-read") for r in reads],
        (labels, "storage-read-write")])


@dataclass(frozen=True)
class Sample:
    """One frame's readback: ``key`` (the view it was drawn for), ``stats``
    (uint32 words of GPUTraceInteraction.stats), ``hover`` (span ID under the
    pointer or None), ``label_ids`` / ``label_flags`` (at most MAX_LABELS),
    ``candidates`` (labels wanted, also those past the cap)."""

    key: tuple
    stats: np.ndarray
    hover: int | None
    label_ids: np.ndarray
    label_flags: np.ndarray
    candidates: int


class ViewSampler:
    """Copies a frame's stats, pick output and labels into a readback ring
    and reads them back later.

    Parameters
    ----------
    device : wgpu.GPUDevice
    stats, pick_output, labels : wgpu.GPUBuffer
        Sources (64, 16 and :func:`label_bytes` bytes; COPY_SRC).

    Notes
    -----
    :meth:`record` never waits. A recorded slot maps only once its frame's
    host confirms the submission (:meth:`submitted`, which GPUCanvas's
    ``frame_submitted`` hook calls); a slot still unconfirmed when the next
    frame records belongs to an encoder that was dropped (a draw that
    raised), so it is cancelled and its key sampled again
    (:class:`~gpuviz.graph.frame_readbacks.FrameReadbacks`). :meth:`poll`
    starts the maps of confirmed slots and reads those already mapped
    (``wait=True``: every one, waiting).
    """

    def __init__(self, device, *, stats, pick_output, labels):
        self.device = device
        self.sources = ((stats, _STATS_BYTES), (pick_output, _PICK_BYTES), (labels, label_bytes()))
        self.ring = GPUReadbackRing(device, byte_length=sum(n for _, n in self.sources), slot_count=4,
                                    label="trace-viewer-samples")
        self._slots = FrameReadbacks()  # tagged with the sample's key
        self.sampled_key = None  # the key of the newest recorded sample
        self.latest = None

    def record(self, encoder, key) -> bool:
        """Copy this frame's words into a free slot (once per ``key``); False when none is free."""
        if self._slots.drop_unsubmitted():
            self.sampled_key = None  # the dropped frame's key is sampled again
        if key == self.sampled_key:
            return False
        try:
            slot = self.ring.try_acquire()
        except ReadbackMapError:  # a lost device: the widget reports the loss, frames just stop sampling
            return False
        if slot is None:
            return False
        offset = 0
        for buffer, n in self.sources:
            slot.copy(encoder, buffer, source_offset=0, byte_length=n, destination_offset=offset)
            offset += n
        self._slots.add(slot, key)
        self.sampled_key = key
        return True

    def submitted(self) -> None:
        """The encoder of the slots recorded since the last call was submitted: they may map now."""
        self._slots.submitted()

    @property
    def pending(self) -> int:
        return self._slots.pending

    def poll(self, *, wait: bool = False) -> bool:
        """Read the slots whose maps resolved (all, with ``wait``); True when
        :attr:`latest` changed. Slots are read in recording order."""
        samples = self._slots.read(wait=wait)
        for key, data in samples:
            self.latest = self._parse(key, data)
        return bool(samples)

    def forget(self) -> None:
        """The next :meth:`record` samples again (after a state the key does not cover)."""
        self.sampled_key = None

    @staticmethod
    def _parse(key, data) -> Sample:
        words = np.frombuffer(data, np.uint32)  # read() returns a bytes copy already
        stats = words[:_STATS_BYTES // 4].copy()
        pick = int(words[_STATS_BYTES // 4])
        labels = words[(_STATS_BYTES + _PICK_BYTES) // 4:]
        candidates = int(labels[0])
        pairs = labels[4:4 + 2 * min(candidates, MAX_LABELS)].reshape(-1, 2)
        return Sample(key=key, stats=stats, hover=None if pick == NO_ID else pick,
                      label_ids=pairs[:, 0].astype(np.int64), label_flags=pairs[:, 1].copy(),
                      candidates=candidates)

    def destroy(self) -> None:
        self._slots.cancel_all()
        self.ring.destroy()


def label_items(index, state, sample):
    """(span IDs, dimmed) of the labels of ``sample`` (empty before the
    first) in the view ``state``: O(labels)."""
    if sample is None:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    ids = sample.label_ids[sample.label_ids < index.n]
    return ids, label_dimmed(index, state, ids, sample.label_flags[:len(ids)])


def label_dimmed(index, state, ids, flags):
    """bool per label span drawn dimmed (search highlight, focus "dim"):
    O(labels) from the name codes and the GPU's focus flags."""
    dim = np.zeros(len(ids), bool)
    if state.search is not None:
        dim |= ~state.search[index.name_id[ids]]
    if len(state.focus_seeds):
        dim |= (flags & LABEL_FOCUSED) == 0
    return dim


def sample_hover(sample, position, span_count):
    """``(found, hover)``: whether ``sample`` was drawn for the pointer at
    ``position`` and, if so, the span it found there (None: none)."""
    if sample is None or sample.key[3] is None or sample.key[3] != position:
        return False, None
    return True, sample.hover if sample.hover is not None and sample.hover < span_count else None


class SamplePoller:
    """Polls a :class:`ViewSampler` from the running event loop while samples
    are in flight and calls ``on_sample()`` when one arrives; ``on_sample``
    returns True when the overlay changed, and then ``redraw()`` is called.
    ``alive()`` False stops the polling (a closed widget, a lost device).
    Each poll holds ``lock`` (the widget's call lock), so it never maps a
    slot while another thread records or closes. Without a running loop
    (scripts) it does nothing."""

    def __init__(self, sampler, *, on_sample, redraw, alive, lock):
        self.sampler = sampler
        self._on_sample, self._redraw, self._alive = on_sample, redraw, alive
        self._lock = lock
        self._handle = None

    def later(self) -> None:
        """Start polling unless a poll is already scheduled or nothing is in flight."""
        if self._handle is not None or not self.sampler.pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._handle = loop.call_later(_POLL_S, self._poll, 0)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _poll(self, tries) -> None:
        with self._lock:
            self._handle = None
            if not self._alive():
                return
            if self.sampler.poll():
                if self._on_sample():
                    self._redraw()
            elif self.sampler.pending and tries < _POLL_TRIES:
                try:
                    self._handle = asyncio.get_running_loop().call_later(_POLL_S, self._poll, tries + 1)
                except RuntimeError:
                    pass
