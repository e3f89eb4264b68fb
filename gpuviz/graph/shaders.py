"""The shader builder: every WGSL file gpuviz compiles goes through here.

One loader, one template mechanism, one cache:

- **Loader.** A shader is a ``.wgsl`` file beside the Python module that uses
  it (``gpuviz/algorithms/shaders/scan.wgsl``), named by its path inside the
  package: ``wgsl("algorithms/shaders/scan.wgsl", ...)``. Files pull in others
  only through explicit ``{% include "..." %}`` / ``{% import "..." as m %}``
  with the same package paths; nothing is concatenated behind their back.
- **Templates.** Jinja2 with ``StrictUndefined`` (as pygfx does): a value a
  template names but the caller did not give raises :class:`ShaderTemplateError`
  instead of rendering an empty string into WGSL. Template values are only for
  what WGSL cannot take as an ``override``: function-scope array sizes,
  unrolled per-row code (``{% for r in range(ROWS) %}``), optional bindings and
  feature variants (``{% if subgroups %}``). Structural constants are
  ``override`` declarations given through pipeline ``constants``; offsets that
  differ per chunk are uniforms, so one pipeline serves every chunk.
- **Cache.** Shader modules and compute pipelines are cached per device
  (:func:`gpuviz.graph.compat.device_cache`: they die with their device),
  keyed by code, runtime checks, entry point and constants. Both caches are
  LRU-bounded (:data:`MODULE_CACHE_SIZE` modules, :data:`PIPELINE_CACHE_SIZE`
  pipelines per device): evicting drops only the cache's reference, so a
  kernel holding a pipeline keeps it, and asking again compiles it anew.
  The bound is a backstop: shader text and constants never depend on data
  sizes (row counts, chunk lengths and counts, offsets go into uniforms), so
  a working set of kernels stays far below it.

Runtime checks: by default wgpu compiles every WGSL index into a clamped
access and gives every loop a hidden 64-bit counter ("forced loop
bounding"). A kernel whose indices are in range and whose loops end by
construction may drop either (``bounds_checks=False``, ``loop_bounding=False``);
where the backend cannot, the module keeps them (slower, never wrong).
The sorts gain from dropping them; the scan and analysis primitives do not. ``GPUVIZ_RUNTIME_CHECKS=1`` set before
a module is first created keeps both checks everywhere.

Does not submit, record or read back anything.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import jinja2

from . import compat
from ..errors import GraphError

__all__ = ["ShaderTemplateError", "wgsl", "shader_module", "compute_pipeline", "runtime_checks_forced",
           "trusted_modules_available", "MODULE_CACHE_SIZE", "PIPELINE_CACHE_SIZE"]

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class ShaderTemplateError(GraphError, LookupError):
    """A WGSL template is missing, or names a value the caller did not give."""


def _u32(value) -> str:
    """``{{ n | u32 }}``: a WGSL u32 literal."""
    return f"{int(value)}u"


def _wgsl_bool(value) -> str:
    """``{{ flag | bool }}``: a WGSL bool literal."""
    return "true" if value else "false"


class _Undefined(jinja2.StrictUndefined):
    """StrictUndefined that also refuses to become a number (``range(ROWS)``
    with ROWS missing raises the undefined error, not a TypeError)."""

    __index__ = __int__ = __float__ = jinja2.StrictUndefined._fail_with_undefined_error


def _template_error(message: str):
    """``{{ error("...") }}``: a template refuses a combination of values."""
    raise ShaderTemplateError(message)


_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(PACKAGE_ROOT),
    undefined=_Undefined,
    trim_blocks=True,  # a line holding only a block tag leaves no blank line
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)
_ENV.filters["u32"] = _u32
_ENV.filters["bool"] = _wgsl_bool
_ENV.globals["error"] = _template_error


def wgsl(name: str, **values) -> str:
    """The WGSL text of the template ``name`` (a path inside the gpuviz
    package) rendered with ``values``.

    Raises
    ------
    ShaderTemplateError
        The file (or one it includes) does not exist, or a value it uses was
        not given.
    """
    try:
        return _ENV.get_template(name).render(**values)
    except jinja2.TemplateNotFound as exc:
        raise ShaderTemplateError(f'WGSL template "{name}" not found (missing "{exc.name}" '
                                  f"under {PACKAGE_ROOT})") from None
    except jinja2.UndefinedError as exc:
        raise ShaderTemplateError(f'WGSL template "{name}" uses a value that was not given ({exc.message}); '
                                  f"given: {sorted(values)}") from None


# ------------------------------------------------------------------ caches
#: Shader modules kept per device (least recently used evicted first).
MODULE_CACHE_SIZE = 256
#: Compute pipelines kept per device (least recently used evicted first).
PIPELINE_CACHE_SIZE = 512
_CACHE_LOCK = threading.Lock()  # graphs may compile on several threads


def _cached(device, name: str, key):
    """The value cached under ``key`` (now the most recently used), or None.
    The per-device dict keeps insertion order, oldest use first."""
    cache = compat.device_cache(device, name)
    with _CACHE_LOCK:
        value = cache.pop(key, None)
        if value is not None:
            cache[key] = value
    return value


def _store(device, name: str, key, value, capacity: int):
    """Cache ``value`` under ``key``, dropping the least recently used
    entries beyond ``capacity``; returns ``value``."""
    cache = compat.device_cache(device, name)
    with _CACHE_LOCK:
        cache.pop(key, None)
        cache[key] = value
        while len(cache) > capacity:
            del cache[next(iter(cache))]
    return value


def runtime_checks_forced() -> bool:
    """``GPUVIZ_RUNTIME_CHECKS=1``: every module keeps wgpu's checks."""
    return os.environ.get("GPUVIZ_RUNTIME_CHECKS", "") not in ("", "0")


