// GPUGather (algorithms/gather.py): output[i] = table[indices[i]] when the
// index is inside the table, else the fill word (a not-found sentinel, or
// any index past the end). Words are copied as bits, so one pipeline serves
// uint32, sint32 and float32 tables. One chunk per dispatch; dispatches
// wider than the per-dimension limit are tiled in 2-D.

struct Chunk {
    rows: u32,
    index_offset: u32,
    out_offset: u32,
    table_offset: u32,
    table_rows: u32,
    fill: u32,  // the fill word's bits
}

@group(0) @binding(0) var<uniform> chunk: Chunk;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read_write> output: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (row >= chunk.rows) {
        return;
    }
    let index = indices[chunk.index_offset + row];
    var word = chunk.fill;
    if (index < chunk.table_rows) {
        word = table[chunk.table_offset + index];
    }
    output[chunk.out_offset + row] = word;
}
