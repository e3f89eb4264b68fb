// Bounded lookup of packed keys in a GPUHashIndex table (GPUHashIndexQuery,
// GPUHashJoin). reset: zero the statistics and copy the index's overflow;
// lookup: one row per invocation, one dispatch per key chunk.
//
// A present key sits at most the index's longest insert probe from its home
// slot, so a lookup visits at most that many slots (and stops at an empty
// one): a miss costs no more than the longest chain, even in a full table.
//
// Template values: key_words (1 or 2), found (write a 0/1 found mask).

{% include "algorithms/shaders/hash_common.wgsl" %}
{% import "algorithms/shaders/hash_stats.wgsl" as hash_stats %}

struct LookupParams {
    n: u32,             // rows of this chunk
    keys_off: u32,      // element offsets of the views inside their bound ranges
    out_off: u32,
    found_off: u32,
    stats_off: u32,
    index_stats_off: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: LookupParams;
@group(0) @binding(1) var<storage, read> table: array<vec{{ 2 if key_words == 1 else 4 }}<u32>>;
@group(0) @binding(2) var<storage, read> index_stats: array<u32>;  // hash_table.py INDEX_STATS
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> output: array<u32>;
{% if found %}
@group(0) @binding(5) var<storage, read_write> found: array<u32>;
{% endif %}
@group(0) @binding(6) var<storage, read_write> stats: array<atomic<u32>>;  // hash_table.py LOOKUP_STATS

// found, invalid, max probe, total probe low, high
var<workgroup> counters: array<atomic<u32>, 5>;

@compute @workgroup_size(256)
fn reset(@builtin(local_invocation_index) li: u32) {
    if (li < 8u) {
        atomicStore(&stats[P.stats_off + li], select(0u, index_stats[P.index_stats_off + 2u], li == 5u));
    }
}

fn query_key(i: u32) -> vec2<u32> {
{% if key_words == 1 %}
    return vec2<u32>(keys[P.keys_off + i], 0u);
{% else %}
    let p = P.keys_off + 2u * i;
    return vec2<u32>(keys[p], keys[p + 1u]);
{% endif %}
}

// (value, outcome, slots visited): outcome 0 miss, 1 found, 2 invalid.
fn find(key: vec2<u32>, limit: u32) -> vec3<u32> {
    if (is_empty_key(key)) { return vec3<u32>(NOT_FOUND, 2u, 0u); }
    var slot = home_slot(key);
    for (var probes = 0u; probes < limit; probes++) {
        let r = table[slot];
{% if key_words == 1 %}
        let stored = vec2<u32>(r.x, 0u);
{% else %}
        let stored = r.xy;
{% endif %}
        if (same_key(stored, key)) { return vec3<u32>(r[VALUE_WORD], 1u, probes + 1u); }
        if (is_empty_key(stored)) { return vec3<u32>(NOT_FOUND, 0u, probes + 1u); }
        slot = (slot + 1u) & (CAPACITY - 1u);
    }
    return vec3<u32>(NOT_FOUND, 0u, limit);
}

@compute @workgroup_size(256)
fn lookup(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    if (li < 5u) { atomicStore(&counters[li], 0u); }
    workgroupBarrier();
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        let limit = min(index_stats[P.index_stats_off + 4u], CAPACITY);
        let r = find(query_key(i), limit);
        output[P.out_off + i] = r.x;
{% if found %}
        found[P.found_off + i] = select(0u, 1u, r.y == 1u);
{% endif %}
        if (r.y != 0u) { atomicAdd(&counters[r.y - 1u], 1u); }
        atomicMax(&counters[2], r.z);
        let old = atomicAdd(&counters[3], r.z);
        if (carry_of(old, r.z) != 0u) { atomicAdd(&counters[4], 1u); }
    }
    workgroupBarrier();
{{ hash_stats.flush(5, 2, 3) }}}
