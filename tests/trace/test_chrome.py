"""Chrome Trace Event JSON: generated traces against the spans they were made
from, exact ns times, truncation, strict mode, non-traces."""

import gzip
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.formats.chrome import read_chrome
from gpuviz.trace.load import load


def us_text(ns):
    """Exact decimal text in us for an integer ns value."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}" if ns % 1000 == 0 else f"{sign}{ns // 1000}.{ns % 1000:03d}"


@st.composite
def generated_trace(draw):
    """(event list as JSON text pieces, expected spans, expected parent names).

    Each thread gets a properly nested tree of spans (strictly inside their
    parent, siblings apart), written as X or as a B/E pair, plus optional
    free X spans that may overlap anything. Events are shuffled; pid/tid are
    written as numbers or strings at random, per event.
    """
    nthreads = draw(st.integers(1, 3))
    events, expected, parents = [], [], {}
    counter = [0]

    def ident(value):
        return json.dumps(value) if draw(st.booleans()) else json.dumps(str(value))

    def span_event(pid, tid, name, start, dur, use_be):
        if use_be:
            return [f'{{"ph":"B","pid":{ident(pid)},"tid":{ident(tid)},"ts":{us_text(start)},"name":"{name}"}}',
                    f'{{"ph":"E","pid":{ident(pid)},"tid":{ident(tid)},"ts":{us_text(start + dur)}}}']
        return [f'{{"ph":"X","pid":{ident(pid)},"tid":{ident(tid)},"ts":{us_text(start)},'
                f'"dur":{us_text(dur)},"name":"{name}","cat":"c{counter[0] % 3}"}}']

    def tree(pid, tid, lo, hi, level, parent):
        t = lo + draw(st.integers(1, 5000))
        while t < hi - 2 and draw(st.integers(0, 3)) > 0:
            length = draw(st.integers(1, max(1, min(hi - t - 1, 200_000))))
            counter[0] += 1
            name = f"s{counter[0]}"
            events.extend(span_event(pid, tid, name, t, length, draw(st.booleans())))
            expected.append(((str(pid), str(tid)), name, t, length))
            parents[name] = parent
            if level < 4 and length > 4:
                tree(pid, tid, t, t + length, level + 1, name)
            t += length + draw(st.integers(1, 5000))

    extras = draw(st.booleans())
    base = draw(st.sampled_from([0, 1_695_835_535_123_456_789, 7_000_001]))
    for k in range(nthreads):
        pid, tid = 100 + k % 2, 7 + k
        tree(pid, tid, base, base + 10_000_000, 0, None)
        if extras:
            for _ in range(draw(st.integers(0, 4))):
                counter[0] += 1
                start = base + draw(st.integers(0, 10_000_000))
                dur = draw(st.integers(0, 3_000_000))
                name = f"x{counter[0]}"
                events.extend(span_event(pid, tid, name, start, dur, False))
                expected.append(((str(pid), str(tid)), name, start, dur))
    order = draw(st.permutations(range(len(events))))
    return [events[i] for i in order], expected, (None if extras else parents)


def spans_of(trace):
    tid = trace.threads.column("tid").to_pylist()
    pid = trace.processes.column("pid").to_pylist()
    proc = trace.threads.column("process").to_pylist()
    s = trace.spans
    out = []
    for th, name, start, dur in zip(s.column("thread").to_pylist(), s.column("name").to_pylist(),
                                    s.column("start_ns").to_pylist(), s.column("duration_ns").to_pylist()):
        out.append(((pid[proc[th]], tid[th]), name, start, dur))
    return out


def write(tmp_path, text, name="t.json"):
    path = tmp_path / name
    path.write_text(text)
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(generated_trace(), st.booleans())
def test_generated_traces_match_their_spans(tmp_path, case, object_form):
    events, expected, parents = case
    body = "[" + ",\n".join(events) + "]"
    text = '{"traceEvents": ' + body + ', "displayTimeUnit": "ns"}' if object_form else body
    trace = read_chrome(write(tmp_path, text), strict=True)
    assert sorted(spans_of(trace)) == sorted(expected)
    names = trace.spans.column("name").to_pylist()
    if parents is not None:
        assert trace.report.get("lanes_added", 0) == 0
        got = [names[p] if p >= 0 else None for p in trace.spans.column("parent").to_pylist()]
        assert got == [parents[n] for n in names]
    # No span lost or moved, whatever the overlaps: one per expected span.
    assert trace.span_count == len(expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated_trace(), st.data())
def test_truncated_traces_keep_complete_events(tmp_path, case, data):
    events, expected, _ = case
    assume(events)
    text = "[" + ",\n".join(events) + "]"
    first_end = len("[") + len(events[0])
    cut = data.draw(st.integers(first_end, len(text) - 1))
    path = write(tmp_path, text[:cut])
    trace = read_chrome(path)
    assert trace.report.get("truncated", 0) == 1 or trace.report.get("bad_json", 0) == 1
    # Every complete X before the cut is kept (B/E may become incomplete spans).
    complete = [e for e in events if text.find(e) + len(e) <= cut]
    xs = {json.loads(e)["name"] for e in complete if '"ph":"X"' in e}
    assert xs <= set(trace.spans.column("name").to_pylist())
    with pytest.raises(TraceFormatError, match="truncated|damage|byte"):
        read_chrome(path, strict=True)


def test_fractional_microseconds_are_exact(tmp_path):
    path = write(tmp_path, '[{"ph":"X","pid":1,"tid":1,"ts":1.1,"dur":0.001,"name":"a"},'
                           '{"ph":"X","pid":1,"tid":1,"ts":1695835535123456.789,"dur":2.5,"name":"b"},'
                           '{"ph":"X","pid":1,"tid":1,"ts":"12","dur":1e1,"name":"c"},'
                           '{"ph":"X","pid":1,"tid":1,"ts":0.0004,"dur":1,"name":"d"}]')
    s = read_chrome(path).spans
    assert s.column("start_ns").to_pylist() == [1100, 1695835535123456789, 12000, 0]
    assert s.column("duration_ns").to_pylist() == [1, 2500, 10000, 1000]


def test_string_and_number_ids_are_one_thread(tmp_path):
    path = write(tmp_path, '[{"ph":"X","pid":"25738","tid":1,"ts":0,"dur":1,"name":"a"},'
                           '{"ph":"X","pid":25738,"tid":"1","ts":2,"dur":1,"name":"b"}]')
    t = read_chrome(path)
    assert t.threads.num_rows == 1 and t.processes.column("pid").to_pylist() == ["25738"]


def test_begin_end_rules(tmp_path):
    path = write(tmp_path, '[{"ph":"B","pid":1,"tid":1,"ts":0,"name":"a"},'
                           '{"ph":"E","pid":1,"tid":1,"ts":1,"name":"zz"},'
                           '{"ph":"E","pid":1,"tid":1,"ts":2},'
                           '{"ph":"B","pid":1,"tid":1,"ts":3,"name":"open"},'
                           '{"ph":"X","pid":1,"tid":1,"ts":4,"dur":6,"name":"x"}]')
    t = read_chrome(path)
    assert t.report["mismatched_end_name"] == 1 and t.report["unmatched_end"] == 1
    assert t.report["unclosed_begin"] == 1
    s = t.spans.to_pandas().set_index("name")
    # The unclosed B ends at the thread's last timestamp (the end of x, 10 us).
    assert s.loc["open", "duration_ns"] == 7000 and bool(s.loc["open", "incomplete"])
    with pytest.raises(TraceFormatError, match=r"at event 1: mismatched_end_name"):
        read_chrome(path, strict=True)


def test_flows_bind_by_the_rules(tmp_path):
    events = [
        '{"ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"name":"outer"}',
        '{"ph":"X","pid":1,"tid":1,"ts":2,"dur":3,"name":"inner"}',
        '{"ph":"s","pid":1,"tid":1,"ts":3,"name":"f","cat":"c","id":"0x1"}',
        '{"ph":"X","pid":1,"tid":2,"ts":20,"dur":5,"name":"enclosing"}',
        '{"ph":"X","pid":1,"tid":2,"ts":30,"dur":5,"name":"next"}',
        '{"ph":"f","pid":1,"tid":2,"ts":22,"name":"f","cat":"c","id":"0x1"}',
        '{"ph":"s","pid":1,"tid":1,"ts":7,"name":"f","cat":"c","id":"0x2"}',
        '{"ph":"f","pid":1,"tid":2,"ts":21,"name":"f","cat":"c","id":"0x2","bp":"e"}',
        '{"ph":"X","pid":1,"tid":3,"ts":40,"dur":2,"name":"v2src","bind_id":"k","flow_out":true}',
        '{"ph":"X","pid":1,"tid":3,"ts":50,"dur":2,"name":"v2dst","bind_id":"k","flow_in":true}',
    ]
    t = read_chrome(write(tmp_path, "[" + ",".join(events) + "]"))
    names = t.spans.column("name").to_pylist()
    pairs = {(names[a], names[b]) for a, b in zip(t.links.column("source").to_pylist(),
                                                  t.links.column("target").to_pylist())}
    # s binds to the innermost enclosing slice; f without bp="e" to the next slice that begins.
    assert pairs == {("inner", "next"), ("outer", "enclosing"), ("v2src", "v2dst")}


@pytest.mark.parametrize("ids", [(1, 2, 3), ('"0x1"', '"0x2"', '"01"'), (5, 10 ** 15, 3)])
def test_flow_keys_keep_their_fields_apart(tmp_path, ids):
    """Flows are keyed by (cat, name, id) as three fields: ("a\\0b", "c")
    and ("a", "b\\0c") are two flows (their texts joined with NUL were one);
    the id is its text ("1" and 1 agree, "01" and 1 do not), whether ids are
    small numbers, text, or numbers far apart (each a way of its own to
    make the keys)."""
    a, b, c = ids
    slices = ['{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":5,"name":"%s"}' % (t, n)
              for t, n in [(0, "s1"), (10, "s2"), (40, "s3"), (50, "s4"), (60, "s5")]]
    slices += ['{"ph":"X","pid":1,"tid":2,"ts":%d,"dur":5,"name":"%s"}' % (t, n)
               for t, n in [(20, "d1"), (30, "d2"), (70, "d3"), (80, "d4"), (90, "d5")]]

    def flow(ph, ts, cat, name, id_):
        return '{"ph":"%s","pid":1,"tid":%d,"ts":%d,"cat":"%s","name":"%s","id":%s,"bp":"e"}' % (
            ph, 1 if ph == "s" else 2, ts, cat, name, id_)
    one = '"%s"' % a if isinstance(a, int) else a           # a quoted number: the same id text
    events = slices + [flow("s", 1, "a\\u0000b", "c", a), flow("s", 11, "a", "b\\u0000c", a),
                       flow("f", 21, "a\\u0000b", "c", one), flow("f", 31, "a", "b\\u0000c", a),
                       flow("s", 41, "k", "k", b), flow("f", 71, "k", "k", b),
                       flow("s", 51, "k", "k", c), flow("f", 81, "k", "k", c),
                       flow("s", 61, "k", "k", 1), flow("f", 91, "k", "k", 1)]
    t = read_chrome(write(tmp_path, "[" + ",".join(events) + "]"))
    names = t.spans.column("name").to_pylist()
    pairs = [(names[s], names[d]) for s, d in zip(t.links.column("source").to_pylist(),
                                                  t.links.column("target").to_pylist())]
    assert pairs == [("s1", "d1"), ("s2", "d2"), ("s3", "d3"), ("s4", "d4"), ("s5", "d5")]
    assert t.report == {}


def test_flow_keys_of_many_categories_and_far_apart_ids(tmp_path):
    """Five (cat, name) pairs and ids 2^62 - 1 apart: the combined keys
    (pair x id range) do not fit in int64 even with the pairs renumbered,
    so the ids are renumbered too; no two flows share a key (pair 4 x 2^62
    wrapped to pair 0's keys)."""
    slices, flows = [], []
    for k in range(5):
        slices += ['{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":5,"name":"s%d"}' % (10 * k, k),
                   '{"ph":"X","pid":1,"tid":2,"ts":%d,"dur":5,"name":"d%d"}' % (100 + 10 * k, k)]
        flows += ['{"ph":"%s","pid":1,"tid":%d,"ts":%d,"cat":"c%d","name":"f","id":0,"bp":"e"}'
                  % (ph, tid, ts + 10 * k, k) for ph, tid, ts in (("s", 1, 1), ("f", 2, 101))]
    slices += ['{"ph":"X","pid":1,"tid":1,"ts":60,"dur":5,"name":"s5"}',
               '{"ph":"X","pid":1,"tid":2,"ts":160,"dur":5,"name":"d5"}']
    flows += ['{"ph":"%s","pid":1,"tid":%d,"ts":%d,"cat":"c0","name":"f","id":4611686018427387903,"bp":"e"}'
              % (ph, tid, ts) for ph, tid, ts in (("s", 1, 61), ("f", 2, 161))]
    t = read_chrome(write(tmp_path, "[" + ",".join(slices + flows) + "]"))
    names = t.spans.column("name").to_pylist()
    pairs = sorted((names[s], names[d]) for s, d in zip(t.links.column("source").to_pylist(),
                                                       t.links.column("target").to_pylist()))
    assert pairs == [(f"s{k}", f"d{k}") for k in range(6)]
    assert t.report == {}


@pytest.mark.parametrize("value", ['"2"', "1" + "0" * 400, "null", "[1]"])
def test_unusable_sort_index_is_reported(tmp_path, value):
    """A thread_sort_index that is not a number within int64 leaves the
    thread's default order and is reported; strict raises."""
    events = ['{"ph":"M","pid":1,"tid":5,"name":"thread_sort_index","args":{"sort_index":%s}}' % value,
              '{"ph":"X","pid":1,"tid":5,"ts":1,"dur":1,"name":"a"}']
    path = write(tmp_path, "[" + ",".join(events) + "]")
    t = read_chrome(path)
    assert t.report == {"bad_sort_index": 1} and t.threads.column("sort_index").to_pylist() == [0]
    with pytest.raises(TraceFormatError, match="bad_sort_index"):
        read_chrome(path, strict=True)


def test_async_counters_instants_metadata(tmp_path):
    events = [
        '{"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"proc"}}',
        '{"ph":"M","pid":1,"tid":5,"name":"thread_name","args":{"name":"worker"}}',
        '{"ph":"M","pid":1,"tid":5,"name":"thread_sort_index","args":{"sort_index":-3}}',
        '{"ph":"M","pid":1,"name":"process_labels","args":{"labels":"GPU"}}',
        '{"ph":"b","pid":1,"tid":5,"ts":1,"name":"req","cat":"net","id":"0x1"}',
        '{"ph":"b","pid":1,"tid":5,"ts":2,"name":"req","cat":"net","id":"0x2"}',
        '{"ph":"n","pid":1,"tid":5,"ts":3,"name":"mark","cat":"net","id":"0x1"}',
        '{"ph":"e","pid":1,"tid":5,"ts":4,"name":"req","cat":"net","id":"0x1"}',
        '{"ph":"e","pid":1,"tid":5,"ts":6,"name":"req","cat":"net","id":"0x2"}',
        '{"ph":"S","pid":1,"tid":5,"ts":10,"name":"job","id":7}',
        '{"ph":"T","pid":2,"tid":5,"ts":12,"name":"job","id":7,"args":{"step":"a"}}',
        '{"ph":"F","pid":1,"tid":5,"ts":15,"name":"job","id":7}',
        '{"ph":"C","pid":1,"ts":1,"name":"mem","args":{"used":5,"free":7.5}}',
        '{"ph":"i","pid":1,"tid":5,"ts":2,"name":"t-inst"}',
        '{"ph":"I","ts":3,"name":"g-inst","s":"g"}',
        '{"ph":"i","pid":1,"tid":5,"ts":4,"name":"p-inst","s":"p"}',
        '{"ph":"P","pid":1,"tid":5,"ts":4,"name":"sample"}',
    ]
    t = read_chrome(write(tmp_path, "[" + ",".join(events) + "]"))
    assert t.processes.column("name").to_pylist()[0] == "proc"
    assert t.processes.column("labels").to_pylist()[0] == "GPU"
    th = t.threads.to_pandas()
    assert th.loc[th.tid == "5", "name"].item() == "worker" and th.loc[th.tid == "5", "sort_index"].item() == -3
    s = t.spans.to_pandas()
    kinds = th.kind.to_numpy()[s.thread.to_numpy()]
    assert (kinds == "async").sum() == 4      # two b/e spans, the S..F span and its step
    assert sorted(s.duration_ns[kinds == "async"].tolist()) == [3000, 3000, 4000, 5000]
    assert t.links.column("kind").to_pylist() == ["async-step"]
    c = t.counters.to_pandas()
    assert sorted(zip(c.series, c.value)) == [("free", 7.5), ("used", 5.0)]
    i = t.instants.to_pandas().set_index("name")
    assert i.loc["g-inst", "scope"] == "g" and np.isnan(i.loc["g-inst", "process"])
    assert i.loc["p-inst", "scope"] == "p" and np.isnan(i.loc["p-inst", "thread"])
    assert i.loc["mark", "scope"] == "t"
    assert t.report["unknown_phase"] == 1


@pytest.mark.parametrize("content", [b"", b"  \n", bytes(range(256)) * 4, b'{"a": 1}', b"[1, 2, 3]", b"[xx",
                                     b'[{"ph":"X","ts":1', b"\x1f\x8bjunk", b"[" * 5000, b'"text"',
                                     b'{"traceEvents": 5}', b"\xef\xbb\xbf"])
@pytest.mark.parametrize("strict", [False, True])
def test_non_traces_raise_in_both_modes(tmp_path, content, strict):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceFormatError, match=r'^TraceFormatError ".*bad.json"'):
        load(path, strict=strict)


