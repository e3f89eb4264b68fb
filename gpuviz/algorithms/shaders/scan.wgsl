// Single-pass chained prefix scan of packed uint32 with decoupled look-back.
//
// One workgroup scans one tile of TILE rows. Tiles take their index from an
// atomic ticket, so every tile a workgroup waits for has already started.
// A tile publishes its aggregate as soon as it has reduced its rows, then
// looks back over its predecessors' published states: an inclusive prefix
// (or a segment start) ends the walk, aggregates are summed on the way.
// A predecessor that stays unpublished for SPIN_LIMIT polls is reduced from
// its input by the waiting tile itself, so the walk finishes whatever the
// scheduler does (WebGPU promises no forward progress between workgroups).
//
// Template values (gpuviz.graph.shaders.wgsl): subgroups (which group
// primitives: Group, Scan4, grp_scan4, the entry point), rows (vec4 rows per
// lane, a multiple of four; per-row code is unrolled), layouts/access (the
// views.view layout and access of the roles data/heads/out/vals; "none" for
// a role this variant does not use), total (the layout of the total view
// when this dispatch stores the sum of everything, else "none"), scatter
// (compaction only, else None: see scatter() below) and diagnostics.
// Sizes and view element offsets are ScanParams fields (and the output
// chunks of a vector compaction a table), never shader text or overrides:
// every chunk of one structure, whatever its length, shares a pipeline.
//
// State words (all zero when the state buffer is created; no clear pass runs
// between encodings):
//   [0]            ticket counter, shared by the chunk dispatches of a vector:
//                  epoch << EPOCH_SHIFT | tiles taken in this epoch. The tile
//                  that takes the sequence's last ticket moves the counter to
//                  the next epoch (every ticket of this encoding is taken by
//                  then), so the next encoding starts at tile 0 again.
//   [4 + 4t + 0/1] tile t aggregate, low/high 16 bits
//   [4 + 4t + 2/3] tile t inclusive prefix, low/high 16 bits
// Each word is READY | PARITY (epoch & 1) | (HEAD if the tile has a segment
// start) | 16 value bits, so every word is self-consistent under relaxed
// atomics. Every encoding rewrites every tile's two pairs, so a word whose
// parity differs from the reader's epoch is the previous encoding's: it reads
// as unpublished. Zero words (a new buffer, or a clear pass) are unpublished
// for either parity.

{% import "algorithms/shaders/views.wgsl" as views %}
{% import "algorithms/shaders/look_back.wgsl" as look_back %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

{% if diagnostics %}
@group(0) @binding(31) var<storage, read_write> diag: array<atomic<u32>>;
fn diag_add(g: Group, i: u32, v: u32) { if (g.lid == 0u) { atomicAdd(&diag[i], v); } }
{% else %}
fn diag_add(g: Group, i: u32, v: u32) { }
{% endif %}

{% for name in ("data", "heads", "out", "vals") %}
{{ views.view(name, loop.index, access[name], layouts[name], "P." ~ name ~ "_off") }}
{% endfor %}
{% if total != "none" %}
{{ views.view("total", 5, "read_write", total, "P.total_off") }}
fn store_total(v: u32) { total_set1(0u, v); }
{% else %}
fn store_total(v: u32) { }
{% endif %}

// scatter(k, v): write row k of the compacted sequence into the output chunk
// holding it. Template value scatter: dst (the bindings of the output
// buffers, padded with repeats to a power of two so the number of kernels
// stays bounded), table (several non-empty output chunks) and start (one
// chunk that begins its binding: offset 0 folded in; else P.scatter_off).
// With a table, entry j of scatter_chunks is (end of chunk j in the sequence,
// chunk j's element offset in its binding minus its first row (wrapping),
// dst slot, 0): a binary search finds the chunk. k never reaches past the
// rows scanned so far: the last chunk needs no test.
{% if scatter %}
{% for b in scatter.dst %}
@group(0) @binding({{ b }}) var<storage, read_write> dst{{ b }}: array<u32>;
{% endfor %}
{% if scatter.table %}
@group(0) @binding(30) var<storage, read> scatter_chunks: array<vec4<u32>>;
{% endif %}
{% endif %}
fn scatter(k: u32, v: u32) {
{% if scatter and not scatter.table %}
    dst{{ scatter.dst[0] }}[{{ "" if scatter.start else "P.scatter_off + " }}k] = v;
{% elif scatter %}
    var lo = 0u;
    var hi = arrayLength(&scatter_chunks) - 1u;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (k < scatter_chunks[mid].x) { hi = mid; } else { lo = mid + 1u; }
    }
    let c = scatter_chunks[lo];
{% if scatter.dst | length == 1 %}
    dst{{ scatter.dst[0] }}[c.y + k] = v;
{% else %}
    switch (c.z) {
{% for b in scatter.dst %}
        {{ "default" if loop.last else "case %du" % loop.index0 }}: { dst{{ b }}[c.y + k] = v; }
{% endfor %}
    }
{% endif %}
{% endif %}
}

