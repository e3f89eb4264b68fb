"""Transient lifetime planning.

Each transient lives from the first to the last compiled node that uses it.
Transients whose intervals do not overlap share one physical allocation
(whole-object reuse, no byte suballocation): the physical buffer takes the
maximum size and the union of usages, never a mapping usage. Textures are
shared only between identical descriptors (size, format, mips, samples).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PhysicalSlot", "plan_transients"]


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
