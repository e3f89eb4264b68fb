// TraceViewer: the tracks, written by compute from what a GPUTraceFrame
// computed this frame (no rasterisation: a data-centre GPU runs vertex and
// pixel shaders on a small part of its die):
//   clear    zero the cells and the spread list; the scatter's workgroup
//            count from this frame's record counts (indirect dispatch)
//   scatter  per record (visible span k, merged run, density run): the
//            pixel columns its rect covers in its layout row, splatted into
//            the cells (a packed target of render/shaders/raster.wgsl, the
//            kind as key): spans over merged over density, a later record
//            over an earlier one of its kind (the draw order of instanced
//            rects); runs over SHORT_RUN columns
//            go to the spread list instead (and raise its workgroup count)
//   spread   one workgroup per listed run, its lanes over the columns
//   resolve  per pixel: its layout row from y, the cell of (row, x) ->
//            colour into the frame texture, span ID (or NO_ID) into the
//            picking target's objects texture
// A rect covers the pixels whose centres lie in [x0, x1) x [y0, y1), the
// rasteriser's rule for an axis-aligned quad. Physical pixels, origin top-left.
{% include "trace/shaders/trace_span.wgsl" %}

{% include "widgets/trace/shaders/view.wgsl" %}
{% import "render/shaders/raster.wgsl" as raster %}

const VIEW_SEARCH: u32 = 2u;
const VIEW_FOCUS: u32 = 8u;
const NO_ID: u32 = 0xffffffffu;
const DENSITY: vec3<f32> = vec3<f32>(0.42, 0.58, 0.86);
const BACKGROUND: vec3<f32> = vec3<f32>({{ background | join(", ") }});
const KIND_DENSITY: u32 = 1u;
const KIND_MERGED: u32 = 2u;
const KIND_SPAN: u32 = 3u;

override ROWS: u32;              // layout rows the cells hold, from view.first_row
override COLS: u32;              // cells per row (the frame texture's width)
override SPREAD_CAPACITY: u32;   // runs the spread list holds
override SHORT_RUN: u32;         // columns a scatter invocation marks itself; longer runs are spread
override SPANS_WORD: u32;        // instance_count words of the frame's draw records
override MERGED_WORD: u32;
override DENSITY_WORD: u32;
override DENSITY_MAX_WORD: u32;  // stats word: the largest density count
override MAX_GROUPS: u32;        // workgroups of scatter and spread at most (grid-stride beyond)

struct Spread {
    count: atomic<u32>,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    runs: array<vec4<u32>>,  // (first cell, columns, value, 0)
}

@group(0) @binding(0) var<uniform> view: View;
{% include "widgets/trace/shaders/records.wgsl" %}
@group(0) @binding(2) var<storage, read> thread_rows: array<u32>;     // frame: first layout row per thread
@group(0) @binding(3) var<storage, read> name_colours: array<u32>;    // rgba8 per name ID
@group(0) @binding(4) var<storage, read> selection: array<u32>;       // bit per span ID
@group(0) @binding(5) var<storage, read> visible_rows: array<u32>;    // frame: compacted scene rows
@group(0) @binding(6) var<storage, read> merged: array<vec4<u32>>;    // frame: (row, x0, x1, name)
@group(0) @binding(7) var<storage, read> density: array<vec4<u32>>;   // frame: (row, x0, x1, count)
@group(0) @binding(8) var<storage, read> stats: array<u32>;           // frame: STATS words
@group(0) @binding(9) var<storage, read> focus_mask: array<u32>;      // frame: 1 per focused scene row
@group(0) @binding(10) var<storage, read> search_mask: array<u32>;    // frame: bit per matching name ID
@group(0) @binding(11) var<storage, read> commands: array<u32>;       // frame: draw records (counts)
@group(0) @binding(15) var<storage, read_write> cells: array<atomic<u32>>;  // ROWS x COLS
@group(0) @binding(16) var<storage, read_write> spread: Spread;
@group(0) @binding(19) var<storage, read> cells_read: array<u32>;           // the same, for resolve
@group(0) @binding(20) var<storage, read_write> scatter_args: array<u32>;   // dispatch (x, y, z) of scatter
@group(0) @binding(21) var<storage, read_write> spread_args: array<atomic<u32>>;  // dispatch of spread_runs
@group(0) @binding(17) var colour_out: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(18) var ids_out: texture_storage_2d<r32uint, write>;

{{ raster.packed_format("cell", 2) }}
{{ raster.packed_target("cells") }}

