// FrustumCulling, dense scenes: what a rasteriser would spend a primitive
// per instance on, written by compute instead (one bind group, three
// dispatches; graph.py's "splat" node).
//
// Both views are compute rasterisation (render/shaders/raster.wgsl); this
// file holds what is splatted where.
//
// Overview (OVERVIEW): every row a pixel, a packed target of one word per
// overview pixel with a one-bit key: every drawable row k with key 0 (culled
// colour), then each compacted ID with key VISIBLE: a visible row wins over
// any culled one and among equals the last in draw order (the higher row),
// as rasterised points showed them.
//
// Perspective (PERSPECTIVE): visible instances whose bounding sphere
// projects to less than SPLAT_RADIUS pixels become a square of a depth
// target (the square their cube covers at most, one depth: the centre's);
// the others are appended to `large`, the instanceCount of a second indexed
// indirect record the rasteriser draws (depth tested against the splats).
//
// Dispatches, in order:
//   clear  the overview words and the perspective depths / hits (empty), the
//          large count to 0 (threads: the larger viewport's pixels);
//   rows   thread k: the overview word of row k; for k < count, id = ids[k]:
//          its overview word, and its perspective square's depths (or `large`,
//          one global atomic per workgroup);
//   hits   for k < count, a small id again: its ID where its depth won.
// draw.wgsl's fs_overview_resolve / fs_perspective_resolve read the words.

{% include "widgets/culling/shaders/camera.wgsl" %}
{% import "render/shaders/raster.wgsl" as raster %}

override COUNT_WORD: u32;   // the visible record's instanceCount in `draws`
override LARGE_WORD: u32;   // the large record's instanceCount in `draws`
override ROWS: u32;
override OVERVIEW: bool;
override PERSPECTIVE: bool;
override SPLAT_RADIUS: f32; // pixels: smaller bounding spheres are splatted

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> draws: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> words: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> depths: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> large: array<u32>;

const VISIBLE: u32 = 1u;  // the overview's key: a visible row over a culled one
{{ raster.packed_format("packed", 1) }}
{{ raster.packed_target("words") }}
{{ raster.depth_target("depths", "hits") }}

fn index_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.y * nwg.x + wid.x) * 256u + lid;
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn visible_count() -> u32 {
    return min(atomicLoad(&draws[COUNT_WORD]), ROWS);
}

// ---------------------------------------------------------------- overview
// the overview word of a sphere's centre, or -1 (not drawable, or outside)
fn overview_word(s: vec4<f32>) -> i32 {
    if (!(finite(s.x) && finite(s.y) && finite(s.z) && finite(s.w) && s.w >= 0.0)) {
        return -1;
    }
    let p = camera.overview * vec4<f32>(s.x, 0.0, s.z, 1.0);
    let size = camera.overview_rect.zw;
    let xy = floor(vec2<f32>((p.x + 1.0) * 0.5, (1.0 - p.y) * 0.5) * size);
    if (!(xy.x >= 0.0 && xy.y >= 0.0 && xy.x < size.x && xy.y < size.y)) {
        return -1;
    }
    return i32(xy.y * size.x + xy.x);
}

// ------------------------------------------------------------- perspective
struct Splat {
    lo: vec2<i32>,   // first and last covered pixel (inclusive), in the viewport
    hi: vec2<i32>,
    depth: u32,      // raster depth bits of the centre's depth in 0..1; RASTER_FAR: off screen
    small: bool,
}

