"""CompiledGPUCommandGraph: the executable form of a command graph.

Compilation validates the closed graph, derives hazard edges, fixes a stable
node order, plans and creates transient allocations and runs node compile
callbacks. Encoding records into the caller's encoder only: it never submits,
maps or reads back (GPU timings are read later, explicitly, through a
readback ring).

A frame's CPU cost is mostly per call into wgpu-py, so what does not change
between encodings is prepared once: the passes (grouping, labels, callbacks,
pass descriptors), the check that nothing bound was destroyed (a watch that a
destroy() turns stale), the checked resources of the compiled imports and of
recent override mappings, the render attachments, and bind groups found by
the encoding's resource mapping (:attr:`GraphFrame.resources_key`).
Timestamped encodings begin their passes the general way.
"""

from __future__ import annotations

import contextlib
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import wgpu

from ..device import device_capabilities
from .allocation import plan_graph_transients
from .compat import DestroyWatch, compute_pass_descriptor, is_destroyed, render_pass_descriptor
from ..errors import GraphError, GraphStateError, GraphTypeError, NodeCompileError, OverrideError
from .hazards import order_nodes
from .nodes import NodeCompileContext
from .physical import check_physical_buffer, check_physical_texture, check_resolved_imports
from .readback_ring import GPUReadbackRing
from .resources import GraphTextureView

__all__ = ["CompiledGPUCommandGraph", "GraphFrame", "GraphStats", "compile_graph"]

TIMING_RING_SLOTS = 3
#: Override mappings whose checked resources an encoding keeps (DataAnalysis: one per column choice).
OVERRIDE_PLANS = 8


@dataclass
class GraphStats:
    """What compilation decided, for tests and the inspector.

    Byte totals are facts, not a score: a high reuse percentage is not
    automatically good (see the spec's "Memory planning and pressure").
    """

    node_order: list
    edges: list  # (before_id, after_id, kind)
    pass_count: int
    imported_buffer_count: int
    imported_bytes: int
    logical_transient_count: int
    logical_transient_bytes: int
    physical_transient_count: int
    physical_transient_bytes: int
    reused_bytes: int
    reuse_percent: float
    transient_texture_count: int
    physical_texture_count: int
    compile_seconds: float
    capabilities: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """The fields as a new plain dict (a shallow copy; lists are not copied)."""
        return dict(self.__dict__)


def compile_graph(plan) -> "CompiledGPUCommandGraph":
    """Compile the :class:`GraphPlan` of a :class:`GPUCommandGraph` (called by ``graph.compile()``)."""
    started = time.perf_counter()
    order, edges = order_nodes(plan.nodes, plan.graph_id)
    buffer_slots, texture_slots, assignment = plan_graph_transients(order)

    compiled = CompiledGPUCommandGraph(plan, order)
    try:
        for slot in buffer_slots:
            slot.physical = plan.device.create_buffer(
                label=f"{plan.graph_id}/transient:{'+'.join(h.id for h in slot.tenants)}",
                size=slot.byte_length, usage=slot.usage)
            compiled._physical.append(slot.physical)
        for slot in texture_slots:
            size, fmt, mips, samples, dim = slot.key
            slot.physical = plan.device.create_texture(
                label=f"{plan.graph_id}/transient:{'+'.join(h.id for h in slot.tenants)}", size=size, format=fmt,
                usage=slot.usage, mip_level_count=mips, sample_count=samples, dimension=dim)
            compiled._physical.append(slot.physical)
        for handle, slot in assignment.items():
            compiled._base_resources[handle] = slot.physical
        for node in order:
            ctx = NodeCompileContext(plan.device, plan.graph_id, node.id, compiled.capabilities, compiled._owned)
            try:
                encode = node.compile(ctx)
            except Exception as exc:
                raise NodeCompileError(f'GPUCommandGraph node "{node.id}" failed to compile: {exc}') from exc
            if not callable(encode):
                raise NodeCompileError(
                    f'GPUCommandGraph node "{node.id}" compile callback returned {encode!r}, not encode(target, frame)')
            compiled._encoders[node.id] = encode
        compiled._plan_encoding()
    except BaseException:
        compiled.destroy()
        raise

    transient_buffers = plan.transients(plan.buffers)
    imports = plan.imported(plan.buffers).values()
    logical = sum(h.byte_length for h in transient_buffers)
    physical = sum(s.byte_length for s in buffer_slots)
    reused = max(0, logical - physical)
    compiled.stats = GraphStats(
        node_order=[n.id for n in order],
        edges=[(plan.nodes[a].id, plan.nodes[b].id, kind) for a, b, kind in edges],
        pass_count=len(compiled._passes(timestamps=False)),
        imported_buffer_count=len(imports),
        imported_bytes=sum(h.byte_length for h in imports),
        logical_transient_count=len(transient_buffers),
        logical_transient_bytes=logical,
        physical_transient_count=len(buffer_slots),
        physical_transient_bytes=physical,
        reused_bytes=reused,
        reuse_percent=100.0 * reused / logical if logical else 0.0,
        transient_texture_count=len(plan.transients(plan.textures)),
        physical_texture_count=len(texture_slots),
        compile_seconds=time.perf_counter() - started,
        capabilities=compiled.capabilities.as_dict(),
    )
    return compiled


