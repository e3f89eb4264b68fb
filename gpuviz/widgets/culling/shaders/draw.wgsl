// FrustumCulling: the two views' draws, replayed every frame from render
// bundles recorded once. The perspective view draws the compacted IDs (the
// instanceCount of the indexed indirect record is the visibility
// workflow's count); the overview draws every row muted, then the same
// compacted IDs through the same record bright, then the frustum's edges
// (dense scenes: the rows come from splat.wgsl's compute rasterisation,
// resolved by one full-viewport triangle, then the frustum's edges).
//
// Template values: the colours (rgb lists) and cube_half (cube half-extent
// per unit radius). Every pipeline writes colour (location 0) and the
// instance ID (location 1, r32uint, the picking target).

{% include "widgets/culling/shaders/camera.wgsl" %}
{% import "render/shaders/raster.wgsl" as raster %}

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) @interpolate(flat) id: u32,
    @location(2) world: vec3<f32>,  // perspective instances: shaded flat per face in the fragment shader
}

struct FragmentOut {
    @location(0) color: vec4<f32>,
    @location(1) id: u32,
}

struct DepthFragmentOut {
    @location(0) color: vec4<f32>,
    @location(1) id: u32,
    @builtin(frag_depth) depth: f32,
}

const NO_ID: u32 = 0xffffffffu;
const CUBE_HALF: f32 = {{ cube_half }};
const BACKGROUND: vec3<f32> = vec3<f32>({{ background | join(", ") }});
const OVERVIEW_BACKGROUND: vec3<f32> = vec3<f32>({{ overview_background | join(", ") }});
const BUILDING_A: vec3<f32> = vec3<f32>({{ building_a | join(", ") }});
const BUILDING_B: vec3<f32> = vec3<f32>({{ building_b | join(", ") }});
const HOVER: vec3<f32> = vec3<f32>({{ hover | join(", ") }});
const CULLED: vec3<f32> = vec3<f32>({{ culled | join(", ") }});
const VISIBLE: vec3<f32> = vec3<f32>({{ visible | join(", ") }});
const FRUSTUM: vec3<f32> = vec3<f32>({{ frustum | join(", ") }});
const LIGHT: vec3<f32> = vec3<f32>(0.40, 0.82, 0.41);

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<storage, read> spheres: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> ids: array<u32>;
@group(0) @binding(3) var<storage, read> hover: array<u32>;
@group(0) @binding(4) var<storage, read> words: array<u32>;  // splat.wgsl's packed target (dense overview)
@group(0) @binding(5) var<storage, read> depths: array<u32>;  // splat.wgsl's depth target: depth bits
@group(0) @binding(6) var<storage, read> hits: array<u32>;    // ... and its IDs
@group(0) @binding(7) var<storage, read> large: array<u32>;   // ... and the instances left to the rasteriser

{{ raster.packed_format("packed", 1) }}
{{ raster.depth_format() }}

var<private> EDGES: array<u32, 24> = array<u32, 24>(0u, 1u, 1u, 2u, 2u, 3u, 3u, 0u, 4u, 5u, 5u, 6u, 6u, 7u, 7u, 4u,
                                                     0u, 4u, 1u, 5u, 2u, 6u, 3u, 7u);

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn drawable(s: vec4<f32>) -> bool {
    return finite(s.x) && finite(s.y) && finite(s.z) && finite(s.w) && s.w >= 0.0;
}

fn hash(x: u32) -> u32 {
    var h = x * 0x9e3779b9u;
    h = (h ^ (h >> 16u)) * 0x85ebca6bu;
    return h ^ (h >> 13u);
}

fn hidden() -> VertexOut {
    var out: VertexOut;
    out.position = vec4<f32>(2.0, 2.0, 2.0, 1.0);  // outside the clip volume: nothing is drawn
    out.color = vec4<f32>(0.0);
    out.id = NO_ID;
    out.world = vec3<f32>(0.0);
    return out;
}

// ------------------------------------------------------------ backgrounds
@vertex
fn vs_background(@builtin(vertex_index) vi: u32) -> VertexOut {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));
    var out: VertexOut;
    out.position = vec4<f32>(uv * 2.0 - 1.0, 1.0, 1.0);  // depth 1: the far end of the depth range
    out.color = vec4<f32>(BACKGROUND, 1.0);
    out.id = NO_ID;
    return out;
}

@fragment
fn fs_overview_background(in: VertexOut) -> FragmentOut {
    return FragmentOut(vec4<f32>(OVERVIEW_BACKGROUND, 1.0), NO_ID);
}

// -------------------------------------------------------- perspective view
fn building_color(id: u32) -> vec3<f32> {
    let h = hash(id);
    var base = mix(BUILDING_A, BUILDING_B, f32(h & 255u) / 255.0) * (0.85 + 0.15 * f32((h >> 8u) & 255u) / 255.0);
    if (id == hover[0]) {
        base = HOVER;
    }
    return base;
}

fn fogged(color: vec3<f32>, world: vec3<f32>) -> vec3<f32> {
    let fog = clamp(distance(world, camera.eye.xyz) / max(camera.eye.w, 1e-6), 0.0, 1.0);
    return mix(color, BACKGROUND, 0.6 * fog * fog * fog);
}

@vertex
fn vs_instance(@location(0) corner: vec3<f32>, @builtin(instance_index) k: u32) -> VertexOut {
    return instance_vertex(corner, ids[k]);
}

