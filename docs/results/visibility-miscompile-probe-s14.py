"""Session 14 probe (not part of the package): GPUVisibilityWorkflow's wrong
results on the H200 for multi-chunk outputs with every predicate given,
with Naga's loop bounding forced off, under WGSL variants patched into the
rendered kernel.

usage: python visibility-miscompile-probe-s14.py TREE VARIANT[,VARIANT...] [SEEDS] [TUNING,...]
  TREE: a directory holding gpuviz/ and tests/workflows/ (a checkout; the
  session's "lag tree" was 897ac7a with visibility-write-lag-experiment.patch)
  VARIANT, several joined by +: base | sb (subgroupBarrier() at the entry of
  every group primitive) | diag (count the active lanes before every
  subgroup call site; a partial subgroup sets a bit in the tile state's
  spare last word) | while (the output-chunk search as the old while loop)
  | unroll[CLASSES] (counted loops as their steps; classes w: ID writes,
  e: ITER loops, k: subgroup-count loops, h: lag's bit halves, j: WPL;
  none given: all)
  TUNING: indices into TUNINGS below
Results: docs/results/h200-reconvergence-probe-*-s14.txt and
h200-unroll-bisection-*-s14.txt; docs/benchmarks.md "Session 14".
"""
import os
import re
import sys

tree = os.path.abspath(sys.argv[1])
sys.path.insert(0, tree)
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import numpy as np  # noqa: E402
import wgpu  # noqa: E402

import gpuviz.device as gdev  # noqa: E402

gdev.OPTIONAL_FEATURES = (*gdev.OPTIONAL_FEATURES, "subgroup-barrier")
import gpuviz  # noqa: E402
from gpuviz.workflows import visibility as V  # noqa: E402
import tests.workflows.test_visibility as T  # noqa: E402

assert T.__file__.startswith(tree), T.__file__
device = gpuviz.request_device()
print("device", device.adapter_info.get("device"), "features has subgroup-barrier:",
      "subgroup-barrier" in device.features, flush=True)

STATES = []
cls = type(device)
orig_create_buffer = cls.create_buffer


def create_buffer(self, *, label="", size=0, usage=0, mapped_at_creation=False):
    if label.endswith("-tile-state"):
        buf = orig_create_buffer(self, label=label, size=size + 64, usage=usage | wgpu.BufferUsage.COPY_SRC,
                                 mapped_at_creation=mapped_at_creation)
        STATES.append(buf)
        return buf
    return orig_create_buffer(self, label=label, size=size, usage=usage, mapped_at_creation=mapped_at_creation)


cls.create_buffer = create_buffer

SEARCH = re.compile(r"(\s*if \(lo < hi\) \{\s*let mid = \(lo \+ hi\) / 2u;\s*"
                    r"if \(k < scatter_chunks\[mid\]\.x\) \{ hi = mid; \} else \{ lo = mid \+ 1u; \}\s*\})+")
WHILE = """
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (k < scatter_chunks[mid].x) { hi = mid; } else { lo = mid + 1u; }
    }"""
DIAG = """
var<private> dbg_n: u32;
fn dbg(site: u32) {
    let n = subgroupAdd(1u);
    if (n != dbg_n) { atomicOr(&state[arrayLength(&state) - 1u], 1u << site); }
}
fn grp_min_d(site: u32, v: u32) -> u32 { dbg(site); return grp_min(v); }
fn grp_add_d(site: u32, v: u32) -> u32 { dbg(site); return grp_add(v); }
fn grp_scan4_d(site: u32, g: Group, h: vec4<u32>, v: vec4<u32>) -> Scan4 { dbg(site); return grp_scan4(g, h, v); }
"""
SITES = {}
LOOP = re.compile(r"for \(var (\w+) = ([^;]+); \1 < ([^;]+); \1(\+\+| \+= WG)\) \{")
CLASSES = {"TILE / WG": "w", "ITER": "e", "g.id": "k", "g.count": "k", "HALVES": "h", "TILE / 32u": "h", "WPL": "j"}


