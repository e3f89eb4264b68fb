"""The public surface of a GPU widget class, for the tests that every
public method and property setter of a closed widget raises GraphStateError."""

from __future__ import annotations

import pytest

from gpuviz import GraphStateError

__all__ = ["public_api", "check_closed_refuses_everything"]

#: Public names a closed widget answers without raising: ``close`` (idempotent),
#: the ``call_lock`` property, and GPUCanvas's device-loss hook (it records a
#: loss; a closed widget's canvas no longer calls it, and a hook that raised
#: would only be logged by the canvas).
EXEMPT = frozenset({"close", "call_lock", "handle_device_lost"})


def public_api(cls) -> tuple:
    """``(methods, setters)``: the public method names and settable property
    names that ``cls`` and its gpuviz bases define (not those of ipywidgets)."""
    methods, setters = set(), set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("gpuviz."):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in EXEMPT:
                continue
            if isinstance(value, property):
                if value.fset is not None:
                    setters.add(name)
            elif callable(value):
                methods.add(name)
    return methods, setters


def check_closed_refuses_everything(widget, *, calls: dict, values: dict, name: str) -> None:
    """Every public method of the closed ``widget`` (called with ``calls[name]``:
    ``(args, kwargs)``) and every property setter (set to ``values[name]``)
    raises GraphStateError saying ``name`` is closed. ``calls`` and
    ``values`` must cover the class's whole public surface, so a method
    added later without a closed check fails here."""
    methods, setters = public_api(type(widget))
    assert set(calls) == methods, f"public methods without a closed-call case: {sorted(methods - set(calls))}; " \
                                  f"cases of no public method: {sorted(set(calls) - methods)}"
    assert set(values) == setters, f"property setters without a closed case: {sorted(setters - set(values))}; " \
                                   f"cases of no setter: {sorted(set(values) - setters)}"
    for method, (args, kwargs) in sorted(calls.items()):
        with pytest.raises(GraphStateError, match=f"{name} is closed"):
            getattr(widget, method)(*args, **kwargs)
    for prop, value in sorted(values.items()):
        with pytest.raises(GraphStateError, match=f"{name} is closed"):
            setattr(widget, prop, value)
