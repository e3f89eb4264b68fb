// FrustumCulling: the Camera uniform (graph.py's write_camera fills it; 320 bytes),
// shared by draw.wgsl and splat.wgsl.
struct Camera {
    view_proj: mat4x4<f32>,
    overview: mat4x4<f32>,       // top-down: clip = overview * (x, 0, z, 1)
    eye: vec4<f32>,              // xyz; w = far distance (fog)
    overview_size: vec4<f32>,    // clip units per world unit (x, z); smallest half-size in clip (x, y)
    overview_rect: vec4<f32>,    // the overview's viewport in frame pixels (x, y, w, h)
    perspective_rect: vec4<f32>, // the perspective's viewport in frame pixels (x, y, w, h)
    corners: array<vec4<f32>, 8>,  // frustum corners in world space: near quad, then far quad
}
