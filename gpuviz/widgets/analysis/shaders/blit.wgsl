// DataAnalysis: present the plot texture (rendered by the graph at
// src_size in its top-left corner) into the canvas target of dst_size,
// pixel for pixel when the sizes match, nearest-neighbour scaled otherwise.

struct Blit {
    src_size: vec2<f32>,
    dst_size: vec2<f32>,
}

@group(0) @binding(0) var<uniform> blit: Blit;
@group(0) @binding(1) var plot: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vi: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));  // a triangle covering the target
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let q = vec2<i32>(floor(p.xy * blit.src_size / blit.dst_size));
    return textureLoad(plot, min(q, vec2<i32>(blit.src_size) - vec2<i32>(1)), 0);
}
