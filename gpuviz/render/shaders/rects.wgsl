// RectLayer: one triangle-strip quad per rectangle instance (gpuviz/render/shapes.py).
// Rectangles arrive snapped to whole physical pixels, so edges are crisp and a
// one-pixel line covers exactly one pixel column or row.

struct Params {
    target_size: vec2<f32>,  // render target, physical pixels
    _pad: vec2<f32>,
};

@group(0) @binding(0) var<uniform> params: Params;

struct Varyings {
    @builtin(position) position: vec4<f32>,
    @location(0) @interpolate(flat) color: vec4<f32>,
};

@vertex
fn vs_main(
    @builtin(vertex_index) vertex: u32,
    @location(0) rect: vec4<f32>,   // x0, y0, x1, y1 in physical pixels, origin top-left
    @location(1) color: vec4<f32>,  // straight-alpha RGBA
) -> Varyings {
    let corner = vec2<f32>(f32(vertex & 1u), f32(vertex >> 1u));
    let p = mix(rect.xy, rect.zw, corner);
    var out: Varyings;
    out.position = vec4<f32>(p.x / params.target_size.x * 2.0 - 1.0, 1.0 - p.y / params.target_size.y * 2.0, 0.0, 1.0);
    out.color = color;
    return out;
}

@fragment
fn fs_main(in: Varyings) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color.rgb * in.color.a, in.color.a);  // premultiplied "over", as text.wgsl
}
