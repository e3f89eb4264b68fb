"""The fuzzing harness (gpuviz.trace.fuzz) and a small fuzzing campaign of
gpuviz.trace.load in CI.

The full campaign (>= 10^5 inputs) runs by a flag:
``GPUVIZ_FUZZ_COUNT=100000 pytest tests/trace/test_fuzz.py -k campaign`` or
``python -m gpuviz.trace.fuzz --count 100000 --out /tmp/fuzz``.
"""

import collections
import os
import textwrap
import zlib

import pytest

from gpuviz.trace import fuzz
from gpuviz.trace.errors import TraceFormatError

PROBE = textwrap.dedent('''
    """A stand-in for gpuviz.trace.load that misbehaves on purpose, chosen
    by the CRC of the input file, so the harness's accounting can be checked."""
    import os
    import time
    import zlib

    from gpuviz.trace.errors import TraceFormatError
    from gpuviz.trace.model import assemble, table


    def load(path, *, format="auto", strict=False, progress=None):
        data = open(path, "rb").read()
        kind = zlib.crc32(data) % 6
        if kind == 0:
            raise KeyError("probe")
        if kind == 1:  # an endless loop (it uses CPU time, as real importer hangs do)
            while True:
                time.monotonic()
        if kind == 2:
            os._exit(3)
        if kind == 3:
            raise TraceFormatError(path, "probe")
        threads = table("threads", {"id": [0], "process": [0], "tid": ["1"], "name": ["t"], "sort_index": [0],
                                    "kind": ["thread"]})
        processes = table("processes", {"id": [0], "pid": ["1"], "name": ["p"], "labels": [""], "partition": [0]})
        # kind 5: two overlapping spans put in one lane (a broken result)
        lane = [0, 1] if kind == 4 else [0, 0]
        return assemble(name=["a", "b"], start_ns=[0, 5], duration_ns=[10, 10], thread=[0, 0], threads=threads,
                        processes=processes, parent=[-1, -1], lanes=(lane, lane))
''')
EXPECTED = {0: "crash", 1: "hang", 2: "crash", 3: "format_error", 4: "loaded", 5: "crash"}


def test_cases_are_deterministic_and_varied():
    assert fuzz.case(0, 17) == fuzz.case(0, 17)
    assert fuzz.case(0, 17)["data"] != fuzz.case(1, 17)["data"]
    cases = [fuzz.case(0, i) for i in range(600)]
    steps = collections.Counter(s for c in cases for s in c["what"].split(" | ")[1].split("+"))
    assert set(steps) == set(fuzz.MUTATIONS)
    seeds = {c["what"].split(" | ")[0] for c in cases}
    assert {"synthetic_otlp.json", "synthetic_kineto.json", "hand_array.json"} <= seeds
    if fuzz.DATA.is_dir():
        assert {"kineto_alexnet_cuda.json", "otlp_proto_example_trace.json", "ss_simple_partial.json"} <= seeds
    assert {c["suffix"] for c in cases} == {".json", ".json.gz"}
    assert {c["strict"] for c in cases} == {True, False}
    assert {c["format"] for c in cases} == {"auto", "chrome", "kineto", "otlp"}
    assert len({c["data"] for c in cases}) > 550


def probe_campaign(count=9):
    """A campaign seed whose first ``count`` inputs make the probe take
    every path (so the test does not depend on how cases are generated)."""
    for seed in range(1000):
        kinds = [zlib.crc32(fuzz.case(seed, i)["data"]) % 6 for i in range(count)]
        if set(kinds) == set(EXPECTED):
            return seed, kinds
    raise AssertionError("no campaign seed covers every probe path")


def test_harness_accounts_for_crashes_hangs_and_dying_workers(tmp_path, monkeypatch):
    (tmp_path / "fuzzprobe.py").write_text(PROBE)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    seed, kinds = probe_campaign()
    count = len(kinds)
    want = collections.Counter(EXPECTED[k] for k in kinds)
    summary = fuzz.run(count, seed=seed, timeout=1.0, target="fuzzprobe:load", out=tmp_path / "out")
    for outcome in ("loaded", "format_error", "crash", "hang"):
        assert summary[outcome] == want[outcome], (outcome, summary)
    failed = {f["index"]: f for f in summary["failures"]}
    for i, kind in enumerate(kinds):
        item = fuzz.case(seed, i)
        outcome = EXPECTED[kind]
        assert (i in failed) == (outcome in ("crash", "hang"))
        if i in failed:
            assert failed[i]["outcome"] == outcome
            assert (tmp_path / "out" / f"{outcome}-{seed}-{i}{item['suffix']}").read_bytes() == item["data"]
    details = " ".join(str(f["detail"]) for f in summary["failures"])
    assert "KeyError" in details and "worker died (exit status 3)" in details and "overlap in one lane" in details


def test_campaign():
    """A few hundred mutated inputs in CI; GPUVIZ_FUZZ_COUNT sets how many."""
    count = int(os.environ.get("GPUVIZ_FUZZ_COUNT", "300"))
    summary = fuzz.run(count, seed=int(os.environ.get("GPUVIZ_FUZZ_SEED", "0")), timeout=20.0)
    report = "\n".join(f"{f['outcome']} seed {f['seed']} index {f['index']}: {f['what']}\n{f['detail']}"
                       for f in summary["failures"][:5])
    assert summary["crash"] == 0 and summary["hang"] == 0, report
    assert summary["loaded"] + summary["format_error"] == count
    assert summary["loaded"] > count // 20 and summary["format_error"] > count // 20, summary