fn splat_of(s: vec4<f32>) -> Splat {
    var out: Splat;
    out.small = false;
    let clip = camera.view_proj * vec4<f32>(s.xyz, 1.0);
    // the projection's y scale: row 1 of view_proj is that scale times a unit view axis
    let scale = length(vec3<f32>(camera.view_proj[0][1], camera.view_proj[1][1], camera.view_proj[2][1]));
    let size = camera.perspective_rect.zw;
    let radius = s.w * scale / clip.w * 0.5 * size.y;
    let depth = clip.z / clip.w;
    // behind the eye, straddling near or far, or large: the rasteriser (it clips exactly)
    if (!(clip.w > 0.0 && radius < SPLAT_RADIUS && depth >= 0.0 && depth <= 1.0)) {
        return out;
    }
    let centre = vec2<f32>((clip.x / clip.w + 1.0) * 0.5, (1.0 - clip.y / clip.w) * 0.5) * size;
    // a cube of half-size r / sqrt(3) spans at most r each way on screen: cover pixel centres within 0.8 r
    let half = max(0.8 * radius, 0.5);
    let lo = clamp(ceil(centre - half - 0.5), vec2<f32>(0.0), size - 1.0);
    let hi = clamp(floor(centre + half - 0.5), vec2<f32>(0.0), size - 1.0);
    out.lo = vec2<i32>(lo);
    out.hi = max(vec2<i32>(hi), out.lo);
    let inside = all(centre + half > vec2<f32>(0.0)) && all(centre - half < size);
    out.small = true;
    out.depth = select(RASTER_FAR, raster_depth_bits(depth), inside);
    return out;
}

// ------------------------------------------------------------- entry points
@compute @workgroup_size(256)
fn clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = index_of(wid, nwg, lid);
    if (OVERVIEW && i < u32(camera.overview_rect.z * camera.overview_rect.w)) {
        words_clear(i);
    }
    if (PERSPECTIVE) {
        if (i == 0u) {
            atomicStore(&draws[LARGE_WORD], 0u);
        }
        if (i < u32(camera.perspective_rect.z * camera.perspective_rect.w)) {
            depths_clear(i);
        }
    }
}

var<workgroup> large_here: atomic<u32>;  // this workgroup's large instances
var<workgroup> large_base: u32;          // where they go in `large`

@compute @workgroup_size(256)
fn rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let k = index_of(wid, nwg, lid);
    if (PERSPECTIVE) {
        // explicitly: not every driver zeroes workgroup memory per dispatch (lavapipe kept the last count)
        if (lid == 0u) {
            atomicStore(&large_here, 0u);
        }
        workgroupBarrier();
    }
    if (OVERVIEW && k < ROWS) {
        let w = overview_word(spheres[k]);
        if (w >= 0) {
            words_splat(u32(w), packed_word(0u, k));
        }
    }
    var id = 0u;
    var slot = 0xffffffffu;  // this thread's place among the workgroup's large instances, if it has one
    if (k < visible_count()) {
        id = ids[k];
        let s = spheres[id];
        if (OVERVIEW) {
            let w = overview_word(s);
            if (w >= 0) {
                words_splat(u32(w), packed_word(VISIBLE, id));
            }
        }
        if (PERSPECTIVE) {
            let sp = splat_of(s);
            if (!sp.small) {
                slot = atomicAdd(&large_here, 1u);
            } else if (sp.depth != RASTER_FAR) {
                let w = i32(camera.perspective_rect.z);
                for (var y = sp.lo.y; y <= sp.hi.y; y++) {
                    for (var x = sp.lo.x; x <= sp.hi.x; x++) {
                        depths_test(u32(y * w + x), sp.depth);
                    }
                }
            }
        }
    }
    if (!PERSPECTIVE) {
        return;
    }
    // one global atomic per workgroup, not per large instance (they would all hit one word)
    workgroupBarrier();
    if (lid == 0u) {
        let here = atomicLoad(&large_here);
        large_base = select(0u, atomicAdd(&draws[LARGE_WORD], here), here > 0u);
    }
    workgroupBarrier();
    if (slot != 0xffffffffu) {
        large[large_base + slot] = id;
    }
}

@compute @workgroup_size(256)
fn hits_pass(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let k = index_of(wid, nwg, lid);
    if (!PERSPECTIVE || k >= visible_count()) {
        return;
    }
    let id = ids[k];
    let sp = splat_of(spheres[id]);
    if (!sp.small || sp.depth == RASTER_FAR) {
        return;
    }
    let w = i32(camera.perspective_rect.z);
    for (var y = sp.lo.y; y <= sp.hi.y; y++) {
        for (var x = sp.lo.x; x <= sp.hi.x; x++) {
            depths_hit(u32(y * w + x), sp.depth, id);
        }
    }
}
