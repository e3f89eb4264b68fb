"""GPUHierarchyLayout against a numpy oracle: regular (children_per_parent)
and irregular (child_parents) hierarchies, constant and per-child expanded
heights, vectors with empty and uneven chunks (children and parents chunked
independently), state changes by buffer writes, zero length and errors."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms.hierarchy_layout import GPUHierarchyLayout
from gpuviz.oracles.algorithms import hierarchy_layout as layout_oracle
from gpuviz.tables import GPUData

from .conftest import TILE, gpu_data, gpu_vector, new_graph, read, run, shared_vector, submit_encodings

SENTINEL = 0xDEADBEEF
LANES = 1024  # children one heights workgroup handles


def runs_of(rng, n, mean):
    """Non-decreasing parent rows with irregular run lengths (gaps allowed:
    a parent with no children)."""
    if n == 0:
        return np.zeros(0, np.uint32)
    steps = (rng.random(n) < 1.0 / mean).astype(np.uint32) * rng.integers(1, 3, n).astype(np.uint32)
    steps[0] = rng.integers(0, 2)
    return np.cumsum(steps, dtype=np.uint32)


def states(rng, n, p_open):
    """Nonzero = expanded, with arbitrary nonzero values."""
    return (rng.random(n) < p_open).astype(np.uint32) * rng.integers(1, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def split(values, lengths):
    cuts = np.cumsum(lengths)[:-1]
    return np.split(np.asarray(values, np.uint32), cuts)


def run_layout(device, *, parents, children, parent_of=None, k=None, expanded=1, collapsed_child=1,
               collapsed_parent=1, child_chunks=None, parent_chunks=None, with_heights=True):
    """Lay out on the GPU (data views, or vectors when chunk lengths are
    given); returns (heights, offsets) as flat arrays."""
    n = len(children)
    graph = new_graph(device)

    def per_child(name, values):
        if child_chunks is None:
            return graph.import_gpu_data(name, gpu_data(device, values))
        return graph.import_gpu_vector(name, gpu_vector(device, split(values, child_chunks)))

    if parent_chunks is None:
        pview = graph.import_gpu_data("parents", gpu_data(device, parents))
    else:
        pview = graph.import_gpu_vector("parents", gpu_vector(device, split(parents, parent_chunks)))
    if child_chunks is None:
        offsets = gpu_data(device, np.full(n + 3, SENTINEL, np.uint32))
        heights = gpu_data(device, np.full(n + 3, SENTINEL, np.uint32))
        o_view, h_view = graph.import_gpu_data("o", offsets), graph.import_gpu_data("h", heights)
    else:
        offsets = gpu_vector(device, split(np.full(n, SENTINEL), child_chunks))
        heights = gpu_vector(device, split(np.full(n, SENTINEL), child_chunks))
        o_view, h_view = graph.import_gpu_vector("o", offsets), graph.import_gpu_vector("h", heights)
    full = expanded if isinstance(expanded, int) else per_child("expanded", expanded)
    GPUHierarchyLayout(id="layout", parent_states=pview, child_states=per_child("children", children),
                       offsets=o_view, heights=h_view if with_heights else None, children_per_parent=k,
                       child_parents=None if parent_of is None else per_child("rows", parent_of),
                       expanded_child_height=full, collapsed_child_height=collapsed_child,
                       collapsed_parent_height=collapsed_parent).add_to_graph(graph)
    run(graph)
    got_h, got_o = read(device, heights), read(device, offsets)
    if child_chunks is None:
        assert (got_o[n:] == SENTINEL).all() and (got_h[n:] == SENTINEL).all(), "rows past the children changed"
        got_h, got_o = got_h[:n], got_o[:n]
    return got_h, got_o


def check(device, rng_seed, n, *, regular, view_heights, p_open=0.5, c_open=0.5, **kwargs):
    rng = np.random.default_rng(rng_seed)
    if regular:
        k = int(rng.integers(1, 9))
        parent_of = np.arange(n) // k
        parent_count = -(-n // k) + int(rng.integers(0, 3))
    else:
        k = None
        parent_of = runs_of(rng, n, rng.integers(1, 12))
        parent_count = int(parent_of[-1]) + 1 if n else int(rng.integers(0, 3))
    parents, children = states(rng, parent_count, p_open), states(rng, n, c_open)
    expanded = rng.integers(0, 9, n).astype(np.uint32) if view_heights else int(rng.integers(0, 9))
    heights, offsets = layout_oracle(parents, children, parent_of, expanded, 2, 3)
    got_h, got_o = run_layout(device, parents=parents, children=children, k=k,
                              parent_of=None if regular else parent_of, expanded=expanded, collapsed_child=2,
                              collapsed_parent=3, **kwargs)
    if kwargs.get("with_heights", True):
        np.testing.assert_array_equal(got_h, heights)
    else:
        assert (got_h == SENTINEL).all(), "no heights output was given: its buffer must stay untouched"
    np.testing.assert_array_equal(got_o, offsets)


SIZES = [0, 1, 5, LANES - 1, LANES, LANES + 1, TILE - 1, TILE, TILE + 1, 3 * TILE + 2]


@settings(max_examples=14, deadline=None)
@given(n=st.one_of(st.sampled_from(SIZES), st.integers(0, 2 * TILE)), regular=st.booleans(),
       view_heights=st.booleans(), seed=st.integers(0, 2**16))
def test_matches_numpy(device, n, regular, view_heights, seed):
    check(device, seed, n, regular=regular, view_heights=view_heights)


@settings(max_examples=10, deadline=None)
@given(child_chunks=st.lists(st.sampled_from([0, 1, 3, 17, LANES + 1, TILE + 1]), min_size=1, max_size=5),
       parent_cut=st.integers(0, 3), regular=st.booleans(), view_heights=st.booleans(), seed=st.integers(0, 2**16))
def test_vectors_match_packed(device, child_chunks, parent_cut, regular, view_heights, seed):
    """Children and parents chunked independently (empty chunks, a parent's
    run crossing child chunk boundaries, parents in several chunks) give the
    packed result."""
    n = sum(child_chunks)
    rng = np.random.default_rng(seed)
    if regular:
        k = int(rng.integers(1, 6))
        parent_count = -(-n // k)
    else:
        parent_of = runs_of(rng, n, 4)
        parent_count = int(parent_of[-1]) + 1 if n else 0
    cuts = sorted(rng.integers(0, parent_count + 1, parent_cut).tolist())
    parent_chunks = np.diff([0, *cuts, parent_count]).tolist()
    check(device, seed, n, regular=regular, view_heights=view_heights, child_chunks=child_chunks,
          parent_chunks=parent_chunks)


@pytest.mark.parametrize("regular", [True, False])
@pytest.mark.parametrize("state", ["all collapsed", "all expanded", "parents collapsed, children expanded"])
def test_uniform_states(device, regular, state):
    n = 2 * LANES + 7
    p_open, c_open = {"all collapsed": (0.0, 0.0), "all expanded": (1.0, 1.0),
                      "parents collapsed, children expanded": (0.0, 1.0)}[state]
    check(device, 5, n, regular=regular, view_heights=True, p_open=p_open, c_open=c_open)


def test_without_heights_output(device):
    check(device, 9, 3 * LANES + 1, regular=False, view_heights=False, with_heights=False)


def test_out_of_range_parent_rows_read_as_expanded(device):
    parents = np.array([0, 0], np.uint32)
    rows = np.array([0, 0, 1, 5, 5, 0xFFFFFFFF], np.uint32)
    children = np.array([1, 0, 1, 1, 0, 1], np.uint32)
    got_h, got_o = run_layout(device, parents=parents, children=children, parent_of=rows, expanded=7,
                              collapsed_child=2, collapsed_parent=3)
    assert got_h.tolist() == [3, 0, 3, 7, 2, 7]
    np.testing.assert_array_equal(got_o, np.cumsum(got_h) - got_h)
    got_h, _ = run_layout(device, parents=np.zeros(0, np.uint32), children=children, parent_of=rows, expanded=7,
                          collapsed_child=2, collapsed_parent=3)
    assert got_h.tolist() == [7, 2, 7, 7, 2, 7], "without parents every child keeps its own height"


def test_state_changes_are_buffer_writes(device, compiled_pipelines):
    """Parent states, child states and per-child heights rewritten between
    encodings of one compiled graph: new results, no new pipelines."""
    rng = np.random.default_rng(3)
    n, k = 5 * LANES + 3, 4
    ps, cs, full = states(rng, -(-n // k), 0.5), states(rng, n, 0.5), rng.integers(1, 6, n).astype(np.uint32)
    graph = new_graph(device)
    bufs = {name: gpu_data(device, v) for name, v in (("p", ps), ("c", cs), ("e", full))}
    offsets, heights = gpu_data(device, np.zeros(n)), gpu_data(device, np.zeros(n))
    GPUHierarchyLayout(id="l", parent_states=graph.import_gpu_data("p", bufs["p"]),
                       child_states=graph.import_gpu_data("c", bufs["c"]), offsets=graph.import_gpu_data("o", offsets),
                       heights=graph.import_gpu_data("h", heights), children_per_parent=k,
                       expanded_child_height=graph.import_gpu_data("e", bufs["e"])).add_to_graph(graph)
    compiled = run(graph)
    made = len(compiled_pipelines)
    for step in range(3):
        np.testing.assert_array_equal(read(device, offsets), layout_oracle(ps, cs, np.arange(n) // k, full, 1, 1)[1])
        ps, cs, full = states(rng, ps.size, 0.3 * step), states(rng, n, 0.5), rng.integers(0, 9, n).astype(np.uint32)
        for name, v in (("p", ps), ("c", cs), ("e", full)):
            device.queue.write_buffer(bufs[name].buffer, bufs[name].byte_offset, v.tobytes())
        submit_encodings(device, compiled, 1)
    assert len(compiled_pipelines) == made, "a state change must not compile anything"


def test_shared_buffer_chunks_keep_guard_words(device):
    """Output chunks sharing one buffer at uneven offsets: nothing written
    between or after them."""
    chunks = [5, 0, LANES + 3, 2]
    n = sum(chunks)
    rng = np.random.default_rng(8)
    cs, ps = states(rng, n, 0.5), states(rng, n // 2 + 1, 0.5)
    starts = [3, 9, 9, LANES + 13]
    graph = new_graph(device)
    out = shared_vector(device, [np.zeros(c) for c in chunks], starts, fill=SENTINEL)
    GPUHierarchyLayout(id="l", parent_states=graph.import_gpu_data("p", gpu_data(device, ps)),
                       child_states=graph.import_gpu_vector("c", gpu_vector(device, split(cs, chunks))),
                       offsets=graph.import_gpu_vector("o", out), children_per_parent=2).add_to_graph(graph)
    run(graph)
    np.testing.assert_array_equal(read(device, out), layout_oracle(ps, cs, np.arange(n) // 2, 1, 1, 1)[1])
    words = read(device, GPUData(out.chunks[0].buffer, format="uint32", length=out.chunks[0].buffer.size // 4))
    inside = np.zeros(words.size, bool)
    for s, c in zip(starts, chunks):
        inside[s:s + c] = True
    assert (words[~inside] == SENTINEL).all()


def test_zero_children_adds_no_nodes(device, graph):
    empty = graph.import_gpu_data("c", gpu_data(device, []))
    out = graph.import_gpu_data("o", gpu_data(device, []))
    p = graph.import_gpu_data("p", gpu_data(device, [1]))
    assert GPUHierarchyLayout(id="l", parent_states=p, child_states=empty, offsets=out,
                              children_per_parent=3).add_to_graph(graph) == []
    vec = graph.import_gpu_vector("cv", gpu_vector(device, [[], []]))
    outv = graph.import_gpu_vector("ov", gpu_vector(device, [[], []]))
    assert GPUHierarchyLayout(id="l2", parent_states=p, child_states=vec, offsets=outv,
                              child_parents=graph.import_gpu_vector("r", gpu_vector(device, [[], []]))
                              ).add_to_graph(graph) == []


def test_errors(device, graph):
    c = graph.import_gpu_data("c", gpu_data(device, np.ones(10)))
    p = graph.import_gpu_data("p", gpu_data(device, np.ones(5)))
    o = graph.import_gpu_data("o", gpu_data(device, np.ones(10)))
    short = graph.import_gpu_data("short", gpu_data(device, np.ones(9)))
    f = graph.import_gpu_data("f", gpu_data(device, np.ones(10), np.float32))
    vec = graph.import_gpu_vector("v", gpu_vector(device, [np.ones(4), np.ones(6)]))
    vec2 = graph.import_gpu_vector("v2", gpu_vector(device, [np.ones(5), np.ones(5)]))
    E = gpuviz.GraphValidationError

    def layout(**kw):
        args = dict(id="l", parent_states=p, child_states=c, offsets=o, children_per_parent=2)
        args.update(kw)
        return GPUHierarchyLayout(**args).add_to_graph(graph)

    with pytest.raises(E, match='GPUHierarchyLayout "l" needs exactly one of children_per_parent and child_parents'):
        layout(child_parents=c)
    with pytest.raises(E, match="got neither"):
        layout(children_per_parent=None)
    with pytest.raises(E, match=r"children_per_parent must be in \[1, 4294967295\] \(got 0\)"):
        layout(children_per_parent=0)
    with pytest.raises(gpuviz.GraphTypeError, match="collapsed_child_height must be an int"):
        layout(collapsed_child_height=1.5)
    with pytest.raises(gpuviz.GraphTypeError, match="expanded_child_height must be an int or a uint32 "
                                                   "GraphDataView / GraphVectorView \\(got list\\)"):
        layout(expanded_child_height=[1, 2])
    with pytest.raises(E, match=r"expanded_child_height must be in \[0, 4294967295\] \(got -1\)"):
        layout(expanded_child_height=-1)
    with pytest.raises(E, match='"l" child_states must be uint32 \\(got float32\\)'):
        layout(child_states=f)
    with pytest.raises(E, match="offsets is shorter than child_states \\(needs 10 rows, got 9\\)"):
        layout(offsets=short)
    with pytest.raises(E, match="heights is shorter than child_states"):
        layout(heights=short)
    with pytest.raises(E, match="expanded_child_height has fewer rows than child_states"):
        layout(expanded_child_height=short)
    with pytest.raises(E, match="parent_states is shorter than needed \\(10 children at 3 per parent need 4 rows, "
                                "got 3\\)"):
        layout(parent_states=graph.import_gpu_data("p3", gpu_data(device, np.ones(3))), children_per_parent=3)
    with pytest.raises(E, match="offsets is a vector view but child_states is a data view"):
        layout(offsets=vec)
    with pytest.raises(E, match=r"offsets chunk lengths \[5, 5\] do not match child_states chunk lengths \[4, 6\]"):
        layout(child_states=vec, offsets=vec2)
    with pytest.raises(E, match="child_parents chunk lengths"):
        layout(child_states=vec, offsets=graph.import_gpu_vector("v3", gpu_vector(device, [np.ones(4), np.ones(6)])),
               children_per_parent=None, child_parents=vec2)
    with pytest.raises(E, match='offsets and child_states share buffer "c"'):
        layout(offsets=c)
    with pytest.raises(E, match="offsets and heights overlap"):
        layout(heights=o)


def test_output_sharing_parent_buffer(device, graph):
    """An output placed in the parent states' buffer (other bytes) is refused."""
    words = graph.import_gpu_data("w", gpu_data(device, np.ones(20)))
    p = graph.create_data_view(words.handle, format="uint32", length=5)
    h = graph.create_data_view(words.handle, format="uint32", length=10, byte_offset=40)
    c = graph.import_gpu_data("c", gpu_data(device, np.ones(10)))
    o = graph.import_gpu_data("o", gpu_data(device, np.ones(10)))
    with pytest.raises(gpuviz.GraphValidationError, match='heights and parent_states share buffer "w"'):
        GPUHierarchyLayout(id="l", parent_states=p, child_states=c, offsets=o, heights=h,
                           children_per_parent=2).add_to_graph(graph)


