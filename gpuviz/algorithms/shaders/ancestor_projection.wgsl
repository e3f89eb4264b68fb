// Closest visible ancestor by pointer jumping, in three kinds of pass over
// one chunk of nodes (global rows P.base .. P.base + P.n):
//
// "links": links[g] = VISIBLE when node g is visible, ROOT when its parent
//          is 0xFFFFFFFF or out of range, else its parent (four rows a lane).
// "walk":  up to WALK serial steps along links from every node. A state is
//          (t, m): t = DEAD, or m = FOUND | d (t is the closest visible node,
//          at distance d), or m = d (pending: the nodes at distances below
//          d are hidden, t is the one at distance d).
// "jump":  a pending node adds the state of its t (read from the previous
//          pass's table) to its own: distances add, and every pending node
//          still has the same distance afterwards (WALK * 2^round), so a
//          fixed number of rounds settles every node. A distance past
//          P.max_depth is DEAD: this also ends cycles.
// With `final` the pass writes the answer (t, or P.invalid) into the output
// view instead of a state table.
//
// Settled states (found or dead) never change again, so they are written
// once into each table and then left alone: the walk, with `mirror`, writes
// its settled states into the second table too (tagged STABLE: both tables
// hold it); a jump pass rewrites a settled state only when it is not yet
// STABLE (settled by the previous jump: the other table still holds its
// pending state). Pending states are always written. With `direct` (one non-empty chunk: its
// rows are the global IDs) the walk reads parents and visibility itself and
// no links pass runs.
//
// Template values: stage, final, direct, layouts (views.view layouts of
// parents, visibility and out). View element offsets are ProjectionParams
// fields.

{% import "algorithms/shaders/views.wgsl" as views %}
override WALK: u32 = 4u;

const VISIBLE: u32 = 0xfffffffeu;
const ROOT: u32 = 0xffffffffu;
const DEAD: u32 = 0xffffffffu;
const FOUND: u32 = 0x80000000u;
const STABLE: u32 = 0x40000000u;  // both tables hold this settled state
const DISTANCE: u32 = 0x3fffffffu;

struct ProjectionParams {
    n: u32,
    base: u32,          // global row of the chunk's first node
    node_count: u32,
    max_depth: u32,
    invalid: u32,
    parents_off: u32,   // element offsets of the views inside their bound ranges
    visibility_off: u32,
    out_off: u32,
}

@group(0) @binding(0) var<uniform> P: ProjectionParams;
{% if stage == "links" %}
@group(0) @binding(1) var<storage, read_write> links: array<u32>;
{{ views.view("parents", 2, "read", layouts.parents, "P.parents_off") }}
{{ views.view("visibility", 3, "read", layouts.visibility, "P.visibility_off") }}

fn link(parent: u32, visible: u32) -> u32 {
    if (visible != 0u) { return VISIBLE; }
    if (parent >= P.node_count) { return ROOT; }
    return parent;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = (gid.x + gid.y * nwg.x * 256u) * 4u;
    if (e >= P.n) { return; }
    if (e + 3u < P.n) {
        let p = parents_get4(e);
        let v = visibility_get4(e);
        for (var c = 0u; c < 4u; c++) { links[P.base + e + c] = link(p[c], v[c]); }
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (e + c < P.n) { links[P.base + e + c] = link(parents_get1(e + c), visibility_get1(e + c)); }
        }
    }
}
{% else %}
{% if stage == "walk" and direct %}
{{ views.view("parents", 1, "read", layouts.parents, "P.parents_off") }}
{{ views.view("visibility", 3, "read", layouts.visibility, "P.visibility_off") }}

fn link_of(g: u32) -> u32 {
    if (visibility_get1(g) != 0u) { return VISIBLE; }
    let p = parents_get1(g);
    return select(p, ROOT, p >= P.node_count);
}
{% elif stage == "walk" %}
@group(0) @binding(1) var<storage, read> links: array<u32>;

fn link_of(g: u32) -> u32 { return links[g]; }
{% else %}
@group(0) @binding(1) var<storage, read> before: array<vec2<u32>>;
{% endif %}
{% if final %}
{{ views.view("out", 2, "read_write", layouts.out, "P.out_off") }}
{% else %}
@group(0) @binding(2) var<storage, read_write> after: array<vec2<u32>>;
{% endif %}
{% if mirror %}
@group(0) @binding(4) var<storage, read_write> other: array<vec2<u32>>;
{% endif %}

fn settled(s: vec2<u32>) -> bool { return s.x == DEAD || (s.y & FOUND) != 0u; }

fn settle(g: u32) -> vec2<u32> {
{% if stage == "walk" %}
    var cur = g;
    var d = 0u;
    loop {
        let w = link_of(cur);
        if (w == VISIBLE) { return vec2<u32>(cur, d | FOUND); }
        if (w == ROOT || d == P.max_depth) { return vec2<u32>(DEAD, 0u); }
        cur = w;
        d += 1u;
        if (d == WALK) { return vec2<u32>(cur, d); }
    }
    return vec2<u32>(DEAD, 0u);  // unreachable: the loop returns within WALK steps
{% else %}
    let s = before[g];
    if (settled(s)) { return s; }
    let u = before[s.x];
    if (u.x == DEAD) { return vec2<u32>(DEAD, 0u); }
    let d = s.y + (u.y & DISTANCE);
    if (d > P.max_depth) { return vec2<u32>(DEAD, 0u); }
    return vec2<u32>(u.x, d | (u.y & FOUND));
{% endif %}
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.n) { return; }
    let s = settle(P.base + i);
{% if final %}
    out_set1(i, select(P.invalid, s.x, s.x != DEAD && (s.y & FOUND) != 0u));
{% elif stage == "walk" %}
{% if mirror %}
    if (settled(s)) {
        let t = vec2<u32>(s.x, s.y | STABLE);
        after[P.base + i] = t;
        other[P.base + i] = t;
        return;
    }
{% endif %}
    after[P.base + i] = s;
{% else %}
    let was = before[P.base + i];
    if (settled(was)) {
        // STABLE: the target already holds it; else the target holds this
        // node's older pending state: overwrite it (then both hold it)
        if ((was.y & STABLE) == 0u) { after[P.base + i] = vec2<u32>(was.x, was.y | STABLE); }
        return;
    }
    after[P.base + i] = s;  // pending, or settled just now (the source still holds it pending)
{% endif %}
}
{% endif %}
