// DataAnalysis: the heatmap grid of the current operation, from the count,
// sum, min and max grids computed every encoding. Empty cells (count 0) are
// NaN for every operation; mean = sum / count. Switching the operation is a
// write of view.op, not a recompilation.

{% include "widgets/analysis/shaders/view.wgsl" %}

override CELLS: u32 = 1u;

@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> sums: array<f32>;
@group(0) @binding(3) var<storage, read> mins: array<f32>;
@group(0) @binding(4) var<storage, read> maxs: array<f32>;
@group(0) @binding(5) var<storage, read_write> display: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (i >= CELLS) {
        return;
    }
    let n = counts[i];
    var v = 0.0;
    switch view.op {
        case 0u: { v = f32(n); }
        case 1u: { v = sums[i]; }
        case 2u: { v = sums[i] / f32(max(n, 1u)); }
        case 3u: { v = mins[i]; }
        default: { v = maxs[i]; }
    }
    display[i] = select(NAN_BITS, bitcast<u32>(v), n > 0u);
}