const WG: u32 = 256u;
const ROWS: u32 = {{ rows | u32 }};
const QUADS: u32 = ROWS / 4u;
const TILE: u32 = WG * ROWS * 4u;
const READY: u32 = 0x80000000u;
const HEAD: u32 = 0x40000000u;
const PARITY: u32 = 0x20000000u;
const TAG_MASK: u32 = READY | PARITY;
const LOW: u32 = 0xffffu;
const EPOCH_SHIFT: u32 = 21u;  // tiles of a sequence < 2^21 (2^32 rows / 4096-row tiles = 2^20)
const TICKET_MASK: u32 = (1u << EPOCH_SHIFT) - 1u;

override INCLUSIVE: bool = false;
override SEGMENTED: bool = false;
override COMPACT: bool = false;         // scatter vals by the scan instead of storing it
override LOOKBACK: u32 = 64u;           // predecessor states read per look-back step (<= 256)
override SPIN_LIMIT: u32 = 512u;        // fruitless polls before reducing a predecessor itself
override SPIN_WINDOW: u32 = 4u;         // states read per step while the nearest is unpublished
override GROUP_LOOKBACK: bool = false;  // one subgroup walks back (where subgroups exist)
override EARLY_PUBLISH: bool = false;   // the workgroup walk publishes the inclusive prefix itself

// Sizes arrive as uniforms, not overrides, so one pipeline serves every length.
struct ScanParams {
    n: u32,           // rows of this chunk
    tile_base: u32,   // global index of this chunk's first tile
    num_tiles: u32,   // tiles of this chunk (= workgroups)
    total_tile: u32,  // global tile that writes the total (0xffffffff: none)
    last_tile: u32,   // global index of the sequence's last tile
    data_off: u32,    // element offsets of the views inside their bound ranges
    heads_off: u32,
    out_off: u32,
    vals_off: u32,
    total_off: u32,
    scatter_off: u32, // one-chunk compaction: the output element offset in its binding
    pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> P: ScanParams;

struct Pair {
    h: u32,  // 1 when a segment starts inside
    v: u32,  // sum since the last segment start
}

fn combine(a: Pair, b: Pair) -> Pair {
    return Pair(a.h | b.h, select(a.v + b.v, b.v, b.h != 0u));
}

var<workgroup> s_ticket: u32;
var<workgroup> s_part_h: array<u32, WG>;
var<workgroup> s_part_v: array<u32, WG>;
var<workgroup> s_agg: Pair;
{{ look_back.workgroup_state() }}
var<workgroup> s_fb: array<atomic<u32>, 2>;
var<workgroup> s_fb_res: Pair;
var<private> ep_tag: u32;  // READY | this encoding's parity

fn canon4(v: vec4<u32>) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u), v != vec4<u32>(0u));
}

// Rows e..e+3 of the scanned sequence (zero past N); selection flags are
// made canonical 0/1 when compacting.
fn load_data4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (e + 3u < P.n) {
        o = data_get4(e);
    } else {
        if (e < P.n) { o.x = data_get1(e); }
        if (e + 1u < P.n) { o.y = data_get1(e + 1u); }
        if (e + 2u < P.n) { o.z = data_get1(e + 2u); }
    }
    if (COMPACT) { o = canon4(o); }
    return o;
}

