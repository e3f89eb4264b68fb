"""The shortcuts of the fast import path each give what the plain path gives:
the fast event type's fallbacks (flow v2 keys, unknown phases), int64
pid/tid blocks, bare-number times, blocks without args, the reused block
buffer, flow binding searched in sorted order, and the import's memory
switches."""

import json
from decimal import ROUND_DOWN, Decimal

import msgspec
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuviz.trace.formats.jsonevents as je
from gpuviz.trace.formats import chrome_phases, rawtext
from gpuviz.trace.load import load

TABLES = ("spans", "links", "threads", "processes", "counters", "instants")


def both_paths(path, **kwargs):
    """Trace tables + report by the fast block columns and by the reference ones."""
    out = []
    for fast in (True, False):
        old = je.FAST_COLUMNS
        je.FAST_COLUMNS = fast
        try:
            t = load(path, progress=False, **kwargs)
        finally:
            je.FAST_COLUMNS = old
        out.append(([getattr(t, name) for name in TABLES], t.report))
    return out


def assert_same(path, **kwargs):
    (fast, fast_report), (ref, ref_report) = both_paths(path, **kwargs)
    for name, a, b in zip(TABLES, fast, ref):
        assert a.equals(b), name
    assert fast_report == ref_report
    return fast, fast_report


def write(tmp_path, events, name="t.json"):
    path = tmp_path / name
    path.write_text("[" + ",\n".join(json.dumps(e) for e in events) + "]")
    return path


@pytest.mark.parametrize("key", ["flow_in", "flow_out", "bind_id"])
@pytest.mark.parametrize("value", [True, None, {}, "k", [1]])
def test_fast_event_type_rejects_every_flow_v2_key(key, value):
    doc = json.dumps([{"ph": "X", "ts": 1, key: value}]).encode()
    with pytest.raises(msgspec.ValidationError):
        je._FAST_DECODER.decode(doc)
    assert len(je._FAST_DECODER.decode(b'[{"ph":"X","ts":1}]')) == 1


def test_fast_event_phases_are_shared_objects():
    a, b = je._FAST_DECODER.decode(b'[{"ph":"X"},{"ph":"X"}]')
    assert a.ph is b.ph
    with pytest.raises(msgspec.ValidationError):
        je._FAST_DECODER.decode(b'[{"ph":"Q"}]')


