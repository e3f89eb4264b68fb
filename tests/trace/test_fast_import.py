"""The fast block-column path (gpuviz.trace.formats.fastblock) against the
reference (jsonevents._block_columns): same Trace tables, same report, same
errors, on the real traces, synthetic Chrome/Kineto traces, hypothesis
traces and the fuzz corpus."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuviz.trace.formats.jsonevents as je
from gpuviz.trace import fuzz
from gpuviz.trace.errors import TraceFormatError
from gpuviz.trace.load import load
from gpuviz.trace.synthetic import synthetic, to_chrome_json

TABLES = ("spans", "links", "threads", "processes", "counters", "instants")


def outcome(path, fast, **kwargs):
    """(tables, report, metadata) or ("error", message) of one load."""
    old = je.FAST_COLUMNS
    je.FAST_COLUMNS = fast
    try:
        trace = load(path, progress=False, **kwargs)
    except TraceFormatError as exc:
        return ("error", str(exc))
    finally:
        je.FAST_COLUMNS = old
    return [getattr(trace, name) for name in TABLES], trace.report, trace.metadata


def assert_same(path, **kwargs):
    fast, ref = outcome(path, True, **kwargs), outcome(path, False, **kwargs)
    if ref[0] == "error" or fast[0] == "error":
        assert fast == ref
        return ref
    for name, a, b in zip(TABLES, fast[0], ref[0]):
        assert a.equals(b), name
    assert fast[1:] == ref[1:]
    return ref


def test_the_fast_path_is_the_default():
    assert je.FAST_COLUMNS is True


@pytest.mark.parametrize("strict", [False, True])
def test_real_traces(traces_dir, strict):
    files = sorted(p for p in traces_dir.iterdir() if p.name.endswith((".json", ".json.gz")))
    assert len(files) >= 8
    loaded = sum(assert_same(p, strict=strict)[0] != "error" for p in files)
    assert loaded >= 5


@pytest.mark.parametrize("kineto", [False, True])
def test_synthetic_traces_with_flows(tmp_path, kineto):
    path = tmp_path / "s.json"
    to_chrome_json(synthetic(spans=3000, seed=3, links=400), path, kineto=kineto)
    ref = assert_same(path)
    assert ref[0][1].num_rows > 0            # links came through both paths


def event_strategy():
    ident = st.one_of(st.integers(0, 5), st.sampled_from(["1", "stream 7", "x\\"]), st.integers(2 ** 62, 2 ** 64))
    number = st.one_of(st.integers(-10 ** 6, 10 ** 18), st.floats(allow_nan=False, allow_infinity=False),
                       st.sampled_from(["12.5", "abc", None, True]))
    return st.fixed_dictionaries(
        {"ph": st.sampled_from(list("XXXXBEbesftMCiInST") + ["", "??"])},
        optional={"name": st.sampled_from(["a", "b", "thread_name", "process_name", "é"]),
                  "cat": st.sampled_from(["c", "ac2g", "kernel", "cpu_op"]), "pid": ident, "tid": ident,
                  "ts": number, "dur": number, "id": st.one_of(st.integers(0, 3), st.just("0x1")),
                  "bp": st.just("e"), "s": st.sampled_from("gpt"), "bind_id": st.integers(0, 3),
                  "flow_in": st.booleans(), "flow_out": st.booleans(),
                  "args": st.one_of(st.just({}), st.dictionaries(st.sampled_from(["name", "v", "labels"]),
                                                                 st.one_of(st.integers(), st.text(max_size=3)),
                                                                 max_size=2))})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(event_strategy(), max_size=40), strict=st.booleans(), small_blocks=st.booleans())
def test_hypothesis_event_lists(tmp_path, monkeypatch, events, strict, small_blocks):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(events))
    with monkeypatch.context() as patch:          # (one patch per hypothesis example)
        if small_blocks:                # several blocks per file: block-local indexes
            patch.setattr(je, "_BLOCK", 64)
        assert_same(path, strict=strict)


@pytest.mark.parametrize("start", range(0, 240, 40))
def test_fuzz_corpus(tmp_path, start):
    """The fuzzer's inputs (mutated real and synthetic traces, both modes)."""
    for index in range(start, start + 40):
        case = fuzz.case(0, index)
        if case["format"] == "otlp":
            continue
        path = tmp_path / f"f{index}{case['suffix']}"
        path.write_bytes(case["data"])
        assert_same(path, strict=case["strict"], format=case["format"])


