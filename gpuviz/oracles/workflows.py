"""Workflow-layer oracles: numpy models of GPUVisibilityWorkflow's contract
(masks, frustum spheres, time intervals, level of detail), shared by the
workflow tests, the culling widget's tests and the visibility and culling
benchmarks."""

from __future__ import annotations

import numpy as np

__all__ = ["visibility", "visibility_float32", "frustum_spheres"]


def visibility(n, *, masks=(), spheres=None, planes=None, intervals=None, window=None, lod=None, lod_range=None,
               source_ids=None):
    """(kept IDs, 0/1 mask) of the workflow's whole contract, non-finite
    inputs included. Computes in float64: exact where the inputs are small
    dyadic fractions (the tests' data), so the GPU's float32 agrees."""
    keep = np.ones(n, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for m in masks:
            keep &= np.asarray(m)[:n] != 0
        if spheres is not None:
            s = np.asarray(spheres, np.float64)[:n].reshape(n, 4)
            p = np.asarray(planes, np.float64).reshape(-1, 4)[:6]
            dist = s[:, :3] @ p[:, :3].T + p[:, 3]
            ok = np.isfinite(s).all(1) & (s[:, 3] >= 0) & (dist >= -s[:, 3:4]).all(1)
            keep &= ok & ~np.isnan(p).any()
        if intervals is not None:
            iv = np.asarray(intervals, np.float64)[:n].reshape(n, 2)
            t0, t1, dmin = np.asarray(window, np.float64).ravel()[:3]
            ok = np.isfinite(iv).all(1) & (iv[:, 1] >= t0) & (iv[:, 0] <= t1) & (iv[:, 1] - iv[:, 0] >= dmin)
            keep &= ok & (t0 <= t1) & ~np.isnan([t0, t1, dmin]).any()
        if lod is not None:
            v = np.asarray(lod, np.float64)[:n]
            lo, hi = np.asarray(lod_range, np.float64).ravel()[:2]
            keep &= np.isfinite(v) & (lo <= v) & (v < hi) & ~np.isnan([lo, hi]).any()
    ids = np.flatnonzero(keep).astype(np.uint32)
    if source_ids is not None:
        ids = np.asarray(source_ids, np.uint32)[:n][keep]
    return ids, keep.astype(np.uint32)


def visibility_float32(*, mask=None, intervals=None, window=None, spheres=None, planes=None):
    """Kept row indices (uint32) of the mask / interval / sphere predicates
    over finite float32 inputs of any value, with the interval arithmetic in
    float32 as the GPU does it (the benchmarks' random data);
    :func:`visibility` is the whole contract."""
    n = next(a.shape[0] for a in (mask, intervals, spheres) if a is not None)
    keep = np.ones(n, bool)
    if mask is not None:
        keep &= mask != 0
    if intervals is not None:
        t0, t1, dmin = (float(v) for v in window.ravel()[:3])
        start, end = intervals[:, 0], intervals[:, 1]
        keep &= (end >= t0) & (start <= t1) & (end - start >= dmin)
    if spheres is not None:
        p = planes.reshape(6, 4)
        dist = spheres[:, :3] @ p[:, :3].T + p[:, 3]
        keep &= (spheres[:, 3] >= 0) & (dist >= -spheres[:, 3:4]).all(1)
    return np.flatnonzero(keep).astype(np.uint32)


def frustum_spheres(spheres, planes, *, tolerance=None):
    """Kept rows (uint32, ascending) of the sphere predicate: finite rows with
    r >= 0 and ``dot(n, c) + d >= -r`` for all six planes, in float64.

    With ``tolerance`` (relative, e.g. 1e-5) returns ``(kept, close)``:
    ``close`` the finite rows within ``tolerance`` of a plane, too close to
    call in float32 (a GPU may keep or drop them)."""
    s = np.asarray(spheres).astype(np.float64)
    p = np.asarray(planes).reshape(-1, 4)[:6].astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        margin = s[:, :3] @ p[:, :3].T + p[:, 3] + s[:, 3:4]  # >= 0 inside each plane
        ok = np.isfinite(s).all(1) & (s[:, 3] >= 0)
        keep = np.flatnonzero(ok & (margin >= 0).all(1)).astype(np.uint32)
        if tolerance is None:
            return keep
        scale = np.abs(s[:, :3]).sum(1, keepdims=True) + np.abs(p[:, 3]) + np.abs(s[:, 3:4]) + 1.0
        close = ok & (np.abs(margin) < tolerance * scale).any(1)
    return keep, np.flatnonzero(close)
