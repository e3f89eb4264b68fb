"""GPUHistogram: counts of float32 values in equal-width or irregular bins,
on the keyed-aggregation engine (:mod:`.keyed_aggregation`); a bin is the key
of a row (``shaders/histogram_keys.wgsl``)."""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphStateError, GraphValidationError
from ..graph.resources import GraphDataView
from ..graph.shaders import wgsl
from .bin_edges import edge_table, finite_range
from .keyed_aggregation import KeyBinding, KeyedAggregation, KeySpec, param_view

__all__ = ["GPUHistogram"]


class GPUHistogram(KeyedAggregation):
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
    NaN, +-inf and out-of-domain values are ignored. Each encoding clears
    the output first; counts are exact and wrap modulo 2**32. Up to
    ``tuning.privatize_max_keys`` bins count in workgroup memory and flush
    once per workgroup. Compose with an inclusive GPUScan for a CDF.

    Does not submit, map or read back; ``set_domain``, ``set_edges`` and
    ``set_filter_range`` write the parameter buffer with
    ``queue.write_buffer`` and nothing else.
    """

    def __init__(self, *, id, input, output, bin_count=None, domain=None, edges=None, mask=None,
                 filter_values=None, filter_range=None, tuning=None):
        owner = f'GPUHistogram "{check_id("GPUHistogram", id)}"'
        if (domain is None) == (edges is None):
            raise GraphValidationError(f"{owner} needs exactly one of domain= and edges=")
        parameters = None
        if domain is not None:
            self.mode = "domain"
            count = output.length if bin_count is None and isinstance(output, GraphDataView) else bin_count
            if isinstance(domain, GraphDataView):
                parameters = param_view(owner, "domain", domain, 2)
            elif isinstance(count, int) and not isinstance(count, bool) and count >= 1:
                parameters = edge_table(*finite_range(owner, "domain", domain), count)
        else:
            self.mode = "edges"
            if isinstance(edges, GraphDataView):
                if edges.format.name != "float32" or not edges.is_packed or edges.length < 2:
                    raise GraphValidationError(f"{owner} edges view needs at least 2 packed float32 rows "
                                               f"(got {edges.length} {edges.format.name})")
                parameters, count = edges, edges.length - 1
            else:
                parameters = self._check_edges(owner, edges)
                count = len(parameters) - 1
            if bin_count is not None and bin_count != count:
                raise GraphValidationError(f"{owner} bin_count {bin_count} does not match {count + 1} edges")
        resident = isinstance(parameters, GraphDataView)
        # TABLE: the parameters hold every edge (literal domains store their rounded-up edge table)
        spec = KeySpec(template="algorithms/shaders/histogram_keys.wgsl", keys_name="input", key_formats=("float32",),
                       template_values={"checked": self.mode == "edges" and resident},
                       constants={"EDGES": int(self.mode == "edges"), "TABLE": int(not resident or self.mode == "edges")})
        super().__init__(id=id, spec=spec, keys=input, values=None, output=output, key_count=count,
                         operation="count", mask=mask, filter_values=filter_values, filter_range=filter_range,
                         tuning=tuning, parameters=parameters)
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
            raise GraphValidationError(f"{owner} edges must be finite float32 values (edge "
                                       f"{int(np.argmin(np.isfinite(edges32)))} is {values[~np.isfinite(edges32)][0]})")
        steps = np.diff(edges32)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0))
            raise GraphValidationError(f"{owner} edges must be strictly increasing in float32 (edge {i + 1} "
                                       f"{edges32[i + 1]!r} after {edges32[i]!r})")
        return edges32

    @property
    def gpu_resident(self) -> bool:
        """True when the domain or edges are a GPU view (no set_* method)."""
        return self._parameters_view is not None

    def set_domain(self, domain, *, queue=None) -> None:
        """New ``(lo, hi)`` for the next encodings, without recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue) once the graph is compiled; before that it only
        records it. Submits and reads back nothing.
        """
        if self.mode != "domain" or self.gpu_resident:
            raise GraphStateError(f"{self._owner} has no literal domain: set_domain does not apply")
        self._write_parameters(edge_table(*finite_range(self._owner, "domain", domain), self.bin_count), queue)

    def set_edges(self, edges, *, queue=None) -> None:
        """New literal edges (same count) for the next encodings, without
        recompiling; validated here (finite, strictly increasing). Writes the
        parameter buffer like :meth:`set_domain`."""
        if self.mode != "edges" or self.gpu_resident:
            raise GraphStateError(f"{self._owner} has no literal edges: set_edges does not apply")
        edges32 = self._check_edges(self._owner, edges)
        if len(edges32) != self.bin_count + 1:
            raise GraphValidationError(f"{self._owner} set_edges needs {self.bin_count + 1} edges "
                                       f"(got {len(edges32)})")
        self._write_parameters(edges32, queue)

    def _key_resources(self, graph) -> tuple:
        """GPU-resident edges: ``"{id}-validate-edges"`` writes whether they
        are valid to the transient ``"{id}-edges-state"`` word the counting
        kernel reads."""
        if not self._spec.template_values["checked"]:
            return (), ()
        edges, count = self._parameters_view, self.bin_count + 1
        state = graph.create_transient_buffer(id=f"{self.id}-edges-state", byte_length=4,
                                              usage=wgpu.BufferUsage.STORAGE)

        def compile_validate(ctx):
            kernel = ComputeKernel(ctx.device, code=wgsl("algorithms/shaders/histogram_edges.wgsl"),
                                   entry_point="validate", label=f"{self.id}-validate-edges",
                                   constants={"EDGE_COUNT": count,
                                              "AUX_OFFSET": ComputeKernel.element_offset(edges, ctx.device)})
            bindings = {0: edges, 1: state}
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=1)

        node = graph.add_compute_node(id=f"{self.id}-validate-edges", compile=compile_validate,
                                      resources=[(edges, "storage-read"), (state, "storage-write")])
        return (KeyBinding(8, state, "storage-read"),), (node,)
