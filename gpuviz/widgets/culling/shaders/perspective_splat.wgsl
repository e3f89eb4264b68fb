// FrustumCulling: the perspective view's small instances drawn by compute.
//
// Most visible instances of a large scene cover a pixel or two, and the
// rasteriser would spend 7 vertices and 6 triangles on each. Instances whose
// bounding sphere projects to less than SPLAT_RADIUS pixels are written into
// two words per perspective pixel instead (the square their cube covers at
// most, one depth: the centre's), the others appended to `large` with the
// instanceCount of a second indexed indirect record (drawn by the rasteriser,
// depth tested against the splats). Dispatches, in order:
//   clear    depth words to 0xffffffff, ID words to 0, the large count to 0;
//   depth    each compacted ID t < count: small -> atomicMin(depth, its depth bits)
//            over its square, large -> appended to `large`;
//   ids      each small one again: where its depth won, atomicMax(ID word, id + 1)
//            (equal depths: the higher row, deterministic).
// draw.wgsl's fs_perspective_resolve turns the words into colour, IDs and depth.

{% include "widgets/culling/shaders/camera.wgsl" %}

override COUNT_WORD: u32;   // the visible record's instanceCount in `draws`
override LARGE_WORD: u32;   // the large record's instanceCount in `draws`
override ROWS: u32;
override SPLAT_RADIUS: f32; // pixels: smaller bounding spheres are splatted

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> draws: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> depths: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> large: array<u32>;

const EMPTY_DEPTH: u32 = 0xffffffffu;

struct Splat {
    lo: vec2<i32>,   // first and last covered pixel (inclusive), in the viewport
    hi: vec2<i32>,
    depth: u32,      // bits of the centre's depth in 0..1 (ordered like the floats)
    small: bool,
}

fn index_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.y * nwg.x + wid.x) * 256u + lid;
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
    if (!(clip.w > 0.0 && radius < SPLAT_RADIUS && depth >= 0.0 && depth <= 1.0 && s.w >= 0.0)) {
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
    out.depth = select(EMPTY_DEPTH, bitcast<u32>(max(depth, 0.0)), inside);
    return out;
}

@compute @workgroup_size(256)
fn clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = index_of(wid, nwg, lid);
    if (i == 0u) {
        atomicStore(&draws[LARGE_WORD], 0u);
    }
    if (i < u32(camera.perspective_rect.z * camera.perspective_rect.w)) {
        atomicStore(&depths[i], EMPTY_DEPTH);
        atomicStore(&hits[i], 0u);
    }
}

@compute @workgroup_size(256)
fn depth(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let t = index_of(wid, nwg, lid);
    if (t >= min(atomicLoad(&draws[COUNT_WORD]), ROWS)) {
        return;
    }
    let id = ids[t];
    let sp = splat_of(spheres[id]);
    if (!sp.small) {
        large[atomicAdd(&draws[LARGE_WORD], 1u)] = id;
        return;
    }
    if (sp.depth == EMPTY_DEPTH) {
        return;  // wholly outside the viewport
    }
    let w = i32(camera.perspective_rect.z);
    for (var y = sp.lo.y; y <= sp.hi.y; y++) {
        for (var x = sp.lo.x; x <= sp.hi.x; x++) {
            atomicMin(&depths[y * w + x], sp.depth);
        }
    }
}

@compute @workgroup_size(256)
fn hit(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let t = index_of(wid, nwg, lid);
    if (t >= min(atomicLoad(&draws[COUNT_WORD]), ROWS)) {
        return;
    }
    let id = ids[t];
    let sp = splat_of(spheres[id]);
    if (!sp.small || sp.depth == EMPTY_DEPTH) {
        return;
    }
    let w = i32(camera.perspective_rect.z);
    for (var y = sp.lo.y; y <= sp.hi.y; y++) {
        for (var x = sp.lo.x; x <= sp.hi.x; x++) {
            if (atomicLoad(&depths[y * w + x]) == sp.depth) {
                atomicMax(&hits[y * w + x], id + 1u);
            }
        }
    }
}
