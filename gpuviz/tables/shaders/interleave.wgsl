// GPUInterleave (tables/interleave.py): row i of the output is (x[i], y[i]),
// two 4-byte columns into one two-component vector, words copied bit for bit.
// One chunk per dispatch; the uniform holds the chunk's row count and the
// element offsets of the x, y and output views inside their bindings.
// Dispatches wider than the per-dimension limit are tiled in 2-D.

struct Chunk {
    rows: u32,
    x_offset: u32,
    y_offset: u32,
    p_offset: u32,
}

@group(0) @binding(0) var<uniform> chunk: Chunk;
@group(0) @binding(1) var<storage, read> xs: array<u32>;
@group(0) @binding(2) var<storage, read> ys: array<u32>;
@group(0) @binding(3) var<storage, read_write> positions: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (row >= chunk.rows) {
        return;
    }
    let p = chunk.p_offset + 2u * row;
    positions[p] = xs[chunk.x_offset + row];
    positions[p + 1u] = ys[chunk.y_offset + row];
}
