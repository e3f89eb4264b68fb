"""The command graph behind :class:`~gpuviz.widgets.DataAnalysis`: one graph,
compiled once, for every view and every parameter.

Nodes, in the order the graph keeps them::

    interleave          GPUInterleave: x, y columns -> float32x2 positions (graph transient)
    group-filter        GPUGroupFilter, with a group column: the value column, NaN where the
                        row's group is disabled (what every aggregation below reads)
    grid-count/-sum/-min/-max   GPUGridBinning + 3 GPUGridAggregation over the positions
    grid-select         GPUGridStatistic: the displayed grid of the current operation
                        (mean = sum / count; integer axes resampled, see
                        AnalysisParameters.grid_cells) and its row counts
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
* operation, shown bins, group count: the ``view-params`` uniform (and
  ``GPUGridStatistic.set_operation``);
* value range: ``set_filter_range`` on every aggregation;
* pan / zoom: ``set_bounds`` on the four grid aggregations and
  ``GPUGridStatistic.set_sampling`` (display -> binned cell sampling of
  integer axes);
* group selection: the ``group-enabled`` table (one word per group) that the
  ``group-filter`` node turns into the filtered values every aggregation reads
  (the last four through :meth:`DataAnalysisGraph.write_parameters`).

Every node is a library primitive; this module only wires them. The
imported ``group-codes`` column is the same whether the host coded a group
column or the GPU joined it from a dimension table (``lookup=``: a graph of
its own in :mod:`.lookup`, run once at construction, since the join depends
on the data alone).
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...algorithms import (GPUGridAggregation, GPUGridBinning, GPUGridStatistic, GPUGroupAggregation, GPUGroupFilter,
                           GPUHistogram, GPUReduction, GPUScan)
from ...formats import vector_format
from ...graph import GPUCommandGraph, GraphVectorView
from ...tables import GPUData, GPUInterleave
from .render import add_render_node, panel_rects, view_params

__all__ = ["DataAnalysisGraph", "OPERATIONS", "PLOT_SIZE"]

#: Heatmap operations, in the order of ``View.op``.
OPERATIONS = ("count", "sum", "mean", "min", "max")
#: Largest frame the render node draws (bigger canvases are scaled up).
PLOT_SIZE = (2048, 2048)
BU = wgpu.BufferUsage


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
        self.pixel_ratio = 1.0  # of the last write_view
        self._view_written = None  # the View uniform's bytes as last written
        self.bins = max_bins
        self.group_count = len(data.group_labels)
        self._override_cache = {}
        # What the parameter buffers hold now (write_parameters writes only what differs).
        self._written = {"value_range": tuple(value_range), "bounds": tuple(bounds),
                         "edges": np.array(edges, np.float32), "cells": None, "groups": None}
        self.outputs, self.view_buffer, self.plot_texture, self.compiled = {}, None, None, None
        self.enabled_buffer = None
        self.binning = {"x": "linear", "y": "linear"}  # per axis, from AnalysisParameters.grid_cells
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
        values, codes = roles["value"], None
        if self.data.group is not None:  # every aggregation reads the values the group selection left
            codes = graph.import_gpu_vector("group-codes", self.data.table.column(self.data.codes_column))
            values = self._add_group_filter(graph, roles["value"], codes)
        common = dict(filter_values=values, filter_range=value_range)
        self._add_heatmap(graph, roles, values, views, bounds, common)
        self.histogram = GPUHistogram(id="histogram", input=values, output=views["counts"], edges=edges, **common)
        self.histogram.add_to_graph(graph)
        GPUScan(id="cdf", input=views["counts"], output=views["cdf"], mode="inclusive").add_to_graph(graph)
        GPUReduction(id="histogram-max", input=views["counts"], output=views["hist_max"],
                     operation="max").add_to_graph(graph)
        self.groups = []
        if codes is not None:
            self.groups = [
                GPUGroupAggregation(id="groups-count", codes=codes, output=views["group_counts"], operation="count",
                                    **common),
                GPUGroupAggregation(id="groups-mean", codes=codes, values=values,
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
        drawn = {k: v for k, v in views.items() if k not in ("group_counts", "grid_counts", "enabled")}
        add_render_node(graph, plot=plot, views=drawn, state=self)
        self.filtered = [*self.grids, self.histogram, *self.groups]
        self.compiled = graph.compile()

    # ------------------------------------------------------------- building
    def _outputs(self, graph) -> dict:
        """Widget-owned buffers that frames draw and :meth:`results` reads,
        plus the view uniform, imported into ``graph``."""
        cells = self.grid_size[0] * self.grid_size[1]
        sizes = {"display": ("float32", cells), "grid_counts": ("uint32", cells), "grid_extent": ("float32", 2),
                 "counts": ("uint32", self.max_bins),
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

    def _add_heatmap(self, graph, roles, values, views, bounds, common) -> None:
        """Interleave, the four grid aggregations, grid-select and its extent."""
        positions = self._positions(graph, roles["x"].chunk_lengths)
        GPUInterleave(id="interleave", x=roles["x"], y=roles["y"], output=positions).add_to_graph(graph)
        cells = self.grid_size[0] * self.grid_size[1]
        grids = {}
        for name, fmt in (("count", "uint32"), ("sum", "float32"), ("min", "float32"), ("max", "float32")):
            handle = graph.create_transient_buffer(id=f"grid-{name}-cells", byte_length=4 * cells, usage=BU.STORAGE)
            grids[name] = graph.create_data_view(handle, format=fmt, length=cells)
        self.grids = [GPUGridBinning(id="grid-count", positions=positions, output=grids["count"],
                                     grid_size=self.grid_size, bounds=bounds, **common)]
        self.grids += [GPUGridAggregation(id=f"grid-{op}", positions=positions, weights=values,
                                          output=grids[op], grid_size=self.grid_size, bounds=bounds, operation=op,
                                          **common) for op in ("sum", "min", "max")]
        for grid in self.grids:
            grid.add_to_graph(graph)
        self.statistic = GPUGridStatistic(id="grid-select", counts=grids["count"], sums=grids["sum"],
                                          mins=grids["min"], maxs=grids["max"], output=views["display"],
                                          output_counts=views["grid_counts"], grid_size=self.grid_size)
        self.statistic.add_to_graph(graph)
        GPUReduction(id="grid-extent", input=views["display"], output=views["grid_extent"],
                     operation="extent").add_to_graph(graph)

    def _positions(self, graph, lengths) -> GraphVectorView:
        """One transient holding every chunk's positions."""
        return self._row_vector(graph, "positions", lengths, "float32x2")

    def _row_vector(self, graph, name, lengths, fmt) -> GraphVectorView:
        """One transient holding a ``fmt`` row per table row, each chunk's
        view on a storage-binding-aligned offset."""
        align = max(16, int(self.device.limits["min-storage-buffer-offset-alignment"]))
        size = vector_format(fmt).byte_size
        offsets, total = [], 0
        for n in lengths:
            offsets.append(total)
            total += -(-max(size * n, size) // align) * align
        handle = graph.create_transient_buffer(id=name, byte_length=total, usage=BU.STORAGE)
        views = tuple(graph.create_data_view(handle, format=fmt, length=n, byte_offset=o)
                      for n, o in zip(lengths, offsets))
        return GraphVectorView(name, views, vector_format(fmt))

    def _add_group_filter(self, graph, values, codes) -> GraphVectorView:
        """The ``group-enabled`` table (imported, one word per group plus the
        null code's, always 1) and the ``group-filter`` node (GPUGroupFilter):
        a transient copy of the value column with NaN for rows of disabled
        groups, which every aggregation reads as its values and filter values
        (one pass of 12 bytes a row instead of a per-row mask read by seven
        primitives)."""
        count = self.group_count
        self.enabled_buffer = self.device.create_buffer_with_data(
            label="data-analysis-group-enabled", data=np.ones(count + 1, np.uint32).tobytes(),
            usage=BU.STORAGE | BU.COPY_DST)
        enabled = graph.import_buffer(id="group-enabled", byte_length=4 * (count + 1), usage=self.enabled_buffer.usage,
                                      buffer=self.enabled_buffer)
        out = self._row_vector(graph, "group-filtered-values", codes.chunk_lengths, "float32")
        table = graph.create_data_view(enabled, format="uint32", length=count + 1)
        GPUGroupFilter(id="group-filter", values=values, codes=codes, enabled=table, output=out).add_to_graph(graph)
        return out

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

    def write_view(self, *, operation: str, pixel_ratio: float = 1.0) -> None:
        """Rewrite the view uniform for the next encoding (render size, pixel
        ratio, shown bins and operation); the render node reads it, and the
        operation also goes to grid-select (GPUGridStatistic). Sizes the
        shader gives in pixels (the CDF line's width) are logical pixels:
        ``pixel_ratio`` physical pixels each, on the histogram plot the
        render node draws at that ratio."""
        self.pixel_ratio = float(pixel_ratio)
        hist = panel_rects(*self.render_size, bool(self.groups), pixel_ratio=self.pixel_ratio)["histogram"]
        data = view_params(grid_size=self.grid_size, op=OPERATIONS.index(operation), bins=self.bins,
                           groups=self.group_count, hist_rect=hist, pixel_ratio=self.pixel_ratio)
        if data != self._view_written:  # a pan frame changes none of it
            self.device.queue.write_buffer(self.view_buffer, 0, data)
            self._view_written = data
            if operation != self.statistic.operation:
                self.statistic.set_operation(operation)

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
        cells = parameters.grid_cells(self.grid_size)
        self.binning = cells["binning"]
        if cells["bounds"] != written["bounds"]:
            for grid in self.grids:
                grid.set_bounds(cells["bounds"])
            written["bounds"] = cells["bounds"]
        sampling = np.float32([*cells["offset"], *cells["scale"]])
        if written["cells"] is None or not np.array_equal(sampling, written["cells"]):
            self.statistic.set_sampling(offset=cells["offset"], scale=cells["scale"])
            written["cells"] = sampling
        enabled = np.append(np.asarray(parameters.group_enabled, np.uint32), np.uint32(1))
        if self.enabled_buffer is not None and (written["groups"] is None
                                                or not np.array_equal(enabled, written["groups"])):
            self.device.queue.write_buffer(self.enabled_buffer, 0, enabled.tobytes())
            written["groups"] = enabled
        if not np.array_equal(parameters.padded_edges, written["edges"]):
            self.histogram.set_edges(parameters.padded_edges)
            written["edges"] = parameters.padded_edges
        self.bins = parameters.bins

    @property
    def group_overflow_buffer(self):
        return self.groups[0].overflow_buffer if self.groups else None

    def destroy(self) -> None:
        """Free the compiled graph, the outputs, the uniform and the plot texture."""
        for obj in (self.compiled, *self.outputs.values(), self.view_buffer, self.enabled_buffer, self.plot_texture):
            if obj is not None:
                obj.destroy()
