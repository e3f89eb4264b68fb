"""The keyed-aggregation engine behind GPUGroupAggregation, GPUHistogram,
GPUGridBinning and GPUGridAggregation.

All four map each accepted input row to one output row (a key: a group, a
bin, a cell) and count it or combine its float32 value there. One WGSL body
(``shaders/keyed_aggregation.wgsl``) does that for every primitive; a key
template per primitive says how a row becomes a key and includes the body.

A primitive tells the engine three things, all explicit:

- a :class:`KeySpec`: its key template, argument names, key formats, and
  the template values and ``override`` constants of that template;
- ``parameters``: the float32 values its keys depend on (histogram edges,
  grid bounds): literal values stored in the parameter buffer, rewritable
  without recompiling, or a GPU-resident view; bound at 7 either way;
- :meth:`KeyedAggregation._key_resources`, the one method it may override:
  further bindings of its key template (:class:`KeyBinding`) and graph
  passes that must run before the clear.

The parameter buffer holds the literal parameters, then one 64-byte record
per chunk (rows, element offsets and strides, the filter range, rows per
invocation, first workgroup, workgroups over all chunks), so one pipeline
serves every chunk and every table size. The
accumulate node's compile callback creates it from a host mirror
(:class:`CompiledBuffer`: owned by the compiled graph); ``set_*`` methods
update the mirror and, once the buffer exists, rewrite the changed bytes
with ``queue.write_buffer`` (on the caller's call, never inside
``add_to_graph`` or an encoding).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
import wgpu

from ..device import device_capabilities
from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..graph.compat import is_destroyed
from ..errors import GraphStateError, GraphTypeError, GraphValidationError, ViewRangeError
from ..graph.resources import GraphDataView, GraphVectorView
from ..graph.shaders import wgsl
from .aggregation_tuning import WORKGROUP_SIZE as WG
from .aggregation_tuning import AggregationTuning
from .validation import refuse_overlaps

__all__ = ["AGGREGATIONS", "MAX_PARTIAL_WORDS", "KeySpec", "KeyBinding", "CompiledBuffer", "KeyedAggregation",
           "param_view"]

#: Aggregation name -> the OP override of ``keyed_aggregation.wgsl``.
AGGREGATIONS = {"count": 0, "sum": 1, "min": 2, "max": 3, "mean": 4}
#: Beyond this many partial words privatized sum/mean flush with global float adds.
MAX_PARTIAL_WORDS = 1 << 22
_RECORD_BYTES = 64  # one chunk record (the WGSL struct Chunk is 56 bytes)
_DEFAULT_TUNING = AggregationTuning()
BU = wgpu.BufferUsage


@dataclass(frozen=True)
class KeySpec:
    """How one primitive turns rows into keys.

    Attributes
    ----------
    template : str
        Package path of the key template (it includes
        ``keyed_aggregation.wgsl``), e.g. ``"algorithms/shaders/group_keys.wgsl"``.
    keys_name : str
        The keys argument as messages name it (``"codes"``, ``"input"``...).
    key_formats : tuple of str
        Accepted formats of the keys.
    values_name : str
        The values argument as messages name it (``"values"``, ``"weights"``).
    template_values : dict
        Further template values of the key template (histogram: ``checked``).
    constants : dict
        ``override`` constants of the key template for the accumulate kernel.
    """

    template: str
    keys_name: str
    key_formats: tuple
    values_name: str = "values"
    template_values: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)


@dataclass(frozen=True)
class KeyBinding:
    """One storage binding of a key template beyond the engine's own.

    Attributes
    ----------
    binding : int
    resource : GraphDataView, GraphBufferHandle or CompiledBuffer
        Graph resources are declared with ``use`` on the nodes that bind them.
    use : str
        ``"storage-read"`` or ``"storage-read-write"``.
    offset_constant : str, optional
        The ``override`` that receives the resource's element offset.
    clear : bool
        The init kernel binds it too (not only the accumulate kernel).
    """

    binding: int
    resource: object
    use: str
    offset_constant: str | None = None
    clear: bool = False


class CompiledBuffer:
    """A buffer a primitive binds that is no graph resource (its parameter
    buffer, its own overflow word): the first node compile callback that
    binds it creates it through ``ctx`` and hands it to ``ctx.own``, so it is
    destroyed with the compiled graph. ``buffer`` is None until then.

    Parameters
    ----------
    label : str
    usage : int
    data : callable
        Returns the initial bytes when the buffer is created.
    """

    def __init__(self, *, label: str, usage: int, data):
        self.label, self.usage, self._data = label, usage, data
        self.buffer = None

    def get(self, ctx):
        """The buffer, created in this compile callback if it does not exist yet."""
        if self.buffer is None:
            self.buffer = ctx.own(ctx.device.create_buffer_with_data(label=self.label, data=self._data(),
                                                                     usage=self.usage))
        return self.buffer


# --------------------------------------------------------------- validation
def _chunk_views(owner, name, value, formats) -> list:
    """A data or vector view as its chunk views, checked for format, 4-byte
    alignment and stride (strided views are read in place)."""
    if isinstance(value, GraphDataView):
        views = [value]
    elif isinstance(value, GraphVectorView):
        views = list(value.views)
    else:
        raise GraphValidationError(
            f"{owner} {name} must be a GraphDataView or GraphVectorView (got {type(value).__name__})")
    for view in views:
        if view.format.name not in formats:
            raise GraphValidationError(f"{owner} {name} must be {' or '.join(formats)} (got {view.format.name})")
        if view.byte_offset % 4 or view.byte_stride % 4:
            raise ViewRangeError(f"{owner} {name} needs 4-byte aligned rows (byte offset {view.byte_offset}, "
                                 f"stride {view.byte_stride})")
    return views


def _output_view(owner, value, formats, length) -> GraphDataView:
    if not isinstance(value, GraphDataView):
        raise GraphValidationError(f"{owner} output must be a GraphDataView (got {type(value).__name__})")
    if value.format.name not in formats:
        raise GraphValidationError(f"{owner} output must be {' or '.join(formats)} (got {value.format.name})")
    if not value.is_packed:
        raise ViewRangeError(f"{owner} output must be packed (byte stride {value.byte_stride}, "
                             f"{value.format.name} needs {value.format.byte_size})")
    if value.length != length:
        raise GraphValidationError(f"{owner} output has the wrong length (needs {length} rows, got {value.length})")
    return value


def param_view(owner: str, name: str, value: GraphDataView, floats: int) -> GraphDataView:
    """A GPU-resident parameter view holding ``floats`` packed float32 values
    (``float32`` x floats or one ``float32x{floats}`` row)."""
    if value.format.name == "float32":
        rows = floats
    elif value.format.name == f"float32x{floats}":
        rows = 1
    else:
        raise GraphValidationError(
            f"{owner} {name} must be float32 or float32x{floats} (got {value.format.name})")
    if not value.is_packed or value.length != rows:
        raise GraphValidationError(f"{owner} {name} needs {floats} packed float32 values (got {value.length} "
                                   f"{value.format.name} rows, stride {value.byte_stride})")
    return value


def _offset(resource, device) -> int:
    """Element offset of a bound resource inside its binding."""
    return ComputeKernel.element_offset(resource, device) if isinstance(resource, GraphDataView) else 0


# ------------------------------------------------------------------- engine
class KeyedAggregation:
    """Validation, the parameter buffer and the graph nodes of one keyed
    aggregation; the four public primitives derive from it.

    Parameters
    ----------
    id : str
    spec : KeySpec
    keys : GraphDataView or GraphVectorView
    values, mask, filter_values : GraphDataView or GraphVectorView or None
        Aligned with ``keys`` (same ordered chunk lengths).
    output : GraphDataView
    key_count : int
    operation : str
        A key of :data:`AGGREGATIONS`.
    filter_range : (float, float) or None
    tuning : AggregationTuning or None
    parameters : array of float32, GraphDataView or None
        Key parameters bound at 7 (``AUX_OFFSET`` is their element offset);
        None: the key template has none.

    Notes
    -----
    Never submits, maps or reads back; ``set_filter_range`` (and the
    primitives' other ``set_*``) write the parameter buffer through the
    queue the caller names.
    """

    def __init__(self, *, id, spec: KeySpec, keys, values, output, key_count, operation, mask, filter_values,
                 filter_range, tuning, parameters=None):
        self.id = check_id(type(self).__name__, id)
        self._spec = spec
        owner = self._owner
        if operation not in AGGREGATIONS:
            raise GraphValidationError(
                f"{owner} has an unknown operation {operation!r} (known: {', '.join(AGGREGATIONS)})")
        self.operation = operation
        if not isinstance(key_count, int) or isinstance(key_count, bool) or key_count < 1:
            raise GraphValidationError(f"{owner} needs at least one output row (got {key_count!r})")
        self.key_count = key_count
        if tuning is not None and not isinstance(tuning, AggregationTuning):
            raise GraphTypeError(f"{owner} tuning must be an AggregationTuning (got {type(tuning).__name__})")
        self.tuning = tuning or _DEFAULT_TUNING
        self._keys = _chunk_views(owner, spec.keys_name, keys, spec.key_formats)
        lengths = [v.length for v in self._keys]
        if sum(lengths) >= 2**32:
            raise GraphValidationError(f"{owner} has more rows than uint32 counts hold ({sum(lengths)})")
        self._roles = {}
        for role, value, formats in (("values", values, ("float32",)), ("mask", mask, ("uint32",)),
                                     ("filter_values", filter_values, ("float32",))):
            if value is not None:
                name = self._role_name(role)
                views = _chunk_views(owner, name, value, formats)
                if [v.length for v in views] != lengths:
                    raise GraphValidationError(f"{owner} {name} chunk lengths {[v.length for v in views]} do not "
                                               f"match {spec.keys_name} chunk lengths {lengths}")
                self._roles[role] = views
        if (operation == "count") == ("values" in self._roles):
            raise GraphValidationError(f"{owner} operation {operation!r} " + (
                "takes no values" if operation == "count" else f"needs {spec.values_name}"))
        self.output = _output_view(owner, output, ("uint32",) if operation == "count" else ("float32",), key_count)
        self._has_parameters = parameters is not None
        self._parameters_view = parameters if isinstance(parameters, GraphDataView) else None
        self._parameters = None if parameters is None or self._parameters_view is not None else \
            np.asarray(parameters, np.float32)
        self._refuse_aliasing()
        if filter_range is not None and filter_values is None:
            raise GraphValidationError(f"{owner} filter_range needs filter_values")
        self._filter = (-math.inf, math.inf) if filter_range is None else self._filter_range(filter_range)
        self._wg_base = [0]
        for view in self._keys:
            self._wg_base.append(self._wg_base[-1] + -(-view.length // (WG * self.tuning.items(view.length))))
        self._graph = self._device = None
        self._native_float_add = False
        self._params = CompiledBuffer(label=f"{id}-params", usage=BU.STORAGE | BU.COPY_DST | BU.COPY_SRC,
                                      data=lambda: self._mirror)
        self.node_ids = ()

    @property
    def _owner(self) -> str:
        return f'{type(self).__name__} "{self.id}"'

    def _refuse_aliasing(self, **writes) -> None:
        """Outputs (``output`` and ``writes``) may not share a buffer with an
        input (inputs are bound read-only next to them) nor overlap each other."""
        reads = {self._spec.keys_name: self._keys, "parameters": self._parameters_view}
        reads.update((self._role_name(role), views) for role, views in self._roles.items())
        refuse_overlaps(type(self).__name__, self.id, reads=reads, writes={"output": self.output, **writes},
                        separate=True)

    def _role_name(self, role) -> str:
        return self._spec.values_name if role == "values" else role

    def _filter_range(self, pair) -> tuple:
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise GraphValidationError(f"{self._owner} filter_range needs two numbers (got {pair!r})") from None
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise GraphValidationError(f"{self._owner} filter_range needs lo <= hi, neither NaN (got {lo}, {hi})")
        return float(np.float32(lo)), float(np.float32(hi))

    # ------------------------------------------------------------ strategy
    @property
    def privatized(self) -> bool:
        """True when workgroups accumulate into workgroup memory first."""
        words = self.key_count * (2 if self.operation == "mean" else 1)
        limit = 16384 if self._device is None else int(self._device.limits["max-compute-workgroup-storage-size"])
        return self.key_count <= self.tuning.privatize_max_keys and words * 4 + 64 <= limit

    @property
    def workgroup_count(self) -> int:
        """Workgroups of one accumulation over all chunks."""
        return self._wg_base[-1]

    @property
    def uses_partials(self) -> bool:
        """True when privatized sum/mean flush per-workgroup partials that a
        reduce pass adds (no global float compare-exchange)."""
        words = self.key_count * self.workgroup_count * (2 if self.operation == "mean" else 1)
        return self.operation in ("sum", "mean") and self.privatized and words <= MAX_PARTIAL_WORDS

    @property
    def uses_float_atomics(self) -> bool:
        """True when sums reach global memory through native float atomics
        (decided in ``add_to_graph`` from ``tuning.float_atomics`` and the
        device; sum and mean without partials only)."""
        return self._native_float_add and self.operation in ("sum", "mean") and not self.uses_partials

    @property
    def params_buffer(self):
        """The parameter buffer (``wgpu.GPUBuffer``) once the graph compiled,
        else None; destroyed with the compiled graph."""
        return self._params.buffer

    def _resolve_float_atomics(self, device) -> bool:
        choice = self.tuning.float_atomics
        available = device_capabilities(device).float32_atomics
        if choice and not available:
            raise GraphValidationError(f"{self._owner} tuning float_atomics=True needs the device feature "
                                       f"shader-float32-atomic, which this device lacks")
        if choice is None:
            return available and os.environ.get("GPUVIZ_FLOAT_ATOMICS", "").strip() != "0"
        return bool(choice)

    # ------------------------------------------------------ parameter block
    def _layout(self, device) -> None:
        """The host mirror of the parameter buffer: parameters, then one
        record per chunk at the storage offset alignment."""
        align = int(device.limits["min-storage-buffer-offset-alignment"])
        self._record_stride = max(_RECORD_BYTES, align)
        aux_bytes = 0 if self._parameters is None else self._parameters.nbytes
        self._header_bytes = max(1, -(-aux_bytes // self._record_stride)) * self._record_stride
        # at least one record: the reduce pass reads total_wgs from the first
        self._mirror = np.zeros(self._header_bytes + self._record_stride * max(1, len(self._keys)), np.uint8)
        if self._parameters is not None:
            self._mirror[:aux_bytes] = self._parameters.view(np.uint8)
        for k, key_view in enumerate(self._keys):
            start = self._header_bytes + k * self._record_stride
            words = self._mirror[start:start + 56].view(np.uint32)
            floats = self._mirror[start:start + 56].view(np.float32)
            words[0] = key_view.length
            words[11] = self.tuning.items(key_view.length)
            words[12] = self._wg_base[k]
            words[13] = self.workgroup_count  # a record field, not an override: sizes never make a new pipeline
            for slot, views in ((1, self._keys), (3, self._roles.get("values")), (5, self._roles.get("mask")),
                                (7, self._roles.get("filter_values"))):
                if views is not None:  # per-chunk element offsets: record fields, not shader text
                    words[slot] = ComputeKernel.element_offset(views[k], device)
                    words[slot + 1] = views[k].byte_stride // 4
            floats[9], floats[10] = self._filter

    def _write(self, queue, start: int, end: int) -> None:
        if self.params_buffer is None:
            return  # not compiled yet: the compile callback uploads the mirror
        if is_destroyed(self.params_buffer):  # a write would be wgpu's validation error
            raise GraphStateError(f"{self._owner} parameters cannot change: the graph it was compiled into "
                                  "was destroyed")
        (queue or self._device.queue).write_buffer(self.params_buffer, start, self._mirror[start:end])

    def _write_parameters(self, values, queue) -> None:
        """New literal parameters (same count) for the next encodings."""
        self._parameters = np.asarray(values, np.float32)
        if self._graph is not None:
            self._mirror[:self._parameters.nbytes] = self._parameters.view(np.uint8)
            self._write(queue, 0, self._parameters.nbytes)

    def set_filter_range(self, filter_range, *, queue=None) -> None:
        """Keep only rows whose ``filter_values`` lie in ``filter_range = (lo, hi)``
        (inclusive; NaN never passes) from the next encoding on, without
        recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue) once the graph is compiled; before that it only
        records the range. Submits and reads back nothing.
        """
        if "filter_values" not in self._roles:
            raise GraphStateError(f"{self._owner} has no filter_values: set_filter_range does not apply")
        self._filter = self._filter_range(filter_range)
        if self._graph is not None:
            for k in range(len(self._keys)):
                start = self._header_bytes + k * self._record_stride + 36
                self._mirror[start:start + 8].view(np.float32)[:] = self._filter
            self._write(queue, self._header_bytes, len(self._mirror))

    # ---------------------------------------------------------------- graph
    def add_to_graph(self, graph) -> tuple:
        """Declare this primitive's transients and nodes in ``graph``.

        Adds ``"{id}-clear"``, ``"{id}-accumulate"`` and ``"{id}-reduce"``
        (privatized sum/mean) or ``"{id}-finalize"`` (other min/max/mean),
        after any primitive-specific pass; the parameter buffer is created
        when the graph compiles and destroyed with the compiled graph.
        Returns the node IDs in order. Creates no buffer and records,
        submits and reads back nothing.
        """
        if self._graph is not None:
            raise GraphStateError(f'{self._owner} is already in graph "{self._graph.id}" (make a new one)')
        device = graph.device
        limit = int(device.limits["max-storage-buffer-binding-size"])
        for name, view in self._all_views():
            if graph.buffers.get(view.handle.id) is not view.handle:
                raise GraphValidationError(
                    f'{self._owner} {name} belongs to graph "{view.handle.graph_id}", not "{graph.id}"')
            if view.byte_length + 256 > limit:
                raise GraphValidationError(f"{self._owner} {name} chunk is larger than one storage binding "
                                           f"(needs {view.byte_length} bytes, max {limit})")
        self._native_float_add = self._resolve_float_atomics(device)
        self._device = device
        self._layout(device)
        self._counts = None  # partials, or per-key counts of a global mean
        if self.uses_partials:
            words = self.key_count * max(1, self.workgroup_count) * (2 if self.operation == "mean" else 1)
            self._counts = graph.create_transient_buffer(id=f"{self.id}-partials", byte_length=4 * words,
                                                         usage=BU.STORAGE)
        elif self.operation == "mean":
            self._counts = graph.create_transient_buffer(id=f"{self.id}-counts", byte_length=4 * self.key_count,
                                                         usage=BU.STORAGE)
        self._graph = graph
        bindings, passes = self._key_resources(graph)
        self._key_bindings = tuple(bindings)
        ids = [*passes, self._add_clear(graph), self._add_accumulate(graph)]
        if self.uses_partials or self.operation in ("min", "max", "mean"):
            ids.append(self._add_finalize(graph))
        self.node_ids = tuple(ids)
        return self.node_ids

    def _key_resources(self, graph) -> tuple:
        """``(key bindings, pass node IDs)``: further bindings of the key
        template and passes added to ``graph`` before the clear. The one
        method a primitive may override; none by default."""
        return (), ()

    def _state_uses(self) -> list:
        return [(self._counts, "storage-read-write")] if self._counts is not None else []

    def _state_bindings(self, *, init) -> dict:
        bindings = {5: self.output}
        if self._counts is not None and not (init and self.uses_partials):
            bindings[6] = self._counts
        return bindings

    @staticmethod
    def _declared(key_bindings) -> list:
        return [(b.resource, b.use) for b in key_bindings if not isinstance(b.resource, CompiledBuffer)]

    @staticmethod
    def _bound(ctx, key_bindings) -> dict:
        return {b.binding: b.resource.get(ctx) if isinstance(b.resource, CompiledBuffer) else b.resource
                for b in key_bindings}

    def _add_clear(self, graph) -> str:
        key_bindings = [b for b in self._key_bindings if b.clear]

        def compile_clear(ctx):
            kernel = self._kernel(ctx, "init")
            bindings = {**self._state_bindings(init=True), **self._bound(ctx, key_bindings)}
            groups = -(-self.key_count // WG)
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=groups)

        clears = [] if self.uses_partials else self._state_uses()  # every workgroup writes all its partials
        return graph.add_compute_node(id=f"{self.id}-clear", compile=compile_clear,
                                      resources=[(self.output, "storage-write"), *clears,
                                                 *self._declared(key_bindings)])

    def _add_accumulate(self, graph) -> str:
        partials = self.uses_partials
        roles = [(0, self._keys)] + [(b, self._roles[r]) for b, r in ((1, "values"), (2, "mask"),
                                                                      (3, "filter_values")) if r in self._roles]

        def compile_accumulate(ctx):
            kernel = self._kernel(ctx, "accumulate")
            params = self._params.get(ctx)
            fixed = self._state_bindings(init=False)
            if partials:  # the reduce pass writes the output
                del fixed[5]
            if self._has_parameters:
                fixed[7] = self._parameters_view or (params, 0, self._header_bytes)
            fixed.update(self._bound(ctx, self._key_bindings))
            dispatches = []
            for k, view in enumerate(self._keys):
                if view.length:
                    record = (params, self._header_bytes + k * self._record_stride, _RECORD_BYTES)
                    bindings = {**fixed, 4: record, **{b: views[k] for b, views in roles}}
                    dispatches.append((bindings, -(-view.length // (WG * self.tuning.items(view.length)))))

            def encode(p, frame):
                for bindings, groups in dispatches:
                    kernel.dispatch(p, frame, bindings=bindings, workgroups=groups)
            return encode

        reads = [(v, "storage-read") for _, views in roles for v in views]
        if self._parameters_view is not None:
            reads.append((self._parameters_view, "storage-read"))
        writes = ([] if partials else [(self.output, "storage-read-write")]) + self._state_uses()
        return graph.add_compute_node(id=f"{self.id}-accumulate", compile=compile_accumulate,
                                      resources=[*reads, *writes, *self._declared(self._key_bindings)])

    def _add_finalize(self, graph) -> str:
        partials = self.uses_partials
        entry = "reduce" if partials else "finalize"

        def compile_finalize(ctx):
            kernel = self._kernel(ctx, entry)
            bindings = {5: self.output} if self._counts is None else {5: self.output, 6: self._counts}
            if partials:  # reduce reads total_wgs from the first chunk record
                bindings[4] = (self._params.get(ctx), self._header_bytes, _RECORD_BYTES)
            groups = self.key_count if partials else -(-self.key_count // WG)  # reduce: a workgroup per key
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=groups)

        return graph.add_compute_node(id=f"{self.id}-{entry}", compile=compile_finalize,
                                      resources=[(self.output, "storage-read-write"), *self._state_uses()])

    def _kernel(self, ctx, entry_point) -> ComputeKernel:
        partials, op = self.uses_partials, self.operation
        subgroups = (partials and self.key_count <= self.tuning.subgroup_max_keys and bool(ctx.capabilities.subgroups)
                     and self.tuning.subgroups is not False)
        code = wgsl(self._spec.template, values=op != "count", order=op in ("min", "max"), sum=op == "sum",
                    mean=op == "mean", partials=partials, float_atomics=self.uses_float_atomics,
                    subgroups=subgroups, mask="mask" in self._roles, filtered="filter_values" in self._roles,
                    **self._spec.template_values)
        constants = {"KEYS": self.key_count, "OP": AGGREGATIONS[op],
                     "OUT_OFFSET": ComputeKernel.element_offset(self.output, ctx.device)}
        if entry_point == "accumulate":
            constants.update(LOCAL_KEYS=self.key_count if self.privatized else 1, **self._spec.constants)
            if self._has_parameters:
                constants["AUX_OFFSET"] = _offset(self._parameters_view, ctx.device)
        if entry_point in ("accumulate", "init"):
            for b in self._key_bindings:
                if b.offset_constant and (b.clear or entry_point == "accumulate"):
                    constants[b.offset_constant] = _offset(b.resource, ctx.device)
        return ComputeKernel(ctx.device, code=code, entry_point=entry_point, constants=constants,
                             label=f"{self.id}-{entry_point}")

    def _all_views(self):
        yield from ((self._spec.keys_name, v) for v in self._keys)
        for role, views in self._roles.items():
            yield from ((self._role_name(role), v) for v in views)
        yield "output", self.output
        if self._parameters_view is not None:
            yield "parameter view", self._parameters_view

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id!r} {self.operation} x{self.key_count}>"
