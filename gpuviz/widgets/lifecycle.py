"""The closed / device-lost lifecycle the GPU widgets share: one guard for
every public call that needs the graph or the GPU, and the GPUCanvas
``handle_device_lost`` hook that remembers a loss and shows it.

A widget mixes in :class:`WidgetLifecycle` and names, as class attributes,
what it keeps (``_LIFECYCLE_OWNED``: the attribute that is None once closed)
and where a loss is shown (``_LIFECYCLE_PANEL``: an HTML widget attribute);
it sets ``device_lost = None`` and ``device`` in its constructor.

Threading rule: a widget serialises its public calls. Every ``guarded``
method, every frame GPUCanvas records (``draw`` through ``frame_submitted``)
and ``close`` hold the widget's re-entrant :attr:`WidgetLifecycle.call_lock`,
so a setter called from another thread waits for the frame being recorded
instead of tearing it, and a call that arrives after ``close`` raises
GraphStateError.
"""

from __future__ import annotations

import functools
import html
import threading
from collections.abc import Mapping

import ipywidgets

from ..errors import GraphStateError, GraphTypeError
from .device_loss import device_lost_message

__all__ = ["WidgetLifecycle", "guarded", "close_widget_tree"]

# Guards the lazy creation of each widget's call lock (the mixin has no __init__).
_LOCK_CREATION = threading.Lock()


def guarded(method):
    """Decorate a widget method: GraphStateError before anything changes once
    the widget is closed or its device is lost (``self._check_usable``)."""
    @functools.wraps(method)
    def guard(self, *args, **kwargs):
        with self.call_lock:
            self._check_usable(method.__name__)
            return method(self, *args, **kwargs)
    return guard


def close_widget_tree(widget, *, root: bool = True) -> None:
    """Close ``widget`` and every ipywidget it holds in a synced trait
    (``children`` of boxes, ``layout``, ``style``), depth first, so none
    stays registered in ``ipywidgets.Widget.widgets`` once a GPU widget is
    closed: a Layout or a style is a registered widget of its own, which
    ``Widget.close`` leaves open. With ``root=False`` only what ``widget``
    holds is closed (a widget's own ``close`` calls that before closing
    itself). Closing twice is harmless."""
    seen = {id(widget)}  # a widget reachable twice (a shared Layout) or through a cycle is closed once

    def close_held(owner):
        for name in tuple(getattr(owner, "keys", ()) or ()):
            value = getattr(owner, name, None)
            for held in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(held, ipywidgets.Widget) and id(held) not in seen:
                    seen.add(id(held))
                    close_held(held)
                    held.close()

    close_held(widget)
    if root:
        widget.close()


class WidgetLifecycle:
    """Mixin of the closed and device-lost checks of a GPU widget.

    Notes
    -----
    It probes the device only through
    :func:`~gpuviz.widgets.device_loss.device_lost_message`; it frees
    nothing (the widget's ``close`` does) and does not define ``__init__``.
    """

    _LIFECYCLE_NAME = None  # the name in error messages (None: the class name)
    _LIFECYCLE_OWNED = "graph"  # attribute that is None once the widget is closed
    _LIFECYCLE_PANEL = "status"  # HTML widget attribute that shows a device loss

    @property
    def call_lock(self) -> threading.RLock:
        """The re-entrant lock that serialises this widget's public calls, its
        frames and ``close`` (see the module docstring)."""
        lock = self.__dict__.get("_call_lock")
        if lock is None:
            with _LOCK_CREATION:
                lock = self.__dict__.setdefault("_call_lock", threading.RLock())
        return lock

    def _lifecycle_name(self) -> str:
        """The widget's name in error messages."""
        return self._LIFECYCLE_NAME or type(self).__name__

    def _check_usable(self, action: str, *, raise_lost: bool = True) -> bool:
        """Raise GraphStateError if the widget is closed, or if its device is
        lost and ``raise_lost``; returns whether the device is lost (the
        canvas hooks report a loss instead of raising it)."""
        if getattr(self, self._LIFECYCLE_OWNED, None) is None:
            raise GraphStateError(f"{self._lifecycle_name()} is closed: {action}() needs an open widget")
        if self.device_lost is None:
            lost = device_lost_message(self.device)
            if lost is not None:
                self.handle_device_lost(lost)
        if self.device_lost is not None and raise_lost:
            raise GraphStateError(f"{self._lifecycle_name()} cannot run {action}(): {self.device_lost}")
        return self.device_lost is not None

    def handle_device_lost(self, message: str) -> None:
        """GPUCanvas hook (and the widget's own probe): remember the loss and
        show ``message``, HTML-escaped, in the widget's panel. Frees nothing:
        ``close`` does."""
        self.device_lost = str(message)
        panel = getattr(self, self._LIFECYCLE_PANEL, None)
        if panel is not None:
            panel.value = f'<span style="color: #c33">{html.escape(self.device_lost)}</span>'

    def _event_ignored(self, event) -> bool:
        """The start of every ``handle_event``: GraphStateError once closed,
        GraphTypeError unless ``event`` is a rendercanvas event (a Mapping);
        True when the device is lost (the event is then ignored)."""
        lost = self._check_usable("handle_event", raise_lost=False)
        if not isinstance(event, Mapping):
            raise GraphTypeError(f"{self._lifecycle_name()} handle_event() takes a rendercanvas event (a dict with "
                                 f'"event_type"), got {type(event).__name__}')
        return lost
