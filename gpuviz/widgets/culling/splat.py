"""The ``splat`` compute node of :class:`~gpuviz.widgets.culling.graph.CullingGraph`:
the dense scenes' pixels written by compute (shaders/splat.wgsl), so the
rasteriser (a small part of a data-centre GPU) spends no primitive on an
instance a pixel wide. The targets and their formats are the render layer's
compute rasterisation (:mod:`gpuviz.render.raster`); this node holds what is
splatted where.

One explicit bind-group layout serves the three entry points, so a frame
binds once and dispatches three times. Nothing here allocates buffers; the
graph owns them and this node only records dispatches.
"""

from __future__ import annotations

import wgpu

from ...graph.compat import device_cache
from ...graph.shaders import shader_module, wgsl

__all__ = ["compile_splat", "ENTRY_POINTS"]

#: The dispatches of one frame, in order (see shaders/splat.wgsl).
ENTRY_POINTS = ("clear", "rows", "hits_pass")
_GROUP = 256  # splat.wgsl's workgroup size
_WRITABLE = (3, 4, 5, 6, 7)  # draws, overview words, perspective depths / hits, large IDs


def _layout(device):
    cache = device_cache(device, "frustum-culling-splat-layout")
    if "layout" not in cache:
        entries = [{"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "uniform"}}]
        entries += [{"binding": b, "visibility": wgpu.ShaderStage.COMPUTE,
                     "buffer": {"type": "storage" if b in _WRITABLE else "read-only-storage"}} for b in range(1, 8)]
        cache["group"] = device.create_bind_group_layout(label="frustum-culling-splat", entries=entries)
        cache["layout"] = device.create_pipeline_layout(label="frustum-culling-splat",
                                                        bind_group_layouts=[cache["group"]])
    return cache["group"], cache["layout"]


def _pipelines(device, constants: dict) -> list:
    cache = device_cache(device, "frustum-culling-splat-pipelines")
    key = tuple(sorted(constants.items()))
    if key not in cache:
        module = shader_module(device, wgsl("widgets/culling/shaders/splat.wgsl"), label="frustum-culling-splat")
        _, layout = _layout(device)
        cache[key] = [device.create_compute_pipeline(label=f"frustum-culling-splat-{entry}", layout=layout,
                                                     compute={"module": module, "entry_point": entry,
                                                              "constants": constants})
                      for entry in ENTRY_POINTS]
    return cache[key]


def compile_splat(graph, device, view_rects):
    """``encode(compute_pass, frame)`` of ``graph``'s splat node (a CullingGraph
    with ``overview_points`` or ``splat_radius`` on); ``view_rects(w, h)``
    gives the viewports of its render size."""
    n = graph.n
    constants = {"COUNT_WORD": graph.draws.instance_count_byte_offset(0) // 4,
                 "LARGE_WORD": graph.draws.instance_count_byte_offset(1) // 4, "ROWS": n,
                 "OVERVIEW": bool(graph.overview_points), "PERSPECTIVE": bool(graph.splat_radius),
                 "SPLAT_RADIUS": float(graph.splat_radius)}
    pipelines = _pipelines(device, constants)
    spheres = graph.spheres
    buffers = [(graph.camera, 0, graph.camera.size),
               (spheres.buffer, spheres.byte_offset, spheres.byte_length or spheres.buffer.size),
               (graph.ids.buffer, 0, graph.ids.buffer.size), (graph.draws.buffer, 0, graph.draws.buffer.size),
               (graph.words, 0, graph.words.size), (graph.depths, 0, graph.depths.size),
               (graph.hits, 0, graph.hits.size), (graph.large, 0, graph.large.size)]
    group_layout, _ = _layout(device)
    group = device.create_bind_group(label="frustum-culling-splat", layout=group_layout, entries=[
        {"binding": b, "resource": {"buffer": buf, "offset": off, "size": size}}
        for b, (buf, off, size) in enumerate(buffers)])
    limit = int(device.limits["max-compute-workgroups-per-dimension"])

    def grid(threads):
        groups = -(-threads // _GROUP)
        return (groups, 1, 1) if groups <= limit else (limit, -(-groups // limit), 1)

    def encode(compute_pass, frame):
        rects = view_rects(*graph.render_size)
        pixels = max(w * h for _, _, w, h in rects.values())
        compute_pass.set_bind_group(0, group)
        for pipeline, threads in zip(pipelines, (pixels, n, n)):
            if threads:
                compute_pass.set_pipeline(pipeline)
                compute_pass.dispatch_workgroups(*grid(threads))
    return encode
