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
    page = inspector.to_html()
    assert inspector._html.value == page
    for text in ("inspected", "double", "plus-one", "storage-read values",
                 "storage-write scratch", "compiled 1×", "1 frames"):
        assert text in page, text
    assert f"{cpu['double'] * 1e6:,.1f}" in page
    if gpu:
        assert f"{gpu['plus-one'] * 1e6:,.1f}" in page


def test_attach_counts_rebuilds(device):
    first, _ = _compiled(device)
    inspector = GraphInspector(first)
    second, _ = _compiled(device, n=64)
    inspector.attach(second)
    assert inspector.compile_count == 2 and "compiled 2×" in inspector.to_html()


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
    assert "visible: <b>7</b>" in inspector.to_html()
    inspector.close()


def test_uses_of_chunked_resources_are_summarized():
    from gpuviz.widgets.inspector import summarize_uses

    uses = [(f"x-buffer-{i}", "storage-read") for i in range(8)] + [("positions", "storage-read")] * 3
    uses += [("positions", "storage-write"), ("grid-7", "storage-write")]
    assert summarize_uses(uses) == ["storage-read x-buffer-{0..7}", "storage-read positions ×3",
                                    "storage-write positions", "storage-write grid-7"]
