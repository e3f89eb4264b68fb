// Test shader: instanced axis-aligned rectangles that write integer IDs.
// rects[j] = box (x0, y0, x1, y1) in clip space and ids (object, batch).
// vs: instance i draws rects[order[i]] with its own ids.
// vs_source: instance i draws rects[order[i]] with object ID order[i] (the
// source ID as a compaction wrote it), batch from the rect.
struct Rect { box: vec4<f32>, ids: vec4<u32> }
@group(0) @binding(0) var<storage, read> rects: array<Rect>;
@group(0) @binding(1) var<storage, read> order: array<u32>;

struct V {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) ids: vec2<u32>,
}

fn corner_of(r: Rect, v: u32) -> vec4<f32> {
    let c = array<vec2<u32>, 6>(vec2(0u, 0u), vec2(1u, 0u), vec2(0u, 1u), vec2(0u, 1u), vec2(1u, 0u), vec2(1u, 1u))[v];
    return vec4<f32>(select(r.box.x, r.box.z, c.x == 1u), select(r.box.y, r.box.w, c.y == 1u), 0.0, 1.0);
}

@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> V {
    let r = rects[order[i]];
    return V(corner_of(r, v), r.ids.xy);
}

@vertex
fn vs_source(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> V {
    let r = rects[order[i]];
    return V(corner_of(r, v), vec2<u32>(order[i], r.ids.y));
}

struct F2 {
    @location(0) object: u32,
    @location(1) batch: u32,
}

@fragment
fn fs2(in: V) -> F2 { return F2(in.ids.x, in.ids.y); }

@fragment
fn fs1(in: V) -> @location(0) u32 { return in.ids.x; }
