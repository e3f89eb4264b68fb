"""Smoke test of the benchmark harness at a tiny size (not a timed test)."""

from gpuviz.bench import main


def test_bench_all_tiny(capsys):
    assert main(["all", "--sizes", "4K", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    for title in ("GPUScan", "GPUCompaction", "GPUReduction"):
        assert title in out
    assert "NOT PRINTED" not in out
