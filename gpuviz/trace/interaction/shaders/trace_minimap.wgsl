{# GPUTraceInteraction "{id}-minimap": the whole-trace density of span starts of
   the spans passing the filters (not the window or the rows), over
   minimap_bins bins of [trace start, trace end]. One pass per piece (a row
   range inside one record chunk); template value: bins (sizes the
   workgroup histogram). The frame runs it only when an input changes
   (filters, or the focus mask in "hide" mode), never per frame.

   Rows of a lane are ROWS_PER_LANE consecutive rows of a 256-row stride;
   records are time-ordered within a thread, so a lane's rows mostly share
   a bin: each lane counts runs of equal bins in a register and adds a run
   to the workgroup histogram once (not once per span), and each workgroup
   adds its non-zero bins to the global ones. Entry point "clear" zeroes the
   global bins first. #}
{% include "trace/shaders/trace_span.wgsl" %}
{% include "trace/interaction/shaders/trace_view.wgsl" %}
{% include "trace/interaction/shaders/trace_filters.wgsl" %}

struct Piece {
    base: u32,  // first scene row of the piece
    rows: u32,
    pad0: u32,
    pad1: u32,
}

override MINI_SCALE: f32;     // minimap bins per ns (estimate only)
override ROWS_PER_LANE: u32;  // rows per invocation
const BINS: u32 = {{ bins }}u;
const NO_BIN: u32 = 0xffffffffu;

@group(0) @binding(0) var<uniform> view: TraceView;
@group(0) @binding(1) var<uniform> piece: Piece;
@group(0) @binding(2) var<storage, read> spans: array<TraceSpan>;
@group(0) @binding(4) var<storage, read> mini: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read> category_mask: array<u32>;
@group(0) @binding(8) var<storage, read> search_mask: array<u32>;
@group(0) @binding(9) var<storage, read> focus: array<u32>;
@group(0) @binding(12) var<storage, read_write> minimap: array<atomic<u32>>;

var<workgroup> bins: array<atomic<u32>, BINS>;

fn as_f32(t: vec2<u32>) -> f32 {
    return f32(t.y) * 4294967296.0 + f32(t.x);
}

// Minimap bin of a start (ns since the time origin): the last b with mini[b] <= t.
fn bin_of(t: vec2<u32>) -> u32 {
    var b = u32(clamp(as_f32(t) * MINI_SCALE, 0.0, f32(BINS - 1u)));
    for (var k = 0u; k < 3u; k++) {
        if (b < BINS - 1u && !trace_time_less(t, mini[b + 1u])) { b += 1u; }
    }
    for (var k = 0u; k < 3u; k++) {
        if (b > 0u && trace_time_less(t, mini[b])) { b -= 1u; }
    }
    return b;
}

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < BINS) {
        atomicStore(&minimap[gid.x], 0u);
    }
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var b = lid; b < BINS; b += 256u) {
        atomicStore(&bins[b], 0u);
    }
    workgroupBarrier();
    let tile = (wid.x + wid.y * nwg.x) * (256u * ROWS_PER_LANE);
    var run_bin = NO_BIN;
    var run = 0u;
    for (var k = 0u; k < ROWS_PER_LANE; k++) {
        let i = tile + k * 256u + lid;
        if (i < piece.rows) {
            let s = spans[i];
            if (filtered_in(s, i)) {
                let b = bin_of(s.start);
                if (b != run_bin) {
                    if (run != 0u) {
                        atomicAdd(&bins[run_bin], run);
                    }
                    run_bin = b;
                    run = 0u;
                }
                run += 1u;
            }
        }
    }
    if (run != 0u) {
        atomicAdd(&bins[run_bin], run);
    }
    workgroupBarrier();
    for (var b = lid; b < BINS; b += 256u) {
        let v = atomicLoad(&bins[b]);
        if (v != 0u) {
            atomicAdd(&minimap[b], v);
        }
    }
}
