// GPUVisibilityWorkflow in one pass: every predicate of a row fused into one
// read of its inputs, then the kept rows' IDs written in source order.
//
// One workgroup handles one tile of TILE = 1024 * iters rows (1024 to
// 16384) of one chunk. In iteration r (0..ITER-1) lane l evaluates rows
// (r * 256 + l) * 4 .. + 3, so every load is a coalesced vec4 (two for
// intervals, four for spheres); a full tile's loop is unrolled into batches
// of `batch` quads whose loads all go out before the first test (batch 0:
// the bounds-checked loop only). The kept rows become one bit each in
// workgroup memory (and canonical 0/1 words in the optional mask_output). A
// group scan of the bit words' popcounts places each word inside the tile;
// the tile's place in the output comes from a decoupled look-back over the
// predecessor tiles' published states; then lane l writes the IDs of rows
// r * 256 + l, so a warp's kept rows land on consecutive output words. (A
// staged variant, each 2048-row segment's IDs gathered in workgroup memory
// and written by consecutive lanes, is slower: the gather costs more than
// the coalescing saves.)
// The sequence's last tile writes the total into `count`. With lagged
// placement (`lag`, the default) evaluating and placing are split: the
// workgroup of ticket s evaluates tile s and publishes its count and bits,
// then places and writes tile s - lag, whose look-back then mostly finds
// published states (see "Lagged placement" below). `pair` ("late" /
// "early"): a workgroup handles two tiles, loading the second's first batch
// while it finishes the first.
//
// Tiles take their index from an atomic ticket, so every tile a workgroup
// waits for has started. WebGPU promises no forward progress between
// workgroups: a predecessor that stays unpublished for SPIN_LIMIT polls is
// evaluated by the waiting workgroup itself (same bindings: the chunks of a
// vector are separate dispatches that run in order, so a tile only ever
// waits for tiles of its own chunk), and the walk goes on past it. One
// subgroup walks where subgroups exist (look_back_group), else the whole
// workgroup (look_back).
//
// State words (node-owned buffer, zero when created; no clear between
// encodings):
//   [0]            ticket counter, shared by the chunk dispatches of a vector:
//                  epoch << EPOCH_SHIFT | tiles taken in this epoch; the tile
//                  taking the sequence's last ticket opens the next epoch.
//   [1 + 3t]       tile t's kept rows
//   [1 + 3t + 1/2] tile t's inclusive prefix, low/high 16 bits
// Each word is READY | PARITY (epoch & 1) | value bits, self-consistent under
// relaxed atomics; every encoding rewrites every tile's words, so a word of
// the other parity is the previous encoding's and reads as unpublished.
//
// Template values: layouts (views.view layout of each role: count,
// mask_out, spheres, planes, intervals, window, lod, lod_range, mask0..,
// ids; "none" for a role not given), masks (how many), spheres/intervals/lod
// (which predicates run), subgroups (which group primitives), the tuning
// (iters, wpl = bit words per lane, batch, pair) and scatter:
// dst (bindings of the output buffers) and table (several output chunks:
// scatter_chunks holds per chunk its end in the compacted sequence, its
// element offset in its binding minus its first position (wrapping), its dst
// slot). Sizes and view offsets are VisParams fields, so every chunk of one
// structure shares a pipeline; parameter contents (planes, window,
// lod_range) are read from their buffers on every dispatch.
//
// Benchmarks time the workflow without parts of its work through a
// template that extends this one (gpuviz/bench/shaders/visibility_probes.wgsl)
// and replaces some of its jinja blocks; here each block holds the
// workflow's code (most are empty).
//
// Float tests go through the bits (WGSL lets compilers assume no NaN or
// infinity): a row with a non-finite value it is tested on is culled, a NaN
// parameter keeps nothing, infinite window and LOD bounds compare as IEEE.