def serial_and_forked(monkeypatch, path, block=4096):
    """(serial trace, trace with the forked two-half decoding forced, whether
    the forked decode was used), both with ``block``-byte blocks."""
    import gpuviz.trace.formats.parallel as par
    ran = []
    real = par.decode_forked

    def spy(*args, **kw):
        parts = real(*args, **kw)
        ran.append(parts is not None)
        return parts
    monkeypatch.setattr(je, "_BLOCK", block)
    try:
        serial = load(path, progress=False)
        monkeypatch.setattr(je, "FORK_BYTES", 1)
        monkeypatch.setattr(par, "FORK_ALWAYS", True)
        monkeypatch.setattr(par, "decode_forked", spy)
        return serial, load(path, progress=False), ran
    finally:
        monkeypatch.undo()


def assert_tables_equal(a, b):
    for name in TABLES:
        assert getattr(a, name).equals(getattr(b, name)), name
    assert a.report == b.report and a.metadata == b.metadata


def test_forked_halves_equal_serial(traces_dir, monkeypatch, tmp_path):
    """The second half decoded by a forked child: same trace as serial."""
    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no os.fork here")
    used = 0
    for path in sorted(traces_dir.glob("*.json*")):
        if "otlp" in path.name:
            continue
        try:
            serial, trace, ran = serial_and_forked(monkeypatch, path)
        except TraceFormatError:
            continue
        assert_tables_equal(trace, serial)
        used += sum(ran)
    assert used >= 3                 # the forked path really ran (the Kineto files; catapult ones are one block)
    path = tmp_path / "s.json"
    to_chrome_json(synthetic(spans=4000, seed=5, links=300), path, kineto=True)
    serial, trace, ran = serial_and_forked(monkeypatch, path, block=64 << 10)
    assert ran == [True]
    assert_tables_equal(trace, serial)


