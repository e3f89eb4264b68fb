"""Session 14 (not part of the package): a benchmark of the checkout in the
current directory with visibility.wgsl's counted loops unrolled by the
probe's transform (visibility-miscompile-probe-s14.py, beside this file).
usage: python visibility-miscompile-bench-unrolled-s14.py CLASSES culling|topology_visibility ARGS..."""
import os
import runpy
import sys

which, bench, args = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = ["reconv", "."]
probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "visibility-miscompile-probe-s14.py")
lib = runpy.run_path(probe, run_name="reconv_lib")
V = lib["V"]
if which != "none":
    V.wgsl = lambda path, **kw: lib["unroll"](lib["orig_wgsl"](path, **kw), which)
import importlib  # noqa: E402

sys.exit(importlib.import_module(f"gpuviz.bench.{bench}").main(args))
