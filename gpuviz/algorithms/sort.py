"""GPUSort: stable paired uint32 sort of one packed domain.

Small domains (up to ``SortTuning.small_max`` rows) sort inside one
workgroup with a bitonic network over (key, row) pairs; larger ones use an
8-bit LSD radix sort: one histogram pass for every digit, then one scatter
pass per digit with a chained digit scan across tiles (decoupled look-back
with a never-hang fallback). See ``shaders/sort_radix.wgsl`` and
``shaders/sort_small.wgsl``. :func:`add_sort_domain` is the core that
:class:`GPUBatchSort` and :class:`GPUSegmentedSort` reuse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from ..graph import ComputeKernel
from ..graph.checks import check_id
from ..errors import GraphValidationError
from ..graph.resources import GraphDataView
from ..graph.shaders import wgsl
from .dispatch import WORKGROUP, ceil_div, use_subgroups
from .validation import check_topology, checked_tuning, chunks_of, refuse_overlaps

__all__ = ["GPUSort", "SortTuning"]

STORAGE = wgpu.BufferUsage.STORAGE
DIRECTIONS = ("ascending", "descending")
MAX_SMALL_SLOTS = 2048     # one-workgroup sort: 2 x 2048 words of workgroup memory
MAX_ROWS = (1 << 30) - 1   # look-back words keep 30-bit counts
_SCATTER_SHARED_WORDS = 2 * 256 + 2  # per-digit arrays and control words beside the tile (sort_radix.wgsl)
STAGINGS = ("auto", "plain", "shared")
RADIX_TEMPLATE = "algorithms/shaders/sort_radix.wgsl"  # SortTuning.radix_template's default
_STATE_HEADER_WORDS = 1056  # digit histograms (1024) + tile counters, see sort_radix.wgsl


@dataclass(frozen=True, kw_only=True)
class SortTuning:
    """Structural knobs of the sorts (benchmarks and tests vary them).

    A frozen value checked where a sort uses it (``add_to_graph``); it holds
    no device state and changes no sort already added to a graph.

    Attributes
    ----------
    items : int
        Rows per invocation in a radix tile; a tile holds ``256 * items`` rows.
    lookback : int
        Predecessor tiles each look-back step reads at once (1..32).
    small_max : int
        Domains of up to this many rows sort inside one workgroup (bitonic);
        larger ones use radix passes. At most 2048.
    spin_limit : int
        Fruitless polls of an unpublished predecessor tile before the waiting
        tile counts that predecessor's digits itself (0 does so at once).
    subgroups : bool or None
        None ranks with subgroup operations where the device has them; False
        forces the portable workgroup-memory path.
    late_values : bool
        True loads a tile's values after its look-back (fewer live registers
        per row while ranking and looking back); False loads them with the
        keys.
    staging : {"auto", "plain", "shared"}
        Workgroup memory of the scatter pass. "plain" stages the tile's keys
        and values in a plain (non-atomic) array and keeps the subgroup
        ranking counters in a separate atomic one; "shared" keeps both in one
        atomic array (less memory); "auto" is "plain" where it fits the
        device's workgroup storage, else "shared".
    rank_lanes : int
        The smallest subgroup (8, 16, 32, 64 or 128 lanes) the ranking
        counters have room for (``128 * 256 / rank_lanes`` words); a device
        with smaller subgroups ranks with the portable path. Larger values
        need less workgroup memory where the tile is small ("shared" staging
        holds ``max(tile, counters)`` words).
    ballots_first : bool
        Subgroup ranking issues every row's digit ballots, then every row's
        counter atomic, then every row's shuffle (the rows' dependency chains
        overlap); False ranks one row after another.
    runtime_checks : bool
        Compile the sort kernels (radix and one-workgroup) with wgpu's
        bounds checks and forced loop bounding (True) or without them
        (False, the default: every index is in range by construction,
        domains are validated on the host, every loop ends). See
        :mod:`gpuviz.graph.shaders`.
    pad_words : int
        Unused workgroup words added to the scatter pass (0): a benchmark
        knob telling a workgroup-memory occupancy limit from a register one.
    radix_template : str
        The radix kernels' template (a path the shader builder loads): the
        sort's own, or one extending it through its blocks (the timing
        probes of ``gpuviz.bench.sort_profile``, whose output is wrong by
        design).
    template_values : tuple of (str, value) pairs
        Values that template takes beside the sort's own (none for the
        sort's template).
    """

    items: int = 21
    lookback: int = 4
    small_max: int = 2048
    spin_limit: int = 64
    subgroups: bool | None = None
    late_values: bool = False
    staging: str = "shared"
    rank_lanes: int = 8
    ballots_first: bool = False
    runtime_checks: bool = False
    pad_words: int = 0
    radix_template: str = RADIX_TEMPLATE
    template_values: tuple = ()

    @property
    def tile(self) -> int:
        """Rows of one radix tile (``256 * items``)."""
        return WORKGROUP * self.items

    def counter_words(self) -> int:
        """Words of the subgroup ranking counters (``128 * 256 / rank_lanes``)."""
        return 128 * WORKGROUP // self.rank_lanes

    def shared_words(self, staging: str) -> int:
        """Workgroup words of a scatter pass with "plain" or "shared" staging."""
        if staging == "plain":
            return self.tile + self.counter_words() + _SCATTER_SHARED_WORDS + self.pad_words
        return max(self.tile, self.counter_words()) + _SCATTER_SHARED_WORDS + self.pad_words

    def resolved_staging(self, device) -> str:
        """The staging a scatter pass uses on ``device`` ("auto" resolved by its workgroup storage limit)."""
        if self.staging != "auto":
            return self.staging
        limit = int(device.limits["max-compute-workgroup-storage-size"])
        return "plain" if 4 * self.shared_words("plain") <= limit else "shared"


# ------------------------------------------------------------------ shaders
HIST_ITEMS = 8  # keys per invocation per histogram step (loads issued together)


def radix_shader(tuning: SortTuning, *, subgroups: bool, has_values: bool, staging: str) -> tuple:
    """``(code, constants)`` of the radix kernels (entry points ``clear``,
    ``histogram``, ``scatter``): template values for what sizes function-scope
    arrays or unrolls per-row code, ``override`` constants for the rest."""
    code = wgsl(tuning.radix_template, ITEMS=tuning.items, LOOKBACK=tuning.lookback, HIST_ITEMS=HIST_ITEMS,
                staging=staging, subgroups=subgroups, pad_words=tuning.pad_words, **dict(tuning.template_values))
    constants = {"SPIN_LIMIT": tuning.spin_limit, "HAS_VALUES": has_values, "LATE_VALUES": tuning.late_values,
                 "BALLOTS_FIRST": tuning.ballots_first, "CNT_WORDS": tuning.counter_words()}
    return code, constants


def _uniform(ctx, words) -> wgpu.GPUBuffer:
    data = np.zeros(max(16, ceil_div(len(words), 4) * 4), np.uint32)
    data[: len(words)] = words
    return ctx.own(ctx.device.create_buffer_with_data(label=f"{ctx.node_id}-params", data=data.tobytes(),
                                                      usage=wgpu.BufferUsage.UNIFORM))


def _offset(view, device) -> int:
    """Element offset of a view inside the range its binding covers (0 for a
    whole transient handle)."""
    return ComputeKernel.element_offset(view, device) if isinstance(view, GraphDataView) else 0


def width_class(n: int) -> int:
    """Slots a domain of ``n`` rows sorts in inside one workgroup: the next
    power of two, at least 2 (domains of one class share a dispatch)."""
    return 1 << max(1, (n - 1).bit_length())


# --------------------------------------------------------------- validation
def check_args(owner: str, id, direction, key_bits, tuning, device) -> None:
    check_id(owner, id)
    if direction not in DIRECTIONS:
        raise GraphValidationError(f'{owner} "{id}" direction must be "ascending" or "descending" (got {direction!r})')
    if not isinstance(key_bits, int) or isinstance(key_bits, bool) or not 1 <= key_bits <= 32:
        raise GraphValidationError(f'{owner} "{id}" key_bits must be an integer in 1..32 (got {key_bits!r})')
    checked_tuning(owner, id, tuning, SortTuning)
    values = tuning.template_values
    if (not 1 <= tuning.items <= 64 or not 1 <= tuning.lookback <= 32 or not 1 <= tuning.small_max <= MAX_SMALL_SLOTS
            or tuning.spin_limit < 0 or tuning.staging not in STAGINGS
            or tuning.rank_lanes not in (8, 16, 32, 64, 128) or not isinstance(tuning.ballots_first, bool)
            or not isinstance(tuning.runtime_checks, bool) or not isinstance(tuning.pad_words, int)
            or tuning.pad_words < 0 or not isinstance(tuning.radix_template, str) or not isinstance(values, tuple)
            or not all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) for v in values)):
        raise GraphValidationError(f'{owner} "{id}" has invalid sort tuning {tuning} (items 1..64, lookback 1..32, '
                                   f"small_max 1..{MAX_SMALL_SLOTS}, spin_limit >= 0, staging one of {STAGINGS}, "
                                   "rank_lanes 8/16/32/64/128, ballots_first and runtime_checks bools, "
                                   "pad_words >= 0, radix_template a str, template_values a tuple of (name, value) "
                                   "pairs)")
    limit = int(device.limits["max-compute-workgroup-storage-size"])
    shared = 4 * tuning.shared_words(tuning.resolved_staging(device))
    if shared > limit:
        raise GraphValidationError(f'{owner} "{id}" tuning items={tuning.items} needs {shared} bytes of workgroup '
                                   f"memory per radix tile, the device allows {limit}")


def check_views(owner: str, id: str, graph, keys, values, output_keys, output_values) -> tuple:
    """Validate the four arguments of a sort; return ``(kind, chunks)`` where
    chunks is a list of ``(keys, values, out_keys, out_values)`` data views
    (values None for a keys-only sort)."""
    if (values is None) != (output_values is None):
        have, missing = ("values", "output_values") if output_values is None else ("output_values", "values")
        raise GraphValidationError(f'{owner} "{id}" has {have} but no {missing} (give both or neither)')
    named = [("keys", keys), ("output_keys", output_keys)]
    if values is not None:
        named += [("values", values), ("output_values", output_values)]
    checked = {name: chunks_of(owner, id, name, value, graph) for name, value in named}
    kind, ref = checked["keys"]
    for name, (k, views) in checked.items():
        check_topology(owner, id, name, "keys", k, views, kind, ref)
        if kind == "data" and views[0].length != ref[0].length:
            raise GraphValidationError(
                f'{owner} "{id}" {name} has {views[0].length} rows but keys has {ref[0].length}')
    # inputs are bound read-only next to the outputs: they may not share a buffer at all
    by_role = {name: chunks for name, (_, chunks) in checked.items()}
    refuse_overlaps(owner, id, reads={n: by_role.get(n) for n in ("keys", "values")},
                    writes={n: by_role.get(n) for n in ("output_keys", "output_values")}, separate=True)
    get = lambda name: checked[name][1] if name in checked else [None] * len(ref)
    return kind, list(zip(get("keys"), get("values"), get("output_keys"), get("output_values")))


def check_fits(owner: str, id: str, domains, tuning: SortTuning, device) -> None:
    """Every domain must fit the look-back counters and the device's storage
    binding size (views, ping-pong scratch and the radix state)."""
    limit = int(device.limits["max-storage-buffer-binding-size"])
    align = int(device.limits["min-storage-buffer-offset-alignment"])
    for keys, *_ in domains:
        n = keys.length
        if n > MAX_ROWS:
            raise GraphValidationError(f'{owner} "{id}" domain is too long ({n} rows, at most {MAX_ROWS})')
        need = max(4 * n + align, 4 * (_STATE_HEADER_WORDS + 4 * ceil_div(n, tuning.tile) * WORKGROUP))
        if need > limit:
            raise GraphValidationError(f'{owner} "{id}" domain of {n} rows needs storage bindings of {need} bytes, '
                                       f"the device allows {limit}")


# ----------------------------------------------------------- domain planner
def add_sort_domain(graph, *, prefix: str, keys, values, out_keys, out_values, descending: bool,
                    key_bits: int, tuning: SortTuning) -> list:
    """Add the nodes sorting one domain (validated views); return their IDs."""
    n = keys.length
    if n == 0:
        return []
    if n <= tuning.small_max:
        table = np.array([[0, n]], np.uint32)
        return [add_small_node(graph, node_id=f"{prefix}-sort", keys=keys, values=values, out_keys=out_keys,
                               out_values=out_values, table=table, width=width_class(n), descending=descending,
                               key_bits=key_bits, runtime_checks=tuning.runtime_checks)]
    return _add_radix(graph, prefix, keys, values, out_keys, out_values, descending, key_bits, tuning)


def _flip_mask(descending: bool, key_bits: int) -> tuple:
    return (0xFFFFFFFF if descending else 0), (0xFFFFFFFF >> (32 - key_bits))


def add_small_node(graph, *, node_id, keys, values, out_keys, out_values, table, width, descending,
                   key_bits, runtime_checks=True) -> str:
    """One node sorting every ``(offset, length)`` domain of ``table`` (rows
    relative to the views) inside workgroups of ``max(256, width)`` slots.
    ``runtime_checks=False`` compiles it without wgpu's bounds checks and
    loop bounding: the caller has validated every domain inside the views."""
    slots = max(WORKGROUP, width)
    per_group = slots // width
    groups = ceil_div(len(table), per_group)
    flip, mask = _flip_mask(descending, key_bits)
    has_values = values is not None
    resources = [(keys, "storage-read"), (out_keys, "storage-write")]
    if has_values:
        resources += [(values, "storage-read"), (out_values, "storage-write")]

    def compile(ctx):
        device = ctx.device
        kernel = ComputeKernel(device, code=wgsl("algorithms/shaders/sort_small.wgsl"), entry_point="sort_small",
                               constants={"SLOTS": slots, "HAS_VALUES": has_values}, label=ctx.node_id,
                               bounds_checks=runtime_checks, loop_bounding=runtime_checks)
        table_buffer = ctx.own(device.create_buffer_with_data(label=f"{ctx.node_id}-segments",
                                                              data=np.ascontiguousarray(table, np.uint32).tobytes(),
                                                              usage=STORAGE))
        vals_in, vals_out = (values, out_values) if has_values else (keys, out_keys)
        params = _uniform(ctx, [len(table), width, per_group, flip, mask, _offset(keys, device),
                                _offset(vals_in, device), _offset(out_keys, device), _offset(vals_out, device)])
        bindings = {0: params, 1: table_buffer, 2: keys, 3: vals_in, 4: out_keys, 5: vals_out}
        return lambda compute_pass, frame: kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)

    return graph.add_compute_node(id=node_id, resources=resources, compile=compile)


def _add_radix(graph, prefix, keys, values, out_keys, out_values, descending, key_bits, tuning) -> list:
    n = keys.length
    passes = ceil_div(key_bits, 8)
    tiles = ceil_div(n, tuning.tile)
    state_words = _STATE_HEADER_WORDS + passes * tiles * WORKGROUP
    clear_groups = min(ceil_div(state_words, WORKGROUP * 8), 4096)
    hist_groups = min(ceil_div(n, 4096), 1024)
    per_group = ceil_div(ceil_div(n, hist_groups), WORKGROUP * HIST_ITEMS) * WORKGROUP * HIST_ITEMS
    hist_groups = ceil_div(n, per_group)
    flip, mask = _flip_mask(descending, key_bits)
    has_values = values is not None

    state = graph.create_transient_buffer(id=f"{prefix}-state", byte_length=4 * state_words, usage=STORAGE)
    temp_keys = temp_values = None
    if passes > 1:
        temp_keys = graph.create_transient_buffer(id=f"{prefix}-temp-keys", byte_length=4 * n, usage=STORAGE)
        if has_values:
            temp_values = graph.create_transient_buffer(id=f"{prefix}-temp-values", byte_length=4 * n,
                                                        usage=STORAGE)

    def kernel(ctx, entry):
        code, constants = radix_shader(tuning, subgroups=use_subgroups(ctx, tuning.subgroups),
                                       has_values=has_values, staging=tuning.resolved_staging(ctx.device))
        return ComputeKernel(ctx.device, code=code, entry_point=entry, constants=constants, label=ctx.node_id,
                             bounds_checks=tuning.runtime_checks, loop_bounding=tuning.runtime_checks)

    def params(ctx, pass_index, src_k=None, src_v=None, dst_k=None, dst_v=None, groups=0):
        d = ctx.device
        off = lambda view: _offset(view, d) if view is not None else 0
        return _uniform(ctx, [n, tiles, pass_index, passes, flip, mask, 8 * pass_index, groups, off(src_k),
                              off(src_v), off(dst_k), off(dst_v), per_group, state_words])

    def compile_clear(ctx):
        k = kernel(ctx, "clear")
        bindings = {0: params(ctx, 0, groups=clear_groups), 5: state}
        return lambda p, frame: k.dispatch(p, frame, bindings=bindings, workgroups=clear_groups)

    def compile_histogram(ctx):
        k = kernel(ctx, "histogram")
        bindings = {0: params(ctx, 0, src_k=keys, groups=hist_groups), 1: keys, 5: state}
        return lambda p, frame: k.dispatch(p, frame, bindings=bindings, workgroups=hist_groups)

    ids = [graph.add_compute_node(id=f"{prefix}-clear", resources=[(state, "storage-write")], compile=compile_clear),
           graph.add_compute_node(id=f"{prefix}-histogram", resources=[(keys, "storage-read"),
                                                                        (state, "storage-read-write")],
                                  compile=compile_histogram)]
    src_k, src_v = keys, values
    for p in range(passes):
        last = (passes - 1 - p) % 2 == 0
        dst_k, dst_v = (out_keys, out_values) if last else (temp_keys, temp_values)
        ids.append(_add_scatter(graph, f"{prefix}-scatter-{p}", p, kernel, params, state, tiles, has_values,
                                src_k, src_v, dst_k, dst_v))
        src_k, src_v = dst_k, dst_v
    return ids


def _add_scatter(graph, node_id, pass_index, kernel, params, state, tiles, has_values, src_k, src_v, dst_k,
                 dst_v) -> str:
    resources = [(src_k, "storage-read"), (dst_k, "storage-write"), (state, "storage-read-write")]
    if has_values:
        resources += [(src_v, "storage-read"), (dst_v, "storage-write")]
    else:  # keys-only: the value bindings alias the key bindings and are never touched
        src_v, dst_v = src_k, dst_k

    def compile(ctx):
        k = kernel(ctx, "scatter")
        bindings = {0: params(ctx, pass_index, src_k, src_v, dst_k, dst_v), 1: src_k, 2: src_v, 3: dst_k,
                    4: dst_v, 5: state}
        return lambda p, frame: k.dispatch(p, frame, bindings=bindings, workgroups=tiles)

    return graph.add_compute_node(id=node_id, resources=resources, compile=compile)


# -------------------------------------------------------------------- GPUSort
class GPUSort:
    """Stable sort of uint32 keys, with optional uint32 values, in one packed domain.

    Parameters
    ----------
    id : str
        Prefix of every node and transient this sort adds (``"{id}-sort"``, or
        ``"{id}-clear"``, ``"{id}-histogram"``, ``"{id}-scatter-0"``...).
    keys, output_keys : GraphDataView
        Packed ``uint32`` views of equal length.
    values, output_values : GraphDataView, optional
        Packed ``uint32`` payload moved with the keys (both or neither).
    direction : {"ascending", "descending"}
        Equal keys keep their source order in both directions.
    key_bits : int
        Only the low ``key_bits`` bits (1..32) of a key order it; fewer bits
        need fewer radix passes (``ceil(key_bits / 8)``). Output keys are the
        input keys, unmasked.
    tuning : SortTuning, optional

    Notes
    -----
    Domains of up to ``tuning.small_max`` rows (default 2048) sort inside one
    workgroup; larger ones take one clear, one histogram and one scatter node
    per 8-bit digit. Scratch (ping-pong buffers, digit state) are graph
    transients. Inputs are never written; outputs must live in other buffers
    than the inputs. Records nothing itself: ``add_to_graph`` declares
    nodes, the compiled graph encodes them; never submits or reads back.
    """

    def __init__(self, *, id: str, keys, output_keys, values=None, output_values=None,
                 direction: str = "ascending", key_bits: int = 32, tuning: SortTuning | None = None):
        self.id = check_id("GPUSort", id)
        self.keys, self.values = keys, values
        self.output_keys, self.output_values = output_keys, output_values
        self.direction = direction
        self.key_bits = key_bits
        self.tuning = checked_tuning("GPUSort", id, tuning, SortTuning)
        self.node_ids: list = []

    def add_to_graph(self, graph) -> list:
        """Validate the views and add this sort's nodes; returns their IDs."""
        check_args("GPUSort", self.id, self.direction, self.key_bits, self.tuning, graph.device)
        kind, domains = check_views("GPUSort", self.id, graph, self.keys, self.values, self.output_keys,
                                    self.output_values)
        if kind != "data":
            raise GraphValidationError(
                f'GPUSort "{self.id}" sorts one packed domain: pass GraphDataViews (GPUBatchSort sorts the chunks '
                "of vector views)")
        check_fits("GPUSort", self.id, domains, self.tuning, graph.device)
        keys, values, out_keys, out_values = domains[0]
        self.node_ids = add_sort_domain(graph, prefix=self.id, keys=keys, values=values, out_keys=out_keys,
                                        out_values=out_values, descending=self.direction == "descending",
                                        key_bits=self.key_bits, tuning=self.tuning)
        return self.node_ids

    @property
    def algorithm(self) -> str:
        """"bitonic" (one workgroup), "radix", or "empty" for this sort's length."""
        n = getattr(self.keys, "length", 0)
        return "empty" if n == 0 else "bitonic" if n <= self.tuning.small_max else "radix"
