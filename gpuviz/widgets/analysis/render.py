"""Drawing for :class:`~gpuviz.widgets.DataAnalysis`: the panel layout, the
graph's render node (heatmap, histogram bars with their CDF line, group
bars) and the presentation blit into a canvas target.

The render node draws into a widget-owned ``rgba8unorm`` plot texture of a
fixed maximum size, in its top-left ``width x height`` corner: an imported
texture keeps its compiled size, while canvases resize, so the canvas frame
is a one-triangle copy of that corner (:class:`PlotPresenter`) recorded
after the graph. Nothing here submits or reads back.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...graph.compat import device_cache
from ...graph.shaders import shader_module, wgsl
from ..canvas import TEXTURE_FORMAT

__all__ = ["panel_rects", "add_render_node", "PlotPresenter", "draw_shader", "view_params", "css_color",
           "PANEL_COLOR", "EMPTY_COLOR", "BACKGROUND", "RAMP", "BAR_COLOR", "CDF_COLOR", "GROUP_PALETTE"]

BACKGROUND = (0.07, 0.07, 0.09, 1.0)   # between panels
PANEL_COLOR = (0.13, 0.13, 0.16, 1.0)  # panel backgrounds
EMPTY_COLOR = (0.10, 0.10, 0.12, 1.0)  # heatmap cells without rows
#: Heatmap colour ramp, five stops from dark to bright (monotonic luminance).
RAMP = ((0.267, 0.005, 0.329), (0.231, 0.322, 0.545), (0.129, 0.569, 0.549), (0.369, 0.788, 0.384),
        (0.992, 0.906, 0.145))
BAR_COLOR = (0.33, 0.58, 0.86)
CDF_COLOR = (1.0, 0.62, 0.16)
#: Colours of group bars, cycled (the shader's ``palette`` and the widget's legend).
GROUP_PALETTE = ((0.90, 0.35, 0.35), (0.35, 0.75, 0.45), (0.60, 0.45, 0.85), (0.95, 0.75, 0.25),
                 (0.30, 0.75, 0.85), (0.90, 0.50, 0.75), (0.65, 0.80, 0.30), (0.85, 0.60, 0.40))
_BLENDED = {"format": TEXTURE_FORMAT, "blend": {
    "color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
    "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}}


def panel_rects(width: int, height: int, has_groups: bool) -> dict:
    """Pixel rectangles ``(x, y, w, h)`` (origin top-left) of the panels of a
    ``width x height`` frame: ``"heatmap"`` on the left, ``"histogram"`` on
    the right (top half when there are groups), ``"groups"`` below it."""
    width, height = max(int(width), 8), max(int(height), 8)
    m = max(2, round(min(width, height) * 0.02))
    split = round(width * 0.58)
    rects = {"heatmap": (m, m, split - m - m // 2, height - 2 * m)}
    right_x = split + m // 2
    right_w = width - right_x - m
    if has_groups:
        half = (height - 3 * m) // 2
        rects["histogram"] = (right_x, m, right_w, half)
        rects["groups"] = (right_x, 2 * m + half, right_w, height - 3 * m - half)
    else:
        rects["histogram"] = (right_x, m, right_w, height - 2 * m)
    return {k: (x, y, max(w, 1), max(h, 1)) for k, (x, y, w, h) in rects.items()}


def draw_shader() -> str:
    """The WGSL of the render node (``shaders/draw.wgsl``). Its colours are
    template values from this module (WGSL overrides are scalars only), so the
    shader and the widget's legend cannot disagree."""
    return wgsl("widgets/analysis/shaders/draw.wgsl", ramp=RAMP, bar_color=BAR_COLOR, cdf_color=CDF_COLOR,
                palette=GROUP_PALETTE)


def css_color(color) -> str:
    """``#rrggbb`` of an RGB float triple."""
    return "#" + "".join(f"{round(v * 255):02x}" for v in color[:3])


def _pipelines(device) -> dict:
    """The render pipelines by name, created once per device (and freed with
    it): five of the draw node, one of PlotPresenter."""
    cache = device_cache(device, "data-analysis-render-pipelines")
    if not cache:
        draw = shader_module(device, draw_shader(), label="data-analysis-draw")
        blit = shader_module(device, wgsl("widgets/analysis/shaders/blit.wgsl"), label="data-analysis-blit")
        for name, module, vertex, fragment, target in (
                ("fill", draw, "vs_fill", "fs_color", _BLENDED), ("heat", draw, "vs_heat", "fs_heat", _BLENDED),
                ("bars", draw, "vs_bars", "fs_color", _BLENDED), ("cdf", draw, "vs_cdf", "fs_color", _BLENDED),
                ("groups", draw, "vs_groups", "fs_color", _BLENDED),
                ("blit", blit, "vs_main", "fs_main", {"format": TEXTURE_FORMAT})):
            cache[name] = device.create_render_pipeline(
                label=f"data-analysis-{name}", layout="auto",
                vertex={"module": module, "entry_point": vertex, "buffers": []},
                primitive={"topology": "triangle-list"},
                fragment={"module": module, "entry_point": fragment, "targets": [target]})
    return cache


