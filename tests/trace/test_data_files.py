"""Every real trace in ../shared/data/traces imports with the counts the file holds.

The expected counts come from a plain ``json``-based reading of each file
(below), written from the Trace Event format's definitions, not from the
importer: spans per phase, matched flow pairs, threads, counters, instants,
the time range in ns (decimal arithmetic on the JSON text).
"""

import gzip
import json
from collections import Counter, defaultdict
from decimal import Decimal

import numpy as np
import pytest

from gpuviz.trace.load import load

CHROME_FILES = ["ss_simple_partial.json", "ss_partial_trailing_comma.json", "ss_invalid_x_nesting.json",
                "ss_out_of_order_be.json", "ss_mismatched_name.json", "ss_bex_interaction.json",
                "ss_zero_duration.json", "ss_string_ids_samples.json", "catapult_flow_simple.json",
                "catapult_async_begin_end.json", "catapult_nestable_async.json", "catapult_simple_trace.json",
                "kineto_rocm_mi250_small.json.gz", "kineto_alexnet_cuda.json.gz", "kineto_resnet_nccl_large.json.gz"]
TRUNCATED = {"ss_simple_partial.json", "ss_partial_trailing_comma.json"}


def plain_events(path):
    """The events by ``json`` alone (the README's repair for the two partial files)."""
    raw = gzip.open(path).read() if path.name.endswith(".gz") else path.read_bytes()
    text = raw.decode()
    if path.name in TRUNCATED:
        text = text.rstrip().rstrip(",") + "]"
    doc = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(value):
    return int(Decimal(str(value)) * 1000)


def key_text(v):
    return str(v)


def expected_counts(events):
    """Counts straight from the definitions of the phases."""
    ph = Counter(e.get("ph") for e in events)
    threads = set()
    async_procs = set()
    for e in events:
        p = e.get("ph")
        if p in ("X", "B", "E", "s", "t", "f") or (p in ("i", "I") and e.get("s", "t") == "t") or \
                (p == "M" and e.get("name") in ("thread_name", "thread_sort_index")):
            threads.add((key_text(e.get("pid", "")), key_text(e.get("tid", ""))))
        if p in ("b", "n", "S"):
            async_procs.add(key_text(e.get("pid", "")))
    # Legacy async: an S and each step after it (T/p) are spans; per key (cat, name, id).
    legacy = 0
    open_keys = set()
    for e in sorted((e for e in events if e.get("ph") in ("S", "T", "p", "F")), key=lambda e: Decimal(str(e["ts"]))):
        k = (e.get("cat"), e.get("name"), key_text(e.get("id")))
        if e["ph"] == "S":
            legacy += 1
            open_keys.add(k)
        elif e["ph"] in ("T", "p") and k in open_keys:
            legacy += 1
        elif e["ph"] == "F":
            open_keys.discard(k)
    # Flows: keys (cat, name, id) with an s; each later point of the key links to the previous one.
    flows = defaultdict(list)
    for e in events:
        if e.get("ph") in ("s", "t", "f"):
            flows[(e.get("cat"), e.get("name"), key_text(e.get("id")))].append(e["ph"])
    pairs = sum(1 for pts in flows.values() if "s" in pts and "f" in pts)
    counters = sum(sum(1 for v in e.get("args", {}).values() if isinstance(v, Decimal))
                   for e in events if e.get("ph") == "C")
    open_b = 0
    per_thread = defaultdict(int)
    for e in events:
        if e.get("ph") in ("B", "E"):
            per_thread[(key_text(e.get("pid")), key_text(e.get("tid")))] += 1 if e["ph"] == "B" else -1
    open_b = sum(max(v, 0) for v in per_thread.values())
    return {"spans": ph["X"] + ph["B"] + ph["b"] + legacy, "unclosed_begin": open_b,
            "threads": len(threads) + len(async_procs), "counters": counters,
            "instants": ph["i"] + ph["I"] + ph["n"], "flow_pairs": pairs, "phases": ph}


def expected_range(events):
    """(first start, last end) in ns over span-making events."""
    starts, ends = [], []
    for e in events:
        p = e.get("ph")
        if p in ("X", "B", "b", "S"):
            starts.append(ns(e["ts"]))
        if p == "X":
            ends.append(ns(e["ts"]) + (ns(e["dur"]) if "dur" in e else 0))
        elif p in ("B", "E", "b", "e", "S", "T", "p", "F"):
            ends.append(ns(e["ts"]))
    return min(starts), max(ends)


