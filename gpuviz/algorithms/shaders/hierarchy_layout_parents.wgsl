// Copy one chunk of parent states into its place in a packed graph transient
// (used only when the parent states are a vector of several non-empty
// chunks: child rows name global parent rows, which then live in one array).
//
// Template values: layouts (views.view layouts of src and dst).

{% import "algorithms/shaders/views.wgsl" as views %}

struct CopyParams {
    n: u32,
    src_off: u32,
    dst_off: u32,  // the chunk's global first row plus the transient view's offset
    pad: u32,
}

@group(0) @binding(0) var<uniform> P: CopyParams;
{{ views.view("dst", 1, "read_write", layouts.dst, "P.dst_off") }}
{{ views.view("src", 2, "read", layouts.src, "P.src_off") }}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < P.n) {
        dst_set1(i, src_get1(i));
    }
}
