"""The presentation pass the widgets share: the rendered top-left corner of a
widget's frame texture copied into a canvas target, an overlay drawn over it.

The widgets render into a texture of a fixed maximum size (an imported
texture keeps its compiled size while canvases resize), so a canvas frame is
a one-triangle copy of the used corner. Nothing here submits or reads back.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..graph.compat import device_cache
from ..graph.shaders import shader_module, wgsl
from .canvas import TEXTURE_FORMAT

__all__ = ["FramePresenter"]


def _pipeline(device):
    """The presentation pipeline, created once per device (freed with it)."""
    cache = device_cache(device, "widget-frame-present")
    if "pipeline" not in cache:
        module = shader_module(device, wgsl("widgets/shaders/present.wgsl"), label="widget-frame-present")
        cache["pipeline"] = device.create_render_pipeline(
            label="widget-frame-present", layout="auto",
            vertex={"module": module, "entry_point": "vs_main", "buffers": []},
            primitive={"topology": "triangle-list"},
            fragment={"module": module, "entry_point": "fs_main", "targets": [{"format": TEXTURE_FORMAT}]})
    return cache["pipeline"]


class FramePresenter:
    """Copies the rendered corner of a frame texture into a canvas target.

    Parameters
    ----------
    device : wgpu.GPUDevice
    texture : wgpu.GPUTexture
        The widget's frame texture (``rgba8unorm``, sampled), rendered in its
        top-left ``src_size`` corner.
    label : str
        Label of the uniform and of the render pass.
    clear_color : tuple
        RGBA the target is cleared to before the copy.

    Notes
    -----
    :meth:`present` records one render pass into the caller's encoder; it
    never submits. The 16-byte uniform is written with ``queue.write_buffer``
    only when the sizes change, so two calls with different sizes must each
    be submitted before the next. It does not scale smoothly (nearest
    neighbour only) and does not own or free the texture.
    """

    def __init__(self, device, texture, *, label: str, clear_color):
        self.device, self.label = device, label
        self.clear_color = tuple(clear_color)
        self.pipeline = _pipeline(device)
        self.uniform = device.create_buffer(label=label, size=16,
                                            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self.bind_group = device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self.uniform, "offset": 0, "size": 16}},
            {"binding": 1, "resource": texture.create_view()}])
        self._written = None

    def present(self, encoder, target_view, src_size, dst_size, overlay=None) -> None:
        """Copy the ``src_size`` corner into ``target_view`` (``dst_size``
        pixels), then call ``overlay.draw(render_pass)`` when an overlay is given."""
        key = (tuple(src_size), tuple(dst_size))
        if key != self._written:
            self.device.queue.write_buffer(self.uniform, 0, np.array([*key[0], *key[1]], np.float32).tobytes())
            self._written = key
        render_pass = encoder.begin_render_pass(label=self.label, color_attachments=[{
            "view": target_view, "load_op": "clear", "store_op": "store", "clear_value": self.clear_color}])
        render_pass.set_pipeline(self.pipeline)
        render_pass.set_bind_group(0, self.bind_group)
        render_pass.draw(3)
        if overlay is not None:
            overlay.draw(render_pass)
        render_pass.end()

    def destroy(self) -> None:
        """Free the uniform (not the texture)."""
        self.uniform.destroy()
