// What the grid kernels share: the grid record every kernel's uniform starts
// with, finiteness by bits (a compiler may assume f32 arithmetic never meets
// NaN or inf, so comparisons alone cannot be trusted to reject them), and the
// cell function. See gpuviz/spatial/grid.py for the contract and
// gpuviz/oracles/spatial.py for the same function in numpy.
//
// Template values: dims (2 or 3).

const DIMS: u32 = {{ dims }}u;

struct Grid {
    lo: vec4<f32>,      // domain minimum per axis (unused axes 0)
    hi: vec4<f32>,      // domain maximum per axis
    scale: vec4<f32>,   // float32(cells / (hi - lo)) per axis
    cells: vec4<u32>,   // cells per axis (unused axes 1), then the total
}

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// The cell of coordinate x (lo <= x <= hi) on axis k: floor((x - lo) * scale)
// in float32, clamped to the last cell (so x == hi lands there). Monotone in
// x, which is what makes a query's cell range conservative.
fn axis_cell(g: Grid, x: f32, k: u32) -> u32 {
    let c = floor((x - g.lo[k]) * g.scale[k]);
    return min(u32(max(c, 0.0)), g.cells[k] - 1u);
}

fn linear_cell(g: Grid, c: vec3<u32>) -> u32 {
    return c.x + g.cells.x * (c.y + g.cells.y * c.z);
}
