// Bounded breadth-first traversal over CSR adjacency (GPUGraphTraversal).
//
// One module, several entry points (each a pipeline; the Python side binds
// exactly the bindings each one uses):
//   fill    - write fill_value into fill_count words of binding 17
//             (output 0, depths 0xFFFFFFFF, traversal state 0).
//   claim_seeds - claim the seeds into frontier 0 (binding 4).
//   level_args - per partition, the indirect grid of this level's visit pass.
//   visit   - publish frontier L (output = 1, depths = L) and, below the
//             active depth, write each entry's degree as a workgroup-local
//             exclusive scan plus one sum per 256-entry block.
//   blocks  - one workgroup per partition scans its block sums (1024 a step),
//             stores the level's edge total and the indirect grid of the expand pass.
//   expand  - one invocation per frontier edge (EXPAND_ITEMS per
//             invocation): a binary search over the block and local scans
//             finds the edge's source entry, so a node of any degree is
//             spread over as many workgroups as it has edges / 256.
//   report  - copy the two overflow counters into the caller's view.
//
// Claims are atomicOr on a node bitmap inside `state`: whatever the number
// of edges reaching a node (cycles, duplicates, self loops, shared
// descendants) exactly one invocation sees its bit clear, and only that one
// appends it to the next frontier. Appends are aggregated per workgroup
// (one global atomicAdd per workgroup and partition).
//
// Template values: parts (partition count), both (second, reverse CSR),
// depths, active, seed_count (optional views). Per-dispatch sizes and view
// element offsets are TraversalParams fields (one uniform slot each).

{% import "algorithms/shaders/views.wgsl" as views %}

override MAX_DEPTH: u32 = 0u;
// Edges per expand invocation. 1: small frontiers (the common case) are
// latency-bound, and more invocations hide the dependent loads of the search.
override EXPAND_ITEMS: u32 = 1u;

const WG: u32 = 256u;
const ITEMS: u32 = 4u;  // words per invocation in fill, block sums per invocation in blocks
const PARTS: u32 = {{ parts | u32 }};
const MAX_GROUPS: u32 = 65535u;
// state words: [0] out-of-range IDs, [1] frontier overflow, then one
// frontier count per (level, partition), then the claim bitmap.
const OOB: u32 = 0u;
const OVERFLOW: u32 = 1u;
const COUNTS: u32 = 2u;
// table rows (8 words per partition)
const T_BASE: u32 = 0u;
const T_NODES: u32 = 1u;
const T_REGION: u32 = 2u;
const T_CAP: u32 = 3u;
const T_BLOCK: u32 = 4u;

struct TraversalParams {
    level: u32,
    part: u32,
    nlen: u32,           // rows of the bound neighbors chunk
    rnlen: u32,          // rows of the bound reverse neighbors chunk
    seed_base: u32,      // logical index of the bound seeds chunk's first row
    seed_len: u32,
    seeds_total: u32,    // seeds over all chunks
    total_nodes: u32,
    fill_off: u32,
    fill_count: u32,
    fill_value: u32,
    bitmap_off: u32,     // first bitmap word in state
    blocks_off: u32,     // first block sum in scan (after the local scans)
    totals_off: u32,     // first per-partition edge total in scan
    offsets_off: u32,    // element offsets of the views inside their bound ranges
    neighbors_off: u32,
    roffsets_off: u32,
    rneighbors_off: u32,
    output_off: u32,
    depths_off: u32,
    seeds_off: u32,
    seed_count_off: u32,
    active_off: u32,
    overflow_off: u32,
}

@group(0) @binding(0) var<uniform> P: TraversalParams;
@group(0) @binding(1) var<storage, read> table: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> cur: array<u32>;
@group(0) @binding(4) var<storage, read_write> nxt: array<u32>;
@group(0) @binding(5) var<storage, read_write> scan: array<u32>;
@group(0) @binding(6) var<storage, read_write> args: array<u32>;
{{ views.view("offsets", 7, "read", "scalar", "P.offsets_off") }}
{{ views.view("neighbors", 8, "read", "scalar", "P.neighbors_off") }}
{{ views.view("roffsets", 9, "read", "scalar" if both else "none", "P.roffsets_off") }}
{{ views.view("rneighbors", 10, "read", "scalar" if both else "none", "P.rneighbors_off") }}
{{ views.view("output", 11, "read_write", "scalar", "P.output_off") }}
{{ views.view("depths", 12, "read_write", "scalar" if depths else "none", "P.depths_off") }}
{{ views.view("seeds", 13, "read", "scalar", "P.seeds_off") }}
{{ views.view("seed_count", 14, "read", "scalar" if seed_count else "none", "P.seed_count_off") }}
{{ views.view("depth_limit", 15, "read", "scalar" if active else "none", "P.active_off") }}
{{ views.view("overflow", 16, "read_write", "scalar", "P.overflow_off") }}
@group(0) @binding(17) var<storage, read_write> fill_words: array<u32>;

