// TextLayer: one triangle-strip quad per glyph instance (gpuviz/render/text.py).
// Glyph quads sit on whole physical pixels, so each fragment copies one atlas
// texel (textureLoad, no sampler, no filtering): the coverage FreeType wrote.

struct Params {
    target_size: vec2<f32>,  // render target, physical pixels
    pixel_ratio: f32,
    _pad: f32,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var atlas: texture_2d<f32>;

struct Varyings {
    @builtin(position) position: vec4<f32>,
    @location(0) texel: vec2<f32>,
    @location(1) @interpolate(flat) color: vec4<f32>,
};

@vertex
fn vs_main(
    @builtin(vertex_index) vertex: u32,
    @location(0) origin: vec2<f32>,  // top-left corner, physical pixels
    @location(1) size: vec2<u32>,    // bitmap size, texels
    @location(2) uv: vec2<u32>,      // bitmap origin in the atlas, texels
    @location(3) color: vec4<f32>,   // straight-alpha RGBA
) -> Varyings {
    let corner = vec2<f32>(f32(vertex & 1u), f32(vertex >> 1u));
    let extent = corner * vec2<f32>(size);
    let p = origin + extent;
    var out: Varyings;
    out.position = vec4<f32>(p.x / params.target_size.x * 2.0 - 1.0, 1.0 - p.y / params.target_size.y * 2.0, 0.0, 1.0);
    out.texel = vec2<f32>(uv) + extent;
    out.color = color;
    return out;
}

@fragment
fn fs_main(in: Varyings) -> @location(0) vec4<f32> {
    let coverage = textureLoad(atlas, vec2<i32>(floor(in.texel)), 0).r;
    let alpha = in.color.a * coverage;
    return vec4<f32>(in.color.rgb * alpha, alpha);  // premultiplied "over"
}
