// Workgroup reduction through subgroup collectives, then workgroup memory.
struct Lanes {
    lid: u32,
    lane: u32,
    sid: u32,
    count: u32,
}

var<workgroup> red_part: array<vec2<u32>, 256>;

fn sg_reduce(v: vec2<T>) -> vec2<T> {
    switch OP {
        case 0u: { return subgroupAdd(v); }
        case 1u: { return subgroupMin(v); }
        case 2u: { return subgroupMax(v); }
        default: { return vec2<T>(subgroupMin(v.x), subgroupMax(v.y)); }
    }
}

// The workgroup's reduction of v (valid in lane 0).
fn wg_reduce(l: Lanes, v: vec2<T>) -> vec2<T> {
    let s = sg_reduce(v);
    if (l.lane == 0u) { red_part[l.sid] = bitcast<vec2<u32>>(s); }
    workgroupBarrier();
    var r = identity();
    if (l.lid == 0u) {
        for (var k = 0u; k < l.count; k++) { r = merge(r, bitcast<vec2<T>>(red_part[k])); }
    }
    return r;
}

@compute @workgroup_size(256)
fn blocks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>, @builtin(subgroup_invocation_id) lane: u32,
          @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) count: u32) {
    blocks_main(Lanes(lid, lane, sid, count), wid.x + wid.y * nwg.x);
}

@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32,
         @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) count: u32) {
    final_main(Lanes(lid, lane, sid, count));
}

@compute @workgroup_size(256)
fn single(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>, @builtin(subgroup_invocation_id) lane: u32,
          @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) count: u32) {
    single_main(Lanes(lid, lane, sid, count), wid.x + wid.y * nwg.x);
}
