"""SceneTables's span records against a straightforward numpy construction
(one whole-column expression per word, no blocks, chunks or threads), with
the records kept on the host and streamed through a sink in reused
buffers; the four CSRs against stable argsorts; used-row flags against a bincount; a failing record task raises
instead of leaving workers waiting for a buffer. No GPU."""

import numpy as np
import pyarrow as pa
import pytest

import gpuviz.trace.scene_tables as scene_tables
from gpuviz.oracles.trace import scene_csrs as oracle_csrs
from gpuviz.oracles.trace import scene_records as oracle_records
from gpuviz.trace.model import Trace
from gpuviz.trace.scene_tables import RECORD_WORDS, SceneTables, used_rows
from gpuviz.trace.synthetic import synthetic


def _mixed(trace, seed, *, interleave):
    """``trace`` with random incomplete/args/zero durations, spans tables in
    several chunks and (``interleave``) partitions interleaved in ID order."""
    rng = np.random.default_rng(seed)
    spans = trace.spans
    n = spans.num_rows
    duration = spans.column("duration_ns").to_numpy().copy()
    duration[rng.random(n) < 0.1] = 0
    args = pa.array([None if a else '{"k": 1}' for a in rng.random(n) < 0.6], pa.string())
    partition = spans.column("partition").to_numpy()
    if interleave:
        partition = rng.integers(0, 3, n).astype(np.uint32)
    replaced = {"duration_ns": pa.array(duration), "incomplete": pa.array(rng.random(n) < 0.2),
                "args": args, "partition": pa.array(partition, pa.uint32())}
    for name, values in replaced.items():
        spans = spans.set_column(spans.schema.get_field_index(name), name, values)
    cut = [0, n // 3, n // 3 + 5, n]  # three batches: columns of several chunks
    spans = pa.Table.from_batches([b for a, z in zip(cut, cut[1:]) for b in spans.slice(a, z - a).to_batches()],
                                  schema=spans.schema)
    return Trace(spans=spans, links=trace.links, threads=trace.threads, processes=trace.processes,
                 counters=trace.counters, instants=trace.instants, sources=trace.sources)


def _streamed(trace):
    """The records as a sink receives them (copied: the buffers are reused)."""
    blocks = {}

    def write_records(lo, hi, block):
        assert block.shape == (hi - lo, RECORD_WORDS) and lo not in blocks
        blocks[lo] = block.copy()

    host = SceneTables(trace, "t", sink=(lambda *a: None, lambda *a: None, write_records))
    assert host.records is None
    if not blocks:
        return np.zeros((0, RECORD_WORDS), np.uint32)
    return np.concatenate([blocks[lo] for lo in sorted(blocks)])


CASES = [("synthetic", lambda: synthetic(spans=3000, processes=3, threads_per_process=4, links=300, seed=5)),
         ("mixed", lambda: _mixed(synthetic(spans=2500, processes=3, threads_per_process=2, seed=7), 1,
                                  interleave=False)),
         ("interleaved", lambda: _mixed(synthetic(spans=2000, processes=3, threads_per_process=3, seed=8), 2,
                                        interleave=True)),
         ("empty", lambda: synthetic(spans=0, processes=2, threads_per_process=2, seed=1))]


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_records_match_plain_numpy(name, make, workers, monkeypatch):
    trace = make()
    want = oracle_records(trace)
    # small blocks and chunks: partial last block and chunk, more chunks than reused buffers
    monkeypatch.setattr(scene_tables, "BLOCK_ROWS", 96)
    monkeypatch.setattr(scene_tables, "CHUNK_ROWS", 96 * 3 + 32)
    monkeypatch.setattr(scene_tables, "WORKERS", workers)
    kept = SceneTables(trace, "t").records
    assert kept.dtype == np.uint32 and kept.shape == want.shape
    np.testing.assert_array_equal(kept, want)
    np.testing.assert_array_equal(_streamed(trace), want)
    host = SceneTables(trace, "t")
    for csr, expected in oracle_csrs(trace).items():
        for got, exp in zip(host.csr[csr], expected):
            assert (got is None) == (exp is None), csr
            if exp is not None:
                np.testing.assert_array_equal(got, exp, err_msg=csr)
    if name == "mixed":  # the oracle sees every flag
        for bit in range(7):
            assert np.any(want[:, 10] & (1 << bit)), bit


def test_default_blocks_match_plain_numpy():
    trace = _mixed(synthetic(spans=20_000, processes=2, threads_per_process=3, seed=9), 3, interleave=True)
    want = oracle_records(trace)
    np.testing.assert_array_equal(SceneTables(trace, "t").records, want)
    np.testing.assert_array_equal(_streamed(trace), want)


def test_windows_cover_tasks_and_main_steps():
    trace = synthetic(spans=5000, processes=2, threads_per_process=2, seed=6)
    host = SceneTables(trace, "t", sink=(lambda *a: None, lambda *a: None, lambda lo, hi, block: None))
    assert set(host.task_s) <= set(host.windows)
    assert {"main-setup", "main-parents", "main-wait-inputs", "records", "main-write-records"} <= set(host.windows)
    assert all(0 <= a <= b for a, b in host.windows.values())


def test_used_rows_matches_bincount(monkeypatch):
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 500, 2000).astype(np.uint32)
    monkeypatch.setattr(scene_tables, "KEY_SLICE", 77)
    got = used_rows(keys, 600)
    assert got.dtype == np.bool_ and got.shape == (600,)
    np.testing.assert_array_equal(got, np.bincount(keys, minlength=600) > 0)
    assert not used_rows(np.zeros(0, np.uint32), 4).any()


