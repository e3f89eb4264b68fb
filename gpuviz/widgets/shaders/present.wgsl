// Widget frame presentation (gpuviz.widgets.presenter): copy the rendered
// top-left corner (src_size) of a widget's frame texture into the canvas
// target (dst_size): pixel for pixel when the sizes match, nearest-neighbour
// scaled otherwise.

struct Present {
    src_size: vec2<f32>,
    dst_size: vec2<f32>,
}

@group(0) @binding(0) var<uniform> present: Present;
@group(0) @binding(1) var frame: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));  // one triangle covering the target
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let q = vec2<i32>(floor(p.xy * present.src_size / present.dst_size));
    return textureLoad(frame, min(q, vec2<i32>(present.src_size) - vec2<i32>(1)), 0);
}
