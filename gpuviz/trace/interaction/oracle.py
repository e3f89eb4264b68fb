"""TraceViewOracle: what a GPUTraceFrame must produce, in numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TraceViewOracle", "OracleFrame"]


@dataclass(frozen=True)
class OracleFrame:
    """The expected outputs of one frame.

    Attributes
    ----------
    visible : numpy uint32
        Scene rows passing every test (window, rows, filters, focus "hide"), ascending.
    drawn : numpy uint32
        Of those, the rows drawn one by one (2+ pixel columns), ascending: ``visible_rows``.
    merged : numpy uint32 (k, 4)
        ``(row, x0, x1, name)`` runs, sorted by (row, x0).
    density : numpy uint32 (k, 4)
        ``(row, x0, x1, count)`` runs of collapsed-process summary rows, sorted.
    minimap : numpy uint32 (bins,)
    focus : numpy uint32 per row (0/1)
    stats : dict of int (keys of :data:`~gpuviz.trace.interaction.frame.STATS`)
    """

    visible: np.ndarray
    drawn: np.ndarray
    merged: np.ndarray
    density: np.ndarray
    minimap: np.ndarray
    focus: np.ndarray
    stats: dict


class TraceViewOracle:
    """numpy model of :class:`~gpuviz.trace.interaction.frame.GPUTraceFrame`.

    Parameters
    ----------
    frame : GPUTraceFrame
        Supplies the scene's row order, dense IDs, layout rules and capacities.
    trace : gpuviz.trace.Trace

    Notes
    -----
    Copies the span columns into numpy in scene-row order once (about 40
    bytes per span). :meth:`frame` is a plain vectorised model for tests and
    benchmarks, not fast; does not touch the GPU.
    """

    def __init__(self, frame, trace):
        raise NotImplementedError

    def frame(self, state) -> OracleFrame:
        """Expected outputs of ``state``."""
        raise NotImplementedError
