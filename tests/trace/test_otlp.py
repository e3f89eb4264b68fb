"""OTLP/JSON import: the two real files against a plain json reading, and
hand-made edge cases (orphans, string times, enums, links, bad input)."""

import copy
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.formats.otlp import is_otlp, parse_otlp, read_otlp

DATA = Path("/work/shared/data/traces")
if not DATA.exists():  # a clone elsewhere: the repository's shared folder
    DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "traces"
FILES = ["otlp_proto_example_trace.json", "otlp_jaeger_multi_resource.json"]


def _plain(path):
    """What the file holds, read with json and plain loops (independent of the importer)."""
    doc = json.loads(Path(path).read_text())
    spans, services, scopes, ids = [], [], [], {}
    for rs in doc["resourceSpans"]:
        service = next(a["value"]["stringValue"] for a in rs["resource"]["attributes"] if a["key"] == "service.name")
        if service not in services:
            services.append(service)
        for ss in rs["scopeSpans"]:
            key = (service, ss.get("scope", {}).get("name", ""))
            if key not in scopes:
                scopes.append(key)
            for span in ss["spans"]:
                ids[(span["traceId"].lower(), span["spanId"].lower())] = len(spans)
                spans.append((span, service, key))
    return doc, spans, services, scopes, ids


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("strict", [False, True])
def test_real_files_match_plain_json(name, strict):
    path = DATA / name
    _, spans, services, scopes, ids = _plain(path)
    trace = read_otlp(path, strict=strict)
    assert trace.span_count == len(spans)
    assert trace.processes.column("name").to_pylist() == services
    assert trace.threads.num_rows == len(scopes)
    assert trace.threads.column("kind").to_pylist() == ["async"] * len(scopes)
    assert trace.spans.column("name").to_pylist() == [s["name"] for s, _, _ in spans]
    start = [int(s["startTimeUnixNano"]) for s, _, _ in spans]
    end = [int(s["endTimeUnixNano"]) for s, _, _ in spans]
    assert trace.spans.column("start_ns").to_pylist() == start
    assert trace.spans.column("duration_ns").to_pylist() == [e - s for s, e in zip(start, end)]
    proc = trace.spans.column("process").to_numpy()
    assert [trace.processes.column("name")[int(p)].as_py() for p in proc] == [svc for _, svc, _ in spans]
    thread = trace.spans.column("thread").to_numpy()
    assert [int(t) for t in thread] == [scopes.index(key) for _, _, key in spans]
    parents = [ids.get((s["traceId"].lower(), s.get("parentSpanId", "").lower()), -1) for s, _, _ in spans]
    assert trace.spans.column("parent").to_pylist() == parents
    orphans = sum(1 for (s, _, _), p in zip(spans, parents) if s.get("parentSpanId") and p == -1)
    assert trace.report.get("missing_parent", 0) == orphans
    events = sum(len(s.get("events", [])) for s, _, _ in spans)
    assert trace.instants.num_rows == events
    assert trace.links.num_rows == sum(len(s.get("links", [])) for s, _, _ in spans)
    for (span, _, _), args in zip(spans, trace.spans.column("args").to_pylist()):
        parsed = json.loads(args)
        assert parsed["span_id"] == span["spanId"].lower()
        assert parsed["trace_id"] == span["traceId"].lower()
        assert parsed["kind"] == span.get("kind", 0)
        plain_attrs = {a["key"]: a["value"]["stringValue"] for a in span.get("attributes", [])}
        assert parsed.get("attributes", {}) == plain_attrs


def test_proto_example_orphan_is_a_note_not_a_problem():
    trace = read_otlp(DATA / FILES[0], strict=True)
    assert trace.report.get("missing_parent") == 1
    assert trace.spans.column("parent").to_pylist() == [-1]
    assert json.loads(trace.spans.column("args")[0].as_py())["parent_span_id"] == "eee19b7ec3c1b173"
    assert trace.spans.column("category").to_pylist() == ["server"]


# ------------------------------------------------------------------ hand-made

