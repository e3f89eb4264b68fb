"""The ``tracks`` compute node and the ``links`` render node of a
:class:`~gpuviz.widgets.trace.graph.TraceGraph`.

Why compute: a data-centre GPU (the H200's GH100) runs vertex and pixel
shaders on a few of its processor clusters only, so instanced rects and
full-screen passes are slow there, while the same pixels written by compute
cost bandwidth only. ``tracks`` dispatches the
four entry points of shaders/tracks.wgsl in one pass (clear, scatter,
spread_runs, resolve): the visible spans and the merged and density runs
mark the (layout row, pixel column) cells they cover, then one invocation
per pixel turns its cell into colour (the frame texture) and a span ID
(the picking target's objects texture); the cells are a packed target of
the render layer's compute rasterisation (:mod:`gpuviz.render.raster`).
``links`` blends the selection's link segments over that (a few hundred
quads at most).

Nothing here allocates buffers or textures: the TraceGraph owns them and
these nodes bind them once, at compile time.
"""

from __future__ import annotations

from ...algorithms.dispatch import ceil_div
from ...graph.compat import device_cache
from ...graph.shaders import compute_pipeline, shader_module, wgsl
from ...trace.interaction import DENSITY, MERGED, SPANS, STATS
from ..canvas import TEXTURE_FORMAT

__all__ = ["add_tracks_node", "add_links_node", "spread_capacity", "SHORT_RUN", "RECORD_BINDINGS"]

#: Columns a scatter invocation marks itself; longer runs go to the spread list.
SHORT_RUN = 32
#: Bindings each entry point of tracks.wgsl uses (its layout is derived from the shader).
_ENTRY_BINDINGS = {
    "clear": (11, 15, 16, 20, 21),
    "scatter": (0, 1, 12, 13, 14, 2, 5, 6, 7, 11, 15, 16, 21),
    "spread_runs": (15, 16),
    "resolve": (0, 1, 12, 13, 14, 3, 4, 5, 6, 7, 8, 9, 10, 19, 17, 18),  # 19: the cells, read-only
}
#: Binding numbers of the scene's record chunks (records.wgsl).
RECORD_BINDINGS = (1, 12, 13, 14)
_MAX_GROUPS = 1024  # scatter / spread workgroups at most (grid-stride loops past them)
_CLEAR_GROUPS = 128


def spread_capacity(rows: int, cols: int) -> int:
    """Runs the spread list holds: twice the runs over :data:`SHORT_RUN` columns
    that fit disjointly in ``rows`` x ``cols`` cells (spans and merged runs
    share a row); past it a run is marked by its scatter invocation alone."""
    return 2 * rows * ceil_div(cols, SHORT_RUN)