class GraphFrame:
    """Physical resources of one encoding, handed to each node's ``encode``.

    A node may only reach resources it declared; anything else is a
    :class:`GraphError`, because an undeclared use would escape hazard
    ordering and transient planning. Valid during one encoding only; it
    does not create, copy or free resources.
    """

    __slots__ = ("_resources", "_compiled", "node", "resources_key")

    def __init__(self, compiled, resources, resources_key=None):
        self._compiled = compiled
        self._resources = resources
        self.node = None
        #: Identifies this encoding's handle -> physical mapping: one object for
        #: every encoding of a graph without overrides, one per override mapping
        #: the graph keeps checked, None otherwise. Kernels key their bind groups
        #: by it (the mapping, hence every bound buffer, is the same whenever
        #: the key is).
        self.resources_key = resources_key

    def _lookup(self, resource):
        handle = resource.handle if hasattr(resource, "handle") else resource
        try:
            if self.node is not None and handle not in self.node.reads and handle not in self.node.writes:
                raise GraphError(
                    f'GPUCommandGraph node "{self.node.id}" did not declare "{getattr(handle, "id", handle)}"')
            return self._resources[handle]
        except KeyError:
            raise GraphError(f'GPUCommandGraph "{self._compiled.id}" has no resource {resource!r}') from None
        except TypeError:  # unhashable: not a handle or view at all
            owner = f'node "{self.node.id}"' if self.node is not None else f'"{self._compiled.id}"'
            raise GraphTypeError(f"GPUCommandGraph {owner} asked for {resource!r}, not a buffer or texture "
                                 "handle or view") from None

    def buffer(self, resource) -> wgpu.GPUBuffer:
        """The physical buffer behind a buffer handle or data view in this encoding."""
        return self._lookup(resource)

    def texture(self, resource) -> wgpu.GPUTexture:
        """The physical texture behind a texture handle or view in this encoding."""
        return self._lookup(resource)

    def texture_view(self, resource) -> wgpu.GPUTextureView:
        """A (cached) ``GPUTextureView`` for a texture handle or :class:`GraphTextureView`."""
        texture = self._lookup(resource)
        desc = resource.descriptor() if isinstance(resource, GraphTextureView) else {}
        key = (id(texture), tuple(sorted(desc.items())))
        cache = self._compiled._view_cache
        entry = cache.get(key)
        if entry is None or entry[0] is not texture:
            entry = (texture, texture.create_view(**desc))
            cache[key] = entry
        return entry[1]


