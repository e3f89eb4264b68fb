"""(Needs docs/results/visibility-pair-one-quad-experiment.patch applied.) Pairs of tiles whose second tile's first quad loads during the first
tile's scan, look-back and writes (one-quad prefetch; docs/benchmarks.md,
Session 9). Run on the H200 from the repository root after a warm-up."""
import sys

from gpuviz.bench import culling, topology_visibility as tv

PAIRS = {"pairL-q1": (4096, 4, False), "pairE-q1": (4096, 4, True), "pairL-q1-8K": (8192, 4, False),
         "pairE-q1-8K": (8192, 4, True), "pairE-pre6": (4096, 6, True)}
tv.TILE_TUNINGS = {name: dict(tile_rows=t, preload=p, tiles_per_group=2, early_second=e)
                   for name, (t, p, e) in PAIRS.items()}
tv.TILE_TUNINGS["pairE-q1-res"] = dict(tv.TILE_TUNINGS["pairE-q1"], probe="resident")
if sys.argv[1:] == ["culling"]:
    sys.exit(culling.main(["--tiles", "--runs", "30"]))
# intervals + one mask load 3 vec4 a quad: preload 3 is a one-quad prefetch
tv.TUNINGS = {"auto-pre6": tv.TUNINGS["auto-pre6"],
              **{f"{k}-pre3": dict(tile_rows=t, preload=3, tiles_per_group=2, early_second=e)
                 for k, (t, e) in {"pairL": (4096, False), "pairE": (4096, True), "pairE-8K": (8192, True)}.items()}}
sys.exit(tv.main(["--sweep-only", "--runs", "30"]))