def test_flow_v2_and_odd_values_in_one_block_match_the_reference(tmp_path):
    events = [{"ph": "X", "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5, "name": f"n{i}"} for i in range(20)]
    events[3].update(bind_id="k", flow_out=True)
    events[9].update(bind_id="k", flow_in=True)
    events[12]["flow_in"] = None                  # bad type: the event is reported, as by the plain decoder
    events[15]["ph"] = "Q"                        # unknown phase letter
    _, report = assert_same(write(tmp_path, events))
    assert report.get("bad_event") == 1 and report.get("unknown_phase") == 1


def test_multi_block_files_with_mixed_id_types_match_the_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(je, "_BLOCK", 256)         # many blocks: int-only, string-only and mixed ones
    events = []
    for i in range(300):
        pid = [7, "7", "07", 2 ** 70, -3][(i // 13) % 5]
        tid = i % 4 if i % 50 < 30 else f"stream {i % 3}"
        events.append({"ph": "X", "pid": pid, "tid": tid, "ts": i, "dur": 0.5, "name": "a", "cat": "c"})
    tables, _ = assert_same(write(tmp_path, events))
    processes = tables[3].column("pid").to_pylist()
    assert "7" in processes and "07" in processes and str(2 ** 70) in processes and "-3" in processes
    assert len(processes) == 4                     # 7 and "7" are one process, "07" another


def test_block_sizes_do_not_change_the_trace(tmp_path, monkeypatch):
    events = [{"ph": "X", "pid": 1, "tid": i % 3, "ts": i * 1.5, "dur": 1.25, "name": "x" * (i % 7),
               "args": {"k": i} if i % 4 else {}} for i in range(400)]
    path = write(tmp_path, events)
    whole = load(path, progress=False)
    for block in (64, 300, 5000):                  # the reused frame grows and shrinks its view
        monkeypatch.setattr(je, "_BLOCK", block)
        t = load(path, progress=False)
        for name in TABLES:
            assert getattr(t, name).equals(getattr(whole, name)), (block, name)


def exact_ns(text):
    """Independent oracle: JSON number text in us -> int ns (truncated), or None."""
    t = text.strip('"')
    try:
        d = Decimal(t)
    except Exception:  # noqa: BLE001 - anything unparsable
        return None
    if not d.is_finite():
        return None
    v = int((d * 1000).to_integral_value(rounding=ROUND_DOWN))
    return v if -(1 << 63) <= v < (1 << 63) else None


numbers = st.one_of(
    st.integers(-(10 ** 15), 10 ** 15).map(str),
    st.decimals(-10 ** 12, 10 ** 12, allow_nan=False, allow_infinity=False, places=3).map(str),
    st.decimals(-10 ** 6, 10 ** 6, allow_nan=False, allow_infinity=False, places=6).map(str),
    st.sampled_from(["1e3", "-0", "0.0005", "-1.9999", "9223372036854775.807", "9223372036854775.808"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(numbers, st.booleans(), st.booleans()), min_size=1, max_size=30))
def test_times_from_bare_and_quoted_numbers_are_exact(values):
    raws = []
    for text, quoted, missing in values:
        raws.append(b"" if missing else (f'"{text}"' if quoted else text).encode())
    ns, ok = rawtext.raw_to_ns(rawtext.raw_to_binary(raws))
    for raw, got, good in zip(raws, ns.tolist(), ok.tolist()):
        want = exact_ns(raw.decode()) if raw else None
        assert good == (want is not None), raw
        if good:
            assert got == want, raw


fixed_width = st.integers(1, 15).flatmap(lambda digits: st.integers(0, 4).flatmap(
    lambda decimals: st.lists(st.tuples(st.integers(0, 10 ** digits - 1), st.integers(0, 10 ** decimals - 1)),
                              min_size=1, max_size=20).map(
        lambda pairs: [f"{a:0{digits}d}" + (f".{b:0{decimals}d}" if decimals else "") for a, b in pairs])))


@settings(max_examples=300, deadline=None)
@given(fixed_width, st.sampled_from(["as is", "widths vary", "one odd", "one short", "one missing"]))
def test_fixed_width_times_equal_the_decimal_cast(texts, change):
    """raws_to_ns (its numpy path for one layout, right-aligned when the
    widths vary) == raw_to_ns of the same text, exact."""
    raws = [t.encode() for t in texts]
    if change == "widths vary":     # no leading zeros: 7.250, 1234.500
        raws = [r.lstrip(b"0") for r in raws]
        raws = [b"0" + r if r[:1] in (b".", b"") else r for r in raws]
    elif change == "one odd":
        raws[-1] = raws[-1][:-1] + b"e"
    elif change == "one short":
        raws[0] = raws[0][1:] or b"7"
    elif change == "one missing":
        raws[-1] = b""
    ns, ok, present = rawtext.raws_to_ns([msgspec.Raw(r) for r in raws])
    want_ns, want_ok = rawtext.raw_to_ns(rawtext.raw_to_binary(raws))
    assert ok.tolist() == want_ok.tolist() and present.tolist() == [len(r) > 0 for r in raws]
    assert ns.tolist() == want_ns.tolist()
    for raw, got, good in zip(raws, ns.tolist(), ok.tolist()):
        want = exact_ns(raw.decode()) if raw else None
        assert good == (want is not None) and (not good or got == want), raw


def test_blocks_without_args_give_nulls():
    out = rawtext.args_text([msgspec.Raw(b"")] * 3)
    assert out.type == pa.string() and out.null_count == 3
    out = rawtext.args_text([msgspec.Raw(b""), msgspec.Raw(b"{}"), msgspec.Raw(b'{"a":1}')])
    assert out.to_pylist() == [None, None, '{"a":1}']


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.integers(0, 8)), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(-1, 4), st.integers(-5, 60), st.booleans()), min_size=1, max_size=40))
def test_nearest_starts_equal_the_per_thread_search(slices, points):
    spans = np.array(slices, np.int64)
    start, dur, thread = spans[:, 1], spans[:, 2], spans[:, 0]
    order, th, st_, _ = chrome_phases._slice_index({"start": start, "dur": dur, "thread": thread})
    p = np.array(points, np.int64)
    thread_q, t, enclosing = p[:, 0], p[:, 1], p[:, 2].astype(bool)
    fast = chrome_phases._nearest_starts(order, th, st_, thread_q, t, enclosing)
    plain = chrome_phases._nearest_starts_by_thread(order, th, st_, thread_q, t, enclosing)
    assert np.array_equal(fast, plain)


def test_import_switches_are_restored():
    before = je._set_hugepage(True)
    try:
        with je.import_memory_pool():
            assert je._set_hugepage(False) is False     # off inside
            with je.import_memory_pool():
                pass
            assert je._set_hugepage(False) is False     # still off after a nested import
        assert je._set_hugepage(True) is True           # restored after the outermost
    finally:
        je._set_hugepage(bool(before))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=60), st.integers(1, 7))