@pytest.mark.parametrize("regular", [True, False])
def test_multi_chunk_parents(device, regular):
    """Parents in several chunks: children_per_parent splits the child
    chunks where the parent chunks' child ranges meet (pieces starting
    mid-vec4, no copy node); child_parents copies the parent chunks into one
    transient first (one extra node). Both give the packed result."""
    child_chunks, parent_chunks = [7, 0, 1030, 5], [1, 0, 201, 146]
    n, k = sum(child_chunks), 3
    rng = np.random.default_rng(21)
    ps, cs = states(rng, sum(parent_chunks), 0.5), states(rng, n, 0.6)
    parent_of = np.arange(n) // k if regular else np.sort(rng.integers(0, ps.size, n))
    graph = new_graph(device)
    out = gpu_vector(device, split(np.zeros(n), child_chunks))
    layout = GPUHierarchyLayout(
        id="l", parent_states=graph.import_gpu_vector("p", gpu_vector(device, split(ps, parent_chunks))),
        child_states=graph.import_gpu_vector("c", gpu_vector(device, split(cs, child_chunks))),
        offsets=graph.import_gpu_vector("o", out), children_per_parent=k if regular else None,
        child_parents=None if regular else graph.import_gpu_vector("r", gpu_vector(device,
                                                                                   split(parent_of, child_chunks))),
        expanded_child_height=5, collapsed_parent_height=2)
    ids = layout.add_to_graph(graph)
    assert ids[:2] == (["l-heights", "l-offsets-scan-tiles"] if regular else ["l-parent-states", "l-heights"])
    run(graph)
    np.testing.assert_array_equal(read(device, out), layout_oracle(ps, cs, parent_of, 5, 1, 2)[1])


def test_unpacked_views_are_refused(device, graph):
    words = graph.import_gpu_data("w", gpu_data(device, np.ones(20)))
    strided = graph.create_data_view(words.handle, format="uint32", length=10, byte_stride=8)
    c = graph.import_gpu_data("c", gpu_data(device, np.ones(10)))
    o = graph.import_gpu_data("o", gpu_data(device, np.ones(10)))
    for role in ("parent_states", "child_states", "offsets"):
        args = dict(id="l", parent_states=c if role != "parent_states" else strided, child_states=c, offsets=o,
                    children_per_parent=1)
        args[role] = strided
        with pytest.raises(gpuviz.ViewRangeError, match=f'GPUHierarchyLayout "l" {role} must be packed'):
            GPUHierarchyLayout(**args).add_to_graph(graph)
