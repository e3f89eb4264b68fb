"""Saved ``.gpuviz`` traces and the columnar import cache of ``gpuviz.trace.load``.

Round trips run on the real traces of the repository (assets/) and of the
shared test data; the cache's decisions (hit, miss, invalidation, corruption,
unwritable folder, cap, threshold) are checked by whether the parser ran
(``gpuviz.trace.load.load_file`` patched) and which entry files exist.
"""

import errno
import importlib
import json
import os
import warnings
from pathlib import Path

import pytest

from gpuviz.trace import TraceCacheWarning, TraceFormatError, load, save
from gpuviz.trace.synthetic import synthetic, to_chrome_json

# The modules, not the functions of the same name that gpuviz.trace binds.
trace_cache = importlib.import_module("gpuviz.trace.cache")
trace_load = importlib.import_module("gpuviz.trace.load")

ASSETS = Path(__file__).parents[2] / "assets"
ASSET_TRACES = ["kineto_alexnet_cuda.json.gz", "otlp_jaeger_multi_resource.json"]
TABLES = ("spans", "links", "threads", "processes", "counters", "instants")


def assert_same(a, b):
    for name in TABLES:
        assert getattr(a, name).equals(getattr(b, name)), name
    assert a.report == b.report
    assert a.sources == b.sources
    assert a.metadata == b.metadata


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(folder))
    monkeypatch.delenv("GPUVIZ_CACHE_MAX_BYTES", raising=False)
    return folder / "traces"


def entries(folder):
    return sorted(folder.glob("*.gpuviz")) if folder.is_dir() else []


@pytest.fixture
def parses(monkeypatch):
    """Counts calls of the parser behind ``load``."""
    calls = []
    real = trace_load.load_file

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)
    monkeypatch.setattr(trace_load, "load_file", counting)
    return calls


def no_parse(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("parsed although the cache holds the trace")
    monkeypatch.setattr(trace_load, "load_file", fail)


def small_chrome(tmp_path, name="t.json", spans=3000, seed=0):
    path = tmp_path / name
    to_chrome_json(synthetic(spans=spans, processes=2, threads_per_process=2, seed=seed), path)
    return path


# --- save / load of .gpuviz files ----------------------------------------------------

@pytest.mark.parametrize("name", ASSET_TRACES)
def test_save_round_trip_assets(tmp_path, name):
    trace = load(ASSETS / name, cache=False)
    save(trace, tmp_path / "t.gpuviz")
    back = load(tmp_path / "t.gpuviz")
    assert_same(trace, back)
    assert_same(trace, load(tmp_path / "t.gpuviz", format="gpuviz"))
    assert trace.span_count > 0


def test_save_keeps_report_metadata_and_sources(tmp_path):
    trace = load(ASSETS / "kineto_alexnet_cuda.json.gz", cache=False)
    trace.report["test_reason"] = 3
    trace.metadata["note"] = {"nested": [1, 2.5, "x"]}
    save(trace, tmp_path / "t.gpuviz")
    back = load(tmp_path / "t.gpuviz")
    assert back.report["test_reason"] == 3
    assert back.metadata["note"] == {"nested": [1, 2.5, "x"]}
    assert back.sources == trace.sources


def test_saved_columns_are_memory_mapped(tmp_path):
    trace = load(ASSETS / "kineto_alexnet_cuda.json.gz", cache=False)
    save(trace, tmp_path / "t.gpuviz")
    back = load(tmp_path / "t.gpuviz")
    for name in TABLES:
        for column in getattr(back, name).columns:
            assert column.num_chunks <= 1, name


def test_saved_file_of_another_version_is_refused(tmp_path):
    trace = load(ASSETS / "otlp_jaeger_multi_resource.json", cache=False)
    path = tmp_path / "t.gpuviz"
    save(trace, path)
    data = bytearray(path.read_bytes())
    data[8] = trace_cache.FORMAT_VERSION + 1
    path.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError, match="version"):
        load(path)


def test_truncated_saved_file_is_a_format_error(tmp_path):
    trace = load(ASSETS / "otlp_jaeger_multi_resource.json", cache=False)
    path = tmp_path / "t.gpuviz"
    save(trace, path)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated"):
        load(path, format="gpuviz")


# --- the import cache -------------------------------------------------------------------

@pytest.mark.parametrize("name", ASSET_TRACES)
def test_cache_round_trip_assets(cache_dir, monkeypatch, name):
    parsed = load(ASSETS / name, cache=True)
    assert len(entries(cache_dir)) == 1
    no_parse(monkeypatch)
    assert_same(parsed, load(ASSETS / name, cache=True))


def test_cache_round_trip_real_files(cache_dir, traces_dir, monkeypatch):
    files = sorted(p for p in traces_dir.iterdir() if p.name.endswith((".json", ".json.gz")))
    assert len(files) >= 15
    parsed = {p: load(p, cache=True) for p in files}
    assert len(entries(cache_dir)) == len(files)
    no_parse(monkeypatch)
    for p, trace in parsed.items():
        assert_same(trace, load(p, cache=True))


