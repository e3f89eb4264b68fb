"""gpuviz.show: a live view of a widget in a JupyterLab panel, or inline.

``show`` displays one output whose MIME bundle carries three choices; each
front end renders the richest one it knows, so nothing waits for an answer:

``application/vnd.gpuviz.show+json``
    Known only to the gpuviz labextension (JupyterLab 4, Notebook 7), which
    opens the panel: a second view of the same widget model through the
    notebook's widget manager, so the widget may also be displayed inline.
    The cell keeps one line naming where it went.
``application/vnd.jupyter.widget-view+json``
    Any host with ipywidgets (VS Code, Colab, Lab without the extension):
    the widget inline, under a one-line note saying no panel was available.
``text/plain``
    Anything else.
"""

from __future__ import annotations

import uuid
import weakref

import ipywidgets

from ..errors import GraphStateError, GraphTypeError, GraphValidationError
from . import registry

__all__ = ["show", "PLACES", "SHOW_MIME"]

#: Where :func:`show` can put a widget.
PLACES = ("right", "split-right", "split-bottom", "tab", "inline")
#: The MIME type the gpuviz labextension renders as a panel.
SHOW_MIME = "application/vnd.gpuviz.show+json"
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_NOTE = ("gpuviz.show: no gpuviz extension in this front end (JupyterLab 4 or Notebook 7 with gpuviz installed "
         "show it in a panel); shown inline instead.")

# One fallback box (note + widget) per widget, made on its first show.
_fallbacks: "weakref.WeakKeyDictionary[ipywidgets.Widget, ipywidgets.VBox]" = weakref.WeakKeyDictionary()


def _fallback_box(widget) -> ipywidgets.VBox:
    box = _fallbacks.get(widget)
    if box is None or box.comm is None:
        note = ipywidgets.HTML(f'<span style="font-size: 12px; opacity: 0.75">{_NOTE}</span>')
        box = _fallbacks[widget] = ipywidgets.VBox([note, widget])
    return box


def show_bundle(widget, *, where: str = "right", title: str | None = None) -> dict:
    """The MIME bundle :func:`show` displays for a panel place (see the module
    docstring), after the same checks; displays nothing. A fresh
    ``show_id`` per call lets the front end open each call's panel once,
    however often the output is rendered."""
    title = _check(widget, where, title)
    if where == "inline":
        raise GraphValidationError('show_bundle is for panel places; where="inline" displays the widget itself')
    box = _fallback_box(widget)
    kind = type(widget).__name__
    return {
        SHOW_MIME: {"model_id": widget.model_id, "where": where, "title": title, "kind": kind,
                    "show_id": uuid.uuid4().hex},
        _WIDGET_MIME: {"model_id": box.model_id, "version_major": 2, "version_minor": 0},
        "text/plain": f"{kind} {title!r}: {_NOTE}",
    }


def _check(widget, where, title) -> str:
    """Validate show's arguments; returns the title to use."""
    if not isinstance(widget, ipywidgets.Widget):
        raise GraphTypeError(f"show takes an ipywidget (a gpuviz widget or any other), got {type(widget).__name__}")
    if not isinstance(where, str) or where not in PLACES:
        raise GraphValidationError(f"show where must be one of {', '.join(map(repr, PLACES))} (got {where!r})")
    if title is not None and not isinstance(title, str):
        raise GraphTypeError(f"show title must be a string or None (got {type(title).__name__})")
    if widget.comm is None or widget.model_id is None:
        raise GraphStateError(f"show cannot display {type(widget).__name__}: the widget was closed")
    return title if title else type(widget).__name__


def show(widget, *, where: str = "right", title: str | None = None) -> None:
    """Show a live view of ``widget`` in a JupyterLab panel or inline.

    Parameters
    ----------
    widget : ipywidgets.Widget
        Any gpuviz widget (DataAnalysis, GPUCanvas, GraphInspector, ...) or
        any other ipywidget.
    where : {"right", "split-right", "split-bottom", "tab", "inline"}
        The right side panel, a split of the main area beside or below the
        notebook, a tab next to it, or the cell's output. In Notebook 7
        (one document per page) splits and tabs go to the right panel and
        split-bottom to the bottom panel: the nearest places it has.
    title : str, optional
        The panel's tab label and its name in the GPU panel (default: the
        widget's class name).

    Raises
    ------
    GraphTypeError
        ``widget`` is not an ipywidget, or ``title`` is not a string.
    GraphValidationError
        ``where`` is not one of the places above.
    GraphStateError
        The widget was closed.

    Notes
    -----
    Displays one output and returns at once: it never waits for the front
    end. The panel is another view of the same widget model, alive while
    the kernel is (the same widget may also be shown inline, or in several
    panels); closing the panel closes that view only, never the widget.
    Where no gpuviz extension is present (VS Code, Colab, a Lab without it)
    the output is the widget inline under a one-line note, never an error.
    Does not close or copy the widget, and does not start a kernel event
    loop. The widget is listed in the GPU side panel while it lives.
    """
    from IPython.display import display

    title = _check(widget, where, title)
    registry.track(widget, title=title)
    if where == "inline":
        display(widget)
        return
    display(show_bundle(widget, where=where, title=title), raw=True)
