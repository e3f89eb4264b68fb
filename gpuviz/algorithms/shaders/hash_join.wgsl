// GPUHashJoin after the lookup and the exclusive scan of its found flags:
// scatter writes (left row, value) pairs at their scanned offsets while they
// fit the capacity; finalize records how many were written and how many
// did not fit (hash_table.py LOOKUP_STATS words 6 and 7).

struct JoinParams {
    n: u32,          // left rows of this join
    base: u32,       // global row of its first left row
    capacity: u32,   // pairs rows
    pairs_off: u32,  // element offsets of the views inside their bound ranges
    count_off: u32,
    stats_off: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: JoinParams;
@group(0) @binding(1) var<storage, read> found: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> pairs: array<u32>;
@group(0) @binding(5) var<storage, read> count: array<u32>;
@group(0) @binding(6) var<storage, read_write> stats: array<u32>;

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.n || found[i] == 0u) { return; }
    let o = offsets[i];
    if (o < P.capacity) {
        let p = P.pairs_off + 2u * o;
        pairs[p] = P.base + i;
        pairs[p + 1u] = values[i];
    }
}

@compute @workgroup_size(1)
fn finalize() {
    let required = count[P.count_off];
    let written = min(required, P.capacity);
    stats[P.stats_off + 6u] = written;
    stats[P.stats_off + 7u] = required - written;
}
