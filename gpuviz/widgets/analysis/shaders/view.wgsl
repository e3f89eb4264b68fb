// DataAnalysis: the per-frame view parameters of the render node (one small
// uniform buffer, rewritten with queue.write_buffer before each encoding;
// never a recompilation).

struct View {
    grid_size: vec2<u32>,  // cells per row, rows
    op: u32,               // 0 count, 1 sum, 2 mean, 3 min, 4 max
    bins: u32,             // histogram bins shown (<= compiled max_bins)
    groups: u32,           // group bars
    _pad0: u32,
    hist_px: vec2<f32>,    // NDC size of one logical pixel (pixel-ratio physical ones) in the histogram plot
    panel: vec4<f32>,      // panel background colour
    empty: vec4<f32>,      // colour of empty heatmap cells
    background: vec4<f32>, // colour between panels
}

@group(0) @binding(0) var<uniform> view: View;

const NAN_BITS: u32 = 0x7fc00000u;

fn is_finite_bits(bits: u32) -> bool {
    return (bits & 0x7f800000u) != 0x7f800000u;
}