def _span(span_id, *, start="1000", end="2000", parent=None, trace="0" * 31 + "1", **extra):
    span = {"traceId": trace, "spanId": span_id, "name": f"s{span_id[-2:]}",
            "startTimeUnixNano": start, "endTimeUnixNano": end}
    if parent is not None:
        span["parentSpanId"] = parent
    span.update(extra)
    return span


def _request(*services):
    """services: (service name, [(scope name, [spans])])."""
    return {"resourceSpans": [
        {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": svc}}]},
         "scopeSpans": [{"scope": {"name": scope}, "spans": spans} for scope, spans in scopes]}
        for svc, scopes in services]}


def _id(i):
    return f"{i:016x}"


def test_parent_child_across_services_and_order():
    # the child comes first in the file and lives in another service
    doc = _request(("front", [("http", [_span(_id(2), start="1100", end="1900", parent=_id(1))])]),
                   ("back", [("db", [_span(_id(1))]), ("cache", [_span(_id(3), parent=_id(1))])]))
    trace = parse_otlp(doc, strict=True)
    assert trace.spans.column("parent").to_pylist() == [1, -1, 1]
    assert trace.spans.column("process").to_pylist() == [0, 1, 1]
    assert trace.spans.column("thread").to_pylist() == [0, 1, 2]
    assert trace.threads.column("tid").to_pylist() == ["http", "db", "cache"]
    assert trace.report == {}


def test_string_times_are_exact_ns():
    start = 1544712660000000001  # not representable in float64
    doc = _request(("a", [("s", [_span(_id(1), start=str(start), end=str(start + 3)),
                                 _span(_id(2), start=start + 7, end=start + 8)])]))  # JSON integers
    trace = parse_otlp(json.dumps(doc), strict=True)
    assert trace.spans.column("start_ns").to_pylist() == [start, start + 7]
    assert trace.spans.column("duration_ns").to_pylist() == [3, 1]


def test_float_times_are_reported_and_strict_raises():
    doc = _request(("a", [("s", [_span(_id(1), start=1.0e9, end="2000000000")])]))
    trace = parse_otlp(doc)
    assert trace.report == {"float_time": 1}
    assert trace.spans.column("start_ns").to_pylist() == [1_000_000_000]
    with pytest.raises(TraceFormatError, match="float_time") as info:
        parse_otlp(doc, path="f.json", strict=True)
    assert info.value.path == "f.json" and info.value.index == 0


def test_enums_as_integers_names_and_unknown():
    doc = _request(("a", [("s", [
        _span(_id(1), kind=3), _span(_id(2), kind="SPAN_KIND_PRODUCER"), _span(_id(3), kind=9),
        _span(_id(4), status={"code": "STATUS_CODE_ERROR", "message": "boom"}),
        _span(_id(5), status={"code": 1}), _span(_id(6), status={"code": 7})])]))
    trace = parse_otlp(doc)
    assert trace.spans.column("category").to_pylist() == ["client", "producer", "unknown"] + ["unspecified"] * 3
    args = [json.loads(a) for a in trace.spans.column("args").to_pylist()]
    assert [a["kind"] for a in args] == [3, 4, 9, 0, 0, 0]
    assert args[3]["status"] == {"code": "error", "message": "boom"}
    assert args[4]["status"] == {"code": "ok"}
    assert args[5]["status"] == {"code": 7}
    assert trace.report == {"unknown_enum": 2}
    with pytest.raises(TraceFormatError, match=r"spans\[2\].*kind 9") as info:
        parse_otlp(doc, path="e.json", strict=True)
    assert info.value.index == 2


def test_links_and_missing_targets():
    doc = _request(("a", [("s", [
        _span(_id(1)),
        _span(_id(2), links=[{"traceId": "0" * 31 + "1", "spanId": _id(1)},
                             {"traceId": "0" * 31 + "1", "spanId": _id(99)}])])]))
    trace = parse_otlp(doc, strict=True)
    assert trace.links.to_pydict() == {"source": [0], "target": [1], "kind": ["link"]}
    assert trace.report == {"missing_link_target": 1}


