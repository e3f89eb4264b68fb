"""GPUVisibilityWorkflow against a numpy oracle: every predicate alone and
all together, tile boundaries, vectors with empty and uneven chunks,
non-finite inputs, spheres straddling planes, inverted windows, the count
written into a DrawCommandBuffer word, parameter changes on a compiled
graph, and the named errors.

Values are small dyadic fractions, so float32 sums and products are exact on
any GPU (FMA or not) and the oracle may compute in float64.

Cost on the software driver is shader compilation (each tile size, tuning,
predicate set and output shape is its own kernel; the 8K and 16K tiles' are
the largest), so by default the suite keeps one case of each code path and
GPUVIZ_FULL_TESTS=1 runs the full cross product as well (skipped otherwise,
named in the skip reason): random examples at the 8K and 16K tiles (4 + the
tile boundaries instead of 14), nine-chunk vector outputs (the unrolled
chunk search's every step) in separate and shared buffers at the 8K and 16K
tiles (every tile keeps it as one data view, and three-chunk outputs in both
kinds), and the 8K / 16K tunings whose paths smaller tiles cover by
default: the checked loop alone, one-quad and 8-quad batches, two tiles
per workgroup (late, early and portable: by default at 2K tiles).
"""

import os

import numpy as np
import pytest
import wgpu
from hypothesis import HealthCheck, example, given, settings, strategies as st

from gpuviz.errors import GraphValidationError, ViewRangeError
from gpuviz.graph import GPUCommandGraph
from gpuviz.oracles.workflows import visibility as oracle
from gpuviz.render.draw_commands import DrawCommandBuffer
from gpuviz.tables import GPUData, GPUVector, read_array
from gpuviz.workflows.visibility import TILE_ROWS, VISIBILITY_TILE, GPUVisibilityWorkflow

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
SENTINEL = 0xDEADBEEF
PREDICATES = ("masks", "spheres", "intervals", "lod")
SPECIALS = np.array([np.nan, np.inf, -np.inf], np.float32)
FULL = os.environ.get("GPUVIZ_FULL_TESTS") == "1"
full_only = pytest.mark.skipif(not FULL, reason="a large-tile or cross-product case: GPUVIZ_FULL_TESTS=1 runs it "
                                                "(module docstring)")
LARGE_TILES = (8192, 16384)


# --------------------------------------------------------------- test data
def quantized(rng, shape, lo, hi, step):
    return (rng.integers(round(lo / step), round(hi / step) + 1, shape) * step).astype(np.float32)


def sprinkle(rng, a, rate):
    """Non-finite values at ``rate`` of a float array's entries."""
    a = a.copy()
    hit = rng.random(a.shape) < rate
    a[hit] = rng.choice(SPECIALS, int(hit.sum()))
    return a


def make_rows(rng, n, which, special=0.0):
    rows = {}
    if "masks" in which:
        rows["masks"] = [(rng.random(n) < 0.7).astype(np.uint32) * rng.integers(1, 5, n).astype(np.uint32),
                         (rng.random(n) < 0.8).astype(np.uint32)]
    if "spheres" in which:
        s = np.concatenate([quantized(rng, (n, 3), -6, 6, 0.125), quantized(rng, (n, 1), -0.5, 3, 0.125)], 1)
        rows["spheres"] = sprinkle(rng, s, special)
    if "intervals" in which:
        start = quantized(rng, n, 0, 100, 0.25)
        rows["intervals"] = sprinkle(rng, np.stack([start, start + quantized(rng, n, 0, 20, 0.25)], 1), special)
    if "lod" in which:
        rows["lod"] = sprinkle(rng, quantized(rng, n, 0, 10, 0.125), special)
    return rows


def box_planes(half=(4.0, 3.0, 5.0), tilt=False):
    """Six inward planes of a box (|x| <= hx...), one tilted by a dyadic normal."""
    hx, hy, hz = half
    p = np.array([[1, 0, 0, hx], [-1, 0, 0, hx], [0, 1, 0, hy], [0, -1, 0, hy], [0, 0, 1, hz], [0, 0, -1, hz]],
                 np.float32)
    if tilt:
        p[0] = [0.5, 0.5, 0, 2.5]
    return p


def params(which, *, window=(20.0, 60.0, 2.5, 0.0), lod_range=(2.0, 7.5), tilt=True):
    out = {}
    if "spheres" in which:
        out["planes"] = box_planes(tilt=tilt)
    if "intervals" in which:
        out["window"] = np.array([window], np.float32)
    if "lod" in which:
        out["lod_range"] = np.array([lod_range], np.float32)
    return out


# ---------------------------------------------------------------- GPU runs
def upload(device, a):
    return GPUData.from_numpy(device, np.asarray(a), USAGE)


def upload_vector(device, arrays):
    return GPUVector.from_numpy(device, arrays, USAGE)


def split(a, chunks):
    edges = np.cumsum([0, *chunks])
    return [a[edges[k]:edges[k + 1]] for k in range(len(chunks))]