var<workgroup> wg_scan_buf: array<u32, WG>;
var<workgroup> wg_claims: array<atomic<u32>, PARTS>;
var<workgroup> wg_bases: array<u32, PARTS>;
var<workgroup> wg_word: u32;
var<workgroup> wg_word2: u32;

fn linear_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.x + wid.y * nwg.x; }

fn tab(part: u32, field: u32) -> u32 { return table[part * 8u + field]; }

fn count_word(level: u32, part: u32) -> u32 { return COUNTS + level * PARTS + part; }

// The frontier entries of (level, part) that were stored (claims past the
// region's capacity were counted as overflow instead).
fn stored(level: u32, part: u32) -> u32 {
    return min(atomicLoad(&state[count_word(level, part)]), tab(part, T_CAP));
}

fn active_depth() -> u32 {
{% if active %}
    return min(depth_limit_get1(0u), MAX_DEPTH);
{% else %}
    return MAX_DEPTH;
{% endif %}
}

// A (x, y, 1) grid of `groups` workgroups within the per-dimension limit.
fn write_grid(at: u32, groups: u32) {
    let x = min(groups, MAX_GROUPS);
    args[at] = x;
    args[at + 1u] = select(1u, (groups + MAX_GROUPS - 1u) / MAX_GROUPS, groups > 0u);
    args[at + 2u] = 1u;
}

// (first neighbour row, degree) of local node `n`, clamped to the bound
// neighbour rows so a malformed offsets entry cannot read past them.
fn edges_of(n: u32) -> vec2<u32> {
    let s = min(offsets_get1(n), P.nlen);
    let e = min(offsets_get1(n + 1u), P.nlen);
    return vec2<u32>(s, max(e, s) - s);
}

fn reverse_edges_of(n: u32) -> vec2<u32> {
{% if both %}
    let s = min(roffsets_get1(n), P.rnlen);
    let e = min(roffsets_get1(n + 1u), P.rnlen);
    return vec2<u32>(s, max(e, s) - s);
{% else %}
    return vec2<u32>(0u);
{% endif %}
}

// Exclusive prefix of v over the workgroup, and the workgroup total.
fn wg_scan(lid: u32, v: u32) -> vec2<u32> {
    wg_scan_buf[lid] = v;
    workgroupBarrier();
    for (var d = 1u; d < WG; d = d << 1u) {
        var x = 0u;
        if (lid >= d) { x = wg_scan_buf[lid - d]; }
        workgroupBarrier();
        wg_scan_buf[lid] += x;
        workgroupBarrier();
    }
    let inclusive = wg_scan_buf[lid];
    let total = wg_scan_buf[WG - 1u];
    workgroupBarrier();
    return vec2<u32>(inclusive - v, total);
}

// The partition holding global node v (the last whose base is <= v, so an
// empty partition sharing its base with the next is skipped).
fn partition_of(v: u32) -> u32 {
    var lo = 0u;
    var hi = PARTS;
    while (hi - lo > 1u) {
        let mid = (lo + hi) >> 1u;
        if (tab(mid, T_BASE) <= v) { lo = mid; } else { hi = mid; }
    }
    return lo;
}

// Workgroup memory is not zeroed on every driver: entry points that claim
// clear their counters first.
fn reset_claims(lid: u32) {
    for (var p = lid; p < PARTS; p += WG) { atomicStore(&wg_claims[p], 0u); }
    workgroupBarrier();
}

