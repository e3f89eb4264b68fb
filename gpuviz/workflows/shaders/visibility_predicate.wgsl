// GPUVisibilityWorkflow, pass 1: every predicate of one row fused into one
// read of its inputs.
//
// One workgroup evaluates one tile of TILE = 8192 rows of one chunk: in
// iteration r (0..7) lane l takes rows (r * 256 + l) * 4 .. + 3, so every
// load is a coalesced vec4 (two for intervals, four for spheres). The kept
// rows become one bit each in workgroup memory; the tile's 256 bit words and
// its kept-row count go to `bits` and `counts` (indexed by the global tile
// tile_base + workgroup, so the chunks of a vector share one sequence). The
// optional mask_output gets canonical 0/1 words.
//
// Template values: layouts (views.view layout of each role: mask_out,
// spheres, planes, intervals, window, lod, lod_range, mask0..; "none" for a
// role not given), masks (how many masks), spheres/intervals/lod (which
// predicates run). Sizes and view offsets are VisParams fields, so every
// chunk of one structure shares a pipeline; parameter contents (planes,
// window, lod_range) are read from their buffers on every dispatch.
//
// Float tests go through the bits (WGSL lets compilers assume no NaN or
// infinity): a row with a non-finite value it is tested on is culled, a NaN
// parameter keeps nothing, infinite window and LOD bounds compare as IEEE.

{% import "algorithms/shaders/views.wgsl" as views %}

struct VisParams {
    n: u32,           // rows of this chunk
    tile_base: u32,   // global index of this chunk's first tile
    num_tiles: u32,   // tiles of this chunk (= workgroups)
    mask_out_off: u32,
    spheres_off: u32, // element (uint32 word) offsets of the views in their bound ranges
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
@group(0) @binding(1) var<storage, read_write> bits: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
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

const WG: u32 = 256u;
const ITER: u32 = 8u;
const TILE: u32 = WG * ITER * 4u;

var<workgroup> s_bits: array<atomic<u32>, WG>;
var<workgroup> s_count: atomic<u32>;

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

// Whether rows e..e+3 of this chunk are kept.
fn keep4(e: u32) -> vec4<bool> {
    var k = vec4<bool>(e < P.n, e + 1u < P.n, e + 2u < P.n, e + 3u < P.n);
{% for m in range(masks) %}
    k = k & (mask{{ m }}_words4(e, P.n) != vec4<u32>(0u));
{% endfor %}
{% if spheres %}
    let nw = 4u * P.n;
    k = k & vec4<bool>(sphere_inside(bitcast<vec4<f32>>(spheres_words4(4u * e, nw))),
                       sphere_inside(bitcast<vec4<f32>>(spheres_words4(4u * e + 4u, nw))),
                       sphere_inside(bitcast<vec4<f32>>(spheres_words4(4u * e + 8u, nw))),
                       sphere_inside(bitcast<vec4<f32>>(spheres_words4(4u * e + 12u, nw))));
{% endif %}
{% if intervals %}
    let a = bitcast<vec4<f32>>(intervals_words4(2u * e, 2u * P.n));
    let b = bitcast<vec4<f32>>(intervals_words4(2u * e + 4u, 2u * P.n));
    k = k & vec4<bool>(interval_inside(a.x, a.y), interval_inside(a.z, a.w),
                       interval_inside(b.x, b.y), interval_inside(b.z, b.w));
{% endif %}
{% if lod %}
    let l = bitcast<vec4<f32>>(lod_words4(e, P.n));
    k = k & vec4<bool>(lod_inside(l.x), lod_inside(l.y), lod_inside(l.z), lod_inside(l.w));
{% endif %}
    return k;
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

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= P.num_tiles) { return; }  // uniform per workgroup: the 2-D grid's spare groups
    atomicStore(&s_bits[lid], 0u);
    if (lid == 0u) { atomicStore(&s_count, 0u); }
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
    workgroupBarrier();
    var kept = 0u;
    for (var r = 0u; r < ITER; r++) {
        let q = r * WG + lid;  // this lane's group of four rows in the tile
        let e = wg * TILE + 4u * q;
        let m = select(vec4<u32>(0u), vec4<u32>(1u), keep4(e));
        store_mask4(e, m);
        let nibble = m.x | (m.y << 1u) | (m.z << 2u) | (m.w << 3u);
        if (nibble != 0u) {
            atomicOr(&s_bits[q >> 3u], nibble << ((q & 7u) * 4u));
            kept += countOneBits(nibble);
        }
    }
    if (kept != 0u) { atomicAdd(&s_count, kept); }
    workgroupBarrier();
    let tile = P.tile_base + wg;
    bits[tile * WG + lid] = atomicLoad(&s_bits[lid]);
    if (lid == 0u) { counts[tile] = atomicLoad(&s_count); }
}