def run_workflow(device, n, rows, prm, *, chunks=None, source_ids=None, output="data", mask_output=True,
                 length=None, spare=5, tuning=None, workflow_class=GPUVisibilityWorkflow):
    """Build, compile and run one workflow; returns (compiled, ids, count,
    mask, buffers) with ids including ``spare`` words past the rows."""
    graph = GPUCommandGraph(device, id="visibility")

    def per_row(name, a):
        if chunks is None:
            return graph.import_gpu_data(name, upload(device, a))
        return graph.import_gpu_vector(name, upload_vector(device, split(a, chunks)))

    kwargs = {}
    for name, value in rows.items():
        if name == "masks":
            kwargs[name] = [per_row(f"mask{k}", m) for k, m in enumerate(value)]
        else:
            kwargs[name] = per_row(name, value)
    if source_ids is not None:
        kwargs["source_ids"] = per_row("source-ids", source_ids)
    for name, value in prm.items():
        kwargs[name] = graph.import_gpu_data(name, upload(device, value))
    buffers = {"count": upload(device, np.full(3, SENTINEL, np.uint32))}
    count = graph.create_data_view(graph.import_gpu_data("count", buffers["count"]).handle, format="uint32",
                                   length=1, byte_offset=4)
    if output == "data":
        buffers["ids"] = upload(device, np.full(n + spare, SENTINEL, np.uint32))
        out = graph.create_data_view(graph.import_gpu_data("ids", buffers["ids"]).handle, format="uint32", length=n)
    else:  # a vector with the inputs' chunks, "separate" buffers or one "shared" buffer with guard words
        arrays = [np.full(c, SENTINEL, np.uint32) for c in chunks]
        if output == "separate":
            buffers["ids"] = upload_vector(device, arrays)
        else:
            backing = upload(device, np.full(n + 3 * len(chunks) + spare, SENTINEL, np.uint32))
            starts = [3 * (k + 1) + sum(chunks[:k]) for k in range(len(chunks))]
            buffers["ids"] = GPUVector([GPUData(backing.buffer, format="uint32", length=c, byte_offset=4 * s)
                                        for s, c in zip(starts, chunks)], format="uint32")
            buffers["backing"] = backing
        out = graph.import_gpu_vector("ids", buffers["ids"])
    if mask_output:
        if chunks is None:
            buffers["mask"] = upload(device, np.full(n, SENTINEL, np.uint32))
            kwargs["mask_output"] = graph.import_gpu_data("mask", buffers["mask"])
        else:
            buffers["mask"] = upload_vector(device, [np.full(c, SENTINEL, np.uint32) for c in chunks])
            kwargs["mask_output"] = graph.import_gpu_vector("mask", buffers["mask"])
    workflow = workflow_class(id="vis", output=out, count=count, length=length, **kwargs)
    for name, value in (tuning or {}).items():
        setattr(workflow, name, value)
    workflow.add_to_graph(graph)
    compiled = graph.compile()
    submit(device, compiled)
    return compiled, buffers


def submit(device, compiled):
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def check(device, buffers, n, want_ids, want_mask):
    counts = read_array(device, buffers["count"])
    assert counts.tolist() == [SENTINEL, want_ids.size, SENTINEL]
    ids = read_array(device, buffers["ids"])
    np.testing.assert_array_equal(ids[:want_ids.size], want_ids)
    assert (ids[want_ids.size:] == SENTINEL).all(), "rows past the count stay untouched"
    if "mask" in buffers:
        np.testing.assert_array_equal(read_array(device, buffers["mask"]), want_mask)
    if "backing" in buffers:
        words = read_array(device, buffers["backing"])
        inside = np.zeros(words.size, bool)
        for chunk in buffers["ids"].chunks:
            inside[chunk.byte_offset // 4:chunk.byte_offset // 4 + chunk.length] = True
        assert (words[~inside] == SENTINEL).all(), "guard words between output chunks stay untouched"


def oracle_of(n, rows, prm, source_ids=None):
    return oracle(n, **rows, **prm, source_ids=source_ids)


# ------------------------------------------------------------------- tests
@pytest.fixture(params=TILE_ROWS, ids=lambda t: f"tile{t}")
def tile(request, monkeypatch):
    """Each tile size the shader is written for, set as the workflows' tile_rows."""
    monkeypatch.setattr(GPUVisibilityWorkflow, "tile_rows", request.param)
    return request.param


def rows_of(tile, spec):
    """Row counts relative to the tile: an int as it is, ``(k, d)`` as ``k * tile + d``."""
    return [v[0] * tile + v[1] if isinstance(v, tuple) else v for v in spec]


MATCHES = dict(at=st.one_of(st.sampled_from([(0, 0), (0, 1), (0, 5), (1, -1), (1, 0), (1, 1), (3, 2)]),
                            st.tuples(st.just(0), st.integers(0, 3 * max(TILE_ROWS)))),
               which=st.sets(st.sampled_from(PREDICATES), min_size=1), special=st.sampled_from([0.0, 0.05]),
               with_source=st.booleans(), seed=st.integers(0, 2**16))


@pytest.mark.parametrize("tile", [t for t in TILE_ROWS if t not in LARGE_TILES], indirect=True,
                         ids=lambda t: f"tile{t}")
@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**MATCHES)
def test_matches_numpy(device, tile, at, which, special, with_source, seed):
    """0, 1, tile ± 1, many tiles, any count up to three tiles (``at``: (tiles, rows))."""
    matches_numpy(device, tile, at, which, special, with_source, seed)


@pytest.mark.parametrize("large", LARGE_TILES, ids=lambda t: f"tile{t}")
@settings(max_examples=14 if FULL else 4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**MATCHES)
@example(at=(0, 0), which=set(PREDICATES), special=0.05, with_source=True, seed=1)
@example(at=(0, 1), which=set(PREDICATES), special=0.05, with_source=True, seed=2)
@example(at=(1, -1), which=set(PREDICATES), special=0.05, with_source=True, seed=3)
@example(at=(1, 0), which=set(PREDICATES), special=0.05, with_source=True, seed=4)
@example(at=(1, 1), which=set(PREDICATES), special=0.05, with_source=True, seed=5)
@example(at=(3, 2), which=set(PREDICATES), special=0.05, with_source=True, seed=6)
def test_matches_numpy_large_tiles(device, monkeypatch, large, at, which, special, with_source, seed):
    """As above at the 8K and 16K tiles: 0, 1, tile ± 1 and three tiles + 2
    (one kernel: every predicate, source IDs), then 4 random examples (14
    with GPUVIZ_FULL_TESTS=1)."""
    monkeypatch.setattr(GPUVisibilityWorkflow, "tile_rows", large)
    matches_numpy(device, large, at, which, special, with_source, seed)


def matches_numpy(device, tile, at, which, special, with_source, seed):
    n = at[0] * tile + at[1] % (3 * tile + 1)
    rng = np.random.default_rng(seed)
    rows = make_rows(rng, n, which, special)
    prm = params(which)
    source = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) if with_source else None
    _, buffers = run_workflow(device, n, rows, prm, source_ids=source)
    check(device, buffers, n, *oracle_of(n, rows, prm, source))


