"""Fuzzing harness for the trace importers: mutated Chrome JSON, Kineto and
OTLP inputs run through :func:`gpuviz.trace.load`, strict and not.

Every input is a pure function of ``(seed, index)`` (:func:`case`), so a
crash is reproduced from two numbers. Inputs are mutations of seed traces
(the small files of ``shared/data/traces``, prefixes of the large ones,
synthetic Chrome / Kineto / OTLP traces and hand-written edge cases):
truncations, byte flips, inserted JSON tokens, deleted or repeated ranges,
wrong-typed and huge values, deep nesting, random JSON in trace shape,
gzip around any of them (and broken gzip). An input *passes* when ``load``
returns a :class:`~gpuviz.trace.model.Trace` whose lanes do not overlap, or
raises :class:`~gpuviz.trace.errors.TraceFormatError`; anything else is a
*crash*, and an input still running after ``timeout`` CPU seconds is a *hang*.

Inputs run in a worker subprocess watched by the parent (a hang or a dying
worker costs one restart, never the run); ``python -m gpuviz.trace.fuzz
--count 100000`` runs the full campaign and writes reproducers of every
failure into ``--out``. ``--differential`` fuzzes
:func:`differential_load` instead: every input is loaded with the events
array of an object document located without the header pass and again
with the full pass, and any difference is a crash.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["case", "check", "run", "seed_inputs", "differential_load", "DifferentialMismatch", "MUTATIONS", "DATA"]

#: The shared real trace files (seeds), when present.
DATA = Path(os.environ.get("GPUVIZ_TRACE_DATA", Path(__file__).resolve().parents[3] / "shared/data/traces"))
#: Seeds larger than this are cut to a prefix of this many bytes (a truncated trace is a case too).
MAX_SEED_BYTES = 48 * 1024

_PHASES = list("XBEbenSTFstfMCiIPRONDpcvV(") + ["", "XX", "x", "\u00e9", "\x00"]
_WEIRD_NUMBERS = [0, -1, 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30),
                  1e300, -1e300, 1e-320, 0.1, -0.0, 1.1, 123456.789, 9.223372036854776e18, 1e16 + 0.5]
_WEIRD_TEXT = ["", " ", "0", "-1", "0x1f", "1e400", "NaN", "null", "\u00ff\u2603", "\ud800", "a" * 1000,
               "\\", '"', "25738", "11550183666", "-9223372036854775809"]
_TOKENS = [b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"null", b"true", b"NaN", b"-Infinity", b"1e999",
           b"-0", b"0.0000001", b"18446744073709551616", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\\u0000",
           b'"ph":"B"', b'"ph":"E"', b'"ph":"X"', b'"dur":-5', b'"ts":"x"', b'{"ph":"b","id":"0x1","cat":"c"}']


# ------------------------------------------------------------------ seeds
def _hand_written():
    """Small Chrome traces covering every phase the importer knows."""
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": "7", "args": {"name": "t"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 7, "args": {"sort_index": 2}},
        {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "a,b"}},
        {"ph": "B", "name": "a", "cat": "c", "ts": 1.5, "pid": 1, "tid": 7},
        {"ph": "X", "name": "b", "ts": 2, "dur": 1.25, "pid": 1, "tid": 7, "args": {"k": [1, 2]}},
        {"ph": "E", "ts": 5, "pid": 1, "tid": 7},
        {"ph": "E", "ts": 6, "pid": 1, "tid": 8},
        {"ph": "B", "name": "open", "ts": 7, "pid": "1", "tid": "7"},
        {"ph": "b", "name": "as", "cat": "c", "id": "0x10", "ts": 1, "pid": 1, "tid": 7},
        {"ph": "n", "name": "as", "cat": "c", "id": "0x10", "ts": 2, "pid": 1, "tid": 7},
        {"ph": "e", "name": "as", "cat": "c", "id": "0x10", "ts": 3, "pid": 1, "tid": 7},
        {"ph": "S", "name": "old", "id": 5, "ts": 1, "pid": 1, "tid": 7},
        {"ph": "T", "name": "old", "id": 5, "ts": 2, "pid": 1, "tid": 7, "args": {"step": "s1"}},
        {"ph": "F", "name": "old", "id": 5, "ts": 4, "pid": 1, "tid": 7},
        {"ph": "s", "name": "fl", "cat": "f", "id": 9, "ts": 2.1, "pid": 1, "tid": 7},
        {"ph": "t", "name": "fl", "cat": "f", "id": 9, "ts": 3, "pid": 1, "tid": 7},
        {"ph": "f", "name": "fl", "cat": "f", "id": 9, "ts": 4, "pid": 1, "tid": 7, "bp": "e"},
        {"ph": "X", "name": "v2", "ts": 3, "dur": 1, "pid": 1, "tid": 8, "bind_id": 3, "flow_out": True},
        {"ph": "X", "name": "v2b", "ts": 5, "dur": 1, "pid": 1, "tid": 7, "bind_id": 3, "flow_in": True},
        {"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"used": 10, "free": 2.5}},
        {"ph": "i", "name": "mark", "ts": 2, "pid": 1, "tid": 7, "s": "t"},
        {"ph": "I", "name": "g", "ts": 3, "s": "g"},
        {"ph": "P", "name": "sample", "ts": 3, "pid": 1, "tid": 7},
    ]
    yield "hand_array.json", json.dumps(ev).encode()
    yield "hand_object.json", json.dumps({"traceEvents": ev, "displayTimeUnit": "ns", "otherData": {}}).encode()
    yield "hand_partial.json", json.dumps(ev).encode()[:-1] + b",\n"


def _otlp(trace):
    """A small OTLP/JSON request from a synthetic trace (one resource per
    process, one scope per thread)."""
    spans = trace.spans.to_pylist()
    links = {}
    for s, t in zip(trace.links.column("source").to_pylist(), trace.links.column("target").to_pylist()):
        links.setdefault(t, []).append(s)
    resources = []
    for p in trace.processes.to_pylist():
        scopes = []
        for t in trace.threads.to_pylist():
            if t["process"] != p["id"]:
                continue
            out = [{"traceId": "%032x" % (p["id"] + 1), "spanId": "%016x" % (s["id"] + 1),
                    "parentSpanId": "" if s["parent"] < 0 else "%016x" % (s["parent"] + 1), "name": s["name"],
                    "kind": 1 + s["depth"] % 5, "startTimeUnixNano": str(s["start_ns"]),
                    "endTimeUnixNano": str(s["start_ns"] + s["duration_ns"]),
                    "attributes": [{"key": "cat", "value": {"stringValue": s["category"]}},
                                   {"key": "n", "value": {"intValue": str(s["id"])}}],
                    "links": [{"traceId": "%032x" % (p["id"] + 1), "spanId": "%016x" % (x + 1)}
                              for x in links.get(s["id"], [])],
                    "status": {"code": s["id"] % 3}} for s in spans if s["thread"] == t["id"]]
            scopes.append({"scope": {"name": t["name"], "version": "1"}, "spans": out})
        resources.append({"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": p["name"]}}]},
                          "scopeSpans": scopes})
    return json.dumps({"resourceSpans": resources}).encode()


def _first_events(data):
    """A large Chrome/Kineto file cut to its first events, still valid JSON
    with every top-level key (deviceProperties, distributedInfo, ...)."""
    root = json.loads(data)
    events = root["traceEvents"] if isinstance(root, dict) else root
    keep = max(1, len(events) * MAX_SEED_BYTES // len(data))
    if isinstance(root, dict):
        root["traceEvents"] = events[:keep]
        return json.dumps(root).encode()
    return json.dumps(events[:keep]).encode()


def seed_inputs():
    """``[(name, bytes)]``: every seed, uncompressed (``case`` may gzip)."""
    import tempfile

    from .synthetic import synthetic, to_chrome_json

    seeds = list(_hand_written())
    if DATA.is_dir():
        for path in sorted(DATA.iterdir()):
            if path.suffix in (".json", ".gz"):
                data = path.read_bytes()
                data = gzip.decompress(data) if path.suffix == ".gz" else data
                name = path.name.removesuffix(".gz")
                if len(data) > MAX_SEED_BYTES:
                    seeds.append((name + "[prefix]", data[:MAX_SEED_BYTES]))
                    data = _first_events(data)
                seeds.append((name, data))
    trace = synthetic(spans=120, processes=2, threads_per_process=4, seed=11)
    with tempfile.TemporaryDirectory() as folder:
        for kineto in (False, True):
            path = Path(folder) / "t.json"
            to_chrome_json(trace, path, kineto=kineto)
            seeds.append((f"synthetic_{'kineto' if kineto else 'chrome'}.json", path.read_bytes()))
    seeds.append(("synthetic_otlp.json", _otlp(trace)))
    return seeds


# ------------------------------------------------------------------ mutations
def _truncate(r, data):
    return data[:r.randrange(len(data) + 1)]


def _flip(r, data):
    data = bytearray(data)
    for _ in range(r.choice((1, 1, 2, 4, 16))):
        if data:
            data[r.randrange(len(data))] = r.randrange(256)
    return bytes(data)


def _insert(r, data):
    at = r.randrange(len(data) + 1)
    return data[:at] + r.choice(_TOKENS) * r.choice((1, 1, 3, 100)) + data[at:]


def _delete(r, data):
    at = r.randrange(len(data) + 1)
    return data[:at] + data[at + r.choice((1, 2, 10, 100, 1000)):]


def _repeat(r, data):
    at = r.randrange(len(data) + 1)
    piece = data[at:at + r.choice((5, 50, 500))]
    return data[:at] + piece * r.choice((2, 10, 200)) + data[at:]


def _nest(r, data):
    """Deep nesting, spliced in as text (json.dumps could not write it)."""
    depth = r.choice((100, 1000, 5000, 100_000))
    opener, closer = r.choice(((b"[", b"]"), (b'{"a":', b"}")))
    deep = opener * depth + b"1" + closer * depth
    if r.random() < 0.5:
        return b'{"traceEvents":[{"ph":"X","name":"n","ts":1,"dur":1,"pid":1,"tid":1,"args":' + deep + b"}]}"
    at = data.find(b"{", r.randrange(len(data) + 1))
    return data[:at + 1] + b'"args":' + deep + b"," + data[at + 1:] if at >= 0 else deep


def _weird(r):
    kind = r.random()
    if kind < 0.45:
        return r.choice(_WEIRD_NUMBERS)
    if kind < 0.75:
        return r.choice(_WEIRD_TEXT)
    return r.choice([None, True, False, [], {}, [1, "x"], {"x": None}, [[[]]]])


def _walk(value, limit=20_000, depth=48):
    """``(path, node)`` pairs of a parsed document, breadth first, at most
    ``limit`` of them and ``depth`` levels down (deeply nested inputs would
    otherwise cost depth^2 in paths)."""
    out, queue, at = [], [((), value)], 0
    while at < len(queue) and len(out) < limit:
        path, node = queue[at]
        at += 1
        out.append((path, node))
        room = limit - len(queue)
        if len(path) < depth and room > 0:
            if isinstance(node, dict):
                queue.extend(itertools.islice(((path + (k,), v) for k, v in node.items()), room))
            elif isinstance(node, list):
                queue.extend(itertools.islice(((path + (i,), v) for i, v in enumerate(node)), room))
    return out


def _small(node, limit=2000, depth=16):
    """Fewer than ``limit`` nodes, none of them a container ``depth`` levels down."""
    nodes = _walk(node, limit, depth)
    return len(nodes) < limit and not any(len(p) == depth and isinstance(v, (list, dict)) and v for p, v in nodes)


def _set(root, path, value):
    if not path:
        return value
    target = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return root


#: Bytes one duplication in ``_structure`` may add (20 steps of 50 copies of
#: a growing list would otherwise take minutes and gigabytes).
_MAX_GROWTH = 50_000
#: No duplication once the document is about this many bytes.
_MAX_SIZE = 1 << 20


def _structure(r, data):
    """Parse, then change a few nodes: wrong types, huge numbers, deleted
    keys, duplicated events, random phases; fall back to a byte flip."""
    try:
        root = json.loads(data)
    except (ValueError, RecursionError):
        return _flip(r, data)
    size = len(data)
    for _ in range(r.choice((1, 1, 2, 5, 20))):
        nodes = _walk(root)
        path, value = r.choice(nodes)
        action = r.random()
        if action < 0.5:
            root = _set(root, path, _weird(r))
        elif action < 0.65 and isinstance(value, dict) and value:
            del value[r.choice(list(value))]
        elif action < 0.75 and isinstance(value, dict):
            value[r.choice(["ph", "ts", "dur", "pid", "tid", "id", "bp", "args", "name", "cat", "s", "id2",
                            "bind_id", "flow_in", "flow_out", "parentSpanId", "startTimeUnixNano"])] = _weird(r)
        elif action < 0.85 and isinstance(value, dict):
            value["ph"] = r.choice(_PHASES)
        elif action < 0.95 and isinstance(value, list) and value:
            i = r.randrange(len(value))
            copies = r.choice((1, 5, 50))
            if size <= _MAX_SIZE and _small(value[i]):  # duplication must not grow exponentially
                piece = json.dumps(value[i])
                if len(piece) * copies <= _MAX_GROWTH:
                    value[i:i] = [json.loads(piece)] * copies
                    size += len(piece) * copies
        elif isinstance(value, list):
            r.shuffle(value)
    return json.dumps(root, allow_nan=True).encode()


def _random_chrome(r, data):
    """Random JSON in Chrome trace shape (seed ignored)."""
    keys = ["ph", "name", "cat", "ts", "dur", "tdur", "pid", "tid", "id", "id2", "bp", "s", "args", "bind_id",
            "flow_in", "flow_out", "sf", "tts"]
    events = []
    for _ in range(r.choice((0, 1, 3, 10, 60))):
        event = {"ph": r.choice(_PHASES[:20])}
        for key in r.sample(keys, r.randrange(len(keys))):
            event[key] = _weird(r) if r.random() < 0.4 else {
                "ts": r.randrange(-5, 50) / r.choice((1, 2, 3)), "dur": r.randrange(-2, 20),
                "pid": r.choice((1, 2, "1", "a")), "tid": r.choice((1, 2, "1", "b")),
                "id": r.choice((1, "0x1", {"local": "0x2"})), "ph": r.choice(_PHASES),
                "args": {"name": "n", "sort_index": r.randrange(5)}, "bp": "e", "s": r.choice("gpt")}.get(key, "x")
        events.append(event)
    shape = r.random()
    if shape < 0.4:
        root = events
    elif shape < 0.9:
        root = {"traceEvents": events}
        for key in ("displayTimeUnit", "baseTimeNanoseconds", "distributedInfo", "deviceProperties",
                    "schemaVersion", "otherData", "samples", "stackFrames"):
            if r.random() < 0.3:
                root[key] = _weird(r) if r.random() < 0.5 else {"rank": 0, "world_size": 2}
    else:
        root = _weird(r)
    return json.dumps(root, allow_nan=True).encode()


def _random_otlp(r, data):
    """Random JSON in OTLP shape (seed ignored)."""
    def pick(good):
        return _weird(r) if r.random() < 0.3 else good

    spans = [{k: pick(v) for k, v in {
        "traceId": "%032x" % r.randrange(3), "spanId": "%016x" % r.randrange(6),
        "parentSpanId": r.choice(("", "%016x" % r.randrange(6))), "name": "s", "kind": r.randrange(6),
        "startTimeUnixNano": str(r.randrange(100)), "endTimeUnixNano": str(r.randrange(100)),
        "attributes": [{"key": "k", "value": pick({"intValue": "5"})}],
        "links": [{"traceId": "%032x" % 1, "spanId": "%016x" % r.randrange(6)}],
        "status": {"code": pick(1)}, "events": [{"timeUnixNano": pick("3")}]}.items() if r.random() < 0.9}
        for _ in range(r.choice((0, 1, 4, 20)))]
    root = {"resourceSpans": [{"resource": pick({"attributes": [{"key": "service.name",
                                                                 "value": {"stringValue": pick("svc")}}]}),
                               "scopeSpans": pick([{"scope": pick({"name": "sc"}), "spans": pick(spans)}])}
                              for _ in range(r.choice((0, 1, 2)))]}
    return json.dumps(root, allow_nan=True).encode()


def _encoding(r, data):
    """Byte-order marks, UTF-16, invalid UTF-8."""
    choice = r.random()
    if choice < 0.3:
        return b"\xef\xbb\xbf" + data
    if choice < 0.6:
        try:
            return data.decode("utf-8").encode(r.choice(("utf-16", "utf-32", "latin-1")))
        except (UnicodeError, ValueError):
            return data
    at = r.randrange(len(data) + 1)
    return data[:at] + r.choice((b"\xc3", b"\xff", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80")) + data[at:]


def _lanes(r, data):
    """Lane-packing stress on one thread (seed ignored): a staircase of
    partial overlaps, deep nesting, unclosed B, equal intervals, shuffled."""
    n = r.choice((300, 1000, 3000))
    kind = r.randrange(4)
    if kind == 0:
        events = [{"ph": "X", "name": "s", "ts": i, "dur": n, "pid": 1, "tid": 1} for i in range(n)]
    elif kind == 1:
        events = [{"ph": "X", "name": "s", "ts": i, "dur": 2 * (n - i), "pid": 1, "tid": 1} for i in range(n)]
    elif kind == 2:
        events = [{"ph": "B", "name": "s", "ts": i // 2, "pid": 1, "tid": r.choice((1, "1"))} for i in range(n)]
    else:
        events = [{"ph": "X", "name": "s", "ts": r.randrange(5), "dur": r.randrange(5), "pid": 1, "tid": 1}
                  for _ in range(n)]
    r.shuffle(events) if r.random() < 0.5 else None
    return json.dumps(events).encode()


_TIMES = [b"0", b"-0", b"-1", b"1E+2", b"1e-7", b"0.0000001", b"1.0000000000000000000001", b"9223372036854775.807",
          b"9223372036854775.808", b"18446744073709551616", b"1e308", b"-1e308", b'"12.5"', b'"-3"', b'""', b'"0x10"',
          b"4611686018427387.904", b"123456789012345678901234567890.5"]


def _times(r, data):
    """Extreme ts/dur/time fields written as raw JSON numbers (texts no
    ``json.dumps`` makes), in Chrome and OTLP shape (seed ignored)."""
    def t():
        return r.choice(_TIMES).decode()

    if r.random() < 0.7:
        events = [f'{{"ph":"{r.choice("XXBEbeisfC")}","name":"t","cat":"c","id":1,"ts":{t()},"dur":{t()},'
                  f'"pid":1,"tid":{r.choice(("1", "2", t()))},"bp":"e","args":{{"v":{t()}}}}}'
                  for _ in range(r.choice((1, 4, 30)))]
        return ("[" + ",".join(events) + "]").encode()
    spans = [f'{{"traceId":"{"%032x" % 1}","spanId":"{"%016x" % (i + 1)}","name":"s",'
             f'"startTimeUnixNano":{t()},"endTimeUnixNano":{t()}}}' for i in range(r.choice((1, 4, 30)))]
    return ('{"resourceSpans":[{"scopeSpans":[{"spans":[' + ",".join(spans) + "]}]}]}").encode()


#: name -> (weight, mutation(random.Random, bytes) -> bytes)
MUTATIONS = {
    "truncate": (3, _truncate), "flip": (3, _flip), "insert": (2, _insert), "delete": (2, _delete),
    "repeat": (1, _repeat), "nest": (1, _nest), "structure": (5, _structure), "random_chrome": (2, _random_chrome),
    "random_otlp": (1, _random_otlp), "encoding": (1, _encoding), "lanes": (1, _lanes), "times": (1, _times),
}


# ------------------------------------------------------------------ cases
_SEEDS = None


def _seeds():
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = seed_inputs()
    return _SEEDS


def case(seed, index):
    """Input ``index`` of campaign ``seed``: a dict with ``data`` (the file's
    bytes), ``suffix`` (``.json`` or ``.json.gz``), ``strict``, ``format``
    and ``what`` (the seed file and the mutations, for the report)."""
    r = random.Random(f"{seed}:{index}")
    name, data = r.choice(_seeds())
    names, weights = zip(*((k, w) for k, (w, _) in MUTATIONS.items()))
    steps = r.choices(names, weights, k=r.choice((1, 1, 1, 2, 3)))
    for step in steps:
        data = MUTATIONS[step][1](r, data)
    suffix = ".json"
    packing = r.random()
    if packing < 0.12:
        data, suffix = gzip.compress(data, mtime=0), ".json.gz"
    elif packing < 0.16:  # broken gzip: truncated or flipped after compressing
        data, suffix = r.choice((_truncate, _flip))(r, gzip.compress(data, mtime=0)), ".json.gz"
    strict = r.random() < 0.5
    fmt = r.choice(("auto",) * 6 + ("chrome", "kineto", "otlp"))
    return {"data": data, "suffix": suffix, "strict": strict, "format": fmt,
            "what": f"{name} | {'+'.join(steps)} | {suffix} strict={strict} format={fmt}"}


def _lanes_overlap(trace):
    """Spans of one (thread, lane) that overlap in time (0 when none)."""
    import numpy as np

    s = trace.spans
    if s.num_rows < 2:
        return 0
    thread, lane = s.column("thread").to_numpy(), s.column("lane").to_numpy()
    start = s.column("start_ns").to_numpy()
    end = start + s.column("duration_ns").to_numpy()
    order = np.lexsort((end, start, lane, thread))
    same = (thread[order][1:] == thread[order][:-1]) & (lane[order][1:] == lane[order][:-1])
    return int((same & (start[order][1:] < end[order][:-1])).sum())


def _target(name):
    """``module:function`` -> a callable of ``(path, format, strict)``; a
    function without ``format``/``progress`` (one importer) gets ``strict`` only."""
    import importlib
    import inspect

    module, _, attr = name.partition(":")
    function = getattr(importlib.import_module(module), attr)
    if "format" in inspect.signature(function).parameters:
        return lambda path, fmt, strict: function(path, format=fmt, strict=strict, progress=False)
    return lambda path, fmt, strict: function(path, strict=strict)


def check(item, folder, *, target="gpuviz.trace:load"):
    """Run one input through ``target`` (``module:function``, default
    :func:`gpuviz.trace.load`). Returns ``(outcome, detail)``: ``("loaded",
    None)``, ``("format_error", None)`` or ``("crash", text)`` (exception
    type and traceback, or what is wrong with the result)."""
    import traceback

    from .errors import TraceFormatError
    from .model import Trace

    path = Path(folder) / f"input{item['suffix']}"
    path.write_bytes(item["data"])
    try:
        result = _target(target)(str(path), item["format"], item["strict"])
    except TraceFormatError:
        return "format_error", None
    except (Exception, RecursionError, MemoryError) as exc:  # everything else is a finding
        return "crash", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
    if not isinstance(result, Trace):
        return "crash", f"load returned {type(result).__name__}, not a Trace"
    overlaps = _lanes_overlap(result)
    return ("crash", f"{overlaps} pairs of spans overlap in one lane") if overlaps else ("loaded", None)


class DifferentialMismatch(AssertionError):
    """:func:`differential_load` found the two decodes of one input differ."""


#: The Trace tables :func:`differential_load` compares.
_TABLES = ("spans", "links", "threads", "processes", "counters", "instants")


def differential_load(path, format="auto", strict=False, progress=False):
    """Load ``path`` with and without the located events array
    (``jsonevents.LOCATE_EVENTS``): returns the Trace when both give the
    same tables, report and metadata, re-raises the TraceFormatError when
    both raise the same message, and raises :class:`DifferentialMismatch`
    otherwise. ``progress`` is passed on to both loads."""
    from . import load
    from .errors import TraceFormatError
    from .formats import jsonevents

    previous = jsonevents.LOCATE_EVENTS

    def outcome(locate):
        jsonevents.LOCATE_EVENTS = locate
        try:
            return load(path, format=format, strict=strict, progress=progress), None
        except TraceFormatError as exc:
            return None, exc
        finally:
            jsonevents.LOCATE_EVENTS = previous

    (located, located_error), (full, full_error) = outcome(True), outcome(False)
    if located_error is not None or full_error is not None:
        if str(located_error) != str(full_error):
            raise DifferentialMismatch(f"located: {located_error!r}; full pass: {full_error!r}")
        raise located_error
    for name in _TABLES:
        if not getattr(located, name).equals(getattr(full, name)):
            raise DifferentialMismatch(f"the {name} tables differ")
    if located.report != full.report or located.metadata != full.metadata:
        raise DifferentialMismatch(f"reports or metadata differ: {located.report} {located.metadata} / "
                                   f"{full.report} {full.metadata}")
    return located


# ------------------------------------------------------------------ running
def _worker(seed, start, stop, target, memory_gb):
    """Worker loop: ``S i`` before input ``i``, ``D i outcome`` after it (and
    a JSON line with the detail of a crash)."""
    import resource
    import tempfile

    if memory_gb:
        limit = int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _seeds()
    out = sys.stdout
    with tempfile.TemporaryDirectory(prefix="gpuviz-fuzz-") as folder:
        for i in range(start, stop):
            out.write(f"S {i}\n")
            out.flush()
            outcome, detail = check(case(seed, i), folder, target=target)
            out.write(f"D {i} {outcome}\n" if detail is None else f"D {i} {outcome} {json.dumps(detail)}\n")
            out.flush()


class _Worker:
    """One worker subprocess and what it is on; its output is read raw
    (``os.read``) so that no line waits in a buffer that ``select`` cannot see."""

    def __init__(self, seed, start, stop, target, memory_gb, log):
        self.next, self.stop, self.current, self.since, self.buffer = start, stop, None, time.monotonic(), b""
        self.cpu_at, self.started = None, False
        command = [sys.executable, "-m", "gpuviz.trace.fuzz", "--worker", "--seed", str(seed), "--start",
                   str(start), "--stop", str(stop), "--target", target, "--memory-gb", str(memory_gb)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, bufsize=0,
                                        cwd=str(Path(__file__).resolve().parents[2]))

    def cpu_seconds(self):
        """CPU seconds the worker has used (Linux ``/proc``; None elsewhere)."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def overdue(self, now, timeout):
        """The current input has used ``timeout`` CPU seconds (or, where CPU
        time is unknown or the worker does not run at all, 10x that of wall
        time): a busy, shared machine starves a niced worker, so wall time
        alone would report hangs that are not."""
        if self.current is None:
            return False
        if now - self.since > 10 * timeout:
            return True
        cpu = self.cpu_seconds()
        return (now - self.since > timeout) if cpu is None or self.cpu_at is None else cpu - self.cpu_at > timeout

    def lines(self):
        """Complete lines read now, or None at the end of the output."""
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        return [line.decode() for line in lines]


