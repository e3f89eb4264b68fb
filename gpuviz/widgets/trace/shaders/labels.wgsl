// TraceViewer: the span labels of a frame, picked from the frame's
// compacted visible set on the GPU (so the CPU never passes over every
// span to find them). Per drawn span (visible_rows[0..SPANS count)): the
// same pixel rect as tracks.wgsl's span_x; a span at least
// view.label_px physical pixels wide whose row fits above the tracks'
// bottom appends (span ID, flags) to `labels` (at most MAX_LABELS; word 0
// counts every candidate, also those past the cap). The widget reads the
// buffer back through a readback ring, never waiting on the frame path.
//   clear   one thread: the candidate count = 0
//   main    a fixed grid striding over the visible count
{% include "trace/shaders/trace_span.wgsl" %}
{% include "widgets/trace/shaders/view.wgsl" %}

override MAX_LABELS: u32 = 4096u;
override SPANS_COUNT_WORD: u32 = 1u;  // instanceCount word of the SPANS draw record
override GRID: u32 = 16384u;          // invocations of `main` (64 workgroups x 256)

const FLAG_FOCUSED: u32 = 1u;

@group(0) @binding(0) var<uniform> view: View;
{% include "widgets/trace/shaders/records.wgsl" %}
@group(0) @binding(2) var<storage, read> thread_rows: array<u32>;
@group(0) @binding(3) var<storage, read> visible_rows: array<u32>;
@group(0) @binding(4) var<storage, read> commands: array<u32>;
@group(0) @binding(5) var<storage, read> focus_mask: array<u32>;
@group(0) @binding(6) var<storage, read_write> labels: array<atomic<u32>>;  // count, pad x3, (id, flags) pairs

@compute @workgroup_size(1)
fn clear() {
    atomicStore(&labels[0], 0u);
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let count = commands[SPANS_COUNT_WORD];
    let min_px = view.label_px;
    for (var k = gid.x; k < count; k += GRID) {
        let row_index = visible_rows[k];
        let s = span_record(row_index);
        let row = thread_rows[s.thread] + s.lane;
        let y0 = view.top + (f32(row) - f32(view.first_row)) * view.row_height;
        if (row < view.first_row || y0 + view.row_height > view.bottom + view.scale) {
            continue;
        }
        let one = vec2<u32>(select(0u, 1u, s.duration.x == 0u && s.duration.y == 0u), 0u);
        let end = trace_time_add(s.start, trace_time_add(s.duration, one));
        let x0 = clamp(view.gutter + trace_time_delta_f32(s.start, view.origin) * view.px_per_ns, view.gutter,
                       view.frame.x);
        let x1 = clamp(view.gutter + trace_time_delta_f32(end, view.origin) * view.px_per_ns, view.gutter,
                       view.frame.x);
        if (x1 - x0 < min_px) {
            continue;
        }
        let slot = atomicAdd(&labels[0], 1u);
        if (slot < MAX_LABELS) {
            atomicStore(&labels[4u + 2u * slot], s.id);
            atomicStore(&labels[5u + 2u * slot], select(0u, FLAG_FOCUSED, focus_mask[row_index] != 0u));
        }
    }
}
