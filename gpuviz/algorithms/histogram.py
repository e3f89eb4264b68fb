"""GPUHistogram: counts of float32 values in equal-width or irregular bins.

Built on the keyed-aggregation engine of :mod:`.group_aggregation`: a bin
is the key of a row (``shaders/histogram_keys.wgsl``).
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.errors import GraphStateError, GraphValidationError
from ..graph.resources import GraphDataView
from .group_aggregation import _edge_table, _KeyedAggregation, _finite_range, _param_view, _source

__all__ = ["GPUHistogram"]


class GPUHistogram(_KeyedAggregation):
    """Count float32 values into ``bin_count`` bins.

    Give exactly one of ``domain`` and ``edges``.

    Parameters
    ----------
    id : str
        Prefix of node and resource IDs (``"{id}-accumulate"``...).
    input : GraphDataView or GraphVectorView
        ``float32`` values (packed or strided); vectors are read chunk by
        chunk in place.
    output : GraphDataView
        Packed ``uint32``, ``bin_count`` rows.
    bin_count : int, optional
        Number of bins; defaults to ``output.length`` with ``domain``, to
        ``len(edges) - 1`` with ``edges``.
    domain : (float, float) or GraphDataView, optional
        Equal-width bins over ``[lo, hi]`` (float32 values): bin ``i`` is
        ``[lo + i * w, lo + (i + 1) * w)`` with ``w = (hi - lo) / bin_count``
        in real arithmetic, and ``hi`` belongs to the last bin. A pair is a
        parameter: change it with :meth:`set_domain` without recompiling; the
        primitive stores the edges (rounded up to float32) and corrects each
        float32 bin estimate against them, so values on edges land exactly
        as written here, on any adapter; results equal numpy's
        ``np.histogram`` of the values as float64 (numpy bins float32 input
        against float32-rounded edges, which can differ by one bin for a
        value within one float32 step of an edge). A view (two packed
        float32, e.g. written by a reduction node) is read on the GPU each
        encoding and binned with the float32 estimate only: a value within
        a rounding step of an interior edge (WGSL division is accurate to
        2.5 ULP) may land in either neighbour. An invalid GPU domain
        (non-finite, lo > hi) gives zero counts. ``lo == hi`` puts values
        equal to it in bin 0.
    edges : sequence of float or GraphDataView, optional
        ``bin_count + 1`` finite, strictly increasing edges: bin ``i`` is
        ``[e_i, e_i+1)`` and the last edge belongs to the last bin. A
        sequence is a parameter (:meth:`set_edges`, same length); a packed
        float32 view is GPU-resident and checked each encoding by the
        ``"{id}-validate-edges"`` pass: invalid edges give zero counts.
    mask : GraphDataView or GraphVectorView, optional
        ``uint32`` aligned with ``input``; zero excludes a row.
    filter_values, filter_range :
        An aligned ``float32`` column and an inclusive ``(lo, hi)`` range:
        only rows whose filter value lies in it count (NaN never passes);
        change the range with :meth:`set_filter_range`.
    tuning : AggregationTuning, optional

    Notes
    -----
    NaN, +-inf and out-of-domain values are ignored. Each encoding clears the output first; counts are exact and wrap modulo
    2**32. Up to ``tuning.privatize_max_keys`` bins count in workgroup
    memory and flush once per workgroup. Does not submit, map or read back;
    compose with an inclusive GPUScan for a CDF.
    """

    _kind = "GPUHistogram"
    _snippet = "histogram_keys.wgsl"
    _key_formats = ("float32",)
    _key_name = "input"

    def __init__(self, *, id, input, output, bin_count=None, domain=None, edges=None, mask=None,
                 filter_values=None, filter_range=None, tuning=None):
        owner = f'GPUHistogram "{id}"'
        if (domain is None) == (edges is None):
            raise GraphValidationError(f"{owner} needs exactly one of domain= and edges=")
        aux_floats = aux_view = None
        if domain is not None:
            self.mode = "domain"
            count = output.length if bin_count is None and isinstance(output, GraphDataView) else bin_count
            if isinstance(domain, GraphDataView):
                aux_view = _param_view(owner, "domain", domain, 2)
            elif isinstance(count, int) and not isinstance(count, bool) and count >= 1:
                aux_floats = _edge_table(*_finite_range(owner, "domain", domain), count)
        else:
            self.mode = "edges"
            if isinstance(edges, GraphDataView):
                if edges.format.name != "float32" or not edges.is_packed or edges.length < 2:
                    raise GraphValidationError(f"{owner} edges view needs at least 2 packed float32 rows "
                                               f"(got {edges.length} {edges.format.name})")
                aux_view, count = edges, edges.length - 1
            else:
                aux_floats = self._check_edges(owner, edges)
                count = len(aux_floats) - 1
            if bin_count is not None and bin_count != count:
                raise GraphValidationError(f"{owner} bin_count {bin_count} does not match {count + 1} edges")
        self._setup(id=id, keys=input, values=None, output=output, key_count=count, operation="count", mask=mask,
                    filter_values=filter_values, filter_range=filter_range, tuning=tuning, aux_floats=aux_floats,
                    aux_view=aux_view)
        self.bin_count = count

    @staticmethod
    def _check_edges(owner, edges):
        try:
            values = np.asarray(edges, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise GraphValidationError(f"{owner} edges must be numbers (got {edges!r})") from None
        with np.errstate(over="ignore"):
            edges32 = values.astype(np.float32)
        if len(edges32) < 2:
            raise GraphValidationError(f"{owner} needs at least 2 edges (got {len(edges32)})")
        if not np.isfinite(edges32).all():
            raise GraphValidationError(f"{owner} edges must be finite float32 values "
                                       f"(edge {int(np.argmin(np.isfinite(edges32)))} is {values[~np.isfinite(edges32)][0]})")
        steps = np.diff(edges32)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0))
            raise GraphValidationError(f"{owner} edges must be strictly increasing in float32 (edge {i + 1} "
                                       f"{edges32[i + 1]!r} after {edges32[i]!r})")
        return edges32

    @property
    def gpu_resident(self) -> bool:
        """True when the domain or edges are a GPU view (no set_* method)."""
        return self._aux_view is not None

    def set_domain(self, domain, *, queue=None) -> None:
        """New ``(lo, hi)`` for the next encodings, without recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue); before ``add_to_graph`` it only records it.
        """
        if self.mode != "domain" or self.gpu_resident:
            raise GraphStateError(f"{self._owner} has no literal domain: set_domain does not apply")
        self._write_aux(_edge_table(*_finite_range(self._owner, "domain", domain), self.bin_count), queue)

    def set_edges(self, edges, *, queue=None) -> None:
        """New literal edges (same count) for the next encodings, without
        recompiling; validated here (finite, strictly increasing)."""
        if self.mode != "edges" or self.gpu_resident:
            raise GraphStateError(f"{self._owner} has no literal edges: set_edges does not apply")
        edges32 = self._check_edges(self._owner, edges)
        if len(edges32) != self.bin_count + 1:
            raise GraphValidationError(f"{self._owner} set_edges needs {self.bin_count + 1} edges "
                                       f"(got {len(edges32)})")
        self._write_aux(edges32, queue)

    # ---------------------------------------------------------------- hooks
    def _flags(self):
        return {"CHECKED": self.mode == "edges" and self.gpu_resident}

    def _key_constants(self, device):
        offset = 0 if self._aux_view is None else ComputeKernel.element_offset(self._aux_view, device)
        return {"EDGES": int(self.mode == "edges"), "TABLE": int(self._aux_view is None or self.mode == "edges"),
                "AUX_OFFSET": offset}

    def _declare_extra(self, graph):
        self._edges_state = None
        if self._flags()["CHECKED"]:
            self._edges_state = graph.create_transient_buffer(id=f"{self.id}-edges-state", byte_length=4,
                                                              usage=wgpu.BufferUsage.STORAGE)

    def _aux_bindings(self):
        bindings = super()._aux_bindings()
        if self._edges_state is not None:
            bindings[8] = self._edges_state
        return bindings

    def _aux_extra_uses(self):
        return [(self._edges_state, "storage-read")] if self._edges_state is not None else []

    def _add_pre_nodes(self, graph):
        if self._edges_state is None:
            return ()
        edges, state, count = self._aux_view, self._edges_state, self.bin_count + 1

        def compile_validate(ctx):
            kernel = ComputeKernel(ctx.device, code=_source("histogram_edges.wgsl"), entry_point="validate",
                                   constants={"EDGE_COUNT": count,
                                              "AUX_OFFSET": ComputeKernel.element_offset(edges, ctx.device)},
                                   label=f"{self.id}-validate-edges")
            bindings = {0: edges, 1: state}
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=1)

        return (graph.add_compute_node(id=f"{self.id}-validate-edges", compile=compile_validate,
                                       resources=[(edges, "storage-read"), (state, "storage-write")]),)
