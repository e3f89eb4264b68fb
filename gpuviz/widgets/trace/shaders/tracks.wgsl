// TraceViewer: the tracks, replayed every frame from a render bundle
// recorded once, drawing what a GPUTraceFrame computed this frame:
//   spans    one instance per compacted visible row (instanceCount = the
//            frame's SPANS record), placed from exact 64-bit times
//   merged   one rect per run of pixel columns of sub-pixel spans (MERGED)
//   density  bars of collapsed processes' summary rows (DENSITY)
//   links    thick segments of the selection's links (our own record)
// Names colour the rects (a table per name ID); the search, focus,
// selection and hover change their shade. Every pipeline writes colour
// (location 0) and the span ID (location 1, r32uint: the picking target;
// merged and density rects write NO_ID). Physical pixels, origin top-left.
{% include "trace/shaders/trace_span.wgsl" %}

{% include "widgets/trace/shaders/view.wgsl" %}

const VIEW_SEARCH: u32 = 2u;
const VIEW_FOCUS: u32 = 8u;
const NO_ID: u32 = 0xffffffffu;
const DENSITY: vec3<f32> = vec3<f32>(0.42, 0.58, 0.86);
const BACKGROUND: vec3<f32> = vec3<f32>({{ background | join(", ") }});

@group(0) @binding(0) var<uniform> view: View;
{% include "widgets/trace/shaders/records.wgsl" %}
@group(0) @binding(2) var<storage, read> thread_rows: array<u32>;     // frame: first layout row per thread
@group(0) @binding(3) var<storage, read> name_colours: array<u32>;    // rgba8 per name ID
@group(0) @binding(4) var<storage, read> selection: array<u32>;       // bit per span ID
@group(0) @binding(5) var<storage, read> segments: array<vec4<f32>>;  // per link: (x0, y0, x1, y1) logical, rgba
@group(0) @binding(6) var<storage, read> visible_rows: array<u32>;    // frame: compacted scene rows
@group(0) @binding(7) var<storage, read> merged: array<vec4<u32>>;    // frame: (row, x0, x1, name)
@group(0) @binding(8) var<storage, read> density: array<vec4<u32>>;   // frame: (row, x0, x1, count)
@group(0) @binding(9) var<storage, read> stats: array<u32>;           // frame: STATS words
@group(0) @binding(10) var<storage, read> focus_mask: array<u32>;     // frame: 1 per focused scene row
@group(0) @binding(11) var<storage, read> search_mask: array<u32>;    // frame: bit per matching name ID

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) @interpolate(flat) id: u32,
    @location(2) local: vec2<f32>,                        // pixels from the rect's top-left corner
    @location(3) @interpolate(flat) size_marks: vec4<f32>,  // rect (w, h), selected, hovered
}

struct FragmentOut {
    @location(0) color: vec4<f32>,
    @location(1) id: u32,
}

fn selected(id: u32) -> bool {
    return ((selection[id >> 5u] >> (id & 31u)) & 1u) != 0u;
}

fn name_matches(name: u32) -> bool {
    return ((search_mask[name >> 5u] >> (name & 31u)) & 1u) != 0u;
}

fn row_top(row: u32) -> f32 {
    return view.top + (f32(row) - f32(view.first_row)) * view.row_height;
}

fn gap() -> f32 {
    return max(1.0, floor(view.scale));
}

// a rect (x0, y0, x1, y1) clipped to the tracks; None-like (y1 <= y0) when outside
fn rect_vertex(vi: u32, r: vec4<f32>, rgba: vec4<f32>, id: u32, marks: vec2<f32>) -> VertexOut {
    let c = corner(vi);
    var out: VertexOut;
    out.position = clip(vec2<f32>(mix(r.x, r.z, c.x), mix(r.y, r.w, c.y)));
    out.color = rgba;
    out.id = id;
    out.local = vec2<f32>(mix(0.0, r.z - r.x, c.x), mix(0.0, r.w - r.y, c.y));
    out.size_marks = vec4<f32>(r.z - r.x, r.w - r.y, marks);
    return out;
}

fn hidden() -> VertexOut {
    var out: VertexOut;
    out.position = vec4<f32>(2.0, 2.0, 2.0, 1.0);  // outside the clip volume
    out.color = vec4<f32>(0.0);
    out.id = NO_ID;
    out.local = vec2<f32>(0.0);
    out.size_marks = vec4<f32>(0.0);
    return out;
}

fn clip(p: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(p.x / view.frame.x * 2.0 - 1.0, 1.0 - p.y / view.frame.y * 2.0, 0.5, 1.0);
}

fn corner(vi: u32) -> vec2<f32> {
    // two triangles: (0,0) (1,0) (0,1) / (0,1) (1,0) (1,1)
    let c = array<vec2<f32>, 6>(vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
                                vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0));
    return c[vi];
}

fn unpack(c: u32) -> vec3<f32> {
    return vec3<f32>(f32(c & 255u), f32((c >> 8u) & 255u), f32((c >> 16u) & 255u)) / 255.0;
}

