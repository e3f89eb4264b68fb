"""GPUGroupAggregation, and the keyed-aggregation engine it shares with
GPUHistogram, GPUGridBinning and GPUGridAggregation.

All four map each accepted input row to one output row (a group, a bin, a
cell) and count it or combine its float32 value there. One WGSL body
(``shaders/group_aggregate.wgsl``) does that for every primitive; a short key
snippet per primitive says how a row becomes a key.

Parameters that change per interaction (a histogram domain or edges, grid
bounds, the value-range filter) live in a small storage buffer that the
primitive creates in ``add_to_graph``, imports into the graph as
``"{id}-params"`` and hands to the compiled graph to destroy. Its ``set_*``
methods rewrite it with ``queue.write_buffer``; the next encoding uses the
new values without recompiling. Structural values (key counts, grid size,
operation, chunk layout) compile in.
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import wgpu

from ..device import device_capabilities
from ..graph import ComputeKernel
from ..graph.errors import GraphStateError, GraphValidationError, ViewRangeError
from ..graph.resources import GraphDataView, GraphVectorView

__all__ = ["GPUGroupAggregation", "AggregationTuning", "OPERATIONS"]

#: Operation name -> the OP override of the shader.
OPERATIONS = {"count": 0, "sum": 1, "min": 2, "max": 3, "mean": 4}
_SHADERS = Path(__file__).with_name("shaders")
_WG = 256
_RECORD_BYTES = 64  # one chunk record (the WGSL struct Chunk is 52 bytes)
_MAX_PARTIAL_WORDS = 1 << 22  # beyond it privatized sum/mean flush with global compare-exchange
BU = wgpu.BufferUsage


@dataclass(frozen=True)
class AggregationTuning:
    """Structural knobs of keyed aggregation (benchmarks and tests vary them).

    Attributes
    ----------
    rows_per_invocation : int
        At most this many rows per invocation: a workgroup covers up to
        ``256 * rows_per_invocation`` consecutive rows of one chunk.
    workgroups_per_chunk : int
        Fewer rows per invocation are used while a chunk would otherwise get
        fewer workgroups than this (each chunk is its own dispatch, so a
        small tile count keeps a large GPU busy); 0 always uses
        ``rows_per_invocation``.
    privatize_max_keys : int
        Up to this many output rows (and while they fit in workgroup memory)
        a workgroup accumulates into its own ``var<workgroup>`` copy and
        flushes it once (count/min/max: native global atomics; sum/mean: one
        partial per workgroup, summed by a reduce pass); above it, rows go
        straight to global atomics (low contention on large grids).
    subgroups : bool or None
        None lets privatized sum/mean over at most ``subgroup_max_keys`` keys
        combine equal keys across a subgroup first where the device has
        subgroup operations; False forces the portable path.
    subgroup_max_keys : int
    float_atomics : bool or None
        How sum and mean add floats into global memory (the global path, and
        privatized flushes that do not use partials). None (auto): native
        ``atomicAdd`` on ``atomic<f32>`` where the device has the
        ``shader-float32-atomic`` feature, unless the environment variable
        ``GPUVIZ_FLOAT_ATOMICS`` is ``0``; else the portable compare-exchange
        loop on float32 bits. False forces the loop; True requires the
        feature (``add_to_graph`` raises without it). Count, min and max use
        integer atomics either way.
    """

    rows_per_invocation: int = 16
    workgroups_per_chunk: int = 1024
    privatize_max_keys: int = 1024
    subgroups: bool | None = None
    subgroup_max_keys: int = 16
    float_atomics: bool | None = None

    def items(self, rows: int) -> int:
        """Rows per invocation for a chunk of ``rows`` rows."""
        if self.workgroups_per_chunk <= 0:
            return self.rows_per_invocation
        return max(1, min(self.rows_per_invocation, -(-rows // (_WG * self.workgroups_per_chunk))))


DEFAULT_TUNING = AggregationTuning()


# ------------------------------------------------------------------ shaders
@functools.lru_cache(maxsize=None)
def _source(name: str) -> str:
    return (_SHADERS / name).read_text()


def _shader_text(snippet: str, flags: dict) -> str:
    """The template step: ``snippet + group_aggregate.wgsl`` keeping the
    ``//#if FLAG`` / ``//#if !FLAG`` ... ``//#else`` ... ``//#endif`` blocks
    whose condition holds (blocks nest)."""
    out, keep = [], [True]
    for line in (_source(snippet) + _source("group_aggregate.wgsl")).splitlines():
        directive = re.match(r"\s*//#(if|else|endif)\b\s*(!?)(\w*)", line)
        if directive is None:
            if all(keep):
                out.append(line)
        elif directive.group(1) == "if":
            keep.append(bool(flags.get(directive.group(3))) != (directive.group(2) == "!"))
        elif directive.group(1) == "else":
            keep[-1] = not keep[-1]
        else:
            keep.pop()
    return "\n".join(out) + "\n"


# --------------------------------------------------------------- validation
def _chunks(owner, name, value, formats):
    """A data or vector view as its list of chunk views, checked for format,
    4-byte alignment and stride."""
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


def _output_view(owner, name, value, formats, length):
    if not isinstance(value, GraphDataView):
        raise GraphValidationError(f"{owner} {name} must be a GraphDataView (got {type(value).__name__})")
    if value.format.name not in formats:
        raise GraphValidationError(f"{owner} {name} must be {' or '.join(formats)} (got {value.format.name})")
    if not value.is_packed:
        raise ViewRangeError(f"{owner} {name} must be packed (byte stride {value.byte_stride}, "
                             f"{value.format.name} needs {value.format.byte_size})")
    if value.length != length:
        raise GraphValidationError(f"{owner} {name} has the wrong length (needs {length} rows, got {value.length})")
    return value


def _param_view(owner, name, value, floats):
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


def _finite_range(owner, name, pair, *, allow_equal=True):
    try:
        lo, hi = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise GraphValidationError(f"{owner} {name} needs two numbers (got {pair!r})") from None
    lo32, hi32 = np.float32(lo), np.float32(hi)
    with np.errstate(over="ignore"):
        width = np.float32(hi32 - lo32)
    if not (np.isfinite(lo32) and np.isfinite(hi32) and np.isfinite(width)) or lo32 > hi32 or (
            not allow_equal and lo32 == hi32):
        raise GraphValidationError(
            f"{owner} {name} must be finite float32 values with lo <= hi and a finite width (got {lo!r}, {hi!r})")
    return float(lo32), float(hi32)


def _edge_table(lo: float, hi: float, n: int) -> np.ndarray:
    """The ``n + 1`` equal-width edges of ``[lo, hi]`` as float32, each the
    smallest float32 not below the real edge ``lo + (hi - lo) * i / n``: for
    a float32 value, ``x >= table[i]`` exactly when ``x`` reaches the real
    edge. Shaders correct their float32 bin estimate against this table."""
    exact = lo + (hi - lo) * np.arange(n + 1, dtype=np.float64) / n
    table = exact.astype(np.float32)
    below = table.astype(np.float64) < exact
    table[below] = np.nextafter(table[below], np.float32(np.inf))
    table[0], table[-1] = lo, hi
    return table


# ------------------------------------------------------------------- engine
class _KeyedAggregation:
    """Shared machinery: validation, the parameter buffer and the graph nodes.

    Subclasses set ``_kind`` and ``_snippet`` and call :meth:`_setup`; they
    may override the hook methods near the end.
    """

    _kind = "GPUKeyedAggregation"
    _snippet = ""
    _key_formats = ("uint32",)
    _key_name = "keys"

    # ------------------------------------------------------------ building
    def _setup(self, *, id, keys, values, output, key_count, operation, mask, filter_values, filter_range,
               tuning, aux_floats=None, aux_view=None):
        if not isinstance(id, str) or not id:
            raise GraphValidationError(f"{self._kind} needs a non-empty string id (got {id!r})")
        self.id = id
        owner = self._owner
        if operation not in OPERATIONS:
            raise GraphValidationError(
                f"{owner} has an unknown operation {operation!r} (known: {', '.join(OPERATIONS)})")
        self.operation = operation
        if not isinstance(key_count, int) or isinstance(key_count, bool) or key_count < 1:
            raise GraphValidationError(f"{owner} needs at least one output row (got {key_count!r})")
        self.key_count = key_count
        self.tuning = tuning or DEFAULT_TUNING
        self._keys = _chunks(owner, self._key_name, keys, self._key_formats)
        lengths = [v.length for v in self._keys]
        if sum(lengths) >= 2**32:
            raise GraphValidationError(f"{owner} has more rows than uint32 counts hold ({sum(lengths)})")
        self._roles = {}
        for role, value, formats in (("values", values, ("float32",)), ("mask", mask, ("uint32",)),
                                     ("filter_values", filter_values, ("float32",))):
            if value is None:
                continue
            views = _chunks(owner, self._role_name(role), value, formats)
            if [v.length for v in views] != lengths:
                raise GraphValidationError(
                    f"{owner} {self._role_name(role)} chunk lengths {[v.length for v in views]} do not match "
                    f"{self._key_name} chunk lengths {lengths}")
            self._roles[role] = views
        if (operation == "count") == ("values" in self._roles):
            raise GraphValidationError(
                f"{owner} operation {operation!r} " + ("takes no values" if operation == "count" else
                                                       f"needs {self._role_name('values')}"))
        formats = ("uint32",) if operation == "count" else ("float32",)
        self.output = _output_view(owner, "output", output, formats, key_count)
        inputs = [v for views in [self._keys, *self._roles.values()] for v in views]
        if aux_view is not None:
            inputs.append(aux_view)
        if any(v.handle is self.output.handle for v in inputs):
            raise GraphValidationError(f'{owner} output "{self.output.id}" must not share a buffer with an input')
        if filter_range is not None and filter_values is None:
            raise GraphValidationError(f"{owner} filter_range needs filter_values")
        self._filter = (-math.inf, math.inf)
        if filter_range is not None:
            self._filter = self._check_filter(filter_range)
        self._wg_base = [0]
        for view in self._keys:
            self._wg_base.append(self._wg_base[-1] + -(-view.length // (_WG * self.tuning.items(view.length))))
        self._aux_view = aux_view
        self._aux = None if aux_floats is None else np.asarray(aux_floats, np.float32)
        self._graph = None
        self._device = None
        self._native_float_add = False
        self.params_buffer = None
        self.node_ids = ()

    @property
    def _owner(self) -> str:
        return f'{self._kind} "{self.id}"'

    def _role_name(self, role) -> str:
        return role

    def _check_filter(self, pair):
        try:
            lo, hi = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise GraphValidationError(f"{self._owner} filter_range needs two numbers (got {pair!r})") from None
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise GraphValidationError(f"{self._owner} filter_range needs lo <= hi, neither NaN (got {lo}, {hi})")
        return float(np.float32(lo)), float(np.float32(hi))

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
        return self.operation in ("sum", "mean") and self.privatized and words <= _MAX_PARTIAL_WORDS

    @property
    def uses_float_atomics(self) -> bool:
        """True when sums reach global memory through native float atomics
        (decided in ``add_to_graph`` from ``tuning.float_atomics`` and the
        device; sum and mean without partials only)."""
        return self._native_float_add and self.operation in ("sum", "mean") and not self.uses_partials

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
    def _layout(self, device):
        align = int(device.limits["min-storage-buffer-offset-alignment"])
        self._record_stride = max(_RECORD_BYTES, align)
        aux_bytes = 0 if self._aux is None else self._aux.nbytes
        self._header_bytes = max(1, -(-aux_bytes // self._record_stride)) * self._record_stride
        size = self._header_bytes + self._record_stride * len(self._keys)
        self._mirror = np.zeros(size, np.uint8)
        if self._aux is not None:
            self._mirror[:aux_bytes] = self._aux.view(np.uint8)
        for k, key_view in enumerate(self._keys):
            start = self._header_bytes + k * self._record_stride
            words = self._mirror[start:start + 52].view(np.uint32)
            floats = self._mirror[start:start + 52].view(np.float32)
            words[0] = key_view.length
            words[11] = self.tuning.items(key_view.length)
            words[12] = self._wg_base[k]
            for slot, views in ((1, self._keys), (3, self._roles.get("values")), (5, self._roles.get("mask")),
                                (7, self._roles.get("filter_values"))):
                if views is not None:
                    words[slot] = ComputeKernel.element_offset(views[k], device)
                    words[slot + 1] = views[k].byte_stride // 4
            floats[9], floats[10] = self._filter

    def _write(self, queue, start: int, end: int) -> None:
        if self.params_buffer is not None:
            (queue or self._device.queue).write_buffer(self.params_buffer, start, self._mirror[start:end])

    def _write_aux(self, values, queue) -> None:
        self._aux = np.asarray(values, np.float32)
        if self._graph is not None:
            self._mirror[:self._aux.nbytes] = self._aux.view(np.uint8)
            self._write(queue, 0, self._aux.nbytes)

    def set_filter_range(self, filter_range, *, queue=None) -> None:
        """Keep only rows whose ``filter_values`` lie in ``filter_range = (lo, hi)``
        (inclusive; NaN never passes) from the next encoding on, without
        recompiling.

        Writes the parameter buffer with ``queue.write_buffer`` (default: the
        graph device's queue) once the primitive is in a graph; before
        ``add_to_graph`` it only records the range.
        """
        if "filter_values" not in self._roles:
            raise GraphStateError(f"{self._owner} has no filter_values: set_filter_range does not apply")
        self._filter = self._check_filter(filter_range)
        if self._graph is not None:
            for k in range(len(self._keys)):
                start = self._header_bytes + k * self._record_stride + 36
                self._mirror[start:start + 8].view(np.float32)[:] = self._filter
            self._write(queue, self._header_bytes, len(self._mirror))

    # ---------------------------------------------------------------- graph
    def add_to_graph(self, graph) -> tuple:
        """Declare this primitive's buffers and nodes in ``graph``.

        Adds ``"{id}-clear"``, ``"{id}-accumulate"`` and ``"{id}-reduce"``
        (privatized sum/mean) or ``"{id}-finalize"`` (other min/max/mean),
        plus any primitive-specific pass before them; creates and imports the
        parameter buffer ``"{id}-params"`` (destroyed with the compiled
        graph). Returns the node IDs in order. Records, submits and reads
        back nothing.
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
        native_float_add = self._resolve_float_atomics(device)
        self._device, self._native_float_add = device, native_float_add
        self._layout(device)
        self.params_buffer = device.create_buffer_with_data(
            data=self._mirror, usage=BU.STORAGE | BU.COPY_DST | BU.COPY_SRC)
        self._params = graph.import_buffer(id=f"{self.id}-params", byte_length=self.params_buffer.size,
                                           usage=self.params_buffer.usage, buffer=self.params_buffer)
        self._counts = None  # partials, or per-key counts of a global mean
        if self.uses_partials:
            words = self.key_count * max(1, self.workgroup_count) * (2 if self.operation == "mean" else 1)
            self._counts = graph.create_transient_buffer(id=f"{self.id}-partials", byte_length=4 * words,
                                                         usage=BU.STORAGE)
        elif self.operation == "mean":
            self._counts = graph.create_transient_buffer(id=f"{self.id}-counts", byte_length=4 * self.key_count,
                                                         usage=BU.STORAGE)
        self._graph = graph
        self._declare_extra(graph)
        ids = [*self._add_pre_nodes(graph), self._add_clear(graph), self._add_accumulate(graph)]
        if self.uses_partials or self.operation in ("min", "max", "mean"):
            ids.append(self._add_finalize(graph))
        self.node_ids = tuple(ids)
        return self.node_ids

    def _state_uses(self):
        return [(self._counts, "storage-read-write")] if self._counts is not None else []

    def _add_clear(self, graph) -> str:
        params_buffer, owned = self.params_buffer, self._owned_buffers()

        def compile_clear(ctx):
            for obj in (params_buffer, *owned):
                ctx.own(obj)
            kernel = self._kernel(ctx, "init")
            bindings = self._state_bindings(init=True)
            groups = -(-self.key_count // _WG)
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=groups)

        clears = [] if self.uses_partials else self._state_uses()  # every workgroup writes all its partials
        return graph.add_compute_node(id=f"{self.id}-clear", compile=compile_clear,
                                      resources=[(self.output, "storage-write"), *clears, *self._extra_uses()])

    def _add_accumulate(self, graph) -> str:
        partials = self.uses_partials
        roles = [(0, self._keys)] + [(b, self._roles[r]) for b, r in ((1, "values"), (2, "mask"),
                                                                      (3, "filter_values")) if r in self._roles]

        def compile_accumulate(ctx):
            kernel = self._kernel(ctx, "accumulate")
            fixed = {**self._state_bindings(init=False), **self._aux_bindings()}
            if partials:  # the reduce pass writes the output
                del fixed[5]
            dispatches = []
            for k, view in enumerate(self._keys):
                if view.length:
                    bindings = {**fixed, **{b: views[k] for b, views in roles}}
                    groups = -(-view.length // (_WG * self.tuning.items(view.length)))
                    dispatches.append((bindings, self._header_bytes + k * self._record_stride, groups))

            def encode(p, frame):
                buffer = frame.buffer(self._params)
                for bindings, offset, groups in dispatches:
                    bound = {b: (buffer, r.start, r.size) if isinstance(r, _ParamsRange) else r
                             for b, r in bindings.items()}
                    bound[4] = (buffer, offset, _RECORD_BYTES)
                    kernel.dispatch(p, frame, bindings=bound, workgroups=groups)
            return encode

        reads = [(v, "storage-read") for _, views in roles for v in views]
        if self._aux_view is not None:
            reads.append((self._aux_view, "storage-read"))
        writes = ([] if partials else [(self.output, "storage-read-write")]) + self._state_uses()
        return graph.add_compute_node(
            id=f"{self.id}-accumulate", compile=compile_accumulate,
            resources=[*reads, (self._params, "storage-read"), *self._aux_extra_uses(), *writes,
                       *self._extra_uses()])

    def _add_finalize(self, graph) -> str:
        partials = self.uses_partials
        entry = "reduce" if partials else "finalize"

        def compile_finalize(ctx):
            kernel = self._kernel(ctx, entry)
            bindings = {5: self.output} if self._counts is None else {5: self.output, 6: self._counts}
            groups = self.key_count if partials else -(-self.key_count // _WG)  # reduce: a workgroup per key
            return lambda p, frame: kernel.dispatch(p, frame, bindings=bindings, workgroups=groups)

        return graph.add_compute_node(id=f"{self.id}-{entry}", compile=compile_finalize,
                                      resources=[(self.output, "storage-read-write"), *self._state_uses()])

    def _kernel(self, ctx, entry_point):
        partials = self.uses_partials
        flags = {"VALUES": self.operation != "count", "ORDER": self.operation in ("min", "max"),
                 "SUM": self.operation == "sum", "MEAN": self.operation == "mean", "PARTIALS": partials,
                 "FLOAT_ATOMICS": self.uses_float_atomics,
                 "SUBGROUP": partials and self.key_count <= self.tuning.subgroup_max_keys
                 and bool(ctx.capabilities.subgroups) and self.tuning.subgroups is not False,
                 "MASK": "mask" in self._roles, "FILTER": "filter_values" in self._roles, **self._flags()}
        constants = {"KEYS": self.key_count, "OP": OPERATIONS[self.operation],
                     "OUT_OFFSET": ComputeKernel.element_offset(self.output, ctx.device)}
        if partials and entry_point in ("accumulate", "reduce"):
            constants["TOTAL_WGS"] = self.workgroup_count
        if entry_point == "accumulate":
            constants.update(LOCAL_KEYS=self.key_count if self.privatized else 1, **self._key_constants(ctx.device))
        elif entry_point == "init":
            constants.update(self._clear_constants(ctx.device))
        return ComputeKernel(ctx.device, code=_shader_text(self._snippet, flags), entry_point=entry_point,
                             constants=constants, label=f"{self.id}-{entry_point}")

    def _state_bindings(self, *, init):
        bindings = {5: self.output}
        if self._counts is not None and not (init and self.uses_partials):
            bindings[6] = self._counts
        return bindings

    def _all_views(self):
        yield from ((self._key_name, v) for v in self._keys)
        for role, views in self._roles.items():
            yield from ((self._role_name(role), v) for v in views)
        yield "output", self.output
        if self._aux_view is not None:
            yield "parameter view", self._aux_view

    # ----------------------------------------------------------------- hooks
    def _flags(self) -> dict:
        return {}

    def _key_constants(self, device) -> dict:
        return {}

    def _clear_constants(self, device) -> dict:
        return {}

    def _aux_bindings(self) -> dict:
        """Bindings 7+ of the accumulate kernel (domain, bounds, edges)."""
        if self._aux_view is not None:
            return {7: self._aux_view}
        return {7: _ParamsRange(0, self._header_bytes)}

    def _aux_extra_uses(self) -> list:
        return []

    def _declare_extra(self, graph) -> None:
        pass

    def _add_pre_nodes(self, graph):
        return ()

    def _extra_uses(self) -> list:
        """Uses shared by the clear and accumulate nodes (overflow word)."""
        return []

    def _owned_buffers(self) -> list:
        return []

    def __repr__(self) -> str:
        return f"<{self._kind} {self.id!r} {self.operation} x{self.key_count}>"


@dataclass(frozen=True)
class _ParamsRange:
    """A byte range of the primitive's parameter buffer, bound per frame."""

    start: int
    size: int


# ---------------------------------------------------------------- public API
class GPUGroupAggregation(_KeyedAggregation):
    """Count rows, or sum / min / max / mean their float32 values, per dense
    uint32 group code.

    Parameters
    ----------
    id : str
        Prefix of node and resource IDs (``"{id}-accumulate"``...).
    codes : GraphDataView or GraphVectorView
        ``uint32`` group codes; row ``i`` contributes to output row ``codes[i]``.
    output : GraphDataView
        Packed, ``group_count`` rows: ``uint32`` for ``"count"``, else ``float32``.
    operation : {"count", "sum", "min", "max", "mean"}
    values : GraphDataView or GraphVectorView, optional
        ``float32`` values aligned with ``codes`` (required except for count).
    group_count : int, optional
        Number of groups; defaults to ``output.length``.
    mask : GraphDataView or GraphVectorView, optional
        ``uint32`` aligned with ``codes``: zero excludes a row, nonzero keeps it.
    overflow : GraphDataView, optional
        One ``uint32`` row that receives the number of accepted rows whose
        code is ``>= group_count``. When omitted the primitive makes its own
        (:attr:`overflow_buffer`, readable with ``queue.read_buffer``).
    filter_values : GraphDataView or GraphVectorView, optional
        ``float32`` aligned with ``codes``; with it only rows whose value lies
        in ``filter_range`` count (NaN never passes).
    filter_range : (float, float), optional
        Inclusive ``(lo, hi)``; default ``(-inf, inf)``. Change it between
        encodings with :meth:`set_filter_range` (no recompilation).
    tuning : AggregationTuning, optional

    Notes
    -----
    Vector inputs must share one chunk topology (equal ordered chunk
    lengths); chunks are read in place, never packed, and empty chunks add
    no dispatch. Each encoding clears the output and the overflow word, then
    accumulates every chunk. Counts are exact and wrap modulo 2**32. Rows
    with a non-finite value are ignored by sum / min / max / mean (they still
    count as overflow when their code is out of range). Empty groups hold
    +0.0 for sum and NaN for min, max and mean. Sum and mean add into
    global memory with native float atomics where the device has them
    (``tuning.float_atomics``), else through a compare-exchange loop on
    float32 bits; either way their accumulation order, and hence their
    rounding, is not deterministic (native adds may also flush subnormal
    values to zero); min and max are deterministic. Min prefers -0 and max
    +0. Up to ``tuning.privatize_max_keys`` groups accumulate in workgroup
    memory first.

    Does not submit, map or read back; the caller owns ``output`` and
    ``overflow``.
    """

    _kind = "GPUGroupAggregation"
    _snippet = "group_keys.wgsl"
    _key_name = "codes"

    def __init__(self, *, id, codes, output, operation="count", values=None, group_count=None, mask=None,
                 overflow=None, filter_values=None, filter_range=None, tuning=None):
        count = output.length if group_count is None and isinstance(output, GraphDataView) else group_count
        self._setup(id=id, keys=codes, values=values, output=output, key_count=count, operation=operation,
                    mask=mask, filter_values=filter_values, filter_range=filter_range, tuning=tuning)
        if overflow is not None:
            if not isinstance(overflow, GraphDataView) or overflow.format.name != "uint32" or overflow.length < 1:
                raise GraphValidationError(f"{self._owner} overflow must be a uint32 GraphDataView with at least "
                                           f"one row (got {overflow!r})")
            if overflow.handle is self.output.handle:
                raise GraphValidationError(f"{self._owner} overflow must not share a buffer with output")
        self.overflow = overflow
        self.overflow_buffer = None

    def _declare_extra(self, graph):
        if self.overflow is None:
            self.overflow_buffer = graph.device.create_buffer(
                label=f"{self.id}-overflow", size=4, usage=BU.STORAGE | BU.COPY_SRC | BU.COPY_DST)
            handle = graph.import_buffer(id=f"{self.id}-overflow", byte_length=4, usage=self.overflow_buffer.usage,
                                         buffer=self.overflow_buffer)
            self.overflow = graph.create_data_view(handle, format="uint32", length=1)
            self._own_overflow = True
        else:
            self._own_overflow = False

    def _owned_buffers(self):
        return [self.overflow_buffer] if self._own_overflow else []

    def _extra_uses(self):
        return [(self.overflow, "storage-read-write")]

    def _state_bindings(self, *, init):
        bindings = super()._state_bindings(init=init)
        bindings[7] = self.overflow
        return bindings

    def _aux_bindings(self):
        return {}

    def _key_constants(self, device):
        return {"OVERFLOW_OFFSET": ComputeKernel.element_offset(self.overflow, device)}

    _clear_constants = _key_constants
