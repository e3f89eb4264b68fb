"""A scene whose records span several chunks (one storage binding each, as
100M spans need) draws the same frame and the same labels as one chunk."""

import numpy as np
import pytest

from gpuviz import request_device
from gpuviz.errors import GraphValidationError
from gpuviz.trace.scene import RECORD_BYTES, RECORD_CHUNK_ALIGN, GPUTraceScene
from gpuviz.trace.synthetic import synthetic
from gpuviz.widgets.trace.graph import bench_frame

W, H = 768, 384


def frame_and_labels(device, scene, trace):
    rig = bench_frame(device, scene, trace, size=(W, H))
    try:
        state = rig.frame.initial_state(width=W, rows=(0, 40))
        start = state.window[0]
        rig.write(state.with_(window=(start, start + 4_000_000)))
        encoder = device.create_command_encoder()
        rig.graph.encode(encoder)
        device.queue.submit([encoder.finish()])
        image = np.frombuffer(device.queue.read_texture(
            {"texture": rig.graph.color}, {"bytes_per_row": W * 4, "rows_per_image": H}, (W, H, 1)), np.uint8)
        words = np.frombuffer(device.queue.read_buffer(rig.graph.labels), np.uint32)
        count = int(words[0])
        return image.reshape(H, W, 4).copy(), set(words[4:4 + 2 * count:2].tolist()), count
    finally:
        rig.destroy()


def test_records_in_three_chunks_draw_the_same():
    device = request_device()
    trace = synthetic(spans=5000, processes=2, threads_per_process=3, seed=8)
    one = GPUTraceScene(device, trace, label="one")
    three = GPUTraceScene(device, trace, label="three", max_chunk_bytes=RECORD_BYTES * RECORD_CHUNK_ALIGN)
    try:
        assert len(one.record_chunks) == 1 and len(three.record_chunks) == 3
        a, labels_a, count_a = frame_and_labels(device, one, trace)
        b, labels_b, count_b = frame_and_labels(device, three, trace)
        assert count_a > 10 and count_a == count_b and labels_a == labels_b
        assert np.array_equal(a, b)
        assert (a[..., :3].max(axis=2) - a[..., :3].min(axis=2) > 40).sum() > 1000  # spans were drawn
        assert max(labels_a) >= RECORD_CHUNK_ALIGN  # spans of the second chunk got labels too
    finally:
        one.destroy()
        three.destroy()


def test_too_many_chunks_is_refused():
    device = request_device()
    trace = synthetic(spans=5 * RECORD_CHUNK_ALIGN + 1, processes=1, threads_per_process=2, seed=1)
    scene = GPUTraceScene(device, trace, label="six", max_chunk_bytes=RECORD_BYTES * RECORD_CHUNK_ALIGN)
    try:
        with pytest.raises(GraphValidationError, match="at most 4 record chunks"):
            bench_frame(device, scene, trace, size=(W, H))
    finally:
        scene.destroy()
