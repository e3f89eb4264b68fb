"""``python -m gpuviz.bench trace-import`` (``bench_trace_import`` has the
harness's case signature): trace import speed and memory on the CPU, and the
GPUTraceScene upload on the GPU.

Inputs are synthetic traces (:func:`gpuviz.trace.synthetic`, 8 ranks x 8
threads, CPU->GPU flows) written as Chrome JSON by
:func:`gpuviz.trace.synthetic.to_chrome_json`: ``--sizes`` are span counts
(default 256K, 1M, 3M: about 40, 160 and 480 MB). Every measurement runs in a
fresh child interpreter, so its peak RSS (``VmHWM``) is that method's alone
(with the interpreter and its imports: ``base_mb`` in the JSON rows; ``rss_ratio``, the
figure the <= 3x target reads, is the import's own memory: peak minus that base, over the
file size); ``runs`` (at most 3) repeats inside the child give the median time,
and the peak is the first load's (later loads start on whatever the
allocators kept of it; the gpuviz row notes the peak over all of them).

Tables, all rows from the same run:

* ``trace-import-chrome``: ``gpuviz.trace.load`` end to end into Arrow (MB/s,
  events/s, peak RSS above the warm interpreter vs the file; targets >= 100 MB/s, >= 1M events/s,
  RSS <= 3x), the same load re-opened from the columnar cache (``cache=True``;
  an untimed load in a child of its own writes the entry first), the baseline ``json.load`` + a Python loop into Arrow, and
  parse-only rows of the parser candidates that are installed (stdlib json,
  orjson, msgspec into Python objects; pysimdjson into its own document,
  no Python objects; DuckDB ``read_json`` with typed columns into Arrow;
  ``pyarrow.json`` on a newline-delimited copy of the same events: it
  cannot read a JSON array).
* ``trace-import-kineto``: Kineto-layout files (synthetic, and the shared
  real ResNet trace when present) through ``gpuviz.trace.load`` and
  holistictraceanalysis's ``parse_trace_dataframe`` (target: >= 5x faster).
* ``trace-import-scene``: GPUTraceScene construction until the GPU holds the
  data (25M spans on a real GPU, 1M on a CPU adapter; target <= 2 s on the
  H200), checked by reading records back.
* ``trace-import-synthetic``: :func:`gpuviz.trace.synthetic` generation time
  and peak RSS per tier (1M, 25M, 100M on a real GPU's host; 1M, 4M on a CPU
  adapter; targets: 100M in <= 120 s and <= 40 GB, scaled linearly).

A row is printed only after its output matched what was written (span,
link and event counts, sums of the exact ns times).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .tables import Column

__all__ = ["bench_trace_import", "DEFAULT_SIZES", "PARSERS", "TABLES"]

DEFAULT_SIZES = (256 << 10, 1 << 20, 3 << 20)
#: The tables, in order; ``$GPUVIZ_BENCH_TRACE_TABLES`` (comma-separated) picks some.
TABLES = ("chrome", "kineto", "scene", "synthetic")
#: Parse-only candidates: name -> importable module.
PARSERS = {"json.loads": "json", "orjson.loads": "orjson", "msgspec.json.decode": "msgspec",
           "simdjson.loads": "simdjson", "duckdb read_json": "duckdb", "pyarrow.json (NDJSON copy)": "pyarrow.json"}
#: The json.load baseline builds Python objects of ~10x the file: only up to this many MB.
BASELINE_MAX_MB = 200
REAL_KINETO = Path(__file__).resolve().parents[3] / "shared/data/traces/kineto_resnet_nccl_large.json.gz"


# ------------------------------------------------------------------ children
def _baseline(path):
    """json.load + a Python loop over the events into Arrow columns."""
    import pyarrow as pa

    with open(path, "rb") as f:
        root = json.load(f)
    events = root["traceEvents"] if isinstance(root, dict) else root
    cols = {k: [] for k in ("name", "cat", "start_ns", "duration_ns", "pid", "tid")}
    for e in events:
        if e.get("ph") == "X":
            cols["name"].append(e.get("name", ""))
            cols["cat"].append(e.get("cat", ""))
            cols["start_ns"].append(round(float(e["ts"]) * 1000))
            cols["duration_ns"].append(round(float(e.get("dur", 0)) * 1000))
            cols["pid"].append(str(e.get("pid")))
            cols["tid"].append(str(e.get("tid")))
    table = pa.table(cols)
    start = table.column("start_ns").to_numpy()
    return {"events": len(events), "spans": table.num_rows, "start_sum": int(start.sum()) if start.size else 0}


def _parse_only(method, path):
    if method == "duckdb read_json":
        import duckdb

        # typed columns (as the importer's typed decoding): auto-detection fails on mixed pid/tid types
        table = duckdb.sql(f"SELECT * FROM read_json('{path}', format='array', maximum_object_size=1000000000, "
                           "columns={ph: 'VARCHAR', name: 'VARCHAR', cat: 'VARCHAR', ts: 'DECIMAL(20,3)', "
                           "dur: 'DECIMAL(20,3)', pid: 'VARCHAR', tid: 'VARCHAR', id: 'VARCHAR', bp: 'VARCHAR', "
                           "args: 'JSON'})").to_arrow_table()
        return {"events": table.num_rows}
    if method.startswith("pyarrow.json"):
        import pyarrow.json as pj

        return {"events": pj.read_json(path).num_rows}
    data = Path(path).read_bytes()
    if method == "json.loads":
        root = json.loads(data)
    elif method == "orjson.loads":
        import orjson

        root = orjson.loads(data)
    elif method == "msgspec.json.decode":
        import msgspec

        root = msgspec.json.decode(data)
    else:
        import simdjson

        root = simdjson.Parser().parse(data)
        return {"events": len(root["traceEvents"] if isinstance(root, simdjson.Object) else root)}
    return {"events": len(root["traceEvents"] if isinstance(root, dict) else root)}


def _hta(path):
    import logging

    logging.disable(logging.WARNING)
    from hta.common.trace_parser import parse_trace_dataframe
    from hta.configs.parser_config import ParserConfig

    _, frame, _ = parse_trace_dataframe(str(path), ParserConfig())
    return {"spans": len(frame)}


def _gpuviz(path, cache=False):
    from gpuviz.trace import load

    # cache=False: a parse row must parse every time, whatever the file's size.
    trace = load(str(path), progress=False, cache=cache)
    start = trace.spans.column("start_ns").to_numpy()
    return {"spans": trace.span_count, "links": trace.links.num_rows,
            "start_sum": int(start.sum()) if start.size else 0, "report": trace.report}


def _high_water():
    """Peak RSS bytes of this process image: ``VmHWM`` (Linux; reset by exec,
    unlike ``ru_maxrss``, which a child inherits from its parent), else
    ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _synthetic(spans):
    from gpuviz.trace.synthetic import synthetic

    trace = synthetic(spans=int(spans))
    return {"spans": trace.span_count, "links": trace.links.num_rows, "bytes": trace.spans.nbytes}


