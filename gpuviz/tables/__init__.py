"""gpuviz.tables: typed GPU data, chunked vectors, record batches and tables.

The GPU-resident counterpart of Arrow's columnar model. These objects name
ranges of ``wgpu.GPUBuffer`` memory; they never record commands. Uploads
happen only in the ``from_numpy``/``allocate`` constructors and readback only
in :func:`read_array`. Arrow conversion lives in :mod:`gpuviz.arrow`.
"""

from ..formats import GPUVectorFormat
from .data import GPUData
from .readback import read_array
from .record_batch import GPURecordBatch
from .schema import GPUSchema
from .table import GPUTable
from .vector import GPUVector

__all__ = ["GPUVectorFormat", "GPUData", "GPUVector", "GPURecordBatch", "GPUTable", "GPUSchema", "read_array"]
