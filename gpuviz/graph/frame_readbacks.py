"""FrameReadbacks: readback slots that frames sampled, read once their frame is known submitted.

A drawable copies a sample into a :class:`~gpuviz.graph.readback_slot.ReadbackSlot`
while it records a frame, but the frame's host submits the encoder, and a
draw that raises after the copy leaves an encoder that is never submitted.
Such a slot's copies never run: mapping it would return whatever an older
sample left in its staging buffer. So a slot is held as *recorded* until
the host confirms the submission (:meth:`FrameReadbacks.submitted`, which
GPUCanvas's ``frame_submitted`` drawable hook reaches), and one still
unconfirmed when the next frame starts is cancelled
(:meth:`FrameReadbacks.drop_unsubmitted`).
"""

from __future__ import annotations

from collections import deque

from .readback_errors import ReadbackMapError

__all__ = ["FrameReadbacks"]


class FrameReadbacks:
    """The sample slots of one drawable's frames, each with a tag (the
    caller's key or None), read back in recording order.

    Notes
    -----
    Never waits unless :meth:`read` is asked to. Not thread-safe: one
    drawable's frame loop uses it. A lost device ends what is in flight:
    :meth:`read` drops the remaining slots and returns what it read before.
    """

    def __init__(self):
        self._recorded = []  # (slot, tag) of the frame being recorded, its submission not yet confirmed
        self._pending = deque()  # (slot, tag) of submitted frames, oldest first

    def add(self, slot, tag=None) -> None:
        """``slot``'s copies were recorded into the frame being built."""
        self._recorded.append((slot, tag))

    def submitted(self) -> None:
        """The encoder of the slots added since the last call was submitted: they may map now."""
        self._pending.extend(self._recorded)
        self._recorded.clear()

    def drop_unsubmitted(self) -> bool:
        """Cancel the slots of a frame whose submission was never confirmed
        (call when the next frame starts); True when there were any."""
        if not self._recorded:
            return False
        for slot, _ in self._recorded:
            slot.cancel()  # quiet on a lost device (ReadbackSlot.cancel)
        self._recorded.clear()
        return True

    @property
    def pending(self) -> int:
        """Submitted slots not yet read."""
        return len(self._pending)

    def read(self, *, wait: bool = False) -> list:
        """``[(tag, bytes)]`` of the submitted slots whose maps resolved,
        oldest first, stopping at the first still pending (``wait``: every
        one, waiting). Starts the maps of the slots it reaches."""
        out = []
        while self._pending:
            slot, tag = self._pending[0]
            try:
                if slot.state == "acquired":
                    slot.map_async()
                data = slot.read(wait=wait)
            except ReadbackMapError:  # a lost device: drop what was in flight
                self._pending.clear()
                break
            if data is None:
                break
            self._pending.popleft()
            out.append((tag, data))
        return out

    def cancel_all(self) -> None:
        """Release every slot, recorded or submitted, without reading it."""
        for slot, _ in (*self._recorded, *self._pending):
            slot.cancel()
        self._recorded.clear()
        self._pending.clear()