{% import "algorithms/shaders/views.wgsl" as views %}
{% import "algorithms/shaders/look_back.wgsl" as look_back %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

override SEGMENTED: bool = false;     // knob of the group primitives; nothing here is segmented
override SPIN_LIMIT: u32 = 512u;      // fruitless polls before evaluating a predecessor itself
override TRUST_STATE: bool = true;    // false (tests): this chunk's published states are ignored,
                                      // every predecessor is evaluated by the fallback

struct VisParams {
    n: u32,           // rows of this chunk
    tile_base: u32,   // global index of this chunk's first tile
    num_tiles: u32,   // tiles of this chunk (= workgroups)
    row_base: u32,    // global row index of this chunk's first row
    last_tile: u32,   // global index of the sequence's last tile (writes count)
    out_off: u32,     // one output chunk: its element offset in its binding
    ticket_base: u32, // global index of this chunk's first ticket (tile_base + lag of the chunks before)
    last_ticket: u32, // global index of the sequence's last ticket (last_tile when lag is 0)
    lag: u32,         // lagged placement: tickets between a tile's evaluation and its placement (0: none)
    count_off: u32,   // element (uint32 word) offsets of the views in their bound ranges
    ids_off: u32,
    mask_out_off: u32,
    spheres_off: u32,
    planes_off: u32,
    intervals_off: u32,
    window_off: u32,
    lod_off: u32,
    lod_range_off: u32,
{% for k in range(masks) %}
    mask{{ k }}_off: u32,
{% endfor %}
}

@group(0) @binding(0) var<uniform> P: VisParams;
@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;
{{ views.view("count", 2, "read_write", layouts.count, "P.count_off") }}
{{ views.view("mask_out", 3, "read_write", layouts.mask_out, "P.mask_out_off") }}
{{ views.view("spheres", 4, "read", layouts.spheres, "P.spheres_off") }}
{{ views.view("planes", 5, "read", layouts.planes, "P.planes_off") }}
{{ views.view("intervals", 6, "read", layouts.intervals, "P.intervals_off") }}
{{ views.view("window", 7, "read", layouts.window, "P.window_off") }}
{{ views.view("lod", 8, "read", layouts.lod, "P.lod_off") }}
{{ views.view("lod_range", 9, "read", layouts.lod_range, "P.lod_range_off") }}
{% for k in range(masks) %}
{{ views.view("mask" ~ k, 10 + k, "read", layouts["mask" ~ k], "P.mask" ~ k ~ "_off") }}
{% endfor %}
{{ views.view("ids", 10 + masks, "read", layouts.ids, "P.ids_off") }}
{% for b in scatter.dst %}
@group(0) @binding({{ b }}) var<storage, read_write> dst{{ b }}: array<u32>;
{% endfor %}
{% if scatter.table %}
@group(0) @binding({{ 11 + masks }}) var<storage, read> scatter_chunks: array<vec4<u32>>;
{% endif %}

const WG: u32 = 256u;
const ITER: u32 = {{ iters }}u;      // quads of rows per lane (template: 1, 2, 4, 8 or 16)
const WPL: u32 = {{ wpl }}u;         // bit words per lane slot (32 rows each; max(1, ITER / 8): in a
                                     // tile under 8192 rows the slots past its TILE / 32 words scan zeros)
const TILE: u32 = WG * ITER * 4u;
const LOOK_BACK: bool = {% block look_back %}true{% endblock %};  // tiles take their base from the look-back
const READY: u32 = 0x80000000u;
const PARITY: u32 = 0x40000000u;
const TAG_MASK: u32 = READY | PARITY;
const VALUE: u32 = 0xffffu;          // a tile's count (<= TILE) or half a prefix
const EPOCH_SHIFT: u32 = 22u;        // tiles of a sequence <= 2^22 (2^32 rows / 1024-row tiles)
const TICKET_MASK: u32 = (1u << EPOCH_SHIFT) - 1u;
const LOOKBACK: u32 = 64u;           // workgroup walk: predecessor states read per step (<= 256)
const SPIN_WINDOW: u32 = 4u;         // states read per step while the nearest is unpublished

var<workgroup> s_ticket: u32;
var<workgroup> s_ticket2: u32;  // a pair's second tile
var<workgroup> s_bits: array<atomic<u32>, WG * WPL>;  // the tile's kept rows, one bit each
var<workgroup> s_words: array<u32, WG * WPL>;         // the same words, read back by the writes
var<workgroup> s_before: array<u32, WG * WPL>;        // kept rows of the tile before each word
var<workgroup> s_part: array<u32, WG>;          // kept rows per scan group
{{ look_back.workgroup_state() }}
var<workgroup> s_count: atomic<u32>;
var<workgroup> s_kept: vec2<u32>;               // (kept, base), for a uniform read
var<workgroup> s_fb: atomic<u32>;
var<workgroup> s_fb_res: u32;
var<private> ep_tag: u32;  // READY | this encoding's parity

fn finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn finite4(v: vec4<f32>) -> bool { return finite(v.x) && finite(v.y) && finite(v.z) && finite(v.w); }

// Four words from word w of a role holding nw words (zero past the end).
{% macro words4(name) %}
fn {{ name }}_words4(w: u32, nw: u32) -> vec4<u32> {
    if (w + 3u < nw) { return {{ name }}_get4(w); }
    var o = vec4<u32>(0u);
    if (w < nw) { o.x = {{ name }}_get1(w); }
    if (w + 1u < nw) { o.y = {{ name }}_get1(w + 1u); }
    if (w + 2u < nw) { o.z = {{ name }}_get1(w + 2u); }
    return o;
}
{% endmacro %}
{% for k in range(masks) %}{{ words4("mask" ~ k) }}{% endfor %}
{% if spheres %}
{{ words4("spheres") }}
{{ words4("planes") }}
var<private> planes_f: array<vec4<f32>, 6>;
var<private> planes_ok: bool;

// Unrolled: a private array indexed in a loop can spill to local memory.
fn load_planes() {
    planes_ok = true;
{% for i in range(6) %}
    planes_f[{{ i }}] = bitcast<vec4<f32>>(planes_words4({{ 4 * i }}u, 24u));
    planes_ok = planes_ok && !(is_nan(planes_f[{{ i }}].x) || is_nan(planes_f[{{ i }}].y) ||
                               is_nan(planes_f[{{ i }}].z) || is_nan(planes_f[{{ i }}].w));
{% endfor %}
}

fn sphere_inside(s: vec4<f32>) -> bool {
    var ok = planes_ok && finite4(s) && s.w >= 0.0;
{% for i in range(6) %}
    ok = ok && dot(planes_f[{{ i }}].xyz, s.xyz) + planes_f[{{ i }}].w >= -s.w;
{% endfor %}
    return ok;
}
{% endif %}
{% if intervals %}
{{ words4("intervals") }}
{{ words4("window") }}
var<private> win: vec4<f32>;
var<private> win_ok: bool;

fn interval_inside(start: f32, end: f32) -> bool {
    return win_ok && finite(start) && finite(end) && end >= win.x && start <= win.y && end - start >= win.z;
}
{% endif %}
{% if lod %}
{{ words4("lod") }}
{{ words4("lod_range") }}
var<private> lod_lo: f32;
var<private> lod_hi: f32;
var<private> lod_ok: bool;

fn lod_inside(v: f32) -> bool { return lod_ok && finite(v) && lod_lo <= v && v < lod_hi; }
{% endif %}

// The per-row inputs of rows e..e+3 (a quad): loaded first, tested after,
// so a full tile can put several quads' loads in flight before any test.
struct Quad {
{% for m in range(masks) %}
    m{{ m }}: vec4<u32>,
{% endfor %}
{% if spheres %}
    s0: vec4<f32>, s1: vec4<f32>, s2: vec4<f32>, s3: vec4<f32>,
{% endif %}
{% if intervals %}
    a: vec4<f32>, b: vec4<f32>,
{% endif %}
{% if lod %}
    l: vec4<f32>,
{% endif %}
    pad: u32,  // a member even when only length is given
}

// One quad's inputs; checked: zero past the chunk's end, else unconditional
// (a full tile).
{% for checked in (false, true) %}
fn load_quad{{ "_checked" if checked else "" }}(e: u32) -> Quad {
    var d: Quad;
{% for m in range(masks) %}
    d.m{{ m }} = {{ "mask%d_words4(e, P.n)" % m if checked else "mask%d_get4(e)" % m }};
{% endfor %}
{% if spheres %}
{% for i in range(4) %}
    d.s{{ i }} = bitcast<vec4<f32>>({{ "spheres_words4(4u * e + %du, 4u * P.n)" % (4 * i) if checked
                                       else "spheres_get4(4u * e + %du)" % (4 * i) }});
{% endfor %}
{% endif %}
{% if intervals %}
    d.a = bitcast<vec4<f32>>({{ "intervals_words4(2u * e, 2u * P.n)" if checked else "intervals_get4(2u * e)" }});
    d.b = bitcast<vec4<f32>>({{ "intervals_words4(2u * e + 4u, 2u * P.n)" if checked
                                else "intervals_get4(2u * e + 4u)" }});
{% endif %}
{% if lod %}
    d.l = bitcast<vec4<f32>>({{ "lod_words4(e, P.n)" if checked else "lod_get4(e)" }});
{% endif %}
    return d;
}
{% endfor %}

// Which of a quad's rows pass every predicate.
fn keep_loaded(d: Quad) -> vec4<bool> {
    var k = vec4<bool>(true);
{% for m in range(masks) %}
    k = k & (d.m{{ m }} != vec4<u32>(0u));
{% endfor %}
{% if spheres %}
    k = k & vec4<bool>(sphere_inside(d.s0), sphere_inside(d.s1), sphere_inside(d.s2), sphere_inside(d.s3));
{% endif %}
{% if intervals %}
    k = k & vec4<bool>(interval_inside(d.a.x, d.a.y), interval_inside(d.a.z, d.a.w),
                       interval_inside(d.b.x, d.b.y), interval_inside(d.b.z, d.b.w));
{% endif %}
{% if lod %}
    k = k & vec4<bool>(lod_inside(d.l.x), lod_inside(d.l.y), lod_inside(d.l.z), lod_inside(d.l.w));
{% endif %}
    return k;
}

// Whether rows e..e+3 of this chunk are kept (rows past its end are not).
fn keep4(e: u32) -> vec4<bool> {
    return vec4<bool>(e < P.n, e + 1u < P.n, e + 2u < P.n, e + 3u < P.n) & keep_loaded(load_quad_checked(e));
}

fn store_mask4(e: u32, m: vec4<u32>) {
{% if layouts.mask_out != "none" %}
    if (e + 3u < P.n) {
        mask_out_set4(e, m);
    } else {
        if (e < P.n) { mask_out_set1(e, m.x); }
        if (e + 1u < P.n) { mask_out_set1(e + 1u, m.y); }
        if (e + 2u < P.n) { mask_out_set1(e + 2u, m.z); }
    }
{% endif %}
}

// Quad q's 0/1 keep flags m as its four bits of s_bits (word q / 8, bits
// 4 (q % 8) ..): `nibble` holds them after.
{% macro set_quad_bits() %}
    let nibble = m.x | (m.y << 1u) | (m.z << 2u) | (m.w << 3u);
    if (nibble != 0u) { atomicOr(&s_bits[q >> 3u], nibble << ((q & 7u) * 4u)); }
{% endmacro %}

// Record quad q's 0/1 keep flags m (its bits, its mask_output words); returns how many are kept.
fn take(lt: u32, q: u32, m: vec4<u32>) -> u32 {
    store_mask4(lt * TILE + 4u * q, m);
{{ set_quad_bits() }}
    return countOneBits(nibble);
}

// 0/1 of rows 4q..4q+3 of local tile lt.
fn keep_quad(lt: u32, q: u32) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u), keep4(lt * TILE + 4u * q));
}

