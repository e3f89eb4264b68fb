// GPUVisibilityWorkflow, pass 3: write the kept rows' IDs in source order.
//
// One workgroup per tile of TILE = 8192 rows (the tiling of
// visibility_predicate.wgsl): it reads the tile's 256 bit words once into
// workgroup memory, finds each lane's four-row groups' places in the tile
// with two group scans (iterations 0-3 and 4-7 as the components of a vec4),
// adds the tile's offset from the scanned tile counts, and writes the IDs:
// the row's global index (row_base + row) or source_ids[row].
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

var<workgroup> s_words: array<u32, WG>;
var<workgroup> s_part_a: array<vec4<u32>, WG>;
var<workgroup> s_part_b: array<vec4<u32>, WG>;

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

fn ids4(e: u32, nibble: u32) -> vec4<u32> {
{% if ids == "none" %}
    return vec4<u32>(P.row_base + e) + vec4<u32>(0u, 1u, 2u, 3u);
{% else %}
    if (e + 3u < P.n) { return ids_get4(e); }
    var o = vec4<u32>(0u);
    if ((nibble & 1u) != 0u) { o.x = ids_get1(e); }
    if ((nibble & 2u) != 0u) { o.y = ids_get1(e + 1u); }
    if ((nibble & 4u) != 0u) { o.z = ids_get1(e + 2u); }
    return o;
{% endif %}
}

fn nibble_of(q: u32) -> u32 { return (s_words[q >> 3u] >> ((q & 7u) * 4u)) & 15u; }

// Lane slot p (the order the group scans use) owns four-row group r * WG + p.
fn slot(g: Group) -> u32 { return g.id * g.size + g.lane; }

fn write_group(g: Group, wg: u32, r: u32, k0: u32) {
    let q = r * WG + slot(g);
    let nibble = nibble_of(q);
    if (nibble == 0u) { return; }
    let e = wg * TILE + 4u * q;
    let v = ids4(e, nibble);
    var k = k0;
    if ((nibble & 1u) != 0u) { scatter(k, v.x); k += 1u; }
    if ((nibble & 2u) != 0u) { scatter(k, v.y); k += 1u; }
    if ((nibble & 4u) != 0u) { scatter(k, v.z); k += 1u; }
    if ((nibble & 8u) != 0u) { scatter(k, v.w); }
}

fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }  // uniform per workgroup
    let tile = P.tile_base + wg;
    if (counts[tile] == 0u) { return; }  // nothing kept: skip the scans (uniform too)
    s_words[g.lid] = bits[tile * WG + g.lid];
    workgroupBarrier();
    var ca = vec4<u32>(0u);
    var cb = vec4<u32>(0u);
    for (var r = 0u; r < 4u; r++) {
        ca[r] = countOneBits(nibble_of(r * WG + slot(g)));
        cb[r] = countOneBits(nibble_of((r + 4u) * WG + slot(g)));
    }
    let sa = grp_scan4(g, vec4<u32>(0u), ca);
    let sb = grp_scan4(g, vec4<u32>(0u), cb);
    if (g.lane == 0u) {
        s_part_a[g.id] = sa.tot_v;
        s_part_b[g.id] = sb.tot_v;
    }
    workgroupBarrier();
    var pa = sa.ex_v;  // kept rows before this lane's group, per iteration
    var pb = sb.ex_v;
    var ta = vec4<u32>(0u);  // kept rows of the whole tile, per iteration
    var tb = vec4<u32>(0u);
    for (var k = 0u; k < g.count; k++) {
        if (k < g.id) {
            pa += s_part_a[k];
            pb += s_part_b[k];
        }
        ta += s_part_a[k];
        tb += s_part_b[k];
    }
    let base = offsets[tile];
    let r0 = base;
    let r1 = r0 + ta.x;
    let r2 = r1 + ta.y;
    let r3 = r2 + ta.z;
    let r4 = r3 + ta.w;
    let r5 = r4 + tb.x;
    let r6 = r5 + tb.y;
    let r7 = r6 + tb.z;
    write_group(g, wg, 0u, r0 + pa.x);
    write_group(g, wg, 1u, r1 + pa.y);
    write_group(g, wg, 2u, r2 + pa.z);
    write_group(g, wg, 3u, r3 + pa.w);
    write_group(g, wg, 4u, r4 + pb.x);
    write_group(g, wg, 5u, r5 + pb.y);
    write_group(g, wg, 6u, r6 + pb.z);
    write_group(g, wg, 7u, r7 + pb.w);
}
