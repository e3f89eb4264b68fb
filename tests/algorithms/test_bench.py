"""Smoke test of the scan/compaction/reduction benchmarks at a tiny size
(not a timed test)."""

import pytest

from gpuviz.bench import main


@pytest.mark.parametrize("name, title", [("scan", "GPUScan"), ("compaction", "GPUCompaction"),
                                         ("reduction", "GPUReduction")])
def test_bench_tiny(capsys, name, title):
    assert main([name, "--sizes", "4K", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert title in out and "NOT PRINTED" not in out
