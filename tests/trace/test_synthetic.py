"""gpuviz.trace.synthetic: invariants checked independently of the generator
(brute-force containment, the lane packer's slow reference), determinism,
shape statistics, boundary sizes and the Chrome JSON writer."""

import gzip
import json

import numpy as np
import pytest

from gpuviz.oracles.trace import pack_lanes_reference
from gpuviz.trace.model import SPANS_SCHEMA
from gpuviz.trace.synthetic import MAX_DEPTH, synthetic, to_chrome_json


def columns(trace):
    s = trace.spans
    return {name: s.column(name).to_numpy(zero_copy_only=False) for name in s.schema.names}


def check_invariants(trace):
    """Brute force per thread, O(n^2): lanes never overlap, a parent contains
    its child on the same thread, depth is the number of spans that contain
    a span (the nesting depth), and the parent is the innermost of them."""
    c = columns(trace)
    n = trace.span_count
    assert np.array_equal(c["id"], np.arange(n))
    start, end = c["start_ns"], c["start_ns"] + c["duration_ns"]
    assert (c["duration_ns"] >= 1).all()
    kinds = np.array(trace.threads.column("kind").to_pylist())
    for t in np.unique(c["thread"]):
        rows = np.flatnonzero(c["thread"] == t)
        s, e = start[rows], end[rows]
        # containment matrix: i contains j (i != j)
        contains = (s[:, None] <= s[None, :]) & (e[None, :] <= e[:, None])
        np.fill_diagonal(contains, False)
        assert not (contains & contains.T).any(), "two spans with identical intervals"
        overlap = (s[:, None] < e[None, :]) & (s[None, :] < e[:, None])
        np.fill_diagonal(overlap, False)
        assert not (overlap & ~contains & ~contains.T).any(), f"thread {t}: partial overlap"
        same_lane = c["lane"][rows][:, None] == c["lane"][rows][None, :]
        assert not (overlap & same_lane).any(), f"thread {t}: two spans of one lane overlap"
        depth = contains.sum(axis=0)
        assert np.array_equal(c["depth"][rows], depth)
        assert np.array_equal(c["lane"][rows], depth)
        for j in range(rows.size):
            holders = np.flatnonzero(contains[:, j])
            want = -1 if holders.size == 0 else rows[holders[np.argmin(e[holders] - s[holders])]]
            assert c["parent"][rows[j]] == want
        if kinds[t] == "gpu-stream":
            assert depth.max(initial=0) <= 1
    assert c["depth"].max(initial=0) < MAX_DEPTH
    # process and partition follow the thread
    assert np.array_equal(c["process"], trace.threads.column("process").to_numpy()[c["thread"]])
    assert np.array_equal(c["partition"], c["process"])


def check_links(trace):
    c = columns(trace)
    src = trace.links.column("source").to_numpy().astype(np.int64)
    dst = trace.links.column("target").to_numpy().astype(np.int64)
    kinds = np.array(trace.threads.column("kind").to_pylist())
    assert set(trace.links.column("kind").to_pylist()) <= {"flow"}
    assert np.unique(src).size == src.size and np.unique(dst).size == dst.size
    assert (kinds[c["thread"][src]] == "thread").all() and (kinds[c["thread"][dst]] == "gpu-stream").all()
    assert np.array_equal(c["process"][src], c["process"][dst])
    assert (c["start_ns"][src] < c["start_ns"][dst]).all(), "a kernel starts before its launch"
    assert set(c["name"][src]) <= {"cudaLaunchKernel"}
    # launches are leaves
    assert not np.isin(src, c["parent"]).any()


@pytest.mark.parametrize("spans,processes,threads", [(0, 8, 8), (1, 8, 8), (2, 1, 1), (3, 2, 2), (7, 1, 4),
                                                     (50, 3, 5), (400, 2, 8), (3000, 8, 8), (2500, 1, 1)])
def test_invariants_small(spans, processes, threads):
    trace = synthetic(spans=spans, processes=processes, threads_per_process=threads, seed=spans)
    assert trace.span_count == spans
    assert trace.spans.schema == SPANS_SCHEMA
    assert trace.threads.num_rows == processes * threads and trace.processes.num_rows == processes
    assert trace.report == {}
    check_invariants(trace)
    check_links(trace)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_lane_packer_reference(seed):
    """The lanes, depths and parents the generator fills directly are what
    the importers' packing rule gives (its slow reference implementation)."""
    trace = synthetic(spans=4000, processes=2, threads_per_process=4, seed=seed)
    c = columns(trace)
    lane, depth, parent, added = pack_lanes_reference(start=c["start_ns"], duration=c["duration_ns"],
                                                      thread=c["thread"])
    assert added == 0
    assert np.array_equal(lane, c["lane"]) and np.array_equal(depth, c["depth"])
    assert np.array_equal(parent, c["parent"])