def test_miss_parses_and_writes_then_hit_reads(tmp_path, cache_dir, parses):
    path = small_chrome(tmp_path)
    first = load(path, cache=True)
    assert parses == [path] and len(entries(cache_dir)) == 1
    second = load(path, cache=True)
    assert parses == [path]
    assert_same(first, second)
    assert not list(cache_dir.glob(".tmp-*"))


def test_stale_temporary_files_are_removed_fresh_ones_kept(tmp_path, cache_dir):
    cache_dir.mkdir(parents=True)
    stale, live = cache_dir / ".tmp-dead.part", cache_dir / ".tmp-live.part"
    stale.write_bytes(b"half")
    live.write_bytes(b"half")
    os.utime(stale, (1, 1))
    load(small_chrome(tmp_path), cache=True)
    assert not stale.exists() and live.exists()
    assert len(entries(cache_dir)) == 1


@pytest.mark.parametrize("change", ["mtime", "size"])
def test_changed_source_invalidates(tmp_path, cache_dir, parses, change):
    path = small_chrome(tmp_path)
    load(path, cache=True)
    st = path.stat()
    if change == "mtime":
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    else:
        with open(path, "ab") as f:
            f.write(b"\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))   # same mtime: the size alone differs
    again = load(path, cache=True)
    assert len(parses) == 2
    assert_same(again, load(path, cache=False))
    assert len(entries(cache_dir)) == 2


def test_truncated_source_invalidates(tmp_path, cache_dir, parses):
    path = small_chrome(tmp_path)
    whole = load(path, cache=True)
    data = path.read_bytes()
    st = path.stat()
    path.write_bytes(data[:len(data) * 2 // 3])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    cut = load(path, cache=True)
    assert len(parses) == 2
    assert cut.span_count < whole.span_count
    assert_same(cut, load(path, cache=False))


@pytest.mark.parametrize("damage", ["truncate", "trailer", "header", "arrow"])
def test_corrupt_entry_is_discarded_with_a_warning(tmp_path, cache_dir, parses, damage):
    path = small_chrome(tmp_path)
    expected = load(path, cache=True)
    (entry,) = entries(cache_dir)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[:len(data) - 100]
    elif damage == "trailer":
        data[-30:-20] = b"\xff" * 10
    elif damage == "header":
        offset = int.from_bytes(data[-24:-16], "little")
        data[offset:offset + 8] = b"garbage!"
    else:   # the spans table's Arrow file footer magic
        offset, length = int.from_bytes(data[-24:-16], "little"), int.from_bytes(data[-16:-8], "little")
        start, nbytes = json.loads(bytes(data[offset:offset + length]))["tables"]["spans"]
        data[start + nbytes - 6:start + nbytes] = b"XXXXXX"
    entry.write_bytes(bytes(data))
    with pytest.warns(TraceCacheWarning, match="corrupt cache entry"):
        got = load(path, cache=True)
    assert len(parses) == 2
    assert_same(got, expected)
    (replaced,) = entries(cache_dir)
    assert replaced == entry and replaced.read_bytes() != bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(load(path, cache=True), expected)
    assert len(parses) == 2


def test_unwritable_cache_folder_warns_and_loads(tmp_path, monkeypatch, parses):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(blocker))
    path = small_chrome(tmp_path)
    with pytest.warns(TraceCacheWarning, match="cannot write the trace cache"):
        trace = load(path, cache=True)
    assert_same(trace, load(path, cache=False))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_cache_folder_warns_and_loads(tmp_path, cache_dir):
    cache_dir.mkdir(parents=True)
    cache_dir.chmod(0o555)
    path = small_chrome(tmp_path)
    try:
        with pytest.warns(TraceCacheWarning, match="cannot write"):
            trace = load(path, cache=True)
    finally:
        cache_dir.chmod(0o755)
    assert trace.span_count > 0


def test_full_disk_warns_and_leaves_no_partial_entry(tmp_path, cache_dir, monkeypatch):
    path = small_chrome(tmp_path)
    real_replace = os.replace

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(trace_cache.os, "replace", full)
    with pytest.warns(TraceCacheWarning, match="No space left"):
        trace = load(path, cache=True)
    monkeypatch.setattr(trace_cache.os, "replace", real_replace)
    assert trace.span_count > 0
    assert not any(cache_dir.iterdir())


def test_size_cap_evicts_least_recently_used(tmp_path, cache_dir, monkeypatch, parses):
    paths = [small_chrome(tmp_path, f"t{i}.json", seed=i) for i in range(3)]
    load(paths[0], cache=True)
    (entry0,) = entries(cache_dir)
    size = entry0.stat().st_size
    monkeypatch.setenv("GPUVIZ_CACHE_MAX_BYTES", str(int(size * 2.5)))
    load(paths[1], cache=True)
    entry1 = (set(entries(cache_dir)) - {entry0}).pop()
    # Make entry0 the older one, then use it: a hit makes it the most recent.
    os.utime(entry0, ns=(1, 1))
    os.utime(entry1, ns=(2, 2))
    load(paths[0], cache=True)
    assert len(parses) == 2
    load(paths[2], cache=True)
    left = set(entries(cache_dir))
    assert len(left) == 2 and entry0 in left and entry1 not in left


def test_entry_over_the_cap_is_not_kept(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("GPUVIZ_CACHE_MAX_BYTES", "1000")
    path = small_chrome(tmp_path)
    with pytest.warns(TraceCacheWarning, match="over the cache cap"):
        load(path, cache=True)
    assert entries(cache_dir) == []


def test_cache_false_never_reads_or_writes(tmp_path, cache_dir, monkeypatch, parses):
    path = small_chrome(tmp_path)
    load(path, cache=False)
    assert entries(cache_dir) == []
    load(path, cache=True)
    monkeypatch.setattr(trace_cache, "lookup", lambda key: pytest.fail("cache read with cache=False"))
    load(path, cache=False)
    assert len(parses) == 3 and len(entries(cache_dir)) == 1


def test_default_caches_above_the_threshold_only(tmp_path, cache_dir, monkeypatch, parses):
    path = small_chrome(tmp_path)
    load(path)
    assert entries(cache_dir) == []
    monkeypatch.setattr(trace_cache, "THRESHOLD_BYTES", path.stat().st_size - 1)
    load(path)
    assert len(entries(cache_dir)) == 1
    load(path)
    assert len(parses) == 2


def test_failed_import_caches_nothing(tmp_path, cache_dir):
    path = tmp_path / "bad.json"
    path.write_text('{"not": "a trace"}')
    with pytest.raises(TraceFormatError):
        load(path, cache=True)
    assert entries(cache_dir) == []


def test_source_changed_while_parsing_is_not_cached(tmp_path, cache_dir, monkeypatch):
    path = small_chrome(tmp_path)
    real = trace_load.load_file

    def touching(*args, **kwargs):
        trace = real(*args, **kwargs)
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        return trace
    monkeypatch.setattr(trace_load, "load_file", touching)
    assert load(path, cache=True).span_count > 0
    assert entries(cache_dir) == []


def test_strict_and_format_are_part_of_the_key(tmp_path, cache_dir, parses):
    path = small_chrome(tmp_path)
    load(path, cache=True)
    load(path, cache=True, strict=True)
    load(path, cache=True, format="chrome")
    assert len(parses) == 3 and len(entries(cache_dir)) == 3


def test_cache_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUVIZ_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert trace_cache.cache_folder() == tmp_path / "gpuviz" / "traces"
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "own"))
    assert trace_cache.cache_folder() == tmp_path / "own" / "traces"


def test_lists_of_files_are_not_cached(tmp_path, cache_dir):
    paths = [small_chrome(tmp_path, f"r{i}.json", seed=i) for i in range(2)]
    assert load(paths, cache=True, workers=0).span_count > 0
    assert entries(cache_dir) == []


def test_entry_with_a_foreign_header_is_discarded(tmp_path, cache_dir, parses):
    path = small_chrome(tmp_path)
    expected = load(path, cache=True)
    (entry,) = entries(cache_dir)
    data = bytearray(entry.read_bytes())
    offset, length = int.from_bytes(data[-24:-16], "little"), int.from_bytes(data[-16:-8], "little")
    header = json.loads(bytes(data[offset:offset + length]))
    for bad in ([1], {**header, "key": {**header["key"], "size": 1}}, {**header, "report": {"x": "y"}}):
        text = json.dumps(bad).encode()
        entry.write_bytes(bytes(data[:offset]) + text + (offset).to_bytes(8, "little")
                          + len(text).to_bytes(8, "little") + trace_cache.MAGIC)
        with pytest.warns(TraceCacheWarning, match="corrupt cache entry"):
            assert_same(load(path, cache=True), expected)
    assert len(parses) == 4


@pytest.mark.parametrize("error", [errno.EROFS, errno.EACCES])
def test_refused_write_warns_and_loads(tmp_path, cache_dir, monkeypatch, error):
    """What a read-only folder does for a user who is not root (root writes anyway)."""
    def refused(*args, **kwargs):
        raise OSError(error, os.strerror(error))
    monkeypatch.setattr(trace_cache.tempfile, "mkstemp", refused)
    path = small_chrome(tmp_path)
    with pytest.warns(TraceCacheWarning, match="cannot write the trace cache"):
        trace = load(path, cache=True)
    assert_same(trace, load(path, cache=False))
    assert entries(cache_dir) == []