@pytest.mark.parametrize("predicate", PREDICATES)
def test_each_predicate_alone(device, tile, predicate):
    rng = np.random.default_rng(PREDICATES.index(predicate))
    n = 2 * tile + 37
    rows, prm = make_rows(rng, n, {predicate}), params({predicate})
    _, buffers = run_workflow(device, n, rows, prm)
    ids, mask = oracle_of(n, rows, prm)
    assert 0 < ids.size < n, "the data must keep some rows and cull others"
    check(device, buffers, n, ids, mask)


def test_all_predicates_together_with_non_finite_inputs(device, tile):
    rng = np.random.default_rng(3)
    n = tile + 901
    rows, prm = make_rows(rng, n, set(PREDICATES), special=0.1), params(set(PREDICATES))
    ids, mask = oracle_of(n, rows, prm)
    singles = [oracle_of(n, {k: v}, params({k}))[1] for k, v in rows.items()]
    assert ids.size and all(s.sum() > mask.sum() for s in singles), "each predicate culls something alone"
    _, buffers = run_workflow(device, n, rows, prm)
    check(device, buffers, n, ids, mask)


@pytest.mark.parametrize("spec", [[3, 0, 5], [(1, 3), 0, 1, (2, -1)], [0, 0], [7], [0, (1, 0), 0],
                                  [1, 2, 0, 3, 4, (1, 1), 5, 6, 0, 7, 8]])
@pytest.mark.parametrize("output", ["data", "separate", "shared"])
def test_vectors_keep_chunks(device, tile, spec, output):
    """IDs count on across chunks (or come from source_ids); output as one
    data view, or as a vector filling its chunks as one sequence (nine
    non-empty chunks: every step of the unrolled search for a row's chunk).
    Every predicate is given: on the H200 that is what made a multi-chunk
    output go wrong before the search was unrolled. Nine output chunks at
    the 8K and 16K tiles (the largest kernels: the search in each of the
    tile's unrolled ID writes) with GPUVIZ_FULL_TESTS=1 only."""
    if tile in LARGE_TILES and output != "data" and len(spec) > 6 and not FULL:
        pytest.skip("nine output chunks at a large tile: GPUVIZ_FULL_TESTS=1 runs it (module docstring)")
    chunks = rows_of(tile, spec)
    rng = np.random.default_rng(sum(chunks) + len(chunks))
    n = sum(chunks)
    which = set(PREDICATES)
    rows, prm = make_rows(rng, n, which, special=0.02), params(which)
    source = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) if output == "separate" else None
    _, buffers = run_workflow(device, n, rows, prm, chunks=chunks, source_ids=source, output=output)
    check(device, buffers, n, *oracle_of(n, rows, prm, source))


# Tunings besides the default (class attributes; the benchmark's sweep times them): the
# bounds-checked loop alone, one-quad batches (the loop too), larger tiles, batches of 4 and
# 8 quads, two tiles per workgroup (late and early second ticket), small tiles unrolled whole
# (2048: two quads per lane, 4096: four), in two batches and in batches of 3 + 1 quads, the
# default preload at 1K tiles (the H200 case of a wrong multi-chunk output, session 13), the
# default with forced loop bounding, lagged placement (write_lag: 1, 2, and more tickets than a
# chunk has tiles; the default is WRITE_LAG) and no lag (at 4K and 1K tiles).
TUNED = [dict(tile_rows=8192, preload=0), dict(tile_rows=16384, preload=3), dict(tile_rows=16384, preload=12),
         dict(tile_rows=8192, preload=24), dict(tile_rows=8192, preload=6, tiles_per_group=2),
         dict(tile_rows=8192, preload=6, tiles_per_group=2, early_second=True),
         dict(tile_rows=2048, preload=48), dict(tile_rows=4096, preload=48), dict(tile_rows=4096, preload=18),
         dict(tile_rows=2048, preload=6, tiles_per_group=2), dict(tile_rows=4096, preload=3),
         dict(tile_rows=1024, preload=6), dict(tile_rows=4096, preload=6, loop_bounding=True),
         dict(tile_rows=1024, write_lag=1), dict(tile_rows=4096, preload=6, write_lag=2),
         dict(tile_rows=2048, preload=0, write_lag=64), dict(tile_rows=4096, write_lag=0),
         dict(tile_rows=1024, write_lag=0)]


# With GPUVIZ_FULL_TESTS=1 only (the largest kernels; each path is run by default at a smaller tile): the
# checked loop alone at 8K (2K: preload 0), one-quad and 8-quad batches at 16K and 8K (batches with a remainder:
# 4K preload 3 and 18; whole tiles unrolled: 2K and 4K preload 48), two tiles per workgroup at 8K, late, early
# and portable (2K, the same three).
TUNED_FULL = (0, 1, 3, 4, 5)
TUNED_PARAMS = [pytest.param(t, True, marks=[full_only] if i in TUNED_FULL else []) for i, t in enumerate(TUNED)] + [
    pytest.param(TUNED[i], False, marks=[full_only] if i in TUNED_FULL else []) for i in (2, 4, 7, 14)] + [
    (dict(tile_rows=2048, preload=6, tiles_per_group=2, early_second=True), True), (TUNED[9], False)]


@pytest.mark.parametrize("tuning, subgroups", TUNED_PARAMS,
                         ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else
                         ("subgroups" if v else "portable"))
def test_tunings_match_numpy(device, monkeypatch, tuning, subgroups):
    """Every tuning against the oracle: 60 % of the rows kept over two full
    tiles and a partial one with source_ids, then
    all predicates with non-finite inputs over vectors with empty and uneven
    chunks around its own tile size, with mask_output."""
    from gpuviz.workflows import visibility

    if not subgroups:
        monkeypatch.setattr(visibility, "use_subgroups", lambda ctx, subgroups: False)
    tile = tuning["tile_rows"]
    rng = np.random.default_rng(tile + tuning.get("preload", 0))
    n = 2 * tile + 3
    rows = {"masks": [(rng.random(n) < 0.6).astype(np.uint32)]}
    source = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    _, buffers = run_workflow(device, n, rows, {}, source_ids=source, mask_output=False, tuning=tuning)
    check(device, buffers, n, *oracle_of(n, rows, {}, source))
    chunks = [tile + 3, 0, 1, tile, tile - 1]
    n = sum(chunks)
    rows, prm = make_rows(rng, n, set(PREDICATES), special=0.02), params(set(PREDICATES))
    _, buffers = run_workflow(device, n, rows, prm, chunks=chunks, output="shared", tuning=tuning)
    check(device, buffers, n, *oracle_of(n, rows, prm))


