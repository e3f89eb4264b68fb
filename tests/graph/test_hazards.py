"""Dependency inference, explicit edges, cycles and stable order."""

import pytest

from gpuviz import GPUCommandGraph, GraphCycleError, DependencyError
from gpuviz.graph.hazards import order_nodes

from .helpers import STORAGE, noop_compile


def _graph(device):
    graph = GPUCommandGraph(device, id="hazards")
    flags = graph.create_transient_buffer(id="flags", byte_length=64, usage=STORAGE)
    offsets = graph.create_transient_buffer(id="offsets", byte_length=64, usage=STORAGE)
    return graph, flags, offsets


def test_flag_scan_clear_chain(device):
    """The spec's example: visibility writes flags, scan reads them, a later
    clear overwrites them (WAW with visibility, WAR with scan)."""
    graph, flags, offsets = _graph(device)
    graph.add_compute_node(id="clear", resources=[(flags, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="visibility", resources=[(flags, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="scan", resources=[(flags, "storage-read"), (offsets, "storage-write")],
                           compile=noop_compile)
    graph.add_compute_node(id="reclear", resources=[(flags, "storage-write")], compile=noop_compile)
    compiled = graph.compile()
    edges = set(compiled.stats.edges)
    assert ("visibility", "scan", "read-after-write") in edges
    assert ("visibility", "reclear", "write-after-write") in edges
    assert ("scan", "reclear", "write-after-read") in edges
    assert ("clear", "visibility", "write-after-write") in edges
    assert compiled.stats.node_order == ["clear", "visibility", "scan", "reclear"]
    compiled.destroy()


def test_read_write_use_takes_part_in_both_rules(device):
    graph, flags, _ = _graph(device)
    graph.add_compute_node(id="reader", resources=[(flags, "storage-read")], compile=noop_compile)
    graph.add_compute_node(id="updater", resources=[(flags, "storage-read-write")], compile=noop_compile)
    graph.add_compute_node(id="later-reader", resources=[(flags, "storage-read")], compile=noop_compile)
    edges = set(graph.compile().stats.edges)
    assert ("reader", "updater", "write-after-read") in edges
    assert ("updater", "later-reader", "read-after-write") in edges


def test_two_views_of_one_handle_share_a_chain(device):
    graph, flags, _ = _graph(device)
    low = graph.create_data_view(flags, format="uint32", length=4)
    high = graph.create_data_view(flags, format="uint32", length=4, byte_offset=32)
    graph.add_compute_node(id="write-low", resources=[(low, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="read-high", resources=[(high, "storage-read")], compile=noop_compile)
    assert ("write-low", "read-high", "read-after-write") in graph.compile().stats.edges


def test_independent_nodes_keep_insertion_order_and_explicit_edges_reorder(device):
    graph, flags, offsets = _graph(device)
    graph.add_compute_node(id="a", resources=[(flags, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="b", resources=[(offsets, "storage-write")], compile=noop_compile, depends_on=["c"])
    graph.add_compute_node(id="c", compile=noop_compile)
    graph.add_compute_node(id="d", compile=noop_compile)
    compiled = graph.compile()
    assert compiled.stats.node_order == ["a", "c", "b", "d"]
    assert ("c", "b", "explicit") in compiled.stats.edges


def test_missing_dependency_fails_at_compile(device):
    graph, _, _ = _graph(device)
    graph.add_compute_node(id="a", compile=noop_compile, depends_on=("ghost",))
    with pytest.raises(DependencyError, match='"a" depends on missing node "ghost"'):
        graph.compile()


def test_cycle_is_rejected_naming_its_nodes(device):
    graph, flags, _ = _graph(device)
    graph.add_compute_node(id="first", resources=[(flags, "storage-write")], compile=noop_compile,
                           depends_on=("second",))
    graph.add_compute_node(id="second", resources=[(flags, "storage-read")], compile=noop_compile)
    graph.add_compute_node(id="bystander", compile=noop_compile)
    with pytest.raises(GraphCycleError, match='"first" -> "second" -> "first"'):
        graph.compile()


def test_every_node_is_kept_even_without_resources(device):
    graph, _, _ = _graph(device)
    for name in ("x", "y", "z"):
        graph.add_compute_node(id=name, compile=noop_compile)
    assert graph.compile().stats.node_order == ["x", "y", "z"]


def test_order_nodes_puts_explicit_dependencies_first_without_compiling(device):
    graph, flags, offsets = _graph(device)
    graph.add_compute_node(id="a", resources=[(flags, "storage-write")], compile=noop_compile)
    graph.add_compute_node(id="b", resources=[(flags, "storage-read")], compile=noop_compile, depends_on="c")
    graph.add_compute_node(id="c", resources=[(offsets, "storage-write")], compile=noop_compile)
    order, edges = order_nodes(graph.nodes, "hazards")
    assert [n.id for n in order] == ["a", "c", "b"]
    assert edges == [(0, 1, "read-after-write"), (2, 1, "explicit")]