def check_lanes(trace):
    """No two spans of one (thread, lane) overlap; parents contain children."""
    s = trace.spans.to_pandas()
    for _, g in s.groupby(["thread", "lane"]):
        g = g.sort_values(["start_ns", "duration_ns"])
        start = g.start_ns.to_numpy()
        end = start + g.duration_ns.to_numpy()
        assert np.all(start[1:] >= end[:-1]), "spans overlap inside one lane"
    has = s.parent.to_numpy() >= 0
    par = s.parent.to_numpy()[has]
    assert np.all(s.start_ns.to_numpy()[par] <= s.start_ns.to_numpy()[has])
    assert np.all((s.start_ns + s.duration_ns).to_numpy()[par] >= (s.start_ns + s.duration_ns).to_numpy()[has])
    assert np.all(s.thread.to_numpy()[par] == s.thread.to_numpy()[has])


@pytest.mark.parametrize("name", CHROME_FILES)
def test_trace_event_file_counts(traces_dir, name):
    path = traces_dir / name
    events = plain_events(path)
    want = expected_counts(events)
    trace = load(path)
    assert trace.span_count == want["spans"]
    kind = np.array(trace.threads.column("kind").to_pylist())[trace.spans.column("thread").to_numpy()]
    incomplete = trace.spans.column("incomplete").to_numpy()
    assert int(incomplete[kind != "async"].sum()) == want["unclosed_begin"]
    assert int(incomplete[kind == "async"].sum()) >= trace.report.get("unclosed_async", 0)
    assert trace.report.get("unclosed_begin", 0) == want["unclosed_begin"]
    assert trace.threads.num_rows == want["threads"]
    assert trace.counters.num_rows == want["counters"]
    assert trace.instants.num_rows == want["instants"]
    flow_links = sum(1 for k in trace.links.column("kind").to_pylist() if k in ("flow", "ac2g", "fwdbwd"))
    if name.startswith("kineto"):
        # Kineto flows are s -> f pairs, one per id.
        assert flow_links == want["flow_pairs"]
    first, last = expected_range(events)
    start = trace.spans.column("start_ns").to_numpy()
    end = start + trace.spans.column("duration_ns").to_numpy()
    assert int(start.min()) == first
    assert int(end.max()) == last
    check_lanes(trace)
    assert (name in TRUNCATED) == ("truncated" in trace.report)
    unknown = sum(v for k, v in want["phases"].items() if k not in "XBEbenSTpFstfMCiI")
    assert trace.report.get("unknown_phase", 0) == unknown


def test_readme_facts(traces_dir):
    """The facts the data README states about the Kineto files."""
    alex = load(traces_dir / "kineto_alexnet_cuda.json.gz")
    assert Counter(alex.links.column("kind").to_pylist())["ac2g"] == 139
    assert alex.report["unmatched_flow_end"] == 206
    assert alex.report["unclosed_flow"] == 16
    kinds = dict(zip(alex.threads.column("tid").to_pylist(), alex.threads.column("kind").to_pylist()))
    assert kinds["7"] == kinds["20"] == "gpu-stream"
    # Partial overlaps on GPU stream 7 go to extra lanes, never dropped.
    assert alex.report["lanes_added"] >= 1
    big = load(traces_dir / "kineto_resnet_nccl_large.json.gz")
    kinds = Counter(big.links.column("kind").to_pylist())
    assert kinds["fwdbwd"] * 2 == 1086
    assert big.metadata["base_time_ns"] == 1711964646000000000
    assert len(big.metadata["device_properties"]) == 8
    assert big.metadata["distributed_info"]["world_size"] == 2
    names = big.spans.column("name").to_pylist()
    assert sum(n.startswith("ncclKernel_AllReduce") for n in names) == 15


def test_string_ids_and_timestamps(traces_dir):
    """tid "-1"/"1" and ts "11550183666" (strings) read as the numbers they spell."""
    trace = load(traces_dir / "ss_string_ids_samples.json")
    assert trace.spans.column("start_ns").to_pylist() == [11550183666000, 11550183666000]
    assert sorted(trace.threads.column("tid").to_pylist()) == ["1", "2"]
    assert trace.processes.column("name").to_pylist() == ["hermes"]


def test_otlp_files_load(traces_dir):
    """format="auto" sends OTLP to the OTLP reader; spans = the file's spans."""
    for name in ("otlp_proto_example_trace.json", "otlp_jaeger_multi_resource.json"):
        doc = json.loads((traces_dir / name).read_text())
        count = sum(len(ss.get("spans", [])) for rs in doc["resourceSpans"] for ss in rs.get("scopeSpans", []))
        trace = load(traces_dir / name)
        assert trace.span_count == count
        check_lanes(trace)
