"""GPUCommandGraph: the builder of an explicit command graph.

The builder collects logical resources (imported and transient buffers and
textures, typed views) and nodes with declared uses. Mistakes that are
knowable at a call fail at that call; ``compile()`` validates the closed
graph, infers hazards, orders nodes, plans transient reuse and runs node
compile callbacks. The builder never records, submits or reads back.
"""

from __future__ import annotations

import operator

import numpy as np
import wgpu

from ..formats import vector_format
from .aliasing import check_node_writes
from .checks import check_buffer_usage, check_count, check_id, check_texture_usage
from .compiled import compile_graph
from .descriptors import check_attachment, check_texture_descriptor, check_texture_view_options
from ..errors import (DeviceMismatchError, DuplicateIdError, GraphStateError, GraphTypeError, GraphValidationError,
                     UsageError, ViewRangeError)
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
        if device is None:
            raise GraphTypeError(f'GPUCommandGraph "{id}" needs a wgpu.GPUDevice (got None)')
        if not isinstance(device, wgpu.GPUDevice):
            raise DeviceMismatchError(
                f'GPUCommandGraph "{id}" needs a wgpu.GPUDevice (got {type(device).__name__})')
        check_id("GPUCommandGraph", id, kind="graph id")
        self.device = device
        self.id = id
        self._buffers: dict[str, GraphBufferHandle] = {}
        self._textures: dict[str, GraphTextureHandle] = {}
        # id(physical object) -> first handle imported over it; the handle keeps
        # the object alive, so its id() is not reused while the graph lives.
        self._imported_objects: dict[int, object] = {}
        self._nodes: list[GraphNode] = []
        self._node_ids: set[str] = set()
        self._state = "building"  # -> "compiled" | "failed"

    # ------------------------------------------------------------ resources
    def import_buffer(self, *, id: str, byte_length: int, usage: int, buffer=None) -> GraphBufferHandle:
        """Declare a caller-owned buffer.

        ``byte_length`` and ``usage`` are a promise every buffer supplied later
        (the default ``buffer`` or a per-encoding override) must keep. The
        graph borrows imports and never destroys them. A buffer the graph
        already imported under another ID gets a new handle that shares the
        first one's hazard chain (``hazard_key``), so uses through either are
        ordered.
        """
        self._check_building("import_buffer")
        self._check_resource_id(id)
        byte_length = self._check_byte_length("buffer", id, byte_length)
        usage = check_buffer_usage(f'GPUCommandGraph buffer "{id}"', usage)
        if buffer is not None:
            check_physical_buffer(self.device, self.id, id, buffer, byte_length=byte_length, usage=usage,
                                  where="import")
        handle = self._remember_import(GraphBufferHandle(id, byte_length, usage, "imported", self.id, buffer), buffer)
        self._buffers[id] = handle
        return handle

    def create_transient_buffer(self, *, id: str, byte_length: int, usage: int) -> GraphBufferHandle:
        """Declare graph-owned scratch; its physical buffer may be shared with
        other transients whose lifetimes do not overlap. Never mappable."""
        self._check_building("create_transient_buffer")
        self._check_resource_id(id)
        byte_length = self._check_byte_length("transient buffer", id, byte_length)
        usage = check_buffer_usage(f'GPUCommandGraph transient buffer "{id}"', usage)
        if usage & (wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.MAP_WRITE):
            raise UsageError(f'GPUCommandGraph transient buffer "{id}" cannot be mappable (usage {usage:#x})')
        handle = GraphBufferHandle(id, byte_length, usage, "transient", self.id)
        self._buffers[id] = handle
        return handle

    def create_data_view(self, handle: GraphBufferHandle, *, format, length: int, byte_offset: int = 0,
                         byte_stride: int | None = None, row_byte_length: int | None = None) -> GraphDataView:
        """A typed range of ``handle``; it must fit inside the logical buffer.

        Counts are integers (numpy integers too; ``bool`` and floats are
        refused, never rounded).
        """
        self._check_own_handle(handle, GraphBufferHandle)
        fmt = vector_format(format)
        row = fmt.byte_size if row_byte_length is None else row_byte_length
        stride = row if byte_stride is None else byte_stride
        for name, value in (("length", length), ("byte_offset", byte_offset), ("byte_stride", stride),
                            ("row_byte_length", row)):
            if not _is_safe_int(value):
                raise ViewRangeError(f'GPUCommandGraph view of "{handle.id}" has an invalid {name} ({value!r})')
        length, byte_offset, stride, row = (operator.index(v) for v in (length, byte_offset, stride, row))
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
        ``byte_stride``). A buffer the graph already imported shares that
        import's hazard chain (see :meth:`import_buffer`)."""
        check_id("GPUCommandGraph import_gpu_data", id)
        _check_data(f'GPUCommandGraph import_gpu_data "{id}"', data)
        buffer = data.buffer
        handle = self.import_buffer(id=id, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
        return self._view_of_data(handle, data)

    def import_gpu_vector(self, id: str, vector) -> GraphVectorView:
        """Import every chunk of a fixed-width ``GPUVector`` as one ordered
        :class:`GraphVectorView`. Chunks sharing a physical buffer share one
        handle (one hazard chain); empty chunks keep their place. Nothing is
        concatenated, copied or dispatched."""
        check_id("GPUCommandGraph import_gpu_vector", id)
        chunks = getattr(vector, "chunks", None)
        if isinstance(chunks, (str, bytes)) or not hasattr(chunks, "__iter__"):
            raise GraphTypeError(f'GPUCommandGraph vector "{id}" needs a GPUVector (an object with chunks), '
                                 f"got {type(vector).__name__}")
        chunks = list(chunks)
        for index, chunk in enumerate(chunks):
            _check_data(f'GPUCommandGraph vector "{id}" chunk {index}', chunk)
        if getattr(vector, "format", None) is None and not chunks:
            raise GraphValidationError(f'GPUCommandGraph vector "{id}" has no chunks and no format')
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
        """Declare a caller-owned texture (never destroyed by the graph).

        The descriptor is checked at this call: a known format, integer sizes
        within the device's texture limits, valid mips and samples. A texture
        the graph already imported shares that import's hazard chain.
        """
        self._check_building("import_texture")
        self._check_resource_id(id)
        owner = f'GPUCommandGraph texture "{id}"'
        size = check_texture_descriptor(self.device, owner, size=size, format=format, dimension=dimension,
                                        mip_level_count=mip_level_count, sample_count=sample_count)
        handle = GraphTextureHandle(id, size, format, check_texture_usage(owner, usage), "imported", self.id,
                                    int(mip_level_count), int(sample_count), dimension, texture)
        if texture is not None:
            check_physical_texture(self.device, handle, texture, where="import")
        self._textures[id] = self._remember_import(handle, texture)
        return handle

    def create_transient_texture(self, *, id: str, size, format: str, usage: int, mip_level_count: int = 1,
                                 sample_count: int = 1, dimension: str = "2d") -> GraphTextureHandle:
        """Declare a graph-owned texture, shared with identical transients
        whose lifetimes do not overlap. The descriptor is checked as in
        :meth:`import_texture`; nothing is allocated before ``compile()``."""
        self._check_building("create_transient_texture")
        self._check_resource_id(id)
        owner = f'GPUCommandGraph transient texture "{id}"'
        size = check_texture_descriptor(self.device, owner, size=size, format=format, dimension=dimension,
                                        mip_level_count=mip_level_count, sample_count=sample_count)
        handle = GraphTextureHandle(id, size, format, check_texture_usage(owner, usage), "transient", self.id,
                                    int(mip_level_count), int(sample_count), dimension)
        self._textures[id] = handle
        return handle

    def create_texture_view(self, handle: GraphTextureHandle, *, base_mip_level: int = 0, mip_level_count=None,
                            base_array_layer: int = 0, array_layer_count=None, aspect: str = "all",
                            dimension=None) -> GraphTextureView:
        """A subresource selection of ``handle``; it must lie inside its mips and
        layers, and ``aspect`` / ``dimension`` must be wgpu names."""
        self._check_own_handle(handle, GraphTextureHandle)
        owner = f'GPUCommandGraph texture view of "{handle.id}"'
        check_texture_view_options(owner, aspect=aspect, dimension=dimension)
        base_mip_level = check_count(owner, "base_mip_level", base_mip_level)
        base_array_layer = check_count(owner, "base_array_layer", base_array_layer)
        if mip_level_count is not None:
            mip_level_count = check_count(owner, "mip_level_count", mip_level_count)
        if array_layer_count is not None:
            array_layer_count = check_count(owner, "array_layer_count", array_layer_count)
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
        owner = f'GPUCommandGraph render node "{id}"'
        attachments = [check_attachment(owner, a, depth=False) for a in _sequence(owner, "color_attachments",
                                                                                   color_attachments)]
        depth = None if depth_stencil_attachment is None else check_attachment(owner, depth_stencil_attachment,
                                                                                depth=True)
        uses = list(_sequence(owner, "resources", resources))
        for att in attachments + ([depth] if depth else []):
            for key in ("view", "resolve_target"):
                if att.get(key) is not None:
                    uses.append((att[key], "render-attachment"))
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
        check_id("GPUCommandGraph node", id, kind="node id")
        if id in self._node_ids:
            raise DuplicateIdError(f'GPUCommandGraph "{self.id}" already has a node "{id}"')
        if not callable(compile):
            raise GraphValidationError(f'GPUCommandGraph node "{id}" needs a callable compile (got {compile!r})')
        owner = f'GPUCommandGraph node "{id}"'
        deps = (depends_on,) if isinstance(depends_on, str) else _sequence(owner, "depends_on", depends_on)
        for dep in deps:
            check_id(f"{owner} depends_on", dep, kind="node id")
        node = GraphNode(id, kind, [], compile, deps)
        for entry in _sequence(owner, "resources", resources):
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
        check_node_writes(id, node.uses)
        for handle in node.writes:  # after every check: a refused node marks nothing
            handle.written = True
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
        """The declared nodes in declaration order (a snapshot, not a live view)."""
        return tuple(self._nodes)

    @property
    def buffers(self) -> dict:
        """Buffer handles by ID, imported and transient (a copy of the mapping)."""
        return dict(self._buffers)

    @property
    def textures(self) -> dict:
        """Texture handles by ID, imported and transient (a copy of the mapping)."""
        return dict(self._textures)

    def _check_building(self, what):
        if self._state != "building":
            raise GraphStateError(f'GPUCommandGraph "{self.id}" is {self._state}: {what} is not allowed '
                                  "(build a new graph instead)")

    def _check_resource_id(self, id):
        check_id("GPUCommandGraph resource", id, kind="resource id")
        if id in self._buffers or id in self._textures:
            raise DuplicateIdError(f'GPUCommandGraph "{self.id}" already has a resource "{id}"')

    def _remember_import(self, handle, physical):
        """Record ``handle`` as an import of ``physical``; a later import of the
        same object joins the first one's hazard chain."""
        if physical is not None:
            first = self._imported_objects.setdefault(_identity(physical), handle)
            if first is not handle:
                handle.alias_of = first
        return handle

    def _check_own_handle(self, handle, kind=(GraphBufferHandle, GraphTextureHandle)):
        if not isinstance(handle, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise GraphTypeError(f'GPUCommandGraph "{self.id}" needs a {names} (got {type(handle).__name__})')
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
    """A non-negative integer (numpy integers too) below 2**53; never a bool."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return False
    return 0 <= int(value) <= MAX_SAFE_INTEGER


def _sequence(owner, name, value) -> tuple:
    """``value`` as a tuple if it is an iterable other than a string, else a
    GraphTypeError naming ``owner`` (``None`` is not an empty list)."""
    if value is None or isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise GraphTypeError(f"{owner} {name} must be a list or tuple (got {type(value).__name__} {value!r})")
    return tuple(value)


#: What import_gpu_data reads from a GPUData-like object.
_DATA_FIELDS = ("buffer", "format", "length", "byte_offset", "byte_stride")


def _check_data(owner, data) -> None:
    """Refuse, at the import, what is not GPUData-like or was destroyed."""
    missing = [name for name in _DATA_FIELDS if not hasattr(data, name)]
    if missing:
        raise GraphTypeError(f"{owner} needs a GPUData (got {type(data).__name__}, which lacks "
                             f"{', '.join(missing)})")
    if not isinstance(data.buffer, wgpu.GPUBuffer):
        raise GraphTypeError(f"{owner} has no wgpu.GPUBuffer (got {type(data.buffer).__name__})")
    if getattr(data, "destroyed", False):
        raise GraphStateError(f"{owner} was destroyed (its buffer cannot be used)")


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