def _child(method, path, repeats):
    """Run one method ``repeats`` times on ``path`` (for ``synthetic``: the
    span count); print a JSON line."""
    run = {"gpuviz": _gpuviz, "gpuviz-cache": lambda p: _gpuviz(p, cache=True), "baseline": _baseline,
           "hta": _hta, "synthetic": _synthetic}.get(method)
    if run is None:
        run = lambda p: _parse_only(method, p)  # noqa: E731
    # pandas (which pyarrow imports on its first numpy conversion, and HTA is built on) is a once-per-process
    # cost of ~0.3 s and 33 MB that no row's time or peak RSS should include.
    import pandas  # noqa: F401
    if method in ("gpuviz", "gpuviz-cache", "synthetic"):
        from gpuviz.trace import load, synthetic  # noqa: F401 - imports count towards the base, not the method
        # ... and so do the readers that load() imports on its first call (~20 ms)
        import gpuviz.trace.formats.chrome  # noqa: F401
        import gpuviz.trace.formats.kineto  # noqa: F401
        import gpuviz.trace.formats.otlp  # noqa: F401 - format detection
    if method == "hta":
        import logging

        logging.disable(logging.WARNING)
        try:                                # the same for HTA's parser (~30 ms)
            import hta.common.trace_parser  # noqa: F401
        except ImportError:
            pass
    base = _high_water()
    times, cpus, result, peak = [], [], None, None
    for _ in range(repeats):
        started, cpu = time.perf_counter(), _cpu_seconds()
        result = run(path)
        times.append(time.perf_counter() - started)
        cpus.append(_cpu_seconds() - cpu)
        # the peak of one load is the first's: later loads start on whatever the allocators kept of it
        peak = _high_water() if peak is None else peak
    print(json.dumps({"seconds": statistics.median(times), "cpu_seconds": statistics.median(cpus), "peak": peak,
                      "peak_repeats": _high_water(), "base": base, **result}))


