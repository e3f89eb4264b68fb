// GPUGridStatistic (algorithms/grid_statistic.py): one statistic per cell
// of a w x h grid, from the count, sum, min and max grids GPUGridBinning and
// GPUGridAggregation computed, plus the row count behind every cell. Empty
// cells (count 0) are NaN for every statistic; mean = sum / count. The
// statistic is a uniform word: switching it is a buffer write, not a
// recompilation.
//
// Output cell (i, j) shows source cell floor(offset + (i + 0.5) * scale) per
// axis: offset 0 and scale 1 is the same cell; a caller whose source cells
// hold one whole number each (an integer axis) samples the one under each
// output cell's centre. A sample outside the source grid is an empty cell.

override CELLS: u32 = 1u;
override GRID_W: u32 = 1u;
override GRID_H: u32 = 1u;

struct Params {
    offset: vec2<f32>,
    scale: vec2<f32>,
    op: u32,  // 0 count, 1 sum, 2 mean, 3 min, 4 max
    inputs: vec4<u32>,   // element offsets of counts, sums, mins, maxs in their bindings
    outputs: vec2<u32>,  // ... of the output and the output counts
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> sums: array<f32>;
@group(0) @binding(3) var<storage, read> mins: array<f32>;
@group(0) @binding(4) var<storage, read> maxs: array<f32>;
@group(0) @binding(5) var<storage, read_write> display: array<u32>;
{% if output_counts %}
@group(0) @binding(6) var<storage, read_write> display_counts: array<u32>;
{% endif %}

const NAN_BITS: u32 = 0x7fc00000u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (i >= CELLS) {
        return;
    }
    let centre = vec2<f32>(f32(i % GRID_W), f32(i / GRID_W)) + 0.5;
    let src = floor(params.offset + centre * params.scale);
    let size = vec2<f32>(f32(GRID_W), f32(GRID_H));
    let out = params.outputs.x + i;
    if (any(src < vec2<f32>(0.0)) || any(src >= size)) {
        display[out] = NAN_BITS;
{% if output_counts %}
        display_counts[params.outputs.y + i] = 0u;
{% endif %}
        return;
    }
    let k = u32(src.y) * GRID_W + u32(src.x);
    let n = counts[params.inputs.x + k];
    var v = 0.0;
    switch params.op {
        case 0u: { v = f32(n); }
        case 1u: { v = sums[params.inputs.y + k]; }
        case 2u: { v = sums[params.inputs.y + k] / f32(max(n, 1u)); }
        case 3u: { v = mins[params.inputs.z + k]; }
        default: { v = maxs[params.inputs.w + k]; }
    }
    display[out] = select(NAN_BITS, bitcast<u32>(v), n > 0u);
{% if output_counts %}
    display_counts[params.outputs.y + i] = n;
{% endif %}
}
