// Candidate-driven compaction over active source ranges.
//
// Dispatched indirectly with one workgroup per active range slot (the
// caller's dispatch record is (1, active range count, 1)). The count phase
// stores each active range's selected-row count; after a scan of those
// counts into offsets, the scatter phase rescans the range's flags and
// writes the global source IDs of selected rows in source order.
//
// Template values: subgroups (which group primitives), layouts/access of
// the roles flags/ranges/actives/counts/offsets/output (bindings 1-6; "none"
// for the roles the other phase uses) and phase ("count" or "scatter").
// View element offsets are RangeParams fields.

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

{% for name in ("flags", "ranges", "actives", "counts", "offsets", "output") %}
{{ views.view(name, loop.index, access[name], layouts[name], "R." ~ name ~ "_off") }}
{% endfor %}

override SEGMENTED: bool = false;  // knob of the group primitives; ranges are not segmented

const WG: u32 = 256u;

struct RangeParams {
    range_start: u32,   // range IDs this dispatch owns: [range_start, range_end)
    range_end: u32,
    source_start: u32,  // the flags rows bound here hold source IDs [source_start, source_end)
    source_end: u32,
    max_length: u32,    // rows of one range past this are ignored
    stride: u32,        // range record layout, in uint32 words
    first_word: u32,
    count_word: u32,
    output_length: u32, // output rows bound here
    flags_off: u32,     // element offsets of the views inside their bound ranges
    ranges_off: u32,
    actives_off: u32,
    counts_off: u32,
    offsets_off: u32,
    output_off: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> R: RangeParams;

var<workgroup> rc_range: vec3<u32>;
var<workgroup> rc_part: array<u32, WG>;
var<workgroup> rc_sum: atomic<u32>;

// (range ID, first source row, rows) of active slot `wg`, clamped to this
// dispatch's source rows; rows is 0 for a range another dispatch owns.
fn load_range(g: Group, wg: u32) -> vec3<u32> {
    if (g.lid == 0u) {
        let rid = actives_get1(wg);
        var lo = R.source_start;
        var rows = 0u;
        if (rid >= R.range_start && rid < R.range_end) {
            let first = ranges_get1(rid * R.stride + R.first_word);
            let count = min(ranges_get1(rid * R.stride + R.count_word), R.max_length);
            lo = clamp(first, R.source_start, R.source_end);
            let end = first + min(count, R.source_end - min(first, R.source_end));
            rows = max(lo, end) - lo;
        }
        rc_range = vec3<u32>(rid, lo, rows);
    }
    return workgroupUniformLoad(&rc_range);
}

fn selected(r: vec3<u32>, i: u32) -> u32 {
    if (i >= r.z) { return 0u; }
    return select(0u, 1u, flags_get1(r.y + i - R.source_start) != 0u);
}

// Exclusive prefix of v across the workgroup and the workgroup total.
fn wg_scan1(g: Group, v: u32) -> vec2<u32> {
    let s = grp_scan4(g, vec4<u32>(0u), vec4<u32>(v, 0u, 0u, 0u));
    if (g.lane == 0u) { rc_part[g.id] = s.tot_v.x; }
    workgroupBarrier();
    var before = 0u;
    var total = 0u;
    for (var k = 0u; k < g.count; k++) {
        if (k < g.id) { before += rc_part[k]; }
        total += rc_part[k];
    }
    workgroupBarrier();
    return vec2<u32>(before + s.ex_v.x, total);
}

fn count_phase(g: Group, wg: u32) {
    let r = load_range(g, wg);
    if (r.x < R.range_start || r.x >= R.range_end) { return; }
    if (g.lid == 0u) { atomicStore(&rc_sum, 0u); }
    workgroupBarrier();
    var sum = 0u;
    for (var i = g.lid; i < r.z; i += WG) { sum += selected(r, i); }
    atomicAdd(&rc_sum, sum);
    workgroupBarrier();
    if (g.lid == 0u) { counts_set1(r.x, atomicLoad(&rc_sum)); }
}

fn scatter_phase(g: Group, wg: u32) {
    let r = load_range(g, wg);
    if (r.x < R.range_start || r.x >= R.range_end) { return; }
    let base = offsets_get1(r.x);
    var run = 0u;
    for (var b = 0u; b < r.z; b += WG) {
        let f = selected(r, b + g.lid);
        let s = wg_scan1(g, f);
        let k = base + run + s.x;
        if (f != 0u && k < R.output_length) { output_set1(k, r.y + b + g.lid); }
        run += s.y;
    }
}

fn kernel_main(g: Group, wg: u32) { {{ phase }}_phase(g, wg); }
