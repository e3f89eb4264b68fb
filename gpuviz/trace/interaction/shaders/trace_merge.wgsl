// GPUTraceFrame "{id}-merge": runs of equal non-zero cells in a row become
// one record (row, x0, x1, value), appended at an atomic count that is the
// instance_count word of the record's draw. One invocation per cell; only a
// run's first cell (its left neighbour differs) writes, after scanning right.
// Occupancy cells (value = largest name ID + 1) -> merged (value - 1 stored);
// density cells (value = spans covering the column) -> density.
// Appends are reserved once per workgroup (a shared count, then one global
// atomic per workgroup and list), so the count words see few atomics.

{% include "trace/interaction/shaders/trace_view.wgsl" %}

override ROW_CELLS: u32;     // cells per row (width capacity)
override CELLS: u32;         // occupancy cells (row capacity * ROW_CELLS); density cells follow
override BINS: u32;
override MERGED_WORD: u32;   // instance_count word of record MERGED in commands
override DENSITY_WORD: u32;

@group(0) @binding(0) var<uniform> view: TraceView;
@group(0) @binding(1) var<storage, read> cells: array<u32>;
@group(0) @binding(2) var<storage, read_write> merged: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> density: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> commands: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read> minimap: array<u32>;

var<workgroup> counts: array<atomic<u32>, 2>;   // runs of this workgroup: merged, density
var<workgroup> bases: array<u32, 2>;
var<workgroup> maxima: array<atomic<u32>, 2>;   // density max, minimap max

// (x1, value, kind): kind 0 merged run start, 1 density run start, 2 nothing.
fn run_at(i: u32) -> vec3<u32> {
    if (i >= 2u * CELLS) {
        return vec3<u32>(0u, 0u, 2u);
    }
    let is_density = i >= CELLS;
    let cell = i - select(0u, CELLS, is_density);
    let r = cell / ROW_CELLS;
    let c = cell - r * ROW_CELLS;
    if (r >= view.row_count || c >= view.width) {
        return vec3<u32>(0u, 0u, 2u);
    }
    let v = cells[i];
    if (v == 0u || (c > 0u && cells[i - 1u] == v)) {
        return vec3<u32>(0u, 0u, 2u);
    }
    var x1 = c + 1u;
    while (x1 < view.width && cells[i + x1 - c] == v) {
        x1 += 1u;
    }
    return vec3<u32>(x1, v, select(0u, 1u, is_density));
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (lid < 2u) {
        atomicStore(&counts[lid], 0u);
        atomicStore(&maxima[lid], 0u);
    }
    workgroupBarrier();
    if (i < BINS) {
        atomicMax(&maxima[1], minimap[i]);
    }
    let run = run_at(i);
    var slot = 0u;
    if (run.z < 2u) {
        slot = atomicAdd(&counts[run.z], 1u);
        if (run.z == 1u) {
            atomicMax(&maxima[0], run.y);
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        let m = atomicLoad(&counts[0]);
        let d = atomicLoad(&counts[1]);
        bases[0] = select(0u, atomicAdd(&commands[MERGED_WORD], m), m != 0u);
        bases[1] = select(0u, atomicAdd(&commands[DENSITY_WORD], d), d != 0u);
        if (m != 0u) { atomicAdd(&stats[6], m); }
        if (d != 0u) { atomicAdd(&stats[7], d); }
        let dmax = atomicLoad(&maxima[0]);
        if (dmax != 0u) { atomicMax(&stats[5], dmax); }
        let mmax = atomicLoad(&maxima[1]);
        if (mmax != 0u) { atomicMax(&stats[8], mmax); }
    }
    workgroupBarrier();
    if (run.z < 2u) {
        let is_density = run.z == 1u;
        let cell = i - select(0u, CELLS, is_density);
        let r = cell / ROW_CELLS;
        let record = vec4<u32>(view.first_row + r, cell - r * ROW_CELLS, run.x, run.y - select(1u, 0u, is_density));
        if (is_density) {
            density[bases[1] + slot] = record;
        } else {
            merged[bases[0] + slot] = record;
        }
    }
}