@pytest.mark.parametrize("sink", [True, False])
def test_failing_record_task_raises(sink, monkeypatch):
    """More chunks than buffers and one task failing: the error comes back
    (the other workers get buffers and finish instead of waiting forever);
    without a sink too."""
    trace = synthetic(spans=3000, processes=2, threads_per_process=2, seed=2)
    real = scene_tables.record_rows

    def failing(out, columns, origin, lo, hi):
        if lo >= 1000:
            raise RuntimeError("boom")
        return real(out, columns, origin, lo, hi)

    monkeypatch.setattr(scene_tables, "CHUNK_ROWS", 100)
    monkeypatch.setattr(scene_tables, "WORKERS", 2)
    monkeypatch.setattr(scene_tables, "record_rows", failing)
    with pytest.raises(RuntimeError, match="boom"):
        SceneTables(trace, "t", sink=(lambda *a: None, lambda *a: None, lambda lo, hi, block: None) if sink else None)


def _grouped_oracle(keys, count, bounds):
    order = np.argsort(keys, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=count))])
    local = np.concatenate([offsets[a:b + 1] - offsets[a] for a, b in zip(bounds, bounds[1:])])
    return order, local, offsets[bounds]


@pytest.mark.parametrize("shape", ["sorted", "within", "across", "one", "many", "empty"])
def test_group_keys_matches_argsort(shape, monkeypatch):
    """Orders and per-partition offsets of every path (already sorted keys, keys
    within their partition's slice, keys across partitions, one partition,
    more partitions than 16 bits) against a stable argsort and a bincount."""
    monkeypatch.setattr(scene_tables, "KEY_SLICE", 37)  # runs cut by slice ends
    rng = np.random.default_rng(len(shape))
    count = 70_000 if shape == "many" else 900
    parts = {"one": 1, "many": 66_000}.get(shape, 5)
    bounds = np.concatenate([[0], np.sort(rng.integers(0, count, parts - 1)), [count]]).astype(np.int64)
    keys = rng.integers(0, count, 0 if shape == "empty" else 3000).astype(np.uint32)
    keys[rng.random(len(keys)) < 0.3] = keys[0] if len(keys) else 0  # long runs of one key
    edges = None
    if shape == "sorted":
        keys.sort()
    elif shape == "within":  # the hierarchy's case: positions grouped by their keys' partition
        keys = keys[np.argsort(np.searchsorted(bounds[1:], keys, side="right"), kind="stable")]
        part = np.searchsorted(bounds[1:], keys, side="right")
        edges = np.searchsorted(part, np.arange(parts + 1))
    order, offsets, starts = scene_tables.group_keys(keys, count, bounds, edges)
    want_order, want_offsets, want_starts = _grouped_oracle(keys, count, bounds)
    np.testing.assert_array_equal(order, want_order)
    assert offsets.dtype == np.uint32
    np.testing.assert_array_equal(offsets, want_offsets)
    np.testing.assert_array_equal(starts, want_starts)


@pytest.mark.parametrize("n", [0, 1, 7, (1 << 18) - 1, 1 << 18, 3 * (1 << 18) + 17])
def test_running_max_matches_accumulate(n):
    values = np.random.default_rng(n).integers(0, 1 << 31, n).astype(np.uint32)
    want = np.maximum.accumulate(values) if n else values.copy()
    got = scene_tables.running_max(values)
    assert got is values
    np.testing.assert_array_equal(got, want)
