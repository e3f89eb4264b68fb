"""The readback members of the gpuviz error family, shared by the ring, its
slots and its staging buffers."""

from ..errors import GraphError, GraphStateError

__all__ = ["ReadbackTimeoutError", "ReadbackRingExhaustedError", "ReadbackMapError"]


class ReadbackTimeoutError(GraphError, TimeoutError):
    """A readback wait (``acquire`` or ``read``) ran past its timeout."""


class ReadbackRingExhaustedError(GraphStateError):
    """Every slot is held by the calling thread and waits on it (recording,
    or submitted but unread), so waiting for a free slot would never end."""


class ReadbackMapError(GraphError):
    """A readback cannot complete: a staging buffer failed to map, or the
    device was lost (``device.destroy()`` included) at any point of a
    slot's life; the ring is lost from then on."""
