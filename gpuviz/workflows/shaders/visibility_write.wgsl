// GPUVisibilityWorkflow, pass 2 of 2: the kept rows' IDs in source order,
// from pass 1's bit words (one per 32 rows, in row order) and tile counts.
//
// One workgroup per write tile of one chunk: TILE = 1024 * iters rows, a
// whole number (PER) of visibility.wgsl's tiles. Its base in the output is
// the sum of the counts of every predicate tile before it, read as vec4
// words four at a time (one L2 round trip per 4096 counts: 16M rows of
// 4096-row tiles); a group scan of the popcounts of its WORDS bit words
// places each word inside the tile. Then in iteration r lane l writes the
// ID of row r * 256 + l when it is kept, so a warp's kept rows land on
// consecutive output words. The sequence's last write tile writes the
// total into `count`; the chunk's first resets its predicate ticket word
// (visibility.wgsl) for the next encoding. (Gathering each 2048-row segment's IDs in workgroup
// memory first, to write whole output lines, measured 10-25 % slower on the
// H200.)
//
// Template values: layouts (bits, counts, ids, count), subgroups, iters, wpl
// (bit words per lane slot: max(1, iters / 8); below 8192-row tiles the
// slots past WORDS scan zeros) and scatter: dst (bindings of the output
// buffers) and table (several output chunks: scatter_chunks holds per chunk
// its end in the compacted sequence, its element offset in its binding
// minus its first position (wrapping), its dst slot).

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

override SEGMENTED: bool = false;  // knob of the group primitives; nothing here is segmented

struct WriteParams {
    n: u32,          // rows of this chunk
    num_tiles: u32,  // write tiles of this chunk (= workgroups)
    row_base: u32,   // global row index of this chunk's first row
    out_off: u32,    // one output chunk: its element offset in its binding
    tile_base: u32,  // global index of this chunk's first predicate tile
    per: u32,        // predicate tiles per write tile
    last: u32,       // 1: this chunk's last write tile is the sequence's (writes count)
    ticket: u32,     // this chunk's word in `tickets`
    bits_off: u32,   // element (uint32 word) offsets of the views in their bound ranges
    counts_off: u32,
    ids_off: u32,
    count_off: u32,
}

@group(0) @binding(0) var<uniform> P: WriteParams;
{{ views.view("bits", 1, "read", layouts.bits, "P.bits_off") }}
{{ views.view("counts", 2, "read", layouts.counts, "P.counts_off") }}
{{ views.view("ids", 3, "read", layouts.ids, "P.ids_off") }}
{{ views.view("count", 5, "read_write", layouts.count, "P.count_off") }}
@group(0) @binding(6) var<storage, read_write> tickets: array<u32>;
{% for b in scatter.dst %}
@group(0) @binding({{ b }}) var<storage, read_write> dst{{ b }}: array<u32>;
{% endfor %}
{% if scatter.table %}
@group(0) @binding(4) var<storage, read> scatter_chunks: array<vec4<u32>>;
{% endif %}

const WG: u32 = 256u;
const ITER: u32 = {{ iters }}u;
const TILE: u32 = WG * ITER * 4u;
const WORDS: u32 = TILE / 32u;
const WPL: u32 = {{ wpl }}u;

var<workgroup> s_words: array<u32, WG * WPL>;   // the tile's bit words
var<workgroup> s_before: array<u32, WG * WPL>;  // kept rows of the tile before each word
var<workgroup> s_part: array<vec2<u32>, WG>;    // per scan group: kept rows, counts of earlier tiles
var<workgroup> s_kb: vec2<u32>;                 // (kept, base), for a uniform read

fn scatter(k: u32, v: u32) {
{% if not scatter.table %}
    dst{{ scatter.dst[0] }}[P.out_off + k] = v;
{% else %}
    var lo = 0u;
    var hi = arrayLength(&scatter_chunks) - 1u;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (k < scatter_chunks[mid].x) { hi = mid; } else { lo = mid + 1u; }
    }
    let c = scatter_chunks[lo];
    switch (c.z) {
{% for b in scatter.dst %}
        {{ "default" if loop.last else "case %du" % loop.index0 }}: { dst{{ b }}[c.y + k] = v; }
{% endfor %}
    }
{% endif %}
}

// The ID of row `row` of this chunk (its global index or its source ID).
fn row_id(row: u32) -> u32 {
{% if layouts.ids == "none" %}
    return P.row_base + row;
{% else %}
    return ids_get1(row);
{% endif %}
}

