"""Multi-rank merge: two copies of the NCCL Kineto trace, one shifted by a
known offset, are re-aligned by their collective end times."""

import gzip
import re
import shutil
from decimal import Decimal

import numpy as np
import pytest

from gpuviz.trace.load import load
from gpuviz.trace.merge import collectives

SHIFT_US = Decimal("1234.567")


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, traces_dir):
    """(rank 0 path, rank 1 path): rank 1 is rank 0 with every ts + 1234.567 us and rank 1."""
    src = traces_dir / "kineto_resnet_nccl_large.json.gz"
    folder = tmp_path_factory.mktemp("ranks")
    text = gzip.open(src).read().decode()
    shifted = re.sub(r'"ts": (-?[0-9.]+)', lambda m: f'"ts": {Decimal(m.group(1)) + SHIFT_US}', text)
    shifted = shifted.replace('"rank": 0', '"rank": 1', 1)
    r0 = folder / "rank0.json.gz"
    shutil.copy(src, r0)
    r1 = folder / "rank1.json"
    r1.write_text(shifted)
    return r0, r1


@pytest.fixture(scope="module")
def merged(ranks):
    return load(list(ranks), workers=0)


def test_known_offset_is_recovered(ranks, merged):
    single = load(ranks[0])
    n = single.span_count
    assert merged.span_count == 2 * n
    assert merged.report["skew_ns:1"] == -int(SHIFT_US * 1000)
    part = merged.spans.column("partition").to_numpy()
    assert (part[:n] == 0).all() and (part[n:] == 1).all()
    start = merged.spans.column("start_ns").to_numpy()
    # After alignment rank 1's spans sit exactly on rank 0's.
    np.testing.assert_array_equal(start[n:], start[:n])
    ops = collectives(single)
    count = sum(len(v) for v in ops.values())
    assert count == 21 and merged.report["collectives_matched"] == count
    kinds = merged.links.column("kind").to_pylist()
    assert kinds.count("collective") == count
    src = merged.links.column("source").to_numpy()[np.array(kinds) == "collective"]
    dst = merged.links.column("target").to_numpy()[np.array(kinds) == "collective"]
    assert (src < n).all() and (dst >= n).all()
    names = merged.spans.column("name").to_pylist()
    assert all(names[a] == names[b] for a, b in zip(src, dst))
    # Threads, processes and links of each rank stay their own.
    assert merged.threads.num_rows == 2 * single.threads.num_rows
    assert merged.processes.column("partition").to_pylist().count(1) == single.processes.num_rows
    assert merged.metadata["format"] == "multi-rank" and len(merged.metadata["ranks"]) == 2


def test_folder_in_worker_processes_equals_serial(ranks, merged):
    parallel = load(ranks[0].parent, workers=2)
    assert parallel.spans.equals(merged.spans) and parallel.links.equals(merged.links)
    assert parallel.sources == (str(ranks[0]), str(ranks[1]))


def test_strict_errors_cross_processes(tmp_path, traces_dir):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"ph":"E","pid":1,"tid":1,"ts":1}]')
    from gpuviz.trace.errors import TraceFormatError
    with pytest.raises(TraceFormatError, match="bad.json\" at event 0: unmatched_end") as info:
        load([traces_dir / "ss_out_of_order_be.json", bad], strict=True, workers=2)
    assert info.value.index == 0


def test_mixed_formats_merge_into_partitions(traces_dir):
    files = [traces_dir / "kineto_rocm_mi250_small.json.gz", traces_dir / "ss_bex_interaction.json",
             traces_dir / "otlp_jaeger_multi_resource.json"]
    parts = [load(f) for f in files]
    merged = load(files, workers=0)
    assert merged.span_count == sum(p.span_count for p in parts)
    counts = np.bincount(merged.spans.column("partition").to_numpy(), minlength=3)
    assert counts.tolist() == [p.span_count for p in parts]
    assert merged.threads.num_rows == sum(p.threads.num_rows for p in parts)
    # Each partition's spans keep their own threads and processes.
    proc = merged.threads.column("process").to_numpy()[merged.spans.column("thread").to_numpy()]
    part_of_proc = merged.processes.column("partition").to_numpy()
    np.testing.assert_array_equal(part_of_proc[proc], merged.spans.column("partition").to_numpy())
