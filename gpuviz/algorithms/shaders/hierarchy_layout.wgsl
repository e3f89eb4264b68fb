// Effective child heights of a two-level hierarchy, four children a lane,
// over rows H.lo .. H.hi of one child chunk.
//
// A child whose parent is collapsed gets H.collapsed_parent if it is the
// parent's first child, else 0; a child of an expanded parent gets its
// expanded height (a constant or its own word of `expanded`) when its own
// state is nonzero, else H.collapsed_child. A parent row at or past
// H.parent_count reads as expanded; the bound parent view starts at global
// parent row H.parent_base (every parent this dispatch reads lies in it).
//
// Template values: form ("divide": parent = global child row / H.k;
// "rows": parent = child_parents[c], a child starts its parent's run when
// the previous child's parent differs), expanded ("constant" or "view"),
// prev (the first child of this chunk has a predecessor in an earlier chunk,
// read through binding 6), and the views.view layouts of heights, states,
// parents, child_parents, expanded and prev. View element offsets are
// HeightParams fields, so every chunk of one structure shares a pipeline.

{% import "algorithms/shaders/views.wgsl" as views %}

struct HeightParams {
    lo: u32,               // the chunk rows this dispatch lays out: lo .. hi
    hi: u32,
    child_base: u32,       // global row of the chunk's row 0
    k: u32,                // children per parent ("divide")
    parent_count: u32,     // rows of the parent states
    expanded_height: u32,  // the constant expanded height
    collapsed_child: u32,
    collapsed_parent: u32,
    heights_off: u32,      // element offsets of the views inside their bound ranges
    states_off: u32,
    parents_off: u32,
    rows_off: u32,
    expanded_off: u32,
    prev_off: u32,         // the predecessor's element (the last of the previous chunk)
    parent_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> H: HeightParams;
{{ views.view("heights", 1, "read_write", layouts.heights, "H.heights_off") }}
{{ views.view("states", 2, "read", layouts.states, "H.states_off") }}
{{ views.view("parents", 3, "read", layouts.parents, "H.parents_off") }}
{{ views.view("rows", 4, "read", layouts.rows, "H.rows_off") }}
{{ views.view("expanded", 5, "read", layouts.expanded, "H.expanded_off") }}
{{ views.view("prev", 6, "read", layouts.prev, "H.prev_off") }}

fn inside(i: u32) -> bool { return i >= H.lo && i < H.hi; }

// Whole vec4 reads where all four rows are inside, else row by row (zero outside).
fn full4(e: u32) -> bool { return e >= H.lo && e + 3u < H.hi; }

fn load_states(e: u32) -> vec4<u32> {
    if (full4(e)) { return states_get4(e); }
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) { if (inside(e + c)) { o[c] = states_get1(e + c); } }
    return o;
}

fn load_rows(e: u32) -> vec4<u32> {
    if (full4(e)) { return rows_get4(e); }
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) { if (inside(e + c)) { o[c] = rows_get1(e + c); } }
    return o;
}

fn load_expanded(e: u32) -> vec4<u32> {
{% if expanded == "view" %}
    if (full4(e)) { return expanded_get4(e); }
    var o = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) { if (inside(e + c)) { o[c] = expanded_get1(e + c); } }
    return o;
{% else %}
    return vec4<u32>(H.expanded_height);
{% endif %}
}

fn parent_expanded(p: u32) -> bool {
    if (p >= H.parent_count) { return true; }
    return parents_get1(p - H.parent_base) != 0u;
}

// The parent row of each of the four children and whether each is its
// parent's first child.
struct Family {
    parent: vec4<u32>,
    first: vec4<bool>,
}

fn family(e: u32) -> Family {
    var f: Family;
{% if form == "divide" %}
    for (var c = 0u; c < 4u; c++) {
        let g = H.child_base + e + c;
        f.parent[c] = g / H.k;
        f.first[c] = g % H.k == 0u;
    }
{% else %}
    f.parent = load_rows(e);
    var before = 0u;
    var has_before = e > 0u;
    if (has_before) {
        before = rows_get1(e - 1u);
    } else {
{% if prev %}
        before = prev_get1(0u);
        has_before = true;
{% endif %}
    }
    f.first[0] = !has_before || before != f.parent[0];
    for (var c = 1u; c < 4u; c++) { f.first[c] = f.parent[c - 1u] != f.parent[c]; }
{% endif %}
    return f;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = (H.lo & ~3u) + (gid.x + gid.y * nwg.x * 256u) * 4u;
    if (e >= H.hi) { return; }
    let own = load_states(e);
    let full = load_expanded(e);
    let f = family(e);
    var h: vec4<u32>;
    for (var c = 0u; c < 4u; c++) {
        if (parent_expanded(f.parent[c])) {
            h[c] = select(H.collapsed_child, full[c], own[c] != 0u);
        } else {
            h[c] = select(0u, H.collapsed_parent, f.first[c]);
        }
    }
    if (full4(e)) {
        heights_set4(e, h);
    } else {
        for (var c = 0u; c < 4u; c++) { if (inside(e + c)) { heights_set1(e + c, h[c]); } }
    }
}
