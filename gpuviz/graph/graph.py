"""GPUCommandGraph: the builder of an explicit command graph.

The builder collects logical resources (imported and transient buffers and
textures, typed views) and nodes with declared uses. Mistakes that are
knowable at a call fail at that call; ``compile()`` validates the closed
graph, infers hazards, orders nodes, plans transient reuse and runs node
compile callbacks. The builder never records, submits or reads back.
"""

from __future__ import annotations

import wgpu

from ..formats import vector_format
from .compiled import compile_graph
from .errors import (DeviceMismatchError, DuplicateIdError, GraphStateError, GraphValidationError, UsageError,
                     ViewRangeError)
from .nodes import GraphNode
from .physical import check_physical_buffer, check_physical_texture
from .plan import GraphPlan
from .resources import (BUFFER_USES, NODE_USES, READ_USES, TEXTURE_USES, WRITE_USES, GraphBufferHandle,
                        GraphDataView, GraphTextureHandle, GraphTextureView, GraphVectorView)

__all__ = ["GPUCommandGraph"]

MAX_SAFE_INTEGER = 2**53 - 1
_identity = id  # builtins.id; several methods take an argument named ``id``


class GPUCommandGraph:
    """An explicit graph of compute, render and copy nodes over logical resources.

    Parameters
    ----------
    device : wgpu.GPUDevice
        Every import must belong to it.
    id : str
        Names the graph in errors, labels and the inspector.

    Notes
    -----
    Dependencies are inferred from declared uses in insertion order
    (read-after-write, write-after-write, write-after-read per logical handle)
    plus explicit ``depends_on`` edges. Every added node is kept and encoded:
    the graph does not cull. The builder does not encode, submit or read back;
    see :meth:`compile` and :class:`CompiledGPUCommandGraph`.
    """

    def __init__(self, device, *, id: str = "command-graph"):
        if not isinstance(device, wgpu.GPUDevice):
            raise DeviceMismatchError(
                f'GPUCommandGraph "{id}" needs a wgpu.GPUDevice (got {type(device).__name__})')
        _check_id("GPUCommandGraph", id, "graph")
        self.device = device
        self.id = id
        self._buffers: dict[str, GraphBufferHandle] = {}
        self._textures: dict[str, GraphTextureHandle] = {}
        self._nodes: list[GraphNode] = []
        self._node_ids: set[str] = set()
        self._state = "building"  # -> "compiled" | "failed"

    # ------------------------------------------------------------ resources
    def import_buffer(self, *, id: str, byte_length: int, usage: int, buffer=None) -> GraphBufferHandle:
        """Declare a caller-owned buffer.

        ``byte_length`` and ``usage`` are a promise every buffer supplied later
        (the default ``buffer`` or a per-encoding override) must keep. The
        graph borrows imports and never destroys them.
        """
        self._check_building("import_buffer")
        self._check_resource_id(id)
        byte_length = self._check_byte_length("buffer", id, byte_length)
        usage = _check_usage_flags("buffer", id, usage)
        if buffer is not None:
            check_physical_buffer(self.device, self.id, id, buffer, byte_length=byte_length, usage=usage,
                                  where="import")
        handle = GraphBufferHandle(id, byte_length, usage, "imported", self.id, buffer)
        self._buffers[id] = handle
        return handle

    def create_transient_buffer(self, *, id: str, byte_length: int, usage: int) -> GraphBufferHandle:
        """Declare graph-owned scratch; its physical buffer may be shared with
        other transients whose lifetimes do not overlap. Never mappable."""
        self._check_building("create_transient_buffer")
        self._check_resource_id(id)
        byte_length = self._check_byte_length("transient buffer", id, byte_length)
        usage = _check_usage_flags("transient buffer", id, usage)
        if usage & (wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.MAP_WRITE):
            raise UsageError(f'GPUCommandGraph transient buffer "{id}" cannot be mappable (usage {usage:#x})')
        handle = GraphBufferHandle(id, byte_length, usage, "transient", self.id)
        self._buffers[id] = handle
        return handle

    def create_data_view(self, handle: GraphBufferHandle, *, format, length: int, byte_offset: int = 0,
                         byte_stride: int | None = None, row_byte_length: int | None = None) -> GraphDataView:
        """A typed range of ``handle``; it must fit inside the logical buffer."""
        self._check_own_handle(handle)
        fmt = vector_format(format)
        row = fmt.byte_size if row_byte_length is None else row_byte_length
        stride = row if byte_stride is None else byte_stride
        for name, value in (("length", length), ("byte_offset", byte_offset), ("byte_stride", stride),
                            ("row_byte_length", row)):
            if not _is_safe_int(value):
                raise ViewRangeError(f'GPUCommandGraph view of "{handle.id}" has an invalid {name} ({value!r})')
        if row < fmt.byte_size or stride < row:
            raise ViewRangeError(
                f'GPUCommandGraph view of "{handle.id}" needs byte_stride >= row_byte_length >= '
                f'{fmt.byte_size} for {fmt.name} (got stride {stride}, row {row})')
        if byte_offset % fmt.dtype.itemsize:
            raise ViewRangeError(
                f'GPUCommandGraph view of "{handle.id}" byte_offset {byte_offset} is not aligned to '
                f'{fmt.dtype.itemsize} bytes for {fmt.name}')
        view = GraphDataView(handle, fmt, length, byte_offset, stride, row)
        if byte_offset + view.byte_length > handle.byte_length:
            raise ViewRangeError(
                f'GPUCommandGraph view of "{handle.id}" does not fit its buffer (needs '
                f'{byte_offset + view.byte_length} bytes, buffer has {handle.byte_length})')
        return view

    def import_gpu_data(self, id: str, data) -> GraphDataView:
        """Import one ``GPUData`` range: a handle over its whole backing buffer and
        a view of the range. Ownership does not transfer. ``data`` is taken
        structurally (``buffer``, ``format``, ``length``, ``byte_offset``,
        ``byte_stride``)."""
        buffer = data.buffer
        handle = self.import_buffer(id=id, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
        return self._view_of_data(handle, data)

    def import_gpu_vector(self, id: str, vector) -> GraphVectorView:
        """Import every chunk of a fixed-width ``GPUVector`` as one ordered
        :class:`GraphVectorView`. Chunks sharing a physical buffer share one
        handle (one hazard chain); empty chunks keep their place. Nothing is
        concatenated, copied or dispatched."""
        chunks = list(vector.chunks)
        fmt = vector_format(vector.format if getattr(vector, "format", None) is not None else chunks[0].format)
        handles = {}
        views = []
        for chunk in chunks:
            if vector_format(chunk.format) != fmt:
                raise GraphValidationError(
                    f'GPUCommandGraph vector "{id}" mixes formats {fmt.name} and {vector_format(chunk.format).name}')
            handle = handles.get(_identity(chunk.buffer))
            if handle is None:
                handle_id = id if len(handles) == 0 and _single_buffer(chunks) else f"{id}-buffer-{len(handles)}"
                handle = self.import_buffer(id=handle_id, byte_length=chunk.buffer.size,
                                            usage=chunk.buffer.usage, buffer=chunk.buffer)
                handles[_identity(chunk.buffer)] = handle
            views.append(self._view_of_data(handle, chunk))
        return GraphVectorView(id, tuple(views), fmt)

    def _view_of_data(self, handle, data) -> GraphDataView:
        fmt = vector_format(data.format)
        return self.create_data_view(handle, format=fmt, length=data.length, byte_offset=data.byte_offset,
                                     byte_stride=data.byte_stride,
                                     row_byte_length=getattr(data, "row_byte_length", None) or fmt.byte_size)

    def import_texture(self, *, id: str, size, format: str, usage: int, texture=None, mip_level_count: int = 1,
                       sample_count: int = 1, dimension: str = "2d") -> GraphTextureHandle:
        """Declare a caller-owned texture (never destroyed by the graph)."""
        self._check_building("import_texture")
        self._check_resource_id(id)
        handle = GraphTextureHandle(id, _check_size(id, size), str(format), _check_usage_flags("texture", id, usage),
                                    "imported", self.id, mip_level_count, sample_count, dimension, texture)
        if texture is not None:
            check_physical_texture(self.device, handle, texture, where="import")
        self._textures[id] = handle
        return handle

    def create_transient_texture(self, *, id: str, size, format: str, usage: int, mip_level_count: int = 1,
                                 sample_count: int = 1, dimension: str = "2d") -> GraphTextureHandle:
        """Declare a graph-owned texture, shared with identical transients
        whose lifetimes do not overlap."""
        self._check_building("create_transient_texture")
        self._check_resource_id(id)
        handle = GraphTextureHandle(id, _check_size(id, size), str(format),
                                    _check_usage_flags("transient texture", id, usage), "transient", self.id,
                                    mip_level_count, sample_count, dimension)
        self._textures[id] = handle
        return handle

    def create_texture_view(self, handle: GraphTextureHandle, *, base_mip_level: int = 0, mip_level_count=None,
                            base_array_layer: int = 0, array_layer_count=None, aspect: str = "all",
                            dimension=None) -> GraphTextureView:
        """A subresource selection of ``handle``; it must lie inside its mips and layers."""
        self._check_own_handle(handle)
        mips = handle.mip_level_count - base_mip_level if mip_level_count is None else mip_level_count
        layers_total = handle.size[2] if handle.dimension != "3d" else 1
        layers = layers_total - base_array_layer if array_layer_count is None else array_layer_count
        if base_mip_level < 0 or mips < 1 or base_mip_level + mips > handle.mip_level_count:
            raise ViewRangeError(f'GPUCommandGraph texture view of "{handle.id}" selects {mips} mip levels from '
                                 f'{base_mip_level} (texture has {handle.mip_level_count})')
        if base_array_layer < 0 or layers < 1 or base_array_layer + layers > layers_total:
            raise ViewRangeError(f'GPUCommandGraph texture view of "{handle.id}" selects {layers} array layers from '
                                 f'{base_array_layer} (texture has {layers_total})')
        return GraphTextureView(handle, base_mip_level, mips, base_array_layer, layers, aspect, dimension)

    # ---------------------------------------------------------------- nodes
    def add_compute_node(self, *, id: str, resources=(), compile, depends_on=()) -> str:
        """Add a compute node. ``compile(ctx)`` runs once at ``compile()`` and
        returns ``encode(compute_pass, frame)``. Consecutive compute nodes may
        share one compute pass."""
        return self._add_node("compute", id, resources, compile, depends_on)

    def add_render_node(self, *, id: str, resources=(), compile, depends_on=(), color_attachments=(),
                        depth_stencil_attachment=None) -> str:
        """Add a render node; the graph opens its render pass.

        ``color_attachments`` are dicts with ``view`` (a texture handle or
        view), optional ``resolve_target``, ``load_op`` (default "clear"),
        ``store_op`` (default "store") and ``clear_value``;
        ``depth_stencil_attachment`` a dict with ``view`` and the depth/stencil
        ops. Attachments are declared uses (``render-attachment``).
        ``compile(ctx)`` returns ``encode(render_pass, frame)``.
        """
        attachments = [dict(a) for a in color_attachments]
        uses = list(resources)
        for att in attachments + ([dict(depth_stencil_attachment)] if depth_stencil_attachment else []):
            for key in ("view", "resolve_target"):
                if att.get(key) is not None:
                    uses.append((att[key], "render-attachment"))
        depth = dict(depth_stencil_attachment) if depth_stencil_attachment else None
        if not attachments and depth is None:
            raise GraphValidationError(f'GPUCommandGraph render node "{id}" has no attachments')
        node_id = self._add_node("render", id, uses, compile, depends_on)
        self._nodes[-1].color_attachments = attachments
        self._nodes[-1].depth_stencil_attachment = depth
        return node_id

    def add_copy_node(self, *, id: str, resources=(), compile, depends_on=()) -> str:
        """Add a copy node; ``compile(ctx)`` returns ``encode(command_encoder, frame)``."""
        return self._add_node("copy", id, resources, compile, depends_on)

    def _add_node(self, kind, id, resources, compile, depends_on) -> str:
        self._check_building(f"add_{kind}_node")
        _check_id("GPUCommandGraph node", id, "node")
        if id in self._node_ids:
            raise DuplicateIdError(f'GPUCommandGraph "{self.id}" already has a node "{id}"')
        if not callable(compile):
            raise GraphValidationError(f'GPUCommandGraph node "{id}" needs a callable compile (got {compile!r})')
        deps = (depends_on,) if isinstance(depends_on, str) else tuple(depends_on)
        node = GraphNode(id, kind, [], compile, deps)
        for entry in resources:
            try:
                resource, use = entry
            except (TypeError, ValueError):
                raise GraphValidationError(
                    f'GPUCommandGraph node "{id}" resources need (resource, use) pairs (got {entry!r})') from None
            handle, view = self._resolve_resource(id, resource)
            _check_use(kind, id, handle, use)
            node.uses.append((handle, use, view))
            if use in READ_USES:
                node.reads.add(handle)
            if use in WRITE_USES:
                node.writes.add(handle)
        self._nodes.append(node)
        self._node_ids.add(id)
        return id

    def _resolve_resource(self, node_id, resource):
        if isinstance(resource, GraphVectorView):
            raise GraphValidationError(
                f'GPUCommandGraph node "{node_id}" must declare the chunks of vector "{resource.id}" '
                "one by one (vectors have no single binding)")
        if isinstance(resource, (GraphDataView, GraphTextureView)):
            handle = resource.handle
        elif isinstance(resource, (GraphBufferHandle, GraphTextureHandle)):
            handle = resource
        else:
            raise GraphValidationError(
                f'GPUCommandGraph node "{node_id}" declares {type(resource).__name__}, not a graph handle or view')
        self._check_own_handle(handle)
        return handle, (resource if resource is not handle else None)

    # -------------------------------------------------------------- compile
    def compile(self):
        """Validate, order, plan transients and compile nodes.

        Returns a :class:`CompiledGPUCommandGraph`. The builder cannot be
        changed or compiled again afterwards. If a node's compile callback
        raises, every node-owned object and transient made so far is destroyed
        and :class:`NodeCompileError` is raised.
        """
        self._check_building("compile")
        self._state = "failed"  # stays so unless compile_graph returns
        compiled = compile_graph(GraphPlan(self.device, self.id, tuple(self._nodes), dict(self._buffers),
                                           dict(self._textures)))
        self._state = "compiled"
        return compiled

    # -------------------------------------------------------------- helpers
    @property
    def nodes(self) -> tuple:
        return tuple(self._nodes)

    @property
    def buffers(self) -> dict:
        return dict(self._buffers)

    @property
    def textures(self) -> dict:
        return dict(self._textures)

    def _check_building(self, what):
        if self._state != "building":
            raise GraphStateError(f'GPUCommandGraph "{self.id}" is {self._state}: {what} is not allowed '
                                  "(build a new graph instead)")

    def _check_resource_id(self, id):
        _check_id("GPUCommandGraph resource", id, "resource")
        if id in self._buffers or id in self._textures:
            raise DuplicateIdError(f'GPUCommandGraph "{self.id}" already has a resource "{id}"')

    def _check_own_handle(self, handle):
        own = self._buffers.get(handle.id) if isinstance(handle, GraphBufferHandle) else self._textures.get(
            getattr(handle, "id", None))
        if own is not handle:
            raise GraphValidationError(
                f'GPUCommandGraph "{self.id}" does not own {handle!r} (it belongs to graph "{getattr(handle, "graph_id", "?")}")')

    def _check_byte_length(self, what, id, byte_length):
        if not _is_safe_int(byte_length):
            raise GraphValidationError(
                f'GPUCommandGraph {what} "{id}" needs a safe non-negative integer byte_length (got {byte_length!r})')
        limit = self.device.limits["max-buffer-size"]
        if byte_length > limit:
            raise GraphValidationError(
                f'GPUCommandGraph {what} "{id}" exceeds the device buffer limit (needs {byte_length} bytes, max {limit})')
        return int(byte_length)


def _single_buffer(chunks) -> bool:
    return len({id(c.buffer) for c in chunks}) == 1


def _is_safe_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SAFE_INTEGER


def _check_id(what, id, kind):
    if not isinstance(id, str) or not id:
        raise GraphValidationError(f"{what} needs a non-empty string {kind} id (got {id!r})")


def _check_usage_flags(what, id, usage):
    if not isinstance(usage, int) or isinstance(usage, bool) or usage <= 0:
        raise UsageError(f'GPUCommandGraph {what} "{id}" needs nonzero usage flags (got {usage!r})')
    return int(usage)


def _check_size(id, size):
    dims = tuple(int(s) for s in size) + (1,) * (3 - len(tuple(size)))
    if len(dims) != 3 or min(dims) < 1:
        raise GraphValidationError(f'GPUCommandGraph texture "{id}" needs a positive size (got {size!r})')
    return dims


def _check_use(kind, node_id, handle, use):
    table = BUFFER_USES if isinstance(handle, GraphBufferHandle) else TEXTURE_USES
    if use not in table:
        raise UsageError(f'GPUCommandGraph node "{node_id}" declares unknown use "{use}" of "{handle.id}" '
                         f"(known: {', '.join(table)})")
    if use not in NODE_USES[kind]:
        raise UsageError(f'GPUCommandGraph {kind} node "{node_id}" cannot declare "{use}" of "{handle.id}"')
    flag = table[use]
    if not handle.usage & flag:
        raise UsageError(f'GPUCommandGraph node "{node_id}" declares "{use}" of "{handle.id}" but its usage '
                         f"{handle.usage:#x} lacks flag {int(flag):#x}")

