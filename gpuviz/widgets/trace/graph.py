"""The command graph behind :class:`~gpuviz.widgets.trace.TraceViewer`:
compiled once per capacity tier, for every view.

Nodes::

    trace-view-*  GPUTraceInteraction (gpuviz.trace.interaction): layout, focus
                  over links, the trace predicate (64-bit window, expansion,
                  rows, categories, duration, search, focus), compaction of
                  the drawn rows with its count written into the SPANS draw
                  record, sub-pixel merging (MERGED) and collapsed-process
                  density (DENSITY) records
    tracks        compute node (:mod:`.tracks`, shaders/tracks.wgsl): the
                  visible spans and the merged and density runs mark the
                  (layout row, pixel column) cells they cover, then one
                  invocation per pixel of the render-size corner writes its
                  colour into the frame texture and its span ID (NO_ID for
                  the background, merged and density pixels) into a
                  GPUIndexPickingTarget: row gaps, density bar heights,
                  search and focus dimming, hover and the selection ring.
                  No rasterisation: a data-centre GPU runs pixel shaders on
                  a small part of its die.
    pick          GPUIndexPickingTarget pixel pass: the span ID under a pixel
                  (the pointer's, each frame, or :meth:`TraceGraph.pick`'s).
    labels        the drawn spans wide enough for a label, from the frame's
                  compacted visible set (:mod:`.sampler`).
    links         render node, last (so tracks, pick and labels share one
                  compute pass): the selection's link segments blended over
                  the frame texture (our own indirect draw record).

After the graph, :meth:`TraceGraph.sample` copies the stats, the pick
output and the labels into a readback ring slot (:class:`.sampler.ViewSampler`),
read back without waiting a frame or two later.

A view change is :meth:`GPUTraceInteraction.write` (a few parameter buffers) and
our 80-byte ``view`` uniform; the selection a bit set; links the
``segments``: buffer writes only, never a recompilation. The textures have
a fixed maximum size (:data:`FRAME_SIZE`); a frame writes their top-left
corner (``render_size``) only.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ...graph import GPUCommandGraph
from ...errors import GraphValidationError
from ...render.draw_commands import DrawCommandBuffer
from ...render.picking import NO_ID, GPUIndexPickingTarget
from ...trace.interaction import SPANS, GPUTraceInteraction
from ..canvas import TEXTURE_FORMAT
from .sampler import ViewSampler, add_label_node, label_bytes
from .tracks import RECORD_BINDINGS, add_links_node, add_tracks_node, spread_capacity

__all__ = ["TraceGraph", "FRAME_SIZE", "BACKGROUND", "MAX_SEGMENTS", "VIEW_FLAGS", "bench_frame"]

BU, TU = wgpu.BufferUsage, wgpu.TextureUsage
FRAME_SIZE = (2048, 1536)
BACKGROUND = (0.075, 0.08, 0.095)
MAX_SEGMENTS = 512
VIEW_BYTES = 80
VIEW_FLAGS = {"search": 2, "focus": 8}
LINKS_RECORD = 0
ROW_CAPACITY = 128
LABEL_PX = 28.0  # the bench rig's label width (chrome.MIN_LABEL_PX at scale 1)
MAX_RECORD_CHUNKS = len(RECORD_BINDINGS)  # records.wgsl binds up to 4 record chunks


def _words(bits: int) -> int:
    return max(1, -(-bits // 32))


def pack_bits(flags) -> np.ndarray:
    """bool array -> uint32 words, bit ``i % 32`` of word ``i // 32``."""
    flags = np.asarray(flags, bool)
    padded = np.zeros(_words(len(flags)) * 32, bool)
    padded[:len(flags)] = flags
    return np.packbits(padded, bitorder="little").view("<u4").astype(np.uint32)


