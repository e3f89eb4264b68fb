"""The labels' readback samples are mapped only after the encoder that
copied into them was submitted: a frame drawn by GPUCanvas records its
sample in ``draw`` and the canvas submits after ``draw`` returns, so the
labels' ``prepare`` in that same ``draw`` (or a ``poll`` by anything the
encode calls out to) must leave the new slot alone
(a submit that uses a buffer pending a map aborts the process in
wgpu-native; the browser test's kernel died of exactly that)."""

import numpy as np
import pyarrow as pa
import wgpu

from gpuviz.widgets import DataAnalysis


def test_a_drawn_frame_maps_its_label_sample_only_after_the_submit():
    rng = np.random.default_rng(3)
    table = pa.table({"x": rng.random(500).astype(np.float32), "y": rng.random(500).astype(np.float32),
                      "v": rng.random(500).astype(np.float32)})
    widget = DataAnalysis(table, x="x", y="y", value="v", bins=8, grid_size=(8, 8), size=(320, 200))
    try:
        overlay = widget.graph.overlay
        acquired = []
        ring_acquire = overlay._ring.try_acquire

        def spy():
            slot = ring_acquire()
            if slot is not None:
                acquired.append(slot)
            return slot
        overlay._ring.try_acquire = spy
        device = widget.device
        size = (320, 200)
        texture = device.create_texture(size=(*size, 1), format="rgba8unorm",
                                        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        record = widget.inspector.record_encode

        def report_polls(*args, **kwargs):  # something the encode calls out to polls the labels in the draw
            record(*args, **kwargs)
            overlay.poll()
        widget.inspector.record_encode = report_polls
        for frame in range(3):  # each frame re-encodes the graph (the canvas submits after draw)
            widget._dirty = True
            before = len(acquired)
            encoder = device.create_command_encoder()
            widget.draw(encoder, texture.create_view(), size)
            fresh = acquired[before:]
            assert len(fresh) == 1, frame  # this frame sampled its label inputs
            assert fresh[0].state == "acquired", (frame, fresh[0].state)  # not mapped before the submit
            device.queue.submit([encoder.finish()])
        overlay.settle()  # after the submits every sample maps and is read
        # Two encodings in flight at once, the later one submitted first (the
        # widget no longer renders one frame inside another, but the ring's
        # rule must not depend on that): polling after the inner submit must
        # leave the outer encoder's sample alone until its own submit.
        outer = device.create_command_encoder()
        assert overlay.sample(outer)
        inner = device.create_command_encoder()
        assert overlay.sample(inner)
        first, second = acquired[-2:]
        device.queue.submit([inner.finish()])
        overlay.submitted(inner)
        overlay.poll()
        assert first.state == "acquired", first.state
        device.queue.submit([outer.finish()])
        overlay.submitted(outer)
        overlay.settle()
        assert all(slot.state == "released" for slot in acquired)
        assert overlay.stats is not None and overlay.stats["hist_max"] > 0
    finally:
        widget.close()
