// GPUPointSpatialFilter (see gpuviz/spatial/point_filter.py): the exact
// predicate of a query record over points. Entries: clear (stats; in
// candidate mode also the mask), rows (one dispatch per point chunk: every
// row's 0/1), candidates (one dispatch per point chunk: the candidate IDs
// inside that chunk), finish (copies the broad phase's incompleteness).
//
// Template values: dims (2 or 3), candidates (candidate-mode bindings exist).

{% import "spatial/shaders/clear.wgsl" as clear %}
const DIMS: u32 = {{ dims }}u;

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

struct FilterParams {
    n: u32,             // rows of this chunk
    base: u32,          // global row of its first row
    points_off: u32,    // element offsets of the views inside their bound ranges
    mask_off: u32,
    query_off: u32,
    stats_off: u32,
    cand_off: u32,
    qstats_off: u32,
    cand_cap: u32,      // rows of the candidate view
    mask_rows: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: FilterParams;
@group(0) @binding(1) var<storage, read> points: array<f32>;
@group(0) @binding(2) var<storage, read> query: array<u32>;
@group(0) @binding(3) var<storage, read_write> mask: array<u32>;
@group(0) @binding(4) var<storage, read_write> stats: array<atomic<u32>>;  // point_filter.py FILTER_STATS
{% if candidates %}
@group(0) @binding(5) var<storage, read> cands: array<u32>;
@group(0) @binding(6) var<storage, read> qstats: array<u32>;  // grid_query.py QUERY_STATS
{% endif %}

fn QUERY_OFF() -> u32 { return P.query_off; }
{% include "spatial/shaders/query_common.wgsl" %}

var<workgroup> counters: array<atomic<u32>, 2>;  // selected, tested

fn point(i: u32) -> vec3<f32> {
    var p = vec3<f32>(0.0);
    for (var k = 0u; k < DIMS; k++) {
        p[k] = points[P.points_off + i * DIMS + k];
    }
    return p;
}

fn in_box(p: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> bool {
    var ok = true;
    for (var k = 0u; k < DIMS; k++) {
        ok = ok && p[k] >= a[k] && p[k] <= b[k];
    }
    return ok;
}

// Even-odd rule over the record's vertices; an edge is crossed when the
// point's y is in its half-open y span and the point lies left of it. Left
// of both ends crosses and right of (or on) both ends does not, without
// arithmetic, so a hit always lies inside the vertices' bounds.
fn in_polygon(p: vec3<f32>) -> bool {
    let n = qword(1u);
    var inside = false;
    var j = n - 1u;
    for (var i = 0u; i < n; i++) {
        let vi = vertex(i);
        let vj = vertex(j);
        if ((vi.y > p.y) != (vj.y > p.y)) {
            var crosses = p.x < min(vi.x, vj.x);
            if (!crosses && p.x < max(vi.x, vj.x)) {
                // p.x < the edge's x at p.y, multiplied out by (vj.y - vi.y)
                // (its sign flips the comparison): products and differences
                // only, each rounded once, no division and nothing a
                // compiler can fuse, so every adapter and the oracle agree
                let lhs = (p.x - vi.x) * (vj.y - vi.y);
                let rhs = (vj.x - vi.x) * (p.y - vi.y);
                crosses = select((lhs > rhs), (lhs < rhs), (vj.y > vi.y));
            }
            if (crosses) { inside = !inside; }
        }
        j = i;
    }
    return inside;
}

fn inside(p: vec3<f32>) -> bool {
    for (var k = 0u; k < DIMS; k++) {
        if (!is_finite(p[k])) { return false; }
    }
    let r = query_region();
    if (!r.valid || !in_box(p, r.a, r.b)) { return false; }
    let kind = query_kind();
    if (kind == KIND_POINT) {
        var same = true;
        for (var k = 0u; k < DIMS; k++) {
            same = same && p[k] == r.a[k];
        }
        return same;
    }
    if (kind == KIND_RADIUS) {
        let c = query_a();
        let q = query_r();
        var d2 = 0.0;
        for (var k = 0u; k < DIMS; k++) {
            let d = p[k] - c[k];
            d2 = d2 + d * d;
        }
        return d2 <= q * q;
    }
    if (kind == KIND_POLYGON) {
        return in_polygon(p);
    }
    return true;  // bounds
}

{{ clear.kernel("P.mask_rows", "mask[P.mask_off + s] = 0u;") if candidates else clear.kernel() }}

fn flush(li: u32) {
    workgroupBarrier();
    if (li < 2u) {
        let v = atomicLoad(&counters[li]);
        if (v != 0u) { atomicAdd(&stats[P.stats_off + li], v); }
    }
}

@compute @workgroup_size(256)
fn rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    if (li < 2u) { atomicStore(&counters[li], 0u); }
    workgroupBarrier();
    let i = linear(gid, nwg);
    if (i < P.n) {
        let hit = inside(point(i));
        mask[P.mask_off + P.base + i] = select(0u, 1u, hit);
        atomicAdd(&counters[1], 1u);
        if (hit) { atomicAdd(&counters[0], 1u); }
    }
    flush(li);
}

{% if candidates %}
@compute @workgroup_size(256)
fn candidates(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) li: u32) {
    if (li < 2u) { atomicStore(&counters[li], 0u); }
    workgroupBarrier();
    let k = linear(gid, nwg);
    let written = min(qstats[P.qstats_off + 1u], P.cand_cap);
    if (k < written) {
        let id = cands[P.cand_off + k];
        if (id >= P.base && id - P.base < P.n) {
            let hit = inside(point(id - P.base));
            atomicAdd(&counters[1], 1u);
            if (hit) {
                mask[P.mask_off + id] = 1u;
                atomicAdd(&counters[0], 1u);
            }
        }
    }
    flush(li);
}

@compute @workgroup_size(1)
fn finish() {
    atomicStore(&stats[P.stats_off + 2u], qstats[P.qstats_off + 2u]);
    atomicStore(&stats[P.stats_off + 3u], qstats[P.qstats_off + 4u]);
}
{% endif %}
