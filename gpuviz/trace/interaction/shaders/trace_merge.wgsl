// GPUTraceInteraction "{id}-merge": runs of equal non-zero cells in a row become
// one record (row, x0, x1, value), appended at an atomic count that is the
// instance_count word of the record's draw (order unspecified).
// Occupancy cells (value = largest name ID + 1) -> merged (value - 1 stored);
// density cells (value = spans covering the column) -> density.
// One invocation per (list, row, 32-column chunk) owns the runs that start
// in its chunk: it counts them, reserves their slots with one atomic, then
// writes them (scanning right past its chunk for a run's end). No barriers,
// and at most rows x width / 32 atomics on each count word.

{% include "trace/interaction/shaders/trace_view.wgsl" %}

override ROW_CELLS: u32;     // cells per row (width capacity)
override ROWS: u32;          // row capacity
override BINS: u32;
override MERGED_WORD: u32;   // instance_count word of record MERGED in commands
override DENSITY_WORD: u32;
const CHUNK: u32 = 32u;

@group(0) @binding(0) var<uniform> view: TraceView;
@group(0) @binding(1) var<storage, read> cells: array<u32>;
@group(0) @binding(2) var<storage, read_write> merged: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> density: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> commands: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read> minimap: array<u32>;

fn minimap_max(j: u32) {
    var m = 0u;
    for (var b = j * CHUNK; b < min(BINS, (j + 1u) * CHUNK); b++) {
        m = max(m, minimap[b]);
    }
    if (m != 0u) {
        atomicMax(&stats[8], m);
    }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * 256u;
    if (j * CHUNK < BINS) {
        minimap_max(j);
    }
    let chunks = (ROW_CELLS + CHUNK - 1u) / CHUNK;
    if (j >= 2u * ROWS * chunks) {
        return;
    }
    let is_density = j >= ROWS * chunks;
    let k = j - select(0u, ROWS * chunks, is_density);
    let r = k / chunks;
    let lo = (k - r * chunks) * CHUNK;
    if (r >= view.row_count || lo >= view.width) {
        return;
    }
    let hi = min(lo + CHUNK, view.width);
    let base = select(0u, ROWS * ROW_CELLS, is_density) + r * ROW_CELLS;
    var prev = select(0u, cells[base + lo - 1u], lo > 0u);
    var count = 0u;
    for (var c = lo; c < hi; c++) {
        let v = cells[base + c];
        count += select(0u, 1u, v != 0u && v != prev);
        prev = v;
    }
    if (count == 0u) {
        return;
    }
    let word = select(MERGED_WORD, DENSITY_WORD, is_density);
    var slot = atomicAdd(&commands[word], count);
    atomicAdd(&stats[select(6u, 7u, is_density)], count);
    prev = select(0u, cells[base + lo - 1u], lo > 0u);
    var top = 0u;
    let row = view.first_row + r;
    for (var c = lo; c < hi; c++) {
        let v = cells[base + c];
        if (v != 0u && v != prev) {
            var x1 = c + 1u;
            while (x1 < view.width && cells[base + x1] == v) {
                x1 += 1u;
            }
            if (is_density) {
                density[slot] = vec4<u32>(row, c, x1, v);
                top = max(top, v);
            } else {
                merged[slot] = vec4<u32>(row, c, x1, v - 1u);
            }
            slot += 1u;
        }
        prev = v;
    }
    if (top != 0u) {
        atomicMax(&stats[5], top);
    }
}
