// Group primitives without subgroups: the "group" is the whole 256-lane
// workgroup and scans run through workgroup memory (Hillis-Steele).
//
// Included by the kernel templates (scan.wgsl, range_compaction.wgsl), which
// define `kernel_main(g, wg)` and the override constant SEGMENTED.

struct Group {
    lid: u32,
    lane: u32,
    size: u32,
    id: u32,
    count: u32,
}

struct Scan4 {
    ex_h: vec4<u32>,
    ex_v: vec4<u32>,
    tot_h: vec4<u32>,
    tot_v: vec4<u32>,
}

var<workgroup> grp_h: array<vec4<u32>, 256>;
var<workgroup> grp_v: array<vec4<u32>, 256>;

fn grp_scan4(g: Group, h: vec4<u32>, v: vec4<u32>) -> Scan4 {
    var ih = h;
    var iv = v;
    for (var d = 1u; d < 256u; d = d << 1u) {
        grp_v[g.lane] = iv;
        if (SEGMENTED) { grp_h[g.lane] = ih; }
        workgroupBarrier();
        if (g.lane >= d) {
            let uv = grp_v[g.lane - d];
            if (SEGMENTED) {
                iv = select(uv + iv, iv, ih != vec4<u32>(0u));
                ih = ih | grp_h[g.lane - d];
            } else {
                iv = uv + iv;
            }
        }
        workgroupBarrier();
    }
    grp_v[g.lane] = iv;
    grp_h[g.lane] = ih;
    workgroupBarrier();
    var out: Scan4;
    out.ex_h = vec4<u32>(0u);
    out.ex_v = vec4<u32>(0u);
    if (g.lane > 0u) {
        out.ex_h = grp_h[g.lane - 1u];
        out.ex_v = grp_v[g.lane - 1u];
    }
    out.tot_h = grp_h[255];
    out.tot_v = grp_v[255];
    workgroupBarrier();
    if (!SEGMENTED) {
        out.ex_h = vec4<u32>(0u);
        out.tot_h = vec4<u32>(0u);
    }
    return out;
}

// No collectives across a group's lanes here: the look-back keeps its
// workgroup-memory loop (these are never called).
const GROUP_COLLECTIVES: bool = false;
fn grp_min(v: u32) -> u32 { return v; }
fn grp_add(v: u32) -> u32 { return v; }

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    kernel_main(Group(lid, lid, 256u, 0u, 1u), wid.x + wid.y * nwg.x);
}
