"""gpuviz: GPU-resident interactive visualization for Jupyter notebooks.

``import gpuviz`` is headless and light: it imports wgpu and numpy only.
Jupyter widgets live in :mod:`gpuviz.widgets`, Arrow adapters in
:mod:`gpuviz.arrow`.
"""

from .device import DeviceCapabilities, device_capabilities, request_device
from .formats import GPUVectorFormat
from .graph.errors import *  # noqa: F401,F403 - the error family is public
from .graph import (CompiledGPUCommandGraph, ComputeKernel, GPUCommandGraph, GraphBufferHandle, GraphDataView,
                    GraphFrame, GraphStats, GraphTextureHandle, GraphTextureView, GraphVectorView,
                    NodeCompileContext)
from .algorithms import (GPUCompaction, GPUIndexedRangeCompaction, GPUMask, GPUPartitionedIndexedRangeCompaction,
                         GPUReduction, GPUScan, IndexedRangeLayout, ScanTuning)
from .algorithms.grid_aggregation import GPUGridAggregation, GPUGridBinning
from .algorithms.group_aggregation import AggregationTuning, GPUGroupAggregation
from .algorithms.histogram import GPUHistogram
from .algorithms.sort import GPUSort, SortTuning
from .algorithms.batch_sort import GPUBatchSort
from .algorithms.segmented_sort import GPUSegmentedSort
from .tables import GPUData, GPUVector, GPURecordBatch, GPUTable, GPUSchema, read_array
from .graph.readback_ring import (GPUReadbackRing, ReadbackMapError, ReadbackRingExhaustedError, ReadbackSlot,
                                  ReadbackTimeoutError)
from .render import DrawCommandBuffer

__version__ = "0.1.0"
