"""Dispatch sizing and device paths shared by the algorithm kernels."""

from __future__ import annotations

__all__ = ["WORKGROUP", "ceil_div", "use_subgroups"]

WORKGROUP = 256  # invocations per workgroup of every algorithm kernel


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for non-negative integers (workgroup and tile counts)."""
    return -(-a // b)


def use_subgroups(ctx, subgroups: bool | None) -> bool:
    """Whether a kernel takes its subgroup variant: the device has the
    ``subgroup`` feature and the tuning's ``subgroups`` is not False."""
    return bool(ctx.capabilities.subgroups) and subgroups is not False