@pytest.mark.parametrize("tuning", [dict(tile_rows=512), dict(tile_rows=12288), dict(preload=-1), dict(preload=2.5),
                                    dict(tiles_per_group=3), dict(loop_bounding="yes"),
                                    dict(loop_bounding=1), dict(write_lag=-1),
                                    dict(write_lag=True), dict(write_lag=2.0), dict(write_lag=2, tiles_per_group=2),
                                    dict(write_lag="auto")])
def test_bad_tunings_are_refused(device, tuning):
    assert_tuning_refused(device, tuning)


def assert_tuning_refused(device, tuning, workflow_class=GPUVisibilityWorkflow):
    graph = GPUCommandGraph(device, id="tuning")
    workflow = workflow_class(id="vis", output=graph.import_gpu_data("ids", upload(device, np.zeros(8, np.uint32))),
                              count=graph.import_gpu_data("n", upload(device, np.zeros(1, np.uint32))), length=8)
    for name, value in tuning.items():
        setattr(workflow, name, value)
    with pytest.raises(GraphValidationError, match='GPUVisibilityWorkflow "vis" tuning'):
        workflow.add_to_graph(graph)


def test_tile_by_row_count(device, monkeypatch):
    """tile_rows None takes the tile tile_for_rows gives the total row count
    (a vector's chunks together); the result is the oracle's either side of a
    bound; an explicit tile_rows wins."""
    from gpuviz.workflows import visibility

    for most, tile in visibility.TILE_BY_ROWS:
        assert tile in TILE_ROWS and (most is None or visibility.tile_for_rows(most) == tile)
    assert visibility.TILE_BY_ROWS[-1][0] is None, "every row count has a tile"
    monkeypatch.setattr(visibility, "TILE_BY_ROWS", ((3000, 1024), (None, 2048)))
    monkeypatch.setattr(GPUVisibilityWorkflow, "tile_rows", None)
    used = []
    real = visibility.wgsl
    monkeypatch.setattr(visibility, "wgsl", lambda *a, **k: used.append(k["iters"] * 1024) or real(*a, **k))
    rng = np.random.default_rng(11)
    for n, chunks, tuning, tile in ((3000, None, None, 1024), (3001, None, None, 2048), (3001, [1500, 0, 1501], None,
                                    2048), (2000, None, dict(tile_rows=4096), 4096)):
        rows = {"masks": [(rng.random(n) < 0.5).astype(np.uint32)]}
        used.clear()
        _, buffers = run_workflow(device, n, rows, {}, chunks=chunks, tuning=tuning)
        assert set(used) == {tile}
        check(device, buffers, n, *oracle_of(n, rows, {}))


def test_spheres_straddling_planes_and_bad_radii(device):
    """Centers outside a plane by less than, exactly, and more than r;
    negative, NaN and infinite radii; non-finite centers."""
    s = np.array([[0, 0, 0, 1],        # inside
                  [4.5, 0, 0, 1],      # outside x <= 4 by 0.5 < r: straddles, kept
                  [5, 0, 0, 1],        # outside by exactly r: touches, kept
                  [5.25, 0, 0, 1],     # outside by more than r: culled
                  [0, -4, 2, 1.5],     # straddles y >= -3 and is inside z
                  [0, 0, 0, -0.125],   # negative radius: culled
                  [0, 0, 0, np.nan], [0, 0, 0, np.inf], [np.nan, 0, 0, 1], [0, -np.inf, 0, 1],
                  [0, 0, 7, 2.5], [0, 0, 7.75, 2.5]], np.float32)
    planes = box_planes()
    _, buffers = run_workflow(device, len(s), {"spheres": s}, {"planes": planes})
    ids, mask = oracle(len(s), spheres=s, planes=planes)
    assert ids.tolist() == [0, 1, 2, 4, 10]
    check(device, buffers, len(s), ids, mask)


def test_a_nan_plane_keeps_nothing(device, tile):
    """Spheres against tilted planes (the oracle's IDs), then the same with a
    NaN in one plane: nothing kept, over several tiles."""
    rng = np.random.default_rng(12)
    n = 3 * tile + 5
    rows = make_rows(rng, n, {"spheres"}, special=0.02)
    for planes in (box_planes(tilt=True), np.where(np.arange(24).reshape(6, 4) == 13, np.nan, box_planes()).astype(
            np.float32)):
        _, buffers = run_workflow(device, n, rows, {"planes": planes})
        ids, mask = oracle(n, spheres=rows["spheres"], planes=planes)
        assert (ids.size == 0) == bool(np.isnan(planes).any())
        check(device, buffers, n, ids, mask)


@pytest.mark.parametrize("window, expected", [
    ((10.0, 20.0, 0.0, 0.0), [0, 1, 2, 3]),
    ((20.0, 10.0, 0.0, 0.0), []),          # inverted: nothing, though span 2 covers both bounds
    ((15.0, 15.0, 0.0, 0.0), [0, 1, 2]),   # a point window
    ((-np.inf, np.inf, 6.0, 0.0), [2, 4]),  # open window, minimum duration
    ((np.nan, 20.0, 0.0, 0.0), []),
    ((10.0, 20.0, np.nan, 0.0), []),
])
def test_windows(device, window, expected):
    iv = np.array([[12, 15], [15, 16], [0, 30], [20, 21], [30, 40], [21, 22], [np.nan, 15], [12, np.inf]],
                  np.float32)
    win = np.array([window], np.float32)
    _, buffers = run_workflow(device, len(iv), {"intervals": iv}, {"window": win})
    ids, mask = oracle(len(iv), intervals=iv, window=win)
    assert ids.tolist() == expected
    check(device, buffers, len(iv), ids, mask)