def test_bad_times_are_repaired_or_skipped():
    doc = _request(("a", [("s", [
        _span(_id(1), start="5000", end="4000"),        # ends before it starts
        _span(_id(2), end=None),                        # no end
        _span(_id(3), start="x12"),                     # unreadable start: skipped
        _span(_id(4), start=str(2**63)),                # past int64: skipped
        _span(_id(5))])]))
    trace = parse_otlp(doc)
    assert trace.span_count == 3
    assert trace.spans.column("duration_ns").to_pylist() == [0, 0, 1000]
    assert trace.spans.column("incomplete").to_pylist() == [False, True, False]
    assert trace.report == {"negative_duration": 1, "bad_time": 1, "bad_span": 2}
    with pytest.raises(TraceFormatError, match="negative_duration"):
        parse_otlp(doc, strict=True)


def test_ids_attributes_events_and_duplicates():
    attrs = [{"key": "s", "value": {"stringValue": "x"}}, {"key": "i", "value": {"intValue": "-9007199254740993"}},
             {"key": "d", "value": {"doubleValue": 0.5}}, {"key": "b", "value": {"boolValue": True}},
             {"key": "arr", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "y"}]}}},
             {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": "NaN"}}]}}},
             {"key": "bad", "value": {"intValue": "one"}}, {"key": "empty", "value": {}}]
    doc = _request(("a", [("s", [
        _span("ABCDEF0123456789", attributes=attrs,
              events=[{"timeUnixNano": "1500", "name": "e1"}, {"timeUnixNano": "1600"}, {"name": "no time"}]),
        _span("ABCDEF0123456789"), _span("xyz")])]))
    trace = parse_otlp(doc)
    args = json.loads(trace.spans.column("args")[0].as_py())
    assert args["span_id"] == "abcdef0123456789"
    assert args["attributes"] == {"s": "x", "i": -9007199254740993, "d": 0.5, "b": True, "arr": [1, "y"],
                                  "kv": {"k": "NaN"}, "empty": None}
    assert [e["name"] for e in args["events"]] == ["e1", ""]
    assert trace.instants.to_pydict() == {"name": ["e1", ""], "category": ["event", "event"], "ts_ns": [1500, 1600],
                                          "process": [0, 0], "thread": [0, 0], "scope": ["t", "t"]}
    assert trace.report == {"bad_attribute": 1, "bad_event": 1, "duplicate_span_id": 1, "bad_id": 1}


def test_snake_case_legacy_scope_and_unknown_service():
    doc = {"resource_spans": [{"resource": {}, "instrumentationLibrarySpans": [
        {"instrumentationLibrary": {"name": "old", "version": "0.9"},
         "spans": [{"trace_id": "0" * 32, "span_id": _id(1), "name": "n", "start_time_unix_nano": "10",
                    "end_time_unix_nano": "25"}]}]}]}
    trace = parse_otlp(doc, strict=True)
    assert trace.processes.column("name").to_pylist() == ["unknown_service"]
    assert trace.threads.column("name").to_pylist() == ["old 0.9"]
    assert trace.spans.column("duration_ns").to_pylist() == [15]


def test_files_gzip_json_lines_and_sniff(tmp_path):
    one = _request(("a", [("s", [_span(_id(1))])]))
    two = _request(("b", [("s", [_span(_id(2), parent=_id(1))])]))
    lines = tmp_path / "t.jsonl"
    lines.write_text(json.dumps(one) + "\n\n" + json.dumps(two) + "\n")
    trace = read_otlp(lines, strict=True)
    assert trace.spans.column("parent").to_pylist() == [-1, 0]
    assert trace.sources == (str(lines),)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(one).encode()))
    assert read_otlp(packed, partition=2).spans.column("partition").to_pylist() == [2]
    assert is_otlp(json.dumps(one).encode()[:64]) and not is_otlp(b'{"traceEvents": []}') and not is_otlp(b"[")
    assert is_otlp(b'\xef\xbb\xbf \n{"resourceSpans": []}')
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(one).encode())
    assert read_otlp(bom, strict=True).span_count == 1


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("content, where", [
    (b"", "empty file"), (b"  \n", "empty file"), (b"\x00\xff\xfe garbage \x80", "UTF-8"),
    (b"[1, 2, 3]", "top level is a list"), (b'{"traceEvents": []}', "no resourceSpans"),
    (b'{"resourceSpans": 3}', "expected a list"), (b'{"resourceSpans": [{"scopeSpans": [', "not JSON"),
    (b"[" * 100000, "JSON"), (b"\x1f\x8b\x08\x00broken", "gzip"),
    (gzip.compress(b'{"resourceSpans": []}' * 50, mtime=0)[:-30] + b"\x00" * 30, "gzip")])
