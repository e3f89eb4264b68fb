{# GPUTraceInteraction "{id}-predicate": one pass over the span records of one
   piece (a row range inside one record chunk, at most a binding long).

   Per span, with every time relative to the window origin as an exact
   signed 64-bit integer (trace_time.wgsl), never a float:
     filters   category bit, duration >= min_duration, search ("filter"
               mode), focus ("hide" mode) (trace_filters.wgsl; the minimap of
               the filtered spans is its own pass, trace_minimap.wgsl, run
               only when the filters change)
     window    rel_start < span and rel_start + max(duration, 1) > 0
     collapsed process -> +1 in every density cell (summary row, column) it covers
     else      hidden if its thread is collapsed and lane > 0, culled outside
               the row range; a span inside one pixel column -> atomicMax of
               name + 1 in its occupancy cell, else draw[row] = 1.
   Columns are exact: column(t) is the last c with cols[c] <= t, found from
   a float estimate and corrected against the CPU-written integer bounds. #}
{% include "trace/shaders/trace_span.wgsl" %}
{% include "trace/interaction/shaders/trace_view.wgsl" %}
{% include "trace/interaction/shaders/trace_filters.wgsl" %}

// Per 2048-row tile (GPUTraceInteraction._tiles): time extent and process.
struct Tile {
    min_start: vec2<u32>,  // ns since the scene origin
    max_end: vec2<u32>,    // latest start + max(duration, 1)
    process: u32,          // MIXED when the tile's rows span several processes
    pad0: u32,
    pad1: u32,
    pad2: u32,
}
const MIXED: u32 = 0xffffffffu;

struct Piece {
    base: u32,  // first scene row of the piece
    rows: u32,
    pad0: u32,
    pad1: u32,
}

override THREAD_STATES: u32;  // word of thread 0's state in states (process states come first)
override ROW_CELLS: u32;      // cells per row (width capacity)
override CELLS: u32;          // occupancy cells; density cells follow
override ROWS_PER_LANE: u32;     // rows per invocation (GPUTraceInteraction ROWS_PER_GROUP / 256)

@group(0) @binding(0) var<uniform> view: TraceView;
@group(0) @binding(1) var<uniform> piece: Piece;
@group(0) @binding(2) var<storage, read> spans: array<TraceSpan>;
@group(0) @binding(3) var<storage, read> cols: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> tiles: array<Tile>;
@group(0) @binding(5) var<storage, read> states: array<u32>;
@group(0) @binding(6) var<storage, read> thread_rows: array<u32>;
@group(0) @binding(7) var<storage, read> category_mask: array<u32>;
@group(0) @binding(8) var<storage, read> search_mask: array<u32>;
@group(0) @binding(9) var<storage, read> focus: array<u32>;
@group(0) @binding(10) var<storage, read_write> draw: array<u32>;
@group(0) @binding(11) var<storage, read_write> cells: array<atomic<u32>>;
@group(0) @binding(13) var<storage, read_write> stats: array<atomic<u32>>;
@group(0) @binding(14) var<storage, read_write> shown: array<u32>;  // per row: trace_edges.wgsl's codes

var<workgroup> counts: array<atomic<u32>, 16>;
// A workgroup's cell cache: its 2048 rows are consecutive spans of few
// threads, so they hit few cells; each cell is raised (max, occupancy) or
// counted (add, density) here and reaches the global cells once per
// workgroup instead of once per span. A slot holds one cell (claimed by
// compare-exchange); a span whose slot another cell holds goes straight to
// the global cell. Exact either way.
const CACHE: u32 = 1024u;
const EMPTY: u32 = 0xffffffffu;
var<workgroup> cache_key: array<atomic<u32>, CACHE>;
var<workgroup> cache_val: array<atomic<u32>, CACHE>;
// This invocation's counts (STATS words 0-4 and 9), flushed once per invocation.
var<private> mine: array<u32, 10>;

// Signed 64-bit a < b (two's complement (lo, hi)).
fn signed_less(a: vec2<u32>, b: vec2<u32>) -> bool {
    let ah = bitcast<i32>(a.y);
    let bh = bitcast<i32>(b.y);
    return ah < bh || (ah == bh && a.x < b.x);
}

fn as_f32(t: vec2<u32>) -> f32 {
    return f32(t.y) * 4294967296.0 + f32(t.x);
}

// Pixel column of t in [0, span): the last c < width with cols[c] <= t.
// The estimate is within one column (span >= width and |error| << 1 column).
fn column(t: vec2<u32>) -> u32 {
    let last = view.width - 1u;
    var c = u32(clamp(as_f32(t) * view.px_per_ns, 0.0, f32(last)));
    for (var k = 0u; k < 3u; k++) {
        if (c < last && !trace_time_less(t, cols[c + 1u])) { c += 1u; }
    }
    for (var k = 0u; k < 3u; k++) {
        if (c > 0u && trace_time_less(t, cols[c])) { c -= 1u; }
    }
    return c;
}

fn slot_of(cell: u32) -> u32 {
    return (cell * 2654435761u) >> 22u;  // Fibonacci hash, 10 bits = CACHE slots
}

// Whether slot h holds `cell` (claiming it when empty).
fn claim(h: u32, cell: u32) -> bool {
    let r = atomicCompareExchangeWeak(&cache_key[h], EMPTY, cell);
    return r.exchanged || r.old_value == cell;
}

// Occupancy cell: max(cell, value).
fn raise_cell(cell: u32, value: u32) {
    let h = slot_of(cell);
    if (claim(h, cell)) {
        atomicMax(&cache_val[h], value);
    } else {
        atomicMax(&cells[cell], value);
    }
}

// Density cell (index >= CELLS): cell += 1.
fn count_cell(cell: u32) {
    let h = slot_of(cell);
    if (claim(h, cell)) {
        atomicAdd(&cache_val[h], 1u);
    } else {
        atomicAdd(&cells[cell], 1u);
    }
}

// PLACE_* outcome of one span.
const PLACE_HIDDEN: u32 = 0u;
const PLACE_MERGED: u32 = 1u;
const PLACE_SUMMARY: u32 = 2u;        // collapsed process, counted in its density cells
const PLACE_SUMMARY_HIDDEN: u32 = 3u; // collapsed process, not in view or filtered out
const PLACE_DRAWN: u32 = 4u;

fn place(s: TraceSpan, row: u32) -> u32 {
    let expanded = states[s.process] != 0u;
    let hidden = select(PLACE_SUMMARY_HIDDEN, PLACE_HIDDEN, expanded);
    if (!filtered_in(s, row)) {
        return hidden;
    }
    let span = trace_time_sub(view.end, view.origin);
    let rel_start = trace_time_sub(s.start, view.origin);
    let width = select(s.duration, vec2<u32>(1u, 0u), s.duration.x == 0u && s.duration.y == 0u);
    let rel_end = trace_time_add(rel_start, width);
    if (!signed_less(rel_start, span) || !signed_less(vec2<u32>(0u, 0u), rel_end)) {
        return hidden;
    }
    let lo = select(rel_start, vec2<u32>(0u, 0u), signed_less(rel_start, vec2<u32>(0u, 0u)));
    let hi = select(rel_end, span, signed_less(span, rel_end));
    let c0 = column(lo);
    let c1 = column(trace_time_sub(hi, vec2<u32>(1u, 0u)));
    var layout_row = thread_rows[s.thread];
    if (expanded) {
        if (states[THREAD_STATES + s.thread] == 0u && s.lane != 0u) {
            return hidden;
        }
        layout_row += s.lane;
    }
    let r = layout_row - view.first_row;
    if (layout_row < view.first_row || r >= view.row_count) {
        return hidden;
    }
    if (!expanded) {
        mine[4] += 1u;
        for (var c = c0; c <= c1; c++) {
            count_cell(CELLS + r * ROW_CELLS + c);
        }
        return PLACE_SUMMARY;
    }
    mine[0] += 1u;
    if ((view.flags & TRACE_VIEW_SEARCH) != 0u && bit(search_mask[s.name >> 5u], s.name)) {
        mine[3] += 1u;
    }
    if (c0 == c1) {
        mine[2] += 1u;
        raise_cell(r * ROW_CELLS + c0, s.name + 1u);
        return PLACE_MERGED;
    }
    mine[1] += 1u;
    return PLACE_DRAWN;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    if (lid < 16u) {
        atomicStore(&counts[lid], 0u);
    }
    for (var h = lid; h < CACHE; h += 256u) {
        atomicStore(&cache_key[h], EMPTY);
        atomicStore(&cache_val[h], 0u);
    }
    workgroupBarrier();
    let group = wid.x + wid.y * nwg.x;
    let tile = group * (256u * ROWS_PER_LANE);
    // A tile of one process entirely outside the window: every row is hidden
    // (filters cannot change that), so its records are not read.
    let t = tiles[piece.base / (256u * ROWS_PER_LANE) + group];
    let span = trace_time_sub(view.end, view.origin);
    if (t.process != MIXED && (!signed_less(trace_time_sub(t.min_start, view.origin), span)
                               || !signed_less(vec2<u32>(0u, 0u), trace_time_sub(t.max_end, view.origin)))) {
        let code = select(PLACE_SUMMARY_HIDDEN, PLACE_HIDDEN, states[t.process] != 0u);
        for (var k = 0u; k < ROWS_PER_LANE; k++) {
            let i = tile + k * 256u + lid;
            if (i < piece.rows) {
                if ((view.flags & TRACE_VIEW_FOCUS) != 0u && focus[i] != 0u) {
                    mine[9] += 1u;
                }
                draw[i] = 0u;
                shown[i] = code;
            }
        }
    } else {
    for (var k = 0u; k < ROWS_PER_LANE; k++) {
        let i = tile + k * 256u + lid;
        if (i < piece.rows) {
            let s = spans[i];
            if ((view.flags & TRACE_VIEW_FOCUS) != 0u && focus[i] != 0u) {
                mine[9] += 1u;
            }
            let placed = place(s, i);
            draw[i] = select(0u, 1u, placed == PLACE_DRAWN);
            shown[i] = select(placed, 1u, placed == PLACE_DRAWN);
        }
    }
    }
    for (var k = 0u; k < 10u; k++) {
        if (mine[k] != 0u) {
            atomicAdd(&counts[k], mine[k]);
        }
    }
    workgroupBarrier();
    for (var h = lid; h < CACHE; h += 256u) {
        let cell = atomicLoad(&cache_key[h]);
        let v = atomicLoad(&cache_val[h]);
        if (cell != EMPTY && v != 0u) {
            if (cell < CELLS) {
                atomicMax(&cells[cell], v);
            } else {
                atomicAdd(&cells[cell], v);
            }
        }
    }
    if (lid < 16u) {
        let v = atomicLoad(&counts[lid]);
        if (v != 0u) {
            atomicAdd(&stats[lid], v);
        }
    }
}
