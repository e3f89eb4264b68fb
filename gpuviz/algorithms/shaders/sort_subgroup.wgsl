// Subgroup variant of the radix scatter (included at the end of sort_radix.wgsl
// when the device has the "subgroup" feature; no `enable` directive: Naga rejects it).

fn sg_inclusive_add(v: u32) -> u32 { return subgroupInclusiveAdd(v); }
fn sg_ballot(b: bool) -> vec4<u32> { return subgroupBallot(b); }
fn sg_shuffle(v: u32, lane: u32) -> u32 { return subgroupShuffle(v, lane); }
fn sg_max(v: u32) -> u32 { return subgroupMax(v); }

@compute @workgroup_size(256)
fn scatter(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_size) sg_size: u32,
           @builtin(subgroup_invocation_id) lane: u32) {
    scatter_tile(lid, sg_size, lane);
}