class CompiledGPUCommandGraph:
    """An executable command graph with a fixed node order and fixed capacities.

    Use :meth:`encode` once per frame with the caller's command encoder, then
    submit yourself. Does not submit, map, read back, reallocate or recompile;
    per-encoding overrides are validated before anything is recorded.
    """

    def __init__(self, plan, order):
        self.id = plan.graph_id
        self.device = plan.device
        self.capabilities = device_capabilities(plan.device)
        self.stats: GraphStats | None = None
        self._order = order
        self._encoders = {}
        self._owned = []
        self._physical = []
        self._imports = plan.imported(plan.buffers)
        self._texture_imports = plan.imported(plan.textures)
        self._base_resources = {h: h.buffer for h in self._imports.values()}
        self._base_resources.update({h: h.texture for h in self._texture_imports.values()})
        self._view_cache = {}
        self._timing = None  # created on the first timestamped encode
        self._pending_timings = []
        self._last_stamps = {}  # (ring, slot index) -> bytes last read from that staging buffer
        self._retired_rings = []  # rings an unsubmitted encoding may still copy into; freed by destroy()
        self.dropped_timing_frames = 0
        self.encode_count = 0
        self._destroyed = False
        #: Push a debug group per node inside passes that hold several nodes
        #: (GPU captures: RenderDoc, Nsight). Off by default: two wgpu calls per
        #: node; pass labels name their nodes either way.
        self.debug_groups = False
        self._pass_plans = {}  # timestamps -> [(kind, nodes, label, [(node, encode)], descriptor)], set at compile
        self._watch = DestroyWatch()  # stale once a watched physical / owned / imported object is destroyed
        self._unwatched = []  # bound / owned objects the watch cannot cover (not wgpu): checked every encoding
        self._base_checked = False  # the base resources passed check_resolved_imports (and nothing is stale)
        self._resources_key = object()  # GraphFrame.resources_key of encodings without overrides
        self._override_plans = {}  # override mapping's items -> (checked resources, their resources_key)
        self._attachments = {}  # (render node, resources_key) -> (colours, depth, PassDescriptor)

    @property
    def node_order(self) -> list:
        """Node IDs in the order ``encode`` records them (a new list)."""
        return [n.id for n in self._order]

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy`; encoding then raises GraphStateError."""
        return self._destroyed

    def describe(self) -> list:
        """The compiled plan as plain data, for inspectors and docs: a list of
        passes ``{"kind", "nodes": [{"id", "uses": [(resource_id, use), ...],
        "depends_on": [...]}]}`` in encoding order (without timestamps)."""
        return [{"kind": kind, "nodes": [
            {"id": n.id, "uses": [(h.id, use) for h, use, _view in n.uses], "depends_on": list(n.depends_on)}
            for n in nodes]} for kind, nodes in self._passes(timestamps=False)]

    # ------------------------------------------------------------- encoding
    def _passes(self, *, timestamps):
        """Group the order into passes: consecutive compute nodes share one
        compute pass unless each needs its own timestamps."""
        passes = []
        for node in self._order:
            if node.kind == "compute" and not timestamps and passes and passes[-1][0] == "compute":
                passes[-1][1].append(node)
            else:
                passes.append((node.kind, [node]))
        return passes

    def _plan_encoding(self) -> None:
        """What every encoding reuses: both pass groupings with their labels and
        encode callbacks, and the watch over every object an encoding binds."""
        for timestamps in (False, True):
            plan = self._pass_plans[timestamps] = []
            for kind, nodes in self._passes(timestamps=timestamps):
                label = "+".join(n.id for n in nodes)
                # untimed compute passes reuse one descriptor (render ones: see _begin_render_pass)
                reuse = compute_pass_descriptor(label) if kind == "compute" and not timestamps else None
                plan.append((kind, nodes, label, [(n, self._encoders[n.id]) for n in nodes], reuse))
        for obj in (*self._physical, *self._owned, *self._base_resources.values()):
            if obj is not None and not self._watch.watch(obj):
                self._unwatched.append(obj)  # checked on every encoding instead

    def encode(self, encoder, *, buffers=None, textures=None, timestamps=False) -> dict:
        """Record every node into ``encoder`` in compiled order.

        Parameters
        ----------
        encoder : wgpu.GPUCommandEncoder
            The caller's encoder; it stays the caller's (finish and submit it).
        buffers, textures : dict, optional
            Per-encoding overrides of imported resources, by ID; each is checked
            against the compiled size, usage and device before recording.
        timestamps : bool
            Give every node its own pass with GPU timestamps; read them after
            submission with :meth:`read_timings`. Needs ``timestamp-query``.

        Returns
        -------
        dict
            Node ID -> CPU seconds spent recording it.
        """
        resources, key = self._prepare(encoder, buffers, textures)
        timing = self._timing_slot() if timestamps and self._order else None
        frame = GraphFrame(self, resources, key)
        cpu = {}
        queries = {}  # node ID -> index of its begin timestamp
        try:
            for planned in self._pass_plans[bool(timestamps)]:
                self._encode_pass(encoder, planned, frame, timing, cpu, queries)
        except BaseException:
            if timing is not None:  # nothing was copied into the slot: give it back
                timing.cancel()
            raise
        if timing is not None:
            self._finish_timing(encoder, timing, queries)
        elif timestamps and not self._order:  # no node, no query set: the timings are simply empty
            self._pending_timings.append((None, {}, 0))
        self.encode_count += 1
        return cpu

    def _prepare(self, encoder, buffers, textures) -> tuple:
        """Everything encode checks before recording: its state and argument
        types, that no resource it binds was destroyed, and the overrides.
        Returns the resources of this encoding and their GraphFrame key.

        The compiled imports, and each override mapping seen (up to
        :data:`OVERRIDE_PLANS`), are checked in full once; later encodings
        with them are O(1) while the watch over every buffer and texture they
        bind stays fresh (plus any node-owned object that is not one). A
        destroy() anywhere among them drops every such result: the next
        encodings check in full again (O(imports + transients)), so a
        destroyed resource is refused as before."""
        if self._destroyed:
            raise GraphStateError(f'CompiledGPUCommandGraph "{self.id}" is destroyed and cannot encode')
        if not isinstance(encoder, wgpu.GPUCommandEncoder):
            raise GraphTypeError(f'CompiledGPUCommandGraph "{self.id}" encode needs a wgpu.GPUCommandEncoder '
                                 f"(got {type(encoder).__name__})")
        fresh = not self._watch.stale and not (self._unwatched and any(is_destroyed(o) for o in self._unwatched))
        base = _no_overrides(buffers) and _no_overrides(textures)
        plan_key = None
        if fresh and base and self._base_checked:
            return self._base_resources, self._resources_key
        if not base:
            try:  # the mapping's content: the same buffers and textures give the same checked resources
                plan_key = (tuple(buffers.items()) if buffers else (), tuple(textures.items()) if textures else ())
                planned = self._override_plans.get(plan_key) if fresh else None
            except (AttributeError, TypeError):  # not a mapping, or an unhashable value: checked below
                plan_key = planned = None
            if planned is not None:
                return planned
        if not fresh:  # something was destroyed: forget every checked result, check this encoding in full
            self._override_plans.clear()
            self._base_checked = False
        for name, value in (("buffers", buffers), ("textures", textures)):
            if value is not None and not isinstance(value, Mapping):
                raise GraphTypeError(f'CompiledGPUCommandGraph "{self.id}" encode {name} must be a mapping of '
                                     f"import ID to replacement (got {type(value).__name__})")
        for obj in (*self._physical, *self._owned):
            if is_destroyed(obj):  # a submit using it would abort the process
                raise GraphStateError(f'CompiledGPUCommandGraph "{self.id}" resource "{getattr(obj, "label", obj)}" '
                                      "was destroyed outside the graph; compile the graph again")
        if base:
            check_resolved_imports(self.id, self._base_resources)
            result = (self._base_resources, self._resources_key)
            self._base_checked = True
        else:
            resources = self._resolve_overrides(buffers or {}, textures or {})
            check_resolved_imports(self.id, resources)
            if plan_key is not None:  # kept only when the watch covers every object it binds
                watched = [self._watch.watch(obj) for obj in (*(buffers or {}).values(), *(textures or {}).values())]
                plan_key = plan_key if all(watched) else None
            result = (resources, object() if plan_key is not None else None)
            if plan_key is not None:
                if len(self._override_plans) >= OVERRIDE_PLANS:
                    self._override_plans.clear()
                self._override_plans[plan_key] = result
        # every result kept from before a destroy was dropped above and this one is checked: fresh again
        # (the destroyed object stays destroyed; whatever binds it fails its next full check)
        self._watch.stale = False
        return result

    def _encode_pass(self, encoder, planned, frame, timing, cpu, queries) -> None:
        """Record one planned pass; on any error the pass is ended before
        re-raising, so the caller's encoder stays finishable."""
        kind, nodes, label, steps, descriptor = planned
        timed = timing is not None and (kind != "copy" or self.capabilities.timestamps_inside_encoders)
        writes = None
        if timed:
            begin = queries[nodes[0].id] = 2 * len(queries)
            if kind != "copy":
                writes = {"query_set": self._timing["query_set"], "beginning_of_pass_write_index": begin,
                          "end_of_pass_write_index": begin + 1}
        if kind == "compute":
            if descriptor is not None and writes is None:
                target = descriptor.begin(encoder)
            else:
                target = encoder.begin_compute_pass(label=label, timestamp_writes=writes)
        elif kind == "render":
            target = self._begin_render_pass(encoder, nodes[0], frame, writes)
        else:
            target = encoder
            if timed:
                self._write_timestamp(encoder, begin)
        # a pass of one node is labelled by it; a group would only repeat the label
        groups = self.debug_groups and (len(steps) > 1 or target is encoder)
        pushed = False
        clock = time.perf_counter
        try:
            for node, encode in steps:
                frame.node = node
                if groups:
                    target.push_debug_group(node.id)
                    pushed = True
                started = clock()
                encode(target, frame)
                cpu[node.id] = clock() - started
                if groups:
                    target.pop_debug_group()
                    pushed = False
        except BaseException:
            _close_after_error(encoder, target, pushed)
            raise
        finally:
            frame.node = None
        if target is not encoder:
            target.end()
        elif timed:
            self._write_timestamp(encoder, begin + 1)

    def _resolve_overrides(self, buffers, textures) -> dict:
        resources = dict(self._base_resources)
        for key, buffer in buffers.items():
            handle = self._imports.get(key)
            if handle is None:
                raise OverrideError(f'CompiledGPUCommandGraph "{self.id}" has no imported buffer "{key}" to override '
                                    f"(imports: {', '.join(self._imports) or 'none'})")
            check_physical_buffer(self.device, self.id, key, buffer, byte_length=handle.byte_length,
                                  usage=handle.usage, where="override")
            resources[handle] = buffer
        for key, texture in textures.items():
            handle = self._texture_imports.get(key)
            if handle is None:
                raise OverrideError(f'CompiledGPUCommandGraph "{self.id}" has no imported texture "{key}" to override')
            check_physical_texture(self.device, handle, texture, where="override")
            resources[handle] = texture
        return resources

    def _begin_render_pass(self, encoder, node, frame, timestamp_writes):
        frame.node = node
        key = (node, frame.resources_key)
        cached = self._attachments.get(key) if frame.resources_key is not None else None
        if cached is None:
            colors, depth = self._render_attachments(node, frame)
            descriptor = None
            if frame.resources_key is not None:  # a checked mapping: the same views every encoding
                descriptor = render_pass_descriptor(encoder, label=node.id, color_attachments=colors,
                                                    depth_stencil_attachment=depth)
                if len(self._attachments) >= 4 * OVERRIDE_PLANS:
                    self._attachments.clear()
                self._attachments[key] = (colors, depth, descriptor)
        else:
            colors, depth, descriptor = cached
        if descriptor is not None and timestamp_writes is None:
            return descriptor.begin(encoder)
        return encoder.begin_render_pass(label=node.id, color_attachments=colors, depth_stencil_attachment=depth,
                                         timestamp_writes=timestamp_writes)

    @staticmethod
    def _render_attachments(node, frame) -> tuple:
        """The colour and depth attachment dicts of a render node in this encoding."""
        colors = []
        for att in node.color_attachments:
            colors.append({
                "view": frame.texture_view(att["view"]),
                "resolve_target": frame.texture_view(att["resolve_target"]) if att.get("resolve_target") else None,
                "load_op": att.get("load_op", "clear"),
                "store_op": att.get("store_op", "store"),
                "clear_value": att.get("clear_value", (0, 0, 0, 0)),
            })
        depth = None
        if node.depth_stencil_attachment:
            depth = dict(node.depth_stencil_attachment)
            depth["view"] = frame.texture_view(depth["view"])
        return colors, depth

    # -------------------------------------------------------------- timings
    def _timing_slot(self):
        if not self.capabilities.timestamps:
            raise GraphStateError(f'CompiledGPUCommandGraph "{self.id}" cannot take timestamps: the device lacks '
                                  '"timestamp-query"')
        if self._timing is None:
            count = 2 * len(self._order)
            self._timing = {
                "query_set": self.device.create_query_set(label=f"{self.id}/timestamps", type="timestamp",
                                                          count=count),
                "resolve": self.device.create_buffer(label=f"{self.id}/timestamp-resolve", size=8 * count,
                                                     usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC),
                "ring": GPUReadbackRing(self.device, byte_length=8 * count, slot_count=TIMING_RING_SLOTS,
                                        label=f"{self.id}/timings"),
            }
        slot = self._timing["ring"].try_acquire()
        if slot is None:  # every slot still in flight: drop this frame's timings rather than stall
            self.dropped_timing_frames += 1
        return slot

    def _write_timestamp(self, encoder, index):
        from wgpu.backends.wgpu_native.extras import write_timestamp

        write_timestamp(encoder, self._timing["query_set"], index)

    def _finish_timing(self, encoder, slot, queries):
        count = 2 * len(queries)
        if count:
            encoder.resolve_query_set(self._timing["query_set"], 0, count, self._timing["resolve"], 0)
            slot.copy(encoder, self._timing["resolve"], byte_length=8 * count)
        self._pending_timings.append((slot, queries, count))

    def read_timings(self, *, wait: bool = True) -> dict | None:
        """GPU seconds per node of the oldest timestamped encoding not yet read.

        Call after submitting that encoding. With ``wait=False`` returns None
        while the result is still in flight (the ring keeps later frames
        encoding meanwhile). Returns None when nothing is pending, and ``{}``
        for a graph without nodes. Nodes that shared no pass of their own
        (copy nodes without ``timestamp-query-inside-encoders``) are absent.

        Raises
        ------
        GraphStateError
            The graph was destroyed, or the oldest timestamped encoding was
            not submitted (its timings are then discarded; the next call reads
            the next encoding).
        """
        if self._destroyed:
            raise GraphStateError(f'CompiledGPUCommandGraph "{self.id}" is destroyed: it has no timings to read')
        if not self._pending_timings:
            return None
        slot, queries, count = self._pending_timings[0]
        if count == 0:
            self._pending_timings.pop(0)
            if slot is not None:
                slot.cancel()
            return {}
        if slot.state == "acquired":  # submitted (we hope) but not yet mapping
            slot.map_async()
        data = slot.read(wait=wait)
        if data is None:
            return None
        self._pending_timings.pop(0)
        self._check_submitted(slot, data)
        stamps = struct.unpack_from(f"<{count}Q", data)
        return {node_id: max(0, stamps[q + 1] - stamps[q]) * 1e-9 for node_id, q in queries.items()}

    def _check_submitted(self, slot, data) -> None:
        """Raise unless ``data`` holds timestamps the GPU wrote for this encoding.

        The graph never sees the caller's submit, but an unsubmitted copy
        leaves the staging buffer as it was: zero-initialised, or the bytes
        last read from it (real timestamps only grow, so never repeat).
        """
        key = (slot.ring, slot.index)
        previous, self._last_stamps[key] = self._last_stamps.get(key), data
        if any(data) and data != previous:
            return
        # The caller may still submit that encoder; its copy must not land in a
        # staging buffer a later frame has mapped, so later frames use a new ring.
        ring = self._timing["ring"]
        self._retired_rings.append(ring)
        self._timing["ring"] = GPUReadbackRing(self.device, byte_length=ring.byte_length, slot_count=TIMING_RING_SLOTS,
                                               label=f"{self.id}/timings")
        raise GraphStateError(f'CompiledGPUCommandGraph "{self.id}" read_timings: the oldest timestamped encoding was '
                              "not submitted (submit its encoder before reading its timings); they are discarded")

    # ------------------------------------------------------------ lifecycle
    def destroy(self) -> None:
        """Free physical transients (once each), node-owned objects and timing
        resources. Never destroys an import. Idempotent."""
        if self._destroyed:
            return
        self._destroyed = True
        for obj in self._owned:
            obj.destroy()
        for physical in self._physical:
            physical.destroy()
        for ring in self._retired_rings:
            ring.destroy()
        self._retired_rings.clear()
        if self._timing is not None:
            self._timing["ring"].destroy()
            self._timing["resolve"].destroy()
            self._timing["query_set"].destroy()
        self._owned.clear()
        self._physical.clear()
        self._view_cache.clear()
        self._attachments.clear()
        self._override_plans.clear()
        self._pass_plans.clear()
        self._encoders.clear()
        self._pending_timings.clear()


def _no_overrides(value) -> bool:
    """None or an empty mapping (an empty list is a type error, raised by the full check)."""
    return value is None or (isinstance(value, Mapping) and not value)


def _close_after_error(encoder, target, pushed) -> None:
    """End what :meth:`CompiledGPUCommandGraph._encode_pass` opened, keeping
    the original error: a failure here must not replace it."""
    if pushed:
        with contextlib.suppress(Exception):
            target.pop_debug_group()
    if target is not encoder:
        with contextlib.suppress(Exception):
            target.end()
