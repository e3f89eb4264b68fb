"""Data-parallel GPU algorithms composed as command-graph nodes.

Each algorithm is a small object with ``add_to_graph(graph)`` that declares
graph transients and compute nodes whose IDs derive from its own ``id``. None
of them submits, maps or reads back.
"""

from .compaction import GPUCompaction, GPUIndexedRangeCompaction, GPUPartitionedIndexedRangeCompaction, IndexedRangeLayout
from .grid_aggregation import GPUGridAggregation, GPUGridBinning
from .grid_statistic import GRID_STATISTICS, GPUGridStatistic
from .aggregation_tuning import AggregationTuning
from .ancestor_projection import GPUAncestorProjection
from .graph_traversal import UNREACHED, GPUGraphTraversal
from .group_aggregation import GPUGroupAggregation
from .gather import GPUGather
from .group_filter import GPUGroupFilter
from .hierarchy_layout import GPUHierarchyLayout
from .hash_batch_index import GPUBatchHashIndex
from .hash_batch_join import GPUBatchHashJoin
from .hash_index import GPUHashIndex
from .hash_join import GPUHashJoin
from .hash_query import GPUHashIndexQuery
from .hash_table import EMPTY_KEY, NOT_FOUND
from .histogram import GPUHistogram
from .mask import GPUMask
from .reduction import GPUReduction, ReductionTuning
from .scan import GPUScan, ScanTuning
from .batch_sort import GPUBatchSort
from .segmented_sort import GPUSegmentedSort
from .sort import GPUSort, SortTuning

__all__ = ["GPUScan", "GPUCompaction", "GPUIndexedRangeCompaction", "GPUPartitionedIndexedRangeCompaction",
           "IndexedRangeLayout", "ScanTuning", "GPUMask", "GPUReduction", "ReductionTuning", "GPUHistogram", "GPUGridBinning", "GPUGridAggregation",
           "GPUGridStatistic", "GRID_STATISTICS", "GPUGroupFilter", "GPUGather", "GPUGroupAggregation", "AggregationTuning",
           "GPUSort", "GPUBatchSort", "GPUSegmentedSort", "SortTuning",
           "GPUHierarchyLayout", "GPUGraphTraversal", "UNREACHED", "GPUAncestorProjection",
           "GPUHashIndex", "GPUBatchHashIndex", "GPUHashIndexQuery", "GPUHashJoin", "GPUBatchHashJoin",
           "EMPTY_KEY", "NOT_FOUND"]
