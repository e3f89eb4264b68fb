"""GPUIndexPickingTarget: integer ID attachments for GPU picking, and the
graph passes that resolve a pixel or a region of them into GPU storage.

A renderer draws stable object IDs (and optionally batch IDs) into r32uint
attachments next to its colour output; a pixel pass copies the pair under a
GPU-resident cursor into two words, a region pass appends the pair of every
covered pixel of a GPU-resident rectangle into caller-sized storage. The
results stay on the GPU: a GPUReadbackRing (or a later GPU pass, such as a
highlight uniform) consumes them.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import wgpu

from ..graph.compat import is_destroyed
from ..errors import (DeviceMismatchError, GraphStateError, GraphTypeError, GraphValidationError,
                            ViewRangeError)
from ..graph.resources import GraphDataView, GraphTextureHandle
from ..graph.shaders import compute_pipeline, wgsl

__all__ = ["GPUIndexPickingTarget", "PickingHandles", "NO_ID", "PICKING_FORMAT"]

#: The ID of nothing: what the attachments are cleared to and empty reads return.
NO_ID = 0xFFFFFFFF
#: Format of both attachments.
PICKING_FORMAT = "r32uint"
TU = wgpu.TextureUsage
TEXTURE_USAGE = TU.RENDER_ATTACHMENT | TU.TEXTURE_BINDING | TU.COPY_SRC
BU = wgpu.BufferUsage
NAME = "GPUIndexPickingTarget"


class PickingHandles(NamedTuple):
    """The target's textures as one graph imported them (handles only: they
    do not own the textures; ``batches`` is None without batch IDs)."""

    objects: GraphTextureHandle
    batches: GraphTextureHandle | None


class GPUIndexPickingTarget:
    """A pair of r32uint attachments for ID picking: object IDs and,
    optionally, batch IDs.

    Parameters
    ----------
    device : wgpu.GPUDevice
    size : (int, int)
        Width and height in pixels (the canvas's physical size).
    batches : bool
        Also create the batch-ID attachment (render location 1).
    label : str
        Names the textures, their graph imports (``"{label}-objects"``,
        ``"{label}-batches"``) and errors.
    storage : bool
        Also give the textures STORAGE_BINDING usage, for a compute pass
        that writes the IDs (``texture_storage_2d<r32uint, write>``).

    Attributes
    ----------
    object_texture, batch_texture : wgpu.GPUTexture or None
        r32uint, RENDER_ATTACHMENT | TEXTURE_BINDING | COPY_SRC (| STORAGE_BINDING
        with ``storage=True``).
    size : (int, int)
    batches : bool
    usage : int
        The textures' wgpu.TextureUsage flags.
    generation : int
        Incremented by every :meth:`resize`; graphs built for an older
        generation import stale textures and must be rebuilt.

    Notes
    -----
    A render node draws into the target through :meth:`color_attachments`
    (cleared to :data:`NO_ID` unless ``load_op="load"``) with a pipeline
    whose fragment targets are :meth:`color_targets`; the fragment shader
    writes ``@location(0) object: u32`` (and ``@location(1) batch: u32``).
    Use a depth attachment of the same size for front-most picking. The
    attachments are single-sampled (integer formats have no multisample
    resolve): draw IDs in their own non-multisampled pass.
    :meth:`add_pixel_pass` and :meth:`add_region_pass` add compute nodes
    that read the attachments after that render node (the graph orders them
    by the declared uses). The target owns its textures; it does not render,
    submit, map, read back, deduplicate IDs or decide what a pick means.
    """

    #: The ID of nothing (the clear value; empty reads).
    NO_ID = NO_ID
    #: Format of both attachments.
    FORMAT = PICKING_FORMAT

    def __init__(self, device, *, size, batches: bool = False, label: str = "picking", storage: bool = False):
        if not isinstance(device, wgpu.GPUDevice):
            raise GraphTypeError(f'{NAME} "{label}" needs a wgpu.GPUDevice (got {type(device).__name__})')
        if not isinstance(label, str) or not label:
            raise GraphValidationError(f"{NAME} label must be a non-empty str (got {label!r})")
        self.device = device
        self.label = label
        self.batches = bool(batches)
        self.usage = TEXTURE_USAGE | (TU.STORAGE_BINDING if storage else 0)
        self.generation = 0
        self.object_texture = self.batch_texture = None
        self._destroyed = False
        self._allocate(size)

    def __repr__(self) -> str:
        return f'<{NAME} "{self.label}" {self.size[0]}x{self.size[1]} batches={self.batches}>'

    # ------------------------------------------------------------ lifetime
    def _allocate(self, size) -> None:
        try:
            width, height = (operator.index(v) for v in size)
        except (TypeError, ValueError):
            raise GraphValidationError(f'{NAME} "{self.label}" size must be (width, height) integers '
                                       f"(got {size!r})") from None
        most = int(self.device.limits["max-texture-dimension-2d"])
        if not (1 <= width <= most and 1 <= height <= most):
            raise GraphValidationError(f'{NAME} "{self.label}" size {width}x{height} must be within 1..{most} '
                                       "per side")
        self.size = (width, height)

        def make(name):
            return self.device.create_texture(label=f"{self.label}-{name}", size=(width, height, 1),
                                              format=PICKING_FORMAT, usage=self.usage)
        self.object_texture = make("objects")
        self.batch_texture = make("batches") if self.batches else None

    def resize(self, size) -> bool:
        """Reallocate both attachments at ``size`` (contents undefined until
        the next clearing render). Returns False, changing nothing, when the
        size is unchanged; else destroys the old textures, increments
        :attr:`generation` and returns True: rebuild graphs that import
        the target."""
        self._check_alive()
        if tuple(size) == self.size:
            return False
        old = (self.object_texture, self.batch_texture)
        self._allocate(size)
        for texture in old:
            if texture is not None:
                texture.destroy()
        self.generation += 1
        return True

    @property
    def destroyed(self) -> bool:
        """True after :meth:`destroy` (the textures can no longer be used)."""
        return self._destroyed

    def destroy(self) -> None:
        """Destroy the textures (idempotent); graphs using them fail at encode."""
        if self._destroyed:
            return
        self._destroyed = True
        for texture in (self.object_texture, self.batch_texture):
            if texture is not None:
                texture.destroy()

    def _check_alive(self) -> None:
        if self._destroyed or is_destroyed(self.object_texture):
            raise GraphStateError(f'{NAME} "{self.label}" was destroyed')

    # ------------------------------------------------------------ rendering
    def color_targets(self) -> list:
        """Fragment ``targets`` of a render pipeline that writes the IDs."""
        return [{"format": PICKING_FORMAT}] * (2 if self.batches else 1)

    def import_into(self, graph) -> PickingHandles:
        """The target's textures imported into ``graph`` (the same handles on
        every call for one graph and generation).

        Raises
        ------
        GraphStateError
            The target was destroyed, or resized after ``graph`` imported it.
        DeviceMismatchError
            ``graph`` belongs to another device.
        """
        self._check_alive()
        if graph.device is not self.device:
            raise DeviceMismatchError(f'{NAME} "{self.label}" belongs to another device than graph "{graph.id}"')
        handles = []
        for name, texture in (("objects", self.object_texture), ("batches", self.batch_texture)):
            if texture is None:
                handles.append(None)
                continue
            id = f"{self.label}-{name}"
            handle = graph.textures.get(id)
            if handle is None:
                handle = graph.import_texture(id=id, size=self.size, format=PICKING_FORMAT, usage=self.usage,
                                              texture=texture)
            elif handle.texture is not texture:
                raise GraphStateError(f'{NAME} "{self.label}" was resized (generation {self.generation}) after '
                                      f'graph "{graph.id}" imported it as "{id}": rebuild the graph')
            handles.append(handle)
        return PickingHandles(*handles)

    def color_attachments(self, graph, *, load_op: str = "clear") -> list:
        """Color attachment dicts for ``graph.add_render_node``: the object
        IDs (location 0) and, with batches, the batch IDs (location 1),
        cleared to :data:`NO_ID` (``load_op="load"`` keeps what earlier
        render nodes drew)."""
        handles = self.import_into(graph)
        clear = (float(NO_ID), 0.0, 0.0, 0.0)
        return [{"view": h, "load_op": load_op, "store_op": "store", "clear_value": clear}
                for h in handles if h is not None]

    # -------------------------------------------------------------- picking
    def add_pixel_pass(self, graph, *, id: str, position, output) -> list:
        """Copy the IDs under a GPU-resident pixel into two uint32 words.

        Parameters
        ----------
        id : str
            The node ID (``"{id}"``).
        position : GraphDataView
            uint32, at least 2 rows: ``(x, y)`` in pixels of the target,
            origin top-left. Written by the caller (e.g. from the cursor)
            before each encoding; no recompile.
        output : GraphDataView
            uint32, at least 2 rows: receives ``(object, batch)``; a position
            outside the target gives ``(NO_ID, NO_ID)``, a target without
            batches ``NO_ID`` as batch.

        Returns the added node IDs. Never reads back.
        """
        owner = f'{NAME} "{self.label}" pixel pass "{id}"'
        position = _view(owner, graph, "position", position, 2)
        output = _view(owner, graph, "output", output, 2)
        _refuse_shared(owner, reads={"position": position}, writes={"output": output})
        handles = self.import_into(graph)
        textures = [h for h in handles if h is not None]
        resources = [(h, "sampled") for h in textures] + [(position, "storage-read"), (output, "storage-write")]

        def compile_pixel(ctx):
            constants = {"POSITION_OFF": _element_offset(position, ctx.device),
                         "OUTPUT_OFF": _element_offset(output, ctx.device)}
            pipeline = compute_pipeline(ctx.device, wgsl("render/shaders/picking_pixel.wgsl", batches=self.batches),
                                        constants=constants, label=ctx.node_id)
            groups = _BindGroups(ctx.device, pipeline)

            def encode(compute_pass, frame):
                entries = {0: handles.objects, 2: position, 3: output}
                if handles.batches is not None:
                    entries[1] = handles.batches
                compute_pass.set_pipeline(pipeline)
                compute_pass.set_bind_group(0, groups.get(frame, entries))
                compute_pass.dispatch_workgroups(1)
            return encode

        return [graph.add_compute_node(id=id, resources=resources, compile=compile_pixel)]

    def add_region_pass(self, graph, *, id: str, rect, output_ids, output_batches=None, count, overflow) -> list:
        """Append one ``(object, batch)`` pair per covered pixel of a
        GPU-resident rectangle.

        Parameters
        ----------
        id : str
            Prefix of the node and transient IDs (``"{id}-setup"``,
            ``"{id}-append"``).
        rect : GraphDataView
            uint32, at least 4 rows: ``(x0, y0, x1, y1)`` in pixels, half-open
            (``x0 <= x < x1``), clamped to the target; an empty or inverted
            rect covers nothing.
        output_ids : GraphDataView
            uint32; its row count is the capacity (at least 1).
        output_batches : GraphDataView, optional
            uint32, at least as many rows as output_ids; receives each pair's
            batch ID (``NO_ID`` for a target without batches).
        count : GraphDataView
            One uint32 row: the number of covered pixels (those whose object
            ID is not ``NO_ID``), also when that exceeds the capacity.
        overflow : GraphDataView
            One uint32 row: 1 when count exceeded the capacity, else 0.

        Notes
        -----
        Duplicates are kept (one pair per pixel) and the order is unspecified
        (atomic appends); slots past the capacity are never written, slots
        past ``min(count, capacity)`` keep their old contents. A one-thread
        setup node clamps the rect, zeroes count and overflow and writes the
        indirect dispatch of the append node, so the work follows the rect's
        area without a CPU round trip. Never reads back, deduplicates or
        sorts.
        """
        owner = f'{NAME} "{self.label}" region pass "{id}"'
        rect = _view(owner, graph, "rect", rect, 4)
        ids = _view(owner, graph, "output_ids", output_ids, 1)
        batches = None if output_batches is None else _view(owner, graph, "output_batches", output_batches,
                                                             ids.length)
        count = _view(owner, graph, "count", count, 1)
        overflow = _view(owner, graph, "overflow", overflow, 1)
        _refuse_shared(owner, reads={"rect": rect}, writes={"output_ids": ids, "output_batches": batches,
                                                             "count": count, "overflow": overflow})
        handles = self.import_into(graph)
        textures = [(h, "sampled") for h in handles if h is not None]
        clamped = graph.create_transient_buffer(id=f"{id}-clamped-rect", byte_length=16, usage=BU.STORAGE)
        args = graph.create_transient_buffer(id=f"{id}-dispatch", byte_length=16, usage=BU.STORAGE | BU.INDIRECT)
        code = wgsl("render/shaders/picking_region.wgsl", batches=self.batches, batch_output=batches is not None)

        def constants(device):
            out = {"RECT_OFF": _element_offset(rect, device), "COUNT_OFF": _element_offset(count, device),
                   "OVERFLOW_OFF": _element_offset(overflow, device), "IDS_OFF": _element_offset(ids, device),
                   "CAPACITY": ids.length}
            if batches is not None:
                out["BATCHES_OFF"] = _element_offset(batches, device)
            return out

        def compile_setup(ctx):
            pipeline = compute_pipeline(ctx.device, code, entry_point="setup", constants=constants(ctx.device),
                                        label=ctx.node_id)
            groups = _BindGroups(ctx.device, pipeline)

            def encode(compute_pass, frame):
                entries = {0: handles.objects, 2: rect, 3: clamped, 4: args, 5: count, 6: overflow}
                compute_pass.set_pipeline(pipeline)
                compute_pass.set_bind_group(0, groups.get(frame, entries))
                compute_pass.dispatch_workgroups(1)
            return encode

        def compile_append(ctx):
            pipeline = compute_pipeline(ctx.device, code, entry_point="append", constants=constants(ctx.device),
                                        label=ctx.node_id)
            groups = _BindGroups(ctx.device, pipeline)

            def encode(compute_pass, frame):
                entries = {0: handles.objects, 5: count, 6: overflow, 7: ids, 9: clamped}
                if handles.batches is not None:
                    entries[1] = handles.batches
                if batches is not None:
                    entries[8] = batches
                compute_pass.set_pipeline(pipeline)
                compute_pass.set_bind_group(0, groups.get(frame, entries))
                compute_pass.dispatch_workgroups_indirect(frame.buffer(args), 0)
            return encode

        setup = graph.add_compute_node(
            id=f"{id}-setup", compile=compile_setup,
            resources=[textures[0], (rect, "storage-read"), (clamped, "storage-write"), (args, "storage-write"),
                       (count, "storage-write"), (overflow, "storage-write")])
        writes = [(v, "storage-write") for v in (ids, batches) if v is not None]
        append = graph.add_compute_node(
            id=f"{id}-append", compile=compile_append,
            resources=textures + [(clamped, "storage-read"), (args, "indirect"), (count, "storage-read-write"),
                                  (overflow, "storage-read-write")] + writes)
        return [setup, append]


class _BindGroups:
    """Bind groups of one pipeline for textures and buffer views, cached by
    the physical objects they bind (a graph override gets its own)."""

    def __init__(self, device, pipeline):
        self.device = device
        self.layout = pipeline.get_bind_group_layout(0)
        self.cache = {}

    def get(self, frame, entries: dict):
        fast = getattr(frame, "resources_key", None)  # a graph encoding without overrides: same objects, same group
        if fast is not None:
            fast = (fast, frame.node, tuple(entries.items()))
            group = self.cache.get(fast)
            if group is not None:
                return group
        group = self._resolved(frame, entries)
        if fast is not None:
            self.cache[fast] = group
        return group

    def _resolved(self, frame, entries: dict):
        resolved, key = [], []
        alignment = int(self.device.limits["min-storage-buffer-offset-alignment"])
        for binding, resource in sorted(entries.items()):
            if isinstance(resource, GraphTextureHandle):
                view = frame.texture_view(resource)
                resolved.append({"binding": binding, "resource": view})
                key.append(view)
                continue
            buffer = frame.buffer(resource)
            if isinstance(resource, GraphDataView):
                start, size = _aligned_range(resource, alignment)
            else:
                start, size = 0, buffer.size
            resolved.append({"binding": binding, "resource": {"buffer": buffer, "offset": start, "size": size}})
            key.append((buffer, start, size))
        key = tuple(key)
        group = self.cache.get(key)
        if group is None:
            if len(self.cache) > 16:
                self.cache.clear()
            group = self.cache[key] = self.device.create_bind_group(layout=self.layout, entries=resolved)
        return group


def _aligned_range(view, alignment: int) -> tuple:
    start = view.byte_offset // alignment * alignment
    return start, max(4, -(-(view.byte_offset + view.byte_length - start) // 4) * 4)


def _element_offset(view, device) -> int:
    alignment = int(device.limits["min-storage-buffer-offset-alignment"])
    return (view.byte_offset - _aligned_range(view, alignment)[0]) // 4


def _view(owner: str, graph, name: str, value, rows: int) -> GraphDataView:
    """A packed uint32 data view of ``graph`` with at least ``rows`` rows."""
    if not isinstance(value, GraphDataView):
        raise GraphValidationError(f"{owner} {name} must be a GraphDataView (got {type(value).__name__})")
    if value.format.name != "uint32":
        raise GraphValidationError(f"{owner} {name} must be uint32 (got {value.format.name})")
    if not value.is_packed or value.byte_offset % 4:
        raise ViewRangeError(f"{owner} {name} must be packed and 4-byte aligned (byte offset {value.byte_offset}, "
                             f"stride {value.byte_stride})")
    if graph.buffers.get(value.handle.id) is not value.handle:
        raise GraphValidationError(f'{owner} {name} belongs to graph "{value.handle.graph_id}", not "{graph.id}"')
    if value.length < rows:
        raise GraphValidationError(f"{owner} {name} is shorter than needed (needs {rows} rows, got {value.length})")
    return value


def _refuse_shared(owner: str, *, reads: dict, writes: dict) -> None:
    """Outputs must not share a buffer with an input, nor bytes with each other."""
    def physical(view):
        return view.handle.buffer if view.handle.buffer is not None else view.handle
    items = [(n, v) for n, v in writes.items() if v is not None]
    for name, view in items:
        for other, read in reads.items():
            if physical(view) is physical(read):
                raise GraphValidationError(f'{owner} {name} shares buffer "{view.handle.id}" with input {other}')
    for i, (a_name, a) in enumerate(items):
        for b_name, b in items[i + 1:]:
            if physical(a) is physical(b) and (a.byte_offset < b.byte_offset + b.byte_length
                                               and b.byte_offset < a.byte_offset + a.byte_length):
                raise GraphValidationError(f'{owner} {a_name} and {b_name} overlap in buffer "{a.handle.id}" (bytes '
                                           f"{a.byte_offset}..{a.byte_offset + a.byte_length} and "
                                           f"{b.byte_offset}..{b.byte_offset + b.byte_length})")