def _record(summary, seed, index, outcome, detail, out):
    summary[outcome] = summary.get(outcome, 0) + 1
    if outcome in ("crash", "hang"):
        item = case(seed, index)
        failure = {"seed": seed, "index": index, "outcome": outcome, "what": item["what"], "detail": detail}
        summary["failures"].append(failure)
        if out is not None:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / f"{outcome}-{seed}-{index}{item['suffix']}").write_bytes(item["data"])


def _service(w, ready, now, timeout, record):
    """Take in what worker ``w`` printed, or kill it when its input is
    overdue. Returns None while it runs on, else the input to restart from
    (``w.stop`` when it is done)."""
    if w.process.stdout not in ready:
        if not w.overdue(now, timeout):
            return None
        w.process.kill()
        w.process.wait()
        record(w.current, "hang", f"still running after {timeout} CPU s ({now - w.since:.0f} s wall)")
        return w.current + 1
    lines = w.lines()
    for line in lines or ():
        if line.startswith("S "):
            w.current, w.since, w.cpu_at, w.started = int(line.split()[1]), now, w.cpu_seconds(), True
        elif line.startswith("D "):
            parts = line.split(" ", 3)
            record(int(parts[1]), parts[2], json.loads(parts[3]) if len(parts) > 3 else None)
            w.next, w.current = int(parts[1]) + 1, None
    if lines is not None:
        return None
    code = w.process.wait()  # end of output: the worker finished or died
    if w.current is not None:
        record(w.current, "crash", f"worker died (exit status {code})")
        return w.current + 1
    if not w.started and w.next < w.stop:
        raise RuntimeError(f"fuzz worker exited with status {code} before its first input (see its log)")
    return w.next


