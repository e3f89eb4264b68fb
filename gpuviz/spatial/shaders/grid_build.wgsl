// GPUGridIndex build (see gpuviz/spatial/grid.py): clear, key (one dispatch
// per point chunk), then, after the chained scan of the cell counts and the
// stable sort of (cell key, row) pairs that later nodes run, finalize.
//
// key writes each row's cell (or SKIP for a rejected row, which the stable
// sort moves behind every accepted row) and its row ID, and counts rows per
// cell. finalize copies the first min(count, capacity) sorted row IDs into
// ids and publishes count, overflow and the closing offset.
//
// Template values: dims (2 or 3), source_ids (the key pass reads explicit
// row IDs from binding 9 instead of numbering rows).

{% import "spatial/shaders/clear.wgsl" as clear %}
{% include "spatial/shaders/grid_common.wgsl" %}

const SKIP: u32 = 0xffffffffu;

struct BuildParams {
    grid: Grid,
    n: u32,            // rows of this chunk
    base: u32,         // global row of its first row
    points_off: u32,   // element offsets of the views inside their bound ranges
    stats_off: u32,
    offsets_off: u32,
    ids_off: u32,
    capacity: u32,
    rows: u32,         // rows in all chunks
    source_off: u32,   // element offset of this chunk's explicit IDs
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> P: BuildParams;
@group(0) @binding(1) var<storage, read> points: array<f32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> rowids: array<u32>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;  // grid.py GRID_STATS
@group(0) @binding(6) var<storage, read> sorted_rows: array<u32>;
@group(0) @binding(7) var<storage, read_write> ids: array<u32>;
@group(0) @binding(8) var<storage, read_write> offsets: array<u32>;

{% if source_ids %}
@group(0) @binding(9) var<storage, read> source_ids: array<u32>;
{% endif %}

var<workgroup> rejected: array<atomic<u32>, 2>;  // non-finite, out of domain

{{ clear.kernel("P.grid.cells.w", "atomicStore(&counts[s], 0u);") }}

// 0 accepted, 1 non-finite, 2 out of domain; the cell in .y
fn classify(i: u32) -> vec2<u32> {
    var c = vec3<u32>(0u);
    var outcome = 0u;
    for (var k = 0u; k < DIMS; k++) {
        let x = points[P.points_off + i * DIMS + k];
        if (!is_finite(x)) {
            outcome = 1u;  // non-finite wins over out of domain
        } else if (outcome == 0u) {
            if (x < P.grid.lo[k] || x > P.grid.hi[k]) {
                outcome = 2u;
            } else {
                c[k] = axis_cell(P.grid, x, k);
            }
        }
    }
    if (outcome == 1u || outcome == 2u) {
        return vec2<u32>(outcome, SKIP);
    }
    return vec2<u32>(0u, linear_cell(P.grid, c));
}

@compute @workgroup_size(256)
fn key(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) li: u32) {
    if (li < 2u) { atomicStore(&rejected[li], 0u); }
    workgroupBarrier();
    let i = linear(gid, nwg);
    if (i < P.n) {
        let r = classify(i);
        let row = P.base + i;
        keys[row] = r.y;
{% if source_ids %}
        rowids[row] = source_ids[P.source_off + i];
{% else %}
        rowids[row] = row;
{% endif %}
        if (r.x == 0u) {
            atomicAdd(&counts[r.y], 1u);
        } else {
            atomicAdd(&rejected[r.x - 1u], 1u);
        }
    }
    workgroupBarrier();
    if (li < 2u) {
        let v = atomicLoad(&rejected[li]);
        if (v != 0u) { atomicAdd(&stats[P.stats_off + 2u + li], v); }
    }
}

@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear(gid, nwg);
    let count = atomicLoad(&stats[P.stats_off]);
    if (k < min(count, P.capacity)) {
        ids[P.ids_off + k] = sorted_rows[k];
    }
    if (k == 0u) {
        offsets[P.offsets_off + P.grid.cells.w] = count;
        atomicStore(&stats[P.stats_off + 1u], select(0u, count - P.capacity, count > P.capacity));
        atomicStore(&stats[P.stats_off + 4u], P.rows);
        atomicStore(&stats[P.stats_off + 5u], P.capacity);
    }
}
