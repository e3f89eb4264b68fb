// Reference kernel: copy VEC4S vec4<u32> words, ITEMS per lane, coalesced.
override VEC4S: u32;
const ITEMS: u32 = 4u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let base = (wid.x + wid.y * nwg.x) * 256u * ITEMS + lid;
    for (var k = 0u; k < ITEMS; k++) {
        let i = base + k * 256u;
        if (i < VEC4S) { dst[i] = src[i]; }
    }
}