# Bindings each pipeline reads (see shaders/draw.wgsl), by role in ``views``.
_PIPELINE_BINDINGS = {
    "fill": {0: "view"},
    "heat": {0: "view", 1: "display", 2: "grid_extent"},
    "bars": {0: "view", 3: "counts", 5: "hist_max"},
    "cdf": {0: "view", 4: "cdf"},
    "groups": {0: "view", 6: "group_means", 7: "group_extent"},
}


def add_render_node(graph, *, plot, views: dict, state) -> str:
    """Add the ``"draw"`` render node to ``graph``.

    Parameters
    ----------
    plot : GraphTextureHandle
        The imported plot texture (``rgba8unorm``); loaded, not cleared (a
        clear would touch the whole maximum-size texture): a background quad
        covers the used corner first.
    views : dict
        Role -> graph view or handle: ``view`` (the uniform), ``display``,
        ``grid_extent``, ``counts``, ``cdf``, ``hist_max`` and, with groups,
        ``group_means`` and ``group_extent``.
    state : object
        Read at encode time: ``render_size`` ``(w, h)``, ``bins`` and
        ``group_count`` (instance counts are recorded values, not compiled).
    """
    has_groups = "group_means" in views
    names = [n for n in _PIPELINE_BINDINGS if has_groups or n != "groups"]
    resources = [(views["view"], "uniform")] + [(v, "storage-read") for k, v in views.items() if k != "view"]

    def compile_draw(ctx):
        pipelines = _pipelines(ctx.device)
        groups_cache = {}

        def bind_group(name, frame):
            entries, key = [], []
            for binding, role in _PIPELINE_BINDINGS[name].items():
                buffer = frame.buffer(views[role])
                entries.append({"binding": binding, "resource": {"buffer": buffer, "offset": 0, "size": buffer.size}})
                key.append(id(buffer))
            key = (name, tuple(key))
            group = groups_cache.get(key)
            if group is None:
                group = groups_cache[key] = ctx.device.create_bind_group(
                    layout=pipelines[name].get_bind_group_layout(0), entries=entries)
            return group

        def encode(render_pass, frame):
            bound = {name: bind_group(name, frame) for name in names}
            width, height = state.render_size
            render_pass.set_viewport(0, 0, width, height, 0.0, 1.0)
            render_pass.set_pipeline(pipelines["fill"])
            render_pass.set_bind_group(0, bound["fill"])
            render_pass.draw(6, 1, 0, 0)  # the background of the used corner
            rects = panel_rects(width, height, has_groups)
            draws = {"heatmap": [("heat", 1)], "histogram": [("bars", state.bins), ("cdf", state.bins)],
                     "groups": [("groups", state.group_count)]}
            for panel, (x, y, w, h) in rects.items():
                render_pass.set_viewport(x, y, w, h, 0.0, 1.0)
                for name, instances, first in [("fill", 1, 1)] + [(n, i, 0) for n, i in draws[panel]]:
                    render_pass.set_pipeline(pipelines[name])
                    render_pass.set_bind_group(0, bound[name])
                    render_pass.draw(6, instances, 0, first)
        return encode

    return graph.add_render_node(id="draw", resources=resources, compile=compile_draw,
                                 color_attachments=[{"view": plot, "load_op": "load", "store_op": "store"}])


def view_params(*, grid_size, op: int, bins: int, groups: int, hist_rect) -> bytes:
    """The 80-byte ``View`` uniform of ``shaders/view.wgsl``."""
    words = np.zeros(20, np.uint32)
    floats = words.view(np.float32)
    words[0:6] = (grid_size[0], grid_size[1], op, bins, groups, 0)
    floats[6:8] = (2.0 / max(hist_rect[2], 1), 2.0 / max(hist_rect[3], 1))
    floats[8:12] = PANEL_COLOR
    floats[12:16] = EMPTY_COLOR
    floats[16:20] = BACKGROUND
    return words.tobytes()


class PlotPresenter:
    """Copies the rendered corner of the plot texture into a canvas target.

    Records one render pass into the caller's encoder (``present``); never
    submits. Its 16-byte uniform is rewritten per call with
    ``queue.write_buffer``, so each call must be submitted before the next.
    """

    def __init__(self, device, plot_texture):
        self.device = device
        self.pipeline = _pipelines(device)["blit"]
        self.uniform = device.create_buffer(label="data-analysis-blit", size=16,
                                            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self.bind_group = device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": self.uniform, "offset": 0, "size": 16}},
            {"binding": 1, "resource": plot_texture.create_view()}])

    def present(self, encoder, target_view, src_size, dst_size) -> None:
        self.device.queue.write_buffer(self.uniform, 0, np.array([*src_size, *dst_size], np.float32).tobytes())
        render_pass = encoder.begin_render_pass(label="data-analysis-present", color_attachments=[{
            "view": target_view, "load_op": "clear", "store_op": "store", "clear_value": BACKGROUND}])
        render_pass.set_pipeline(self.pipeline)
        render_pass.set_bind_group(0, self.bind_group)
        render_pass.draw(3)
        render_pass.end()

    def destroy(self) -> None:
        self.uniform.destroy()
