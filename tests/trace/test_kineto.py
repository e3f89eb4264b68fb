"""Kineto (PyTorch profiler) specifics: GPU streams, flow kinds, metadata,
rank -> partition, the 2021 layout, and format detection."""

import gzip
import json
from collections import Counter

import pytest

from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.formats.kineto import read_kineto
from gpuviz.trace.load import load


def test_mi250_streams_flows_and_metadata(traces_dir):
    path = traces_dir / "kineto_rocm_mi250_small.json.gz"
    doc = json.load(gzip.open(path))
    t = load(path)
    assert t.metadata["format"] == "kineto"
    assert t.metadata["base_time_ns"] == doc["baseTimeNanoseconds"]
    gpu = {(str(e["pid"]), str(e["tid"])) for e in doc["traceEvents"]
           if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")}
    pid = t.processes.column("pid").to_pylist()
    rows = {(pid[p], tid): kind for p, tid, kind in zip(t.threads.column("process").to_pylist(),
                                                       t.threads.column("tid").to_pylist(),
                                                       t.threads.column("kind").to_pylist())}
    assert gpu and all(rows[k] == "gpu-stream" for k in gpu)
    assert Counter(rows.values())["gpu-stream"] == len(gpu)
    flows = Counter(t.links.column("kind").to_pylist())
    ids = {c: {e["id"] for e in doc["traceEvents"] if e.get("cat") == c and e.get("ph") == "s"} &
           {e["id"] for e in doc["traceEvents"] if e.get("cat") == c and e.get("ph") == "f"} for c in ("ac2g", "fwdbwd")}
    assert flows["ac2g"] == len(ids["ac2g"]) and flows["fwdbwd"] == len(ids["fwdbwd"])
    # Each ac2g link goes from a CPU thread to a GPU stream.
    kind = t.threads.column("kind").to_pylist()
    thread = t.spans.column("thread").to_pylist()
    for s, d, k in zip(t.links.column("source").to_pylist(), t.links.column("target").to_pylist(),
                       t.links.column("kind").to_pylist()):
        if k == "ac2g":
            assert kind[thread[s]] == "thread" and kind[thread[d]] == "gpu-stream"
    labels = dict(zip(pid, t.processes.column("labels").to_pylist()))
    assert "AMD Radeon Graphics" in labels["0"]


def test_rank_becomes_partition(tmp_path, traces_dir):
    doc = json.load(gzip.open(traces_dir / "kineto_alexnet_cuda.json.gz"))
    doc["distributedInfo"] = {"rank": 3}
    path = tmp_path / "rank3.json"
    path.write_text(json.dumps(doc))
    t = read_kineto(path)
    assert set(t.spans.column("partition").to_pylist()) == {3}
    assert set(t.processes.column("partition").to_pylist()) == {3}
    assert t.sources[3] == str(path)


def test_2021_layout(tmp_path):
    doc = {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 123, "tid": "456", "ts": 100, "dur": 50},
        {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 123, "tid": "456", "ts": 110, "dur": 5,
         "args": {"correlation": 5}},
        {"ph": "X", "cat": "Kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 120, "dur": 30,
         "args": {"correlation": 5, "stream": 7, "device": 0}},
        {"ph": "s", "id": 5, "pid": 123, "tid": "456", "ts": 110, "cat": "async", "name": "launch"},
        {"ph": "f", "id": 5, "pid": 0, "tid": "stream 7", "ts": 120, "cat": "async", "name": "launch", "bp": "e"},
        {"ph": "M", "pid": 0, "tid": "stream 7", "name": "thread_name", "args": {"name": "stream 7"}},
    ]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    t = load(path)
    assert t.metadata["format"] == "kineto"
    kinds = dict(zip(t.threads.column("tid").to_pylist(), t.threads.column("kind").to_pylist()))
    assert kinds == {"456": "thread", "stream 7": "gpu-stream"}
    names = t.spans.column("name").to_pylist()
    assert [(names[s], names[d], k) for s, d, k in zip(t.links.column("source").to_pylist(),
                                                        t.links.column("target").to_pylist(),
                                                        t.links.column("kind").to_pylist())] == \
        [("cudaLaunchKernel", "gemm", "async")]


def test_plain_chrome_is_not_kineto(traces_dir):
    assert load(traces_dir / "catapult_flow_simple.json").metadata["format"] == "chrome"
    assert load(traces_dir / "kineto_alexnet_cuda.json.gz", format="chrome").metadata["format"] == "chrome"

_KINETO_EVENTS = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
                  {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 2, "dur": 1, "pid": 0, "tid": 7}]


@pytest.mark.parametrize("header, reason", [
    ({"baseTimeNanoseconds": 10 ** 400}, "bad_base_time"),      # beyond int64: ranks could not be aligned by it
    ({"baseTimeNanoseconds": -5}, "bad_base_time"),
    ({"baseTimeNanoseconds": 1.7e18}, "bad_base_time"),          # a float: not exact nanoseconds
    ({"distributedInfo": {"rank": 10 ** 30}}, "bad_rank"),
    ({"distributedInfo": {"rank": "3"}}, "bad_rank"),
])
def test_unusable_base_time_and_rank_are_reported(tmp_path, header, reason):
    """A base time or rank the importer cannot use is left out (no base
    time, partition 0) and reported; strict raises naming the reason."""
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schemaVersion": 1, **header, "traceEvents": _KINETO_EVENTS}))
    t = load(path, format="kineto")
    assert t.report.get(reason) == 1
    assert t.metadata["base_time_ns"] is None and t.processes.column("partition").to_pylist() == [0, 0]
    with pytest.raises(TraceFormatError, match=reason):
        load(path, format="kineto", strict=True)


def test_usable_base_time_and_rank_are_kept(tmp_path):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"baseTimeNanoseconds": 1_700_000_000_000_000_000, "distributedInfo": {"rank": 3},
                                "traceEvents": _KINETO_EVENTS}))
    t = load(path, format="kineto", strict=True)
    assert t.metadata["base_time_ns"] == 1_700_000_000_000_000_000 and not t.report
    assert set(t.processes.column("partition").to_pylist()) == {3}
