{# Exact 64-bit trace times for shaders: {% include "trace/shaders/trace_time.wgsl" %}.

   A time is vec2<u32>(lo, hi): integer nanoseconds since the scene's time
   origin (GPUTraceScene.time_origin_ns), as 64-bit fixed point. Never convert
   an absolute time to f32 (float32 loses 1 us after 16 s): subtract the view
   origin first, exactly, then convert the small difference.

   trace_time_sub(a, b)       a - b, wrapping two's complement (exact)
   trace_time_add(a, b)       a + b, wrapping (exact)
   trace_time_less(a, b)      a < b, unsigned
   trace_time_delta_i32(a, b) a - b as i32, exact within +-(2^31 - 1) ns (2.1 s), saturated beyond
   trace_time_delta_f32(a, b) a - b as f32: exact while |a - b| < 2^24 ns (16.7 ms), else within
                              2 ulp (WGSL lets u32 -> f32 round either way: two conversions, one sum)
   A view w ns wide places each visible span exactly for w < 2^24 ns (16.7 ms)
   and within w * 2^-22 ns (a 4-millionth of the view, far below a pixel) for
   any width up to a day (8.64e13 ns < 2^47). #}
fn trace_time_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(a.x - b.x, a.y - b.y - borrow);
}

fn trace_time_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}

fn trace_time_less(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn trace_time_delta_i32(a: vec2<u32>, b: vec2<u32>) -> i32 {
    let d = trace_time_sub(a, b);
    if (d.y == 0u && d.x <= 0x7fffffffu) {
        return i32(d.x);
    }
    if (d.y == 0xffffffffu && d.x >= 0x80000001u) {
        return bitcast<i32>(d.x);
    }
    // Saturate symmetrically, so negating a delta never overflows.
    return select(2147483647, -2147483647, (d.y & 0x80000000u) != 0u);
}

fn trace_time_delta_f32(a: vec2<u32>, b: vec2<u32>) -> f32 {
    let d = trace_time_sub(a, b);
    let negative = (d.y & 0x80000000u) != 0u;
    // The magnitude, so the two halves add without cancelling.
    let m = select(d, trace_time_sub(vec2<u32>(0u, 0u), d), negative);
    let v = f32(m.y) * 4294967296.0 + f32(m.x);
    return select(v, -v, negative);
}