def trusted_modules_available(device) -> bool:
    """Whether this device can compile modules without wgpu's runtime checks."""
    api = compat.native_api()
    return api is not None and isinstance(device, api.GPUDevice)


def shader_module(device, code: str, *, label: str = "", bounds_checks: bool = True, loop_bounding: bool = True):
    """The ``GPUShaderModule`` for WGSL ``code`` on ``device``, created once.

    ``bounds_checks=False``: the caller guarantees every index is in range;
    ``loop_bounding=False``: every loop ends. Honoured where the backend
    allows. Compilation errors raise like ``device.create_shader_module``.
    """
    trusted = not runtime_checks_forced() and not (bounds_checks and loop_bounding)
    checks = (bounds_checks, loop_bounding) if trusted else (True, True)
    module = _cached(device, "shader-modules", (code, checks))
    if module is None:
        if trusted:
            module = compat.create_trusted_shader_module(device, code=code, label=label, bounds_checks=bounds_checks,
                                                         loop_bounding=loop_bounding)
        if module is None:
            module = device.create_shader_module(label=label, code=code)
        _store(device, "shader-modules", (code, checks), module, MODULE_CACHE_SIZE)
    return module


def compute_pipeline(device, code: str, *, entry_point: str = "main", constants=None, label: str = "",
                     bounds_checks: bool = True, loop_bounding: bool = True):
    """The compute pipeline (``layout="auto"``) of one entry point of ``code``
    with ``override`` ``constants``, created once per device (while it stays
    among the :data:`PIPELINE_CACHE_SIZE` most recently used)."""
    constants = {k: float(v) if isinstance(v, float) else int(v) for k, v in (constants or {}).items()}
    key = (code, bounds_checks, loop_bounding, runtime_checks_forced(), entry_point,
           tuple(sorted(constants.items())))
    pipeline = _cached(device, "compute-pipelines", key)
    if pipeline is None:
        module = shader_module(device, code, label=label, bounds_checks=bounds_checks, loop_bounding=loop_bounding)
        compute = {"module": module, "entry_point": entry_point}
        if constants:
            compute["constants"] = constants
        pipeline = device.create_compute_pipeline(label=label, layout="auto", compute=compute)
        _store(device, "compute-pipelines", key, pipeline, PIPELINE_CACHE_SIZE)
    return pipeline