def test_span_rows_pick_what_a_take_picks(is_span, chunk):
    from gpuviz.trace.formats import chrome
    n = len(is_span)
    event = np.flatnonzero(np.array(is_span, bool)).astype(np.int64)
    values = [f"v{i}" for i in range(n)]
    column = pa.chunked_array([pa.array(values[i:i + chunk], pa.string()) for i in range(0, n, chunk)] or [[]],
                              pa.string())
    # the same rows with empty chunks among them, and as one plain array
    gappy = pa.chunked_array([c for piece in column.chunks for c in (piece, pa.array([], pa.string()))], pa.string())
    want = [values[i] for i in event.tolist()]
    old = chrome.MAX_SLICES
    try:
        for limit in (old, 1):                      # slices, and the take (chunk by chunk) beyond the limit
            chrome.MAX_SLICES = limit
            for form in (column, gappy, pa.array(values, pa.string())):
                got = chrome._span_rows(event, n)(form)
                assert got.to_pylist() == want
    finally:
        chrome.MAX_SLICES = old


def test_strict_errors_name_the_first_bad_event(tmp_path):
    from gpuviz.trace.errors import TraceFormatError
    events = [{"ph": "X", "pid": 1, "tid": 1, "ts": i, "dur": 1, "name": "a"} for i in range(6)]
    events[4]["ts"] = "soon"
    events[2]["ts"] = None
    path = write(tmp_path, events)
    with pytest.raises(TraceFormatError, match=r"bad_timestamp") as info:
        load(path, progress=False, strict=True)
    assert "event 2" in str(info.value)
    assert load(path, progress=False).report["bad_timestamp"] == 2


def test_forked_cut_halves_the_events_not_the_bytes():
    from gpuviz.trace.formats import parallel
    big = [json.dumps({"ph": "X", "ts": i, "dur": 1, "name": "n" * 400}) for i in range(1000)]
    small = [json.dumps({"ph": "s", "ts": i, "id": i}) for i in range(9000)]
    doc = ("[" + ",".join(big + small) + "]").encode()
    buf = memoryview(doc)
    pos, end = parallel.event_span(buf)
    cut, rest = parallel._middle_block_boundary(buf, pos, end, 8192)
    before = doc[pos:cut].count(b'"ph"')
    assert abs(before - 5000) < 400              # half the 10000 events, within a block
    assert cut - pos > (end - pos) * 0.6         # well past the middle byte
    assert doc[cut - 1:cut] == b"}" and doc[rest:rest + 1] == b"{"


