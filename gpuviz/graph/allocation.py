"""Transient lifetime planning.

Each transient lives from the first to the last compiled node that uses it.
Transients whose intervals do not overlap share one physical allocation
(whole-object reuse, no byte suballocation): the physical buffer takes the
maximum size and the union of usages, never a mapping usage. Textures are
shared only between identical descriptors (size, format, mips, samples).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .resources import GraphBufferHandle, GraphTextureHandle

__all__ = ["PhysicalSlot", "plan_transients", "plan_graph_transients"]


@dataclass
class PhysicalSlot:
    """One physical allocation and the logical transients it hosts."""

    key: object  # None for buffers; the texture descriptor key for textures
    byte_length: int
    usage: int
    tenants: list = field(default_factory=list)
    free_after: int = -1  # last compiled position that uses it


def plan_transients(intervals, *, key_of=lambda h: None, size_of=lambda h: h.byte_length) -> tuple:
    """Assign transients to physical slots.

    Parameters
    ----------
    intervals : list of (handle, first, last)
        Compiled positions of first and last use of each transient.
    key_of : callable
        Compatibility key; only slots with equal keys are shared.
    size_of : callable
        Bytes one tenant needs.

    Returns
    -------
    (slots, assignment)
        The physical slots and a dict handle -> slot. Planning only: nothing
        is allocated here.
    """
    slots = []
    assignment = {}
    for handle, first, last in sorted(intervals, key=lambda item: (item[1], item[2])):
        need = size_of(handle)
        key = key_of(handle)
        free = [s for s in slots if s.key == key and s.free_after < first]
        fitting = [s for s in free if s.byte_length >= need]
        if fitting:  # smallest slot that already fits wastes least
            slot = min(fitting, key=lambda s: s.byte_length)
        elif free:  # otherwise grow the largest free one
            slot = max(free, key=lambda s: s.byte_length)
        else:
            slot = PhysicalSlot(key=key, byte_length=0, usage=0)
            slots.append(slot)
        slot.byte_length = max(slot.byte_length, need)
        slot.usage |= handle.usage
        slot.tenants.append(handle)
        slot.free_after = last
        assignment[handle] = slot
    return slots, assignment


def plan_graph_transients(order) -> tuple:
    """Plan every transient of a compiled node ``order``.

    Buffers are padded to whole words (at least 4 bytes); textures are
    shared only between equal descriptors.

    Returns
    -------
    (buffer_slots, texture_slots, assignment)
        Physical slots of each kind and a dict handle -> slot over both.
        Planning only: nothing is allocated here.
    """
    intervals = {}
    for position, node in enumerate(order):
        for handle, _use, _view in node.uses:
            if handle.lifetime == "transient":
                first, _last = intervals.get(handle, (position, position))
                intervals[handle] = (first, position)
    buffer_slots, buffers = plan_transients(
        [(h, a, b) for h, (a, b) in intervals.items() if isinstance(h, GraphBufferHandle)],
        size_of=lambda h: max(4, -(-h.byte_length // 4) * 4))
    texture_slots, textures = plan_transients(
        [(h, a, b) for h, (a, b) in intervals.items() if isinstance(h, GraphTextureHandle)],
        key_of=lambda h: (h.size, h.format, h.mip_level_count, h.sample_count, h.dimension), size_of=lambda h: 0)
    return buffer_slots, texture_slots, {**buffers, **textures}