fn row_top(row: u32) -> f32 {
    return view.top + (f32(row) - f32(view.first_row)) * view.row_height;
}

fn row_bottom(y0: f32) -> f32 {
    return min(y0 + view.row_height - max(1.0, floor(view.scale)), view.bottom);  // a gap under each row
}

// a span's [x0, x1): exact 64-bit times, zero duration 1 ns wide, clamped
// to the tracks, at least one pixel (the last one at the right edge)
fn span_x(s: TraceSpan) -> vec2<f32> {
    let one = vec2<u32>(select(0u, 1u, s.duration.x == 0u && s.duration.y == 0u), 0u);
    let end = trace_time_add(s.start, trace_time_add(s.duration, one));
    var x0 = view.gutter + trace_time_delta_f32(s.start, view.origin) * view.px_per_ns;
    var x1 = view.gutter + trace_time_delta_f32(end, view.origin) * view.px_per_ns;
    x0 = clamp(x0, view.gutter, view.frame.x - 1.0);
    x1 = clamp(x1, view.gutter, view.frame.x);
    return vec2<f32>(x0, max(x1, x0 + 1.0));
}

// a merged or density run's [x0, x1) from its pixel columns
fn run_x(c0: u32, c1: u32) -> vec2<f32> {
    let x0 = view.gutter + f32(c0) * view.column_px;
    let x1 = max(view.gutter + f32(c1) * view.column_px, x0 + 1.0);
    return vec2<f32>(x0, min(x1, view.frame.x));
}

// ------------------------------------------------------------------ clear
fn record_count() -> u32 {
    return commands[SPANS_WORD] + commands[MERGED_WORD] + commands[DENSITY_WORD];
}

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var i = gid.x; i < ROWS * COLS; i += nwg.x * 256u) {
        cells_clear(i);
    }
    if (gid.x == 0u) {
        atomicStore(&spread.count, 0u);
        scatter_args[0] = min((record_count() + 255u) / 256u, MAX_GROUPS);
        scatter_args[1] = 1u;
        scatter_args[2] = 1u;
        atomicStore(&spread_args[0], 0u);
        atomicStore(&spread_args[1], 1u);
        atomicStore(&spread_args[2], 1u);
    }
}

// ---------------------------------------------------------------- scatter
fn scatter_one(item: u32, spans: u32, runs: u32) {
    var row: u32;
    var x: vec2<f32>;
    var value: u32;
    if (item < spans) {
        let s = span_record(visible_rows[item]);
        row = thread_rows[s.thread] + s.lane;
        x = span_x(s);
        value = cell_word(KIND_SPAN, item);
    } else if (item < spans + runs) {
        let m = merged[item - spans];
        row = m.x;
        x = run_x(m.y, m.z);
        value = cell_word(KIND_MERGED, item - spans);
    } else {
        let d = density[item - spans - runs];
        row = d.x;
        x = run_x(d.y, d.z);
        value = cell_word(KIND_DENSITY, item - spans - runs);
    }
    // every test (window, rows, expansion, filters, focus "hide") was the frame's predicate
    let y0 = row_top(row);
    if (row < view.first_row || row - view.first_row >= ROWS || y0 >= view.bottom || row_bottom(y0) <= y0) {
        return;
    }
    let p0 = max(i32(ceil(x.x - 0.5)), 0);
    let p1 = min(i32(ceil(x.y - 0.5)), i32(min(u32(view.frame.x), COLS)));
    if (p1 <= p0) {
        return;
    }
    let base = (row - view.first_row) * COLS;
    if (u32(p1 - p0) > SHORT_RUN) {
        let slot = atomicAdd(&spread.count, 1u);
        if (slot < SPREAD_CAPACITY) {
            spread.runs[slot] = vec4<u32>(base + u32(p0), u32(p1 - p0), value, 0u);
            atomicMax(&spread_args[0], min(slot + 1u, MAX_GROUPS));
            return;
        }
    }
    cells_splat_run(base + u32(p0), u32(p1 - p0), value);
}

@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let spans = commands[SPANS_WORD];
    let runs = commands[MERGED_WORD];
    let total = record_count();
    let stride = nwg.x * 256u;
    for (var item = gid.x; item < total; item += stride) {
        scatter_one(item, spans, runs);
    }
}

