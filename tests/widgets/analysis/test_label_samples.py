"""The labels' readback samples are mapped only after the encoder that
copied into them was submitted: a frame drawn by GPUCanvas records its
sample in ``draw`` and the canvas submits after ``draw`` returns, so the
labels' ``prepare`` in that same ``draw`` (or a control observer's
``poll`` while it runs) must leave the new slot alone
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
        legend = widget._controls.update_legend

        def observer_polls():  # a control observer that re-renders inside the draw (_frame polls the labels)
            legend()
            overlay.poll()
        widget._controls.update_legend = observer_polls
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
        widget._dirty = False
        # A parameter change re-rendering from inside another one's encode
        # (a control observer fired by update_legend): the outer encoder is
        # submitted last, so its sample must not be mapped by the inner poll.
        outer = []

        def nested_apply():
            legend()
            if not outer:
                outer.append(acquired[-1])
                widget._frame()  # the inner change: encodes, submits, polls the labels
                assert outer[0].state == "acquired", outer[0].state
        widget._controls.update_legend = nested_apply
        widget._frame()
        assert outer and len(acquired) >= 2
        overlay.settle()
        assert all(slot.state == "released" for slot in acquired)
        assert all(slot.state == "released" for slot in acquired)
        assert overlay.stats is not None and overlay.stats["hist_max"] > 0
    finally:
        widget.close()
