"""Logical graph resources: buffer and texture handles, typed views, and the
declared uses that connect them to nodes.

Handles are opaque descriptors made by :class:`GPUCommandGraph`; users never
construct them. A handle names a whole logical allocation (imported or
transient); a view names a typed range or subresource of one handle. Two views
of one handle share one hazard chain, even when their byte ranges are disjoint,
and so do two imported handles over one physical buffer or texture
(``hazard_key``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import wgpu

from ..formats import GPUVectorFormat, span_byte_length

__all__ = [
    "GraphBufferHandle",
    "GraphTextureHandle",
    "GraphTextureView",
    "GraphDataView",
    "GraphVectorView",
    "BUFFER_USES",
    "TEXTURE_USES",
    "READ_USES",
    "WRITE_USES",
]

BU = wgpu.BufferUsage
TU = wgpu.TextureUsage

#: Declared buffer use -> the creation flag the buffer must carry.
BUFFER_USES = {
    "storage-read": BU.STORAGE,
    "storage-write": BU.STORAGE,
    "storage-read-write": BU.STORAGE,
    "uniform": BU.UNIFORM,
    "copy-source": BU.COPY_SRC,
    "copy-destination": BU.COPY_DST,
    "vertex": BU.VERTEX,
    "index": BU.INDEX,
    "indirect": BU.INDIRECT,
}

#: Declared texture use -> the creation flag the texture must carry.
TEXTURE_USES = {
    "sampled": TU.TEXTURE_BINDING,
    "storage-texture-read": TU.STORAGE_BINDING,
    "storage-texture-write": TU.STORAGE_BINDING,
    "storage-texture-read-write": TU.STORAGE_BINDING,
    "render-attachment": TU.RENDER_ATTACHMENT,
    "copy-source": TU.COPY_SRC,
    "copy-destination": TU.COPY_DST,
}

READ_USES = frozenset(
    {"storage-read", "storage-read-write", "uniform", "copy-source", "vertex", "index", "indirect",
     "sampled", "storage-texture-read", "storage-texture-read-write", "render-attachment"}
)
WRITE_USES = frozenset(
    {"storage-write", "storage-read-write", "copy-destination",
     "storage-texture-write", "storage-texture-read-write", "render-attachment"}
)

#: Uses each node kind may declare.
NODE_USES = {
    "compute": frozenset({"storage-read", "storage-write", "storage-read-write", "uniform", "indirect",
                          "sampled", "storage-texture-read", "storage-texture-write",
                          "storage-texture-read-write"}),
    "render": frozenset({"storage-read", "storage-write", "storage-read-write", "uniform", "vertex",
                         "index", "indirect", "sampled", "storage-texture-read",
                         "storage-texture-write", "storage-texture-read-write", "render-attachment"}),
    "copy": frozenset({"copy-source", "copy-destination"}),
}


@dataclass(eq=False, repr=False)
class GraphBufferHandle:
    """A complete logical buffer of one graph: ID, byte length, usage flags and
    lifetime (``"imported"``: caller-owned; ``"transient"``: graph-owned scratch).

    An opaque handle: it does not own or allocate memory itself (the compiled
    graph binds a physical buffer to it).
    """

    id: str
    byte_length: int
    usage: int
    lifetime: str
    graph_id: str
    buffer: object = None  # the default physical buffer of an import
    alias_of: GraphBufferHandle | None = None  # the first import of the same physical buffer
    written: bool = False  # some node declares a write

    @property
    def hazard_key(self) -> GraphBufferHandle:
        """The handle whose hazard chain this one joins: itself, or the first
        handle imported over the same physical buffer."""
        return self.alias_of or self

    def __repr__(self) -> str:
        return f'<GraphBufferHandle "{self.id}" {self.lifetime} {self.byte_length} bytes>'


@dataclass(eq=False, repr=False)
class GraphTextureHandle:
    """A complete logical texture: ID, size, format, usage, sample count and
    lifetime. Views select mips, layers and aspects of it.

    An opaque handle: it does not own or allocate a texture itself.
    """

    id: str
    size: tuple
    format: str
    usage: int
    lifetime: str
    graph_id: str
    mip_level_count: int = 1
    sample_count: int = 1
    dimension: str = "2d"
    texture: object = None
    alias_of: GraphTextureHandle | None = None  # the first import of the same physical texture
    written: bool = False  # some node declares a write

    @property
    def hazard_key(self) -> GraphTextureHandle:
        """The handle whose hazard chain this one joins: itself, or the first
        handle imported over the same physical texture."""
        return self.alias_of or self

    def __repr__(self) -> str:
        return f'<GraphTextureHandle "{self.id}" {self.lifetime} {self.size} {self.format}>'


@dataclass(eq=False, repr=False)
class GraphTextureView:
    """A subresource selection of a texture handle (mips, layers, aspect).

    Describes a selection only; it does not create a ``GPUTextureView`` until
    the compiled graph binds one.
    """

    handle: GraphTextureHandle
    base_mip_level: int = 0
    mip_level_count: int = 1
    base_array_layer: int = 0
    array_layer_count: int = 1
    aspect: str = "all"
    dimension: str | None = None
    _cache: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The ID of the texture handle this view selects from."""
        return self.handle.id

    def descriptor(self) -> dict:
        """Keyword arguments for ``texture.create_view``."""
        out = dict(base_mip_level=self.base_mip_level, mip_level_count=self.mip_level_count,
                   base_array_layer=self.base_array_layer, array_layer_count=self.array_layer_count,
                   aspect=self.aspect)
        if self.dimension:
            out["dimension"] = self.dimension
        return out

    def __repr__(self) -> str:
        return f'<GraphTextureView of "{self.handle.id}" mip {self.base_mip_level}+{self.mip_level_count}>'


@dataclass(eq=False, repr=False)
class GraphDataView:
    """A typed range inside one logical buffer.

    Preserves the table metadata an algorithm needs: format, logical length,
    byte offset, byte stride and row payload size. Binding adaptation (the
    256-byte offset alignment of storage bindings) is the kernel's job; the
    view does not check alignment beyond what the graph validated.
    """

    handle: GraphBufferHandle
    format: GPUVectorFormat
    length: int
    byte_offset: int
    byte_stride: int
    row_byte_length: int

    @property
    def id(self) -> str:
        """The ID of the buffer handle this view lies in."""
        return self.handle.id

    @property
    def byte_length(self) -> int:
        """Bytes from the first row's start to the last row's end (0 when empty)."""
        return span_byte_length(self.length, self.byte_stride, self.row_byte_length)

    @property
    def is_packed(self) -> bool:
        """True when rows are adjacent and hold exactly one format value each."""
        return self.byte_stride == self.row_byte_length == self.format.byte_size

    def __repr__(self) -> str:
        return (f'<GraphDataView "{self.handle.id}" {self.format.name} x{self.length} '
                f'@{self.byte_offset} stride {self.byte_stride}>')


@dataclass(eq=False, repr=False)
class GraphVectorView:
    """An ordered list of :class:`GraphDataView` chunks of one format.

    Chunks keep their order, lengths (empty ones included) and shared physical
    allocations; the graph never concatenates or dispatches over them itself.
    """

    id: str
    views: tuple
    format: GPUVectorFormat

    @property
    def length(self) -> int:
        """Rows over all chunks."""
        return sum(v.length for v in self.views)

    @property
    def chunk_lengths(self) -> tuple:
        """Rows per chunk, in order (empty chunks included)."""
        return tuple(v.length for v in self.views)

    def __repr__(self) -> str:
        return f'<GraphVectorView "{self.id}" {self.format.name} chunks {list(self.chunk_lengths)}>'