fn load_heads4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (SEGMENTED) {
        if (e + 3u < P.n) {
            o = heads_get4(e);
        } else {
            if (e < P.n) { o.x = heads_get1(e); }
            if (e + 1u < P.n) { o.y = heads_get1(e + 1u); }
            if (e + 2u < P.n) { o.z = heads_get1(e + 2u); }
        }
    }
    return canon4(o);
}

fn load_vals4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (e + 3u < P.n) {
        o = vals_get4(e);
    } else {
        if (e < P.n) { o.x = vals_get1(e); }
        if (e + 1u < P.n) { o.y = vals_get1(e + 1u); }
        if (e + 2u < P.n) { o.z = vals_get1(e + 2u); }
    }
    return o;
}

fn store_out4(e: u32, v: vec4<u32>) {
    if (e + 3u < P.n) {
        out_set4(e, v);
    } else {
        if (e < P.n) { out_set1(e, v.x); }
        if (e + 1u < P.n) { out_set1(e + 1u, v.y); }
        if (e + 2u < P.n) { out_set1(e + 2u, v.z); }
    }
}

fn tile_word(t: u32) -> u32 {
    return 4u + 4u * t;
}

fn publish(word: u32, p: Pair) {
    let h = select(0u, HEAD, p.h != 0u);
    atomicStore(&state[word], ep_tag | h | (p.v & LOW));
    atomicStore(&state[word + 1u], ep_tag | h | (p.v >> 16u));
}

fn is_ready(a: u32, b: u32) -> bool {
    return (a & TAG_MASK) == ep_tag && (b & TAG_MASK) == ep_tag;
}

// Predecessor tile j's state: kind 0 unpublished, 1 aggregate, 2 terminal
// (inclusive prefix or a segment start inside), and its value.
fn inspect(j: u32) -> vec2<u32> {
    let w = tile_word(j);
    let a0 = atomicLoad(&state[w]);
    let a1 = atomicLoad(&state[w + 1u]);
    let p0 = atomicLoad(&state[w + 2u]);
    let p1 = atomicLoad(&state[w + 3u]);
    if (is_ready(p0, p1)) {
        return vec2<u32>(2u, (p0 & LOW) | ((p1 & LOW) << 16u));
    }
    if (is_ready(a0, a1)) {
        return vec2<u32>(select(1u, 2u, ((a0 | a1) & HEAD) != 0u), (a0 & LOW) | ((a1 & LOW) << 16u));
    }
    return vec2<u32>(0u, 0u);
}

// First row (inside the chunk) of this lane's row r in tile `lt`.
fn row_start(g: Group, lt: u32, r: u32) -> u32 {
    return lt * TILE + g.id * (g.size * ROWS * 4u) + r * (g.size * 4u) + g.lane * 4u;
}

// Aggregate of global tile j of this chunk, reduced from its input. Order-free:
// the last segment start is found with atomicMax, then the rows from it on are
// summed with atomicAdd. Publishes the aggregate for other waiting tiles.
fn reduce_tile(g: Group, j: u32) -> Pair {
    let lt = j - P.tile_base;
    if (g.lid == 0u) {
        atomicStore(&s_fb[0], 0u);
        atomicStore(&s_fb[1], 0u);
    }
    workgroupBarrier();
    if (SEGMENTED) {
        var last = 0u;
        for (var r = 0u; r < ROWS; r++) {
            let e = row_start(g, lt, r);
            let hd = load_heads4(e);
            for (var c = 0u; c < 4u; c++) {
                if (hd[c] != 0u) { last = max(last, e + c + 1u - lt * TILE); }
            }
        }
        atomicMax(&s_fb[0], last);
        workgroupBarrier();
    }
    let first = max(atomicLoad(&s_fb[0]), 1u) - 1u;
    var sum = 0u;
    for (var r = 0u; r < ROWS; r++) {
        let e = row_start(g, lt, r);
        let d = load_data4(e);
        for (var c = 0u; c < 4u; c++) {
            if (e + c - lt * TILE >= first) { sum += d[c]; }
        }
    }
    atomicAdd(&s_fb[1], sum);
    workgroupBarrier();
    if (g.lid == 0u) {
        let res = Pair(select(0u, 1u, atomicLoad(&s_fb[0]) != 0u), atomicLoad(&s_fb[1]));
        s_fb_res = res;
        publish(tile_word(j), res);
    }
    return workgroupUniformLoad(&s_fb_res);
}