def test_forked_fallbacks(monkeypatch, tmp_path):
    """A cut inside a string (first half fails), a broken document and a
    failed child all end in the serial result."""
    import gpuviz.trace.formats.parallel as par
    events = [{"ph": "X", "name": "a},{b" * 20, "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(300)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    serial, trace, ran = serial_and_forked(monkeypatch, path)
    assert ran == [False]
    assert_tables_equal(trace, serial)
    text = json.dumps([{"ph": "X", "name": "a", "ts": i, "dur": 1, "pid": 1, "tid": i % 3} for i in range(300)])
    path.write_text(text[:-3000])
    serial, trace, ran = serial_and_forked(monkeypatch, path)
    assert ran == [True] and "truncated" in serial.report      # the complete events before the cut, forked
    assert_tables_equal(trace, serial)
    path.write_text(text)

    def child_failed(child, timeout):
        par._reap(child, kill=True)
        return None
    monkeypatch.setattr(par, "_receive", child_failed)
    serial, trace, ran = serial_and_forked(monkeypatch, path)
    assert ran == [False]
    assert_tables_equal(trace, serial)


def test_forked_child_hands_back_through_shared_memory():
    """numpy and Arrow columns (nulls, slices, empty ones) come back from
    the child equal: the Arrow buffers asked for read in place (aligned),
    the rest copied out (numpy's writable)."""
    import os

    import numpy as np
    import pyarrow as pa

    import gpuviz.trace.formats.parallel as par
    if not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        pytest.skip("no fork/memfd here")
    value = {"ints": np.arange(100001, dtype=np.int64), "flags": np.array([True, False, True]),
             "empty": np.zeros(0, np.int64), "text": pa.array(["a", None, "é" * 1000]),
             "sliced": pa.array(list(range(50))).slice(7, 9), "blob": b"x" * 70000, "small": [1, "two"]}
    child = par._fork_child(lambda: value, in_place=lambda got: {b.address for b in got["text"].buffers() if b})
    try:
        got = par._receive(child, 30)
    finally:
        par._close_fds(child)
    assert got.keys() == value.keys()
    for key in ("ints", "flags", "empty"):
        assert got[key].dtype == value[key].dtype and np.array_equal(got[key], value[key])
    assert got["ints"].flags.writeable and got["flags"].flags.writeable        # copied out of the shared memory
    assert all(b is None or b.address % 64 == 0 for b in got["text"].buffers())  # read in place, aligned
    assert got["text"].equals(value["text"]) and got["sliced"].equals(value["sliced"])
    assert got["blob"] == value["blob"] and got["small"] == value["small"]


def _bad_halves_file(tmp_path):
    """A file of many blocks with problems counted in both halves."""
    events = [{"ph": "X", "name": "a", "ts": i if i % 97 else "soon", "dur": 1 if i % 89 else -1, "pid": 1,
               "tid": i % 3} for i in range(3000)]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(events))
    return path


def test_a_hung_or_dead_child_falls_back_to_the_serial_report(monkeypatch, tmp_path):
    """A child that never answers is killed after the timeout, one that dies
    before its header is noticed at once: both end in exactly the serial
    tables and report."""
    import os
    import time

    import gpuviz.trace.formats.parallel as par
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    path = _bad_halves_file(tmp_path)
    real = par._fork_child
    for name, work in (("hung", lambda work: lambda: (time.sleep(120), work())[1]),
                       ("dead", lambda work: lambda: os._exit(3))):
        monkeypatch.setattr(par, "FORK_TIMEOUT_S", 0.5)
        monkeypatch.setattr(par, "_fork_child", lambda w, **kw: real(work(w), **kw))
        started = time.monotonic()
        serial, trace, ran = serial_and_forked(monkeypatch, path)
        assert ran == [False], name
        assert time.monotonic() - started < 30, name
        assert_tables_equal(trace, serial)
        assert serial.report.get("bad_timestamp") == 31 and serial.report.get("negative_duration"), name


def test_forked_report_joins_both_halves(monkeypatch, tmp_path):
    path = _bad_halves_file(tmp_path)
    serial, trace, ran = serial_and_forked(monkeypatch, path)
    assert ran == [True]
    assert_tables_equal(trace, serial)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_flow_binding_in_one_search_equals_thread_by_thread(monkeypatch, data):
    """bind_points' single searchsorted over per-thread key ranges binds
    every flow point to the slice the per-thread loop binds it to."""
    import numpy as np

    import gpuviz.trace.formats.chrome_phases as phases
    from gpuviz.trace.lanes import pack_lanes, visit_order
    n = data.draw(st.integers(0, 30))
    big = data.draw(st.sampled_from([1, 1 << 40]))
    ints = lambda lo, hi, size: np.array(data.draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size)),  # noqa: E731
                                         np.int64)
    start, dur, thread = ints(-5, 60, n) * big, ints(0, 30, n) * big, ints(0, 3, n)
    spans = {"start": start, "dur": dur, "thread": thread}
    parent = pack_lanes(start=start, duration=dur, thread=thread)[2]
    order = visit_order(start, dur, thread)
    index = (order, thread[order], start[order], start + dur)
    m = data.draw(st.integers(0, 20))
    points = (ints(-1, 4, m), ints(-8, 95, m) * big, np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)),
                                                               bool))
    one = phases.bind_points(spans, parent, index, *points)
    with monkeypatch.context() as patch:          # (one patch per hypothesis example)
        patch.setattr(phases, "_nearest_starts", lambda *args: None)
        loop = phases.bind_points(spans, parent, index, *points)
    assert one.tolist() == loop.tolist()


def test_import_memory_pool_is_switched_only_during_an_import(tmp_path, monkeypatch):
    """Arrow allocations of an import come from the system allocator when
    the default is mimalloc; the default is back afterwards, also after an
    error and for nested imports."""
    import pyarrow as pa

    import gpuviz.trace.formats.chrome as chrome
    before = pa.default_memory_pool().backend_name
    seen = []
    real = chrome.build_trace

    def spy(*args, **kwargs):
        seen.append(pa.default_memory_pool().backend_name)
        with je.import_memory_pool():          # nested: still switched inside, restored by the outer one
            seen.append(pa.default_memory_pool().backend_name)
        seen.append(pa.default_memory_pool().backend_name)
        return real(*args, **kwargs)
    monkeypatch.setattr(chrome, "build_trace", spy)
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"ph": "X", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]))
    assert chrome.read_chrome(path).span_count == 1
    expected = "system" if before == "mimalloc" else before
    assert seen == [expected] * 3
    assert pa.default_memory_pool().backend_name == before
    path.write_text("[{")
    with pytest.raises(TraceFormatError):
        chrome.read_chrome(path)
    assert pa.default_memory_pool().backend_name == before


