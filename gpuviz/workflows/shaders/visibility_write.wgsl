// GPUVisibilityWorkflow, pass 3 of 3: the kept rows' IDs in source order,
// from pass 1's bit words and the scanned tile bases.
//
// One workgroup per tile of one chunk (TILE rows, the same tiles as
// visibility.wgsl). A group scan of the popcounts of the tile's WORDS bit
// words places each word inside the tile; the tile's base comes from
// `bases` (exclusive scan of the tile counts); then in iteration r lane l
// writes the ID of row r * 256 + l when it is kept, so a warp's kept rows
// land on consecutive output words.
//
// Template values: layouts (bits, bases, ids), subgroups, iters, wpl (bit
// words per lane slot: max(1, ITER / 8); below 8192-row tiles the slots past
// WORDS scan zeros) and scatter: dst (bindings of the output buffers) and
// table (several output chunks: scatter_chunks holds per chunk its end in
// the compacted sequence, its element offset in its binding minus its first
// position (wrapping), its dst slot).

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

override SEGMENTED: bool = false;  // knob of the group primitives; nothing here is segmented

struct WriteParams {
    n: u32,          // rows of this chunk
    num_tiles: u32,  // tiles of this chunk (= workgroups)
    row_base: u32,   // global row index of this chunk's first row
    out_off: u32,    // one output chunk: its element offset in its binding
    bits_off: u32,   // element (uint32 word) offsets of the views in their bound ranges
    bases_off: u32,
    ids_off: u32,
}

@group(0) @binding(0) var<uniform> P: WriteParams;
{{ views.view("bits", 1, "read", layouts.bits, "P.bits_off") }}
{{ views.view("bases", 2, "read", layouts.bases, "P.bases_off") }}
{{ views.view("ids", 3, "read", layouts.ids, "P.ids_off") }}
{% for b in scatter.dst %}
@group(0) @binding({{ b }}) var<storage, read_write> dst{{ b }}: array<u32>;
{% endfor %}
{% if scatter.table %}
@group(0) @binding(4) var<storage, read> scatter_chunks: array<vec4<u32>>;
{% endif %}

const WG: u32 = 256u;
const ITER: u32 = {{ iters }}u;
const TILE: u32 = WG * ITER * 4u;
const WORDS: u32 = TILE / 32u;
const WPL: u32 = {{ wpl }}u;

var<workgroup> s_words: array<u32, WG * WPL>;   // the tile's bit words
var<workgroup> s_before: array<u32, WG * WPL>;  // kept rows of the tile before each word
var<workgroup> s_part: array<u32, WG>;          // kept rows per scan group
var<workgroup> s_kept: u32;

fn scatter(k: u32, v: u32) {
{% if not scatter.table %}
    dst{{ scatter.dst[0] }}[P.out_off + k] = v;
{% else %}
    var lo = 0u;
    var hi = arrayLength(&scatter_chunks) - 1u;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (k < scatter_chunks[mid].x) { hi = mid; } else { lo = mid + 1u; }
    }
    let c = scatter_chunks[lo];
    switch (c.z) {
{% for b in scatter.dst %}
        {{ "default" if loop.last else "case %du" % loop.index0 }}: { dst{{ b }}[c.y + k] = v; }
{% endfor %}
    }
{% endif %}
}

// The ID of row `row` of this chunk (its global index or its source ID).
fn row_id(row: u32) -> u32 {
{% if layouts.ids == "none" %}
    return P.row_base + row;
{% else %}
    return ids_get1(row);
{% endif %}
}

fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }  // uniform per workgroup: the 2-D grid's spare groups
    let lt = wg;
    // Lane slot p (the order the group scans use) owns words WPL * p .. + WPL - 1.
    let q = WPL * (g.id * g.size + g.lane);
{% for j in range(wpl) %}
    let w{{ j }} = select(0u, bits_get1(lt * WORDS + q + {{ j }}u), q + {{ j }}u < WORDS);
    s_words[q + {{ j }}u] = w{{ j }};
{% endfor %}
    let sc = grp_scan4(g, vec4<u32>(0u), vec4<u32>({% for j in range(wpl) %}{{ " + " if j }}countOneBits(w{{ j }}){% endfor %}, 0u, 0u, 0u));
    if (g.lane == 0u) { s_part[g.id] = sc.tot_v.x; }
    workgroupBarrier();
    var before = sc.ex_v.x;
    for (var k = 0u; k < g.id; k++) { before += s_part[k]; }
{% for j in range(wpl) %}
    s_before[q + {{ j }}u] = before;
    before += countOneBits(w{{ j }});
{% endfor %}
    if (g.id == g.count - 1u && g.lane == g.size - 1u) { s_kept = before; }  // the tile's kept rows
    let kept = workgroupUniformLoad(&s_kept);  // (a barrier too: s_words and s_before are complete)
    if (kept == 0u) { return; }
    let base = bases_get1(lt);
    let row0 = lt * TILE;
    for (var r = 0u; r < ITER * 4u; r++) {
        let t = r * WG + g.lid;
        let w = s_words[t >> 5u];
        let b = t & 31u;
        if (((w >> b) & 1u) != 0u) {
            scatter(base + s_before[t >> 5u] + countOneBits(w & ((1u << b) - 1u)), row_id(row0 + t));
        }
    }
}
