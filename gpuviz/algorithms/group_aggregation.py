"""GPUGroupAggregation: counts and float32 statistics per dense uint32 group
code, on the keyed-aggregation engine (:mod:`.keyed_aggregation`); a group
code is the key of a row (``shaders/group_keys.wgsl``)."""

from __future__ import annotations

import wgpu

from ..errors import GraphValidationError
from ..graph.resources import GraphDataView
from .keyed_aggregation import CompiledBuffer, KeyBinding, KeyedAggregation, KeySpec

__all__ = ["GPUGroupAggregation"]

BU = wgpu.BufferUsage
_SPEC = KeySpec(template="algorithms/shaders/group_keys.wgsl", keys_name="codes", key_formats=("uint32",))


class GPUGroupAggregation(KeyedAggregation):
    """Count rows, or sum / min / max / mean their float32 values, per dense
    uint32 group code.

    Parameters
    ----------
    id : str
        Prefix of node and resource IDs (``"{id}-accumulate"``...).
    codes : GraphDataView or GraphVectorView
        ``uint32`` group codes; row ``i`` contributes to output row ``codes[i]``.
    output : GraphDataView
        Packed, ``group_count`` rows: ``uint32`` for ``"count"``, else ``float32``.
    operation : {"count", "sum", "min", "max", "mean"}
    values : GraphDataView or GraphVectorView, optional
        ``float32`` values aligned with ``codes`` (required except for count).
    group_count : int, optional
        Number of groups; defaults to ``output.length``.
    mask : GraphDataView or GraphVectorView, optional
        ``uint32`` aligned with ``codes``: zero excludes a row, nonzero keeps it.
    overflow : GraphDataView, optional
        One ``uint32`` row that receives the number of accepted rows whose
        code is ``>= group_count``. When omitted the primitive makes its own
        word when the graph compiles (:attr:`overflow_buffer`, readable with
        ``queue.read_buffer``; destroyed with the compiled graph).
    filter_values : GraphDataView or GraphVectorView, optional
        ``float32`` aligned with ``codes``; with it only rows whose value lies
        in ``filter_range`` count (NaN never passes).
    filter_range : (float, float), optional
        Inclusive ``(lo, hi)``; default ``(-inf, inf)``. Change it between
        encodings with :meth:`set_filter_range` (no recompilation).
    tuning : AggregationTuning, optional

    Notes
    -----
    Vector inputs must share one chunk topology (equal ordered chunk
    lengths); chunks are read in place, never packed, and empty chunks add
    no dispatch. Each encoding clears the output and the overflow word, then
    accumulates every chunk. Counts are exact and wrap modulo 2**32. Rows
    with a non-finite value are ignored by sum / min / max / mean (they still
    count as overflow when their code is out of range). Empty groups hold
    +0.0 for sum and NaN for min, max and mean. Sum and mean add into
    global memory with native float atomics where the device has them
    (``tuning.float_atomics``), else through a compare-exchange loop on
    float32 bits; either way their accumulation order, and hence their
    rounding, is not deterministic (native adds may also flush subnormal
    values to zero); min and max are deterministic. Min prefers -0 and max
    +0. Up to ``tuning.privatize_max_keys`` groups accumulate in workgroup
    memory first.

    Does not submit, map or read back; the caller owns ``output`` and
    ``overflow``.
    """

    def __init__(self, *, id, codes, output, operation="count", values=None, group_count=None, mask=None,
                 overflow=None, filter_values=None, filter_range=None, tuning=None):
        count = output.length if group_count is None and isinstance(output, GraphDataView) else group_count
        super().__init__(id=id, spec=_SPEC, keys=codes, values=values, output=output, key_count=count,
                         operation=operation, mask=mask, filter_values=filter_values, filter_range=filter_range,
                         tuning=tuning)
        if overflow is not None:
            if not isinstance(overflow, GraphDataView) or overflow.format.name != "uint32" or overflow.length < 1:
                raise GraphValidationError(f"{self._owner} overflow must be a uint32 GraphDataView with at least "
                                           f"one row (got {overflow!r})")
            if overflow.handle is self.output.handle:
                raise GraphValidationError(f"{self._owner} overflow must not share a buffer with output")
            self._refuse_aliasing(overflow=overflow)
        self.overflow = overflow
        self._own_overflow = None if overflow is not None else CompiledBuffer(
            label=f"{id}-overflow", usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST, data=lambda: bytes(4))

    @property
    def overflow_buffer(self):
        """The primitive's own overflow word (``wgpu.GPUBuffer``, 4 bytes)
        once the graph compiled; None before, and with a caller ``overflow``."""
        return None if self._own_overflow is None else self._own_overflow.buffer

    def _key_resources(self, graph) -> tuple:
        word = self.overflow if self.overflow is not None else self._own_overflow
        return (KeyBinding(7, word, "storage-read-write", offset_constant="OVERFLOW_OFFSET", clear=True),), ()
