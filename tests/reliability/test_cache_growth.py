"""Shader and pipeline caches stay bounded (issue 10, item 4): shader text and
pipeline constants never depend on row counts, chunk lengths, chunk counts or
offsets, so 200 random layouts of the size-generic primitives compile no new
module or pipeline after a warm-up over their structures, and the process
does not grow; vector compactions over many output buffers still match numpy.
"""

import gc
import os

import numpy as np
import pytest
import wgpu

from gpuviz.algorithms import (GPUCompaction, GPUGridAggregation, GPUGroupAggregation, GPUReduction, GPUScan,
                               ScanTuning)
from gpuviz.graph import GPUCommandGraph, compat
from gpuviz.tables import GPUData, GPUVector, read_array

USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
KINDS = ("scan", "compaction", "reduction", "group-sum", "group-mean", "grid-sum")
LAYOUTS = 200
MAX_CHUNKS = 12
RSS_LIMIT = 30 << 20


def rss_bytes() -> int:
    """Resident set size from /proc/self/statm (no psutil)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture
def requested(monkeypatch):
    """Every (code, entry point, constants) a ComputeKernel asks the shader
    builder for from here on: distinct codes are distinct shader modules,
    distinct triples distinct pipelines, whatever the caches keep."""
    from gpuviz.graph import kernel

    seen = []
    original = kernel.compute_pipeline

    def spy(device, code, **kwargs):
        seen.append((code, kwargs.get("entry_point"), tuple(sorted((kwargs.get("constants") or {}).items()))))
        return original(device, code, **kwargs)

    monkeypatch.setattr(kernel, "compute_pipeline", spy)
    return seen


def vector(device, lengths, dtype=np.uint32, width=1):
    shape = (lambda n: (n, width)) if width > 1 else (lambda n: (n,))
    return GPUVector.from_numpy(device, [np.ones(shape(n), dtype) for n in lengths], USAGE)


def build(device, kind, lengths):
    """Compile ``kind`` over vectors with chunk ``lengths``; returns
    ``(compiled graph, uploads)``."""
    graph = GPUCommandGraph(device, id=f"{kind}-{len(lengths)}")
    f32 = np.float32
    uploads = [vector(device, lengths), vector(device, lengths, f32)]
    x, v = (graph.import_gpu_vector(name, u) for name, u in zip("xv", uploads))
    if kind == "scan":
        uploads.append(vector(device, lengths))
        GPUScan(id="s", input=x, output=graph.import_gpu_vector("y", uploads[-1])).add_to_graph(graph)
    elif kind == "compaction":
        uploads += [vector(device, lengths), vector(device, lengths), GPUData.from_numpy(device, np.zeros(1, np.uint32),
                                                                                        USAGE)]
        GPUCompaction(id="c", input=x, flags=graph.import_gpu_vector("f", uploads[-3]),
                      output=graph.import_gpu_vector("y", uploads[-2]),
                      count=graph.import_gpu_data("n", uploads[-1])).add_to_graph(graph)
    elif kind == "reduction":
        uploads.append(GPUData.from_numpy(device, np.zeros(1, f32), USAGE))
        GPUReduction(id="r", input=v, output=graph.import_gpu_data("o", uploads[-1])).add_to_graph(graph)
    elif kind.startswith("group-"):
        uploads.append(GPUData.from_numpy(device, np.zeros(16, f32), USAGE))
        GPUGroupAggregation(id="g", codes=x, values=v, output=graph.import_gpu_data("o", uploads[-1]),
                            operation=kind[6:]).add_to_graph(graph)
    else:  # the heatmap of DataAnalysis: a privatized grid sum
        uploads += [vector(device, lengths, f32, 2), GPUData.from_numpy(device, np.zeros(64, f32), USAGE)]
        GPUGridAggregation(id="grid", positions=graph.import_gpu_vector("p", uploads[-2]), weights=v,
                           output=graph.import_gpu_data("o", uploads[-1]), grid_size=(8, 8),
                           bounds=(0.0, 0.0, 1.0, 1.0), operation="sum").add_to_graph(graph)
    return graph.compile(), uploads


def cycle(device, kind, lengths):
    """Build, compile and destroy ``kind`` over ``lengths``, then submit an
    empty command buffer: wgpu-native frees destroyed buffers only when the
    queue moves on."""
    compiled, uploads = build(device, kind, lengths)
    compiled.destroy()
    for upload in uploads:
        upload.destroy()
    device.queue.submit([device.create_command_encoder().finish()])
    compat.poll_device(device)


def structures():
    """Chunk lengths covering every structure the kernels select on: one
    chunk, or several with as many output buffers as each power-of-two
    binding count up to MAX_CHUNKS needs (a compaction pads its output
    bindings to a power of two); each chunk a whole number of vec4 rows or
    not (vec4 or scalar view layout), the last one (which writes the total)
    either way too."""
    for count in (1, 2, 3, 5, 9):
        for body in (0, 1):
            for last in (0, 1):
                yield [64 + body] * (count - 1) + [96 + last]


def test_random_layouts_compile_no_new_modules_or_pipelines(device, requested):
    for kind in KINDS:
        for lengths in structures():
            cycle(device, kind, lengths)
    gc.collect()
    codes, pipelines = {c for c, _, _ in requested}, set(requested)
    rss = rss_bytes()
    rng = np.random.default_rng(10)
    for i in range(LAYOUTS):
        lengths = [int(n) for n in rng.integers(0, 3000, rng.integers(1, MAX_CHUNKS + 1))]
        lengths[-1] += 1  # never all empty (that adds only a count-clear node)
        cycle(device, KINDS[i % len(KINDS)], lengths)
    gc.collect()
    growth = rss_bytes() - rss
    new_codes = len({c for c, _, _ in requested} - codes)
    new_pipelines = set(requested) - pipelines
    example = sorted((e, k) for _, e, k in new_pipelines)[:2]
    assert (new_codes, len(new_pipelines)) == (0, 0) and growth <= RSS_LIMIT, (
        f"over {LAYOUTS} layouts: {new_codes} new shader modules, {len(new_pipelines)} new pipelines (e.g. "
        f"{example}), RSS +{growth / 2**20:.1f} MiB (at most {RSS_LIMIT >> 20})")


def test_data_analysis_of_new_table_sizes_compiles_nothing_new(requested):
    pa = pytest.importorskip("pyarrow")
    from gpuviz.widgets import DataAnalysis

    rng = np.random.default_rng(3)

    def widget(rows, batches):
        cuts = sorted({0, rows, *rng.integers(1, rows, batches - 1).tolist()})
        cols = {name: rng.random(rows).astype(np.float32) for name in ("x", "y", "v")}
        cols["g"] = rng.choice(["a", "b", "c"], rows).astype(object)
        table = pa.Table.from_batches([pa.record_batch({k: pa.array(c[a:b]) for k, c in cols.items()})
                                       for a, b in zip(cuts[:-1], cuts[1:])])
        w = DataAnalysis(table, x="x", y="y", value="v", group="g", bins=16, max_bins=64, grid_size=(32, 24),
                         size=(160, 120))
        w.close()

    widget(1000, 1)
    widget(1500, 2)
    seen = set(requested)
    for rows, batches in ((2345, 1), (7000, 3), (12001, 2), (20000, 4)):
        widget(rows, batches)
    new = set(requested) - seen
    assert not new, f"{len(new)} new pipelines for new table sizes, e.g. {sorted((e, k) for _, e, k in new)[:2]}"


@pytest.mark.parametrize("chunks, shared", [
    ([5, 0, 9, 1, 7, 3, 0, 4, 8], ()),            # 7 output buffers: padded to 8 bindings
    ([3, 6, 2, 5, 4], ((0, 2), (1, 4))),          # some chunks share a buffer, at offsets
    ([2] * 25, ()),                               # bindings past the table (30) and diagnostics (31)
    ([0, 11, 0], ((1,),)),                        # one non-empty chunk mid-buffer: its offset is a uniform
])
def test_vector_compaction_over_many_buffers_matches_numpy(device, chunks, shared):
    rng = np.random.default_rng(len(chunks))
    xs = [rng.integers(1, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for n in chunks]
    fs = [(rng.random(n) < 0.6).astype(np.uint32) for n in chunks]
    sentinel = 0xDEADBEEF
    out_chunks, backings = output_chunks(device, chunks, shared, sentinel)
    graph = GPUCommandGraph(device, id="many")
    count = GPUData.from_numpy(device, np.zeros(1, np.uint32), USAGE)
    GPUCompaction(id="c", input=graph.import_gpu_vector("x", GPUVector.from_numpy(device, xs, USAGE)),
                  flags=graph.import_gpu_vector("f", GPUVector.from_numpy(device, fs, USAGE)),
                  output=graph.import_gpu_vector("y", GPUVector(out_chunks)), count=graph.import_gpu_data("n", count),
                  tuning=ScanTuning(diagnostics=True)).add_to_graph(graph)
    compiled = graph.compile()
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    device.queue.submit([encoder.finish()])
    expected = np.concatenate(xs)[np.concatenate(fs) != 0]
    got = np.concatenate([read_array(device, c) for c in out_chunks])
    assert int(read_array(device, count)[0]) == expected.size
    np.testing.assert_array_equal(got[:expected.size], expected)
    assert (got[expected.size:] == sentinel).all()
    for backing, guards in backings:  # nothing written between or around shared chunks
        words = read_array(device, backing)
        assert (words[guards] == sentinel).all()
    compiled.destroy()


def output_chunks(device, chunks, shared, fill):
    """Output chunks, one buffer each except the groups in ``shared``, which
    share one buffer with guard words before, between and after them.
    Returns ``(chunks, [(backing, guard word indices)])``."""
    grouped = {k: group for group in shared for k in group}
    out, backings, made = [None] * len(chunks), [], set()
    for k, n in enumerate(chunks):
        if k in made:
            continue
        group = grouped.get(k, (k,))
        if len(group) == 1 and k not in grouped:
            out[k] = GPUData.from_numpy(device, np.full(n, fill, np.uint32), USAGE)
            continue
        starts, pos = [], 3
        for j in group:
            starts.append(pos)
            pos += chunks[j] + 3
        backing = GPUData.from_numpy(device, np.full(pos, fill, np.uint32), USAGE)
        inside = np.zeros(pos, bool)
        for j, s in zip(group, starts):
            out[j] = GPUData(backing.buffer, format=backing.format, length=chunks[j], byte_offset=4 * s)
            inside[s:s + chunks[j]] = True
            made.add(j)
        backings.append((backing, np.flatnonzero(~inside)))
    return out, backings
