"""The command graph behind :class:`~gpuviz.widgets.FrustumCulling`: one
graph, compiled once per scene, for every camera.

Nodes, in the order the graph keeps them::

    cull-*         GPUVisibilityWorkflow (its nodes, prefixed "cull-"): spheres against the six planes ->
                   compacted IDs (ascending rows) + the instanceCount word of
                   an indexed indirect record (no CPU in between)
    splat          compute node, dense scenes only (splat.py, shaders/splat.wgsl):
                   the overview's rows (every row, then the compacted IDs) as
                   one word per overview pixel (overview_points), and the
                   perspective's visible instances under splat_radius pixels
                   as depth + ID words per pixel, the others appended to a
                   second indirect record's list (splat_radius > 0)
    views          render node replaying two render bundles recorded once at
                   compile time: the perspective (left viewport): one indexed
                   indirect draw of a cube mesh (its three eye-facing faces),
                   depth tested (dense scenes: the splatted words resolved
                   by one depth-writing triangle, then only the large
                   instances); the top-down overview (right viewport): every
                   row muted, the same IDs and record bright (dense scenes:
                   the splatted words resolved by one triangle), the
                   frustum's edges. Both write instance IDs into a
                   GPUIndexPickingTarget. (``split_views``: one render node
                   per view, "perspective" and "overview", for per-node
                   timings; a render pass more to record.)
    hover          GPUIndexPickingTarget pixel pass: the ID under the pointer,
                   read by the next frame's shaders as the highlight

A camera change is one buffer write: the ``camera`` buffer holds the uniform
the shaders draw with and, at the storage alignment after it, the six
planes the workflow tests. The
attachments have a fixed maximum size (:data:`FRAME_SIZE`) and a frame uses
their top-left corner, so canvas resizes do not rebuild anything either.
"""

from __future__ import annotations

import operator
import struct

import numpy as np
import wgpu

from ...graph import GPUCommandGraph
from ...graph.compat import device_cache
from ...graph.shaders import shader_module, wgsl
from ...render.draw_commands import DrawCommandBuffer
from ...render.picking import NO_ID, GPUIndexPickingTarget
from ...tables import GPUData
from ...workflows.visibility import GPUVisibilityWorkflow
from ..canvas import TEXTURE_FORMAT
from .scene import CUBE_HALF, cube_mesh
from .splat import compile_splat

__all__ = ["CullingGraph", "FRAME_SIZE", "COLORS", "DEPTH_FORMAT", "DENSE_INSTANCES", "view_rects"]

BU, TU = wgpu.BufferUsage, wgpu.TextureUsage
#: Rows from which the overview draws each row as a point (see CullingGraph's overview_points).
DENSE_INSTANCES = 250_000
#: Largest frame the render node draws (larger canvases are scaled up when presented).
FRAME_SIZE = (2048, 1280)
DEPTH_FORMAT = "depth32float"
#: Colours of the views (linear RGB in 0..1; the shader's template values, the tests' expectations).
COLORS = {
    "background": (0.055, 0.063, 0.082), "overview_background": (0.085, 0.095, 0.12),
    "building_a": (0.52, 0.60, 0.72), "building_b": (0.82, 0.80, 0.74), "hover": (1.0, 0.52, 0.12),
    "culled": (0.27, 0.29, 0.36), "visible": (0.30, 0.86, 1.0), "frustum": (1.0, 0.82, 0.25),
}
CAMERA_BYTES = 320  # shaders/camera.wgsl: Camera
#: Bounding-sphere radius (pixels) below which dense scenes splat a perspective instance (see splat_radius).
SPLAT_RADIUS = 2.0
_INDEX_COUNT = 18
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_COLUMN_MAJOR = operator.itemgetter(*(4 * row + col for col in range(4) for row in range(4)))  # of a row-major 4x4