// The look-back (look_back.wgsl) of a tile whose aggregate is the Pair
// `tagg`: its inclusive prefix is published only without a segment start
// inside (else the aggregate already is one), and a predecessor reduced by
// the waiter ends the walk where a segment starts inside it. With
// EARLY_PUBLISH the workgroup walk publishes the prefix itself.
{% macro publish_inclusive(when, prefix) %}
if ({{ when }} && tagg.h == 0u) { publish(tile_word(tile) + 2u, Pair(0u, {{ prefix }} + tagg.v)); }
{% endmacro %}
{% macro add_reduced(j, when) %}
let p = reduce_tile(g, {{ j }});
acc += p.v;
if (p.h != 0u) {
    {{ publish_inclusive(when, "acc") }}
    break;
}
{% endmacro %}
{% macro diag_count(i) %}diag_add(g, {{ i }}u, 1u);{% endmacro %}
{{ look_back.walk_workgroup(add_reduced, "min(SPIN_WINDOW, LOOKBACK)", own="tagg: Pair",
                            publish=publish_inclusive, early="EARLY_PUBLISH", count=diag_count) }}
{{ look_back.walk_group(add_reduced, publish_inclusive, "tagg: Pair", "min(LOOKBACK, g.size)",
                        count=diag_count) }}

// (head, sum since the last head) of one lane's four consecutive rows.
fn row_total(h: vec4<u32>, x: vec4<u32>) -> Pair {
    var t = Pair(h.x, x.x);
    t = combine(t, Pair(h.y, x.y));
    t = combine(t, Pair(h.z, x.z));
    return combine(t, Pair(h.w, x.w));
}

// Scan four rows given the pair of everything before them, then store them
// (or scatter the selected values when compacting).
fn emit_row(e: u32, pre: Pair, carry: u32, x: vec4<u32>, h: vec4<u32>, v: vec4<u32>) {
    var a = select(carry + pre.v, pre.v, pre.h != 0u);
    a = select(a, 0u, h.x != 0u);
    let e0 = a;
    a = select(a + x.x, 0u, h.y != 0u);
    let e1 = a;
    a = select(a + x.y, 0u, h.z != 0u);
    let e2 = a;
    a = select(a + x.z, 0u, h.w != 0u);
    let ex = vec4<u32>(e0, e1, e2, a);
    if (COMPACT) {
        if (x.x != 0u) { scatter(ex.x, v.x); }
        if (x.y != 0u) { scatter(ex.y, v.y); }
        if (x.z != 0u) { scatter(ex.z, v.z); }
        if (x.w != 0u) { scatter(ex.w, v.w); }
    } else {
        store_out4(e, select(ex, ex + x, INCLUSIVE));
    }
}

// Per-row code is unrolled by the template ({% raw %}{% for r in range(rows) %}{% endraw %}; quads
// of rows for the group scans): function-scope arrays indexed in loops can
// land in slow local memory, separate variables stay in registers.
fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }
    if (g.lid == 0u) {
        let ticket = atomicAdd(&state[0], 1u);
        if ((ticket & TICKET_MASK) == P.last_tile) {
            // every ticket of this encoding is taken: open the next epoch
            atomicStore(&state[0], ((ticket >> EPOCH_SHIFT) + 1u) << EPOCH_SHIFT);
        }
        s_ticket = ticket;
    }
    let ticket = workgroupUniformLoad(&s_ticket);
    let tile = ticket & TICKET_MASK;
    ep_tag = READY | select(0u, PARITY, ((ticket >> EPOCH_SHIFT) & 1u) != 0u);
    let lt = tile - P.tile_base;
    diag_add(g, 0u, 1u);