// Claim node v (when `valid`) for frontier `level`; every invocation of the
// workgroup calls this (it holds barriers).
fn claim(lid: u32, v: u32, valid: bool, level: u32) {
    var part = 0u;
    var slot = 0u;
    var won = false;
    if (valid) {
        if (v >= P.total_nodes) {
            atomicAdd(&state[OOB], 1u);
        } else {
            let bit = 1u << (v & 31u);
            let old = atomicOr(&state[P.bitmap_off + (v >> 5u)], bit);
            if ((old & bit) == 0u) {
                won = true;
                part = partition_of(v);
                slot = atomicAdd(&wg_claims[part], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var p = lid; p < PARTS; p += WG) {
        let n = atomicLoad(&wg_claims[p]);
        if (n > 0u) { wg_bases[p] = atomicAdd(&state[count_word(level, p)], n); }
        atomicStore(&wg_claims[p], 0u);
    }
    workgroupBarrier();
    if (won) {
        let at = wg_bases[part] + slot;
        if (at < tab(part, T_CAP)) {
            nxt[tab(part, T_REGION) + at] = v;
        } else {
            atomicAdd(&state[OVERFLOW], 1u);
        }
    }
}

@compute @workgroup_size(256)
fn fill(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let first = linear_group(wid, nwg) * WG * ITEMS + lid;
    for (var k = 0u; k < ITEMS; k++) {
        let i = first + k * WG;
        if (i < P.fill_count) { fill_words[P.fill_off + i] = P.fill_value; }
    }
}

@compute @workgroup_size(256)
fn claim_seeds(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_group(wid, nwg) * WG + lid;
{% if seed_count %}
    let limit = min(seed_count_get1(0u), P.seeds_total);
{% else %}
    let limit = P.seeds_total;
{% endif %}
    let valid = i < P.seed_len && P.seed_base + i < limit;
    var v = 0u;
    if (valid) { v = seeds_get1(i); }
    reset_claims(lid);
    claim(lid, v, valid, 0u);
}

@compute @workgroup_size(256)
fn level_args(@builtin(local_invocation_index) lid: u32) {
    let act = active_depth();
    for (var q = lid; q < PARTS; q += WG) {
        var groups = 0u;
        if (P.level <= act) { groups = (stored(P.level, q) + WG - 1u) / WG; }
        write_grid(6u * q, groups);
    }
}

@compute @workgroup_size(256)
fn visit(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = linear_group(wid, nwg);
    if (lid == 0u) { wg_word = stored(P.level, P.part); }
    let count = workgroupUniformLoad(&wg_word);
    if (w * WG >= count) { return; }
    let region = tab(P.part, T_REGION);
    let j = w * WG + lid;
    let expanding = P.level < active_depth();
    var degree = 0u;
    if (j < count) {
        let n = cur[region + j] - tab(P.part, T_BASE);
        output_set1(n, 1u);
        depths_set1(n, P.level);
        if (expanding) { degree = edges_of(n).y + reverse_edges_of(n).y; }
    }
    let s = wg_scan(lid, degree);
    if (j < count) { scan[region + j] = s.x; }
    if (lid == 0u) { scan[P.blocks_off + tab(P.part, T_BLOCK) + w] = s.y; }
}

@compute @workgroup_size(256)
fn blocks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let q = wid.x;
    if (lid == 0u) { wg_word = stored(P.level, q); }
    let count = workgroupUniformLoad(&wg_word);
    let nb = (count + WG - 1u) / WG;
    let first = P.blocks_off + tab(q, T_BLOCK);
    // ITEMS consecutive sums per invocation, scanned serially, then the
    // invocation totals across the workgroup: WG * ITEMS sums a step
    var carry = 0u;
    for (var b0 = 0u; b0 < nb; b0 += WG * ITEMS) {
        var v: array<u32, ITEMS>;
        var sum = 0u;
        for (var k = 0u; k < ITEMS; k++) {
            let b = b0 + lid * ITEMS + k;
            v[k] = 0u;
            if (b < nb) { v[k] = scan[first + b]; }
            sum += v[k];
        }
        let s = wg_scan(lid, sum);
        var run = carry + s.x;
        for (var k = 0u; k < ITEMS; k++) {
            let b = b0 + lid * ITEMS + k;
            if (b < nb) { scan[first + b] = run; }
            run += v[k];
        }
        carry += s.y;
    }
    if (lid == 0u) {
        scan[P.totals_off + q] = carry;
        var groups = 0u;
        let per_group = WG * EXPAND_ITEMS;
        if (P.level < active_depth()) { groups = (carry + per_group - 1u) / per_group; }
        write_grid(6u * q + 3u, groups);
    }
}

@compute @workgroup_size(256)
fn expand(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = linear_group(wid, nwg);
    if (lid == 0u) {
        wg_word = scan[P.totals_off + P.part];
        wg_word2 = stored(P.level, P.part);
    }
    let total = workgroupUniformLoad(&wg_word);
    let count = workgroupUniformLoad(&wg_word2);
    let per_group = WG * EXPAND_ITEMS;
    if (w * per_group >= total) { return; }
    let region = tab(P.part, T_REGION);
    let block_sums = P.blocks_off + tab(P.part, T_BLOCK);
    let nb = (count + WG - 1u) / WG;
    reset_claims(lid);
    for (var k = 0u; k < EXPAND_ITEMS; k++) {
        let e = w * per_group + k * WG + lid;
        let valid = e < total;
        var v = 0u;
        if (valid) {
            // the last block, then the last entry inside it, whose exclusive
            // edge prefix is <= e: the entry that owns edge e
            var lo = 0u;
            var hi = nb;
            while (hi - lo > 1u) {
                let mid = (lo + hi) >> 1u;
                if (scan[block_sums + mid] <= e) { lo = mid; } else { hi = mid; }
            }
            let r = e - scan[block_sums + lo];
            var jl = lo * WG;
            var jh = min(jl + WG, count);
            while (jh - jl > 1u) {
                let mid = (jl + jh) >> 1u;
                if (scan[region + mid] <= r) { jl = mid; } else { jh = mid; }
            }
            let edge = r - scan[region + jl];
            let n = cur[region + jl] - tab(P.part, T_BASE);
            let fwd = edges_of(n);
            if (edge < fwd.y) {
                v = neighbors_get1(fwd.x + edge);
            } else {
{% if both %}
                v = rneighbors_get1(reverse_edges_of(n).x + edge - fwd.y);
{% endif %}
            }
        }
        claim(lid, v, valid, P.level + 1u);
    }
}

@compute @workgroup_size(1)
fn report() {
    overflow_set1(0u, atomicLoad(&state[OOB]));
    overflow_set1(1u, atomicLoad(&state[OVERFLOW]));
}
