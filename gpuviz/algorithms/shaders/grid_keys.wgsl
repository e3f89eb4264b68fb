// Keys of GPUGridBinning / GPUGridAggregation: the row-major cell
// (cy * GRID_W + cx) of a float32x2 position inside bounds
// aux = (xmin, ymin, xmax, ymax), followed with TABLE by the GRID_W + 1
// column and GRID_H + 1 row edges rounded up to float32, against which the
// float32 estimate is corrected (exact whatever the division accuracy).
// Cells are [min + i * w / n, min + (i+1) * w / n);
// the maximum coordinate belongs to the last column / row. Non-finite and
// out-of-bounds positions are skipped; invalid bounds (non-finite, min > max,
// infinite extent) skip every row. A degenerate axis (min == max) maps
// matching coordinates to column / row 0.

override GRID_W: u32 = 1u;
override AUX_OFFSET: u32 = 0u;    // element offset of the bounds in aux
override TABLE: bool = false;     // edge tables follow the bounds in aux

@group(0) @binding(7) var<storage, read> aux: array<f32>;

var<private> bmin: vec2<f32>;
var<private> bmax: vec2<f32>;
var<private> extent: vec2<f32>;
var<private> valid: bool;

fn key_setup() {
    bmin = vec2<f32>(aux[AUX_OFFSET], aux[AUX_OFFSET + 1u]);
    bmax = vec2<f32>(aux[AUX_OFFSET + 2u], aux[AUX_OFFSET + 3u]);
    extent = bmax - bmin;
    valid = finite(bmin.x) && finite(bmin.y) && finite(bmax.x) && finite(bmax.y) && finite(extent.x)
        && finite(extent.y) && bmin.x <= bmax.x && bmin.y <= bmax.y;
}

fn axis_cell(v: f32, lo: f32, e: f32, n: u32, table: u32) -> u32 {
    if (e <= 0.0) {
        return 0u;
    }
    var b = min(u32((v - lo) / e * f32(n)), n - 1u);
    if (TABLE) {
        loop {
            if (b > 0u && v < aux[table + b]) { b -= 1u; } else { break; }
        }
        loop {
            if (b + 1u < n && v >= aux[table + b + 1u]) { b += 1u; } else { break; }
        }
    }
    return b;
}

fn row_key(row: u32) -> u32 {
    let p = c.key_offset + row * c.key_stride;
    let x = bitcast<f32>(keys[p]);
    let y = bitcast<f32>(keys[p + 1u]);
    if (!valid || !finite(x) || !finite(y) || x < bmin.x || x > bmax.x || y < bmin.y || y > bmax.y) {
        return SKIP;
    }
    let grid_h = KEYS / GRID_W;
    let cy = axis_cell(y, bmin.y, extent.y, grid_h, AUX_OFFSET + 5u + GRID_W);
    return cy * GRID_W + axis_cell(x, bmin.x, extent.x, GRID_W, AUX_OFFSET + 4u);
}

fn key_local_init(lid: u32) {}
fn key_local_flush(lid: u32) {}
fn key_clear() {}

{% include "algorithms/shaders/keyed_aggregation.wgsl" %}
