"""Smoke test of the visibility benchmark at a tiny size (not a timed test):
every case's row prints only after its IDs and count matched numpy."""

import numpy as np
import pytest

from gpuviz.bench.harness import Peers
from gpuviz.bench.tables import Report
from gpuviz.bench.topology_visibility import bench_visibility
from gpuviz.bench.visibility_probes import PROBES, ProbedVisibility
from gpuviz.graph.shaders import wgsl
from gpuviz.oracles.workflows import visibility, visibility_float32
from gpuviz.tables import read_array
from gpuviz.workflows.visibility import TEMPLATE

from .test_visibility import SENTINEL, assert_tuning_refused, oracle_of, run_workflow, submit


def test_bench_visibility_tiny(device, capsys):
    report = Report()
    table = bench_visibility(device, [20000], 2, variants=True, peers=Peers(), report=report)
    out = capsys.readouterr().out
    assert "GPUVisibilityWorkflow" in out and "NOT PRINTED" not in out
    cases = [row["case"] for row in table.rows]
    assert cases == ["intervals + mask, ~35% kept", "intervals + mask, narrow window", "spheres + planes (frustum)",
                     "all of them", "intervals + mask, with mask_output"]
    for row in table.rows:
        assert row["gpu_s"] > 0 and row["ref_s"] > 0 and 0 < row["kept"] < 20000
        assert set(row["nodes_s"]) == {"visible-predicate"}


def test_bench_oracle_is_the_contract_on_finite_data():
    import numpy as np

    rng = np.random.default_rng(0)
    iv = np.sort(rng.random((500, 2), np.float32) * 10, 1)
    mask = (rng.random(500) < 0.5).astype(np.uint32)
    window = np.array([[2, 6, 0.5, 0]], np.float32)
    np.testing.assert_array_equal(visibility_float32(mask=mask, intervals=iv, window=window),
                                  visibility(500, masks=[mask], intervals=iv, window=window)[0])


def test_tuning_sweep_tiny(device, capsys):
    """The sweep times each tuning on every case (each run checked against
    numpy before its row prints) and names the fastest."""
    from gpuviz.bench.topology_visibility import TUNINGS, bench_visibility_tunings

    from gpuviz.workflows.visibility import GPUVisibilityWorkflow as W

    first = next(iter(TUNINGS.values()))
    assert first == {k: getattr(W, k) for k in first}, "the first tuning is the class's default"
    tunings = {"default": {}, "big": dict(tile_rows=16384, preload=24, tiles_per_group=2)}
    table = bench_visibility_tunings(device, [17000], 2, tunings=tunings)
    out = capsys.readouterr().out
    assert out.count(": fastest ") == 4
    assert [(row["case"], row["tuning"]) for row in table.rows][:2] == [("intervals + mask, ~35% kept", "default"),
                                                                        ("intervals + mask, ~35% kept", "big")]
    assert len(table.rows) == 8 and all(row["gpu_s"] == min(row["runs_s"]) > 0 and len(row["runs_s"]) == 2
                                        and row["read_s"] > 0 and row["ref_s"] == min(row["copy_rounds_s"])
                                        for row in table.rows)


def test_size_sweep_tiny(device, capsys):
    """Time against size: one row per (case, size), a cell per tuning (each
    run checked against numpy on prefixes of one upload)."""
    from gpuviz.bench.topology_visibility import bench_visibility_sizes

    tunings = {"8K": dict(tile_rows=8192, preload=6), "2K": dict(tile_rows=2048, preload=8)}
    table = bench_visibility_sizes(device, [9000, 3000], 2, tunings=tunings)
    assert "NOT PRINTED" not in capsys.readouterr().out
    assert [(row["case"], row["rows"]) for row in table.rows] == [
        ("intervals + mask, ~35% kept", 3000), ("intervals + mask, ~35% kept", 9000),
        ("spheres + planes (frustum)", 3000), ("spheres + planes (frustum)", 9000)]
    for row in table.rows:
        assert row["best"] in tunings and row["ref_s"] == min(row["copy_rounds_s"]) > 0
        assert all(row[f"{name}_s"] == min(row["runs_s"][name]) > 0 for name in tunings)
    assert 0 < table.rows[0]["kept"] < table.rows[1]["kept"] < 9000
    fits = [note["fits"] for note in table.notes if "fits" in note]
    assert len(fits) == 2 and all(set(f) == {"copy", "8K", "2K"} for f in fits)


def test_occupancy_table_tiny(device):
    """One row per (case, load batch) with the resident probe's count: at
    least one workgroup, at most the case's workgroups (its three tiles and
    as many placing workgroups of lagged placement); the IDs are checked
    against the oracle inside."""
    from gpuviz.bench.topology_visibility import bench_visibility_occupancy

    table = bench_visibility_occupancy(device, [9000], 2, preloads=(0, 6))
    assert [(row["case"], row["preload"]) for row in table.rows][:2] == [("intervals + mask, ~35% kept", 0),
                                                                        ("intervals + mask, ~35% kept", 6)]
    assert len(table.rows) == 14
    assert all(1 <= row["resident"] <= 6 and row["gpu_s"] > 0 and row["ref_s"] > 0 for row in table.rows)


