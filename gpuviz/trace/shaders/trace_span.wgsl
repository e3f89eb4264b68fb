{# The canonical span record of GPUTraceScene (48 bytes, array stride 48):
   {% include "trace/shaders/trace_span.wgsl" %} (it includes trace_time.wgsl).
   Bind GPUTraceScene.record_buffer as array<TraceSpan>. Field order and
   meaning: gpuviz/trace/scene.py (RECORD_WORDS, FLAG_*, PARTITION_SHIFT). #}
{% include "trace/shaders/trace_time.wgsl" %}

struct TraceSpan {
    start: vec2<u32>,       // ns since the scene's time origin (lo, hi)
    duration: vec2<u32>,    // ns (lo, hi)
    lane: u32,              // row inside its thread
    thread: u32,
    process: u32,
    depth: u32,
    name: u32,              // dense ID: GPUTraceScene.names[name]
    category: u32,          // dense ID: GPUTraceScene.categories[category]
    flags_partition: u32,   // flags | partition << 8
    id: u32,                // span ID (row of trace.spans)
}

const TRACE_PARTITION_SHIFT: u32 = 8u;
const TRACE_FLAG_INCOMPLETE: u32 = 1u;
const TRACE_FLAG_HAS_ARGS: u32 = 2u;
const TRACE_FLAG_ROOT: u32 = 4u;
const TRACE_FLAG_HAS_CHILDREN: u32 = 8u;
const TRACE_FLAG_LINKS_OUT: u32 = 16u;
const TRACE_FLAG_LINKS_IN: u32 = 32u;
const TRACE_FLAG_ZERO_DURATION: u32 = 64u;
const TRACE_NO_PARENT: u32 = 0xffffffffu;

fn trace_span_end(s: TraceSpan) -> vec2<u32> {
    return trace_time_add(s.start, s.duration);
}

fn trace_span_flags(s: TraceSpan) -> u32 {
    return s.flags_partition & ((1u << TRACE_PARTITION_SHIFT) - 1u);
}

fn trace_span_partition(s: TraceSpan) -> u32 {
    return s.flags_partition >> TRACE_PARTITION_SHIFT;
}