def test_flow_points_without_a_start_are_counted_and_link_nothing(tmp_path):
    rng = np.random.default_rng(4)
    spans = [{"ph": "X", "pid": 1, "tid": t, "ts": 10 * i, "dur": 8, "name": "k", "cat": "kernel"}
             for i in range(40) for t in (1, 2)]
    flows, orphans = [], []
    for i in range(40):
        key = {"cat": "ac2g", "name": "launch", "id": i}
        if i % 3:                                    # a normal s -> f pair
            flows += [{"ph": "s", "pid": 1, "tid": 1, "ts": 10 * i + 1, **key},
                      {"ph": "f", "pid": 1, "tid": 2, "ts": 10 * i + 2, "bp": "e", **key}]
        else:                                        # only the end (and sometimes a step) was recorded
            orphans.append({"ph": "f", "pid": 1, "tid": 2, "ts": 10 * i + 2, "bp": "e", **key})
            if i % 2:
                orphans.append({"ph": "t", "pid": 1, "tid": 2, "ts": 10 * i + 1, **key})
    points = flows + orphans
    shuffled = [points[k] for k in rng.permutation(len(points))]      # spans first: same span rows
    with_orphans = load(write(tmp_path, spans + shuffled, "a.json"), progress=False)
    without = load(write(tmp_path, spans + flows, "b.json"), progress=False)
    pairs = [sorted(zip(t.links.column("source").to_pylist(), t.links.column("target").to_pylist()))
             for t in (with_orphans, without)]
    assert pairs[0] == pairs[1] and len(pairs[0]) == len(flows) // 2
    assert with_orphans.report.get("unmatched_flow_end") == sum(e["ph"] == "f" for e in orphans)
    assert with_orphans.report.get("unmatched_flow_step") == sum(e["ph"] == "t" for e in orphans)


def test_fast_event_type_has_the_fields_of_event():
    names = sorted(f.name for f in msgspec.structs.fields(je._FastEvent))
    assert names == sorted(f.name for f in msgspec.structs.fields(je.Event))


def test_flow_v2_key_text_inside_strings_only(tmp_path):
    """The text scan finds '"flow_' in a name, but no event has the key: the
    fast type's defaults must read as Event's in the reference columns too."""
    events = [{"ph": "X", "pid": 1, "tid": 1, "ts": i, "dur": 1, "name": "flow_x", "cat": "bind_id"} for i in range(5)]
    events.append({"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "\"bind_id\""}})
    tables, report = assert_same(write(tmp_path, events))
    assert tables[1].num_rows == 0 and not report


@pytest.mark.parametrize("inflate", ["isal", "zlib"])    # zlib: the fallback where isal is missing
@pytest.mark.parametrize("size", ["small", "large"])      # large: written into one buffer of the trailer's size
@pytest.mark.parametrize("damage", ["none", "members", "nul_padding", "garbage", "truncated", "crc", "size_low",
                                    "size_high"])
def test_gunzip_equals_gzip_decompress(damage, size, inflate, monkeypatch):
    import gzip
    import random
    import zlib
    if inflate == "zlib":
        monkeypatch.setattr(je, "_inflate", zlib)
        monkeypatch.setattr(je, "_INFLATE_ERRORS", (zlib.error,))
    else:
        pytest.importorskip("isal")      # a dependency; where it has no wheel, zlib is all there is
        assert je._inflate.__name__.endswith("isal_zlib")
    rnd = random.Random(5)
    text = b"".join(b'{"ph":"X","ts":%d,"dur":2},' % rnd.randrange(10 ** 12)
                    for _ in range(50 if size == "small" else 60_000))
    data = gzip.compress(text)
    if damage in ("size_low", "size_high"):
        forged = len(text) // 3 if damage == "size_low" else (1 << 32) - 1
        data = data[:-4] + forged.to_bytes(4, "little")
    if damage == "members":
        data += gzip.compress(b"more")
    elif damage == "nul_padding":
        data += b"\x00" * 7
    elif damage == "garbage":
        data += b"junk"
    elif damage == "truncated":
        data = data[:-20]
    elif damage == "crc":
        data = data[:-8] + bytes([data[-8] ^ 1]) + data[-7:]
    try:
        want = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        with pytest.raises(type(exc)):
            je._gunzip(data)
    else:
        assert je._gunzip(data) == want


