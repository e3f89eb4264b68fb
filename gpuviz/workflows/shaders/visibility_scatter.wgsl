// GPUVisibilityWorkflow, pass 3: write the kept rows' IDs in source order.
//
// One workgroup per tile of TILE = 8192 rows (the tiling of
// visibility_predicate.wgsl): it reads the tile's 256 bit words once into
// workgroup memory, finds each lane's four-row groups' places in the tile
// with one group scan of the words' popcounts, adds the tile's offset from
// the scanned tile counts, and writes the IDs (the row's global index
// row_base + row, or source_ids[row]) with lane l taking rows r * 256 + l,
// so a warp's writes are contiguous.
//
// A tile whose count (from the predicate pass) is zero returns at once.
//
// Template values: subgroups (which group primitives), ids (layout of the
// source_ids role, "none" for row indices) and scatter: dst (bindings of
// the output buffers) and table (several output chunks: scatter_chunks holds
// per chunk its end in the compacted sequence, its element offset in its
// binding minus its first position (wrapping), its dst slot).

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/group_subgroup.wgsl" if subgroups else "algorithms/shaders/group_portable.wgsl" %}

override SEGMENTED: bool = false;  // knob of the group primitives; this scan is not segmented

struct ScatterParams {
    n: u32,          // rows of this chunk
    tile_base: u32,  // global index of this chunk's first tile
    num_tiles: u32,
    row_base: u32,   // global row index of this chunk's first row
    ids_off: u32,    // element offset of source_ids in its bound range
    out_off: u32,    // one output chunk: its element offset in its binding
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> P: ScatterParams;
@group(0) @binding(1) var<storage, read> bits: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(31) var<storage, read> counts: array<u32>;
{{ views.view("ids", 3, "read", ids, "P.ids_off") }}
{% for b in scatter.dst %}
@group(0) @binding({{ b }}) var<storage, read_write> dst{{ b }}: array<u32>;
{% endfor %}
{% if scatter.table %}
@group(0) @binding(30) var<storage, read> scatter_chunks: array<vec4<u32>>;
{% endif %}

const WG: u32 = 256u;
const TILE: u32 = 8192u;

var<workgroup> s_words: array<u32, WG>;   // the tile's bit words
var<workgroup> s_before: array<u32, WG>;  // kept rows of the tile before each word
var<workgroup> s_part: array<u32, WG>;    // kept rows per scan group

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
{% if ids == "none" %}
    return P.row_base + row;
{% else %}
    return ids_get1(row);
{% endif %}
}

// Lane slot p (the order the group scans use) owns bit word p of the tile.
fn slot(g: Group) -> u32 { return g.id * g.size + g.lane; }

fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }  // uniform per workgroup
    let tile = P.tile_base + wg;
    if (counts[tile] == 0u) { return; }  // nothing kept: skip the scans (uniform too)
    // Kept rows of the tile before each bit word: one group scan of the words' popcounts.
    let q = slot(g);
    let word = bits[tile * WG + q];
    s_words[q] = word;
    let sc = grp_scan4(g, vec4<u32>(0u), vec4<u32>(countOneBits(word), 0u, 0u, 0u));
    if (g.lane == 0u) { s_part[g.id] = sc.tot_v.x; }
    workgroupBarrier();
    var before = sc.ex_v.x;
    for (var k = 0u; k < g.id; k++) { before += s_part[k]; }
    s_before[q] = before;
    workgroupBarrier();
    // Lane l takes rows r * WG + l: a warp's kept rows land on consecutive output words.
    let base = offsets[tile];
    let row0 = wg * TILE;
    for (var r = 0u; r < TILE / WG; r++) {
        let t = r * WG + g.lid;
        let w = s_words[t >> 5u];
        let b = t & 31u;
        if (((w >> b) & 1u) != 0u) {
            scatter(base + s_before[t >> 5u] + countOneBits(w & ((1u << b) - 1u)), row_id(row0 + t));
        }
    }
}