@pytest.mark.parametrize("runnable, cpus, idle", [(1, 2, True), (2, 2, False), (3, 4, True), (4, 4, False),
                                                  (1, 1, False)])
def test_fork_gate_counts_runnable_tasks_now(monkeypatch, runnable, cpus, idle):
    """The forked decode runs when fewer tasks than CPUs - 1/2 are runnable
    right now (this one included), whatever the 1-minute load average says."""
    import gpuviz.trace.formats.parallel as par
    monkeypatch.setattr(par.os, "sched_getaffinity", lambda pid: set(range(cpus)))
    monkeypatch.setattr(par.os, "getloadavg", lambda: (float(cpus), 0.0, 0.0))
    monkeypatch.setattr(par, "_runnable_now", lambda **_: runnable)
    assert par._idle_cpu() is idle


def test_fork_gate_falls_back_to_load_average(monkeypatch):
    import gpuviz.trace.formats.parallel as par
    monkeypatch.setattr(par.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(par, "_runnable_now", lambda **_: None)
    monkeypatch.setattr(par.os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    assert par._idle_cpu()
    monkeypatch.setattr(par.os, "getloadavg", lambda: (1.7, 0.0, 0.0))
    assert not par._idle_cpu()


def test_runnable_now_reads_proc_stat():
    """On Linux: at least this thread is runnable while it reads."""
    import os

    import gpuviz.trace.formats.parallel as par
    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat")
    assert par._runnable_now() >= 1


@pytest.mark.parametrize("counts, idle_below, reads", [((1, 1, 1), 1.5, 1), ((3, 1, 2), 1.5, 2), ((3, 3, 2), 1.5, 3),
                                                       ((1, 1, 1), 0.0, 3)])
def test_runnable_now_stops_at_the_first_idle_read(monkeypatch, counts, idle_below, reads):
    """Sampling ends once a read is already below the gate's threshold (the
    fewest can only be lower); the fewest read is returned either way."""
    import io

    import gpuviz.trace.formats.parallel as par
    seen = []

    def fake_open(path, mode="r"):
        seen.append(path)
        return io.BytesIO(b"cpu  1 2 3\nprocs_running %d\nprocs_blocked 0\n" % counts[len(seen) - 1])
    monkeypatch.setattr(par, "open", fake_open, raising=False)
    monkeypatch.setattr(par.time, "sleep", lambda s: None)
    assert par._runnable_now(idle_below=idle_below) == min(counts[:reads])
    assert len(seen) == reads


def test_background_work_hands_back_its_value_or_its_error():
    from gpuviz.trace.formats.chrome import _Background

    def fail(value):
        raise ValueError(value)
    for threaded in (True, False):
        assert _Background(lambda value: value * 2, value=21, threaded=threaded).result() == 42
        with pytest.raises(ValueError, match="boom"):
            _Background(fail, value="boom", threaded=threaded).result()


def test_lanes_packed_on_a_thread_or_inline_give_one_trace(monkeypatch, tmp_path):
    """BACKGROUND_PACKING_SPANS only chooses where pack_lanes runs: the
    trace is the same either way."""
    from gpuviz.trace import load, synthetic
    from gpuviz.trace.formats import chrome
    from gpuviz.trace.synthetic import to_chrome_json

    path = tmp_path / "t.json"
    to_chrome_json(synthetic(spans=3000, seed=4), path)
    traces = []
    for spans in (1, 1 << 40):
        monkeypatch.setattr(chrome, "BACKGROUND_PACKING_SPANS", spans)
        traces.append(load(str(path), progress=False))
    assert traces[0].spans.equals(traces[1].spans) and traces[0].links.equals(traces[1].links)
    assert traces[0].report == traces[1].report
