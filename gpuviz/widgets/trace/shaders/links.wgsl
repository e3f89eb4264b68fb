// TraceViewer: the selection's links, drawn over the tracks (tracks.wgsl)
// as thick segments, blended into the frame texture; one instance per
// segment (a few hundred at most: the rasteriser's small share of a
// data-centre GPU is enough). Physical pixels, origin top-left.
{% include "widgets/trace/shaders/view.wgsl" %}

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> segments: array<vec4<f32>>;  // per link: (x0, y0, x1, y1) logical, rgba

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
}

@vertex
fn vs_link(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let ends = segments[2u * k] * view.scale;
    let a = ends.xy;
    let b = ends.zw;
    let along = b - a;
    let n = vec2<f32>(-along.y, along.x) / max(length(along), 1e-3) * max(1.0, view.scale);  // half of a 2-pixel line
    // two triangles: (0,0) (1,0) (0,1) / (0,1) (1,0) (1,1)
    let corners = array<vec2<f32>, 6>(vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
                                      vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0));
    let c = corners[vi];
    let p = mix(a, b, c.x) + n * (c.y * 2.0 - 1.0);
    var out: VertexOut;
    out.position = vec4<f32>(p.x / view.frame.x * 2.0 - 1.0, 1.0 - p.y / view.frame.y * 2.0, 0.5, 1.0);
    out.color = segments[2u * k + 1u];
    return out;
}

@fragment
fn fs_link(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}