def test_lod_range_is_half_open_and_nan_bounds_keep_nothing(device):
    lod = np.array([1, 2, 3, 7.5, 8, np.nan, np.inf, 7.375], np.float32)
    _, buffers = run_workflow(device, len(lod), {"lod": lod}, {"lod_range": np.array([[2, 7.5]], np.float32)})
    ids, mask = oracle(len(lod), lod=lod, lod_range=[2, 7.5])
    assert ids.tolist() == [1, 2, 7]
    check(device, buffers, len(lod), ids, mask)
    _, buffers = run_workflow(device, len(lod), {"lod": lod}, {"lod_range": np.array([[np.nan, 9]], np.float32)})
    assert read_array(device, buffers["count"])[1] == 0


def test_length_without_per_row_inputs_and_prefix_of_longer_inputs(device):
    _, buffers = run_workflow(device, 10, {}, {}, length=10, mask_output=False)
    check(device, buffers, 10, np.arange(10, dtype=np.uint32), None)
    rng = np.random.default_rng(9)
    rows = make_rows(rng, 300, {"masks"})
    _, buffers = run_workflow(device, 200, rows, {}, length=200, mask_output=False)
    check(device, buffers, 200, oracle(200, **rows)[0], None)


def test_count_written_into_a_draw_command_record(device):
    """The count lands in record 1's instanceCount word; no other word changes."""
    dcb = DrawCommandBuffer(device, type="draw-indexed", capacity=3)
    for i in range(3):
        dcb.write(i, index_count=36, instance_count=99, first_index=i, base_vertex=0, first_instance=0)
    before = np.frombuffer(device.queue.read_buffer(dcb.buffer), np.uint32).copy()
    rng = np.random.default_rng(1)
    n = VISIBILITY_TILE + 77
    rows, prm = make_rows(rng, n, {"spheres"}), params({"spheres"})
    graph = GPUCommandGraph(device, id="draws")
    out = upload(device, np.zeros(n, np.uint32))
    GPUVisibilityWorkflow(id="cull", output=graph.import_gpu_data("ids", out),
                          count=graph.import_gpu_data("instances", dcb.get_instance_count_data(1)),
                          spheres=graph.import_gpu_data("spheres", upload(device, rows["spheres"])),
                          planes=graph.import_gpu_data("planes", upload(device, prm["planes"]))).add_to_graph(graph)
    submit(device, graph.compile())
    after = np.frombuffer(device.queue.read_buffer(dcb.buffer), np.uint32)
    ids = oracle(n, spheres=rows["spheres"], planes=prm["planes"])[0]
    word = dcb.instance_count_byte_offset(1) // 4
    assert after[word] == ids.size
    assert np.delete(after, word).tolist() == np.delete(before, word).tolist()
    np.testing.assert_array_equal(read_array(device, out)[:ids.size], ids)


def test_parameters_and_masks_change_without_recompiling(device, monkeypatch):
    """Writes to planes, window, lod_range and a mask between encodings of
    one compiled graph give the new oracle's result; no pipeline is made."""
    from gpuviz.graph import kernel

    rng = np.random.default_rng(2)
    n = 2 * VISIBILITY_TILE + 5
    which = set(PREDICATES)
    rows, prm = make_rows(rng, n, which), params(which)
    graph = GPUCommandGraph(device, id="params")
    data = {name: upload(device, v) for name, v in {**prm, "spheres": rows["spheres"], "intervals": rows["intervals"],
                                                    "lod": rows["lod"], "mask": rows["masks"][0]}.items()}
    v = {name: graph.import_gpu_data(name, d) for name, d in data.items()}
    out, count = upload(device, np.zeros(n, np.uint32)), upload(device, np.zeros(1, np.uint32))
    GPUVisibilityWorkflow(id="vis", output=graph.import_gpu_data("ids", out), count=graph.import_gpu_data("n", count),
                          masks=[v["mask"]], spheres=v["spheres"], planes=v["planes"], intervals=v["intervals"],
                          window=v["window"], lod=v["lod"], lod_range=v["lod_range"]).add_to_graph(graph)
    compiled = graph.compile()
    made = []
    monkeypatch.setattr(kernel, "compute_pipeline", lambda *a, **k: made.append(a) or None)
    for step in range(3):
        if step:
            prm = {"planes": box_planes(half=(2.0 + step, 3.0, 4.0)),
                   "window": np.array([[10.0 * step, 40.0 + 10 * step, step, 0]], np.float32),
                   "lod_range": np.array([[step, 5.0 + step]], np.float32)}
            rows["masks"][0] = (rng.random(n) < 0.5).astype(np.uint32)
            for name, value in {**prm, "mask": rows["masks"][0]}.items():
                device.queue.write_buffer(data[name].buffer, 0, np.ascontiguousarray(value).tobytes())
        submit(device, compiled)
        ids, _ = oracle(n, masks=rows["masks"][:1], spheres=rows["spheres"], intervals=rows["intervals"],
                        lod=rows["lod"], **prm)
        assert ids.size
        assert read_array(device, count).tolist() == [ids.size]
        np.testing.assert_array_equal(read_array(device, out)[:ids.size], ids)
    assert made == []


def test_portable_group_scans(device, tile, monkeypatch):
    """The pass without subgroups (workgroup-memory scans and look-back),
    as on devices that lack the feature."""
    from gpuviz.workflows import visibility

    monkeypatch.setattr(visibility, "use_subgroups", lambda ctx, subgroups: False)
    rng = np.random.default_rng(8)
    n = 3 * tile + 11
    rows, prm = make_rows(rng, n, {"masks", "lod"}), params({"lod"})
    _, buffers = run_workflow(device, n, rows, prm, chunks=[tile - 1, 0, 2 * tile + 12])
    check(device, buffers, n, *oracle_of(n, rows, prm))


