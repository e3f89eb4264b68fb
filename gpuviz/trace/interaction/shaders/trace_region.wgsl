{# The region predicate of a trace view (a TraceViewer's region selection):
   one pass over the scene's span records.
   keep[i] = 1 when row i is shown in the current frame (the predicate's
   shown code 1: drawn or merged, so every filter, the window and the row
   viewport already hold), its layout row is in [row0, row1), and its time
   [start, start + max(duration, 1)) overlaps [t0, t1): exact unsigned
   64-bit times relative to the scene's origin, never floats. ids[i] = its
   span ID (the compaction's source IDs). One dispatch per piece of the
   frame's records (a binding's worth of rows). #}
{% include "trace/shaders/trace_span.wgsl" %}

struct Region {
    t0: vec2<u32>,
    t1: vec2<u32>,
    row0: u32,
    row1: u32,
    pad0: u32,
    pad1: u32,
}

override ROWS: u32;  // rows of this piece (the bindings start at its first row)

@group(0) @binding(0) var<uniform> region: Region;
@group(0) @binding(1) var<storage, read> spans: array<TraceSpan>;
@group(0) @binding(2) var<storage, read> shown: array<u32>;
@group(0) @binding(3) var<storage, read> thread_rows: array<u32>;
@group(0) @binding(4) var<storage, read_write> keep: array<u32>;
@group(0) @binding(5) var<storage, read_write> ids: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= ROWS) {
        return;
    }
    let s = spans[i];
    ids[i] = s.id;
    var inside = shown[i] == 1u;
    if (inside) {
        let row = thread_rows[s.thread] + s.lane;
        let width = select(s.duration, vec2<u32>(1u, 0u), s.duration.x == 0u && s.duration.y == 0u);
        let end = trace_time_add(s.start, width);
        inside = row >= region.row0 && row < region.row1
            && trace_time_less(s.start, region.t1) && trace_time_less(region.t0, end);
    }
    keep[i] = select(0u, 1u, inside);
}
