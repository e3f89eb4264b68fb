"""The readback members of the gpuviz error family, shared by the ring, its
slots and its staging buffers."""

from ..errors import GraphError, GraphStateError

__all__ = ["ReadbackTimeoutError", "ReadbackRingExhaustedError", "ReadbackMapError"]


class ReadbackTimeoutError(GraphError, TimeoutError):
    """A readback wait (``acquire`` or ``read``) ran past its timeout."""


class ReadbackRingExhaustedError(GraphStateError):
    """Every slot waits on the caller (recording, or submitted but unread),
    so waiting for a free slot would never end."""


class ReadbackMapError(GraphError):
    """Mapping a staging buffer failed: the device was lost or the ring's
    buffers were destroyed while a map was pending."""
