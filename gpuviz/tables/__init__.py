"""gpuviz.tables: typed GPU data, chunked vectors, record batches and tables.

The GPU-resident counterpart of Arrow's columnar model. These objects name
ranges of ``wgpu.GPUBuffer`` memory; they never record commands. Uploads
happen only in the ``from_numpy``/``allocate`` constructors and readback only
in :func:`read_array`. Arrow conversion lives in :mod:`gpuviz.arrow`.
Table operations that run on the GPU (:class:`GPUInterleave`) are graph
primitives: ``add_to_graph`` declares their node, they never submit.
"""

from ..formats import GPUVectorFormat
from .data import GPUData
from .interleave import GPUInterleave
from .readback import read_array
from .record_batch import GPURecordBatch
from .schema import GPUSchema
from .table import GPUTable
from .vector import GPUVector

__all__ = ["GPUVectorFormat", "GPUData", "GPUInterleave", "GPUVector", "GPURecordBatch", "GPUTable", "GPUSchema",
           "read_array"]
