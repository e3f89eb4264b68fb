"""A TraceViewer's use of its readback samples (:class:`.labels.ViewSampler`):
the labels of the latest sample, the hover it found, and the trailing poll
that brings the last frame's sample back once an interaction stops (no
frame waits for one)."""

from __future__ import annotations

import asyncio

import numpy as np

from .frames import label_dimmed

__all__ = ["label_items", "apply_sample", "poll_later"]

_POLL_S = 0.008  # seconds between trailing polls
_POLL_TRIES = 250  # give up after ~2 s (a sample that never resolves: a lost device)


def label_items(viewer, sample):
    """(span IDs, dimmed) of the labels of ``sample`` (empty before the first): O(labels)."""
    if sample is None:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    ids = sample.label_ids[sample.label_ids < viewer.index.n]
    return ids, label_dimmed(viewer, ids, sample.label_flags[:len(ids)])


def apply_sample(viewer) -> None:
    """Take the hover from the latest sample when it was drawn for the current pointer."""
    sample = viewer._graph.sampler.latest
    if sample is not None and sample.key[3] is not None and sample.key[3] == viewer._pointer:
        hover = sample.hover if sample.hover is not None and sample.hover < viewer.index.n else None
        viewer._hover = hover


def poll_later(viewer) -> None:
    """While samples are in flight, poll them from the event loop and redraw
    once one changes the overlay (so the last frame of an interaction still
    gets its labels and hover). Without a running loop (scripts): nothing."""
    if viewer._trailing is not None or not viewer._graph.sampler.pending:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    viewer._trailing = loop.call_later(_POLL_S, _trailing_poll, viewer, 0)


def _trailing_poll(viewer, tries) -> None:
    viewer._trailing = None
    graph = viewer._graph
    if graph is None or viewer.device_lost is not None:
        return
    if graph.sampler.poll():
        apply_sample(viewer)
        if graph.sampler.latest is not viewer._drawn_sample:
            viewer.canvas.request_draw()
    elif graph.sampler.pending and tries < _POLL_TRIES:
        try:
            viewer._trailing = asyncio.get_running_loop().call_later(_POLL_S, _trailing_poll, viewer, tries + 1)
        except RuntimeError:
            pass