// ------------------------------------------------------------- background
@vertex
fn vs_background(@builtin(vertex_index) vi: u32) -> VertexOut {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));
    var out = hidden();
    out.position = vec4<f32>(uv * 2.0 - 1.0, 0.5, 1.0);
    out.color = vec4<f32>(BACKGROUND, 1.0);
    return out;
}

// ------------------------------------------------------------------ spans
@vertex
fn vs_span(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let row_index = visible_rows[k];
    let s = span_record(row_index);
    // every test (window, rows, expansion, filters, focus "hide") was the frame's predicate
    let row = thread_rows[s.thread] + s.lane;
    let y0 = row_top(row);
    if (row < view.first_row || y0 >= view.bottom) {
        return hidden();
    }
    let one = vec2<u32>(select(0u, 1u, s.duration.x == 0u && s.duration.y == 0u), 0u);
    let end = trace_time_add(s.start, trace_time_add(s.duration, one));  // zero duration: 1 ns wide
    var x0 = view.gutter + trace_time_delta_f32(s.start, view.origin) * view.px_per_ns;
    var x1 = view.gutter + trace_time_delta_f32(end, view.origin) * view.px_per_ns;
    x0 = clamp(x0, view.gutter, view.frame.x - 1.0);
    x1 = clamp(x1, view.gutter, view.frame.x);
    x1 = max(x1, x0 + 1.0);  // at least one pixel column (the last one at the right edge)
    var rgb = unpack(name_colours[s.name]);
    if ((view.flags & VIEW_SEARCH) != 0u && !name_matches(s.name)) {
        rgb = mix(rgb, BACKGROUND, 0.75);
    }
    if ((view.flags & VIEW_FOCUS) != 0u && focus_mask[row_index] == 0u) {
        rgb = mix(rgb, BACKGROUND, 0.8);
    }
    let r = vec4<f32>(x0, y0, x1, min(y0 + view.row_height - gap(), view.bottom));
    let marks = vec2<f32>(select(0.0, 1.0, selected(s.id)), select(0.0, 1.0, s.id == view.hover));
    return rect_vertex(vi, r, vec4<f32>(rgb, 1.0), s.id, marks);
}

@vertex
fn vs_merged(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let m = merged[k];
    let y0 = row_top(m.x);
    if (m.x < view.first_row || y0 >= view.bottom) {
        return hidden();
    }
    var rgb = unpack(name_colours[m.w]);
    if ((view.flags & VIEW_SEARCH) != 0u && !name_matches(m.w)) {
        rgb = mix(rgb, BACKGROUND, 0.75);
    }
    let x0 = view.gutter + f32(m.y) * view.column_px;
    let x1 = max(view.gutter + f32(m.z) * view.column_px, x0 + 1.0);
    let r = vec4<f32>(x0, y0, min(x1, view.frame.x), min(y0 + view.row_height - gap(), view.bottom));
    return rect_vertex(vi, r, vec4<f32>(rgb * 0.92, 1.0), NO_ID, vec2<f32>(0.0));
}

@vertex
fn vs_density(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let d = density[k];
    let y0 = row_top(d.x);
    if (d.x < view.first_row || y0 >= view.bottom) {
        return hidden();
    }
    let peak = f32(max(stats[{{ density_max_word }}u], 1u));
    let h = (view.row_height - gap()) * (0.15 + 0.85 * f32(d.w) / peak);
    let y1 = min(y0 + view.row_height - gap(), view.bottom);
    let x0 = view.gutter + f32(d.y) * view.column_px;
    let x1 = max(view.gutter + f32(d.z) * view.column_px, x0 + 1.0);
    let r = vec4<f32>(x0, y1 - h, min(x1, view.frame.x), y1);
    return rect_vertex(vi, r, vec4<f32>(DENSITY, 1.0), NO_ID, vec2<f32>(0.0));
}

@fragment
fn fs_span(in: VertexOut) -> FragmentOut {
    var rgb = in.color.rgb;
    let edge = min(min(in.local.x, in.size_marks.x - in.local.x), min(in.local.y, in.size_marks.y - in.local.y));
    let ring = 1.5 * view.scale;
    if (in.size_marks.w > 0.5) {
        rgb = mix(rgb, vec3<f32>(1.0), 0.25);
    }
    if (in.size_marks.z > 0.5) {
        rgb = select(mix(rgb, vec3<f32>(1.0), 0.15), vec3<f32>(1.0, 1.0, 1.0), edge < ring);
    }
    return FragmentOut(vec4<f32>(rgb, 1.0), in.id);
}

@fragment
fn fs_plain(in: VertexOut) -> FragmentOut {
    return FragmentOut(in.color, in.id);
}

// ------------------------------------------------------------------ links
@vertex
fn vs_link(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VertexOut {
    let ends = segments[2u * k] * view.scale;
    let rgba = segments[2u * k + 1u];
    let a = ends.xy;
    let b = ends.zw;
    let along = b - a;
    let len = max(length(along), 1e-3);
    let n = vec2<f32>(-along.y, along.x) / len * max(1.0, view.scale);  // half of a 2-pixel line
    let c = corner(vi);
    var out = hidden();
    out.position = clip(mix(a, b, c.x) + n * (c.y * 2.0 - 1.0));
    out.color = rgba;
    return out;
}
