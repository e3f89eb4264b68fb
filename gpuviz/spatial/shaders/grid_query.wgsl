// GPUGridIndexQuery (see gpuviz/spatial/grid_query.py). Node "cells": clear
// (stats, and the mask when there is one), then ranges: one invocation per
// row of cells (fixed y, z) of the grid; inside the query's cell box the
// row's x-range of cells is one contiguous run of the index's ids, whose
// stored length it writes (0 outside the box). A chained scan of those
// lengths gives each run's first output position and the available total.
// Node "gather": one invocation per candidate position finds its run by
// binary search and copies the row ID (and sets the mask), then finish
// publishes the counts.
//
// Template values: dims (2 or 3), mask (a mask binding exists).

{% import "spatial/shaders/clear.wgsl" as clear %}
{% include "spatial/shaders/grid_common.wgsl" %}

struct QueryParams {
    grid: Grid,
    runs: u32,          // rows of cells: ny * nz
    icap: u32,          // index capacity (ids stored)
    ocap: u32,          // candidate output capacity
    query_off: u32,     // element offsets of the views inside their bound ranges
    offsets_off: u32,
    ids_off: u32,
    out_off: u32,
    mask_off: u32,
    stats_off: u32,
    istats_off: u32,
    mask_rows: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> P: QueryParams;
@group(0) @binding(1) var<storage, read> query: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> lengths: array<u32>;
@group(0) @binding(4) var<storage, read_write> stats: array<atomic<u32>>;  // grid_query.py QUERY_STATS
@group(0) @binding(5) var<storage, read> ids: array<u32>;
@group(0) @binding(6) var<storage, read> run_offsets: array<u32>;
@group(0) @binding(7) var<storage, read_write> out: array<u32>;
{% if mask %}
@group(0) @binding(8) var<storage, read_write> mask: array<u32>;
{% endif %}
@group(0) @binding(9) var<storage, read> istats: array<u32>;  // the index's GRID_STATS

fn QUERY_OFF() -> u32 { return P.query_off; }
{% include "spatial/shaders/query_common.wgsl" %}

struct CellBox {
    valid: bool,
    c0: vec3<u32>,
    c1: vec3<u32>,
    outside: bool,   // the region reaches past the domain
}

fn cell_box() -> CellBox {
    let r = query_region();
    var valid = r.valid;
    var c0 = vec3<u32>(0u);
    var c1 = vec3<u32>(0u);
    var outside = false;
    for (var k = 0u; k < DIMS; k++) {
        let lo = P.grid.lo[k];
        let hi = P.grid.hi[k];
        valid = valid && r.b[k] >= lo && r.a[k] <= hi;
        outside = outside || r.a[k] < lo || r.b[k] > hi;
        c0[k] = axis_cell(P.grid, max(r.a[k], lo), k);
        c1[k] = axis_cell(P.grid, min(r.b[k], hi), k);
    }
    return CellBox(valid, c0, c1, outside && r.valid);
}

{{ clear.kernel("P.mask_rows", "mask[P.mask_off + s] = 0u;") if mask else clear.kernel() }}

// The run of cell row `run` (y + ny * z): its first id position, x0 cell.
fn run_base(b: CellBox, run: u32) -> u32 {
    return P.grid.cells.x * run + b.c0.x;
}

@compute @workgroup_size(256)
fn ranges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let run = linear(gid, nwg);
    if (run >= P.runs) { return; }
    let b = cell_box();
    let y = run % P.grid.cells.y;
    let z = run / P.grid.cells.y;
    var stored = 0u;
    if (b.valid && y >= b.c0.y && y <= b.c1.y && z >= b.c0.z && z <= b.c1.z) {
        let first = P.grid.cells.x * run;
        let start = offsets[P.offsets_off + first + b.c0.x];
        let end = offsets[P.offsets_off + first + b.c1.x + 1u];
        let avail = min(end, P.icap);
        stored = select(0u, avail - start, avail > start);
        let missing = end - max(start, avail);
        if (missing != 0u) { atomicAdd(&stats[P.stats_off + 3u], missing); }
    }
    lengths[run] = stored;
    if (run == 0u) {
        var cells = 0u;
        if (b.valid) {
            cells = (b.c1.x - b.c0.x + 1u) * (b.c1.y - b.c0.y + 1u) * (b.c1.z - b.c0.z + 1u);
        }
        atomicStore(&stats[P.stats_off + 5u], cells);
        atomicStore(&stats[P.stats_off + 4u], select(0u, istats[P.istats_off + 3u], b.outside));
    }
}

@compute @workgroup_size(256)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear(gid, nwg);
    let available = atomicLoad(&stats[P.stats_off + 6u]);
    if (k >= available) { return; }
    // the last run whose first position is <= k (later empty runs start past k)
    var lo = 0u;
    var hi = P.runs;
    loop {
        if (hi - lo <= 1u) { break; }
        let m = (lo + hi) / 2u;
        if (run_offsets[m] <= k) { lo = m; } else { hi = m; }
    }
    let b = cell_box();
    let pos = offsets[P.offsets_off + run_base(b, lo)] + (k - run_offsets[lo]);
    let id = ids[P.ids_off + pos];
    if (k < P.ocap) {
        out[P.out_off + k] = id;
    }
{% if mask %}
    if (id < P.mask_rows) {
        mask[P.mask_off + id] = 1u;
    }
{% endif %}
}

@compute @workgroup_size(1)
fn finish() {
    let available = atomicLoad(&stats[P.stats_off + 6u]);
    let missing = atomicLoad(&stats[P.stats_off + 3u]);
    let candidates = available + missing;
    let written = min(available, P.ocap);
    atomicStore(&stats[P.stats_off], candidates);
    atomicStore(&stats[P.stats_off + 1u], written);
    atomicStore(&stats[P.stats_off + 2u], candidates - written);
}