{% for r in range(rows) %}
    var x{{ r }} = vec4<u32>(0u);
    var h{{ r }} = vec4<u32>(0u);
    var v{{ r }} = vec4<u32>(0u);
    let e{{ r }} = row_start(g, lt, {{ r | u32 }});
{% endfor %}
    if ((lt + 1u) * TILE <= P.n) {
        // A full tile: unconditional loads, all in flight before the first use.
{% for r in range(rows) %}
        x{{ r }} = data_get4(e{{ r }});
        if (SEGMENTED) { h{{ r }} = canon4(heads_get4(e{{ r }})); }
        if (COMPACT) { v{{ r }} = vals_get4(e{{ r }}); x{{ r }} = canon4(x{{ r }}); }
{% endfor %}
    } else {
{% for r in range(rows) %}
        x{{ r }} = load_data4(e{{ r }});
        h{{ r }} = load_heads4(e{{ r }});
        if (COMPACT) { v{{ r }} = load_vals4(e{{ r }}); }
{% endfor %}
    }

    // Scan the lanes' row totals across the group, chaining rows inside it.
{% for r in range(rows) %}
    let t{{ r }} = row_total(h{{ r }}, x{{ r }});
{% endfor %}
    var run = Pair(0u, 0u);
{% for q in range(rows // 4) %}
{% set a, b, c, d = 4 * q, 4 * q + 1, 4 * q + 2, 4 * q + 3 %}
    let s{{ q }} = grp_scan4(g, vec4<u32>(t{{ a }}.h, t{{ b }}.h, t{{ c }}.h, t{{ d }}.h), vec4<u32>(t{{ a }}.v, t{{ b }}.v, t{{ c }}.v, t{{ d }}.v));
    let p{{ a }} = combine(run, Pair(s{{ q }}.ex_h.x, s{{ q }}.ex_v.x));
    run = combine(run, Pair(s{{ q }}.tot_h.x, s{{ q }}.tot_v.x));
    let p{{ b }} = combine(run, Pair(s{{ q }}.ex_h.y, s{{ q }}.ex_v.y));
    run = combine(run, Pair(s{{ q }}.tot_h.y, s{{ q }}.tot_v.y));
    let p{{ c }} = combine(run, Pair(s{{ q }}.ex_h.z, s{{ q }}.ex_v.z));
    run = combine(run, Pair(s{{ q }}.tot_h.z, s{{ q }}.tot_v.z));
    let p{{ d }} = combine(run, Pair(s{{ q }}.ex_h.w, s{{ q }}.ex_v.w));
    run = combine(run, Pair(s{{ q }}.tot_h.w, s{{ q }}.tot_v.w));
{% endfor %}

    // Chain the groups of the workgroup.
    if (g.lane == 0u) {
        s_part_h[g.id] = run.h;
        s_part_v[g.id] = run.v;
    }
    workgroupBarrier();
    var gpre = Pair(0u, 0u);
    var agg = Pair(0u, 0u);
    for (var k = 0u; k < g.count; k++) {
        if (k == g.id) { gpre = agg; }
        agg = combine(agg, Pair(s_part_h[k], s_part_v[k]));
    }
    if (g.lid == 0u) {
        s_agg = agg;
        publish(tile_word(tile), agg);
        if (tile == 0u || agg.h != 0u) { publish(tile_word(tile) + 2u, Pair(0u, agg.v)); }
    }
    let tagg = workgroupUniformLoad(&s_agg);

    // Rows before the tile's first segment start need the carry even when the
    // tile's own inclusive prefix (published above) does not.
    var carry = 0u;
    if (tile != 0u) {
        if (GROUP_COLLECTIVES && GROUP_LOOKBACK) {
            carry = look_back_group(g, tile, tagg);  // publishes the inclusive prefix itself
        } else {
            carry = look_back(g, tile, tagg);
            if (!EARLY_PUBLISH && g.lid == 0u && tagg.h == 0u) { publish(tile_word(tile) + 2u, Pair(0u, carry + tagg.v)); }
        }
    }
    if (tile == P.total_tile && g.lid == 0u) {
        store_total(select(carry + tagg.v, tagg.v, tagg.h != 0u));
    }

{% for r in range(rows) %}
    emit_row(e{{ r }}, combine(gpre, p{{ r }}), carry, x{{ r }}, h{{ r }}, v{{ r }});
{% endfor %}
}
