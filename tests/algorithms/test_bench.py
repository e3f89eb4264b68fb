"""Smoke tests of the benchmarks at tiny sizes (not timed tests): every row
prints only after matching numpy, every run prints its header, ``--json``
keeps the printed rows, and the report generator turns a result file into
the markdown of docs/benchmarks.md."""

import json
from pathlib import Path

import pytest

from gpuviz.bench import harness, main, report
from gpuviz.bench.tables import Column, Report, Table

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name, title", [("scan", "GPUScan"), ("compaction", "GPUCompaction"),
                                         ("reduction", "GPUReduction")])
def test_bench_tiny(capsys, name, title):
    assert main([name, "--sizes", "4K", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert title in out and "NOT PRINTED" not in out
    for field in ("command: python -m gpuviz.bench " + name, "tree: ", "wgpu-native ", "adapter: ", "driver: ",
                  "tuning: ScanTuning(", "tuning: SortTuning(", "tuning: ReductionTuning(",
                  "tuning: AggregationTuning("):
        assert field in out


def test_sort_bench_tiny(capsys):
    """Radix path (three tiles): the row prints only after matching numpy."""
    assert main(["sort", "--sizes", "12K", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "GPUSort" in out and "12K  default" in out and "NOT PRINTED" not in out


def test_analysis_bench_tiny(tmp_path, capsys):
    """The analysis change (all three primitives checked against the oracle) and its peers, as two tables."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "analysis.json"
    assert main(["analysis", "--sizes", "16K", "--runs", "2", "--json", str(path)]) == 0
    assert "NOT PRINTED" not in capsys.readouterr().out
    tables = {t["name"]: t for t in json.loads(path.read_text())["tables"]}
    assert [row["case"] for row in tables["analysis"]["rows"]] == ["default"]
    (peers,) = tables["analysis-peers"]["rows"]
    assert peers["size"] == 16384 and peers["numpy_s"] > 0 and "targets at 16,384 rows" in \
        tables["analysis-peers"]["notes"][0]["text"]


def test_sort_profile_tiny(capsys):
    """Every checked variant matches numpy and every probe (a SortTuning template flag) still builds."""
    from gpuviz.bench import sort_profile

    assert sort_profile.main(["--sizes", "12K", "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "MISMATCH" not in out
    for label in ("default", "portable", "keys only", "+1 KB workgroup memory", "probe: no look-back",
                  "probe: no look-back, coalesced", "probe: ... with the offset lookups",
                  "probe: no look-back, no ranking, coalesced"):
        assert label in out


def test_json_and_report(tmp_path, capsys):
    """--json holds the header and the printed rows; the generator renders
    them, with the command and header, into a marked markdown region."""
    path = tmp_path / "scan.json"
    assert main(["scan", "--sizes", "4K", "--runs", "2", "--json", str(path)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(path.read_text())
    header = data["header"]
    assert header["command"] == f"python -m gpuviz.bench scan --sizes 4K --runs 2 --json {path}"
    assert header["wgpu"] and header["wgpu_native"] and header["adapter"]["device"] in printed
    assert set(header["tuning"]) == {"ScanTuning", "SortTuning", "ReductionTuning", "AggregationTuning"}
    (scan,) = data["tables"]
    assert [row["case"] for row in scan["rows"]] == ["default", "segmented (0.1% starts)"]
    row = scan["rows"][0]
    assert row["size"] == 4096 and row["ratio"] == pytest.approx(row["gpu_s"] / row["ref_s"])
    assert f"{row['gpu_s'] * 1e6:.1f}" in printed  # stdout and JSON are the same row objects

    doc = tmp_path / "bench.md"
    doc.write_text("# prose kept\n\n<!-- results: scan.json tables=scan -->\nstale\n<!-- end results -->\ntail\n")
    assert report.update(doc, check=True) and "stale" in doc.read_text()  # --check changes nothing
    assert report.main(["--update", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith("# prose kept\n") and text.endswith("<!-- end results -->\ntail\n")
    assert "stale" not in text and f"    {header['command']}" in text and header["source_digest"] in text
    assert "| 4K | default | " + f"{row['gpu_s'] * 1e6:.1f} | " in text
    assert not report.update(doc, check=True)  # regenerating is idempotent


def test_committed_results_are_rendered():
    """docs/benchmarks.md's generated regions match the committed result files."""
    assert not report.update(DOCS / "benchmarks.md", check=True), \
        "run: python -m gpuviz.bench.report --update docs/benchmarks.md"


def test_table_formats_and_round_trip(tmp_path, capsys):
    table = Table("t", "T", (Column("size", "size", 5, "size"), Column("case", "case", 4),
                             Column("gpu_s", "µs", 6, "us"), Column("ratio", "ratio", 5, "ratio"),
                             Column("target", "target", 8, "target", of="ratio"),
                             Column("peer_s", "peer", 12, "us_ratio", of="gpu_s")))
    table.add(size=1 << 20, case="a|b", gpu_s=2e-5, ratio=1.3, target=1.25, peer_s=4e-5)
    table.add(size=12, case="c", gpu_s=0.5, ratio=0.5, target=None, peer_s=None)
    assert "   1M  a|b     20.0   1.30  ≤1.25 MISS   40.0 (2.00)" in capsys.readouterr().out
    run = Report({"command": "x"})
    run.tables.append(table)
    run.write(tmp_path / "r.json")
    again = Report.load(tmp_path / "r.json").tables[0]
    assert again.markdown() == table.markdown()
    assert "| 1M | a\\|b | 20.0 | 1.30 | ≤1.25 MISS | 40.0 (2.00) |" in table.markdown()
    assert "| 12 | c | 500000 | 0.50 |  | - |" in table.markdown()


def test_git_describe_fallback(tmp_path, monkeypatch):
    """A copy of the tree without .git (the GPU machine's) says so, or takes the commit it is told."""
    monkeypatch.setattr(harness, "PACKAGE", tmp_path / "gpuviz")
    monkeypatch.delenv("GPUVIZ_GIT_DESCRIBE", raising=False)
    assert harness.git_describe() == ("unknown", "none")
    monkeypatch.setenv("GPUVIZ_GIT_DESCRIBE", "abc1234-dirty")
    assert harness.git_describe() == ("abc1234-dirty", "GPUVIZ_GIT_DESCRIBE")
