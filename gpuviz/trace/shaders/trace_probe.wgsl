{# Self-test kernels for trace_time.wgsl and trace_span.wgsl (tests/trace/test_scene.py
   runs them against numpy int64). Not used on any rendering path. #}
{% include "trace/shaders/trace_span.wgsl" %}

struct ProbeParams {
    count: u32,
    origin_lo: u32,
    origin_hi: u32,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: ProbeParams;

// time_probe: rows of (a.lo, a.hi, b.lo, b.hi) -> two rows each:
// (sub.lo, sub.hi, f32 bits of delta_f32, i32 bits of delta_i32) and
// ((a - b) + b == a, a < b, b < a, (a + b).lo).
@group(0) @binding(1) var<storage, read> pairs: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> results: array<vec4<u32>>;

@compute @workgroup_size(64)
fn time_probe(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.count) {
        return;
    }
    let p = pairs[i];
    let a = p.xy;
    let b = p.zw;
    let d = trace_time_sub(a, b);
    results[2u * i] = vec4<u32>(d.x, d.y, bitcast<u32>(trace_time_delta_f32(a, b)),
                                bitcast<u32>(trace_time_delta_i32(a, b)));
    results[2u * i + 1u] = vec4<u32>(select(0u, 1u, all(trace_time_add(d, b) == a)),
                                     select(0u, 1u, trace_time_less(a, b)), select(0u, 1u, trace_time_less(b, a)),
                                     trace_time_add(a, b).x);
}

// span_probe: records -> (end - origin as i32, start - origin as f32 bits, flags, partition), and
// (end.lo, end.hi, id, lane ^ thread ^ process ^ depth ^ name ^ category).
@group(0) @binding(3) var<storage, read> spans: array<TraceSpan>;
@group(0) @binding(4) var<storage, read_write> span_results: array<vec4<u32>>;

@compute @workgroup_size(64)
fn span_probe(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.count) {
        return;
    }
    let s = spans[i];
    let origin = vec2<u32>(params.origin_lo, params.origin_hi);
    let end = trace_span_end(s);
    span_results[2u * i] = vec4<u32>(bitcast<u32>(trace_time_delta_i32(end, origin)),
                                     bitcast<u32>(trace_time_delta_f32(s.start, origin)),
                                     trace_span_flags(s), trace_span_partition(s));
    span_results[2u * i + 1u] = vec4<u32>(end.x, end.y, s.id,
                                          s.lane ^ s.thread ^ s.process ^ s.depth ^ s.name ^ s.category);
}
