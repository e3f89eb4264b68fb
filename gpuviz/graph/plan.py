"""GraphPlan: what the builder hands the compiler.

A closed, read-only snapshot of one :class:`GPUCommandGraph`: its device,
ID, nodes in insertion order and logical resources by ID. The compiler
reads only this, so it never reaches into the builder.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GraphPlan"]


@dataclass(frozen=True)
class GraphPlan:
    """The declared graph as the compiler sees it.

    Attributes
    ----------
    device : wgpu.GPUDevice
    graph_id : str
    nodes : tuple of GraphNode
        In insertion order (hazards are inferred from it).
    buffers, textures : dict
        Resource ID -> :class:`GraphBufferHandle` / :class:`GraphTextureHandle`.

    Notes
    -----
    Holds no GPU objects of its own and is not validated here: the builder
    validated every entry as it was added.
    """

    device: object
    graph_id: str
    nodes: tuple
    buffers: dict
    textures: dict

    def imported(self, resources: dict) -> dict:
        """The imported handles of ``resources`` (``buffers`` or ``textures``), by ID."""
        return {key: h for key, h in resources.items() if h.lifetime == "imported"}

    def transients(self, resources: dict) -> list:
        """The transient handles of ``resources``, in declaration order."""
        return [h for h in resources.values() if h.lifetime == "transient"]
