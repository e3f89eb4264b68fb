// Compose zero/nonzero masks into a canonical 0/1 mask, four rows a lane.
//
// Template values: inputs (how many masks), layouts (the views.view layout
// of each input, then of the output). View element offsets are MaskParams
// fields, so every chunk of one structure shares a pipeline.

{% import "algorithms/shaders/views.wgsl" as views %}
override OP: u32;  // 0 and, 1 or, 2 xor, 3 difference (first and none of the rest), 4 not

struct MaskParams {
    n: u32,
    out_off: u32,  // element offsets of the views inside their bound ranges
{% for k in range(inputs) %}
    in{{ k }}_off: u32,
{% endfor %}
}

@group(0) @binding(0) var<uniform> M: MaskParams;
{{ views.view("out", 1, "read_write", layouts[inputs], "M.out_off") }}
{% for k in range(inputs) %}
{{ views.view("in" ~ k, k + 2, "read", layouts[k], "M.in" ~ k ~ "_off") }}
// Bounded vec4 read of mask input {{ k }} (zero past the last row).
fn load_in{{ k }}(e: u32) -> vec4<u32> {
    if (e + 3u < M.n) { return in{{ k }}_get4(e); }
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) {
        if (e + c < M.n) { o[c] = in{{ k }}_get1(e + c); }
    }
    return o;
}
{% endfor %}

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

fn combine(e: u32) -> vec4<u32> {
    var r = first(load_in0(e));
{% for k in range(1, inputs) %}
    r = fold(r, load_in{{ k }}(e));
{% endfor %}
    return r;
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
