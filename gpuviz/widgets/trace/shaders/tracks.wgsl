// TraceViewer: the tracks, replayed every frame from a render bundle
// recorded once. One instance per scene record (the indirect record's
// instanceCount); the vertex shader places the span from its exact 64-bit
// times, its thread's row and the view uniform, or emits nothing when a
// test fails: window, rows, expansion, categories, duration, search
// filter, focus "hide". Names colour the rects (a table per name ID), the
// search, focus, selection and hover change their shade. Every pipeline
// writes colour (location 0) and the span ID (location 1, r32uint: the
// picking target). Links of the selection are thick segments (instance per
// segment, indirect record 2). Physical pixels, origin top-left.
{% include "trace/shaders/trace_span.wgsl" %}

struct View {
    origin: vec2<u32>,        // window start, ns since the scene's time origin (wrapping)
    end: vec2<u32>,           // window end
    min_duration: vec2<u32>,  // shorter spans are hidden
    frame: vec2<f32>,         // render size (physical pixels)
    px_per_ns: f32,           // physical pixels per ns
    gutter: f32,              // left edge of the tracks (physical)
    top: f32,                 // top edge of the tracks (physical)
    row_height: f32,          // physical pixels per layout row
    first_row: u32,           // layout row at the top edge
    flags: u32,               // VIEW_* below
    hover: u32,               // span ID under the pointer (NO_ID: none)
    scale: f32,               // physical pixels per logical pixel
    bottom: f32,              // lower edge of the tracks (physical)
    pad0: f32,
    pad1: f32,
    pad2: f32,
}

const VIEW_CATEGORIES: u32 = 1u;
const VIEW_SEARCH: u32 = 2u;
const VIEW_SEARCH_FILTER: u32 = 4u;
const VIEW_FOCUS: u32 = 8u;
const VIEW_FOCUS_HIDE: u32 = 16u;
const MODE_EXPANDED: u32 = 0u;
const MODE_THREAD_COLLAPSED: u32 = 1u;
const MODE_PROCESS_COLLAPSED: u32 = 2u;
const NO_ID: u32 = 0xffffffffu;
// word offsets of the bit sets in `masks` (template values)
const CATEGORY_WORDS: u32 = {{ category_offset }}u;
const SEARCH_WORDS: u32 = {{ search_offset }}u;
const FOCUS_WORDS: u32 = {{ focus_offset }}u;
const SELECTION_WORDS: u32 = {{ selection_offset }}u;
const BACKGROUND: vec3<f32> = vec3<f32>({{ background | join(", ") }});

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> records: array<TraceSpan>;
@group(0) @binding(2) var<storage, read> threads: array<vec2<u32>>;   // (first row, mode) per thread
@group(0) @binding(3) var<storage, read> name_colours: array<u32>;    // rgba8 per name ID
@group(0) @binding(4) var<storage, read> masks: array<u32>;           // bit sets (offsets above)
@group(0) @binding(5) var<storage, read> segments: array<vec4<f32>>;  // per link: (x0, y0, x1, y1) logical, rgba

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

// a < b for times that may lie before the scene origin (the window can): the sign of the
// wrapping 64-bit difference (exact while |a - b| < 2^63 ns)
fn before(a: vec2<u32>, b: vec2<u32>) -> bool {
    return (trace_time_sub(a, b).y & 0x80000000u) != 0u;
}

fn bit(offset: u32, i: u32) -> bool {
    return ((masks[offset + (i >> 5u)] >> (i & 31u)) & 1u) != 0u;
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
    let s = records[k];
    let t = threads[s.thread];
    let mode = t.y;
    if (mode > MODE_PROCESS_COLLAPSED || (mode == MODE_THREAD_COLLAPSED && s.lane > 0u)) {
        return hidden();
    }
    let one = vec2<u32>(select(0u, 1u, s.duration.x == 0u && s.duration.y == 0u), 0u);
    let end = trace_time_add(s.start, trace_time_add(s.duration, one));  // zero duration: 1 ns wide
    if (!before(s.start, view.end) || !before(view.origin, end)) {
        return hidden();  // outside the window (exact 64-bit test)
    }
    if (trace_time_less(s.duration, view.min_duration)) {
        return hidden();
    }
    if ((view.flags & VIEW_CATEGORIES) != 0u && !bit(CATEGORY_WORDS, s.category)) {
        return hidden();
    }
    let searched = (view.flags & VIEW_SEARCH) != 0u;
    let matches = searched && bit(SEARCH_WORDS, s.name);
    if (searched && (view.flags & VIEW_SEARCH_FILTER) != 0u && !matches) {
        return hidden();
    }
    let focusing = (view.flags & VIEW_FOCUS) != 0u;
    let focused = focusing && bit(FOCUS_WORDS, s.id);
    if (focusing && (view.flags & VIEW_FOCUS_HIDE) != 0u && !focused) {
        return hidden();
    }
    let row = t.x + select(0u, s.lane, mode == MODE_EXPANDED);
    let y0 = view.top + (f32(row) - f32(view.first_row)) * view.row_height;
    if (row < view.first_row || y0 >= view.bottom) {
        return hidden();
    }
    var x0 = view.gutter + trace_time_delta_f32(s.start, view.origin) * view.px_per_ns;
    var x1 = view.gutter + trace_time_delta_f32(end, view.origin) * view.px_per_ns;
    x0 = clamp(x0, view.gutter, view.frame.x);
    x1 = clamp(x1, view.gutter, view.frame.x);
    x1 = max(x1, min(x0 + 1.0, view.frame.x));  // at least one pixel column
    let gap = max(1.0, floor(view.scale));
    let y1 = min(y0 + view.row_height - gap, view.bottom);
    let c = corner(vi);
    var out: VertexOut;
    out.position = clip(vec2<f32>(mix(x0, x1, c.x), mix(y0, y1, c.y)));
    var rgb = unpack(name_colours[s.name]);
    var alpha = 1.0;
    if (mode == MODE_PROCESS_COLLAPSED) {
        alpha = 0.35;  // a summary row: overlapping spans add up to a density
    }
    if (searched && !matches) {
        rgb = mix(rgb, BACKGROUND, 0.75);
    }
    if (focusing && !focused) {
        rgb = mix(rgb, BACKGROUND, 0.8);
    }
    let selected = bit(SELECTION_WORDS, s.id);
    out.color = vec4<f32>(rgb, alpha);
    out.id = s.id;
    out.local = vec2<f32>(mix(0.0, x1 - x0, c.x), mix(0.0, y1 - y0, c.y));
    out.size_marks = vec4<f32>(x1 - x0, y1 - y0, select(0.0, 1.0, selected), select(0.0, 1.0, s.id == view.hover));
    return out;
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
        return FragmentOut(vec4<f32>(rgb, 1.0), in.id);
    }
    return FragmentOut(vec4<f32>(rgb, in.color.a), in.id);
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
