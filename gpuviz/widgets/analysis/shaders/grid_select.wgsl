// DataAnalysis: the displayed heatmap grid of the current operation, from
// the count, sum, min and max grids computed every encoding, and the row
// count behind every displayed cell (hover tooltips, results()). Empty cells
// (count 0) are NaN for every operation; mean = sum / count. Switching the
// operation is a write of view.op, not a recompilation.
//
// Displayed cell (i, j) shows binned cell (floor(offset + (i + 0.5) * scale))
// per axis: offset 0 and scale 1 on a linear axis (the same cell); on an
// integer axis the binned cells hold one whole number each and every
// displayed cell samples the one under its centre (no empty stripes).
// A sample outside the binned grid is an empty cell.

{% include "widgets/analysis/shaders/view.wgsl" %}

override CELLS: u32 = 1u;
override GRID_W: u32 = 1u;
override GRID_H: u32 = 1u;

struct Cells {
    offset: vec2<f32>,
    scale: vec2<f32>,
}

@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> sums: array<f32>;
@group(0) @binding(3) var<storage, read> mins: array<f32>;
@group(0) @binding(4) var<storage, read> maxs: array<f32>;
@group(0) @binding(5) var<storage, read_write> display: array<u32>;
@group(0) @binding(6) var<uniform> cells: Cells;
@group(0) @binding(7) var<storage, read_write> display_counts: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (i >= CELLS) {
        return;
    }
    let centre = vec2<f32>(f32(i % GRID_W), f32(i / GRID_W)) + 0.5;
    let src = floor(cells.offset + centre * cells.scale);
    let size = vec2<f32>(f32(GRID_W), f32(GRID_H));
    if (any(src < vec2<f32>(0.0)) || any(src >= size)) {
        display[i] = NAN_BITS;
        display_counts[i] = 0u;
        return;
    }
    let k = u32(src.y) * GRID_W + u32(src.x);
    let n = counts[k];
    var v = 0.0;
    switch view.op {
        case 0u: { v = f32(n); }
        case 1u: { v = sums[k]; }
        case 2u: { v = sums[k] / f32(max(n, 1u)); }
        case 3u: { v = mins[k]; }
        default: { v = maxs[k]; }
    }
    display[i] = select(NAN_BITS, bitcast<u32>(v), n > 0u);
    display_counts[i] = n;
}