def test_bad_input_raises_in_both_modes(tmp_path, strict, content, where):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceFormatError, match=where) as info:
        read_otlp(path, strict=strict)
    assert str(path) in str(info.value)


def test_lone_surrogates_are_replaced(tmp_path):
    doc = _request(("svc\ud800", [("scope\udfff", [_span(_id(1), events=[{"timeUnixNano": "5", "name": "e\ud801"}])])]))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"] = "bad\udc00name"
    text = json.dumps(doc)  # ASCII JSON with \ud800-style escapes
    trace = parse_otlp(text)
    assert trace.spans.column("name").to_pylist() == ["bad\ufffdname"]
    assert trace.processes.column("name").to_pylist() == ["svc\ufffd"]
    assert trace.threads.column("tid").to_pylist() == ["scope\ufffd"]
    assert trace.instants.column("name").to_pylist() == ["e\ufffd"]
    assert trace.report["bad_text"] == 6  # pid and name of the service, tid and name of the scope, event, span
    with pytest.raises(TraceFormatError, match="bad_text"):
        parse_otlp(text, strict=True)


def test_truncated_json_names_the_byte_offset(tmp_path):
    text = json.dumps(_request(("a", [("s", [_span(_id(1)), _span(_id(2))])])))
    path = tmp_path / "cut.json"
    path.write_text(text[:-7])
    with pytest.raises(TraceFormatError) as info:
        read_otlp(path)
    assert info.value.offset is not None and 0 < info.value.offset <= len(text)
    with pytest.raises(TraceFormatError):
        read_otlp(tmp_path / "missing.json")


# ------------------------------------------------------------------ robustness

