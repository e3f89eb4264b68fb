"""Capacity tiers of a TraceViewer: the span capacities its command graph
is compiled for (one compilation per tier, chosen at load)."""

from __future__ import annotations

__all__ = ["CAPACITY_TIERS", "capacity_tier"]

#: Span capacities a TraceViewer compiles for (``capacity=None`` takes the
#: smallest >= the span count): the benchmark's 1M, 4M, 25M and 100M tiers
#: (``gpuviz.trace.synthetic`` sizes) and steps of at most 4x between.
CAPACITY_TIERS = (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 4 << 20, 16 << 20, 25 << 20, 64 << 20, 100 << 20)


def capacity_tier(spans: int) -> int:
    """The smallest of :data:`CAPACITY_TIERS` holding ``spans`` (past the
    largest: ``spans`` rounded up to a multiple of it)."""
    for tier in CAPACITY_TIERS:
        if spans <= tier:
            return tier
    top = CAPACITY_TIERS[-1]
    return -(-spans // top) * top
