"""The ipywidgets of :class:`~gpuviz.widgets.DataAnalysis`: its controls, the
status line (refused values; values left out for being beyond float32's
range) and the legend of what each panel shows.

Every number shown here is the parameters' value in one format
(:func:`~gpuviz.render.number_format.format_number`, four significant
digits, as the plot's axes and tooltips): the range slider has no readout
of its own, which showed the browser's snapped handles (5.059 … 24.33
beside a legend of 5.099 … 24.3); ``range_readout`` beside it shows the
value range.

Host-side only: a control calls the widget's setter, and the controls show
the widget's :class:`~gpuviz.widgets.analysis.parameters.AnalysisParameters`
again after every change (without calling the setters back).

The range slider's echo: when a new value column moves the slider's
min / max / step, the browser's slider view answers each of those changes
with its *old* handles clamped into the new bounds (and snapped to a step),
and that answer reaches the kernel after the reset, as if the user had
moved the slider (issue 11: 1.981 … 30.97 left over from fare instead of
distance's 0.163 … 30.97). The controls send bounds, step and value in one
message (``hold_sync``), and ignore (and overwrite) slider values that match
the old handles clamped into the new bounds, until the first value that
does not.
"""

from __future__ import annotations

import html
import time
from collections import deque

import ipywidgets as widgets
import numpy as np

from ...errors import GraphError
from ...render.number_format import format_number
from .graph import OPERATIONS
from .render import BAR_COLOR, CDF_COLOR, GROUP_PALETTE, css_color

__all__ = ["AnalysisControls", "range_text"]

_MAX_ECHOES = 8  # one per message the browser answers, with room; bounds a kernel <-> browser ping-pong
_SNAP_SECONDS = 2.0  # how long a range sent to the browser may come back snapped onto the slider's steps
_SWATCH = '<span style="color: {}">&#9632;</span>'
_F32_MAX = float(np.finfo(np.float32).max)


