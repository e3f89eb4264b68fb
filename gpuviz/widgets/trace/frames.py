"""The per-frame writes of a TraceViewer: its CPU state turned into a
:class:`~gpuviz.trace.interaction.TraceViewState` for the GPUTraceFrame,
the tracks' view uniform, the selection bits and link segments; plus the
status line and which spans are dimmed (for the labels). Only what changed
since the last frame is written; nothing here submits or reads back."""

from __future__ import annotations

import numpy as np

from .chrome import MIN_LABEL_PX, link_segments
from .graph import VIEW_FLAGS
from .geometry import GUTTER, ROW_HEIGHT, TRACKS_TOP, format_ns

__all__ = ["write_frame", "frame_state", "label_dimmed", "status_line"]



def write_frame(viewer, size, scale) -> None:
    """Write what changed since the last frame into the frame's and the graph's buffers."""
    g = viewer._graph
    fw, fh = g.frame_size
    render = (max(1, min(fw, int(round(size[0] * scale)))), max(1, min(fh, int(round(size[1] * scale)))))
    g.render_size = render
    s = render[0] / size[0]
    geometry = viewer._geometry(size)
    g.write_pointer(_pointer_pixel(viewer, geometry, s, render))  # every frame: hover follows the pointer
    key = (viewer._version, tuple(size), render, viewer._hover)
    if key == viewer._written:
        return
    plot_px = max(render[0] - int(round(GUTTER * s)), 1)
    w0, w1 = viewer._window
    columns = max(1, min(plot_px, w1 - w0))  # the frame needs >= 1 ns per column
    viewer._columns = columns
    if viewer._written is None or viewer._written[0] != viewer._version:
        g.frame.write(frame_state(viewer, columns, geometry))
        if g.selected_ids is not viewer._selection:  # a selection change: its changed words only
            g.write_selection(viewer._selection)
        g.write_segments(link_segments(viewer.index, viewer._layout(), geometry, viewer._selection))
    flags = (VIEW_FLAGS["search"] if viewer._search is not None else 0) | \
        (VIEW_FLAGS["focus"] if viewer._focus is not None else 0)
    origin = viewer.scene.time_origin_ns
    g.write_view(origin_rel=w0 - origin, end_rel=w1 - origin,
                 min_duration=viewer._min_duration, render_size=render, px_per_ns=geometry.px_per_ns * s,
                 gutter=GUTTER * s, top=TRACKS_TOP * s, row_height=ROW_HEIGHT * s, first_row=viewer._first_row,
                 flags=flags, hover=viewer._hover, scale=s, bottom=geometry.bottom * s,
                 column_px=geometry.plot_width * s / columns, label_px=MIN_LABEL_PX * s)
    viewer._written = key


def _pointer_pixel(viewer, geometry, s, render):
    """The frame pixel under the pointer when it is over the tracks (hover), else None."""
    if viewer._pointer is None:
        return None
    x, y = viewer._pointer
    if x < GUTTER or y < TRACKS_TOP or y >= geometry.bottom or x >= geometry.width:
        return None
    return (min(int(x * s), render[0] - 1), min(int(y * s), render[1] - 1))


def frame_state(viewer, columns, geometry):
    from ...trace.interaction import TraceViewState
    frame = viewer._graph.frame
    return TraceViewState(
        window=viewer._window, width=columns,
        rows=(viewer._first_row, min(geometry.visible_rows, frame.row_capacity)),
        process_expanded=viewer._process_expanded.copy(), thread_expanded=viewer._thread_expanded.copy(),
        categories=viewer._categories, min_duration_ns=viewer._min_duration, search=viewer._search_names,
        search_mode="highlight" if viewer._search is None else viewer._search[1],
        focus_seeds=() if viewer._focus is None else tuple(int(v) for v in viewer._focus[0]),
        focus_depth=0 if viewer._focus is None else viewer._focus[1], focus_mode=viewer._focus_mode)


def label_dimmed(viewer, ids, flags):
    """bool per label span drawn dimmed (search highlight, focus "dim"):
    O(labels) from the name table and the GPU's focus flags."""
    from .labels import LABEL_FOCUSED
    dim = np.zeros(len(ids), bool)
    if viewer._search is not None:
        dim |= ~viewer._search_names[viewer.index.name_id[ids]]
    if viewer._focus is not None:
        dim |= (flags & LABEL_FOCUSED) == 0
    return dim


def status_line(viewer, geometry, stats) -> str:
    """The line under the tracks; counts from the GPU's stats words (a sample, or None)."""
    from ...trace.interaction import STATS
    w0, w1 = viewer._window
    parts = [f"{viewer.index.n:,} spans", f"window {format_ns(w1 - w0)}"]
    if viewer._search is not None and stats is not None:
        parts.append(f"search: {int(stats[STATS['search_matches']]):,} matches")
    if len(viewer._selection):
        parts.append(f"{len(viewer._selection):,} selected")
    if viewer._focus is not None:
        focused = "" if stats is None else f"{int(stats[STATS['focused']]):,} spans "
        parts.append(f"focus: {focused}({viewer._focus_mode})")
    if not viewer.index.n:
        parts.append("empty trace")
    return " · ".join(parts)