class TraceGraph:
    """The compiled tracks graph of one scene and the buffers it reads.

    Parameters
    ----------
    device : wgpu.GPUDevice
    scene : GPUTraceScene
        Borrowed: never destroyed here.
    name_colours : numpy uint32
        rgba8 per scene name ID.
    trace : Trace, optional
        The trace of the scene (default and checked: ``scene.index.trace``).
    capacity : int
        Span capacity of the tier (>= the scene's span count).
    edges : bool
        Let the frame resolve every link's ends each frame (GPUTraceInteraction
        ``edges=True``; the widget draws only the selection's links and
        passes False).

    Attributes
    ----------
    color : wgpu.GPUTexture
        The frame texture (rgba8unorm, :data:`FRAME_SIZE` at most; the
        tracks write its ``render_size`` corner).
    picking : GPUIndexPickingTarget
        Span IDs of the same pixels (NO_ID: background, merged, density).
    cells, spread, scatter_args, spread_args : wgpu.GPUBuffer
        The tracks' scratch: one word per (layout row from the first shown
        one, pixel column), the list of runs too long for one invocation,
        and the indirect workgroup counts of the scatter and spread passes.
    view_fields : dict
        The arguments of the last :meth:`write_view` (the tracks oracle's view).
    colours : numpy uint32
        Host copy of ``name_colours``.

    Notes
    -----
    Never submits except in :meth:`pick` (an explicit readback). Per-frame
    writes are ``queue.write_buffer`` calls of a few bytes; the graph does
    not read anything back on the frame path.
    """

    def __init__(self, device, scene, trace=None, *, name_colours, capacity: int, edges: bool = False):
        self.device, self.scene = device, scene
        self.n = scene.span_count
        if len(scene.record_chunks) > MAX_RECORD_CHUNKS:
            raise GraphValidationError(
                f'TraceGraph "{scene.label}" draws from at most {MAX_RECORD_CHUNKS} record chunks; the scene has '
                f"{len(scene.record_chunks)} of {scene.chunk_rows} records ({self.n} spans): build it with a larger "
                "max_chunk_bytes")
        self.capacity = max(int(capacity), self.n)
        self.span_words = _words(self.capacity)
        self.render_size = (960, 480)
        self._owned = []
        self.compiled = None
        self.frame = None
        self.sampler = None
        try:
            limit = int(device.limits["max-texture-dimension-2d"])
            self.frame_size = (min(FRAME_SIZE[0], limit), min(FRAME_SIZE[1], limit))
            self.frame = GPUTraceInteraction(scene=scene, trace=trace, capacity=max(self.capacity, 1),
                                       width_capacity=self.frame_size[0], row_capacity=ROW_CAPACITY,
                                       edges=edges, id="trace-view")  # the widget draws the selection's links only
            self.colours = np.asarray(name_colours, np.uint32)  # host copy (the tracks oracle)
            self._allocate(self.colours)
            self._build()
        except BaseException:
            self.destroy()
            raise

    def _buffer(self, label, size, usage, data=None):
        size = max(16, -(-int(size) // 16) * 16)
        buffer = self.device.create_buffer(label=f"trace-viewer-{label}", size=size, usage=usage)
        if data is not None and len(data):
            self.device.queue.write_buffer(buffer, 0, np.ascontiguousarray(data).tobytes())
        self._owned.append(buffer)
        return buffer

    def _allocate(self, colours) -> None:
        device = self.device
        rw = BU.STORAGE | BU.COPY_DST | BU.COPY_SRC
        self.view = self._buffer("view", VIEW_BYTES, BU.UNIFORM | BU.COPY_DST)
        self.name_colours = self._buffer("name-colours", 4 * max(len(colours), 1), rw, colours)
        self.selection = self._buffer("selection", 4 * self.span_words, rw, np.zeros(self.span_words, np.uint32))
        self.segments = self._buffer("segments", 32 * MAX_SEGMENTS, rw)
        self.pick_position = self._buffer("pick-position", 16, rw, np.full(4, NO_ID, np.uint32))
        self.pick_output = self._buffer("pick-output", 16, rw, np.full(4, NO_ID, np.uint32))
        self.labels = self._buffer("labels", label_bytes(), rw, np.zeros(4, np.uint32))
        self._pointer_written = None
        self._selection_words = np.zeros(self.span_words, np.uint32)  # what the selection buffer holds
        self.selected_ids = np.zeros(0, np.int64)
        self.draws = DrawCommandBuffer(device, type="draw", capacity=1, label="trace-viewer-links")
        self._owned.append(self.draws)
        self.draws.write(LINKS_RECORD, vertex_count=6, instance_count=0)
        size = (*self.frame_size, 1)
        usage = TU.STORAGE_BINDING | TU.RENDER_ATTACHMENT | TU.TEXTURE_BINDING | TU.COPY_SRC
        self.color = device.create_texture(label="trace-viewer-frame", size=size, format=TEXTURE_FORMAT, usage=usage)
        self._owned.append(self.color)
        self.picking = GPUIndexPickingTarget(device, size=self.frame_size, label="trace-viewer-picking", storage=True)
        self._owned.append(self.picking)
        # the tracks' cells: one word per (layout row from the first shown one, pixel column)
        self.cell_rows = self.frame.row_capacity
        self.cells = self._buffer("cells", 4 * self.cell_rows * self.frame_size[0], BU.STORAGE)
        self.spread = self._buffer("spread", 16 + 16 * spread_capacity(self.cell_rows, self.frame_size[0]),
                                   BU.STORAGE)
        # the indirect workgroup counts of the scatter and spread passes (one buffer each: a dispatch
        # may not read its own arguments' buffer as writable storage)
        self.scatter_args = self._buffer("scatter-args", 16, BU.STORAGE | BU.INDIRECT)
        self.spread_args = self._buffer("spread-args", 16, BU.STORAGE | BU.INDIRECT)

    def _import(self, graph, id, buffer, fmt="uint32", length=None):  # noqa: D401
        handle = graph.import_buffer(id=id, byte_length=buffer.size, usage=buffer.usage, buffer=buffer)
        return handle, graph.create_data_view(handle, format=fmt, length=length or buffer.size // 4)

    def _build(self) -> None:
        graph = GPUCommandGraph(self.device, id="trace-viewer")
        scene_views = self.scene.import_to_graph(graph, id="trace")
        self.frame.add_to_graph(graph, scene_views=scene_views)
        fv = self.frame.views
        view, _ = self._import(graph, "view", self.view)
        records = tuple(scene_views["records-chunks"])
        reads = [(view, "uniform"), *[(r, "storage-read") for r in records]]
        for name in ("name_colours", "selection"):
            handle, _ = self._import(graph, name.replace("_", "-"), getattr(self, name))
            reads.append((handle, "storage-read"))
        reads += [(fv[name], "storage-read") for name in
                  ("thread_rows", "visible_rows", "merged", "density", "stats", "focus_mask", "search_mask")]
        reads.append((fv["draw_commands"].handle, "storage-read"))
        scratch = [(self._import(graph, name.replace("_", "-"), getattr(self, name))[0], "storage-read-write")
                   for name in ("cells", "spread", "scatter_args", "spread_args")]
        frame = graph.import_texture(id="frame", size=(*self.frame_size, 1), format=TEXTURE_FORMAT,
                                     usage=self.color.usage, texture=self.color)
        objects = self.picking.import_into(graph).objects
        add_tracks_node(self, graph, background=BACKGROUND, resources=[
            *reads, *scratch, (frame, "storage-texture-write"), (objects, "storage-texture-write")])
        _, position = self._import(graph, "pick-position", self.pick_position, length=2)
        _, output = self._import(graph, "pick-output", self.pick_output, length=2)
        self.picking.add_pixel_pass(graph, id="pick", position=position, output=output)
        labels = graph.import_buffer(id="labels", byte_length=self.labels.size, usage=self.labels.usage,
                                     buffer=self.labels)
        if self.n:  # an empty scene has no records to bind; its label count stays 0
            add_label_node(graph, id="labels", view=view, records=records, chunk_rows=self.scene.chunk_rows,
                           frame_views=fv,
                           labels=labels,
                           spans_count_word=self.frame.draw_commands.instance_count_byte_offset(SPANS) // 4)
        # last: pick and labels share the tracks' compute pass (links write no IDs)
        segments, _ = self._import(graph, "segments", self.segments)
        links = graph.import_buffer(id="links-draw", byte_length=self.draws.byte_length,
                                    usage=self.draws.buffer.usage, buffer=self.draws.buffer)
        add_links_node(self, graph, frame_texture=frame, resources=[
            (view, "uniform"), (segments, "storage-read"), (links, "indirect")])
        self.compiled = graph.compile()
        self.sampler = ViewSampler(self.device, stats=self.frame.stats, pick_output=self.pick_output,
                                   labels=self.labels)

    def record_bindings(self) -> list:
        """The scene's record chunk buffers for the tracks' 4 record bindings
        (an empty scene: one never-read record; unused bindings repeat the first)."""
        chunks = [buffer for _, _, buffer in self.scene.record_chunks]
        if chunks[0].size < 48:
            chunks = [self._buffer("no-records", 48, BU.STORAGE)]
        return chunks + [chunks[0]] * (MAX_RECORD_CHUNKS - len(chunks))

    # ------------------------------------------------------------ writes
    def write_view(self, *, origin_rel: int, end_rel: int, min_duration: int, render_size, px_per_ns: float,
                   gutter: float, top: float, row_height: float, first_row: int, flags: int, hover, scale: float,
                   bottom: float, column_px: float, label_px: float = 1e30):
        """The ``View`` uniform (times relative to the scene's origin, physical
        pixels); the arguments are kept in :attr:`view_fields`."""
        self.view_fields = dict(origin_rel=origin_rel, end_rel=end_rel, min_duration=min_duration,
                                render_size=tuple(render_size), px_per_ns=px_per_ns, gutter=gutter, top=top,
                                row_height=row_height, first_row=first_row, flags=flags, hover=hover, scale=scale,
                                bottom=bottom, column_px=column_px, label_px=label_px)
        words = np.zeros(20, np.uint32)
        mask = (1 << 64) - 1
        for k, value in enumerate((origin_rel, end_rel, min(max(min_duration, 0), mask))):
            v = int(value) & mask
            words[2 * k], words[2 * k + 1] = v & 0xFFFFFFFF, v >> 32
        floats = words.view(np.float32)
        floats[6], floats[7] = render_size
        floats[8], floats[9], floats[10], floats[11] = px_per_ns, gutter, top, row_height
        words[12], words[13] = first_row, flags
        words[14] = NO_ID if hover is None else int(hover)
        floats[15], floats[16], floats[17], floats[18] = scale, bottom, column_px, label_px
        self.device.queue.write_buffer(self.view, 0, words.tobytes())

    def write_selection(self, span_ids) -> None:
        """The selection's bits by span ID: only the words that change are
        written (one write per run of changed words; a selection change, not
        a pass over every span)."""
        ids = np.asarray(span_ids, np.int64).ravel()
        old = np.asarray(self.selected_ids, np.int64).ravel()
        self.selected_ids = span_ids  # the caller's object: an identity check tells it changed
        touched = np.unique(np.concatenate([old >> 5, ids >> 5]))
        if not len(touched):
            return
        words = self._selection_words
        words[touched] = 0
        np.bitwise_or.at(words, ids >> 5, (np.uint32(1) << (ids & 31).astype(np.uint32)))
        breaks = np.flatnonzero(np.diff(touched) > 1)
        runs = zip(np.r_[touched[0], touched[breaks + 1]], np.r_[touched[breaks], touched[-1]])
        if len(breaks) > 64:  # many scattered words: one write over their whole range
            runs = [(touched[0], touched[-1])]
        for a, b in runs:
            self.device.queue.write_buffer(self.selection, 4 * int(a), words[a:b + 1].tobytes())

    def write_pointer(self, pixel) -> None:
        """The frame pixel the picking pass reads each frame (the pointer's; None: none)."""
        pixel = (NO_ID, NO_ID) if pixel is None else (int(pixel[0]), int(pixel[1]))
        if pixel != self._pointer_written:
            self.device.queue.write_buffer(self.pick_position, 0, np.array([*pixel, NO_ID, NO_ID], np.uint32))
            self._pointer_written = pixel

    def sample(self, encoder, key) -> bool:
        """After :meth:`encode`: copy this frame's stats, pick output and labels
        into the readback ring (once per ``key``); never waits."""
        return self.sampler.record(encoder, key)

    def write_segments(self, segments) -> None:
        """Link segments: float32 (k, 8) rows ``(x0, y0, x1, y1, r, g, b, a)`` in logical pixels."""
        segments = np.asarray(segments, np.float32).reshape(-1, 8)[:MAX_SEGMENTS]
        if len(segments):
            self.device.queue.write_buffer(self.segments, 0, segments.tobytes())
        self.draws.write(LINKS_RECORD, vertex_count=6, instance_count=len(segments))

    def encode(self, encoder, *, timestamps: bool = False) -> dict:
        """Record the frame's due change graphs (focus, minimap) and the
        compiled graph into ``encoder``; never submits."""
        self.frame.encode_changes(encoder)
        return self.compiled.encode(encoder, timestamps=timestamps)

    def pick(self, pixel):
        """The span ID at frame pixel ``(x, y)`` or None: writes the pixel,
        encodes the graph, submits and waits for the two-word readback."""
        words = np.full(4, NO_ID, np.uint32)
        words[:2] = pixel
        self.device.queue.write_buffer(self.pick_position, 0, words.tobytes())
        self._pointer_written = tuple(int(v) for v in pixel)
        self.sampler.forget()  # the pick output now holds this pixel's ID
        encoder = self.device.create_command_encoder(label="trace-viewer-pick")
        self.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        value = int(np.frombuffer(self.device.queue.read_buffer(self.pick_output, 0, 4), np.uint32)[0])
        return None if value == NO_ID else value

    def read_tracks(self):
        """The render-size corner as the last encoded frame left it:
        ``(rgba uint8 (h, w, 4), span IDs uint32 (h, w))``; waits for the
        readback (tests and benchmarks, never the frame path)."""
        w, h = self.render_size
        pitch = -(-4 * w // 256) * 256

        def read(texture):
            raw = self.device.queue.read_texture({"texture": texture}, {"bytes_per_row": pitch}, (w, h, 1))
            return np.frombuffer(raw, np.uint8).reshape(h, pitch)[:, :4 * w].copy()
        return read(self.color).reshape(h, w, 4), read(self.picking.object_texture).view(np.uint32).reshape(h, w)

    def read_stats(self) -> np.ndarray:
        """Encode the graph, submit and wait for the frame's stats words
        (explicit queries such as ``search_count``; never the frame path)."""
        encoder = self.device.create_command_encoder(label="trace-viewer-stats")
        self.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        return np.frombuffer(self.device.queue.read_buffer(self.frame.stats, 0, 64), np.uint32).copy()

    def destroy(self) -> None:
        """Free the compiled graph and everything this object created (idempotent)."""
        if getattr(self, "sampler", None) is not None:
            self.sampler.destroy()
            self.sampler = None
        if self.compiled is not None:
            self.compiled.destroy()
            self.compiled = None
        for obj in self._owned:
            obj.destroy()
        self._owned.clear()
        if self.frame is not None:
            self.frame.destroy()
            self.frame = None


class _BenchRig:
    """A TraceGraph driven by bare TraceViewStates (for ``gpuviz.bench trace-viewer``)."""

    def __init__(self, device, scene, trace, size):
        colours = np.full(max(len(scene.names), 1), 0xFF8080C0, np.uint32)
        self.graph = TraceGraph(device, scene, trace, name_colours=colours, capacity=scene.span_count, edges=True)
        self.graph.render_size = (min(int(size[0]), self.graph.frame_size[0]),
                                  min(int(size[1]), self.graph.frame_size[1]))
        self.frame, self.compiled = self.graph.frame, self.graph.compiled

    def write(self, state) -> None:
        """The frame's parameter writes for ``state`` and the tracks' view uniform (no gutter, rows fill the height)."""
        self.frame.write(state)
        w0, w1 = (int(v) for v in state.window)
        origin = self.graph.scene.time_origin_ns
        width, height = self.graph.render_size
        rows = max(int(state.rows[1]), 1)
        self.graph.write_view(origin_rel=w0 - origin, end_rel=w1 - origin, min_duration=state.min_duration_ns,
                              render_size=(width, height), px_per_ns=width / (w1 - w0), gutter=0.0, top=0.0,
                              row_height=max(height / rows, 1.0), first_row=int(state.rows[0]),
                              flags=VIEW_FLAGS["focus"] if len(state.focus_seeds) else 0, hover=None, scale=1.0,
                              bottom=float(height), column_px=width / state.width, label_px=LABEL_PX)

    def destroy(self) -> None:
        self.graph.destroy()


def bench_frame(device, scene, trace, *, size=(1920, 600)):
    """The TraceViewer graph (GPUTraceInteraction + tracks and links nodes + pick) for
    a benchmark: ``.frame``, ``.compiled``, ``.write(state)``, ``.destroy()``.
    Draws into the graph's own frame texture; presents nothing."""
    return _BenchRig(device, scene, trace, size)