@pytest.mark.parametrize("stride", [1, 3, 1 << 30])
def test_pinned_event_objects_do_not_change_the_trace(tmp_path, monkeypatch, stride):
    events = [{"ph": "X" if i % 5 else "i", "pid": 1, "tid": i % 3, "ts": i, "dur": 1, "name": f"n{i % 9}",
               "args": {"i": i}} for i in range(500)]
    path = write(tmp_path, events)
    monkeypatch.setattr(je, "_BLOCK", 512)          # many blocks, each overwriting the frame the pinned ones saw
    want = load(path, progress=False)
    monkeypatch.setattr(je, "PIN_STRIDE", stride)
    got = load(path, progress=False)
    for name in TABLES:
        assert getattr(got, name).equals(getattr(want, name)), name


def test_scatter_io_moves_every_byte_through_a_pipe_and_into_a_file():
    import os
    import threading
    from gpuviz.trace.formats import parallel
    rng = np.random.default_rng(2)
    sizes = [int(s) for s in rng.integers(0, 70000, 2500)] + [0, 1, 1 << 20]      # > one writev batch
    data = [rng.integers(0, 256, s, dtype=np.uint8).tobytes() for s in sizes]
    read, write = os.pipe()
    sender = threading.Thread(target=lambda: (parallel._write_all(write, [memoryview(d) for d in data]), os.close(write)),
                              daemon=True)
    sender.start()
    with os.fdopen(read, "rb") as f:
        assert f.read() == b"".join(data)
    sender.join()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("test")
        try:
            parallel._write_all(fd, [memoryview(d) for d in data], at=0)
            assert os.pread(fd, sum(sizes) + 1, 0) == b"".join(data)
        finally:
            os.close(fd)


def test_shared_memory_layout_is_aligned():
    from gpuviz.trace.formats import parallel
    offsets, split, total = parallel._layout([0, 1, 64, 65, 0, 3], [0, 1, 0, 0, 1, 1])
    assert offsets == [0, 4096, 0, 64, 4160, 4160] and split == 4096 and total == 4224
    assert parallel._layout([], b"") == ([], 0, 0)
    assert parallel._layout([5], [0]) == ([0], 4096, 4096)
    assert parallel._layout([5], [1]) == ([0], 0, 64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"12", b"", b'"a"', b'"x\\"y"', b"{}", b"[1]", b'"\xc3\xa9"', b"-3", b"true",
                                 b'""', b"0.5"]), max_size=8))
def test_raw_ids_as_text_equal_the_trimmed_cast(raws):
    got = rawtext.raws_to_text([msgspec.Raw(r) for r in raws])
    want = rawtext.raw_text(rawtext.raw_to_binary(raws)).cast(pa.string())
    assert got.type == want.type == pa.string() and got.to_pylist() == want.to_pylist()


def _decoded_both_ways(data, monkeypatch):
    """decode_events with the located events array and with the full header pass."""
    def run():
        reporter = je.Reporter("doc", False)
        cols = je.decode_events(data, "doc", reporter)
        return cols, dict(reporter.counts)
    fast = run()
    with monkeypatch.context() as m:
        m.setattr(je, "LOCATE_EVENTS", False)
        full = run()
    return fast, full


def test_locate_events_switch_forces_the_full_pass(monkeypatch):
    """LOCATE_EVENTS = False (the full pass of the comparisons here and of
    the differential fuzz target) never looks for the events array."""
    def refuse(data, start):
        raise AssertionError("located path taken")
    monkeypatch.setattr(je, "_locate_events", refuse)
    monkeypatch.setattr(je, "LOCATE_EVENTS", False)
    cols = je.decode_events(('{"traceEvents": %s}' % _EVENTS).encode(), "doc", je.Reporter("doc", False))
    assert cols.name.to_pylist() == ["a]", "b"]
    monkeypatch.setattr(je, "LOCATE_EVENTS", True)
    with pytest.raises(AssertionError, match="located path taken"):
        je.decode_events(('{"traceEvents": %s}' % _EVENTS).encode(), "doc", je.Reporter("doc", False))