def test_deterministic():
    a = synthetic(spans=20000, seed=5)
    b = synthetic(spans=20000, seed=5)
    for name in ("spans", "links", "threads", "processes"):
        assert getattr(a, name).equals(getattr(b, name)), name
    c = synthetic(spans=20000, seed=6)
    assert not a.spans.column("start_ns").equals(c.spans.column("start_ns"))


def test_shape():
    """Deep stacks, heavy tails, GPU streams with flows, idle gaps."""
    trace = synthetic(spans=250_000, seed=0)
    c = columns(trace)
    kinds = np.array(trace.threads.column("kind").to_pylist())
    gpu = kinds[c["thread"]] == "gpu-stream"
    assert 0.24 < gpu.mean() < 0.26
    assert (kinds == "gpu-stream").sum() == 16
    assert c["depth"][~gpu].max() == MAX_DEPTH - 1
    assert (c["depth"][~gpu] >= 8).mean() > 0.1
    leaf_dur = c["duration_ns"][~np.isin(np.arange(c["id"].size), c["parent"])]
    p50, p99, top = np.percentile(leaf_dur, [50, 99, 100])
    assert p99 / p50 > 20 and top / p50 > 200, (p50, p99, top)
    links = trace.links.num_rows
    assert 0.8 * gpu.sum() < links <= gpu.sum()
    # idle gaps between top-level spans of a CPU thread: mostly short, a few long stalls
    roots = np.flatnonzero((c["depth"] == 0) & ~gpu)
    same = c["thread"][roots[1:]] == c["thread"][roots[:-1]]
    gaps = (c["start_ns"][roots[1:]] - c["start_ns"][roots[:-1]] - c["duration_ns"][roots[:-1]])[same]
    assert (gaps > 0).all() and (gaps > 1_000_000).any() and np.median(gaps) < 100_000
    # GPU streams cover about the same time as their process's CPU threads
    end = c["start_ns"] + c["duration_ns"]
    for p in range(8):
        cpu_end, gpu_end = end[(c["process"] == p) & ~gpu].max(), end[(c["process"] == p) & gpu].max()
        assert 0.7 < gpu_end / cpu_end < 1.5
    names = set(trace.spans.column("name").unique().to_pylist())
    assert {"cudaLaunchKernel", "aten::mm", "ProfilerStep"} <= names


def test_links_argument():
    full = synthetic(spans=5000, seed=3)
    some = synthetic(spans=5000, seed=3, links=10)
    none = synthetic(spans=5000, seed=3, links=0)
    assert some.links.num_rows == 10 and none.links.num_rows == 0
    assert set(some.links.column("target").to_pylist()) <= set(full.links.column("target").to_pylist())
    check_links(some)
    more = synthetic(spans=5000, seed=3, links=10**9)
    assert more.links.num_rows == full.links.num_rows


def test_errors():
    with pytest.raises(ValueError, match="negative"):
        synthetic(spans=-1)
    with pytest.raises(ValueError, match="need at least one thread"):
        synthetic(spans=5, processes=0)
    assert synthetic(spans=0, processes=0).span_count == 0


@pytest.mark.parametrize("kineto", [False, True])
def test_chrome_json_writer(tmp_path, kineto):
    trace = synthetic(spans=3000, processes=2, threads_per_process=4, seed=1)
    path = tmp_path / ("t.json.gz" if kineto else "t.json")
    written = to_chrome_json(trace, path, kineto=kineto, chunk=1000)
    data = json.load(gzip.open(path) if kineto else open(path))
    events = data["traceEvents"] if kineto else data
    assert written == len(events)
    if kineto:
        assert {"schemaVersion", "deviceProperties", "distributedInfo"} <= set(data)
    spans = [e for e in events if e["ph"] == "X"]
    c = columns(trace)
    assert len(spans) == trace.span_count
    # exact ns through decimal µs text
    ts = np.array([round(e["ts"] * 1000) for e in spans])
    assert np.array_equal(ts, c["start_ns"])
    assert [e["name"] for e in spans] == c["name"].tolist()
    flows = [e for e in events if e["ph"] in "sf"]
    assert len(flows) == 2 * trace.links.num_rows
    assert all(e["bp"] == "e" for e in flows if e["ph"] == "f")
    names = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert len(names) == trace.threads.num_rows
