// GPUHashIndex build: clear, insert (one dispatch per key chunk, in chunk
// order), finalize. See hash_index.py for the contract.
//
// Insert claims a slot by compare-exchanging its value word from 0 (empty)
// to the claiming row + 1, then stores the key words. A row that meets a
// claimed slot compares keys without waiting for those stores: a claim by a
// row of the chunk being inserted is compared against that row's source
// key; a claim from an earlier chunk's dispatch against the stored key
// words (complete: dispatches are ordered). Equal keys lower the claim with
// atomicMin, so the lowest source row wins whatever the order of the race.
// Finalize turns each claim into the stored value.
//
// Template values: key_words (1 or 2), values (finalize reads a values view).

{% include "algorithms/shaders/hash_common.wgsl" %}
{% import "algorithms/shaders/hash_stats.wgsl" as hash_stats %}

override MAX_PROBE: u32;  // slots one row may visit before it counts as overflow

struct BuildParams {
    n: u32,           // rows of this chunk
    base: u32,        // global row of its first row
    keys_off: u32,    // element offsets of the views inside their bound ranges
    values_off: u32,
    stats_off: u32,
    rows: u32,        // source rows in all chunks
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: BuildParams;
@group(0) @binding(1) var<storage, read_write> table: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> stats: array<atomic<u32>>;  // hash_table.py INDEX_STATS
@group(0) @binding(3) var<storage, read> keys: array<u32>;
{% if values %}
@group(0) @binding(4) var<storage, read> values: array<u32>;
{% endif %}

// inserted, duplicates, overflow, invalid, max probe, total probe low, high
var<workgroup> counters: array<atomic<u32>, 7>;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 256u;
}

fn source_key(i: u32) -> vec2<u32> {
{% if key_words == 1 %}
    return vec2<u32>(keys[P.keys_off + i], 0u);
{% else %}
    let p = P.keys_off + 2u * i;
    return vec2<u32>(keys[p], keys[p + 1u]);
{% endif %}
}

fn stored_key(slot: u32) -> vec2<u32> {
    let b = slot * RECORD;
    return vec2<u32>(atomicLoad(&table[b]), select(0u, atomicLoad(&table[b + 1u]), KEY_WORDS == 2u));
}

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear(gid, nwg);
    if (s < 8u) {
        atomicStore(&stats[P.stats_off + s], 0u);
    }
    if (s >= CAPACITY) { return; }
    let b = s * RECORD;
    atomicStore(&table[b], EMPTY);
{% if key_words == 2 %}
    atomicStore(&table[b + 1u], EMPTY);
    atomicStore(&table[b + 3u], 0u);
{% endif %}
    atomicStore(&table[b + VALUE_WORD], 0u);
}

// Inserts row i of the chunk; returns (outcome, slots visited), outcome
// 0 inserted, 1 duplicate, 2 overflow, 3 invalid.
fn insert_row(i: u32) -> vec2<u32> {
    let key = source_key(i);
    if (is_empty_key(key)) { return vec2<u32>(3u, 0u); }
    let claim = P.base + i + 1u;
    var slot = home_slot(key);
    var probes = 0u;
    loop {
        if (probes >= MAX_PROBE) { return vec2<u32>(2u, probes); }
        let word = slot * RECORD + VALUE_WORD;
        var owner = atomicLoad(&table[word]);
        if (owner == 0u) {
            let r = atomicCompareExchangeWeak(&table[word], 0u, claim);
            if (r.exchanged) {
                atomicStore(&table[slot * RECORD], key.x);
{% if key_words == 2 %}
                atomicStore(&table[slot * RECORD + 1u], key.y);
{% endif %}
                return vec2<u32>(0u, probes + 1u);
            }
            owner = r.old_value;
            if (owner == 0u) { continue; }  // a spurious weak failure: try the slot again
        }
        probes += 1u;
        let row = owner - 1u;
        var other: vec2<u32>;
        if (row >= P.base && row - P.base < P.n) {
            other = source_key(row - P.base);
        } else {
            other = stored_key(slot);
        }
        if (same_key(key, other)) {
            atomicMin(&table[word], claim);
            return vec2<u32>(1u, probes);
        }
        slot = (slot + 1u) & (CAPACITY - 1u);
    }
    return vec2<u32>(2u, probes);  // unreachable
}

@compute @workgroup_size(256)
fn insert(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) li: u32) {
    if (li < 7u) { atomicStore(&counters[li], 0u); }
    workgroupBarrier();
    let i = linear(gid, nwg);
    if (i < P.n) {
        let r = insert_row(i);
        atomicAdd(&counters[r.x], 1u);
        atomicMax(&counters[4], r.y);
        let old = atomicAdd(&counters[5], r.y);
        if (carry_of(old, r.y) != 0u) { atomicAdd(&counters[6], 1u); }
    }
    workgroupBarrier();
{{ hash_stats.flush(7, 4, 5) }}}

@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear(gid, nwg);
    if (s == 0u) {
        atomicStore(&stats[P.stats_off + 7u], P.rows);
    }
    if (s >= CAPACITY) { return; }
    let word = s * RECORD + VALUE_WORD;
    let claim = atomicLoad(&table[word]);
    var value = NOT_FOUND;
    if (claim != 0u) {
{% if values %}
        value = values[P.values_off + claim - 1u];
{% else %}
        value = claim - 1u;
{% endif %}
    }
    atomicStore(&table[word], value);
}
