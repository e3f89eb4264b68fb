"""GPUBatchSort: stable paired uint32 sort of every chunk of a vector, each
chunk its own domain."""

from __future__ import annotations

from ..graph.checks import check_id
from ..errors import GraphValidationError
from .sort import SortTuning, add_sort_domain, check_args, check_fits, check_views
from .validation import checked_tuning

__all__ = ["GPUBatchSort"]


class GPUBatchSort:
    """Sort each chunk of a vector view independently (stable, uint32 keys).

    Parameters
    ----------
    id : str
        Prefix of the nodes and transients; chunk ``i`` uses ``"{id}-chunk-{i}"``.
    keys, output_keys : GraphVectorView
        ``uint32`` vector views with the same ordered chunk lengths.
    values, output_values : GraphVectorView, optional
        ``uint32`` payload vectors with the same chunk lengths (both or neither).
    direction : {"ascending", "descending"}
    key_bits : int
        Only the low ``key_bits`` bits (1..32) of a key order it.
    tuning : SortTuning, optional

    Notes
    -----
    Every chunk is its own sort domain: the number, order and lengths of the
    chunks are kept, rows never move between chunks, and empty chunks add
    nothing. The algorithm is chosen per chunk (one-workgroup bitonic up to
    ``tuning.small_max`` rows, radix passes above). No packed copy of the
    vector is made: each chunk is read and written in place in its own buffer
    range; scratch is per-chunk graph transients (reused between chunks by
    the graph's transient planning). A single GraphDataView is accepted as a
    vector of one chunk. Outputs must live in other buffers than the inputs.
    Declares nodes only; never submits or reads back.
    """

    def __init__(self, *, id: str, keys, output_keys, values=None, output_values=None,
                 direction: str = "ascending", key_bits: int = 32, tuning: SortTuning | None = None):
        self.id = check_id("GPUBatchSort", id)
        self.keys, self.values = keys, values
        self.output_keys, self.output_values = output_keys, output_values
        self.direction = direction
        self.key_bits = key_bits
        self.tuning = checked_tuning("GPUBatchSort", id, tuning, SortTuning)
        self.node_ids: list = []
        self.algorithms: list = []

    def add_to_graph(self, graph) -> list:
        """Validate the vectors and add every chunk's nodes; returns their IDs.

        ``self.algorithms`` then lists each chunk's algorithm ("empty",
        "bitonic" or "radix") in chunk order.
        """
        check_args("GPUBatchSort", self.id, self.direction, self.key_bits, self.tuning, graph.device)
        _kind, domains = check_views("GPUBatchSort", self.id, graph, self.keys, self.values, self.output_keys,
                                     self.output_values)
        if not domains:
            raise GraphValidationError(f'GPUBatchSort "{self.id}" keys have no chunks')
        check_fits("GPUBatchSort", self.id, domains, self.tuning, graph.device)
        ids, algorithms = [], []
        for i, (keys, values, out_keys, out_values) in enumerate(domains):
            n = keys.length
            algorithms.append("empty" if n == 0 else "bitonic" if n <= self.tuning.small_max else "radix")
            ids += add_sort_domain(graph, prefix=f"{self.id}-chunk-{i}", keys=keys, values=values,
                                   out_keys=out_keys, out_values=out_values,
                                   descending=self.direction == "descending", key_bits=self.key_bits,
                                   tuning=self.tuning)
        self.node_ids, self.algorithms = ids, algorithms
        return ids