def test_culling_tile_variants_tiny(device):
    """The cull table with tile variants: every variant's IDs equal the
    default's (checked inside), one row each, the same copy reference."""
    from gpuviz.bench.culling import bench_culling

    tunings = {"2K": dict(tile_rows=2048, preload=8), "4K": dict(tile_rows=4096, preload=0)}
    cull, frame = bench_culling(device, [20000], 2, tunings=tunings, frames=False)
    assert frame is None
    assert [row["tuning"] for row in cull.rows] == ["default", "2K", "4K"]
    assert len({row["kept"] for row in cull.rows}) == 1 and len({row["ref_s"] for row in cull.rows}) == 1
    assert all(row["gpu_s"] > 0 and len(row["rounds_gpu_s"]) == 3 for row in cull.rows)


def test_bench_write_patterns_tiny(device):
    """Both store patterns write numpy's IDs (checked inside the bench; a
    wrong one raises Mismatch) at a size that is not a multiple of 32 rows,
    with a row per density and kernel."""
    from gpuviz.bench.write_patterns import bench_write_patterns

    table = bench_write_patterns(device, [70_001], 2, densities=(0.5, 0.0, 1.0))
    assert [(row["density"], row["kernel"]) for row in table.rows] == [
        (d, k) for d in (0.5, 0.0, 1.0) for k in ("rows", "dense")]
    assert all(row["gpu_s"] > 0 and row["ref_s"] > 0 for row in table.rows)


@pytest.mark.parametrize("probe, lag", [("unordered", 0), ("nowrite", 0), ("bare", 0), ("coalesced", 0),
                                        ("resident", 0), ("resident", 2)])
def test_benchmark_probes(device, probe, lag):
    """The benchmarks' probes (ProbedVisibility.probe) keep the mask output;
    "unordered" writes the oracle's IDs as whole tiles in some order, twice
    in a row (its counter restarts every encoding); "coalesced" writes the
    words the workflow writes, no others; "nowrite" leaves the IDs untouched;
    "resident" writes the workflow's IDs and, as the count, how many of the
    six tiles' workgroups ran at once at most."""
    rng = np.random.default_rng(len(probe))
    chunks = [3 * 1024 + 5, 0, 2 * 1024]
    n = sum(chunks)
    rows = {"masks": [(rng.random(n) < 0.4).astype(np.uint32)]}
    compiled, buffers = run_workflow(device, n, rows, {}, chunks=chunks,
                                     tuning=dict(tile_rows=1024, probe=probe, write_lag=lag),
                                     workflow_class=ProbedVisibility)
    want_ids, want_mask = oracle_of(n, rows, {})
    for _ in range(2):
        ids = read_array(device, buffers["ids"])
        if probe == "unordered":
            np.testing.assert_array_equal(np.sort(ids[:want_ids.size]), want_ids)
            assert (ids[want_ids.size:] == SENTINEL).all()
        elif probe == "coalesced":
            assert (ids[:want_ids.size] != SENTINEL).all() and (ids[want_ids.size:] == SENTINEL).all()
        elif probe == "resident":
            np.testing.assert_array_equal(ids[:want_ids.size], want_ids)
            # the count view is word 1; a lag adds that many placing workgroups per chunk
            assert 1 <= read_array(device, buffers["count"])[1] <= 6 + 2 * lag
        else:
            assert (ids == SENTINEL).all()
        np.testing.assert_array_equal(read_array(device, buffers["mask"]), want_mask)
        submit(device, compiled)


@pytest.mark.parametrize("tuning", [dict(probe="fast"), dict(probe="resident", tiles_per_group=2),
                                    dict(write_lag=1, probe="unordered")])
def test_bad_probe_tunings_are_refused(device, tuning):
    assert_tuning_refused(device, tuning, ProbedVisibility)


def test_the_probe_template_without_a_probe_is_the_workflows():
    """The probes' template replaces blocks of the workflow's; with probe ""
    every block renders the workflow's code (the production template itself
    names no probe)."""
    values = dict(layouts={role: "vec4-start" for role in ("count", "mask_out", "spheres", "planes", "intervals",
                                                           "window", "lod", "lod_range", "ids", "mask0")},
                  masks=1, spheres=True, intervals=True, lod=True, subgroups=True,
                  scatter=dict(dst=[13, 14], table=True, rows=3), iters=4, wpl=1, batch=2, pair="", lag=True)
    production = wgsl(TEMPLATE, **values)
    assert wgsl("bench/shaders/visibility_probes.wgsl", probe="", **values) == production
    assert "probe_counter" not in production and "LOOK_BACK: bool = true" in production
    for probe in PROBES:
        assert wgsl("bench/shaders/visibility_probes.wgsl", probe=probe, **values) != production