fn scatter(k: u32, v: u32) {
{% if not scatter.table %}
    dst{{ scatter.dst[0] }}[P.out_off + k] = v;
{% else %}
    var lo = 0u;
    var hi = {{ scatter.rows - 1 }}u;
    // The binary search unrolled into its ceil(log2(rows)) steps. Written as
    // a `while` and compiled without loop bounding, it made the H200's
    // driver write wrong IDs and counts for multi-chunk outputs when every
    // predicate is given.
{% for _ in range((scatter.rows - 1).bit_length()) %}
    if (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (k < scatter_chunks[mid].x) { hi = mid; } else { lo = mid + 1u; }
    }
{% endfor %}
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

fn publish_count(t: u32, c: u32) { atomicStore(&state[1u + 3u * t], ep_tag | c); }

fn publish_prefix(t: u32, p: u32) {
    atomicStore(&state[2u + 3u * t], ep_tag | (p & VALUE));
    atomicStore(&state[3u + 3u * t], ep_tag | (p >> 16u));
}

// Predecessor tile j's state: kind 0 unpublished, 1 count, 2 inclusive prefix; and its value.
fn inspect(j: u32) -> vec2<u32> {
    if (!TRUST_STATE && j >= P.tile_base) { return vec2<u32>(0u, 0u); }
    let w = 1u + 3u * j;
    let c = atomicLoad(&state[w]);
    let p0 = atomicLoad(&state[w + 1u]);
    let p1 = atomicLoad(&state[w + 2u]);
    if ((p0 & TAG_MASK) == ep_tag && (p1 & TAG_MASK) == ep_tag) {
        return vec2<u32>(2u, (p0 & VALUE) | ((p1 & VALUE) << 16u));
    }
    if ((c & TAG_MASK) == ep_tag) { return vec2<u32>(1u, c & VALUE); }
    return vec2<u32>(0u, 0u);
}

// Kept rows of global tile j of this chunk, evaluated from its inputs (no
// mask_output write: tile j does that itself); published for other waiters.
fn reduce_tile(g: Group, j: u32) -> u32 {
    if (g.lid == 0u) { atomicStore(&s_fb, 0u); }
    workgroupBarrier();
    var kept = 0u;
    for (var r = 0u; r < ITER; r++) {
        let m = keep_quad(j - P.tile_base, r * WG + g.lid);
        kept += m.x + m.y + m.z + m.w;
    }
    if (kept != 0u) { atomicAdd(&s_fb, kept); }
    workgroupBarrier();
    if (g.lid == 0u) {
        s_fb_res = atomicLoad(&s_fb);
        publish_count(j, s_fb_res);
    }
    return workgroupUniformLoad(&s_fb_res);
}

// The look-back (look_back.wgsl): a tile's aggregate is its kept rows,
// `kept` in look_back_group; no tile ends the walk but one with its
// inclusive prefix published. The workgroup walk leaves the publishing to
// its caller (place_tile). The subgroup walk reads one state per lane and
// step (wider steps are slower: docs/benchmarks.md).
{% macro add_reduced(j, when) %}
acc += reduce_tile(g, {{ j }});
{% endmacro %}
{% macro publish_inclusive(when, prefix) %}
if ({{ when }}) { publish_prefix(tile, {{ prefix }} + kept); }
{% endmacro %}
{{ look_back.walk_workgroup(add_reduced, "SPIN_WINDOW") }}
{{ look_back.walk_group(add_reduced, publish_inclusive, "kept: u32", "g.size") }}

// Lane slot p (the order the group scans use) owns bit word p of the tile.
fn slot(g: Group) -> u32 { return g.id * g.size + g.lane; }

// Lane 0: this workgroup's next tile ticket.
fn take_ticket() -> u32 {
    let ticket = atomicAdd(&state[0], 1u);
    if ((ticket & TICKET_MASK) == P.last_ticket) {
        // every ticket of this encoding is taken: open the next epoch
        atomicStore(&state[0], ((ticket >> EPOCH_SHIFT) + 1u) << EPOCH_SHIFT);
{% block epoch_opened %}{% endblock %}
    }
    return ticket;
}

fn set_epoch(ticket: u32) { ep_tag = READY | select(0u, PARITY, ((ticket >> EPOCH_SHIFT) & 1u) != 0u); }

{% block functions %}{% endblock %}

// The tile's rows into s_bits and lane_kept (prefetched: the first batch of
// a full tile is already in p0.. : the second tile of a pair).
{% macro evaluate(lt, prefetched) %}
{% if batch %}
    if (({{ lt }} + 1u) * TILE <= P.n) {
        // A full tile: unconditional loads, `batch` quads of them in flight
        // before the first test (the template unrolls the iterations).
{% for first in range(0, iters, batch) %}
{% set last = [first + batch, iters] | min %}
{% for r in range(first, last) %}
{% if prefetched and first == 0 %}
        let d{{ r }} = p{{ r }};
{% else %}
        let d{{ r }} = load_quad({{ lt }} * TILE + 4u * ({{ r }}u * WG + g.lid));
{% endif %}
{% endfor %}
{% for r in range(first, last) %}
        lane_kept += take({{ lt }}, {{ r }}u * WG + g.lid, select(vec4<u32>(0u), vec4<u32>(1u), keep_loaded(d{{ r }})));
{% endfor %}
{% endfor %}
    } else {
{% endif %}
    for (var r = 0u; r < ITER; r++) {
        let q = r * WG + g.lid;
        lane_kept += take({{ lt }}, q, keep_quad({{ lt }}, q));
    }
{% if batch %}
    }
{% endif %}
{% endmacro %}

// The in-tile scan: s_bits (cleared behind it) into s_words, and into
// s_before the kept rows of the tile before each bit word: one group scan of
// the popcounts of the WPL consecutive words each lane slot owns; s_part
// holds each scan group's total.
{% macro scan_bits() %}
    let q = WPL * slot(g);
{% for j in range(wpl) %}
    let w{{ j }} = atomicLoad(&s_bits[q + {{ j }}u]);
    s_words[q + {{ j }}u] = w{{ j }};
    atomicStore(&s_bits[q + {{ j }}u], 0u);  // for the next tile of a pair (read by this lane alone)
{% endfor %}
    let sc = grp_scan4(g, vec4<u32>(0u), vec4<u32>({% for j in range(wpl) %}{{ " + " if j }}countOneBits(w{{ j }}){% endfor %}, 0u, 0u, 0u));
    if (g.lane == 0u) { s_part[g.id] = sc.tot_v.x; }
    workgroupBarrier();
    var before = sc.ex_v.x;
    for (var k = 0u; k < g.id; k++) { before += s_part[k]; }
{% for j in range(wpl) %}
    s_before[q + {{ j }}u] = before;
{% if not loop.last %}
    before += countOneBits(w{{ j }});
{% endif %}
{% endfor %}
{% endmacro %}

// Tile `t`'s base (kept rows before it) from the look-back when `walk`
// holds, its inclusive prefix published, the count written by the
// sequence's last tile, (kept, base) into s_kept; `kept` and `base` (0) are
// the caller's variables.
{% macro place_tile(t, walk) %}
    if ({{ walk }}) {
        if (GROUP_COLLECTIVES) {
            base = look_back_group(g, {{ t }}, kept);  // publishes the inclusive prefix itself
        } else {
            base = look_back(g, {{ t }});
            if (g.lid == 0u) { publish_prefix({{ t }}, base + kept); }
        }
    }
    if (g.lid == 0u) {
        if ({{ t }} == P.last_tile) { count_set1(0u, base + kept); }
        s_kept = vec2<u32>(kept, base);
    }
{% endmacro %}

// After a tile's rows are in s_bits: its count (published at once), the
// in-tile scan into s_words / s_before (s_bits cleared behind it), the
// look-back and the inclusive prefix; the sequence's last tile writes the
// count. Returns (kept, base), workgroup-uniform.
fn settle(g: Group, tile: u32, lane_kept_in: u32) -> vec2<u32> {
    var lane_kept = lane_kept_in;
    if (GROUP_COLLECTIVES) { lane_kept = grp_add(lane_kept); }  // one atomic per subgroup
    if (lane_kept != 0u && (!GROUP_COLLECTIVES || g.lane == 0u)) { atomicAdd(&s_count, lane_kept); }
    workgroupBarrier();
    let kept = atomicLoad(&s_count);
    if (g.lid == 0u) {  // published before the in-tile scan: successors may sum it sooner
        publish_count(tile, kept);
        if (tile == 0u) { publish_prefix(tile, kept); }
    }
    // Kept rows of the tile before each bit word.
{{ scan_bits() }}
    var base = 0u;
{% block tile_base %}{% endblock %}
{{ place_tile("tile", "LOOK_BACK && tile != 0u") }}
    // (a barrier too: s_words and s_before are complete, every lane has read s_count)
    return workgroupUniformLoad(&s_kept);
}

// The kept IDs of local tile lt (kb: settle's (kept, base)).
fn write_ids(g: Group, lt: u32, kb: vec2<u32>) {
{% block write_ids %}{% endblock %}
    let kept = kb.x;
    let base = kb.y;
    if (kept == 0u) { return; }  // uniform
    let row0 = lt * TILE;
    // Unrolled by the template: as a counted loop, compiled without loop
    // bounding, two tiles per workgroup and lagged placement write wrong
    // counts on the H200's driver.
{% for r in range(4 * iters) %}
    {
        let t = {{ r }}u * WG + g.lid;
        let w = s_words[t >> 5u];
        let b = t & 31u;
        if (((w >> b) & 1u) != 0u) {
            scatter(base + s_before[t >> 5u] + countOneBits(w & ((1u << b) - 1u)), row_id(row0 + t));
        }
    }
{% endfor %}
}

{% if lag %}
// Lagged placement (write_lag > 0). The workgroup taking a chunk's ticket s
// evaluates tile s (when s < its tiles) and publishes the tile's count and
// kept bits, then places and writes tile s - lag (when s >= lag). That
// tile's predecessors began their evaluations at least lag tickets earlier,
// so its look-back sums published states instead of waiting for tiles still
// loading; the last lag tickets of a chunk only place. A tile's bits travel
// as HALVES 16-bit halves tagged like the states, after them in `state`.
const HALVES: u32 = TILE / 16u;

fn halves_at(t: u32) -> u32 { return 1u + 3u * (P.last_tile + 1u) + {% block reserved_words %}0{% endblock %}u + t * HALVES; }

// After tile `tile`'s evaluation: its count and its bits published, s_bits cleared.
fn publish_evaluated(g: Group, tile: u32, lane_kept_in: u32) {
    var lane_kept = lane_kept_in;
    if (GROUP_COLLECTIVES) { lane_kept = grp_add(lane_kept); }  // one atomic per subgroup
    if (lane_kept != 0u && (!GROUP_COLLECTIVES || g.lane == 0u)) { atomicAdd(&s_count, lane_kept); }
    workgroupBarrier();
    if (g.lid == 0u) {
        let kept = atomicLoad(&s_count);
        publish_count(tile, kept);
        if (tile == 0u) { publish_prefix(tile, kept); }
    }
    let at = halves_at(tile);
    for (var h = g.lid; h < HALVES; h += WG) {
        atomicStore(&state[at + h], ep_tag | ((atomicLoad(&s_bits[h >> 1u]) >> ((h & 1u) << 4u)) & VALUE));
    }
    workgroupBarrier();
    for (var j = g.lid; j < TILE / 32u; j += WG) { atomicStore(&s_bits[j], 0u); }
}

// Tile lt's kept bits into s_bits from its inputs (the fallback of load_bits;
// no mask_output writes: the tile's own workgroup makes them).
fn evaluate_bits(g: Group, lt: u32) {
    for (var r = 0u; r < ITER; r++) {
        let q = r * WG + g.lid;
        let m = keep_quad(lt, q);
{{ set_quad_bits() }}
    }
    workgroupBarrier();
}

// Global tile w's kept bits into s_bits (cleared before): its published
// halves, or the tile evaluated again here when some stay unpublished for
// SPIN_LIMIT polls (at once when TRUST_STATE is false: tests of that path).
fn load_bits(g: Group, w: u32) {
    let at = halves_at(w);
    var polls = 0u;
    if (g.lid == 0u) { atomicStore(&s_fb, 0u); }
    workgroupBarrier();  // s_bits cleared, s_fb zero
    loop {
        var missing = false;
        for (var h = g.lid; h < HALVES; h += WG) {
            let v = atomicLoad(&state[at + h]);
            if (!TRUST_STATE || (v & TAG_MASK) != ep_tag) {
                missing = true;
            } else if ((v & VALUE) != 0u) {  // (again on a later poll: the same bits)
                atomicOr(&s_bits[h >> 1u], (v & VALUE) << ((h & 1u) << 4u));
            }
        }
        if (missing) { atomicStore(&s_fb, 1u); }
        workgroupBarrier();
        if (g.lid == 0u) {
            s_fb_res = atomicLoad(&s_fb);
            atomicStore(&s_fb, 0u);
        }
        if (workgroupUniformLoad(&s_fb_res) == 0u) { return; }
        polls += 1u;
        if (polls > SPIN_LIMIT || !TRUST_STATE) {
            evaluate_bits(g, w - P.tile_base);
            return;
        }
    }
}

// Global tile w, its bits in s_bits: the in-tile scan, its base from the
// look-back (its inclusive prefix published), the count when it is the
// sequence's last tile. Returns (kept, base), workgroup-uniform.
fn place(g: Group, w: u32) -> vec2<u32> {
{{ scan_bits() }}
    var kept = 0u;  // (the scan's barrier: every group's total is in s_part)
    for (var k = 0u; k < g.count; k++) { kept += s_part[k]; }
    var base = 0u;
{{ place_tile("w", "w != 0u") }}
    return workgroupUniformLoad(&s_kept);
}
{% endif %}

fn kernel_main(g: Group, wg: u32) {
{% if pair %}
    // Pairs: ceil(tiles / 2) workgroups, the first tiles - groups of them
    // take a second ticket once their first tile's look-back is done and
    // load its first batch while writing the first tile's IDs.
    let groups = (P.num_tiles + 1u) / 2u;
    if (wg >= groups) { return; }  // uniform per workgroup: the 2-D grid's spare groups
    let second = wg < P.num_tiles - groups;
{% else %}
    if (wg >= P.num_tiles{{ " + P.lag" if lag }}) { return; }  // uniform per workgroup: the 2-D grid's spare groups
{% endif %}
{% block kernel_start %}{% endblock %}
    if (g.lid == 0u) { s_ticket = take_ticket(); }
    for (var j = 0u; j < WPL; j++) { atomicStore(&s_bits[WPL * slot(g) + j], 0u); }
{% if spheres %}
    load_planes();
{% endif %}
{% if intervals %}
    win = bitcast<vec4<f32>>(window_words4(0u, 4u));
    win_ok = !(is_nan(win.x) || is_nan(win.y) || is_nan(win.z)) && win.x <= win.y;
{% endif %}
{% if lod %}
    let lr = bitcast<vec4<f32>>(lod_range_words4(0u, 2u));
    lod_lo = lr.x;
    lod_hi = lr.y;
    lod_ok = !(is_nan(lr.x) || is_nan(lr.y));
{% endif %}
    if (g.lid == 0u) { atomicStore(&s_count, 0u); }
    let ticket = workgroupUniformLoad(&s_ticket);  // also: s_bits and s_count cleared
{% if lag %}
    set_epoch(ticket);
    let slot = (ticket & TICKET_MASK) - P.ticket_base;
    if (slot < P.num_tiles) {
        let lt = slot;
        var lane_kept = 0u;
{{ evaluate("lt", false) }}
        publish_evaluated(g, P.tile_base + lt, lane_kept);
    }
    if (slot >= P.lag) {
        let lw = slot - P.lag;
        load_bits(g, P.tile_base + lw);
        write_ids(g, lw, place(g, P.tile_base + lw));
    }
{% block lagged_end %}{% endblock %}
{% else %}
    let tile = ticket & TICKET_MASK;
    set_epoch(ticket);
    let lt = tile - P.tile_base;
    // In iteration r the lane takes quad r * WG + lid of the tile.
    var lane_kept = 0u;
{{ evaluate("lt", false) }}
{% macro prefetch() %}
        let tile2 = ticket2 & TICKET_MASK;
        let lt2 = tile2 - P.tile_base;
{% if batch %}
{% for r in range([batch, iters] | min) %}
        var p{{ r }}: Quad;
{% endfor %}
        if ((lt2 + 1u) * TILE <= P.n) {
{% for r in range([batch, iters] | min) %}
            p{{ r }} = load_quad(lt2 * TILE + 4u * ({{ r }}u * WG + g.lid));
{% endfor %}
        }
{% endif %}
{% endmacro %}
{% if pair == "early" %}
    // early: the second ticket right after the first tile's loads, its
    // first batch in flight through the first tile's scan, look-back and writes
    if (second) {
        if (g.lid == 0u) { s_ticket2 = take_ticket(); }
        let ticket2 = workgroupUniformLoad(&s_ticket2);
{{ prefetch() }}
        let kb = settle(g, tile, lane_kept);
        if (g.lid == 0u) { atomicStore(&s_count, 0u); }
        write_ids(g, lt, kb);
        workgroupBarrier();  // s_count cleared before the second tile adds to it
{% else %}
    let kb = settle(g, tile, lane_kept);
{% endif %}
{% if pair == "late" %}
    if (second) {
        if (g.lid == 0u) {
            s_ticket2 = take_ticket();
            atomicStore(&s_count, 0u);
        }
        let ticket2 = workgroupUniformLoad(&s_ticket2);
{{ prefetch() }}
        write_ids(g, lt, kb);
{% endif %}
{% if pair %}
        set_epoch(ticket2);
        lane_kept = 0u;
{{ evaluate("lt2", true) }}
        write_ids(g, lt2, settle(g, tile2, lane_kept));
        return;
    }
{% endif %}
{% if pair == "early" %}
    let kb = settle(g, tile, lane_kept);
{% endif %}
    write_ids(g, lt, kb);
{% block kernel_end %}{% endblock %}
{% endif %}
}