def test_differential_campaign():
    """A couple of hundred inputs through fuzz.differential_load: the events
    array of an object document located without the header pass decodes
    to the same trace, report and error as the full pass (the full count by
    ``python -m gpuviz.trace.fuzz --differential --count N``)."""
    count = int(os.environ.get("GPUVIZ_FUZZ_COUNT", "200"))
    summary = fuzz.run(count, seed=int(os.environ.get("GPUVIZ_FUZZ_SEED", "0")) + 1, timeout=20.0,
                       target="gpuviz.trace.fuzz:differential_load")
    report = "\n".join(f"{f['outcome']} seed {f['seed']} index {f['index']}: {f['what']}\n{f['detail']}"
                       for f in summary["failures"][:5])
    assert summary["crash"] == 0 and summary["hang"] == 0, report
    assert summary["loaded"] > count // 20 and summary["format_error"] > count // 20, summary


def test_differential_load_reports_a_difference(tmp_path, monkeypatch):
    """Two decodes that differ (here: a load that drops the last span when
    the events array is located) are a DifferentialMismatch, and equal
    errors are re-raised as the TraceFormatError."""
    import gpuviz.trace as trace_pkg
    from gpuviz.trace.formats import jsonevents

    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1},'
                    '{"ph":"X","name":"b","ts":3,"dur":1,"pid":1,"tid":1}]}')
    assert fuzz.differential_load(str(path)).spans.num_rows == 2
    real = trace_pkg.load

    def lossy(*args, **kwargs):
        loaded = real(*args, **kwargs)
        if not jsonevents.LOCATE_EVENTS:
            return loaded
        return trace_pkg.Trace.from_arrow(spans=loaded.spans.slice(0, 1).select(["name", "start_ns", "duration_ns"]))

    monkeypatch.setattr(trace_pkg, "load", lossy)
    with pytest.raises(fuzz.DifferentialMismatch, match="spans"):
        fuzz.differential_load(str(path))
    monkeypatch.setattr(trace_pkg, "load", real)
    path.write_bytes(b"\x00garbage")
    with pytest.raises(TraceFormatError):
        fuzz.differential_load(str(path))
    assert jsonevents.LOCATE_EVENTS is True


def _gzip_flipped():
    import gzip

    data = bytearray(gzip.compress(b'[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1}]', mtime=0))
    data[len(data) // 2] ^= 0xFF
    return bytes(data)


#: Minimal reproducers of crashes the campaign found (name -> (bytes, suffix)).
REGRESSIONS = {
    # msgspec raised RecursionError on 100000 nested lists
    "deep_args": (b'[{"ph":"X","name":"n","ts":1,"dur":1,"pid":1,"tid":1,"args":' + b"[" * 100000 + b"1"
                  + b"]" * 100000 + b"}]", ".json"),
    # the text "flow_in" without any v2 flow, plus a non-X event: float event indexes (TypeError)
    "flow_key_no_flow": (b'[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}},'
                         b'{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1,"args":{"flow_in":1}}]', ".json"),
    # invalid UTF-8 inside args (pyarrow ArrowInvalid)
    "bad_utf8_args": (b'[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1,"args":{"k":"\xc3"}}]', ".json"),
    # a corrupt gzip stream (zlib.error)
    "corrupt_gzip": (_gzip_flipped(), ".json.gz"),
    # an integer counter value beyond float64 (OverflowError; differential campaign seed 12, input 94299)
    "huge_counter": (b'[{"ph":"C","name":"mem","ts":1,"pid":1,"args":{"used":1' + b"0" * 400 + b',"free":2.5}}]',
                     ".json"),
}


@pytest.mark.parametrize("strict", [False, True])
def test_counter_value_beyond_float_range_is_reported(tmp_path, strict):
    """An integer counter value no float64 holds is skipped and reported as
    bad_counter_value (its event's other series are kept); strict raises."""
    from gpuviz.trace import load

    path = tmp_path / "c.json"
    path.write_bytes(REGRESSIONS["huge_counter"][0])
    if strict:
        with pytest.raises(TraceFormatError, match="bad_counter_value"):
            load(str(path), strict=True)
        return
    trace = load(str(path))
    assert trace.report.get("bad_counter_value") == 1
    assert trace.counters.column("series").to_pylist() == ["free"]
    assert trace.counters.column("value").to_pylist() == [2.5]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("fmt", ["auto", "chrome", "otlp"])
@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression(tmp_path, name, fmt, strict):
    data, suffix = REGRESSIONS[name]
    item = {"data": data, "suffix": suffix, "strict": strict, "format": fmt, "what": name}
    outcome, detail = fuzz.check(item, tmp_path, target="gpuviz.trace:load")
    assert outcome in ("loaded", "format_error"), detail


def test_overlapping_spans_pack_in_less_than_quadratic_time(tmp_path):
    """A staircase of spans that all overlap without nesting (span i covers
    [i, i + n) us) needs n lanes; packing them must not take time ~ n^2
    (the fuzzer's per-input limit is 10 CPU seconds; 20000 such spans, a
    1 MB file, took 15 CPU s when this was found)."""
    import json
    import time

    from gpuviz.trace import load

    n = 12000
    path = tmp_path / "stairs.json"
    path.write_text(json.dumps([{"ph": "X", "name": "s", "ts": i, "dur": n, "pid": 1, "tid": 1} for i in range(n)]))
    started = time.process_time()
    trace = load(str(path), progress=False)
    cpu = time.process_time() - started
    lanes = trace.spans.column("lane").to_numpy()
    assert trace.span_count == n and trace.report.get("lanes_added") == n - 1
    assert sorted(lanes.tolist()) == list(range(n))
    assert cpu < 2.0, f"{n} overlapping spans took {cpu:.1f} CPU s to load"