// dense scenes: the instances splat.wgsl left to the rasteriser (its second record)
@vertex
fn vs_instance_large(@location(0) corner: vec3<f32>, @builtin(instance_index) k: u32) -> VertexOut {
    return instance_vertex(corner, large[k]);
}

// dense scenes: the splatted pixels (or the background) with their depth, before the large instances
@fragment
fn fs_perspective_resolve(in: VertexOut) -> DepthFragmentOut {
    let rect = camera.perspective_rect;
    let local = vec2<u32>(max(floor(in.position.xy) - rect.xy, vec2<f32>(0.0)));
    var hit = 0u;
    var index = 0u;
    if (f32(local.x) < rect.z && f32(local.y) < rect.w) {
        index = local.y * u32(rect.z) + local.x;
        hit = hits[index];
    }
    if (raster_hit_empty(hit)) {
        return DepthFragmentOut(vec4<f32>(BACKGROUND, 1.0), NO_ID, 1.0);
    }
    let id = raster_hit_id(hit);
    // a pixel or two: no face to shade, the lit sides' average
    let lit = building_color(id) * 0.78;
    let color = fogged(lit, spheres[id].xyz);
    return DepthFragmentOut(vec4<f32>(color, 1.0), id, raster_depth(depths[index]));
}

fn instance_vertex(corner: vec3<f32>, id: u32) -> VertexOut {
    let s = spheres[id];
    // the mesh holds the +x/+y/+z faces: mirror each axis towards the eye (the faces it can see)
    let towards = select(vec3<f32>(-1.0), vec3<f32>(1.0), camera.eye.xyz >= s.xyz);
    let world = s.xyz + corner * towards * (s.w * CUBE_HALF);
    var out: VertexOut;
    out.position = camera.view_proj * vec4<f32>(world, 1.0);
    out.color = vec4<f32>(building_color(id), 1.0);
    out.id = id;
    out.world = world;
    return out;
}

@fragment
fn fs_instance(in: VertexOut) -> FragmentOut {
    // the face's normal from screen-space derivatives (flat per face), turned towards the eye
    let to_eye = normalize(camera.eye.xyz - in.world);
    var normal = normalize(cross(dpdx(in.world), dpdy(in.world)));
    normal = select(normal, -normal, dot(normal, to_eye) < 0.0);
    let lit = in.color.rgb * (0.30 + 0.45 * max(dot(normal, LIGHT), 0.0) + 0.35 * max(dot(normal, to_eye), 0.0));
    return FragmentOut(vec4<f32>(fogged(lit, in.world), 1.0), in.id);
}

@fragment
fn fs_main(in: VertexOut) -> FragmentOut {
    return FragmentOut(in.color, in.id);
}

// ----------------------------------------------------------- overview view
fn overview_vertex(corner: vec3<f32>, s: vec4<f32>, color: vec3<f32>, id: u32) -> VertexOut {
    var out: VertexOut;
    var p = camera.overview * vec4<f32>(s.x, 0.0, s.z, 1.0);
    // seen from above a cube is a square; its side faces collapse to lines (zero area)
    let half = max(vec2<f32>(s.w * CUBE_HALF) * camera.overview_size.xy, camera.overview_size.zw);
    p = vec4<f32>(p.xy + sign(corner.xz) * half, 0.5, 1.0);
    out.position = p;
    out.color = vec4<f32>(select(color, HOVER, id == hover[0]), 1.0);
    out.id = id;
    return out;
}

// dense overview: one word per overview pixel, written by splat.wgsl this frame
@fragment
fn fs_overview_resolve(in: VertexOut) -> FragmentOut {
    let rect = camera.overview_rect;
    let local = vec2<u32>(max(floor(in.position.xy) - rect.xy, vec2<f32>(0.0)));
    var word = 0u;
    if (f32(local.x) < rect.z && f32(local.y) < rect.w) {
        word = words[local.y * u32(rect.z) + local.x];
    }
    if (packed_empty(word)) {
        return FragmentOut(vec4<f32>(OVERVIEW_BACKGROUND, 1.0), NO_ID);
    }
    let id = packed_id(word);
    var color = select(CULLED, VISIBLE, packed_key(word) == 1u);
    if (id == hover[0]) {
        color = HOVER;
    }
    return FragmentOut(vec4<f32>(color, 1.0), id);
}

@vertex
fn vs_overview_all(@location(0) corner: vec3<f32>, @builtin(instance_index) k: u32) -> VertexOut {
    let s = spheres[k];
    if (!drawable(s)) {
        return hidden();
    }
    return overview_vertex(corner, s, CULLED, k);
}

@vertex
fn vs_overview_visible(@location(0) corner: vec3<f32>, @builtin(instance_index) k: u32) -> VertexOut {
    let id = ids[k];
    return overview_vertex(corner, spheres[id], VISIBLE, id);
}

@vertex
fn vs_frustum(@builtin(vertex_index) vi: u32) -> VertexOut {
    let c = camera.corners[EDGES[vi]];
    var out: VertexOut;
    let p = camera.overview * vec4<f32>(c.x, 0.0, c.z, 1.0);
    out.position = vec4<f32>(p.xy, 0.5, 1.0);
    out.color = vec4<f32>(FRUSTUM, 1.0);
    out.id = NO_ID;
    return out;
}
