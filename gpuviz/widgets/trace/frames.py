"""The per-frame writes of a TraceViewer: the view's
:class:`~gpuviz.trace.interaction.TraceViewState`, completed with the
frame's column and row counts, for the GPUTraceInteraction; the tracks'
view uniform, the selection bits and link segments; plus the status line.
Only what changed since the last frame is written; nothing here submits or
reads back."""

from __future__ import annotations

from .decorations import MIN_LABEL_PX, link_segments
from .geometry import GUTTER, ROW_HEIGHT, TRACKS_TOP, Geometry, format_ns
from .graph import VIEW_FLAGS

__all__ = ["FrameWriter", "frame_state", "status_line"]


class FrameWriter:
    """Writes a view's state into one TraceGraph's buffers, only what changed.

    Parameters
    ----------
    graph : TraceGraph
    index : TraceIndex

    Attributes
    ----------
    columns : int
        Pixel columns of the last written frame's grid (>= 1 ns each).
    """

    def __init__(self, graph, index):
        self.graph, self.index = graph, index
        self.columns = 1
        self._written = None  # the key of the last write

    def forget(self) -> None:
        """The next :meth:`write` writes everything (the size or the target changed outside a state)."""
        self._written = None

    def write(self, state, *, version, selection, layout, pointer, size, scale) -> None:
        """Write ``state`` (version ``version``: a new one per state change),
        the ``selection`` (int64 span IDs), the link segments of ``layout``
        and the pointer's pixel and hover into the graph for a canvas of
        ``size`` logical pixels at ``scale`` physical pixels per logical one."""
        g = self.graph
        fw, fh = g.frame_size
        render = (max(1, min(fw, int(round(size[0] * scale)))), max(1, min(fh, int(round(size[1] * scale)))))
        g.render_size = render
        s = render[0] / size[0]
        geometry = Geometry.of(state, size)
        g.write_pointer(_pointer_pixel(pointer.position, geometry, s, render))  # every frame: hover follows it
        key = (version, tuple(size), render, pointer.hover)
        if key == self._written:
            return
        plot_px = max(render[0] - int(round(GUTTER * s)), 1)
        w0, w1 = state.window
        columns = self.columns = max(1, min(plot_px, w1 - w0))  # the frame needs >= 1 ns per column
        if self._written is None or self._written[0] != version:
            g.frame.write(frame_state(state, columns, geometry, g.frame.row_capacity))
            if g.selected_ids is not selection:  # a selection change: its changed words only
                g.write_selection(selection)
            g.write_segments(link_segments(self.index, layout, geometry, selection))
        flags = (VIEW_FLAGS["search"] if state.search is not None else 0) | \
            (VIEW_FLAGS["focus"] if len(state.focus_seeds) else 0)
        origin = g.scene.time_origin_ns
        g.write_view(origin_rel=w0 - origin, end_rel=w1 - origin,
                     min_duration=state.min_duration_ns, render_size=render, px_per_ns=geometry.px_per_ns * s,
                     gutter=GUTTER * s, top=TRACKS_TOP * s, row_height=ROW_HEIGHT * s, first_row=state.rows[0],
                     flags=flags, hover=pointer.hover, scale=s, bottom=geometry.bottom * s,
                     column_px=geometry.plot_width * s / columns, label_px=MIN_LABEL_PX * s)
        self._written = key


def _pointer_pixel(position, geometry, s, render):
    """The frame pixel under the pointer when it is over the tracks (hover), else None."""
    if position is None:
        return None
    x, y = position
    if x < GUTTER or y < TRACKS_TOP or y >= geometry.bottom or x >= geometry.width:
        return None
    return (min(int(x * s), render[0] - 1), min(int(y * s), render[1] - 1))


def frame_state(state, columns, geometry, row_capacity):
    """``state`` with the frame's pixel columns and the rows in view (at most ``row_capacity``)."""
    return state.with_(width=columns, rows=(state.rows[0], min(geometry.visible_rows, row_capacity)))


def status_line(index, state, selection, geometry, stats) -> str:
    """The line under the tracks; counts from the GPU's stats words (a sample, or None)."""
    from ...trace.interaction import STATS
    w0, w1 = state.window
    parts = [f"{index.n:,} spans", f"window {format_ns(w1 - w0)}"]
    if state.search is not None and stats is not None:
        parts.append(f"search: {int(stats[STATS['search_matches']]):,} matches")
    if len(selection):
        parts.append(f"{len(selection):,} selected")
    if len(state.focus_seeds):
        focused = "" if stats is None else f"{int(stats[STATS['focused']]):,} spans "
        parts.append(f"focus: {focused}({state.focus_mode})")
    if not index.n:
        parts.append("empty trace")
    return " · ".join(parts)
