"""GPUScan against numpy: modes, segments, vectors, tile boundaries, the
portable path, the look-back fallback and hang safety."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuviz
from gpuviz.algorithms import GPUScan, ReductionTuning, ScanTuning
from gpuviz.tables import GPUData

from .conftest import (TILE, gpu_data, gpu_vector, new_graph, read, run, scan_oracle, shared_vector,
                       submit_encodings, write_chunks)

BOUNDARY_LENGTHS = [0, 1, 2, 3, 4, 5, TILE - 1, TILE, TILE + 1, 3 * TILE + 7]


def scan_on_gpu(device, x, *, flags=None, mode="exclusive", tuning=None, extra_output=0):
    graph = new_graph(device)
    src = gpu_data(device, x)
    dst = gpu_data(device, np.full(len(x) + extra_output, 0xDEADBEEF, np.uint32))
    fl = None if flags is None else graph.import_gpu_data("flags", gpu_data(device, flags))
    ids = GPUScan(id="s", input=graph.import_gpu_data("x", src), output=graph.import_gpu_data("y", dst), mode=mode,
                  segment_flags=fl, tuning=tuning).add_to_graph(graph)
    run(graph)
    return read(device, dst), ids


@pytest.mark.parametrize("mode, flags, expected", [
    ("exclusive", None, [0, 3, 4, 8]),
    ("inclusive", None, [3, 4, 8, 10]),
    ("exclusive", [1, 0, 1, 0], [0, 3, 0, 4]),
    ("inclusive", [1, 0, 1, 0], [3, 4, 4, 6]),
])
def test_reference_examples(device, mode, flags, expected):
    got, ids = scan_on_gpu(device, [3, 1, 4, 2], flags=flags, mode=mode)
    assert got.tolist() == expected
    assert ids == ["s-scan-tiles"]


@settings(max_examples=14, deadline=None)
@given(n=st.one_of(st.sampled_from(BOUNDARY_LENGTHS), st.integers(0, 4 * TILE)),
       mode=st.sampled_from(["exclusive", "inclusive"]), segmented=st.booleans(), wide=st.booleans(),
       density=st.sampled_from([0.0, 0.001, 0.3]), seed=st.integers(0, 2**16))
def test_matches_numpy(device, n, mode, segmented, wide, density, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32 if wide else 4, n, dtype=np.uint64).astype(np.uint32)
    flags = (rng.random(n) < density).astype(np.uint32) * rng.integers(1, 7, n).astype(np.uint32) if segmented else None
    got, _ = scan_on_gpu(device, x, flags=flags, mode=mode, extra_output=3)
    np.testing.assert_array_equal(got[:n], scan_oracle(x, flags, mode == "inclusive"))
    assert (got[n:] == 0xDEADBEEF).all(), "rows past the input must stay untouched"


def test_wraps_modulo_2_32(device):
    x = np.full(3 * TILE + 4, 0xFFFFFFFF, np.uint32)
    got, _ = scan_on_gpu(device, x, mode="inclusive")
    np.testing.assert_array_equal(got, scan_oracle(x, inclusive=True))


@settings(max_examples=8, deadline=None)
@given(chunks=st.lists(st.one_of(st.just(0), st.sampled_from([1, 3, TILE - 1, TILE + 2]), st.integers(0, 2 * TILE)),
                       min_size=1, max_size=5),
       mode=st.sampled_from(["exclusive", "inclusive"]), segmented=st.booleans(), flag_chunk_starts=st.booleans(),
       seed=st.integers(0, 2**16))
def test_vectors_are_one_sequence(device, chunks, mode, segmented, flag_chunk_starts, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.integers(0, 1000, n).astype(np.uint32) for n in chunks]
    fs = [(rng.random(n) < 0.0005).astype(np.uint32) for n in chunks]
    for f in fs:  # segments cross chunk boundaries unless a chunk's first row is flagged
        if f.size:
            f[0] = int(flag_chunk_starts)
    graph = new_graph(device)
    # output chunks share one buffer, three guard words before each
    starts = [3 * (k + 1) + sum(chunks[:k]) for k in range(len(chunks))]
    yv = shared_vector(device, [np.zeros(n) for n in chunks], starts, fill=0xDEADBEEF)
    xv, fv = gpu_vector(device, xs), gpu_vector(device, fs)
    GPUScan(id="v", input=graph.import_gpu_vector("x", xv), output=graph.import_gpu_vector("y", yv), mode=mode,
            segment_flags=graph.import_gpu_vector("f", fv) if segmented else None).add_to_graph(graph)
    run(graph)
    flat_f = np.concatenate(fs) if segmented else None
    expected = scan_oracle(np.concatenate(xs), flat_f, mode == "inclusive")
    words = read(device, GPUData(yv.chunks[0].buffer, format="uint32", length=yv.chunks[0].buffer.size // 4))
    inside = np.zeros(words.size, bool)
    for start, n in zip(starts, chunks):
        inside[start:start + n] = True
    np.testing.assert_array_equal(words[inside], expected)
    assert (words[~inside] == 0xDEADBEEF).all(), "words between and after the chunks must stay untouched"


def test_segment_flag_on_later_chunk_start_restarts(device):
    graph = new_graph(device)
    xv = gpu_vector(device, [[1, 1], [], [1, 1], [1]])
    fv = gpu_vector(device, [[0, 0], [], [5, 0], [0]])
    yv = gpu_vector(device, [[0, 0], [], [0, 0], [0]])
    GPUScan(id="v", input=graph.import_gpu_vector("x", xv), output=graph.import_gpu_vector("y", yv), mode="inclusive",
            segment_flags=graph.import_gpu_vector("f", fv)).add_to_graph(graph)
    run(graph)
    assert read(device, yv).tolist() == [1, 2, 1, 2, 3]


@pytest.mark.parametrize("segmented", [False, True])
@pytest.mark.parametrize("subgroups, group_lookback, early", [(None, False, False), (None, True, False),
                                                              (False, False, False), (None, False, True)])
def test_fallback_reduces_unpublished_predecessors(device, segmented, subgroups, group_lookback, early):
    """spin_limit=0: every unpublished predecessor is reduced from its input by
    the waiting tile, the path that keeps a starved look-back from hanging
    (for the subgroup walk, the workgroup walk and the portable path)."""
    rng = np.random.default_rng(7)
    n = 9 * TILE + 11
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    flags = (rng.random(n) < 0.0002).astype(np.uint32) if segmented else None
    tuning = ScanTuning(spin_limit=0, subgroups=subgroups, group_lookback=group_lookback, early_publish=early)
    got, _ = scan_on_gpu(device, x, flags=flags, tuning=tuning)
    np.testing.assert_array_equal(got, scan_oracle(x, flags))


@pytest.mark.parametrize("tuning", [ScanTuning(), ScanTuning(subgroups=False), ScanTuning(clear_pass=True),
                                    ScanTuning(group_lookback=True), ScanTuning(group_lookback=True, spin_limit=0),
                                    ScanTuning(early_publish=True, rows=16), ScanTuning(early_publish=True, subgroups=False)],
                         ids=["default", "portable", "clear-pass", "subgroup-walk", "subgroup-walk-fallback",
                              "early-publish-rows-16", "early-publish-portable"])
def test_repeated_encodings_reuse_the_tile_state(device, tuning):
    """No clear pass: the state words of one encoding must read as unpublished
    in the next (parity tags), in separate submits and twice in one encoder,
    across the chunk dispatches of a vector, with changing data."""
    rng = np.random.default_rng(11)
    lengths = [TILE + 3, 0, 2 * TILE - 1, 5]
    chunks = [np.zeros(k, np.uint32) for k in lengths]
    graph = new_graph(device)
    src = gpu_vector(device, chunks)
    dst = gpu_vector(device, chunks)
    flags = gpu_vector(device, chunks)
    GPUScan(id="r", input=graph.import_gpu_vector("x", src), output=graph.import_gpu_vector("y", dst),
            segment_flags=graph.import_gpu_vector("f", flags), tuning=tuning).add_to_graph(graph)
    compiled = graph.compile()
    for per_submit in (1, 1, 2, 1, 3):
        xs = [rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(np.uint32) for k in lengths]
        fs = [(rng.random(k) < 0.0005).astype(np.uint32) for k in lengths]
        write_chunks(device, src, xs)
        write_chunks(device, flags, fs)
        submit_encodings(device, compiled, per_submit)
        got = np.concatenate([read(device, c) for c in dst.chunks])
        np.testing.assert_array_equal(got, scan_oracle(np.concatenate(xs), np.concatenate(fs)))


@pytest.mark.parametrize("mode, segmented", [("exclusive", False), ("inclusive", True)])
def test_portable_path(device, mode, segmented):
    rng = np.random.default_rng(3)
    for n in (1, TILE - 1, 2 * TILE + 5):
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        flags = (rng.random(n) < 0.001).astype(np.uint32) if segmented else None
        got, _ = scan_on_gpu(device, x, flags=flags, mode=mode, tuning=ScanTuning(subgroups=False))
        np.testing.assert_array_equal(got, scan_oracle(x, flags, mode == "inclusive"))


def test_several_hundred_tiles_complete(device):
    """Hang safety on the software driver, whose workgroups run almost serially."""
    n = 300 * TILE + 123
    x = np.ones(n, np.uint32)
    got, _ = scan_on_gpu(device, x)
    np.testing.assert_array_equal(got, np.arange(n, dtype=np.uint32))


def test_more_workgroups_than_one_dimension_allows():
    """A device limited to 3 workgroups per dimension forces the 2-D grid that
    real devices use past 65535 tiles."""
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    features = [f for f in ("subgroup",) if f in adapter.features]
    device = adapter.request_device_sync(required_features=features,
                                         required_limits={"max-compute-workgroups-per-dimension": 3})
    x = np.arange(8 * TILE + 3, dtype=np.uint32) % 5
    flags = (np.arange(x.size) % 1000 == 0).astype(np.uint32)
    got, _ = scan_on_gpu(device, x, flags=flags, mode="inclusive")
    np.testing.assert_array_equal(got, scan_oracle(x, flags, True))


def test_views_at_offsets_and_shared_buffers(device):
    """Unaligned views fall back to scalar access; input and output may be
    disjoint views of one buffer."""
    rng = np.random.default_rng(5)
    n = TILE + 9
    x = rng.integers(0, 100, n).astype(np.uint32)
    backing = gpu_data(device, np.concatenate([np.zeros(3, np.uint32), x, np.zeros(n + 2, np.uint32)]))
    graph = new_graph(device)
    handle = graph.import_buffer(id="b", byte_length=backing.buffer.size, usage=backing.buffer.usage,
                                 buffer=backing.buffer)
    src = graph.create_data_view(handle, format="uint32", length=n, byte_offset=12)
    dst = graph.create_data_view(handle, format="uint32", length=n, byte_offset=4 * (n + 4))
    GPUScan(id="o", input=src, output=dst).add_to_graph(graph)
    run(graph)
    out = read(device, backing)
    np.testing.assert_array_equal(out[3:3 + n], x)
    np.testing.assert_array_equal(out[n + 4:2 * n + 4], scan_oracle(x))
    assert out[n + 3] == 0 and out[2 * n + 4] == 0


def test_chunks_at_different_offsets_share_one_pipeline(device, compiled_pipelines):
    """View offsets are uniforms: vector chunks that differ only in where they
    start inside their bound range compile ONE pipeline. Structure is what
    splits pipelines: chunks at the very start of their range (offset folded
    to 0) are one structure, chunks read as scalars instead of vec4 words
    another."""
    rng = np.random.default_rng(13)
    lengths = [TILE + 4, 8, 2 * TILE, 12]  # whole vec4 words
    xs = [rng.integers(0, 1000, n).astype(np.uint32) for n in lengths]
    per_range = int(device.limits["min-storage-buffer-offset-alignment"]) // 4

    def placed(offset, gap):
        """Chunk starts at element ``offset`` of aligned ranges, ``gap`` apart."""
        starts, at = [], 0
        for n in lengths:
            starts.append(-(-at // per_range) * per_range + offset)
            at = starts[-1] + n + gap
        return starts

    def scan(in_starts, out_starts):
        compiled_pipelines.clear()
        graph = new_graph(device)
        yv = shared_vector(device, [np.zeros(n) for n in lengths], out_starts)
        GPUScan(id="p", input=graph.import_gpu_vector("x", shared_vector(device, xs, in_starts)),
                output=graph.import_gpu_vector("y", yv)).add_to_graph(graph)
        run(graph)
        np.testing.assert_array_equal(np.concatenate([read(device, c) for c in yv.chunks]),
                                      scan_oracle(np.concatenate(xs)))
        return {id(p) for p in compiled_pipelines}

    at_start = scan(placed(0, 3), placed(0, 40))
    assert len(at_start) == 1
    if per_range >= 8:  # a vec4 view can start mid-range: element offset 4
        inside = scan(placed(4, 40), placed(4, 3))
        assert len(inside) == 1 and inside != at_start
    scalar_first = placed(0, 3)
    scalar_first[0] += 1
    assert len(scan(scalar_first, placed(0, 40))) == 2


def test_zero_length_adds_no_nodes(device, graph):
    x = graph.import_gpu_data("x", gpu_data(device, []))
    y = graph.import_gpu_data("y", gpu_data(device, []))
    assert GPUScan(id="z", input=x, output=y).add_to_graph(graph) == []
    assert graph.nodes == ()


def test_tile_state_needs_no_clear_pass(device, graph):
    """By default the tile state is node-owned (no transient, no clear node);
    the clear-pass tuning keeps it a transient cleared by its own node."""
    x = graph.import_gpu_data("x", gpu_data(device, np.ones(3 * TILE)))
    y = graph.import_gpu_data("y", gpu_data(device, np.ones(3 * TILE)))
    assert GPUScan(id="t", input=x, output=y).add_to_graph(graph) == ["t-scan-tiles"]
    assert "t-scan-tile-state" not in graph.buffers
    ids = GPUScan(id="c", input=x, output=y, tuning=ScanTuning(clear_pass=True)).add_to_graph(graph)
    assert ids == ["c-scan-clear", "c-scan-tiles"]
    state = graph.buffers["c-scan-tile-state"]
    assert state.lifetime == "transient" and state.byte_length == 4 * (4 + 4 * 3)


def test_errors(device, graph):
    x = graph.import_gpu_data("x", gpu_data(device, np.ones(1000)))
    short = graph.import_gpu_data("short", gpu_data(device, np.ones(999)))
    floats = graph.import_gpu_data("floats", gpu_data(device, np.ones(1000), np.float32))
    y = graph.import_gpu_data("y", gpu_data(device, np.ones(1000)))
    with pytest.raises(gpuviz.GraphValidationError, match=r'GPUScan "e" output is shorter than input '
                                                          r"\(needs 1000 rows, got 999\)"):
        GPUScan(id="e", input=x, output=short).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match='GPUScan "e" input must be uint32 \\(got float32\\)'):
        GPUScan(id="e", input=floats, output=y).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="segment_flags share buffer"):
        GPUScan(id="e", input=x, output=y, segment_flags=y).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="in-place"):
        GPUScan(id="e", input=x, output=x).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match='mode must be "exclusive" or "inclusive"'):
        GPUScan(id="e", input=x, output=y, mode="sum")
    vec = graph.import_gpu_vector("vec", gpu_vector(device, [np.ones(500), np.ones(500)]))
    other = graph.import_gpu_vector("other", gpu_vector(device, [np.ones(400), np.ones(600)]))
    with pytest.raises(gpuviz.GraphValidationError, match=r"chunk lengths \[400, 600\] do not match input chunk "
                                                          r"lengths \[500, 500\]"):
        GPUScan(id="e", input=vec, output=other).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphValidationError, match="is a data view but input is a vector view"):
        GPUScan(id="e", input=vec, output=y).add_to_graph(graph)
    handle = graph.import_buffer(id="strided", byte_length=8000, usage=y.handle.usage,
                                 buffer=gpu_data(device, np.ones(2000)).buffer)
    strided = graph.create_data_view(handle, format="uint32", length=1000, byte_stride=8)
    with pytest.raises(gpuviz.ViewRangeError, match="must be packed"):
        GPUScan(id="e", input=strided, output=y).add_to_graph(graph)
    with pytest.raises(gpuviz.GraphTypeError,
                       match=r'GPUScan "e" tuning must be a ScanTuning \(got ReductionTuning\)'):
        GPUScan(id="e", input=x, output=y, tuning=ReductionTuning())
    assert isinstance(gpuviz.GraphValidationError("x"), ValueError)


def test_a_view_longer_than_one_storage_binding_is_refused_at_add_to_graph(device, monkeypatch):
    """A data view the kernel would bind past the device's storage-binding
    limit (patched to 16 KB here) is refused when the scan is added, naming
    the limit; the same rows as a vector of 8 KB chunks are accepted and
    scanned right."""
    limits = type(device).limits
    small = {**limits.fget(device), "max-storage-buffer-binding-size": 16384}
    monkeypatch.setattr(type(device), "limits", property(lambda self: small if self is device else limits.fget(self)))
    x = np.arange(8192, dtype=np.uint32) % 7
    graph = new_graph(device)
    src, dst = graph.import_gpu_data("x", gpu_data(device, x)), graph.import_gpu_data("y", gpu_data(device, x))
    with pytest.raises(gpuviz.GraphValidationError,
                       match=r'GPUScan "big" would bind 32768 bytes of its scanned rows \(chunk 0\) in buffer "x" .*'
                             r"over the device's max-storage-buffer-binding-size of 16384 bytes"):
        GPUScan(id="big", input=src, output=dst).add_to_graph(graph)
    assert graph.nodes == ()
    chunks = np.split(x, 4)
    graph = new_graph(device)
    out = gpu_vector(device, [np.zeros(len(c), np.uint32) for c in chunks])
    GPUScan(id="chunked", input=graph.import_gpu_vector("x", gpu_vector(device, chunks)),
            output=graph.import_gpu_vector("y", out)).add_to_graph(graph)
    run(graph)
    np.testing.assert_array_equal(np.concatenate([read(device, c) for c in out.chunks]), scan_oracle(x))
