// Write-pattern kernels (bench write-patterns): the stores of
// GPUVisibilityWorkflow's ID writes without anything else around them.
//   rows:  lane t writes row t's ID when bit t is set, at the kept rows
//          before its word (`before`) plus the set bits below it in the word:
//          a warp's kept rows land on consecutive output words (the
//          workflow's pattern, one row per lane).
//   dense: the same number of IDs written by consecutive lanes, out[k] = k.
override ROWS: u32;  // rows (bits)
override KEPT: u32;  // set bits

@group(0) @binding(0) var<storage, read> bits: array<u32>;
@group(0) @binding(1) var<storage, read> before: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = (wid.x + wid.y * nwg.x) * 256u + lid;
{% if mode == "rows" %}
    if (t >= ROWS) { return; }
    let w = bits[t >> 5u];
    let b = t & 31u;
    if (((w >> b) & 1u) != 0u) { out[before[t >> 5u] + countOneBits(w & ((1u << b) - 1u))] = t; }
{% else %}
    if (t >= KEPT) { return; }
    out[t] = t + (bits[0] & 0u) + (before[0] & 0u);  // (every binding used: one layout for both kernels)
{% endif %}
}
