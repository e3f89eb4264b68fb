"""The soak of issue 10 at CI size: 2,000 seeded build / compile / encode /
submit / destroy cycles over every primitive and random small layouts, in a
fresh process (its RSS is the soak's alone), with memory and the per-device
shader caches bounded."""

import json
import os
import subprocess
import sys
from pathlib import Path

from .soak import format_summary

ROOT = Path(__file__).resolve().parents[2]
CYCLES = 2000
# ~8 s with a warm Mesa shader cache; ~65 s cold (lavapipe compiles each of
# the ~75 distinct pipelines at its first dispatch, the scan / compaction /
# sort kernels 1-9 s each). A cache that compiles per layout runs far slower:
# stop it rather than swap the machine.
MAX_SECONDS = 150
RSS_GROWTH_MIB = 30  # issue 10: 200 distinct layouts grow RSS by at most 30 MiB


def run_soak(*args):
    env = {**os.environ, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    proc = subprocess.run([sys.executable, "-m", "tests.reliability.soak", "--json", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=3 * MAX_SECONDS, check=False)
    assert proc.returncode == 0, f"soak exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def test_soak_keeps_memory_and_shader_caches_bounded():
    s = run_soak("--cycles", CYCLES, "--seed", 0, "--max-seconds", MAX_SECONDS, "--max-rss-growth", 16 * RSS_GROWTH_MIB)
    summary = format_summary(s)
    print(summary)
    assert set(s["primitives"]) == {"GPUScan", "GPUCompaction", "GPUReduction", "GPUMask", "GPUSort",
                                    "GPUSegmentedSort", "GPUHistogram", "GPUGroupAggregation",
                                    "GPUGridAggregation"}, summary
    assert s["completed"] == CYCLES, f"soak stopped early ({s['stopped']}):\n{summary}"
    rss = s["rss_mib"]
    assert rss["end"] - rss["warm"] <= RSS_GROWTH_MIB, f"RSS grew after warm-up:\n{summary}"
    for name, size in s["caches"].items():
        cap_name, cap = s["cache_caps"][name]
        assert size <= cap, f'cache "{name}" holds {size} entries, over {cap_name} = {cap}:\n{summary}'