def _cpu_seconds():
    """User + system CPU seconds of this process and its waited-for children
    (a forked decoding child, HTA's or DuckDB's threads are all counted):
    on a machine shared with other work, CPU time is the stable figure."""
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def measure(method, path, repeats, *, timeout=3600):
    """Run ``method`` on ``path`` in a child interpreter: its result dict
    (``seconds``, ``peak``/``base`` RSS bytes, counts), or ``{"error": text}``."""
    command = [sys.executable, "-m", "gpuviz.bench.trace_import", "--child", method, str(path), str(repeats)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=str(Path(__file__).resolve().parents[2]))
    except subprocess.TimeoutExpired:
        return {"error": f"no result after {timeout} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"error": tail[:300]}
    return json.loads(lines[-1])


# ------------------------------------------------------------------ inputs
def _write_inputs(folder, n, *, kineto=False):
    """A synthetic trace of ``n`` spans written as Chrome (or Kineto) JSON:
    (path, events written, expected facts)."""
    from gpuviz.trace.synthetic import synthetic, to_chrome_json

    trace = synthetic(spans=n, seed=n)
    path = Path(folder) / f"synthetic-{n}{'-kineto' if kineto else ''}.json"
    events = to_chrome_json(trace, path, kineto=kineto)
    start = trace.spans.column("start_ns").to_numpy()
    facts = {"spans": n, "links": trace.links.num_rows, "start_sum": int(start.sum()) if n else 0,
             "events": events}
    return path, facts


def _ndjson(path):
    """The same events one per line (what ``pyarrow.json`` reads)."""
    out = path.with_suffix(".ndjson")
    with open(path, "rb") as f, open(out, "wb") as g:
        for line in f:
            line = line.strip()
            if line not in (b"[", b"]", b""):
                g.write(line.rstrip(b",") + b"\n")
    return out


def _check(label, got, facts, keys):
    from .harness import Mismatch

    if "error" in got:
        return
    for key in keys:
        if got.get(key) != facts.get(key):
            raise Mismatch(f"trace-import {label}: {key} {got.get(key)} != {facts.get(key)} written")


def _row(table, method, n, mb, events, got, *, targets=False, **extra):
    if "error" in got:
        table.note(f"{method} at {n} spans: no result ({got['error']})")
        return None
    seconds, peak = got["seconds"], got["peak"] / 1e6
    cpu = got.get("cpu_seconds")
    values = dict(method=method, spans=n, file_mb=mb, events=events, seconds_s=seconds, mb_per_s=mb / seconds,
                  cpu_s=cpu, mb_per_cpu_s=mb / cpu if cpu else None,
                  mev_per_s=events / seconds / 1e6 if events else None, peak_mb=peak, base_mb=got["base"] / 1e6,
                  rss_ratio=(peak - got["base"] / 1e6) / mb,
                  **extra)
    if targets:
        values.update(t_speed=seconds * 100 / mb, t_events=seconds * 1e6 / events, speed_target=1.0,
                      events_target=1.0, rss_target=3.0)
    return table.add(**values)


CHROME_COLUMNS = [Column("method", "method", 36), Column("spans", "spans", 6, "size"),
                  Column("file_mb", "file MB", 7, "ratio"), Column("seconds_s", "s", 6, "ratio"),
                  Column("mb_per_s", "MB/s", 7, "ratio"), Column("mev_per_s", "M ev/s", 6, "ratio"),
                  Column("cpu_s", "CPU s", 6, "ratio"), Column("mb_per_cpu_s", "MB/CPU s", 8, "ratio"),
                  Column("peak_mb", "peak RSS MB", 8, "ratio"), Column("rss_ratio", "(peak-base)/file", 6, "ratio"),
                  Column("speed_target", "t/t(100MB/s)", 10, "target", of="t_speed"),
                  Column("events_target", "t/t(1M ev/s)", 10, "target", of="t_events"),
                  Column("rss_target", "RSS/file", 8, "target", of="rss_ratio")]
KINETO_COLUMNS = [Column("method", "method", 36), Column("input", "input", 24), Column("file_mb", "MB", 6, "ratio"),
                  Column("seconds_s", "s", 6, "ratio"), Column("mb_per_s", "MB/s", 7, "ratio"),
                  Column("cpu_s", "CPU s", 6, "ratio"),
                  Column("peak_mb", "peak RSS MB", 8, "ratio"), Column("vs_hta", "gpuviz/HTA", 8, "ratio"),
                  Column("cpu_vs_hta", "CPU gpuviz/HTA", 8, "ratio"),
                  Column("hta_target", "vs HTA", 8, "target", of="vs_hta")]
SYNTHETIC_COLUMNS = [Column("spans", "spans", 6, "size"), Column("seconds_s", "s", 7, "ratio"),
                     Column("mspans_per_s", "M spans/s", 8, "ratio"), Column("peak_gb", "peak RSS GB", 8, "ratio"),
                     Column("seconds_target", "s (120 s/100M)", 12, "target", of="seconds_s"),
                     Column("rss_target", "GB (40 GB/100M)", 12, "target", of="peak_gb")]
SCENE_COLUMNS = [Column("spans", "spans", 6, "size"), Column("mb", "GPU MB", 8, "ratio"),
                 Column("prepare_s", "prepare s", 8, "ratio"), Column("write_s", "write s", 8, "ratio"),
                 Column("seconds_s", "total s", 8, "ratio"), Column("target", "total", 8, "target", of="seconds_s")]


# ------------------------------------------------------------------ tables
def _chrome_table(report, folder, sizes, repeats):
    import importlib.util

    table = report.table("trace-import-chrome", "trace import: Chrome JSON -> Arrow (CPU, child process per row)",
                         CHROME_COLUMNS)
    kept = None
    for n in sizes:
        path, facts = _write_inputs(folder, n)
        mb = path.stat().st_size / 1e6
        got = measure("gpuviz", path, repeats)
        _check(f"gpuviz.trace.load at {n}", got, facts, ("spans", "links", "start_sum"))
        _row(table, "gpuviz.trace.load", n, mb, facts["events"], got, targets=True,
             report=got.get("report"))
        if "peak_repeats" in got and repeats > 1:
            table.note(f"gpuviz.trace.load at {n} spans: peak RSS of the first load (fresh process); after "
                       f"{repeats} loads in one process {(got['peak_repeats'] - got['base']) / 1e6 / mb:.2f}x the "
                       "file (what the allocators keep between loads)")
        # The columnar cache: one untimed load writes the entry, then fresh children re-open it.
        os.environ["GPUVIZ_CACHE_DIR"] = str(Path(folder) / "cache")
        measure("gpuviz-cache", path, 1)
        got = measure("gpuviz-cache", path, repeats)
        _check(f"gpuviz.trace.load(cache=True) at {n}", got, facts, ("spans", "links", "start_sum"))
        _row(table, "gpuviz.trace.load, cache re-open", n, mb, facts["events"], got)
        if mb <= BASELINE_MAX_MB:
            got = measure("baseline", path, repeats)
            _check(f"baseline at {n}", got, facts, ("spans", "start_sum"))
            _row(table, "json.load + Python loop", n, mb, facts["events"], got)
        else:
            table.note(f"json.load + Python loop at {n} spans: skipped (file {mb:.0f} MB > {BASELINE_MAX_MB} MB; "
                       "its Python objects take ~10x the file)")
        for method, module in PARSERS.items():
            if importlib.util.find_spec(module.split(".")[0]) is None:
                table.note(f"{method}: not installed")
                continue
            source = _ndjson(path) if method.startswith("pyarrow.json") else path
            got = measure(method, source, repeats)
            _check(f"{method} at {n}", got, facts, ("events",))
            _row(table, f"parse only: {method}", n, mb, facts["events"], got)
            if source != path:
                source.unlink()
        if kept is not None:
            kept.unlink()
        kept = path
    if kept is not None:
        kept.unlink()
    import shutil
    shutil.rmtree(Path(folder) / "cache", ignore_errors=True)


def _kineto_table(report, folder, sizes, repeats):
    import importlib.util

    table = report.table("trace-import-kineto", "trace import: Kineto JSON, gpuviz vs holistictraceanalysis",
                         KINETO_COLUMNS)
    if importlib.util.find_spec("hta") is None:
        table.note("holistictraceanalysis is not installed (pip install '.[bench]'): no HTA rows")
    n = sizes[min(1, len(sizes) - 1)]
    path, facts = _write_inputs(folder, n, kineto=True)
    inputs = [(f"synthetic {n} spans", n, path, facts)]
    if REAL_KINETO.exists():
        inputs.append((REAL_KINETO.name.split(".")[0], None, REAL_KINETO, None))
    for label, n, source, facts in inputs:
        mb = (source.stat().st_size if source.suffix == ".json" else _gunzipped_size(source)) / 1e6
        ours = measure("gpuviz", source, repeats)
        if facts is not None:
            _check(f"kineto {label}", ours, facts, ("spans", "links", "start_sum"))
        theirs = measure("hta", source, repeats) if importlib.util.find_spec("hta") else {"error": "not installed"}
        if facts is not None and "error" not in theirs and theirs["spans"] != facts["spans"]:
            table.note(f"HTA on {label}: {theirs['spans']} rows for {facts['spans']} X events")
        both = "error" not in ours and "error" not in theirs
        ratio = ours["seconds"] / theirs["seconds"] if both else None
        cpu_ratio = ours["cpu_seconds"] / theirs["cpu_seconds"] if both and theirs.get("cpu_seconds") else None
        events = facts["events"] if facts else None
        _row(table, "gpuviz.trace.load", n, mb, events, ours, input=label, vs_hta=ratio, cpu_vs_hta=cpu_ratio,
             hta_target=0.2,
             spans_found=ours.get("spans"))
        _row(table, "hta parse_trace_dataframe", n, mb, events, theirs, input=label, vs_hta=None, cpu_vs_hta=None,
             spans_found=theirs.get("spans"))
    path.unlink()


def _gunzipped_size(path):
    import gzip

    with gzip.open(path, "rb") as f:
        return sum(len(block) for block in iter(lambda: f.read(1 << 24), b""))


def _scene_table(device, report):
    import importlib.util

    table = report.table("trace-import-scene", "GPUTraceScene upload (synthetic trace, until the GPU holds it)",
                         SCENE_COLUMNS)
    if importlib.util.find_spec("gpuviz.trace.scene") is None:
        table.note("gpuviz.trace.scene is not there: no scene row")
        return
    from gpuviz.trace.scene import RECORD_WORDS, GPUTraceScene
    from gpuviz.trace.synthetic import synthetic

    from .harness import Mismatch

    cpu = "cpu" in str(device.adapter.info.get("adapter_type", "")).lower()
    n = int(os.environ.get("GPUVIZ_BENCH_SCENE_SPANS", 1 << 20 if cpu else 25_000_000))
    if cpu:
        table.note(f"CPU adapter: {n} spans instead of 25M (GPUVIZ_BENCH_SCENE_SPANS sets it)")
    trace = synthetic(spans=n, seed=3)
    from .harness import BU

    device.queue.read_buffer(device.create_buffer(size=16, usage=BU.COPY_SRC | BU.COPY_DST), 0, 4)  # idle queue
    started = time.perf_counter()
    scene = GPUTraceScene(device, trace)
    device.queue.read_buffer(scene.record_buffer, 0, 4 * RECORD_WORDS)  # waits for every queued write
    seconds = time.perf_counter() - started
    try:
        c = {k: trace.spans.column(k).to_numpy() for k in ("start_ns", "duration_ns", "lane", "thread", "id")}
        rel = c["start_ns"] - scene.time_origin_ns
        for lo in sorted({0, max(0, n // 2 - 512), max(0, n - 1024)}):
            count = min(1024, n - lo)
            if count <= 0:
                continue
            words = np.frombuffer(device.queue.read_buffer(scene.record_buffer, lo * 4 * RECORD_WORDS,
                                                           count * 4 * RECORD_WORDS), np.uint32)
            words = words.reshape(count, RECORD_WORDS).astype(np.int64)
            rows = scene.span_ids[lo:lo + count]
            ok = (np.array_equal(words[:, 0] | words[:, 1] << 32, rel[rows])
                  and np.array_equal(words[:, 2] | words[:, 3] << 32, c["duration_ns"][rows])
                  and np.array_equal(words[:, 4], c["lane"][rows]) and np.array_equal(words[:, 5], c["thread"][rows])
                  and np.array_equal(words[:, 11], c["id"][rows]))
            if not ok:
                raise Mismatch(f"trace-import scene: records {lo}..{lo + count} differ from the trace")
        table.add(spans=n, mb=scene.stats["total"] / 1e6,
                  prepare_s=scene.timings["prepare"], write_s=scene.timings["write"], seconds_s=seconds,
                  target=2.0)
    finally:
        scene.destroy()


def _synthetic_table(device, report):
    """Generation time and peak RSS of gpuviz.trace.synthetic per tier, in a
    child each; targets scale 100M spans <= 120 s and <= 40 GB linearly."""
    from .harness import Mismatch

    table = report.table("trace-import-synthetic", "gpuviz.trace.synthetic: generation (CPU, child per tier)",
                         SYNTHETIC_COLUMNS)
    cpu = "cpu" in str(device.adapter.info.get("adapter_type", "")).lower()
    tiers = os.environ.get("GPUVIZ_BENCH_SYNTHETIC", "1000000,4000000" if cpu else "1000000,25000000,100000000")
    if cpu and "GPUVIZ_BENCH_SYNTHETIC" not in os.environ:
        table.note("CPU adapter (not the GPU machine): tiers 1M and 4M (GPUVIZ_BENCH_SYNTHETIC sets them)")
    for n in (int(float(t)) for t in tiers.split(",")):
        got = measure("synthetic", n, 1)
        if "error" in got:
            table.note(f"synthetic {n}: no result ({got['error']})")
            continue
        if got["spans"] != n:
            raise Mismatch(f"trace-import synthetic: {got['spans']} spans for {n} asked")
        table.add(spans=n, seconds_s=got["seconds"], mspans_per_s=n / got["seconds"] / 1e6,
                  peak_gb=got["peak"] / 1e9, seconds_target=120 * n / 1e8, rss_target=40 * n / 1e8,
                  links=got["links"])


def bench_trace_import(device, sizes, runs, *, variants, peers, report):
    """The three trace-import tables (see the module docstring). ``sizes``:
    span counts of the Chrome inputs (default :data:`DEFAULT_SIZES`);
    ``runs``: repeats per child (at most 3: inputs are large). Temporary
    files go to ``$GPUVIZ_BENCH_TMP`` (default: the system temp folder) and
    are deleted. ``$GPUVIZ_BENCH_TRACE_TABLES`` (e.g. ``scene,synthetic``)
    runs only some of :data:`TABLES`. Does not time anything on the GPU but
    the scene upload."""
    sizes = list(sizes or DEFAULT_SIZES)
    repeats = max(1, min(3, runs))
    tables = {t.strip() for t in os.environ.get("GPUVIZ_BENCH_TRACE_TABLES", ",".join(TABLES)).split(",")}
    if tables - set(TABLES):
        raise SystemExit(f"GPUVIZ_BENCH_TRACE_TABLES: unknown tables {sorted(tables - set(TABLES))} (of {TABLES})")
    with tempfile.TemporaryDirectory(prefix="gpuviz-trace-bench-", dir=os.environ.get("GPUVIZ_BENCH_TMP")) as folder:
        if "chrome" in tables:
            _chrome_table(report, folder, sizes, repeats)
        if "kineto" in tables:
            _kineto_table(report, folder, sizes, repeats)
    if "scene" in tables:
        _scene_table(device, report)
    if "synthetic" in tables:
        _synthetic_table(device, report)


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
