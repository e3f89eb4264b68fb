// Workgroup reduction through a workgroup-memory tree.
struct Lanes {
    lid: u32,
}

var<workgroup> red_part: array<vec2<u32>, 256>;

// The workgroup's reduction of v (valid in lane 0).
fn wg_reduce(l: Lanes, v: vec2<T>) -> vec2<T> {
    red_part[l.lid] = bitcast<vec2<u32>>(v);
    workgroupBarrier();
    for (var d = 128u; d > 0u; d = d >> 1u) {
        if (l.lid < d) {
            red_part[l.lid] = bitcast<vec2<u32>>(merge(bitcast<vec2<T>>(red_part[l.lid]),
                                                       bitcast<vec2<T>>(red_part[l.lid + d])));
        }
        workgroupBarrier();
    }
    return bitcast<vec2<T>>(red_part[0]);
}

@compute @workgroup_size(256)
fn blocks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    blocks_main(Lanes(lid), wid.x + wid.y * nwg.x);
}

@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32) {
    final_main(Lanes(lid));
}

@compute @workgroup_size(256)
fn single(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    single_main(Lanes(lid), wid.x + wid.y * nwg.x);
}