def test_gzip_and_array_forms(tmp_path):
    text = '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"a"}]}'
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(text.encode()))
    assert load(path).span_count == 1
    assert load(write(tmp_path, '[{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"a"},]')).report["truncated"] == 1


def test_strict_names_the_offset_of_damage(tmp_path):
    path = write(tmp_path, '[{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"a"},\n{"ph":"X",')
    with pytest.raises(TraceFormatError) as info:
        read_chrome(path, strict=True)
    assert info.value.offset is not None and info.value.path.endswith("t.json")


def test_worker_process_decoding_equals_serial(traces_dir, monkeypatch):
    """The parallel path (forced here on a 10 MB file) gives the same trace."""
    import gpuviz.trace.formats.jsonevents as je
    import gpuviz.trace.formats.parallel as par
    path = traces_dir / "kineto_resnet_nccl_large.json.gz"
    serial = load(path)
    monkeypatch.setattr(je, "PARALLEL_BYTES", 1 << 20)
    monkeypatch.setattr(je, "PARALLEL_WORKERS", 2)
    monkeypatch.setattr(par, "_MIN_CHUNK", 1 << 20)
    ran = []
    real = par.decode_parallel

    def spy(*args, **kwargs):
        ran.append(real(*args, **kwargs) is not None)
        return None if not ran[-1] else real(*args, **kwargs)
    monkeypatch.setattr(par, "decode_parallel", spy)
    parallel = load(path)
    assert ran == [True]            # the worker path ran and was used
    for name in ("spans", "links", "threads", "processes", "counters", "instants"):
        assert getattr(parallel, name).equals(getattr(serial, name)), name
    assert parallel.report == serial.report


