// Group primitives on hardware subgroups: a "group" is one subgroup.
//
// Included by the kernel templates (scan.wgsl, range_compaction.wgsl), which
// define `kernel_main(g, wg)` and the override constant SEGMENTED. Lane order inside a workgroup is taken as
// (subgroup_id, subgroup_invocation_id), which enumerates 0..255 exactly once
// when subgroups are full (Vulkan compute with a workgroup size that is a
// multiple of the subgroup size).

struct Group {
    lid: u32,    // local_invocation_index
    lane: u32,   // lane inside the group
    size: u32,   // lanes per group
    id: u32,     // group index inside the workgroup
    count: u32,  // groups per workgroup
}

struct Scan4 {
    ex_h: vec4<u32>,   // exclusive (segment-start, sum) pair of the lanes before this one
    ex_v: vec4<u32>,
    tot_h: vec4<u32>,  // the group's total pair
    tot_v: vec4<u32>,
}

// Four independent scans (one per component) of (head, value) pairs across
// the group's lanes. Unsegmented scans ignore h.
fn grp_scan4(g: Group, h: vec4<u32>, v: vec4<u32>) -> Scan4 {
    var out: Scan4;
    if (SEGMENTED) {
        var ih = h;
        var iv = v;
        for (var d = 1u; d < g.size; d = d << 1u) {
            let uh = subgroupShuffleUp(ih, d);
            let uv = subgroupShuffleUp(iv, d);
            if (g.lane >= d) {
                iv = select(uv + iv, iv, ih != vec4<u32>(0u));
                ih = ih | uh;
            }
        }
        let eh = subgroupShuffleUp(ih, 1u);
        let ev = subgroupShuffleUp(iv, 1u);
        let first = g.lane == 0u;
        out.ex_h = select(eh, vec4<u32>(0u), first);
        out.ex_v = select(ev, vec4<u32>(0u), first);
        out.tot_h = subgroupShuffle(ih, g.size - 1u);
        out.tot_v = subgroupShuffle(iv, g.size - 1u);
    } else {
        let inc = subgroupInclusiveAdd(v);
        out.ex_h = vec4<u32>(0u);
        out.ex_v = inc - v;
        out.tot_h = vec4<u32>(0u);
        out.tot_v = subgroupShuffle(inc, g.size - 1u);
    }
    return out;
}

// Collectives over one group's lanes (the look-back run by one subgroup).
const GROUP_COLLECTIVES: bool = true;
fn grp_min(v: u32) -> u32 { return subgroupMin(v); }
fn grp_add(v: u32) -> u32 { return subgroupAdd(v); }

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) size: u32,
        @builtin(subgroup_id) sid: u32,
        @builtin(num_subgroups) count: u32) {
    kernel_main(Group(lid, lane, size, sid, count), wid.x + wid.y * nwg.x);
}