def view_rects(width: int, height: int) -> dict:
    """``{"perspective", "overview"}`` -> ``(x, y, w, h)`` pixel rects of a frame:
    the left half and the right half (the right one takes the odd pixel)."""
    half = max(1, width // 2)
    return {"perspective": (0, 0, half, height), "overview": (half, 0, max(1, width - half), height)}


def _layout(device):
    cache = device_cache(device, "frustum-culling-layout")
    if "layout" not in cache:
        visibility = wgpu.ShaderStage.VERTEX | wgpu.ShaderStage.FRAGMENT
        entries = [{"binding": 0, "visibility": visibility, "buffer": {"type": "uniform"}}]
        entries += [{"binding": b, "visibility": visibility, "buffer": {"type": "read-only-storage"}}
                    for b in range(1, 8)]
        group = device.create_bind_group_layout(label="frustum-culling", entries=entries)
        cache["group"] = group
        cache["layout"] = device.create_pipeline_layout(label="frustum-culling", bind_group_layouts=[group])
    return cache["group"], cache["layout"]


def _pipelines(device) -> dict:
    """The five render pipelines of the views, created once per device."""
    cache = device_cache(device, "frustum-culling-pipelines")
    if cache:
        return cache
    module = shader_module(device, wgsl("widgets/culling/shaders/draw.wgsl", cube_half=repr(float(CUBE_HALF)),
                                        **{k: [repr(float(c)) for c in v] for k, v in COLORS.items()}),
                           label="frustum-culling-draw")
    _, layout = _layout(device)
    mesh = [{"array_stride": 12, "step_mode": "vertex", "attributes": [
        {"format": "float32x3", "offset": 0, "shader_location": 0}]}]
    ids = {"format": "r32uint"}
    for name, vertex, fragment, buffers, topology, depth, id_mask, cull in (
            ("background", "vs_background", "fs_main", [], "triangle-list", ("always", True), 0xF, "none"),
            ("overview-background", "vs_background", "fs_overview_background", [], "triangle-list",
             ("always", False), 0xF, "none"),
            ("instances", "vs_instance", "fs_instance", mesh, "triangle-list", ("less", True), 0xF, "none"),
            ("instances-large", "vs_instance_large", "fs_instance", mesh, "triangle-list", ("less", True), 0xF,
             "none"),
            ("perspective-resolve", "vs_background", "fs_perspective_resolve", [], "triangle-list", ("always", True),
             0xF, "none"),
            ("overview-all", "vs_overview_all", "fs_main", mesh, "triangle-list", ("always", False), 0xF, "none"),
            ("overview-visible", "vs_overview_visible", "fs_main", mesh, "triangle-list", ("always", False), 0xF,
             "none"),
            ("overview-resolve", "vs_background", "fs_overview_resolve", [], "triangle-list", ("always", False), 0xF,
             "none"),
            ("frustum", "vs_frustum", "fs_main", [], "line-list", ("always", False), 0, "none")):
        cache[name] = device.create_render_pipeline(
            label=f"frustum-culling-{name}", layout=layout,
            vertex={"module": module, "entry_point": vertex, "buffers": buffers},
            primitive={"topology": topology, "cull_mode": cull, "front_face": "ccw"},
            depth_stencil={"format": DEPTH_FORMAT, "depth_compare": depth[0], "depth_write_enabled": depth[1]},
            fragment={"module": module, "entry_point": fragment,
                      "targets": [{"format": TEXTURE_FORMAT}, dict(ids, write_mask=id_mask)]})
    return cache


class CullingGraph:
    """The compiled graph of one FrustumCulling scene and the GPU resources
    it draws from (built and compiled once; :meth:`destroy` frees them).

    Parameters
    ----------
    device : wgpu.GPUDevice
    spheres : GPUData
        float32x4 rows ``(cx, cy, cz, r)`` with STORAGE usage (borrowed:
        never destroyed here unless ``own_spheres``).
    own_spheres : bool
        Destroy ``spheres`` with the graph (the widget uploaded them).
    overview_points : bool, optional
        Draw every row of the overview as one pixel, written by a compute
        pass (one word per overview pixel, see the ``splat`` node), rather
        than as a rasterised square of at least 2.5 pixels. Default: from
        :data:`DENSE_INSTANCES` rows on, where squares would be a pixel or
        less anyway and the rasteriser's per-primitive cost is what a frame
        pays for.
    splat_radius : float, optional
        Perspective instances whose bounding sphere projects to less than
        this many pixels are written by a compute pass (a square of depth +
        ID words per pixel, flat shaded) instead of rasterised; 0 disables.
        Default: :data:`SPLAT_RADIUS` from :data:`DENSE_INSTANCES` rows on,
        else 0.
    split_views : bool
        One render node per view ("perspective", "overview") rather than
        one "views" node for both: per-node GPU timings then tell the views
        apart, at the cost of a render pass more per frame (benchmarks).

    Attributes
    ----------
    n : int
    compiled : CompiledGPUCommandGraph
    draws : DrawCommandBuffer
        Two draw-indexed records, indexCount 18 (three faces): record 0's
        instanceCount is written by the visibility workflow (every visible
        instance), record 1's by the splat node (the perspective's
        rasterised instances; 0 and unused without splat_radius).
    large : wgpu.GPUBuffer
        uint32 IDs of record 1 (unordered; n words with splat_radius, else 16 bytes).
    words, depths, hits : wgpu.GPUBuffer
        The splat node's per-pixel words (overview; perspective depth bits and
        id + 1), one per pixel of the largest viewport, or 16 bytes when unused.
    ids : GPUData
        uint32, n rows: the compacted IDs (the first instanceCount are valid).
    picking : GPUIndexPickingTarget
    render_size : (int, int)
        The corner of the attachments the next encoding draws (set by the widget).

    Notes
    -----
    Does not submit or read back: :meth:`write_camera` and
    :meth:`write_hover` are ``queue.write_buffer`` calls, :meth:`encode`
    records into the caller's encoder.
    """

    def __init__(self, device, spheres: GPUData, *, own_spheres: bool, overview_points: bool | None = None,
                 splat_radius: float | None = None, split_views: bool = False):
        self.device = device
        self.spheres = spheres
        self.n = spheres.length
        dense = self.n >= DENSE_INSTANCES
        self.overview_points = dense if overview_points is None else bool(overview_points)
        self.splat_radius = (SPLAT_RADIUS if dense else 0.0) if splat_radius is None else max(float(splat_radius), 0.0)
        self._own_spheres = own_spheres
        self.split_views = bool(split_views)
        self.render_size = (960, 480)
        self._owned = []
        self._draw_group = None
        self.compiled = None
        try:
            self._allocate()
            self._build()
        except BaseException:
            self.destroy()
            raise

    def _buffer(self, label, size, usage, data=None):
        if data is None:
            buffer = self.device.create_buffer(label=f"frustum-culling-{label}", size=max(16, size), usage=usage)
        else:
            buffer = self.device.create_buffer_with_data(label=f"frustum-culling-{label}", data=data, usage=usage)
        self._owned.append(buffer)
        return buffer

    def _allocate(self) -> None:
        device, limit = self.device, int(self.device.limits["max-texture-dimension-2d"])
        self.frame_size = (min(FRAME_SIZE[0], limit), min(FRAME_SIZE[1], limit))
        self.ids = GPUData.allocate(device, format="uint32", length=self.n, label="frustum-culling-ids",
                                    usage=BU.STORAGE | BU.COPY_SRC)
        self._owned.append(self.ids)
        # record 0: every visible instance (the workflow's count); record 1: those the perspective rasterises
        self.draws = DrawCommandBuffer(device, type="draw-indexed", capacity=2, label="frustum-culling-draws")
        self._owned.append(self.draws)
        self.draws.write(0, index_count=_INDEX_COUNT, instance_count=0)
        self.draws.write(1, index_count=_INDEX_COUNT, instance_count=0)
        # the Camera uniform, then (at the storage alignment) the six planes the workflow reads: one write a frame
        align = int(device.limits["min-storage-buffer-offset-alignment"])
        self.planes_offset = -(-CAMERA_BYTES // align) * align
        self.camera = self._buffer("camera", self.planes_offset + 96, BU.UNIFORM | BU.STORAGE | BU.COPY_DST)
        # shaders/camera.wgsl's Camera (80 floats), zeros up to the planes, the 24 plane floats
        self._camera_layout = struct.Struct(f"<80f{self.planes_offset - CAMERA_BYTES}x24f")
        self._camera_bytes = bytearray(self._camera_layout.size)
        self.hover_position = self._buffer("hover-position", 16, BU.STORAGE | BU.COPY_DST,
                                           np.full(4, NO_ID, np.uint32).tobytes())
        self.hover = self._buffer("hover", 16, BU.STORAGE | BU.COPY_SRC | BU.COPY_DST,
                                  np.full(4, NO_ID, np.uint32).tobytes())
        corners, indices, overview = cube_mesh()
        self.vertices = self._buffer("mesh-vertices", corners.nbytes, BU.VERTEX, corners.tobytes())
        # the perspective's 36 indices, then the overview's 36 for the same record (top face only)
        self.indices = self._buffer("mesh-indices", indices.nbytes + overview.nbytes, BU.INDEX,
                                    np.concatenate([indices, overview]).tobytes())
        # dense overview: one word per pixel of the largest overview viewport (zeroed each frame before use)
        words = self.frame_size[0] * self.frame_size[1] if self.overview_points else 4
        self.words = self._buffer("overview-words", 4 * words, BU.STORAGE)
        # splatted perspective: depth and ID words per pixel of the largest perspective viewport, the large IDs
        pixels = self.frame_size[0] * self.frame_size[1] if self.splat_radius else 4
        self.depths = self._buffer("perspective-depths", 4 * pixels, BU.STORAGE)
        self.hits = self._buffer("perspective-hits", 4 * pixels, BU.STORAGE)
        self.large = self._buffer("perspective-large", 4 * (self.n if self.splat_radius else 4),
                                  BU.STORAGE | BU.COPY_SRC)
        size = (*self.frame_size, 1)
        self.color = device.create_texture(label="frustum-culling-frame", size=size, format=TEXTURE_FORMAT,
                                           usage=TU.RENDER_ATTACHMENT | TU.TEXTURE_BINDING | TU.COPY_SRC)
        self.depth = device.create_texture(label="frustum-culling-depth", size=size, format=DEPTH_FORMAT,
                                           usage=TU.RENDER_ATTACHMENT)
        self._owned += [self.color, self.depth]
        self.picking = GPUIndexPickingTarget(device, size=self.frame_size, label="frustum-culling-picking")
        self._owned.append(self.picking)

    def _build(self) -> None:
        graph = GPUCommandGraph(self.device, id="frustum-culling")
        spheres = graph.import_gpu_data("spheres", self.spheres)
        camera = graph.import_buffer(id="camera", byte_length=self.camera.size, usage=self.camera.usage,
                                     buffer=self.camera)
        planes = graph.create_data_view(camera, format="float32x4", length=6, byte_offset=self.planes_offset)
        ids = graph.import_gpu_data("ids", self.ids)
        count = graph.import_gpu_data("draws", self.draws.get_instance_count_data(0))
        GPUVisibilityWorkflow(id="cull", spheres=spheres, planes=planes, output=ids, count=count).add_to_graph(graph)
        hover_handle = graph.import_buffer(id="hover", byte_length=16, usage=self.hover.usage, buffer=self.hover)
        hover = graph.create_data_view(hover_handle, format="uint32", length=2)
        position_handle = graph.import_buffer(id="hover-position", byte_length=16, usage=self.hover_position.usage,
                                              buffer=self.hover_position)
        position = graph.create_data_view(position_handle, format="uint32", length=2)
        vertices = graph.import_buffer(id="mesh-vertices", byte_length=self.vertices.size, usage=self.vertices.usage,
                                       buffer=self.vertices)
        indices = graph.import_buffer(id="mesh-indices", byte_length=self.indices.size, usage=self.indices.usage,
                                      buffer=self.indices)
        frame_size = (*self.frame_size, 1)
        color = graph.import_texture(id="frame", size=frame_size, format=TEXTURE_FORMAT, usage=self.color.usage,
                                     texture=self.color)
        depth = graph.import_texture(id="depth", size=frame_size, format=DEPTH_FORMAT, usage=self.depth.usage,
                                     texture=self.depth)
        words = graph.import_buffer(id="overview-words", byte_length=self.words.size, usage=self.words.usage,
                                    buffer=self.words)
        splat = {}
        for name in ("depths", "hits", "large"):
            buffer = getattr(self, name)
            splat[name] = graph.import_buffer(id=f"perspective-{name}", byte_length=buffer.size, usage=buffer.usage,
                                              buffer=buffer)
        if self.overview_points or self.splat_radius:
            graph.add_compute_node(id="splat", compile=lambda ctx: compile_splat(self, ctx.device, view_rects),
                                   resources=[(camera, "uniform"), (spheres, "storage-read"), (ids, "storage-read"),
                                              (count.handle, "storage-read-write"), (words, "storage-read-write"),
                                              *((h, "storage-read-write") for h in splat.values())])
        # load, not clear: each view's first draw covers its viewport (colour, NO_ID, depth 1), so a frame
        # touches only the corner it uses, not the whole maximum-size attachments
        attachments = [{"view": color, "load_op": "load", "store_op": "store"},
                       *self.picking.color_attachments(graph, load_op="load")]
        depth_attachment = {"view": depth, "depth_load_op": "load", "depth_store_op": "store"}
        resources = [(camera, "uniform"), (spheres, "storage-read"), (ids, "storage-read"), (hover, "storage-read"),
                     (count.handle, "indirect"), (vertices, "vertex"), (indices, "index")]
        resources += [(words, "storage-read"), *((h, "storage-read") for h in splat.values())]
        for node, views in ((("perspective", ("perspective",)), ("overview", ("overview",))) if self.split_views
                            else (("views", ("perspective", "overview")),)):
            graph.add_render_node(id=node, resources=resources, compile=lambda ctx, views=views: self._compile_views(
                ctx, views), color_attachments=attachments, depth_stencil_attachment=depth_attachment)
        self.picking.add_pixel_pass(graph, id="hover", position=position, output=hover)
        self.compiled = graph.compile()

    def _bind_group(self, device):
        """The views' one bind group (created at the first view's compile)."""
        if self._draw_group is None:
            group_layout, _ = _layout(device)
            self._draw_group = device.create_bind_group(label="frustum-culling", layout=group_layout, entries=[
                {"binding": 0, "resource": {"buffer": self.camera, "offset": 0, "size": CAMERA_BYTES}},
                {"binding": 1, "resource": {"buffer": self.spheres.buffer, "offset": self.spheres.byte_offset,
                                            "size": self.spheres.byte_length or self.spheres.buffer.size}},
                {"binding": 2, "resource": {"buffer": self.ids.buffer, "offset": 0, "size": self.ids.buffer.size}},
                {"binding": 3, "resource": {"buffer": self.hover, "offset": 0, "size": 16}},
                {"binding": 4, "resource": {"buffer": self.words, "offset": 0, "size": self.words.size}},
                *({"binding": b, "resource": {"buffer": buffer, "offset": 0, "size": buffer.size}}
                  for b, buffer in ((5, self.depths), (6, self.hits), (7, self.large)))])
        return self._draw_group

    def _compile_views(self, ctx, views):
        """Record each view's bundle once; every encoding replays them, each in its viewport."""
        recorded = [(view, self._record_view(ctx.device, view)) for view in views]

        def encode(render_pass, frame):
            rects = view_rects(*self.render_size)
            for view, bundle in recorded:
                x, y, w, h = rects[view]
                render_pass.set_viewport(x, y, w, h, 0.0, 1.0)
                render_pass.execute_bundles(bundle)
        return encode

    def _record_view(self, device, view):
        """One view's render bundle (a one-element list, as execute_bundles takes it)."""
        pipelines = _pipelines(device)
        half = self.indices.size // 2

        def indirect(encoder):
            self.draws.draw(encoder, 0)  # instanceCount = what the workflow wrote this frame

        if view == "perspective" and self.splat_radius:
            steps, index_offset = [("perspective-resolve", lambda e: e.draw(3)),
                                   ("instances-large", lambda e: self.draws.draw(e, 1))], 0
        elif view == "perspective":
            steps, index_offset = [("background", lambda e: e.draw(3)), ("instances", indirect)], 0
        elif self.overview_points:
            steps, index_offset = [("overview-resolve", lambda e: e.draw(3)), ("frustum", lambda e: e.draw(24))], half
        else:
            steps, index_offset = [
                ("overview-background", lambda e: e.draw(3)),
                ("overview-all", lambda e: e.draw_indexed(6, self.n) if self.n else None),  # the top face alone
                ("overview-visible", indirect), ("frustum", lambda e: e.draw(24))], half
        encoder = device.create_render_bundle_encoder(label=f"frustum-culling-{view}",
                                                      color_formats=[TEXTURE_FORMAT, "r32uint"],
                                                      depth_stencil_format=DEPTH_FORMAT)
        encoder.set_bind_group(0, self._bind_group(device))
        encoder.set_vertex_buffer(0, self.vertices)
        encoder.set_index_buffer(self.indices, "uint16", index_offset, half)
        for name, draw in steps:
            encoder.set_pipeline(pipelines[name])
            draw(encoder)
        return [encoder.finish()]

    # ------------------------------------------------------------ parameters
    def write_camera(self, *, planes, view_projection, overview, eye, far, overview_size, overview_rect,
                     perspective_rect, corners) -> None:
        """The ``Camera`` uniform of shaders/camera.wgsl and the six float32
        planes the workflow tests, in one buffer write.

        ``view_projection`` is 16 floats row-major (``M[i][j]`` at ``4i + j``;
        written column-major as WGSL reads it), ``overview`` 16 floats already
        column-major, ``planes`` 24 floats (6 x (n, d)), ``corners`` 24 floats
        (8 x (x, y, z)), the rest 4 numbers each (``eye`` 3 + ``far``). Plain
        floats: packed straight into a reused byte buffer. A value past
        float32's range (a scene whose centres or radii reach ~3e38 puts the
        far plane and the corners there) is written as +-float32 max: the
        largest the shaders could compute with anyway."""
        c = corners
        values = (*_COLUMN_MAJOR(view_projection), *overview, *eye, far, *overview_size, *overview_rect,
                  *perspective_rect, *c[0:3], 1.0, *c[3:6], 1.0, *c[6:9], 1.0, *c[9:12], 1.0, *c[12:15], 1.0,
                  *c[15:18], 1.0, *c[18:21], 1.0, *c[21:24], 1.0, *planes)
        try:
            self._camera_layout.pack_into(self._camera_bytes, 0, *values)
        except OverflowError:
            saturated = np.clip(values, -_FLOAT32_MAX, _FLOAT32_MAX).tolist()
            self._camera_layout.pack_into(self._camera_bytes, 0, *saturated)
        self.device.queue.write_buffer(self.camera, 0, self._camera_bytes)

    def write_hover(self, pixel) -> None:
        """The frame pixel ``(x, y)`` whose instance the next frames highlight (None: nothing)."""
        words = np.full(4, NO_ID, np.uint32)
        if pixel is not None:
            words[:2] = pixel
        self.device.queue.write_buffer(self.hover_position, 0, words.tobytes())

    def encode(self, encoder, *, timestamps: bool = False) -> dict:
        """Record the graph (cull, compact, both views, hover pick); per-node CPU seconds."""
        return self.compiled.encode(encoder, timestamps=timestamps)

    def destroy(self) -> None:
        """Free the compiled graph and everything this object created (idempotent)."""
        if self.compiled is not None:
            self.compiled.destroy()
            self.compiled = None
        for obj in self._owned:
            obj.destroy()
        self._owned.clear()
        if self._own_spheres and not self.spheres.destroyed:
            self.spheres.destroy()