class AnalysisControls:
    """Dropdowns, sliders and buttons bound to a DataAnalysis, plus its
    ``status`` and ``legend`` HTML.

    Parameters
    ----------
    owner : DataAnalysis
        Its ``set_columns``, ``set_bins``, ``set_scale``, ``set_operation``,
        ``set_value_range`` and ``reset_view`` are what the controls call;
        each callback holds its ``call_lock`` (callbacks may come from
        another thread).
    parameters : AnalysisParameters
        What the controls show.
    data : AnalysisData
        The columns offered and the group labels of the legend.

    Attributes
    ----------
    x_dropdown, y_dropdown, value_dropdown, bins_slider, scale_toggle,
    operation_dropdown, range_slider, reset_button, full_button :
        The controls (``reset_button``: robust home bounds; ``full_button``:
        the x / y columns' full finite extent).
    status, legend, range_readout : ipywidgets.HTML
    rows : list of ipywidgets.HBox
        The controls laid out in three rows.

    Notes
    -----
    A setter's ValueError or GraphError (a closed widget, a lost device) is
    shown in ``status`` (and the controls go back to the parameters); it is
    never raised out of an ipywidgets callback.
    Does not touch the GPU.
    """

    def __init__(self, owner, parameters, data):
        self.parameters, self.data = parameters, data
        self._owner = owner
        self._syncing = False
        self._echo = None  # (stale (lo, hi), tolerance, echoes left) after the slider's bounds moved
        self._sent = deque(maxlen=4 * _MAX_ECHOES)  # (time, (lo, hi)) ranges recently sent to the slider
        columns, layout = parameters.columns, widgets.Layout(width="220px")
        self.x_dropdown = widgets.Dropdown(options=data.columns, value=columns["x"], description="x", layout=layout)
        self.y_dropdown = widgets.Dropdown(options=data.columns, value=columns["y"], description="y", layout=layout)
        self.value_dropdown = widgets.Dropdown(options=data.columns, value=columns["value"], description="value",
                                               layout=layout)
        self.bins_slider = widgets.IntSlider(value=parameters.bins, min=1, max=parameters.max_bins,
                                             description="bins", continuous_update=True)
        self.scale_toggle = widgets.ToggleButtons(options=["linear", "log"], value=parameters.scale,
                                                  style={"button_width": "64px"})
        self.operation_dropdown = widgets.Dropdown(options=list(OPERATIONS), value=parameters.operation,
                                                   description="heatmap", layout=layout)
        self.range_readout = widgets.HTML()
        self.range_slider = widgets.FloatRangeSlider(description="range", readout=False,
                                                     layout=widgets.Layout(width="420px"))
        self._sync_range_slider()
        self._echo = None  # nothing in a browser yet to echo the defaults back
        self.reset_button = widgets.Button(description="reset view", layout=widgets.Layout(width="100px"),
                                           tooltip="bounds: 0.5-99.5 percentiles of x and y")
        self.full_button = widgets.Button(description="full extent", layout=widgets.Layout(width="100px"),
                                          tooltip="bounds: every finite x and y")
        self.status = widgets.HTML()
        self.legend = widgets.HTML()
        for control, handler in ((self.x_dropdown, lambda c: owner.set_columns(x=c.new)),
                                 (self.y_dropdown, lambda c: owner.set_columns(y=c.new)),
                                 (self.value_dropdown, lambda c: owner.set_columns(value=c.new)),
                                 (self.bins_slider, lambda c: owner.set_bins(c.new)),
                                 (self.scale_toggle, lambda c: c.new is not None and owner.set_scale(c.new)),
                                 (self.operation_dropdown, lambda c: owner.set_operation(c.new)),
                                 (self.range_slider, lambda c: self._is_echo(c.new) or self._is_snap(c.new)
                                  or owner.set_value_range(c.new))):
            control.observe(self._observer(handler), names="value")
        reset = self._observer(lambda _change: owner.reset_view())
        self.reset_button.on_click(lambda _button: reset(None))
        full = self._observer(lambda _change: owner.reset_view(full=True))
        self.full_button.on_click(lambda _button: full(None))
        self.rows = [widgets.HBox([self.x_dropdown, self.y_dropdown, self.value_dropdown]),
                     widgets.HBox([self.bins_slider, self.scale_toggle]),
                     widgets.HBox([self.operation_dropdown, self.range_slider, self.range_readout, self.reset_button,
                                   self.full_button])]
        self.show_notice()

    def _observer(self, handler):
        def observer(change):
            with self._owner.call_lock:  # a callback from another thread waits for the frame being drawn
                if self._syncing:
                    return
                try:
                    handler(change)
                    self.show_notice()
                except (ValueError, GraphError) as exc:  # shown in the widget; the control goes back to its state
                    self.status.value = f'<span style="color: #c33">{html.escape(str(exc))}</span>'
                    self.sync()
        return observer

    def sync(self) -> None:
        """Make every control show the parameters (without re-triggering)."""
        p = self.parameters
        self._syncing = True
        try:
            self.x_dropdown.value, self.y_dropdown.value = p.columns["x"], p.columns["y"]
            self.value_dropdown.value = p.columns["value"]
            self.bins_slider.value = p.bins
            self.scale_toggle.value = None if p.scale == "custom" else p.scale
            self.operation_dropdown.value = p.operation
            self._sync_range_slider()
        finally:
            self._syncing = False

    def _sync_range_slider(self) -> None:
        p, slider = self.parameters, self.range_slider
        lo, hi = p.extent(p.columns["value"])
        step = (hi - lo) / 1000 if hi > lo else 1.0
        if (slider.min, slider.max, slider.step) != (lo, hi, step):
            # The browser will answer the new bounds with the old handles: remember them.
            self._echo = (tuple(slider.value), max(slider.step, step), _MAX_ECHOES)
        syncing, self._syncing = self._syncing, True
        try:
            with slider.hold_sync():  # one message: bounds, step and value arrive together
                if lo > slider.max:
                    slider.max, slider.min = hi, lo
                else:
                    slider.min, slider.max = lo, hi
                slider.step = step
                slider.value = p.value_range
                self._sent.append((time.monotonic(), tuple(p.value_range)))
            self.range_readout.value = range_text(p.value_range)
        finally:
            self._syncing = syncing

    def _is_echo(self, value) -> bool:
        """Whether a range-slider ``value`` is the browser's echo of the handles
        it had before the last change of bounds; an echo is ignored and the
        slider shows the parameters' range again. The first value that is no
        echo ends the watch (a new change of bounds starts a new one)."""
        if self._echo is None:
            return False
        (old_lo, old_hi), tolerance, left = self._echo
        lo, hi = self.range_slider.min, self.range_slider.max
        stale = (min(max(old_lo, lo), hi), min(max(old_hi, lo), hi))
        if left <= 0 or not all(abs(v - s) <= tolerance for v, s in zip(value, stale)):
            self._echo = None
            return False
        self._echo = ((old_lo, old_hi), tolerance, left - 1)
        self._sync_range_slider()
        return True

    def _is_snap(self, value) -> bool:
        """Whether a range-slider ``value`` is the browser's snap of a range
        the kernel sent in the last :data:`_SNAP_SECONDS` onto the slider's
        step grid: each handle within half a step of it. The browser rounds
        a value set from the kernel (a histogram brush ends just below a bin
        edge) to a whole number of steps and sends it back, possibly after
        newer ranges were sent (a brush sends one per pointer move); a person
        moves a handle by whole steps. A snap of the current range is
        ignored; a snap of an older one is ignored and the slider shows the
        current range again (whose own snap is then ignored in turn)."""
        half = self.range_slider.step / 2 * (1 + 1e-9)
        now = time.monotonic()

        def near(sent):
            return all(abs(v - s) <= half for v, s in zip(value, sent))

        if near(self.parameters.value_range):
            return True
        if any(near(sent) for when, sent in self._sent if now - when <= _SNAP_SECONDS):
            self._sync_range_slider()
            return True
        return False

    def update_legend(self) -> None:
        """Show the columns, ranges, bins, colours and group labels of the parameters."""
        p = self.parameters
        x, y, value = (html.escape(p.columns[role]) for role in ("x", "y", "value"))
        x0, y0, x1, y1 = p.bounds
        # The colour bar (with its range and normalisation) is drawn in the frame itself.
        parts = [f"<b>heatmap</b> {p.operation} of <i>{value}</i> · <i>{x}</i> {range_text((x0, x1))} · "
                 f"<i>{y}</i> {range_text((y0, y1))}",
                 f"{_SWATCH.format(css_color(BAR_COLOR))} <b>histogram</b> of <i>{value}</i>: {p.bins} "
                 f"{p.scale} bins {range_text((p.edges[0], p.edges[-1]))} · "
                 f"{_SWATCH.format(css_color(CDF_COLOR))} CDF · range {range_text(p.value_range)}"]
        if self.data.group is not None:
            shown = p.group_enabled
            labels = " ".join(f"{_SWATCH.format(css_color(GROUP_PALETTE[g % len(GROUP_PALETTE)]))} "
                              + (html.escape(label) if shown[g] else f"<s>{html.escape(label)}</s>")
                              for g, label in enumerate(self.data.group_labels))
            parts.append(f"<b>mean <i>{value}</i> by {html.escape(self.data.group)}</b>: {labels}")
        legend = '<div style="font: 12px sans-serif; line-height: 1.6">' + "<br>".join(parts) + "</div>"
        if legend != self.legend.value:
            self.legend.value = legend

    def show_notice(self) -> None:
        """The status line when no value is refused: the finite values of the
        x / y / value columns beyond float32's range, which every view leaves
        out (they are infinite on the GPU); empty when there are none."""
        parts = []
        for name in dict.fromkeys(self.parameters.columns.values()):
            overflow = self.data.stats[name].overflow
            if overflow:
                parts.append(f"{overflow:,} of <i>{html.escape(name)}</i>")
        self.status.value = ("" if not parts else f'<span style="color: #b70">overflow: {", ".join(parts)} '
                             f"beyond float32's range (±{_F32_MAX:.4g}), left out of every view</span>")


def range_text(pair) -> str:
    """``lo … hi`` as the controls and the legend show a range."""
    lo, hi = pair
    return f"{format_number(float(lo), digits=4)} … {format_number(float(hi), digits=4)}"
