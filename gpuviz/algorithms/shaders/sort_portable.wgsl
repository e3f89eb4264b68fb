// Portable variant of the radix scatter (included at the end of
// sort_radix.wgsl): no subgroup operations (the sg_* wrappers are never
// called because the subgroup size passed is 0).

fn sg_inclusive_add(v: u32) -> u32 { return v; }
fn sg_ballot(b: bool) -> vec4<u32> { return vec4<u32>(select(0u, 1u, b)); }
fn sg_shuffle(v: u32, lane: u32) -> u32 { return v; }
fn sg_max(v: u32) -> u32 { return v; }  // every invocation is its own "lane 0"

@compute @workgroup_size(256)
fn scatter(@builtin(local_invocation_index) lid: u32) {
    scatter_tile(lid, 0u, 0u);
}
