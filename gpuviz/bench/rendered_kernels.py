"""Rendered kernels before and after a template refactor:
``python -m gpuviz.bench.rendered_kernels --against REV``.

Renders every tuning combination of the look-back kernels (the chained
scan, the radix sort, GPUVisibilityWorkflow, with their benchmark probes)
and every template combination of the hash kernels (build, lookup, join)
and the spatial kernels (grid build/query, point filter, BVH refit,
segmented BVH, BVH query) from the working tree and from git revision ``REV`` (exported with ``git
archive`` and rendered by this script in a second interpreter), normalises
each text to its tokens (comments dropped, whitespace kept only between
two words) and compares them. Exit status 0 when every configuration renders the same; otherwise
the differing configurations are listed with a unified diff of the first
few. A refactor of the templates that claims "the kernels are unchanged"
runs this against the commit before it.

A probe configuration renders the benchmark template that overrides the
production one (:data:`PROBE_TEMPLATES`) where the tree has it, else the
production template with the probe value: a tree from before the probes
moved to the benchmarks compares equal to one after.

Renders text only: needs no device, compiles nothing.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SCAN = "algorithms/shaders/scan.wgsl"
SORT = "algorithms/shaders/sort_radix.wgsl"
VISIBILITY = "workflows/shaders/visibility.wgsl"
#: Production template -> the benchmark template that adds its probes.
PROBE_TEMPLATES = {SORT: "bench/shaders/sort_radix_probes.wgsl", VISIBILITY: "bench/shaders/visibility_probes.wgsl"}

VISIBILITY_PROBES = ("unordered", "nowrite", "bare", "coalesced", "resident")
SORT_PROBES = ("no-lookback", "no-ranking", "coalesced-writes", "lookup-writes")


def _scan_configurations():
    for rows, subgroups, diagnostics in itertools.product((4, 8, 12, 16), (False, True), (False, True)):
        for shape, layouts, total, scatter in (
                ("scan", dict(data="vec4-start", heads="none", out="vec4-start", vals="none"), "none", None),
                ("scan-total", dict(data="vec4", heads="none", out="scalar", vals="none"), "scalar-start", None),
                ("segmented", dict(data="vec4-start", heads="vec4-start", out="vec4-start", vals="none"),
                 "scalar", None),
                ("compact-1", dict(data="scalar", heads="none", out="none", vals="vec4-start"), "scalar-start",
                 dict(dst=[7], table=False, start=True)),
                ("compact-off", dict(data="vec4", heads="none", out="none", vals="scalar"), "none",
                 dict(dst=[7], table=False, start=False)),
                ("compact-table-1", dict(data="vec4-start", heads="none", out="none", vals="vec4-start"), "none",
                 dict(dst=[7], table=True, start=False)),
                ("compact-table-4", dict(data="vec4-start", heads="vec4", out="none", vals="scalar-start"),
                 "scalar", dict(dst=[7, 8, 9, 9], table=True, start=False))):
            access = {name: "read_write" if name == "out" else "read" for name in layouts}
            name = f"scan rows={rows} subgroups={subgroups} diagnostics={diagnostics} {shape}"
            yield name, SCAN, dict(subgroups=subgroups, rows=rows, layouts=layouts, access=access, total=total,
                                   scatter=scatter, diagnostics=diagnostics)


def _sort_configurations():
    probe_sets = [tuple(p for p in (a, b, w) if p)
                  for a in ("", "no-lookback") for b in ("", "no-ranking")
                  for w in ("", "coalesced-writes", "lookup-writes")]
    for items, lookback, staging, subgroups, pad_words, probes in itertools.product(
            (1, 7, 21, 64), (1, 4, 32), ("shared", "plain"), (False, True), (0, 256), probe_sets):
        name = (f"sort items={items} lookback={lookback} staging={staging} subgroups={subgroups} "
                f"pad_words={pad_words} probes={','.join(probes)}")
        yield name, SORT, dict(ITEMS=items, LOOKBACK=lookback, HIST_ITEMS=8, staging=staging, subgroups=subgroups,
                               pad_words=pad_words, probes=probes)


def _visibility_shapes():
    """(name, masks, predicates, layouts of the roles given, scatter rows and dst count)."""
    return (
        ("culling", 0, ("spheres",), dict(count="scalar-start"), 1, 1),
        ("intervals+mask", 1, ("intervals",), dict(count="scalar-start", ids="scalar"), 1, 1),
        ("lod+2 masks+mask_out", 2, ("lod",), dict(count="scalar", mask_out="vec4-start"), 2, 1),
        ("everything, 3 output chunks", 1, ("spheres", "intervals", "lod"),
         dict(count="scalar-start", mask_out="scalar", ids="vec4"), 3, 2),
        ("length only", 0, (), dict(count="scalar-start"), 1, 1),
        ("scalar inputs", 1, ("spheres", "intervals"), dict(count="scalar", spheres="scalar", planes="scalar",
                                                             intervals="scalar", window="scalar"), 2, 2),
    )


def _visibility_configurations():
    role_of = {"spheres": ("spheres", "planes"), "intervals": ("intervals", "window"), "lod": ("lod", "lod_range")}
    for shape, masks, predicates, given, rows, buffers in _visibility_shapes():
        layouts = {role: "none" for role in ("count", "mask_out", "spheres", "planes", "intervals", "window", "lod",
                                             "lod_range", "ids")}
        for p in predicates:
            layouts.update({role: "vec4-start" for role in role_of[p]})
        layouts.update({f"mask{k}": "vec4-start" for k in range(masks)})
        layouts.update(given)
        scatter = dict(dst=[12 + masks + j for j in range(buffers)], table=rows > 1, rows=rows)
        for iters, subgroups in itertools.product((1, 2, 4, 8, 16), (False, True)):
            for batch in sorted({b for b in (0, 2, 3, iters) if b == 0 or 2 <= b <= iters}):
                for pair, lag, probe in itertools.product(("", "late", "early"), (False, True),
                                                          ("", *VISIBILITY_PROBES)):
                    if (lag and (pair or probe not in ("", "resident"))) or (pair and probe == "resident"):
                        continue
                    name = (f"visibility {shape} iters={iters} subgroups={subgroups} batch={batch} pair={pair} "
                            f"lag={lag} probe={probe}")
                    yield name, VISIBILITY, dict(layouts=layouts, masks=masks, spheres="spheres" in predicates,
                                                 intervals="intervals" in predicates, lod="lod" in predicates,
                                                 subgroups=subgroups, scatter=scatter, iters=iters,
                                                 wpl=max(1, iters // 8), batch=batch, pair=pair, probe=probe,
                                                 lag=lag)


def _hash_configurations():
    for key_words, flag in itertools.product((1, 2), (False, True)):
        yield f"hash build key_words={key_words} values={flag}", "algorithms/shaders/hash_build.wgsl", dict(
            key_words=key_words, values=flag)
        yield f"hash lookup key_words={key_words} found={flag}", "algorithms/shaders/hash_lookup.wgsl", dict(
            key_words=key_words, found=flag)
    yield "hash join", "algorithms/shaders/hash_join.wgsl", {}


def _spatial_configurations():
    for dims in (2, 3):
        for flag in (False, True):
            yield (f"spatial grid_build dims={dims} source_ids={flag}", "spatial/shaders/grid_build.wgsl",
                   dict(dims=dims, source_ids=flag))
            yield (f"spatial grid_query dims={dims} mask={flag}", "spatial/shaders/grid_query.wgsl",
                   dict(dims=dims, mask=flag))
            yield (f"spatial point_filter dims={dims} candidates={flag}", "spatial/shaders/point_filter.wgsl",
                   dict(dims=dims, candidates=flag))
            for stack in (2, 8, 32, 64):
                yield (f"spatial bvh_query dims={dims} mask={flag} stack={stack}", "spatial/shaders/bvh_query.wgsl",
                       dict(dims=dims, mask=flag, stack=stack))
        yield f"spatial bvh dims={dims}", "spatial/shaders/bvh.wgsl", dict(dims=dims)
        yield f"spatial bvh_segmented dims={dims}", "spatial/shaders/bvh_segmented.wgsl", dict(dims=dims)


def configurations():
    """Every ``(name, production template, template values)`` compared."""
    yield from _scan_configurations()
    yield from _sort_configurations()
    yield from _visibility_configurations()
    yield from _hash_configurations()
    yield from _spatial_configurations()


def normalise(code: str) -> str:
    """WGSL text as its tokens: comments dropped, whitespace kept only where
    it separates two words (``let x``), one statement a line where a ``;``
    or a brace ends it (for readable diffs)."""
    text = " ".join(re.sub(r"//.*", "", line) for line in code.splitlines())
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ?([^\w ]) ?", r"\1", text)
    return re.sub(r"([;{}])", "\\1\n", text).strip()


def render(template: str, values: dict) -> str:
    """The rendered text of one configuration in the gpuviz tree this
    interpreter imports (a probe renders its benchmark template where that
    tree has one)."""
    import gpuviz
    from gpuviz.graph.shaders import wgsl

    probed = values.get("probe") or values.get("probes")
    bench = PROBE_TEMPLATES.get(template)
    if probed and bench and (Path(gpuviz.__file__).parent / bench).exists():
        template = bench
    return wgsl(template, **values)


def emit(only=None, prefix="") -> dict:
    """``{name: sha256 of the normalised text}`` (``{name: text}`` for the names in ``only``),
    for the configurations whose name starts with ``prefix``."""
    out = {}
    for name, template, values in configurations():
        if not name.startswith(prefix):
            continue
        if only is None:
            out[name] = hashlib.sha256(normalise(render(template, values)).encode()).hexdigest()
        elif name in only:
            out[name] = normalise(render(template, values))
    return out


def _emit_at(rev: str, only=None, prefix="") -> dict:
    """:func:`emit` in the tree of git revision ``rev``, in a second interpreter."""
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "gpuviz"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        out = Path(tmp) / "out.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--emit", str(out), "--family", prefix]
        if only:
            command += ["--only", *only]
        env = {**os.environ, "PYTHONPATH": tmp}
        subprocess.run(command, check=True, cwd=tmp, env=env)
        return json.loads(out.read_text())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuviz.bench.rendered_kernels", description=__doc__.split("\n")[0])
    parser.add_argument("--against", metavar="REV", help="git revision to compare the working tree with")
    parser.add_argument("--emit", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--family", default="", help="only configurations whose name starts with this "
                        "(scan, sort, visibility, hash, spatial)")
    parser.add_argument("--diffs", type=int, default=3, help="unified diffs shown (default 3)")
    args = parser.parse_args(argv)
    if args.emit:
        import gpuviz

        result = emit(set(args.only) if args.only else None, args.family)
        Path(args.emit).write_text(json.dumps({"root": str(Path(gpuviz.__file__).parent), "renders": result}))
        return 0
    if not args.against:
        parser.error("--against REV is required")
    before = _emit_at(args.against, prefix=args.family)
    after = emit(prefix=args.family)
    print(f"before: {args.against} ({before['root']}); after: the working tree")
    before = before["renders"]
    differ = [name for name in after if before.get(name) != after[name]]
    print(f"{len(after)} configurations, {len(after) - len(differ)} render the same (normalised), "
          f"{len(differ)} differ")
    for name in differ[:50]:
        print(f"  differs: {name}")
    if differ and args.diffs:
        shown = differ[:args.diffs]
        old, new = _emit_at(args.against, shown, args.family)["renders"], emit(set(shown), args.family)
        for name in shown:
            sys.stdout.writelines(difflib.unified_diff(old[name].splitlines(True), new[name].splitlines(True),
                                                       f"{args.against}: {name}", f"tree: {name}"))
            print()
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
