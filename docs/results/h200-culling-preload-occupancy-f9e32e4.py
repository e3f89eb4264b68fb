"""The preload / occupancy sweep of docs/benchmarks.md, Session 9 (run on the
H200 as `python3 <this file>` from the repository root after a warm-up)."""
import sys

from gpuviz.bench import culling, topology_visibility as tv

tv.TILE_TUNINGS = {name: dict(tile_rows=4096, preload=p, **({"probe": "resident"} if r else {}))
                   for name, p, r in (("pre8", 8, 0), ("pre8-res", 8, 1), ("pre12", 12, 0), ("pre12-res", 12, 1),
                                      ("pre16", 16, 0), ("pre16-res", 16, 1), ("2K-pre8", 8, 0))}
tv.TILE_TUNINGS["2K-pre8"]["tile_rows"] = 2048
tv.TILE_TUNINGS["2K-res"] = dict(tile_rows=2048, preload=6, probe="resident")
tv.TILE_TUNINGS["8K-res"] = dict(tile_rows=8192, preload=6, probe="resident")
sys.exit(culling.main(["--tiles", "--runs", "30"]))
