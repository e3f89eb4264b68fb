{# The per-frame view parameters of a GPUTraceInteraction, as a uniform:
   {% include "trace/interaction/shaders/trace_view.wgsl" %}; bind
   GPUTraceInteraction.view as var<uniform> (64 bytes). Written by GPUTraceInteraction.write.

   origin / end     the window [origin, end) as time words (ns since the scene's time origin, (lo, hi))
   width            pixel columns of the canvas
   first_row        first layout row of the vertical viewport; row_count its rows
   flags            TRACE_VIEW_* bits below
   px_per_ns        width / (end - origin) as f32: x = trace_time_delta_f32(t, origin) * px_per_ns
   min_duration     ns (lo, hi): shorter spans are hidden
   focus_depth      active hops of the focus #}
struct TraceView {
    origin: vec2<u32>,
    end: vec2<u32>,
    width: u32,
    first_row: u32,
    row_count: u32,
    flags: u32,
    px_per_ns: f32,
    focus_depth: u32,
    min_duration: vec2<u32>,
    span_count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

const TRACE_VIEW_FOCUS: u32 = 1u;          // a focus is active (focus_mask holds it)
const TRACE_VIEW_FOCUS_HIDE: u32 = 2u;     // focus_mode "hide" (else "dim": unfocused spans dimmed)
const TRACE_VIEW_SEARCH: u32 = 4u;         // a search is active (search_mask holds the matching names)
const TRACE_VIEW_SEARCH_FILTER: u32 = 8u;  // search_mode "filter" (else "highlight")
const TRACE_VIEW_CATEGORIES: u32 = 16u;    // category_mask filters (else every category is shown)

// Bit i of search_mask / category_mask: (mask[i >> 5u] >> (i & 31u)) & 1u.
