// Reference kernel: read VEC4S vec4 words once (xor-folded so nothing is
// optimized away; a single word is written only if the fold hits a magic value).
override VEC4S: u32;
const ITEMS: u32 = 8u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let base = (wid.x + wid.y * nwg.x) * 256u * ITEMS + lid;
    var acc = vec4<u32>(0u);
    for (var k = 0u; k < ITEMS; k++) {
        let i = base + k * 256u;
        if (i < VEC4S) { acc = acc ^ src[i]; }
    }
    let x = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (x == 0x9e3779b9u) { sink[0] = x; }
}
