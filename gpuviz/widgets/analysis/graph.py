"""The command graph behind :class:`~gpuviz.widgets.DataAnalysis`: one graph,
compiled once, for every view and every parameter.

Nodes, in the order the graph keeps them::

    interleave          x, y columns -> float32x2 positions (graph transient)
    grid-count/-sum/-min/-max   GPUGridBinning + 3 GPUGridAggregation over the positions
    grid-select         the current operation's grid (view.op; mean = sum / count)
    grid-extent         GPUReduction "extent" of that grid (heatmap normalization)
    histogram           GPUHistogram, max_bins bins, literal edges
    cdf                 GPUScan inclusive over the counts
    histogram-max       GPUReduction "max" of the counts (bar heights)
    groups-count/-mean  GPUGroupAggregation (with a group column)
    groups-extent       GPUReduction "extent" of the group means
    draw                render node into the plot texture (:mod:`.render`)

How parameters avoid recompiling:

* columns: the x / y / value roles are imported vectors whose chunk buffers
  are replaced per encoding (``encode(buffers=...)``, :meth:`overrides`);
  every uploaded float32 column of one table has the same chunk lengths and
  buffer sizes, so any column satisfies the compiled descriptors;
* bins and scale: ``GPUHistogram.set_edges`` on max_bins + 1 literal edges
  (see :func:`~gpuviz.widgets.analysis.data.histogram_edges`);
* operation, shown bins, group count: the ``view-params`` uniform;
* value range: ``set_filter_range`` on every aggregation;
* pan / zoom: ``set_bounds`` on the four grid aggregations
  (the last three through :meth:`DataAnalysisGraph.write_parameters`).

One pipeline per kernel serves every chunk: the interleave node reads each
chunk's row count and element offsets from a uniform table, one aligned slot
per chunk, rather than from per-chunk shader text or overrides.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...algorithms import GPUGridAggregation, GPUGridBinning, GPUGroupAggregation, GPUHistogram, GPUReduction, GPUScan
from ...formats import vector_format
from ...graph import ComputeKernel, GPUCommandGraph, GraphVectorView
from ...graph.shaders import wgsl
from ...tables import GPUData
from .render import add_render_node, panel_rects, view_params

__all__ = ["DataAnalysisGraph", "OPERATIONS", "PLOT_SIZE"]

#: Heatmap operations, in the order of ``View.op``.
OPERATIONS = ("count", "sum", "mean", "min", "max")
#: Largest frame the render node draws (bigger canvases are scaled up).
PLOT_SIZE = (2048, 2048)
BU = wgpu.BufferUsage
_WG = 256


class DataAnalysisGraph:
    """The compiled command graph of one DataAnalysis widget and the GPU
    resources it draws from: built and compiled once over an uploaded table.

    Parameters
    ----------
    device : wgpu.GPUDevice
    data : AnalysisData
    columns : dict
        Initial ``{"x": name, "y": name, "value": name}``; they become the
        import defaults, every encoding passes :meth:`overrides`.
    max_bins, grid_size : compiled sizes.
    edges : array of ``max_bins + 1`` float32
    bounds, value_range : initial parameters.

    Notes
    -----
    Owns the output buffers, the view uniform and the plot texture
    (:meth:`destroy`). Parameter changes are buffer writes
    (:meth:`write_parameters`, :meth:`write_view`), never a recompilation.
    Does not encode or submit: the widget does, with :attr:`compiled`.
    """

    def __init__(self, device, data, *, columns, max_bins, grid_size, edges, bounds, value_range):
        self.device = device
        self.data = data
        self.grid_size = tuple(grid_size)
        self.max_bins = max_bins
        self.render_size = (640, 400)
        self.bins = max_bins
        self.group_count = len(data.group_labels)
        self._override_cache = {}
        # What the parameter buffers hold now (write_parameters writes only what differs).
        self._written = {"value_range": tuple(value_range), "bounds": tuple(bounds),
                         "edges": np.array(edges, np.float32)}
        self.outputs, self.view_buffer, self.plot_texture, self.compiled = {}, None, None, None
        try:
            self._build(columns, edges, bounds, value_range)
        except BaseException:
            self.destroy()
            raise

    def _build(self, columns, edges, bounds, value_range) -> None:
        graph = GPUCommandGraph(self.device, id="data-analysis")
        roles, self._role_handles = {}, {}
        for role in ("x", "y", "value"):
            roles[role] = graph.import_gpu_vector(role, self.data.table.column(columns[role]))
            self._role_handles[role] = [view.handle.id for view in roles[role].views]
        views = self._outputs(graph)
        common = dict(filter_values=roles["value"], filter_range=value_range)
        self._add_heatmap(graph, roles, views, bounds, common)
        self.histogram = GPUHistogram(id="histogram", input=roles["value"], output=views["counts"], edges=edges,
                                      **common)
        self.histogram.add_to_graph(graph)
        GPUScan(id="cdf", input=views["counts"], output=views["cdf"], mode="inclusive").add_to_graph(graph)
        GPUReduction(id="histogram-max", input=views["counts"], output=views["hist_max"],
                     operation="max").add_to_graph(graph)
        self.groups = []
        if self.data.group is not None:
            codes = graph.import_gpu_vector("group-codes", self.data.table.column(self.data.codes_column))
            self.groups = [
                GPUGroupAggregation(id="groups-count", codes=codes, output=views["group_counts"], operation="count",
                                    **common),
                GPUGroupAggregation(id="groups-mean", codes=codes, values=roles["value"],
                                    output=views["group_means"], operation="mean", **common)]
            for group in self.groups:
                group.add_to_graph(graph)
            GPUReduction(id="groups-extent", input=views["group_means"], output=views["group_extent"],
                         operation="extent").add_to_graph(graph)

        limit = int(self.device.limits["max-texture-dimension-2d"])
        self.plot_size = (min(PLOT_SIZE[0], limit), min(PLOT_SIZE[1], limit))
        self.plot_texture = self.device.create_texture(
            label="data-analysis-plot", size=(*self.plot_size, 1), format="rgba8unorm",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING)
        plot = graph.import_texture(id="plot", size=(*self.plot_size, 1), format="rgba8unorm",
                                    usage=self.plot_texture.usage, texture=self.plot_texture)
        add_render_node(graph, plot=plot, views={k: v for k, v in views.items() if k != "group_counts"}, state=self)
        self.filtered = [*self.grids, self.histogram, *self.groups]
        self.compiled = graph.compile()

    # ------------------------------------------------------------- building
    def _outputs(self, graph) -> dict:
        """Widget-owned buffers that frames draw and :meth:`results` reads,
        plus the view uniform, imported into ``graph``."""
        cells = self.grid_size[0] * self.grid_size[1]
        sizes = {"display": ("float32", cells), "grid_extent": ("float32", 2), "counts": ("uint32", self.max_bins),
                 "cdf": ("uint32", self.max_bins), "hist_max": ("uint32", 1)}
        if self.data.group is not None:
            sizes.update(group_counts=("uint32", self.group_count), group_means=("float32", self.group_count),
                         group_extent=("float32", 2))
        for key, (fmt, length) in sizes.items():
            self.outputs[key] = GPUData.allocate(self.device, format=fmt, length=length, label=f"data-analysis-{key}")
        views = {k: graph.import_gpu_data(k.replace("_", "-"), d) for k, d in self.outputs.items()}
        self.view_buffer = self.device.create_buffer(label="data-analysis-view", size=80,
                                                     usage=BU.UNIFORM | BU.COPY_DST)
        views["view"] = graph.import_buffer(id="view-params", byte_length=80, usage=self.view_buffer.usage,
                                            buffer=self.view_buffer)
        return views

    def _add_heatmap(self, graph, roles, views, bounds, common) -> None:
        """Interleave, the four grid aggregations, grid-select and its extent."""
        positions = self._positions(graph, roles["x"].chunk_lengths)
        self._add_interleave(graph, roles["x"], roles["y"], positions)
        cells = self.grid_size[0] * self.grid_size[1]
        grids = {}
        for name, fmt in (("count", "uint32"), ("sum", "float32"), ("min", "float32"), ("max", "float32")):
            handle = graph.create_transient_buffer(id=f"grid-{name}-cells", byte_length=4 * cells, usage=BU.STORAGE)
            grids[name] = graph.create_data_view(handle, format=fmt, length=cells)
        self.grids = [GPUGridBinning(id="grid-count", positions=positions, output=grids["count"],
                                     grid_size=self.grid_size, bounds=bounds, **common)]
        self.grids += [GPUGridAggregation(id=f"grid-{op}", positions=positions, weights=roles["value"],
                                          output=grids[op], grid_size=self.grid_size, bounds=bounds, operation=op,
                                          **common) for op in ("sum", "min", "max")]
        for grid in self.grids:
            grid.add_to_graph(graph)
        self._add_select(graph, grids, views["display"], views["view"])
        GPUReduction(id="grid-extent", input=views["display"], output=views["grid_extent"],
                     operation="extent").add_to_graph(graph)

    def _positions(self, graph, lengths) -> GraphVectorView:
        """One transient holding every chunk's positions, each chunk's view on
        a storage-binding-aligned offset."""
        align = max(16, int(self.device.limits["min-storage-buffer-offset-alignment"]))
        offsets, total = [], 0
        for n in lengths:
            offsets.append(total)
            total += -(-max(8 * n, 8) // align) * align
        handle = graph.create_transient_buffer(id="positions", byte_length=total, usage=BU.STORAGE)
        views = tuple(graph.create_data_view(handle, format="float32x2", length=n, byte_offset=o)
                      for n, o in zip(lengths, offsets))
        return GraphVectorView("positions", views, vector_format("float32x2"))

    def _add_interleave(self, graph, xs, ys, positions) -> None:
        chunks = [k for k, view in enumerate(positions.views) if view.length]

        def compile_interleave(ctx):
            kernel = ComputeKernel(ctx.device, code=wgsl("widgets/analysis/shaders/interleave.wgsl"),
                                   label=ctx.node_id)
            slot = int(ctx.device.limits["min-uniform-buffer-offset-alignment"])
            table = np.zeros((max(len(chunks), 1), max(slot, 16) // 4), np.uint32)
            for row, k in enumerate(chunks):
                table[row, :4] = (positions.views[k].length,
                                  *(ComputeKernel.element_offset(v.views[k], ctx.device) for v in (xs, ys, positions)))
            uniform = ctx.own(ctx.device.create_buffer_with_data(label=ctx.node_id, data=table.tobytes(),
                                                                  usage=BU.UNIFORM))
            dispatches = [({0: (uniform, row * table.shape[1] * 4, 16), 1: xs.views[k], 2: ys.views[k],
                            3: positions.views[k]}, -(-positions.views[k].length // _WG))
                          for row, k in enumerate(chunks)]

            def encode(compute_pass, frame):
                for bindings, groups in dispatches:
                    kernel.dispatch(compute_pass, frame, bindings=bindings, workgroups=groups)
            return encode

        reads = [(v, "storage-read") for vector in (xs, ys) for v in vector.views]
        graph.add_compute_node(id="interleave", compile=compile_interleave,
                               resources=[*reads, (positions.views[0].handle, "storage-write")])

    def _add_select(self, graph, grids, display, view) -> None:
        cells = display.length
        order = ("count", "sum", "min", "max")

        def compile_select(ctx):
            kernel = ComputeKernel(ctx.device, code=wgsl("widgets/analysis/shaders/grid_select.wgsl"),
                                   constants={"CELLS": cells}, label=ctx.node_id)
            bindings = {0: view, **{i + 1: grids[name] for i, name in enumerate(order)}, 5: display}
            groups = -(-cells // _WG)
            return lambda compute_pass, frame: kernel.dispatch(compute_pass, frame, bindings=bindings,
                                                               workgroups=groups)

        graph.add_compute_node(id="grid-select", compile=compile_select, resources=[
            (view, "uniform"), *[(grids[name], "storage-read") for name in order], (display, "storage-write")])

    # ----------------------------------------------------------- parameters
    def overrides(self, columns: dict) -> dict:
        """``encode(buffers=...)`` for the chosen x / y / value columns: each
        role's chunk handles mapped to that column's chunk buffers."""
        key = (columns["x"], columns["y"], columns["value"])
        out = self._override_cache.get(key)
        if out is None:
            out = {}
            for role, name in columns.items():
                chunks = self.data.table.column(name).chunks
                out.update({handle_id: chunk.buffer for handle_id, chunk in zip(self._role_handles[role], chunks)})
            self._override_cache = {key: out}
        return out

    def write_view(self, *, operation: str) -> None:
        """Rewrite the view uniform for the next encoding (render size, shown
        bins and operation); the graph reads it in grid-select and draw."""
        hist = panel_rects(*self.render_size, bool(self.groups))["histogram"]
        data = view_params(grid_size=self.grid_size, op=OPERATIONS.index(operation), bins=self.bins,
                           groups=self.group_count, hist_rect=hist)
        self.device.queue.write_buffer(self.view_buffer, 0, data)

    def write_parameters(self, parameters) -> None:
        """Take the widget's :class:`~gpuviz.widgets.analysis.parameters.AnalysisParameters`
        for the next encodings: the value range into every filtered primitive,
        the bounds into the four grids, the padded edges into the histogram
        (each ``queue.write_buffer``, and only when it changed); the shown bin
        count is read when encoding."""
        written = self._written
        if parameters.value_range != written["value_range"]:
            for primitive in self.filtered:
                primitive.set_filter_range(parameters.value_range)
            written["value_range"] = parameters.value_range
        if parameters.bounds != written["bounds"]:
            for grid in self.grids:
                grid.set_bounds(parameters.bounds)
            written["bounds"] = parameters.bounds
        if not np.array_equal(parameters.padded_edges, written["edges"]):
            self.histogram.set_edges(parameters.padded_edges)
            written["edges"] = parameters.padded_edges
        self.bins = parameters.bins

    @property
    def group_overflow_buffer(self):
        return self.groups[0].overflow_buffer if self.groups else None

    def destroy(self) -> None:
        """Free the compiled graph, the outputs, the uniform and the plot texture."""
        for obj in (self.compiled, *self.outputs.values(), self.view_buffer, self.plot_texture):
            if obj is not None:
                obj.destroy()
