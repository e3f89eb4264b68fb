"""Graph nodes: declared resource uses, explicit dependencies and the
compile callback that turns a node into an executable ``encode`` function."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GraphNode", "NodeCompileContext"]


@dataclass(eq=False)
class GraphNode:
    """One compute, render or copy node as declared by the builder.

    ``uses`` holds ``(handle, use, view_or_None)`` triples; ``reads`` and
    ``writes`` are the handle sets hazard inference works on.
    """

    id: str
    kind: str  # "compute" | "render" | "copy"
    uses: list
    compile: object
    depends_on: tuple
    color_attachments: list = field(default_factory=list)
    depth_stencil_attachment: dict | None = None
    reads: set = field(default_factory=set)
    writes: set = field(default_factory=set)

    @property
    def handles(self) -> set:
        return self.reads | self.writes


@dataclass(eq=False)
class NodeCompileContext:
    """What a node's compile callback receives (once, at ``compile()``).

    Valid only during that callback: it does not record, submit or reach
    another node's resources; :meth:`own` ties objects the callback creates
    to the compiled graph's lifetime.

    Attributes
    ----------
    device : wgpu.GPUDevice
    graph_id, node_id : str
    capabilities : gpuviz.DeviceCapabilities
    """

    device: object
    graph_id: str
    node_id: str
    capabilities: object
    _owned: list = field(default_factory=list)

    def own(self, obj):
        """Register an object with a ``destroy()`` (buffer, model...) to be
        released with the compiled graph; returns ``obj``."""
        self._owned.append(obj)
        return obj
