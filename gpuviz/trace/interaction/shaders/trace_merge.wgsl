// GPUTraceFrame "{id}-merge": runs of equal non-zero cells in a row become
// one record (row, x0, x1, value), appended at an atomic count that is the
// instance_count word of the record's draw. One invocation per cell; only a
// run's first cell (its left neighbour differs) writes, after scanning right.
// Occupancy cells (value = largest name ID + 1) -> merged (value - 1 stored);
// density cells (value = spans covering the column) -> density.

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

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < BINS) {
        atomicMax(&stats[8], minimap[i]);
    }
    if (i >= 2u * CELLS) {
        return;
    }
    let is_density = i >= CELLS;
    let cell = i - select(0u, CELLS, is_density);
    let r = cell / ROW_CELLS;
    let c = cell - r * ROW_CELLS;
    if (r >= view.row_count || c >= view.width) {
        return;
    }
    let v = cells[i];
    if (v == 0u || (c > 0u && cells[i - 1u] == v)) {
        return;
    }
    var x1 = c + 1u;
    while (x1 < view.width && cells[i + x1 - c] == v) {
        x1 += 1u;
    }
    let row = view.first_row + r;
    if (is_density) {
        let k = atomicAdd(&commands[DENSITY_WORD], 1u);
        density[k] = vec4<u32>(row, c, x1, v);
        atomicAdd(&stats[7], 1u);
        atomicMax(&stats[5], v);
    } else {
        let k = atomicAdd(&commands[MERGED_WORD], 1u);
        merged[k] = vec4<u32>(row, c, x1, v - 1u);
        atomicAdd(&stats[6], 1u);
    }
}