def run(count, *, seed=0, start=0, workers=1, timeout=10.0, target="gpuviz.trace:load", memory_gb=4, out=None,
        progress=None):
    """Run inputs ``start .. start+count-1`` of campaign ``seed``.

    Each of ``workers`` subprocesses takes a contiguous range; an input
    that uses more than ``timeout`` CPU seconds (or 10x that in wall time)
    is a hang (its worker is killed and restarted after it), a worker that dies is a crash of the input it
    was on. ``memory_gb`` caps each worker's address space. ``out`` (a
    folder) receives a reproducer file per failure. ``progress(done)`` is
    called now and then.

    Returns a summary dict: ``count``, ``loaded``, ``format_error``,
    ``crash``, ``hang`` (counts), ``failures`` (seed, index, what, detail
    for each crash or hang) and ``seconds``. Does not stop at the first
    failure and does not minimise failing inputs.
    """
    started = time.monotonic()
    summary = {"count": count, "seed": seed, "start": start, "loaded": 0, "format_error": 0, "crash": 0,
               "hang": 0, "failures": []}
    log = open(os.devnull, "w") if out is None else open(Path(out).mkdir(parents=True, exist_ok=True) or
                                                         Path(out) / "workers.log", "a")
    bounds = [start + count * k // max(1, workers) for k in range(max(1, workers) + 1)]
    active = [_Worker(seed, a, b, target, memory_gb, log) for a, b in zip(bounds, bounds[1:]) if b > a]
    last_report = time.monotonic()

    def record(index, outcome, detail):
        _record(summary, seed, index, outcome, detail, out)

    try:
        while active:
            ready, _, _ = select.select([w.process.stdout for w in active], [], [], 0.5)
            now = time.monotonic()
            for w in list(active):
                resume = _service(w, ready, now, timeout, record)
                if resume is not None:
                    active.remove(w)
                    if resume < w.stop:
                        active.append(_Worker(seed, resume, w.stop, target, memory_gb, log))
            if progress is not None and now - last_report > 5:
                progress(sum(summary[k] for k in ("loaded", "format_error", "crash", "hang")))
                last_report = now
    finally:
        for w in active:
            w.process.kill()
            w.process.wait()
        log.close()
    summary["seconds"] = round(time.monotonic() - started, 1)
    return summary


def main(argv=None):
    """``python -m gpuviz.trace.fuzz --count 100000``: run a campaign, print
    its summary; exit status 1 when anything crashed or hung."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpuviz.trace.fuzz", description=main.__doc__)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per input before it is a hang")
    parser.add_argument("--memory-gb", type=float, default=4, help="address-space cap of a worker (0: none)")
    parser.add_argument("--target", default="gpuviz.trace:load", help="module:function to fuzz")
    parser.add_argument("--differential", action="store_true",
                        help="fuzz differential_load: the located events array against the full header pass")
    parser.add_argument("--out", default=None, help="folder for reproducers, the worker log and summary.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.differential:
        args.target = "gpuviz.trace.fuzz:differential_load"
    if args.worker:
        _worker(args.seed, args.start, args.stop, args.target, args.memory_gb)
        return 0

    def report(done):
        print(f"  {done}/{args.count} inputs, {time.monotonic() - t0:.0f} s", flush=True)

    t0 = time.monotonic()
    summary = run(args.count, seed=args.seed, start=args.start, workers=args.workers, timeout=args.timeout,
                  target=args.target, memory_gb=args.memory_gb, out=args.out, progress=report)
    for f in summary["failures"]:
        print(f"{f['outcome'].upper()} seed {f['seed']} index {f['index']}: {f['what']}\n{f['detail']}")
    print(f"fuzz: {summary['count']} inputs (seed {summary['seed']}, from {summary['start']}) in "
          f"{summary['seconds']} s: {summary['loaded']} loaded, {summary['format_error']} TraceFormatError, "
          f"{summary['crash']} crashes, {summary['hang']} hangs")
    if args.out:
        (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=1))
    return 1 if summary["crash"] or summary["hang"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