// Counts of predicate tiles i..i+3 that lie before tile `end`, summed.
fn counts_before(i: u32, end: u32) -> u32 {
    let c = counts_get4(i);  // the buffer is padded to whole steps of 16 * WG words
    return select(0u, c.x, i < end) + select(0u, c.y, i + 1u < end) + select(0u, c.z, i + 2u < end) +
           select(0u, c.w, i + 3u < end);
}

// This lane's share of the counts of predicate tiles 0..end-1 (four
// independent loads a step).
fn lane_counts_before(g: Group, end: u32) -> u32 {
    var acc = 0u;
    for (var i = 4u * g.lid; i < end; i += 16u * WG) {
        acc += counts_before(i, end) + counts_before(i + 4u * WG, end) + counts_before(i + 8u * WG, end) +
               counts_before(i + 12u * WG, end);
    }
    return acc;
}

fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }  // uniform per workgroup: the 2-D grid's spare groups
    let lt = wg;
    // Lane slot p (the order the group scans use) owns words WPL * p .. + WPL - 1;
    // they are loaded first, so the counts' loads go out behind them.
    let q = WPL * (g.id * g.size + g.lane);
    let chunk_words = (P.n + 31u) / 32u;
{% for j in range(wpl) %}
    var w{{ j }} = 0u;
    if (q + {{ j }}u < WORDS && lt * WORDS + q + {{ j }}u < chunk_words) { w{{ j }} = bits_get1(lt * WORDS + q + {{ j }}u); }
{% endfor %}
    let earlier = lane_counts_before(g, P.tile_base + lt * P.per);
{% for j in range(wpl) %}
    s_words[q + {{ j }}u] = w{{ j }};
{% endfor %}
    let sc = grp_scan4(g, vec4<u32>(0u), vec4<u32>({% for j in range(wpl) %}{{ " + " if j }}countOneBits(w{{ j }}){% endfor %}, earlier, 0u, 0u));
    if (g.lane == 0u) { s_part[g.id] = sc.tot_v.xy; }
    workgroupBarrier();
    var before = sc.ex_v.x;
    for (var k = 0u; k < g.id; k++) { before += s_part[k].x; }
{% for j in range(wpl) %}
    s_before[q + {{ j }}u] = before;
    before += countOneBits(w{{ j }});
{% endfor %}
    if (g.lid == 0u) {
        var kb = vec2<u32>(0u);
        for (var k = 0u; k < g.count; k++) { kb += s_part[k]; }
        if (P.last != 0u && lt == P.num_tiles - 1u) { count_set1(0u, kb.x + kb.y); }
        if (lt == 0u) { tickets[P.ticket] = 0u; }
        s_kb = kb;
    }
    let kb = workgroupUniformLoad(&s_kb);  // (a barrier too: s_words and s_before are complete)
    let kept = kb.x;
    let base = kb.y;
    if (kept == 0u) { return; }
    let row0 = lt * TILE;
{% if quads %}
    // Lane l takes quad r * 256 + l (rows 4q..4q+3) and writes its kept rows one after another.
    for (var r = 0u; r < ITER; r++) {
        let q = r * WG + g.lid;
        let w = s_words[q >> 3u];
        let sh = (q & 7u) * 4u;
        let nibble = (w >> sh) & 0xfu;
        if (nibble != 0u) {
            var k = base + s_before[q >> 3u] + countOneBits(w & ((1u << sh) - 1u));
            let row = row0 + 4u * q;
            if ((nibble & 1u) != 0u) { scatter(k, row_id(row)); k += 1u; }
            if ((nibble & 2u) != 0u) { scatter(k, row_id(row + 1u)); k += 1u; }
            if ((nibble & 4u) != 0u) { scatter(k, row_id(row + 2u)); k += 1u; }
            if ((nibble & 8u) != 0u) { scatter(k, row_id(row + 3u)); }
        }
    }
{% else %}
    for (var r = 0u; r < ITER * 4u; r++) {
        let t = r * WG + g.lid;
        let w = s_words[t >> 5u];
        let b = t & 31u;
        if (((w >> b) & 1u) != 0u) {
            scatter(base + s_before[t >> 5u] + countOneBits(w & ((1u << b) - 1u)), row_id(row0 + t));
        }
    }
{% endif %}
}