def test_two_dimensional_dispatch_grids(device, tile, monkeypatch):
    """Every dispatch split into a 2-D grid with a spare workgroup (as past
    65535 workgroups a dimension): spare workgroups do nothing and tiles
    are numbered wid.x + wid.y * nwg.x."""
    from gpuviz.graph.kernel import ComputeKernel

    monkeypatch.setattr(ComputeKernel, "workgroup_grid", lambda self, w: (2, -(-w // 2), 1) if w > 1 else (w, 1, 1))
    rng = np.random.default_rng(6)
    n = 4 * tile + 100  # five tiles: a 2x3 grid
    rows, prm = make_rows(rng, n, {"masks", "intervals"}), params({"intervals"})
    _, buffers = run_workflow(device, n, rows, prm)
    check(device, buffers, n, *oracle_of(n, rows, prm))


def test_tiles_keeping_nothing_between_kept_rows(device, tile):
    """Whole tiles (and a whole vector chunk) without a kept row between
    tiles that keep some: offsets carry past the empty ones."""
    n = 4 * tile + 3
    mask = np.zeros(n, np.uint32)
    mask[:5] = 1
    mask[tile - 1] = 1
    mask[3 * tile + 7::3] = 2
    for chunks in (None, [tile, 2 * tile, 0, tile + 3]):
        _, buffers = run_workflow(device, n, {"masks": [mask]}, {}, chunks=chunks)
        check(device, buffers, n, *oracle(n, masks=[mask]))


def test_zero_rows_write_count_zero(device):
    for chunks in (None, [0, 0]):
        _, buffers = run_workflow(device, 0, {"lod": np.zeros(0, np.float32)}, params({"lod"}), chunks=chunks)
        check(device, buffers, 0, np.zeros(0, np.uint32), np.zeros(0, np.uint32))


# ------------------------------------------------------------------ errors
@pytest.fixture
def views(device):
    graph = GPUCommandGraph(device, id="errors")

    def make(name, a, **kw):
        return graph.import_gpu_data(name, upload(device, np.asarray(a, **kw)))

    v = {"mask": make("mask", np.ones(8, np.uint32)), "out": make("out", np.zeros(16, np.uint32)),
         "n": make("n", np.zeros(1, np.uint32)), "iv": make("iv", np.zeros((8, 2), np.float32)),
         "win": make("win", np.zeros((1, 4), np.float32)), "lod": make("lod", np.zeros(8, np.float32)),
         "lod6": make("lod6", np.zeros(6, np.float32)), "f4": make("f4", np.zeros((8, 4), np.float32))}
    v["vec"] = graph.import_gpu_vector("vec", upload_vector(device, [np.ones(3, np.uint32), np.ones(5, np.uint32)]))
    v["vec2"] = graph.import_gpu_vector("vec2", upload_vector(device, [np.ones(4, np.uint32), np.ones(4, np.uint32)]))
    return graph, v


@pytest.mark.parametrize("case, message", [
    ("window without intervals", r'GPUVisibilityWorkflow "e" window needs intervals \(they come together\)'),
    ("spheres without planes", "spheres needs planes"),
    ("wrong format", r"masks\[0\] must be uint32 \(got float32\)"),
    ("short output", r"output is shorter than the input \(needs 8 rows, got 4\)"),
    ("different lengths", "per-row inputs have different lengths"),
    ("mismatched chunks", r"chunk lengths \[4, 4\] do not match masks\[0\] chunk lengths \[3, 5\]"),
    ("kinds", "is a vector view but masks"),
    ("no length", "needs length= when no per-row input"),
    ("length too long", "per-row inputs are shorter than length 9"),
    ("output shares an input's buffer", 'output and masks\\[0\\] share buffer "mask"'),
    ("mask_output shares an input's buffer", "mask_output and intervals share buffer"),
    ("short window", r"window is shorter than needed \(needs 4 rows, got 1\)"),
    ("vector output with data inputs", "output is a vector view but the inputs are data views"),
    ("count not one row of uint32", r"count must be uint32 \(got float32\)"),
])
def test_named_errors(views, case, message):
    graph, v = views
    sub = lambda name, length, offset=0, fmt="uint32": graph.create_data_view(  # noqa: E731
        v[name].handle, format=fmt, length=length, byte_offset=offset)
    base = dict(id="e", output=v["out"], count=v["n"])
    kwargs = {
        "window without intervals": dict(window=v["win"], masks=[v["mask"]]),
        "spheres without planes": dict(spheres=v["f4"]),
        "wrong format": dict(masks=[v["lod"]]),
        "short output": dict(masks=[v["mask"]], output=sub("out", 4)),
        "different lengths": dict(masks=[v["mask"]], lod=v["lod6"], lod_range=sub("win", 2, fmt="float32")),
        "mismatched chunks": dict(masks=[v["vec"], v["vec2"]]),
        "kinds": dict(masks=[v["mask"], v["vec"]]),
        "no length": dict(),
        "length too long": dict(masks=[v["mask"]], length=9),
        "output shares an input's buffer": dict(masks=[sub("mask", 4)], output=sub("mask", 4, 16)),
        "mask_output shares an input's buffer": dict(intervals=sub("iv", 4, fmt="float32x2"), window=v["win"],
                                                     mask_output=sub("iv", 4, 32, fmt="uint32")),
        "short window": dict(intervals=v["iv"], window=sub("win", 1, fmt="float32")),
        "vector output with data inputs": dict(masks=[v["mask"]], output=v["vec"]),
        "count not one row of uint32": dict(masks=[v["mask"]], count=sub("win", 1, fmt="float32")),
    }[case]
    with pytest.raises(GraphValidationError, match=message):
        GPUVisibilityWorkflow(**{**base, **kwargs}).add_to_graph(graph)


def test_unpacked_views_are_refused(views):
    graph, v = views
    strided = graph.create_data_view(v["out"].handle, format="uint32", length=4, byte_stride=8)
    with pytest.raises(ViewRangeError, match=r'GPUVisibilityWorkflow "e" masks\[0\] must be packed'):
        GPUVisibilityWorkflow(id="e", output=v["out"], count=v["n"], masks=[strided]).add_to_graph(graph)


# ----------------------------------------------------------------- frustum
def perspective(fovy, aspect, near, far):
    """WebGPU-style (depth 0..1) right-handed perspective matrix."""
    f = 1 / np.tan(fovy / 2)
    return np.array([[f / aspect, 0, 0, 0], [0, f, 0, 0], [0, 0, far / (near - far), near * far / (near - far)],
                     [0, 0, -1, 0]])


def look_at(eye, target, up=(0, 1, 0)):
    eye, target, up = (np.asarray(v, float) for v in (eye, target, up))
    z = (eye - target) / np.linalg.norm(eye - target)
    x = np.cross(up, z) / np.linalg.norm(np.cross(up, z))
    y = np.cross(z, x)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = x, y, z
    m[:3, 3] = -m[:3, :3] @ eye
    return m


@pytest.mark.parametrize("depth_range", ["zero-to-one", "minus-one-to-one"])
def test_frustum_planes_agree_with_clip_space(depth_range):
    from gpuviz.workflows.frustum import frustum_planes

    m = perspective(1.0, 1.5, 0.5, 80.0) @ look_at((3, 2, 10), (0, 0, 0))
    if depth_range == "minus-one-to-one":  # the same frustum in OpenGL's depth convention
        m = np.diag([1, 1, 2, 1]) @ m - np.outer([0, 0, 1, 0], m[3])
    planes = frustum_planes(m, depth_range=depth_range)
    assert planes.shape == (6, 4) and planes.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(planes[:, :3], axis=1), 1, rtol=1e-6)
    rng = np.random.default_rng(0)
    p = np.c_[rng.uniform(-60, 60, (20000, 3)), np.ones(20000)]
    clip = p @ m.T
    lo = 0 if depth_range == "zero-to-one" else -clip[:, 3]
    inside = (np.abs(clip[:, 0]) <= clip[:, 3]) & (np.abs(clip[:, 1]) <= clip[:, 3]) & (clip[:, 2] >= lo) \
        & (clip[:, 2] <= clip[:, 3])
    dist = p @ planes.astype(np.float64).T
    clear = np.abs(dist).min(1) > 1e-3  # away from every plane: no rounding question
    assert inside[clear].any() and (~inside[clear]).any()
    np.testing.assert_array_equal((dist >= 0).all(1)[clear], inside[clear])


def test_frustum_planes_drive_the_workflow(device):
    """Spheres against planes from a camera: the GPU keeps what the oracle
    keeps (radius 0 spheres are points; the others straddle planes)."""
    from gpuviz.workflows.frustum import frustum_planes

    planes = frustum_planes(perspective(1.2, 1.0, 1.0, 50.0) @ look_at((0, 0, 20), (0, 0, 0)))
    rng = np.random.default_rng(4)
    n = 3000
    s = np.c_[rng.uniform(-30, 30, (n, 3)), rng.uniform(0, 3, n)].astype(np.float32)
    dist = s[:, :3].astype(np.float64) @ planes[:, :3].T.astype(np.float64) + planes[:, 3]
    margin = np.abs(dist + s[:, 3:4]).min(1)
    s = s[margin > 1e-3]  # no row decided by float32 rounding
    _, buffers = run_workflow(device, len(s), {"spheres": s}, {"planes": planes})
    ids, mask = oracle(len(s), spheres=s, planes=planes)
    assert 0 < ids.size < len(s)
    check(device, buffers, len(s), ids, mask)


def test_frustum_planes_refuse_bad_matrices():
    from gpuviz.workflows.frustum import frustum_planes

    with pytest.raises(GraphValidationError, match=r"finite 4x4 matrix \(got shape \(3, 3\)\)"):
        frustum_planes(np.eye(3))
    with pytest.raises(GraphValidationError, match="depth_range must be one of"):
        frustum_planes(np.eye(4), depth_range="reversed")


# -------------------------------------------------------------- look-back
def encode_repeatedly(device, n, chunks, *, steps, rng, density, source_ids=False, **tuning):
    """One compiled graph (mask vector with ``chunks`` and optional source
    IDs, output and mask_output vectors), encoded ``steps`` times with a new
    mask each time; every encoding is checked against the oracle. The
    workflow's class-level tuning attributes are set on the instance."""
    graph = GPUCommandGraph(device, id="lookback")
    mask = upload_vector(device, split(np.zeros(n, np.uint32), chunks))
    kwargs = {}
    ids_of = None
    if source_ids:
        ids_of = rng.permutation(n).astype(np.uint32) * 3 + 1
        kwargs["source_ids"] = graph.import_gpu_vector("src", upload_vector(device, split(ids_of, chunks)))
    out = upload_vector(device, [np.full(c, SENTINEL, np.uint32) for c in chunks])
    mask_out = upload_vector(device, [np.full(c, SENTINEL, np.uint32) for c in chunks])
    count = upload(device, np.full(1, SENTINEL, np.uint32))
    workflow = GPUVisibilityWorkflow(id="vis", output=graph.import_gpu_vector("ids", out),
                                     count=graph.import_gpu_data("n", count),
                                     masks=[graph.import_gpu_vector("m", mask)],
                                     mask_output=graph.import_gpu_vector("keep", mask_out), **kwargs)
    for name, value in tuning.items():
        setattr(workflow, name, value)
    assert workflow.add_to_graph(graph) == ["vis-predicate"]
    compiled = graph.compile()
    for step in range(steps):
        m = (rng.random(n) < density[step % len(density)]).astype(np.uint32) * 7
        for chunk, part in zip(mask.chunks, split(m, chunks)):
            if part.size:
                device.queue.write_buffer(chunk.buffer, chunk.byte_offset, part.tobytes())
        submit(device, compiled)
        want, keep = oracle(n, masks=[m], source_ids=ids_of)
        assert read_array(device, count).tolist() == [want.size]
        got = np.concatenate([read_array(device, c) for c in out.chunks])
        np.testing.assert_array_equal(got[:want.size], want)
        np.testing.assert_array_equal(np.concatenate([read_array(device, c) for c in mask_out.chunks]), keep)
    compiled.destroy()


@pytest.mark.parametrize("lag", [0, None], ids=["no-lag", "default-lag"])
@pytest.mark.parametrize("subgroups", [True, False])
def test_look_back_over_many_tiles_and_encodings(device, tile, monkeypatch, subgroups, lag):
    """More tiles than one look-back step reads (a subgroup, or 64 in the
    workgroup walk without subgroups), across uneven and empty chunks, over
    several encodings of one compiled graph (the tile state's epoch parity:
    no stale state from the previous encoding is taken for this one's),
    densities from nothing kept to everything."""
    from gpuviz.workflows import visibility

    if not subgroups:
        monkeypatch.setattr(visibility, "use_subgroups", lambda ctx, subgroups: False)
    chunks = [70 * tile + 5, 0, 3, 2 * tile, 75 * tile - 1]
    encode_repeatedly(device, sum(chunks), chunks, steps=4, rng=np.random.default_rng(21),
                      density=[0.002, 1.0, 0.0, 0.5], write_lag=lag)


@pytest.mark.parametrize("subgroups", [True, False])
def test_lagged_placement_over_many_tiles_and_encodings(device, monkeypatch, subgroups):
    """write_lag: each tile placed and written by the workgroup of a later
    ticket, from the kept bits its evaluation published, over more tiles than
    a look-back step reads, uneven and empty chunks (one shorter than the
    lag) and several encodings (the bits' epoch parity)."""
    from gpuviz.workflows import visibility

    if not subgroups:
        monkeypatch.setattr(visibility, "use_subgroups", lambda ctx, subgroups: False)
    chunks = [70 * 1024 + 5, 0, 3, 2 * 1024, 75 * 1024 - 1]
    encode_repeatedly(device, sum(chunks), chunks, steps=4, rng=np.random.default_rng(22),
                      density=[0.002, 1.0, 0.0, 0.5], tile_rows=1024, write_lag=5)


@pytest.mark.parametrize("lag", [0, None], ids=["no-lag", "default-lag"])
@pytest.mark.parametrize("spec", [[(5, 3)], [(2, 3), 0, (1, 0), (2, -1)]])
def test_look_back_fallback_alone(device, tile, spec, lag):
    """Every tile ignores its own chunk's published states, so each offset
    comes from the fallback (the waiting tile evaluating its predecessors
    itself) after a zero spin limit; tiles of earlier chunks are read as
    published."""
    chunks = rows_of(tile, spec)
    encode_repeatedly(device, sum(chunks), chunks, steps=2, rng=np.random.default_rng(len(chunks)),
                      density=[0.3, 0.9], source_ids=True, trust_published=False, spin_limit=0, write_lag=lag)


@pytest.mark.parametrize("tuning", [dict(tiles_per_group=2), dict(tile_rows=16384, preload=0),
                                    dict(tiles_per_group=2, early_second=True, preload=12),
                                    dict(tile_rows=2048, tiles_per_group=2, early_second=True, preload=6),
                                    dict(write_lag=3), dict(tile_rows=1024, write_lag=1), dict(write_lag=0)])
def test_fallback_with_tunings(device, tuning):
    """The fallback alone (as above) with two tiles per workgroup (odd and
    even tile counts), with 16K tiles and with lagged placement (every
    placed tile's bits evaluated again as well), over several encodings."""
    tile = tuning.get("tile_rows", VISIBILITY_TILE)
    chunks = [5 * tile + 3, 0, 4 * tile]
    encode_repeatedly(device, sum(chunks), chunks, steps=2, rng=np.random.default_rng(8), density=[0.6, 0.01],
                      source_ids=True, trust_published=False, spin_limit=0, **tuning)


def test_lag_off_where_its_bits_exceed_a_binding(device, monkeypatch):
    """Lagged placement's bits (a word per 16 rows) in one state buffer: a
    device whose storage binding is smaller than that gets the default lag
    turned off (the result still the oracle's), and an explicit lag is
    refused by name. Twenty 4K-row chunks, each one binding of 16 KB."""
    limits = type(device).limits
    small = {**limits.fget(device), "max-storage-buffer-binding-size": 16384}
    monkeypatch.setattr(type(device), "limits", property(lambda self: small if self is device else limits.fget(self)))
    from gpuviz.workflows import visibility

    built = []
    render = visibility.wgsl
    monkeypatch.setattr(visibility, "wgsl",
                        lambda path, **values: built.append(values["lag"]) or render(path, **values))
    chunks = [4096] * 20
    n = sum(chunks)
    rng = np.random.default_rng(41)
    rows = {"masks": [(rng.random(n) < 0.5).astype(np.uint32)]}
    _, buffers = run_workflow(device, n, rows, {}, chunks=chunks, output="separate", mask_output=False,
                              tuning=dict(tile_rows=1024))
    check(device, buffers, n, *oracle_of(n, rows, {}))
    assert built and not any(built), "every chunk's kernel was built without lagged placement"
    with pytest.raises(GraphValidationError, match=r"write_lag 5 needs a state buffer of \d+ bytes, over the "
                                                   r"device's storage binding size \(16384 bytes\)"):
        run_workflow(device, n, rows, {}, chunks=chunks, output="separate", mask_output=False,
                     tuning=dict(tile_rows=1024, write_lag=5))


@pytest.mark.parametrize("tuning", [dict(), dict(write_lag=0), dict(tile_rows=2048, preload=6, tiles_per_group=2)])
def test_fallback_with_every_predicate(device, tuning):
    """The fallback alone (every predecessor evaluated again by the waiting
    tile) with every predicate, so the planes, window and LOD range are
    used there too: with and without lag, and by pairs."""
    tile = tuning.get("tile_rows", VISIBILITY_TILE)
    chunks = [3 * tile + 5, 0, 2 * tile - 1]
    n = sum(chunks)
    rng = np.random.default_rng(31)
    rows, prm = make_rows(rng, n, set(PREDICATES), special=0.02), params(set(PREDICATES))
    _, buffers = run_workflow(device, n, rows, prm, chunks=chunks, output="separate",
                              tuning={**tuning, "trust_published": False, "spin_limit": 0})
    check(device, buffers, n, *oracle_of(n, rows, prm))


@pytest.mark.parametrize("lag", [0, None], ids=["no-lag", "default-lag"])
def test_zero_spin_limit(device, tile, lag):
    """A zero spin limit: any predecessor not yet published is evaluated by
    the waiting tile at once, whatever order the driver runs tiles in."""
    chunks = [3 * tile + 1, 4 * tile]
    encode_repeatedly(device, sum(chunks), chunks, steps=2, rng=np.random.default_rng(5), density=[0.4, 0.05],
                      spin_limit=0, write_lag=lag)
