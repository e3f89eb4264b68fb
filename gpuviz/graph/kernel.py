"""ComputeKernel: one WGSL entry point, its bindings and its dispatch.

A kernel is normally one graph node. It records into a caller-provided
compute pass and never decides when the queue is submitted.

Binding adaptation lives here because only the kernel knows its storage
layout: a view at an arbitrary four-byte offset is bound through the
offset-aligned range that contains it, and the shader adds the view's
element offset (pass :meth:`ComputeKernel.element_offset` as an ``override``
constant). Dispatches wider than the per-dimension limit are tiled in 2-D;
shaders recover the linear workgroup index as
``wid.x + wid.y * nwg.x`` (``@builtin(workgroup_id)``, ``@builtin(num_workgroups)``)
and return past their real count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import wgpu

from .compat import is_destroyed
from ..errors import GraphError, GraphStateError, GraphTypeError, GraphValidationError
from .resources import GraphBufferHandle, GraphDataView
from .shaders import compute_pipeline

__all__ = ["ComputeKernel"]

_BIND_GROUP_CACHE_LIMIT = 64
_ENCODING_CACHE_LIMIT = 256


class ComputeKernel:
    """One compiled compute pipeline plus binding and dispatch helpers.

    Parameters
    ----------
    device : wgpu.GPUDevice
    code : str
        WGSL source; bindings live in ``@group(0)``.
    entry_point : str
    constants : dict, optional
        Values for WGSL ``override`` declarations (structural constants such
        as capacity or a view's element offset).
    label : str, optional
    bounds_checks, loop_bounding : bool
        False compiles the shader without wgpu's bounds checks (every index
        is in range by construction) or without its forced loop bounding
        (every loop ends by construction); see :mod:`gpuviz.graph.shaders`.
        Both default to True: a custom kernel keeps wgpu's protection.

    Notes
    -----
    Shader modules and pipelines are cached per device by the shader builder
    (:mod:`gpuviz.graph.shaders`), so rebuilding a graph reuses them. Does
    not create buffers, submit, or read back.

    A destroyed buffer is refused (:class:`GraphStateError`) when a bind
    group is made for it, and on every dispatch without a graph frame.
    Inside a graph, bind groups are reused (found by the encoding's
    ``resources_key``, the node and the bindings' objects) and the compiled
    graph's ``encode`` checks its imports, transients and node-owned objects
    instead, once per encoding (O(1) while none was destroyed); a raw buffer
    a node binds without declaring or owning it is the node's own
    responsibility.
    """

    def __init__(self, device, *, code: str, entry_point: str = "main", constants=None, label: str | None = None,
                 bounds_checks: bool = True, loop_bounding: bool = True):
        name = label or entry_point
        if not isinstance(device, wgpu.GPUDevice):
            raise GraphTypeError(f'ComputeKernel "{name}" needs a wgpu.GPUDevice (got {type(device).__name__})')
        for arg, value in (("code", code), ("entry_point", entry_point)):
            if not isinstance(value, str):
                raise GraphTypeError(f'ComputeKernel "{name}" {arg} must be a str (got {type(value).__name__})')
        if constants is not None and not isinstance(constants, Mapping):
            raise GraphTypeError(f'ComputeKernel "{name}" constants must be a mapping of override name to value '
                                 f"(got {type(constants).__name__})")
        self.device = device
        self.entry_point = entry_point
        self.label = label or entry_point
        self.constants = dict(constants or {})
        self.pipeline = compute_pipeline(device, code, entry_point=entry_point, constants=self.constants,
                                         label=self.label, bounds_checks=bounds_checks,
                                         loop_bounding=loop_bounding)
        self._layout = self.pipeline.get_bind_group_layout(0)
        self._bind_groups = {}
        # (frame.resources_key, frame.node, bindings' items) -> group: a graph encoding without overrides
        # finds its group without resolving a view (the key fixes every physical buffer and range)
        self._encoding_groups = {}
        limits = device.limits
        self._storage_alignment = int(limits["min-storage-buffer-offset-alignment"])
        self._max_groups = int(limits["max-compute-workgroups-per-dimension"])

    # -------------------------------------------------------------- binding
    @staticmethod
    def element_offset(view: GraphDataView, device) -> int:
        """The view's offset in 4-byte elements inside the aligned range that
        :meth:`dispatch` binds for it."""
        start, _size = _aligned_range(view, int(device.limits["min-storage-buffer-offset-alignment"]))
        return (view.byte_offset - start) // 4

    def bind_group(self, frame, *, bindings: dict):
        """A bind group for ``{binding: view | handle | wgpu.GPUBuffer |
        (buffer, offset, size)}``, cached by physical buffers and ranges.

        ``frame`` (the graph's, or None outside a graph) resolves views and
        handles. Raises :class:`GraphStateError` for a destroyed buffer and
        :class:`GraphValidationError` / :class:`GraphTypeError` for what wgpu
        refuses to bind, before anything is recorded.

        Inside a graph encoding without overrides (``frame.resources_key`` set)
        the group is found by the bindings' objects alone, unresolved: the same
        handles and views in the same mapping bind the same ranges.
        """
        fast = getattr(frame, "resources_key", None)
        if fast is not None:
            try:
                fast = (fast, frame.node, tuple(bindings.items()))
                group = self._encoding_groups.get(fast)
            except (AttributeError, TypeError):  # not a dict, or an unhashable resource: resolve it below
                fast = group = None
            if group is not None:
                return group
        group = self._resolved_group(frame, bindings)
        if fast is not None:
            if len(self._encoding_groups) >= _ENCODING_CACHE_LIMIT:
                self._encoding_groups.clear()
            self._encoding_groups[fast] = group
        return group

    def _resolved_group(self, frame, bindings: dict):
        """:meth:`bind_group` by physical buffers and ranges (views resolved through ``frame``)."""
        entries = []
        key = []
        try:
            for binding, resource in sorted(bindings.items()):
                buffer, offset, size = self._resolve(frame, resource)
                entries.append({"binding": binding, "resource": {"buffer": buffer, "offset": offset, "size": size}})
                # The buffer itself, not its id(): the key keeps it alive, so an
                # id reused after garbage collection cannot hit a stale group.
                key.append((binding, buffer, offset, size))
            key = tuple(key)
            cached = self._bind_groups.get(key)
        except GraphError:
            raise
        except (AttributeError, TypeError, ValueError) as error:  # not a dict, or a view without a frame
            raise GraphTypeError(f'ComputeKernel "{self.label}" bindings must map binding numbers to views, '
                                 f"handles, buffers or (buffer, offset, size) ({error})") from None
        if frame is None:  # outside a graph no encode checked for destroyed buffers
            self._check_alive(entries)
        if cached is not None:
            return cached
        self._check_alive(entries)
        if len(self._bind_groups) >= _BIND_GROUP_CACHE_LIMIT:
            self._bind_groups.clear()
        try:
            group = self.device.create_bind_group(label=self.label, layout=self._layout, entries=entries)
        except wgpu.GPUError as error:
            raise GraphValidationError(f'ComputeKernel "{self.label}" cannot bind {_describe(entries)}: '
                                       f"{error}") from error
        except (AttributeError, TypeError, ValueError, KeyError) as error:
            raise GraphTypeError(f'ComputeKernel "{self.label}" cannot bind {_describe(entries)}: '
                                 f"{error!r}") from error
        self._bind_groups[key] = group
        return group

    def _check_alive(self, entries) -> None:
        for entry in entries:
            buffer = entry["resource"]["buffer"]
            if is_destroyed(buffer):  # binding it would abort the process at submit
                raise GraphStateError(f'ComputeKernel "{self.label}" binding {entry["binding"]} uses destroyed '
                                      f'buffer "{getattr(buffer, "label", "")}"')

    def _resolve(self, frame, resource):
        if isinstance(resource, GraphDataView):
            buffer = frame.buffer(resource)
            start, size = _aligned_range(resource, self._storage_alignment)
            if start + size > buffer.size:  # an empty view at the very end of its buffer
                start = max(0, (buffer.size - 4) // self._storage_alignment * self._storage_alignment)
                size = 4
            return buffer, start, size
        if isinstance(resource, GraphBufferHandle):
            buffer = frame.buffer(resource)
            return buffer, 0, buffer.size
        if isinstance(resource, wgpu.GPUBuffer):
            return resource, 0, resource.size
        if isinstance(resource, tuple) and len(resource) == 3:
            return resource
        raise GraphValidationError(f'ComputeKernel "{self.label}" cannot bind {resource!r}')

    # ------------------------------------------------------------- dispatch
    def workgroup_grid(self, workgroups: int) -> tuple:
        """Split a linear workgroup count into a grid within the device limit."""
        if workgroups <= self._max_groups:
            return (workgroups, 1, 1)
        rows = math.ceil(workgroups / self._max_groups)
        if rows > self._max_groups:
            raise GraphValidationError(f'ComputeKernel "{self.label}" needs {workgroups} workgroups, more than '
                                       f"{self._max_groups}^2")
        return (self._max_groups, rows, 1)

    def dispatch(self, compute_pass, frame, *, bindings: dict, workgroups) -> None:
        """Record ``set_pipeline``, ``set_bind_group`` and the dispatch.

        ``workgroups`` is a linear count (tiled past the per-dimension limit;
        zero records nothing) or an explicit ``(x, y, z)`` grid.
        """
        try:
            if type(workgroups) is int and 0 < workgroups <= self._max_groups:  # the common case, first
                grid = (workgroups, 1, 1)
            else:
                grid = workgroups if isinstance(workgroups, tuple) else self.workgroup_grid(int(workgroups))
        except (TypeError, ValueError):
            raise GraphTypeError(f'ComputeKernel "{self.label}" workgroups must be an int or an (x, y, z) '
                                 f"tuple (got {workgroups!r})") from None
        if min(grid) <= 0:  # one comparison on the hot path for both cases
            if min(grid) < 0:
                raise GraphValidationError(f'ComputeKernel "{self.label}" workgroups must be >= 0 '
                                           f"(got {workgroups!r})")
            return
        compute_pass.set_pipeline(self.pipeline)
        compute_pass.set_bind_group(0, self.bind_group(frame, bindings=bindings))
        compute_pass.dispatch_workgroups(*grid)

    def dispatch_indirect(self, compute_pass, frame, *, bindings: dict, indirect_buffer, indirect_offset: int = 0):
        """Record a dispatch whose workgroup counts a GPU buffer holds."""
        compute_pass.set_pipeline(self.pipeline)
        compute_pass.set_bind_group(0, self.bind_group(frame, bindings=bindings))
        compute_pass.dispatch_workgroups_indirect(indirect_buffer, indirect_offset)


def _aligned_range(view: GraphDataView, alignment: int) -> tuple:
    """(start, size) of the alignment-aligned byte range containing ``view``."""
    start = view.byte_offset // alignment * alignment
    end = view.byte_offset + view.byte_length
    size = max(4, -(-(end - start) // 4) * 4)
    return start, size


def _describe(entries) -> str:
    """``binding 0 = "label" [offset, +size]`` for messages."""
    return ", ".join(f'binding {e["binding"]} = "{getattr(e["resource"]["buffer"], "label", e["resource"]["buffer"])}" '
                     f'[{e["resource"]["offset"]}, +{e["resource"]["size"]}]' for e in entries)
