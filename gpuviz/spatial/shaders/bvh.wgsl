// GPUBVH refit and GPUBVHQuery traversal (see gpuviz/spatial/bvh.py).
//
// Nodes are a complete binary tree in level order: node i has children
// 2i + 1 and 2i + 2; the L leaves are nodes L - 1 .. 2L - 2, leaf slot s
// holding source row s. A node is 8 words: min.xyz, pad, max.xyz, pad
// (float32 bits). An empty node (a slot without a row, or a row with
// non-finite or inverted bounds) is the finite box min = +MAX, max = -MAX:
// it unions as nothing and overlaps no finite region.
//
// Refit entries: clear, leaves, level (one dispatch per level, bottom up),
// or small (all of it in one workgroup, for at most 128 leaves).
// Query entries: qclear, traverse, finalize (GPUCompaction runs between
// traverse and finalize). Template values: dims (2 or 3), mask.

{% import "spatial/shaders/bvh_nodes.wgsl" as bvh_nodes %}
const DIMS: u32 = {{ dims }}u;
const BIG: f32 = 3.4028234663852886e38;
const NO_ID: u32 = 0xffffffffu;

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct BVHParams {
    rows: u32,          // source rows
    leaves: u32,        // leaf capacity L (a power of two)
    min_off: u32,       // element offsets of the views inside their bound ranges
    max_off: u32,
    nodes_off: u32,
    ids_off: u32,
    stats_off: u32,
    first: u32,         // level pass: first node of the level; traverse: first subtree root
    count: u32,         // level pass: nodes of the level; traverse: subtree roots
    levels: u32,
    query_off: u32,
    out_off: u32,
    out_cap: u32,
    mask_off: u32,
    mask_rows: u32,
    bstats_off: u32,    // the BVH's stats (query)
}

@group(0) @binding(0) var<uniform> P: BVHParams;
@group(0) @binding(1) var<storage, read> minimum: array<f32>;
@group(0) @binding(2) var<storage, read> maximum: array<f32>;
@group(0) @binding(3) var<storage, read_write> nodes: array<f32>;
@group(0) @binding(4) var<storage, read_write> ids: array<u32>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 256u;
}

{{ bvh_nodes.accessors("i") }}

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < 8u) {
        atomicStore(&stats[P.stats_off + gid.x], 0u);
    }
}

fn leaf(s: u32) {
    if (s == 0u) {
        let count = min(P.rows, P.leaves);
        atomicStore(&stats[P.stats_off], count);
        atomicStore(&stats[P.stats_off + 1u], P.rows - count);
        atomicStore(&stats[P.stats_off + 3u], P.rows);
        atomicStore(&stats[P.stats_off + 4u], P.leaves);
        atomicStore(&stats[P.stats_off + 5u], P.levels);
    }
    if (s >= P.leaves) { return; }
    var lo = vec3<f32>(BIG);
    var hi = vec3<f32>(-BIG);
    var id = NO_ID;
    if (s < P.rows) {
        id = s;
{{ bvh_nodes.leaf_box("s") }}
    }
    store_node(P.leaves - 1u + s, lo, hi);
    ids[P.ids_off + s] = id;
}

@compute @workgroup_size(256)
fn leaves(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    leaf(linear(gid, nwg));
}

// The whole refit of a tree of at most 128 leaves in one workgroup: the
// statistics cleared, the leaves loaded, then each level from storage
// barrier to storage barrier (P.levels is uniform, so every invocation
// reaches every barrier).
@compute @workgroup_size(128)
fn small(@builtin(local_invocation_index) t: u32) {
    if (t < 8u) {
        atomicStore(&stats[P.stats_off + t], 0u);
    }
    storageBarrier();
    leaf(t);
{{ bvh_nodes.refit_levels("P.levels", "t < count") }}
}

@compute @workgroup_size(256)
fn level(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear(gid, nwg);
    if (t >= P.count) { return; }
    let i = P.first + t;
    store_node(i, min(node_min(2u * i + 1u), node_min(2u * i + 2u)),
               max(node_max(2u * i + 1u), node_max(2u * i + 2u)));
}
