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


def test_sort_bench_tiny(capsys):
    """Radix path (three tiles): the row prints only after matching numpy."""
    assert main(["sort", "--sizes", "12K", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "GPUSort" in out and "12K  default" in out and "NOT PRINTED" not in out


def test_sort_profile_tiny(capsys):
    """Every checked variant matches numpy and every probe's substitutions still apply to the shader."""
    from gpuviz.bench import sort_profile

    assert sort_profile.main(["--sizes", "12K", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "MISMATCH" not in out
    for label in list(sort_profile.PROBES) + ["default", "portable", "keys only"]:
        assert label in out
