"""Spatial acceleration over GPU-resident points: GPUGridIndex (uniform grid,
rebuilt every encoding), GPUGridIndexQuery (conservative cell candidates),
GPUPointSpatialFilter (the exact predicate, over all rows or candidates),
GPUBVH (complete binary tree of boxes, refit every encoding), GPUSegmentedBVH
(many small such trees, one workgroup each) and GPUBVHQuery.

Every primitive is a small object with ``add_to_graph(graph)`` that declares
transients and nodes whose IDs derive from its own ``id``; none submits,
maps or reads back. Queries are one GPU-resident record
(:func:`write_query`), so a new query is a buffer write, not a recompile.
"""

from .bvh import BVH_QUERY_STATS, BVH_STATS, GPUBVH, GPUBVHQuery
from .grid import GRID_STATS, GPUGridIndex
from .grid_query import QUERY_STATS, GPUGridIndexQuery
from .point_filter import FILTER_STATS, GPUPointSpatialFilter
from .segmented_bvh import MAX_TREE_ROWS, SEGMENTED_BVH_STATS, GPUSegmentedBVH
from .query import MAX_POLYGON_VERTICES, QUERY_KINDS, QUERY_WORDS, query_record, write_query

__all__ = ["GPUGridIndex", "GPUGridIndexQuery", "GPUPointSpatialFilter", "GPUBVH", "GPUSegmentedBVH", "GPUBVHQuery",
           "GRID_STATS", "QUERY_STATS", "FILTER_STATS", "BVH_STATS", "BVH_QUERY_STATS", "SEGMENTED_BVH_STATS",
           "MAX_TREE_ROWS",
           "QUERY_WORDS", "QUERY_KINDS", "MAX_POLYGON_VERTICES", "query_record", "write_query"]
