"""Drawing for :class:`~gpuviz.widgets.DataAnalysis`: the panel layout, the
graph's render node (heatmap, histogram bars with their CDF line, group
bars) and the presentation blit into a canvas target.

The render node draws into a widget-owned ``rgba8unorm`` plot texture of a
fixed maximum size, in its top-left ``width x height`` corner: an imported
texture keeps its compiled size, while canvases resize, so the canvas frame
is a one-triangle copy of that corner (:class:`PlotPresenter`) recorded
after the graph, with the text and axes (:mod:`.labels`) drawn over it in
the same pass. Nothing here submits or reads back.
"""

from __future__ import annotations

import numpy as np

from ...graph.compat import device_cache
from ...graph.shaders import shader_module, wgsl
from ...render.colour_range import GPUColourRange
from ...tables import GPUData
from ..canvas import TEXTURE_FORMAT
from ..presenter import FramePresenter
from .labels import AnalysisOverlay
from .layout import (BACKGROUND, BAR_COLOR, CDF_COLOR, EMPTY_COLOR, GROUP_PALETTE, PANEL_COLOR, PLOT_TOP, RAMP,
                     panel_layout, panel_rects)

__all__ = ["panel_rects", "panel_layout", "add_render_node", "PlotPresenter", "draw_shader", "view_params", "css_color",
           "PANEL_COLOR", "EMPTY_COLOR", "BACKGROUND", "RAMP", "BAR_COLOR", "CDF_COLOR", "GROUP_PALETTE"]

