"""Dependency inference and stable ordering.

Per hazard key (a logical handle, or the first handle imported over the same
physical resource: two imports of one buffer share one chain) the compiler tracks the most recent writer and the readers
since that write. A read depends on the writer (read-after-write); a write
depends on the writer (write-after-write) and on every reader since
(write-after-read), then becomes the writer. Explicit edges are added on top.
The order is topological with insertion order breaking ties.
"""

from __future__ import annotations

import heapq

from ..errors import DependencyError, GraphCycleError

__all__ = ["infer_edges", "stable_order", "order_nodes"]


def infer_edges(nodes) -> list:
    """Return hazard edges ``(before_index, after_index, kind)`` for nodes in
    insertion order. ``node.reads`` / ``node.writes`` are sets of handles,
    tracked by their ``hazard_key``."""
    edges = []
    last_writer = {}
    readers_since = {}
    for index, node in enumerate(nodes):
        reads = {_key(h) for h in node.reads}
        writes = {_key(h) for h in node.writes}
        for handle in reads:
            writer = last_writer.get(handle)
            if writer is not None and writer != index:
                edges.append((writer, index, "read-after-write"))
        for handle in writes:
            writer = last_writer.get(handle)
            if writer is not None and writer != index:
                edges.append((writer, index, "write-after-write"))
            for reader in readers_since.get(handle, ()):
                if reader != index:
                    edges.append((reader, index, "write-after-read"))
        for handle in reads:
            readers_since.setdefault(handle, []).append(index)
        for handle in writes:
            last_writer[handle] = index
            readers_since[handle] = []
    return edges


def _key(handle):
    return getattr(handle, "hazard_key", handle)


def stable_order(node_ids, edges, graph_id: str) -> list:
    """Topologically order node indices; among ready nodes the earliest inserted
    goes first. Raises :class:`GraphCycleError` naming the nodes of one cycle."""
    count = len(node_ids)
    successors = [set() for _ in range(count)]
    indegree = [0] * count
    for before, after, _kind in edges:
        if after not in successors[before]:
            successors[before].add(after)
            indegree[after] += 1
    ready = [i for i in range(count) if indegree[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for nxt in successors[index]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) < count:
        cycle = _find_cycle(successors, {i for i in range(count) if indegree[i] > 0})
        names = " -> ".join(f'"{node_ids[i]}"' for i in cycle)
        raise GraphCycleError(f'GPUCommandGraph "{graph_id}" has a dependency cycle: {names}')
    return order


def order_nodes(nodes, graph_id: str) -> tuple:
    """The compiled order of ``nodes`` (in insertion order) and every edge.

    Returns ``(order, edges)``: the nodes, and ``(before_index, after_index,
    kind)`` triples over insertion indices, hazard edges first, then
    ``"explicit"`` ones from ``depends_on``. Raises
    :class:`DependencyError` for a missing dependency and
    :class:`GraphCycleError` for a cycle.
    """
    ids = [n.id for n in nodes]
    index = {node_id: i for i, node_id in enumerate(ids)}
    edges = infer_edges(nodes)
    for i, node in enumerate(nodes):
        for dep in node.depends_on:
            if dep not in index:
                raise DependencyError(f'GPUCommandGraph node "{node.id}" depends on missing node "{dep}"')
            edges.append((index[dep], i, "explicit"))
    return [nodes[i] for i in stable_order(ids, edges, graph_id)], edges


def _find_cycle(successors, remaining) -> list:
    """One cycle among ``remaining`` nodes, as a closed path of indices."""
    start = min(remaining)
    path, seen = [start], {start: 0}
    node = start
    while True:
        node = min(n for n in successors[node] if n in remaining)
        if node in seen:
            return path[seen[node]:] + [node]
        seen[node] = len(path)
        path.append(node)
