// GPUBVHQuery (see gpuviz/spatial/bvh.py and bvh.wgsl for the node layout).
// qclear zeroes the statistics, the leaf hit flags and the mask; traverse
// starts one invocation at each subtree root of one level and walks its
// subtree depth first with an explicit stack of STACK entries (a subtree a
// full stack cannot take is counted in stack_overflow, never silently
// skipped); GPUCompaction then turns the hit flags into leaf IDs in slot
// order; finalize copies them into the capacity-bounded output, sets the
// mask and publishes the counts. Template values: dims, mask.

const DIMS: u32 = {{ dims }}u;
const STACK: u32 = {{ stack }}u;  // traversal stack entries per invocation

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct QParams {
    leaves: u32,
    nodes_off: u32,
    ids_off: u32,
    stats_off: u32,
    first: u32,        // first subtree root
    roots: u32,        // subtree roots
    query_off: u32,
    out_off: u32,
    out_cap: u32,
    mask_off: u32,
    mask_rows: u32,
    bstats_off: u32,
}

@group(0) @binding(0) var<uniform> P: QParams;
@group(0) @binding(1) var<storage, read> nodes: array<f32>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> stats: array<atomic<u32>>;  // bvh.py BVH_QUERY_STATS
@group(0) @binding(4) var<storage, read> query: array<u32>;
@group(0) @binding(5) var<storage, read_write> hits: array<u32>;
@group(0) @binding(6) var<storage, read> compacted: array<u32>;
@group(0) @binding(7) var<storage, read_write> out: array<u32>;
{% if mask %}
@group(0) @binding(8) var<storage, read_write> mask: array<u32>;
{% endif %}
@group(0) @binding(9) var<storage, read> bstats: array<u32>;

fn QUERY_OFF() -> u32 { return P.query_off; }
{% include "spatial/shaders/query_common.wgsl" %}

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 256u;
}

fn overlaps(i: u32, r: Region) -> bool {
    let b = P.nodes_off + 8u * i;
    var ok = true;
    for (var k = 0u; k < DIMS; k++) {
        ok = ok && nodes[b + k] <= r.b[k] && nodes[b + 4u + k] >= r.a[k];
    }
    return ok;
}

@compute @workgroup_size(256)
fn qclear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear(gid, nwg);
    if (s < 8u) { atomicStore(&stats[P.stats_off + s], 0u); }
    if (s < P.leaves) { hits[s] = 0u; }
{% if mask %}
    if (s < P.mask_rows) { mask[P.mask_off + s] = 0u; }
{% endif %}
}

var<workgroup> counters: array<atomic<u32>, 2>;  // visited, stack overflow

@compute @workgroup_size(256)
fn traverse(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) li: u32) {
    if (li < 2u) { atomicStore(&counters[li], 0u); }
    workgroupBarrier();
    let t = linear(gid, nwg);
    let r = query_region();
    if (t < P.roots && r.valid) {
        var stack: array<u32, {{ stack }}>;
        var top = 1u;
        stack[0] = P.first + t;
        var visited = 0u;
        var dropped = 0u;
        let first_leaf = P.leaves - 1u;
        loop {
            if (top == 0u) { break; }
            top -= 1u;
            let i = stack[top];
            visited += 1u;
            if (!overlaps(i, r)) { continue; }
            if (i >= first_leaf) {
                hits[i - first_leaf] = 1u;
                continue;
            }
            for (var c = 2u; c >= 1u; c--) {  // right child first: the left is walked first
                if (top < STACK) {
                    stack[top] = 2u * i + c;
                    top += 1u;
                } else {
                    dropped += 1u;
                }
            }
        }
        atomicAdd(&counters[0], visited);
        atomicAdd(&counters[1], dropped);
    }
    workgroupBarrier();
    if (li < 2u) {
        let v = atomicLoad(&counters[li]);
        if (v != 0u) { atomicAdd(&stats[P.stats_off + 3u + li], v); }
    }
}

@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear(gid, nwg);
    let matches = atomicLoad(&stats[P.stats_off]);
    if (k < min(matches, P.out_cap)) {
        out[P.out_off + k] = compacted[k];
    }
{% if mask %}
    if (k < P.leaves && hits[k] != 0u) {
        let id = ids[P.ids_off + k];
        if (id < P.mask_rows) { mask[P.mask_off + id] = 1u; }
    }
{% endif %}
    if (k == 0u) {
        let written = min(matches, P.out_cap);
        atomicStore(&stats[P.stats_off + 1u], written);
        atomicStore(&stats[P.stats_off + 2u], matches - written);
        atomicStore(&stats[P.stats_off + 5u], bstats[P.bstats_off + 1u]);
    }
}
