// Compose zero/nonzero masks into a canonical 0/1 mask, four rows a lane.
//
// Spliced before this file: accessors in0..inK and out, and a generated
// combine(e) that folds the inputs with first/fold/finish below.

override OP: u32;  // 0 and, 1 or, 2 xor, 3 difference (first and none of the rest), 4 not

struct MaskParams {
    n: u32,
}

@group(0) @binding(0) var<uniform> M: MaskParams;

fn nz(v: vec4<u32>) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u), v != vec4<u32>(0u));
}

fn first(v: vec4<u32>) -> vec4<u32> {
    return select(nz(v), vec4<u32>(1u) - nz(v), OP == 4u);
}

fn fold(r: vec4<u32>, v: vec4<u32>) -> vec4<u32> {
    switch OP {
        case 0u: { return r & nz(v); }
        case 1u: { return r | nz(v); }
        case 2u: { return r ^ nz(v); }
        default: { return r & (vec4<u32>(1u) - nz(v)); }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = (gid.x + gid.y * nwg.x * 256u) * 4u;
    if (e >= M.n) { return; }
    let r = combine(e);
    if (e + 3u < M.n) {
        out_set4(e, r);
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (e + c < M.n) { out_set1(e + c, r[c]); }
        }
    }
}
