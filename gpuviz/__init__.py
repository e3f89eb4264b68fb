"""gpuviz: GPU-resident interactive visualization for Jupyter notebooks.

``import gpuviz`` is headless and light: it imports wgpu and numpy only.
Jupyter widgets live in :mod:`gpuviz.widgets`, Arrow adapters in
:mod:`gpuviz.arrow`.
"""

from .device import DeviceCapabilities, device_capabilities, request_device
from .formats import GPUVectorFormat
from .errors import *  # noqa: F401,F403 - the error family is public
from .graph import (CompiledGPUCommandGraph, ComputeKernel, GPUCommandGraph, GPUReadbackRing, GraphBufferHandle,
                    GraphDataView, GraphFrame, GraphStats, GraphTextureHandle, GraphTextureView, GraphVectorView,
                    NodeCompileContext, ReadbackMapError, ReadbackRingExhaustedError, ReadbackSlot,
                    ReadbackTimeoutError)
from .tables import GPUData, GPUInterleave, GPUVector, GPURecordBatch, GPUTable, GPUSchema, read_array
from .render import (Axis, AxisLayout, ColourBarLayout, DrawCommandBuffer, GlyphAtlas, GPUColourRange,
                     GPUIndexPickingTarget, PlotOverlay, RectLayer, TextLayer, colour_bar_layout, glyph_atlas)
from .render import (Ticks, category_ticks, format_duration, format_durations, format_number, format_numbers,
                     log_ticks, nice_ticks, time_ticks)
from .algorithms import (AggregationTuning, GPUBatchSort, GPUCompaction, GPUGridAggregation, GPUGridBinning,
                         GPUGridStatistic, GPUGather, GPUGroupAggregation, GPUGroupFilter, GPUHistogram, GPUHierarchyLayout,
                         GPUGraphTraversal, GPUHashIndex, GPUBatchHashIndex, GPUHashIndexQuery, GPUHashJoin,
                         GPUBatchHashJoin,
                         GPUAncestorProjection, GPUIndexedRangeCompaction, GPUMask,
                         GPUPartitionedIndexedRangeCompaction, GPUReduction, GPUScan, GPUSegmentedSort, GPUSort,
                         IndexedRangeLayout, ReductionTuning, ScanTuning, SortTuning)

from .spatial import (GPUBVH, GPUBVHQuery, GPUGridIndex, GPUGridIndexQuery, GPUPointSpatialFilter, GPUSegmentedBVH,
                      query_record, write_query)
from .workflows import GPUVisibilityWorkflow, frustum_planes


def show(widget, *, where: str = "right", title: str | None = None) -> None:
    """Show a live view of ``widget`` in a JupyterLab / Notebook 7 panel, or
    inline where the gpuviz extension is absent (see
    :func:`gpuviz.widgets.show.show`). Imports the widget stack on first call,
    so ``import gpuviz`` stays headless; does not wait for the front end."""
    from importlib import import_module

    return import_module("gpuviz.widgets.show").show(widget, where=where, title=title)


__version__ = "0.1.0"