_BLENDED = {"format": TEXTURE_FORMAT, "blend": {
    "color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
    "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}}


def draw_shader() -> str:
    """The WGSL of the render node (``shaders/draw.wgsl``). Its colours are
    template values from this module (WGSL overrides are scalars only), so the
    shader and the widget's legend cannot disagree."""
    return wgsl("widgets/analysis/shaders/draw.wgsl", ramp=RAMP, bar_color=BAR_COLOR, cdf_color=CDF_COLOR,
                palette=GROUP_PALETTE, top=PLOT_TOP)


def css_color(color) -> str:
    """``#rrggbb`` of an RGB float triple."""
    return "#" + "".join(f"{round(v * 255):02x}" for v in color[:3])


def _pipelines(device) -> dict:
    """The render pipelines by name, created once per device (and freed with
    it): the five of the draw node."""
    cache = device_cache(device, "data-analysis-render-pipelines")
    if not cache:
        draw = shader_module(device, draw_shader(), label="data-analysis-draw")
        for name, module, vertex, fragment, target in (
                ("fill", draw, "vs_fill", "fs_color", _BLENDED), ("heat", draw, "vs_heat", "fs_heat", _BLENDED),
                ("bars", draw, "vs_bars", "fs_color", _BLENDED), ("cdf", draw, "vs_cdf", "fs_color", _BLENDED),
                ("groups", draw, "vs_groups", "fs_color", _BLENDED)):
            cache[name] = device.create_render_pipeline(
                label=f"data-analysis-{name}", layout="auto",
                vertex={"module": module, "entry_point": vertex, "buffers": []},
                primitive={"topology": "triangle-list"},
                fragment={"module": module, "entry_point": fragment, "targets": [target]})
    return cache


# Bindings each pipeline reads (see shaders/draw.wgsl), by role in ``views``.
_PIPELINE_BINDINGS = {
    "fill": {0: "view"},
    "heat": {0: "view", 1: "display", 2: "colour_range"},
    "bars": {0: "view", 3: "counts", 5: "hist_max"},
    "cdf": {0: "view", 4: "cdf"},
    "groups": {0: "view", 6: "group_means", 7: "group_extent"},
}


def add_render_node(graph, *, plot, views: dict, state) -> str:
    """Add the heatmap's ``"colour-range"`` compute node and the ``"draw"``
    render node to ``graph``.

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
    state : DataAnalysisGraph
        Read at encode time: ``render_size`` ``(w, h)``, ``bins`` and
        ``group_count`` (instance counts are recorded values, not compiled).
        This function adds to it: ``outputs["colour_range"]`` (float32 x 4,
        freed with the other outputs), ``colour_range`` (the
        :class:`~gpuviz.render.colour_range.GPUColourRange` whose
        normalisation the overlay sets) and ``overlay`` (the
        :class:`AnalysisOverlay` that :class:`PlotPresenter` draws over the
        plot; ``overlay.enabled = False`` presents the plots without text and axes).
    """
    has_groups = "group_means" in views
    colour = GPUData.allocate(state.device, format="float32", length=4, label="data-analysis-colour-range")
    state.outputs["colour_range"] = colour
    views = dict(views, colour_range=graph.import_gpu_data("colour-range", colour))
    state.colour_range = GPUColourRange(id="colour-range", input=views["display"], output=views["colour_range"],
                                        normalisation="robust")
    state.colour_range.add_to_graph(graph)
    state.overlay = overlay = AnalysisOverlay(state.device, outputs=state.outputs, group_count=state.group_count)
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
            layout = panel_layout(width, height, has_groups, pixel_ratio=overlay.pixel_ratio)
            draws = {"heatmap": [("heat", 1)], "histogram": [("bars", state.bins), ("cdf", state.bins)],
                     "groups": [("groups", state.group_count)]}
            for panel, rects in layout.items():
                for rect, (name, instances, first) in [(rects["frame"], ("fill", 1, 1))] + [
                        (rects["plot"], (n, i, 0)) for n, i in draws[panel]]:
                    render_pass.set_viewport(*rect, 0.0, 1.0)
                    render_pass.set_pipeline(pipelines[name])
                    render_pass.set_bind_group(0, bound[name])
                    render_pass.draw(6, instances, 0, first)
        return encode

    return graph.add_render_node(id="draw", resources=resources, compile=compile_draw,
                                 color_attachments=[{"view": plot, "load_op": "load", "store_op": "store"}])


def view_params(*, grid_size, op: int, bins: int, groups: int, hist_rect, pixel_ratio: float = 1.0) -> bytes:
    """The 80-byte ``View`` uniform of ``shaders/view.wgsl``; ``hist_rect``
    is the histogram plot in physical pixels, ``hist_px`` one logical pixel
    (``pixel_ratio`` physical ones) of it in clip units."""
    words = np.zeros(20, np.uint32)
    floats = words.view(np.float32)
    words[0:6] = (grid_size[0], grid_size[1], op, bins, groups, 0)
    r = float(pixel_ratio)
    floats[6:8] = (2.0 * r / max(hist_rect[2], 1), 2.0 * r / max(hist_rect[3], 1))
    floats[8:12] = PANEL_COLOR
    floats[12:16] = EMPTY_COLOR
    floats[16:20] = BACKGROUND
    return words.tobytes()


class PlotPresenter(FramePresenter):
    """Copies the rendered corner of the plot texture into a canvas target
    (a :class:`~gpuviz.widgets.presenter.FramePresenter` cleared to the
    panels' background).

    Records one render pass into the caller's encoder (``present``); never
    submits. Its 16-byte uniform is rewritten with ``queue.write_buffer``
    when the sizes change, so each call must be submitted before the next.
    """

    def __init__(self, device, plot_texture):
        super().__init__(device, plot_texture, label="data-analysis-present", clear_color=BACKGROUND)

    def present(self, encoder, target_view, src_size, dst_size, overlay=None) -> None:
        """Copy the ``src_size`` corner of the plot into ``target_view``
        (``dst_size``), then draw ``overlay`` (an object with
        ``draw(render_pass)``, e.g. the prepared :class:`AnalysisOverlay`) on
        top unless its ``enabled`` is False."""
        if overlay is not None and not getattr(overlay, "enabled", True):
            overlay = None
        super().present(encoder, target_view, src_size, dst_size, overlay)
