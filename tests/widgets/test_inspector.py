"""GraphInspector: structure, memory plan, timings and sampled counts."""

import numpy as np
import wgpu

from gpuviz import GPUCommandGraph, GPUData
from gpuviz.widgets import GraphInspector

from ..graph.helpers import affine_node


def _compiled(device, n=256):
    graph = GPUCommandGraph(device, id="inspected")
    src = graph.import_gpu_data("values", GPUData.from_numpy(device, np.arange(n, dtype=np.uint32)))
    counts = GPUData.allocate(device, format="uint32", length=n)
    dst = graph.import_gpu_data("counts", counts)
    mid = graph.create_data_view(graph.create_transient_buffer(id="scratch", byte_length=4 * n,
                                                               usage=wgpu.BufferUsage.STORAGE), format="uint32", length=n)
    affine_node(graph, "double", src, mid, factor=2)
    affine_node(graph, "plus-one", mid, dst, add=1)
    return graph.compile(), counts


def test_panel_shows_passes_uses_memory_and_timings(device):
    compiled, _ = _compiled(device)
    inspector = GraphInspector(compiled, refresh_interval=0)
    encoder = device.create_command_encoder()
    cpu = compiled.encode(encoder, timestamps=compiled.capabilities.timestamps)
    device.queue.submit([encoder.finish()])
    gpu = compiled.read_timings() if compiled.capabilities.timestamps else None
    inspector.record_encode(cpu, gpu_times=gpu)
    state = inspector.snapshot  # the model state the browser renders
    assert state == inspector.state()
    assert state["graph"] == "inspected" and state["frames"] == 1 and state["compile"]["count"] == 1
    assert [(p["kind"], p["nodes"]) for p in state["passes"]] == [("compute", ["double", "plus-one"])]
    nodes = {n["id"]: n for n in state["nodes"]}
    assert nodes["double"]["uses"] == ["storage-read values", "storage-write scratch"]
    assert nodes["double"]["summary"] == "storage-read values · storage-write scratch"
    assert nodes["plus-one"]["after"] == ["double (read-after-write)"] and nodes["double"]["after"] == []
    assert nodes["double"]["cpu_us"] == cpu["double"] * 1e6
    basis = "gpu" if gpu else "cpu"
    times = gpu or cpu
    assert state["frame"]["basis"] == basis
    for node_id, seconds in times.items():
        assert abs(nodes[node_id]["share"] - seconds / sum(times.values())) < 1e-12
    if gpu:
        assert nodes["plus-one"]["gpu_us"] == gpu["plus-one"] * 1e6
    stats = compiled.stats
    assert state["memory"]["logical"] == stats.logical_transient_bytes == 4 * 256
    assert state["memory"]["physical"] == stats.physical_transient_bytes
    assert state["memory"]["reuse_percent"] == stats.reuse_percent
    assert abs(state["compile"]["last_ms"] - stats.compile_seconds * 1e3) < 1e-9
    from gpuviz.widgets.inspector_state import render_html

    page = inspector.to_html()  # the same state as static HTML
    assert render_html(inspector.snapshot) == page  # what was sent renders to it too
    for text in ("inspected", "double", "plus-one", "storage-read values",
                 "storage-write scratch", "compiled 1×", "1 frames"):
        assert text in page, text
    assert f"{cpu['double'] * 1e6:,.1f}" in page
    inspector.close()


def test_updates_are_throttled_and_the_last_one_still_arrives(device):
    import asyncio

    compiled, _ = _compiled(device)
    inspector = GraphInspector(compiled, refresh_interval=0.2)
    sent = []
    inspector.observe(lambda change: sent.append(change["new"]["frames"]), names="snapshot")

    async def frames():
        for _ in range(30):  # 30 reports in ~0.1 s: far more than the panel shows
            inspector.record_encode({"double": 1e-5, "plus-one": 2e-5})
            await asyncio.sleep(0.003)
        await asyncio.sleep(0.35)  # the trailing refresh fires

    asyncio.run(frames())
    assert inspector.frames == 30
    assert 1 <= len(sent) <= 3, sent  # at most one update per refresh_interval
    assert sent[-1] == 30  # the last report is not left behind
    inspector.close()


def test_attach_counts_rebuilds(device):
    first, _ = _compiled(device)
    inspector = GraphInspector(first)
    second, _ = _compiled(device, n=64)
    inspector.attach(second)
    assert inspector.compile_count == 2 and "compiled 2×" in inspector.to_html()
    assert inspector.snapshot["compile"]["count"] == 2 and len(inspector.snapshot["nodes"]) == 2
    total = first.stats.compile_seconds + second.stats.compile_seconds
    assert abs(inspector.snapshot["compile"]["total_ms"] - total * 1e3) < 1e-9


def test_counts_are_sampled_without_waiting(device):
    compiled, counts = _compiled(device, n=8)
    word = GPUData(counts.buffer, format="uint32", length=1, byte_offset=12)  # counts[3] = 3*2+1
    inspector = GraphInspector(compiled, refresh_interval=0, count_interval=0)
    inspector.watch_counts({"visible": word})
    encoder = device.create_command_encoder()
    compiled.encode(encoder)
    assert inspector.sample_counts(encoder)
    device.queue.submit([encoder.finish()])
    for _ in range(200):  # poll never blocks; the value arrives within a few polls
        inspector.poll()
        if inspector.counts:
            break
        device.queue.read_buffer(counts.buffer)  # some unrelated work lets the map complete
    assert inspector.counts == {"visible": 7}
    assert inspector.snapshot["counts"] == [{"label": "visible", "value": 7}]
    assert "visible: <b>7</b>" in inspector.to_html()
    inspector.close()


def test_uses_of_chunked_resources_are_summarized():
    from gpuviz.widgets.inspector import summarize_uses

    uses = [(f"x-buffer-{i}", "storage-read") for i in range(8)] + [("positions", "storage-read")] * 3
    uses += [("positions", "storage-write"), ("grid-7", "storage-write")]
    assert summarize_uses(uses) == ["storage-read x-buffer-{0..7}", "storage-read positions ×3",
                                    "storage-write positions", "storage-write grid-7"]


def test_empty_and_destroyed_states_render_without_a_plan(device):
    from gpuviz.widgets.inspector_state import render_html

    empty = GraphInspector()
    assert empty.snapshot["graph"] is None and render_html(empty.snapshot) == "<i>No graph attached.</i>"
    compiled, _ = _compiled(device, n=8)
    inspector = GraphInspector(compiled, refresh_interval=0)
    compiled.destroy()
    inspector.poll()
    assert inspector.snapshot["destroyed"] and "nodes" not in inspector.snapshot
    inspector.close()
    empty.close()
