"""The command-graph core: logical resources, nodes, hazards, transient
allocation, the compiled graph, the compute-kernel helper, the shader
builder and the readback ring.

Knows nothing of tables, algorithms or widgets.
"""

from .compiled import CompiledGPUCommandGraph, GraphFrame, GraphStats
from .graph import GPUCommandGraph
from .kernel import ComputeKernel
from .nodes import NodeCompileContext
from .readback_errors import ReadbackMapError, ReadbackRingExhaustedError, ReadbackTimeoutError
from .readback_ring import GPUReadbackRing
from .readback_slot import ReadbackSlot
from .resources import (GraphBufferHandle, GraphDataView, GraphTextureHandle, GraphTextureView,
                        GraphVectorView)
