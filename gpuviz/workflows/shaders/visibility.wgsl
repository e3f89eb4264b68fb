// GPUVisibilityWorkflow, pass 1 of 3: every predicate of a row fused into
// one read of its inputs; the tile's kept rows as bit words and a count.
//
// A workgroup handles tiles of TILE = 1024 * iters rows (1024 to 16384)
// of one chunk, one after another, taking each tile's index from the
// chunk's ticket word (the next ticket is taken while the current tile
// loads): the dispatch has at most as many workgroups as the workflow's
// resident_groups, and whichever runs out of work last is at most one tile
// behind the others (a grid of one workgroup per tile ends with a partial
// wave of whole tiles). visibility_write.wgsl resets the tickets for the
// next encoding. Within a tile, in iteration r (0..ITER-1) lane l evaluates rows
// (r * 256 + l) * 4 .. + 3, so every load is a coalesced vec4 (two for
// intervals, four for spheres); a full tile's loop is unrolled into batches
// of `batch` quads whose loads all go out before the first test (batch 0:
// the bounds-checked loop only). The kept rows become one bit each in
// workgroup memory (and canonical 0/1 words in the optional mask_output),
// then the tile's TILE / 32 bit words go to `bits` and its kept-row count to
// `counts`. The workflow then scans the counts into tile bases (GPUScan's
// chained scan, which also writes the total into `count`) and
// visibility_write.wgsl writes the IDs. Nothing here waits on another
// workgroup.
//
// Template values: layouts (views.view layout of each role: bits, counts,
// mask_out, spheres, planes, intervals, window, lod, lod_range, mask0..;
// "none" for a role not given), masks (how many), spheres/intervals/lod
// (which predicates run), subgroups (which group primitives), the tuning
// (iters, batch). Sizes and view offsets are VisParams fields, so every
// chunk of one structure shares a pipeline; parameter contents (planes,
// window, lod_range) are read from their buffers on every dispatch.
//
// Float tests go through the bits (WGSL lets compilers assume no NaN or
// infinity): a row with a non-finite value it is tested on is culled, a NaN
// parameter keeps nothing, infinite window and LOD bounds compare as IEEE.

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

override SEGMENTED: bool = false;  // knob of the group primitives; nothing here is segmented

struct VisParams {
    n: u32,           // rows of this chunk
    num_tiles: u32,   // tiles of this chunk
    ticket: u32,      // this chunk's word in `tickets`
    bits_off: u32,    // element (uint32 word) offsets of the views in their bound ranges
    counts_off: u32,
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
{{ views.view("bits", 1, "read_write", layouts.bits, "P.bits_off") }}
{{ views.view("counts", 2, "read_write", layouts.counts, "P.counts_off") }}
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
@group(0) @binding({{ 10 + masks }}) var<storage, read_write> tickets: array<atomic<u32>>;

const WG: u32 = 256u;
const ITER: u32 = {{ iters }}u;  // quads of rows per lane (template: 1, 2, 4, 8 or 16)
const TILE: u32 = WG * ITER * 4u;
const WORDS: u32 = TILE / 32u;   // bit words per tile (32 to 512)

var<workgroup> s_bits: array<atomic<u32>, WORDS>;  // the tile's kept rows, one bit each
var<workgroup> s_count: atomic<u32>;
var<workgroup> s_next: u32;  // the next tile's ticket

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

// Record quad q's 0/1 keep flags m (its bits, its mask_output words); returns how many are kept.
fn take(lt: u32, q: u32, m: vec4<u32>) -> u32 {
    store_mask4(lt * TILE + 4u * q, m);
    let nibble = m.x | (m.y << 1u) | (m.z << 2u) | (m.w << 3u);
    if (nibble != 0u) { atomicOr(&s_bits[q >> 3u], nibble << ((q & 7u) * 4u)); }
    return countOneBits(nibble);
}

// 0/1 of rows 4q..4q+3 of local tile lt.
fn keep_quad(lt: u32, q: u32) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u), keep4(lt * TILE + 4u * q));
}


// The tile's rows into s_bits; returns how many of this lane's rows are kept.
fn evaluate(g: Group, lt: u32) -> u32 {
    var lane_kept = 0u;
{% if batch %}
    if ((lt + 1u) * TILE <= P.n) {
        // A full tile: unconditional loads, `batch` quads of them in flight
        // before the first test (the template unrolls the iterations).
{% for first in range(0, iters, batch) %}
{% set last = [first + batch, iters] | min %}
{% for r in range(first, last) %}
        let d{{ r }} = load_quad(lt * TILE + 4u * ({{ r }}u * WG + g.lid));
{% endfor %}
{% for r in range(first, last) %}
        lane_kept += take(lt, {{ r }}u * WG + g.lid, select(vec4<u32>(0u), vec4<u32>(1u), keep_loaded(d{{ r }})));
{% endfor %}
{% endfor %}
        return lane_kept;
    }
{% endif %}
    for (var r = 0u; r < ITER; r++) {
        let q = r * WG + g.lid;
        lane_kept += take(lt, q, keep_quad(lt, q));
    }
    return lane_kept;
}

fn kernel_main(g: Group, wg: u32) {
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
    if (g.lid == 0u) { s_next = atomicAdd(&tickets[P.ticket], 1u); }
    var lt = workgroupUniformLoad(&s_next);
    loop {
        if (lt >= P.num_tiles) { break; }
        for (var w = g.lid; w < WORDS; w += WG) { atomicStore(&s_bits[w], 0u); }
        if (g.lid == 0u) {
            atomicStore(&s_count, 0u);
            s_next = atomicAdd(&tickets[P.ticket], 1u);
        }
        workgroupBarrier();  // s_bits and s_count cleared
        var lane_kept = evaluate(g, lt);
        if (GROUP_COLLECTIVES) { lane_kept = grp_add(lane_kept); }  // one atomic per subgroup
        if (lane_kept != 0u && (!GROUP_COLLECTIVES || g.lane == 0u)) { atomicAdd(&s_count, lane_kept); }
        workgroupBarrier();
        for (var w = g.lid; w < WORDS; w += WG) { bits_set1(lt * WORDS + w, atomicLoad(&s_bits[w])); }
        if (g.lid == 0u) { counts_set1(lt, atomicLoad(&s_count)); }
        lt = workgroupUniformLoad(&s_next);  // (a barrier too: s_bits read before the next clear)
    }
}
