"""The presentation pass of a TraceViewer frame: the tracks' frame corner
copied into the canvas target, the overlay drawn over it."""

from __future__ import annotations

import numpy as np
import wgpu

from ...graph.compat import device_cache
from ...graph.shaders import shader_module, wgsl
from ..canvas import TEXTURE_FORMAT
from .graph import BACKGROUND

__all__ = ["Presenter"]


def _pipeline(device):
    cache = device_cache(device, "trace-viewer-present")
    if "pipeline" not in cache:
        module = shader_module(device, wgsl("widgets/trace/shaders/present.wgsl"), label="trace-viewer-present")
        cache["pipeline"] = device.create_render_pipeline(
            label="trace-viewer-present", layout="auto",
            vertex={"module": module, "entry_point": "vs_main", "buffers": []},
            primitive={"topology": "triangle-list"},
            fragment={"module": module, "entry_point": "fs_main", "targets": [{"format": TEXTURE_FORMAT}]})
    return cache["pipeline"]


class Presenter:
    """Copies a TraceGraph's frame corner into a target and draws an overlay
    over it. Records only; never submits."""

    def __init__(self, device, graph):
        self.device, self.graph = device, graph
        self.uniform = device.create_buffer(label="trace-viewer-present", size=16,
                                            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        pipeline = _pipeline(device)
        self.group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self.uniform, "offset": 0, "size": 16}},
            {"binding": 1, "resource": graph.color.create_view()}])
        self._written = None

    def present(self, encoder, target_view, dst_size, overlay) -> None:
        key = (tuple(self.graph.render_size), tuple(dst_size))
        if key != self._written:
            self.device.queue.write_buffer(self.uniform, 0, np.array([*key[0], *key[1]], np.float32).tobytes())
            self._written = key
        render_pass = encoder.begin_render_pass(label="trace-viewer-present", color_attachments=[{
            "view": target_view, "load_op": "clear", "store_op": "store", "clear_value": (*BACKGROUND, 1)}])
        render_pass.set_pipeline(_pipeline(self.device))
        render_pass.set_bind_group(0, self.group)
        render_pass.draw(3)
        overlay.draw(render_pass)
        render_pass.end()

    def destroy(self) -> None:
        self.uniform.destroy()