def _nodes(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _nodes(v, path + (i,))


_JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                  st.text(max_size=20), st.lists(st.integers(), max_size=3),
                  st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_documents_only_raise_trace_format_error(data):
    base = json.loads((DATA / FILES[1]).read_text())
    base["resourceSpans"][2]["scopeSpans"][0]["spans"][1]["links"] = [
        {"traceId": "0" * 30 + "11", "spanId": "0000000000000003"}]
    base["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["parentSpanId"] = "0000000000000003"
    doc = copy.deepcopy(base)
    paths = [p for p in _nodes(doc) if p]
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(paths))
        parent = doc
        try:
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = data.draw(_JUNK)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
    text = json.dumps(doc)
    for strict in (False, True):
        try:
            trace = parse_otlp(text, strict=strict)
        except TraceFormatError:
            assert strict or "resourceSpans" not in doc or not isinstance(doc.get("resourceSpans"), list)
            continue
        assert trace.span_count <= 5
        assert np.all(trace.spans.column("duration_ns").to_numpy() >= 0)
        for args in trace.spans.column("args").to_pylist():
            json.loads(args)


def test_services_instances_and_scopes_map_to_processes_and_threads():
    def resource(attrs, scopes):
        return {"resource": {"attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]},
                "scopeSpans": [{"scope": {"name": s}, "spans": spans} for s, spans in scopes]}

    doc = {"resourceSpans": [
        resource({"service.name": "api", "host.name": "h1"}, [("http", [_span(_id(1))])]),
        resource({"service.name": "api", "host.name": "h2"}, [("http", [_span(_id(2))]), ("db", [_span(_id(3))])]),
        resource({"service.name": "api", "service.instance.id": "i-7"}, [("http", [_span(_id(4))])])]}
    trace = parse_otlp(doc, strict=True)
    assert trace.processes.column("pid").to_pylist() == ["api", "api/i-7"]
    assert json.loads(trace.processes.column("labels")[0].as_py()) == {"service.name": "api", "host.name": "h1"}
    assert trace.threads.column("tid").to_pylist() == ["http", "db", "http"]
    assert trace.threads.column("process").to_pylist() == [0, 0, 1]
    assert trace.spans.column("thread").to_pylist() == [0, 0, 1, 2]


_OTLP_SPAN = st.fixed_dictionaries({
    "id": st.integers(1, 40), "parent": st.one_of(st.none(), st.integers(1, 45)),
    "start": st.integers(0, 2**62), "dur": st.integers(0, 2**40), "as_int": st.booleans(),
    "kind": st.one_of(st.none(), st.integers(0, 5), st.sampled_from(["SPAN_KIND_SERVER", "SPAN_KIND_CONSUMER"])),
    "links": st.lists(st.integers(1, 45), max_size=3), "trace": st.integers(1, 2)})


@settings(max_examples=60, deadline=None)
@given(services=st.lists(st.lists(st.lists(_OTLP_SPAN, max_size=6), min_size=1, max_size=3), min_size=1, max_size=3))
def test_random_valid_documents_against_plain_reading(services):
    """Random valid requests (services x scopes x spans, parents and links in or out of the file, duplicate IDs)
    against a plain loop over the same Python objects."""
    doc = {"resourceSpans": []}
    flat, first = [], {}
    for s, scopes in enumerate(services):
        resource = {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": f"svc{s % 2}"}}]},
                    "scopeSpans": []}
        for c, spans in enumerate(scopes):
            out = []
            for sp in spans:
                start, end = sp["start"], sp["start"] + sp["dur"]
                span = {"traceId": f"{sp['trace']:032x}", "spanId": f"{sp['id']:016X}", "name": f"n{sp['id']}",
                        "startTimeUnixNano": start if sp["as_int"] else str(start),
                        "endTimeUnixNano": end if sp["as_int"] else str(end),
                        "links": [{"traceId": f"{sp['trace']:032x}", "spanId": f"{x:016x}"} for x in sp["links"]]}
                if sp["parent"] is not None:
                    span["parentSpanId"] = f"{sp['parent']:016x}"
                if sp["kind"] is not None:
                    span["kind"] = sp["kind"]
                out.append(span)
                key = (sp["trace"], sp["id"])
                first.setdefault(key, len(flat))
                flat.append((sp, (f"svc{s % 2}", f"scope{c}")))
            resource["scopeSpans"].append({"scope": {"name": f"scope{c}"}, "spans": out})
        doc["resourceSpans"].append(resource)
    trace = parse_otlp(json.dumps(doc))
    assert trace.span_count == len(flat)
    assert trace.spans.column("start_ns").to_pylist() == [sp["start"] for sp, _ in flat]
    assert trace.spans.column("duration_ns").to_pylist() == [sp["dur"] for sp, _ in flat]
    parents = [first.get((sp["trace"], sp["parent"]), -1) if sp["parent"] is not None else -1 for sp, _ in flat]
    assert trace.spans.column("parent").to_pylist() == parents
    want_links = [(first[(sp["trace"], x)], i) for i, (sp, _) in enumerate(flat) for x in sp["links"]
                  if (sp["trace"], x) in first]
    assert list(zip(trace.links.column("source").to_pylist(), trace.links.column("target").to_pylist())) == want_links
    thread_keys = [(trace.processes.column("name")[p].as_py(), tid) for p, tid in
                   zip(trace.threads.column("process").to_pylist(), trace.threads.column("tid").to_pylist())]
    assert [thread_keys[t] for t in trace.spans.column("thread").to_pylist()] == [key for _, key in flat]
    assert len(set(thread_keys)) == len(thread_keys)  # one thread per (service, scope)
    names = {None: "unspecified", 0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer",
             5: "consumer", "SPAN_KIND_SERVER": "server", "SPAN_KIND_CONSUMER": "consumer"}
    assert trace.spans.column("category").to_pylist() == [names[sp["kind"]] for sp, _ in flat]
    duplicates = len(flat) - len(first)
    orphans = sum(1 for sp, _ in flat if sp["parent"] is not None and (sp["trace"], sp["parent"]) not in first)
    missing = sum(1 for sp, _ in flat for x in sp["links"] if (sp["trace"], x) not in first)
    expected = {"duplicate_span_id": duplicates, "missing_parent": orphans, "missing_link_target": missing}
    assert {k: v for k, v in trace.report.items() if k != "lanes_added"} == {k: v for k, v in expected.items() if v}
