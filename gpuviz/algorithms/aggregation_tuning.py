"""AggregationTuning: the structural knobs shared by GPUGroupAggregation,
GPUHistogram, GPUGridBinning and GPUGridAggregation."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AggregationTuning", "WORKGROUP_SIZE"]

#: Invocations per workgroup of every keyed-aggregation kernel (WG in the WGSL).
WORKGROUP_SIZE = 256


@dataclass(frozen=True, kw_only=True)
class AggregationTuning:
    """Structural knobs of keyed aggregation (benchmarks and tests vary them).

    Every field compiles into the kernels; none changes results beyond the
    rounding order of float sums. A plain value object: it allocates, records
    and submits nothing.

    Attributes
    ----------
    rows_per_invocation : int
        At most this many rows per invocation: a workgroup covers up to
        ``256 * rows_per_invocation`` consecutive rows of one chunk.
    workgroups_per_chunk : int
        Fewer rows per invocation are used while a chunk would otherwise get
        fewer workgroups than this (each chunk is its own dispatch, so a
        small tile count keeps a large GPU busy); 0 always uses
        ``rows_per_invocation``.
    privatize_max_keys : int
        Up to this many output rows (and while they fit in workgroup memory)
        a workgroup accumulates into its own ``var<workgroup>`` copy and
        flushes it once (count/min/max: native global atomics; sum/mean: one
        partial per workgroup, summed by a reduce pass); above it, rows go
        straight to global atomics (low contention on large grids).
    subgroups : bool or None
        None lets privatized sum/mean over at most ``subgroup_max_keys`` keys
        combine equal keys across a subgroup first where the device has
        subgroup operations; False forces the portable path.
    subgroup_max_keys : int
    float_atomics : bool or None
        How sum and mean add floats into global memory (the global path, and
        privatized flushes that do not use partials). None (auto): native
        ``atomicAdd`` on ``atomic<f32>`` where the device has the
        ``shader-float32-atomic`` feature, unless the environment variable
        ``GPUVIZ_FLOAT_ATOMICS`` is ``0``; else the portable compare-exchange
        loop on float32 bits. False forces the loop; True requires the
        feature (``add_to_graph`` raises without it). Count, min and max use
        integer atomics either way.
    """

    rows_per_invocation: int = 16
    workgroups_per_chunk: int = 1024
    privatize_max_keys: int = 1024
    subgroups: bool | None = None
    subgroup_max_keys: int = 16
    float_atomics: bool | None = None

    def items(self, rows: int) -> int:
        """Rows per invocation for a chunk of ``rows`` rows."""
        if self.workgroups_per_chunk <= 0:
            return self.rows_per_invocation
        return max(1, min(self.rows_per_invocation, -(-rows // (WORKGROUP_SIZE * self.workgroups_per_chunk))))
