// GPUSegmentedBVH refit (see gpuviz/spatial/segmented_bvh.py): many
// independent complete binary trees of one leaf-capacity class LEAVES (a
// power of two up to 128), one workgroup per tree, in one dispatch. Node and
// leaf layout per tree as in bvh.wgsl, at the tree's node and leaf offsets.
// Template values: dims (2 or 3).

{% import "spatial/shaders/bvh_nodes.wgsl" as bvh_nodes %}
const DIMS: u32 = {{ dims }}u;
const BIG: f32 = 3.4028234663852886e38;
const NO_ID: u32 = 0xffffffffu;
override LEAVES: u32;   // leaf capacity of every tree of this dispatch
override LEVELS: u32;   // log2(LEAVES) + 1

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct SegParams {
    min_off: u32,
    max_off: u32,
    nodes_off: u32,
    ids_off: u32,
    stats_off: u32,
    table_off: u32,    // first record of this class in the tree table
    trees: u32,        // trees of this class
    rows: u32,         // rows of all trees
    all_trees: u32,
    all_nodes: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: SegParams;
@group(0) @binding(1) var<storage, read> minimum: array<f32>;
@group(0) @binding(2) var<storage, read> maximum: array<f32>;
@group(0) @binding(3) var<storage, read_write> nodes: array<f32>;
@group(0) @binding(4) var<storage, read_write> ids: array<u32>;
@group(0) @binding(5) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read> table: array<vec4<u32>>;  // row start, rows, node offset, leaf offset

var<private> node_base: u32;

{{ bvh_nodes.accessors("(node_base + i)") }}

@compute @workgroup_size(1)
fn clear() {
    var words = array<u32, 8>(P.rows, 0u, 0u, P.rows, P.all_trees, P.all_nodes, 0u, 0u);
    for (var s = 0u; s < 8u; s++) {
        atomicStore(&stats[P.stats_off + s], words[s]);
    }
}

@compute @workgroup_size(128)
fn refit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) t: u32) {
    let tree = wid.x + wid.y * nwg.x;
    // uniform per workgroup: every invocation of a workgroup reads one record
    let record = table[P.table_off + min(tree, P.trees - 1u)];
    node_base = record.z;
    let live = tree < P.trees;
    if (live && t < LEAVES) {
        var lo = vec3<f32>(BIG);
        var hi = vec3<f32>(-BIG);
        var id = NO_ID;
        if (t < record.y) {
            let row = record.x + t;
            id = row;
{{ bvh_nodes.leaf_box("row") }}
        }
        store_node(LEAVES - 1u + t, lo, hi);
        ids[P.ids_off + record.w + t] = id;
    }
{{ bvh_nodes.refit_levels("LEVELS", "live && t < count") }}
}