@pytest.mark.parametrize("seed", range(40))
def test_begin_end_fast_matching_equals_the_stack_rules(tmp_path, monkeypatch, seed):
    """B/E threads matched by nesting level give what the event-by-event
    stack replay gives (forced here for every thread)."""
    import random

    import gpuviz.trace.formats.chrome_phases as phases
    r = random.Random(seed)
    events = [{"ph": r.choice("BBE"), "pid": 1, "tid": r.randint(0, 2), "name": r.choice("abc") + "",
               "ts": r.randint(0, 40) if r.random() < 0.5 else round(r.random() * 100, 3)}
              for _ in range(r.randint(1, 40))]
    path = write(tmp_path, json.dumps(events))
    fast = read_chrome(path)
    monkeypatch.setattr(phases, "_fast_threads", lambda idx, *args: np.zeros(len(idx), bool))
    slow = read_chrome(path)
    assert fast.spans.equals(slow.spans) and fast.report == slow.report


@pytest.mark.parametrize("cut", [None, -7])
def test_memory_mapped_files_equal_read_bytes(traces_dir, tmp_path, monkeypatch, cut):
    """Large plain files are mmap'ed and their decoded pages handed back
    (forced here on a 10 MB file, with small blocks): same trace, same report."""
    import gpuviz.trace.formats.jsonevents as je
    import msgspec
    text = gzip.decompress((traces_dir / "kineto_resnet_nccl_large.json.gz").read_bytes())
    events = bytes(msgspec.json.decode(text, type=dict[str, msgspec.Raw])["traceEvents"])
    inputs = [text, events] if cut is None else [text[:cut], events[:cut]]
    for k, data in enumerate(inputs):
        path = tmp_path / f"t{k}.json"
        path.write_bytes(data)
        monkeypatch.setattr(je, "MMAP_BYTES", 1 << 62)
        plain = load(path)
        monkeypatch.setattr(je, "MMAP_BYTES", 1)
        monkeypatch.setattr(je, "_BLOCK", 256 << 10)
        assert type(je.read_bytes(path)).__name__ == "mmap"
        mapped = load(path)
        monkeypatch.undo()
        for name in ("spans", "links", "threads", "processes", "counters", "instants"):
            assert getattr(mapped, name).equals(getattr(plain, name)), (k, name)
        assert mapped.report == plain.report and (cut is None or "truncated" in plain.report)