// ----------------------------------------------------------------- spread
@compute @workgroup_size(256)
fn spread_runs(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let count = min(atomicLoad(&spread.count), SPREAD_CAPACITY);
    for (var r = wid.x; r < count; r += nwg.x) {
        let run = spread.runs[r];
        for (var c = lid.x; c < run.y; c += 256u) {
            cells_splat(run.x + c, run.z);
        }
    }
}

// ---------------------------------------------------------------- resolve
fn selected(id: u32) -> bool {
    return ((selection[id >> 5u] >> (id & 31u)) & 1u) != 0u;
}

fn name_matches(name: u32) -> bool {
    return ((search_mask[name >> 5u] >> (name & 31u)) & 1u) != 0u;
}

fn unpack(c: u32) -> vec3<f32> {
    return vec3<f32>(f32(c & 255u), f32((c >> 8u) & 255u), f32((c >> 16u) & 255u)) / 255.0;
}

fn name_colour(name: u32) -> vec3<f32> {
    var rgb = unpack(name_colours[name]);
    if ((view.flags & VIEW_SEARCH) != 0u && !name_matches(name)) {
        rgb = mix(rgb, BACKGROUND, 0.75);
    }
    return rgb;
}

struct Pixel {
    rgb: vec3<f32>,
    id: u32,
}

// the span of cell index k at pixel centre p of its row [y0, y1)
fn span_pixel(k: u32, p: vec2<f32>, y0: f32, y1: f32) -> Pixel {
    let row_index = visible_rows[k];
    let s = span_record(row_index);
    var rgb = name_colour(s.name);
    if ((view.flags & VIEW_FOCUS) != 0u && focus_mask[row_index] == 0u) {
        rgb = mix(rgb, BACKGROUND, 0.8);
    }
    if (s.id == view.hover) {
        rgb = mix(rgb, vec3<f32>(1.0), 0.25);
    }
    if (selected(s.id)) {
        let x = span_x(s);
        let local = p - vec2<f32>(x.x, y0);
        let size = vec2<f32>(x.y - x.x, y1 - y0);
        let edge = min(min(local.x, size.x - local.x), min(local.y, size.y - local.y));
        // a ring of the pixels within 1.5 logical pixels of an edge (two rows on an integer edge)
        rgb = select(mix(rgb, vec3<f32>(1.0), 0.15), vec3<f32>(1.0), edge <= 1.5 * view.scale);
    }
    return Pixel(rgb, s.id);
}

fn cell_pixel(p: vec2<f32>) -> Pixel {
    var out = Pixel(BACKGROUND, NO_ID);
    if (p.y < view.top || p.y >= view.bottom) {
        return out;
    }
    // the one row whose [y0, y1) holds p.y (rows never overlap: a gap under each)
    let guess = i32(clamp(floor((p.y - view.top) / view.row_height), 0.0, f32(ROWS)));
    var row = 0xffffffffu;
    var y0 = 0.0;
    var y1 = 0.0;
    for (var d = max(guess - 1, 0); d <= guess + 1; d++) {
        let r = view.first_row + u32(d);
        let top = row_top(r);
        let bottom = row_bottom(top);
        if (u32(d) < ROWS && p.y >= top && p.y < bottom) {
            row = r;
            y0 = top;
            y1 = bottom;
        }
    }
    if (row == 0xffffffffu) {
        return out;
    }
    let c = cells_read[(row - view.first_row) * COLS + u32(p.x)];
    let kind = cell_key(c);  // 0: an empty cell
    let index = cell_id(c);
    if (kind == KIND_SPAN) {
        return span_pixel(index, p, y0, y1);
    }
    if (kind == KIND_MERGED) {
        out.rgb = name_colour(merged[index].w) * 0.92;
    } else if (kind == KIND_DENSITY) {
        let peak = f32(max(stats[DENSITY_MAX_WORD], 1u));
        let h = (view.row_height - max(1.0, floor(view.scale))) * (0.15 + 0.85 * f32(density[index].w) / peak);
        if (p.y >= y1 - h) {
            out.rgb = DENSITY;
        }
    }
    return out;
}

@compute @workgroup_size(16, 16)
fn resolve(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (f32(gid.x) >= view.frame.x || f32(gid.y) >= view.frame.y || gid.x >= COLS) {
        return;
    }
    let pixel = cell_pixel(vec2<f32>(f32(gid.x) + 0.5, f32(gid.y) + 0.5));
    textureStore(colour_out, gid.xy, vec4<f32>(pixel.rgb, 1.0));
    textureStore(ids_out, gid.xy, vec4<u32>(pixel.id, 0u, 0u, 0u));
}
