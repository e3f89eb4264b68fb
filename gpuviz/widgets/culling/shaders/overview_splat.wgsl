// FrustumCulling: the dense overview drawn by compute (one pixel per row).
//
// A rasteriser spends a primitive on every row whatever its size on screen;
// at 250K+ rows the overview's rows are a pixel each, so three dispatches
// write them straight into one word per overview pixel instead:
//   clear    every word of the overview's rectangle to 0 (empty);
//   all      each drawable row k: atomicMax(word, k + 1)         (culled colour);
//   visible  each compacted ID t < count: atomicMax(word, 0x80000000 | (id + 1)).
// atomicMax keeps what the rasterised points showed: a visible row over any
// culled one, and among equals the last in draw order (the higher row).
// draw.wgsl's fs_overview_resolve turns the words into colour and IDs.

{% include "widgets/culling/shaders/camera.wgsl" %}

override COUNT_WORD: u32;  // index of the indirect record's instanceCount in `draws`
override ROWS: u32;

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read> draws: array<u32>;
@group(0) @binding(4) var<storage, read_write> words: array<atomic<u32>>;

const VISIBLE_BIT: u32 = 0x80000000u;

fn index_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.y * nwg.x + wid.x) * 256u + lid;
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// the word of a sphere's centre, or -1 outside the overview
fn pixel_of(s: vec4<f32>) -> i32 {
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

@compute @workgroup_size(256)
fn clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = index_of(wid, nwg, lid);
    if (i < u32(camera.overview_rect.z * camera.overview_rect.w)) {
        atomicStore(&words[i], 0u);
    }
}

@compute @workgroup_size(256)
fn all(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let k = index_of(wid, nwg, lid);
    if (k >= ROWS) {
        return;
    }
    let w = pixel_of(spheres[k]);
    if (w >= 0) {
        atomicMax(&words[w], k + 1u);
    }
}

@compute @workgroup_size(256)
fn visible(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let t = index_of(wid, nwg, lid);
    if (t >= min(draws[COUNT_WORD], ROWS)) {
        return;
    }
    let id = ids[t];
    let w = pixel_of(spheres[id]);
    if (w >= 0) {
        atomicMax(&words[w], VISIBLE_BIT | (id + 1u));
    }
}
