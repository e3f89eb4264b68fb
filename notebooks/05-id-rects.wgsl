// Notebook 05: instanced rectangles that write their source row as the
// object ID and a batch ID into a GPUIndexPickingTarget.
// rects[j] = clip-space box (x0, y0, x1, y1) and (unused, batch, 0, 0);
// instance i draws rects[order[i]] with object ID order[i]: the stable ID a
// GPUVisibilityWorkflow compacted, used as it is.
struct Rect { box: vec4<f32>, ids: vec4<u32> }
@group(0) @binding(0) var<storage, read> rects: array<Rect>;
@group(0) @binding(1) var<storage, read> order: array<u32>;

struct V {
    @builtin(position) pos: vec4<f32>,
    @location(0) @interpolate(flat) ids: vec2<u32>,
}

@vertex
fn vs(@builtin(vertex_index) v: u32, @builtin(instance_index) i: u32) -> V {
    let row = order[i];
    let r = rects[row];
    let c = array<vec2<u32>, 6>(vec2(0u, 0u), vec2(1u, 0u), vec2(0u, 1u), vec2(0u, 1u), vec2(1u, 0u), vec2(1u, 1u))[v];
    let p = vec4<f32>(select(r.box.x, r.box.z, c.x == 1u), select(r.box.y, r.box.w, c.y == 1u), 0.0, 1.0);
    return V(p, vec2<u32>(row, r.ids.y));
}

struct F {
    @location(0) object: u32,
    @location(1) batch: u32,
}

@fragment
fn fs(in: V) -> F { return F(in.ids.x, in.ids.y); }