def add_tracks_node(tgraph, graph, *, resources, background) -> str:
    """Add the ``tracks`` compute node of ``tgraph`` (a TraceGraph) to
    ``graph``; ``resources`` are its declared uses (the graph orders the
    nodes by them), ``background`` the rgb of empty pixels."""
    f = tgraph.frame
    dcb = f.draw_commands
    rows, cols = tgraph.cell_rows, tgraph.frame_size[0]
    constants = {"ROWS": rows, "COLS": cols, "SPREAD_CAPACITY": spread_capacity(rows, cols),
                 "SPANS_WORD": dcb.instance_count_byte_offset(SPANS) // 4,
                 "MERGED_WORD": dcb.instance_count_byte_offset(MERGED) // 4,
                 "DENSITY_WORD": dcb.instance_count_byte_offset(DENSITY) // 4,
                 "DENSITY_MAX_WORD": STATS["density_max"], "MAX_GROUPS": _MAX_GROUPS,
                 "SHORT_RUN": SHORT_RUN}

    def compile_tracks(ctx):
        device = ctx.device
        code = wgsl("widgets/trace/shaders/tracks.wgsl", background=[repr(float(c)) for c in background],
                    chunk_rows=tgraph.scene.chunk_rows, records_bindings=RECORD_BINDINGS)
        chunks = tgraph.record_bindings()
        buffers = {0: tgraph.view, 1: chunks[0], 12: chunks[1], 13: chunks[2], 14: chunks[3],
                   2: f.thread_rows, 3: tgraph.name_colours, 4: tgraph.selection, 5: f.visible_rows, 6: f.merged,
                   7: f.density, 8: f.stats, 9: f.focus_mask, 10: f.search_mask, 11: dcb.buffer,
                   15: tgraph.cells, 16: tgraph.spread, 19: tgraph.cells, 20: tgraph.scatter_args,
                   21: tgraph.spread_args}
        textures = {17: tgraph.color.create_view(), 18: tgraph.picking.object_texture.create_view()}
        steps = []
        for entry, bindings in _ENTRY_BINDINGS.items():
            pipeline = compute_pipeline(device, code, entry_point=entry, constants=constants,
                                        label=f"{ctx.node_id}-{entry}")
            entries = [{"binding": b, "resource": textures[b] if b in textures else
                        {"buffer": buffers[b], "offset": 0, "size": buffers[b].size}} for b in bindings]
            group = device.create_bind_group(label=f"{ctx.node_id}-{entry}",
                                             layout=pipeline.get_bind_group_layout(0), entries=entries)
            steps.append((entry, pipeline, group))

        args = {"scatter": tgraph.scatter_args, "spread_runs": tgraph.spread_args}

        def encode(compute_pass, frame):
            w, h = tgraph.render_size
            for entry, pipeline, group in steps:
                compute_pass.set_pipeline(pipeline)
                compute_pass.set_bind_group(0, group)
                if entry == "clear":
                    compute_pass.dispatch_workgroups(_CLEAR_GROUPS)
                elif entry == "resolve":
                    compute_pass.dispatch_workgroups(ceil_div(w, 16), ceil_div(h, 16))
                else:  # the workgroups the GPU wrote for this frame's records / spread runs
                    compute_pass.dispatch_workgroups_indirect(args[entry], 0)
        return encode

    return graph.add_compute_node(id="tracks", resources=resources, compile=compile_tracks)


def _links_pipeline(device):
    cache = device_cache(device, "trace-viewer-links")
    if "pipeline" not in cache:
        module = shader_module(device, wgsl("widgets/trace/shaders/links.wgsl"), label="trace-viewer-links")
        blend = {"color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
                 "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}
        cache["pipeline"] = device.create_render_pipeline(
            label="trace-viewer-links", layout="auto",
            vertex={"module": module, "entry_point": "vs_link", "buffers": []},
            primitive={"topology": "triangle-list"},
            fragment={"module": module, "entry_point": "fs_link",
                      "targets": [{"format": TEXTURE_FORMAT, "blend": blend}]})
    return cache["pipeline"]


def add_links_node(tgraph, graph, *, frame_texture, resources) -> str:
    """Add the ``links`` render node: the selection's link segments (our own
    indirect draw record, instance count = segments) blended over the
    frame texture's render-size corner, recorded once in a render bundle."""

    def compile_links(ctx):
        device = ctx.device
        pipeline = _links_pipeline(device)
        group = device.create_bind_group(label="trace-viewer-links", layout=pipeline.get_bind_group_layout(0),
                                         entries=[{"binding": k, "resource": {"buffer": b, "offset": 0,
                                                                               "size": b.size}}
                                                  for k, b in enumerate((tgraph.view, tgraph.segments))])
        encoder = device.create_render_bundle_encoder(label="trace-viewer-links", color_formats=[TEXTURE_FORMAT])
        encoder.set_pipeline(pipeline)
        encoder.set_bind_group(0, group)
        tgraph.draws.draw(encoder, 0)
        bundle = encoder.finish()

        def encode(render_pass, frame):
            w, h = tgraph.render_size
            render_pass.set_viewport(0, 0, w, h, 0.0, 1.0)
            render_pass.set_scissor_rect(0, 0, w, h)
            render_pass.execute_bundles([bundle])
        return encode

    return graph.add_render_node(id="links", resources=resources, compile=compile_links, color_attachments=[
        {"view": frame_texture, "load_op": "load", "store_op": "store"}])