def unroll(code, which):
    """Every counted loop of the classes in `which` as its steps (an if per step)."""
    iters = int(re.search(r"const ITER: u32 = (\d+)u;", code).group(1))
    wpl = int(re.search(r"const WPL: u32 = (\d+)u;", code).group(1))
    tile = 1024 * iters
    trips = {"TILE / WG": 4 * iters, "ITER": iters, "g.id": 32, "g.count": 32, "HALVES": -(-tile // 16 // 256),
             "TILE / 32u": -(-tile // 32 // 256), "WPL": wpl}
    out, pos = [], 0
    for m in LOOP.finditer(code):
        var, start, bound, inc = m.groups()
        if CLASSES.get(bound, "-") not in which or m.start() < pos:
            continue
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        body = code[m.end():i - 1]
        assert "break" not in body and "continue" not in body and "return" not in body, body
        step = "1u" if inc == "++" else "WG"
        steps = "".join(f" if ({var} < {bound}) {{{body}}} {var} += {step};" for _ in range(trips[bound]))
        out.append(code[pos:m.start()] + f"{{ var {var} = {start};{steps} }}")
        pos = i
    return "".join(out) + code[pos:]


def transform(code, variants):
    if "while" in variants:
        code, n = SEARCH.subn(WHILE, code)
        assert n <= 1
    for v in variants:
        if v.startswith("unroll"):
            code = unroll(code, v[len("unroll"):] or "wekhj")
    if "sb" in variants:
        for name in ("grp_min(v: u32) -> u32 {", "grp_add(v: u32) -> u32 {",
                     "grp_scan4(g: Group, h: vec4<u32>, v: vec4<u32>) -> Scan4 {"):
            assert name in code, name
            code = code.replace(name, name + " subgroupBarrier();")
    if "diag" in variants:
        site = [0]
        lines = code.split("\n")

        def sub(m):
            site[0] += 1
            return f"{m.group(1)}_d({site[0]}u, "
        for i, line in enumerate(lines):
            if line.lstrip().startswith("fn grp_"):
                continue
            new = re.sub(r"\b(grp_min|grp_add|grp_scan4)\(", sub, line)
            if new != line:
                SITES.setdefault(site[0], line.strip()[:90])
            lines[i] = new
        code = "\n".join(lines) + DIAG
        code = code.replace("fn kernel_main(g: Group, wg: u32) {", "fn kernel_main(g: Group, wg: u32) {\n    dbg_n = g.size;")
        assert site[0] < 31
    return code


orig_wgsl = V.wgsl


def run(variants, tuning, shape, seed):
    V.wgsl = lambda path, **kw: transform(orig_wgsl(path, **kw), variants)
    STATES.clear()
    SITES.clear()
    tile = tuning["tile_rows"]
    rng = np.random.default_rng(1000 * seed + tile)
    if shape == "tunings":
        chunks = [tile + 3, 0, 1, tile, tile - 1]
    else:
        chunks = T.rows_of(tile, [1, 2, 0, 3, 4, (1, 1), 5, 6, 0, 7, 8])
    n = sum(chunks)
    rows, prm = T.make_rows(rng, n, set(T.PREDICATES), special=0.02), T.params(set(T.PREDICATES))
    try:
        _, buffers = T.run_workflow(device, n, rows, prm, chunks=chunks, output="shared", tuning=tuning)
        T.check(device, buffers, n, *T.oracle_of(n, rows, prm))
        ok = "ok"
    except AssertionError as e:
        want, _ = T.oracle_of(n, rows, prm)
        got = T.read_array(device, buffers["count"])[1]
        ok = f"WRONG count {got} want {want.size} " + str(e).split("\n")[0][:60]
    flags = 0
    for buf in STATES:
        flags |= int(np.frombuffer(device.queue.read_buffer(buf), np.uint32)[-1])
    return ok, flags


TUNINGS = [dict(tile_rows=8192, preload=6, tiles_per_group=2), dict(tile_rows=8192, preload=6, tiles_per_group=2,
                                                                    early_second=True),
           dict(tile_rows=2048, preload=6, tiles_per_group=2), dict(tile_rows=1024, preload=6),
           dict(tile_rows=8192, preload=0)]
if hasattr(V.GPUVisibilityWorkflow, "write_lag"):
    TUNINGS += [dict(tile_rows=1024, write_lag=1), dict(tile_rows=4096, preload=6, write_lag=2),
                dict(tile_rows=2048, preload=0, write_lag=64), dict(tile_rows=4096, preload=6, write_lag=512)]

if __name__ == "__main__":
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    if len(sys.argv) > 4:
        TUNINGS = [TUNINGS[int(i)] for i in sys.argv[4].split(",")]
    for variants in sys.argv[2].split(","):
        vs = set(variants.split("+"))
        bad = 0
        for tuning in TUNINGS:
            tuning = {**tuning, "loop_bounding": False}
            for shape in ("tunings", "vectors9"):
                for seed in range(seeds):
                    ok, flags = run(vs, tuning, shape, seed)
                    bad += ok != "ok"
                    tag = {k: v for k, v in tuning.items() if k != "loop_bounding"}
                    print(f"{variants:12} {shape:9} seed {seed} {tag}: {ok}"
                          + (f"  partial-lane sites {[(s, SITES.get(s)) for s in range(32) if flags >> s & 1]}" if flags else ""),
                          flush=True)
        print(f"== {variants}: {bad} wrong", flush=True)