def _same_columns(a, b):
    for name in ("ph", "name", "cat", "pid", "tid", "args"):
        assert getattr(a, name).to_pylist() == getattr(b, name).to_pylist(), name
    for name in ("ts_ns", "ts_ok", "dur_ns", "dur_ok", "has_dur"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.header == b.header and a.rare.keys() == b.rare.keys()


_EVENTS = '[{"ph":"X","pid":1,"tid":2,"ts":1.5,"dur":2,"name":"a]","args":{"v":[1,2]}},{"ph":"i","pid":1,"ts":3,"name":"b"}]'


@pytest.mark.parametrize("doc, located", [
    ('{"traceEvents": %s}' % _EVENTS, True),
    ('{"schemaVersion": 1, "traceEvents": %s, "INFO": ["x.cpp:12] done", "y]"], "n": 2}' % _EVENTS, True),
    ('{"a": {"b": [1]}, "traceEvents": %s, "note": "}]"}' % _EVENTS, True),
    ('{"traceEvents": %s, "z": [{}]}' % _EVENTS, False),                       # a later array of objects
    ('{"traceEvents": %s, "samples": [{"a": 1}, {"b": "]"}]}' % _EVENTS, False),
    ('{"traceEvents": [], "x": 1}', True),
    ('{"traceEvents" :\n [ ] }', True),
    ('{"meta": {"traceEvents": [1]}, "traceEvents": %s}' % _EVENTS, False),   # a nested key first
    ('{"traceEvents": %s, "traceEvents": []}' % _EVENTS, False),             # a duplicate key: the last counts
    ('{"traceEvents": %s, "tail": "\\"traceEvents\\": []"}' % _EVENTS, True),   # the key text escaped in a string
    ('{"traceEvents": %s, "cut": ' % _EVENTS, False),                         # broken: the full pass reports
    ('{"traceEvents": %s "x": 1}' % _EVENTS, False),
    # a later array of objects longer than the end check's window: a wrong guess, the events' decode fails
    ('{"traceEvents": %s, "samples": [%s]}' % (_EVENTS, ",".join('{"a": %d}' % i for i in range(9000))), True),
])
def test_located_events_array_decodes_as_the_full_pass(doc, located, monkeypatch):
    """The events array found without the header pass (or not found: then
    the full pass) gives the same columns, header and report as the full
    pass, for the array anywhere among the keys, ']' in later strings,
    nested and duplicate keys and broken documents."""
    data = doc.encode()
    _, start = je._find_array(data, "doc")
    found = je._locate_events(data, start)
    assert (found is not None) is located
    if found is not None and len(data) < je._END_CHECK_BYTES:
        top = je._HEADER.decode(data)
        assert data[found[1]:found[2]] == bytes(top["traceEvents"])
    (fast, fast_counts), (full, full_counts) = _decoded_both_ways(data, monkeypatch)
    _same_columns(fast, full)
    assert fast_counts == full_counts


def test_located_events_array_on_the_real_object_traces(monkeypatch):
    import gzip
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2] / "../shared/data/traces"
    paths = [p for p in sorted(folder.glob("*.json*")) if not p.name.startswith("otlp")]
    if not paths:
        pytest.skip("no shared traces")
    objects = 0
    for path in paths:
        data = path.read_bytes()
        data = gzip.decompress(data) if path.suffix == ".gz" else data
        is_object, start = je._find_array(data, str(path))
        if not is_object:
            continue
        found = je._locate_events(data, start)
        if found is not None:
            objects += 1
            assert data[found[1]:found[2]] == bytes(je._HEADER.decode(data)["traceEvents"]), path.name
        (fast, fast_counts), (full, full_counts) = _decoded_both_ways(data, monkeypatch)
        _same_columns(fast, full)
        assert fast_counts == full_counts, path.name
    assert objects >= 3      # the Kineto traces at least


@pytest.mark.parametrize("locate", [True, False])
def test_object_document_after_a_byte_order_mark(locate, monkeypatch):
    """A UTF-8 BOM before '{' is skipped, as before '[' (the full header
    pass used to reject it as malformed JSON at byte 0)."""
    if not locate:
        monkeypatch.setattr(je, "LOCATE_EVENTS", False)
    doc = ('{"traceEvents": %s, "meta": 1}' % _EVENTS).encode()
    plain = je.decode_events(doc, "doc", je.Reporter("doc", True))
    marked = je.decode_events(b"\xef\xbb\xbf" + doc, "doc", je.Reporter("doc", True))
    _same_columns(marked, plain)
    assert marked.header == {"meta": 1}
