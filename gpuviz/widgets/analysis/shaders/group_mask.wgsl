// DataAnalysis: the per-row mask of the group selection. Row i is kept
// (mask 1) when its group code is enabled in the table; codes past the last
// group (null groups) read the table's last word, which the widget keeps at 1.
// One record batch per dispatch; 2-D tiling as the interleave kernel.

struct Chunk {
    rows: u32,
    code_offset: u32,
    mask_offset: u32,
    last: u32,  // index of the table's last word (the group count)
}

@group(0) @binding(0) var<uniform> chunk: Chunk;
@group(0) @binding(1) var<storage, read> codes: array<u32>;
@group(0) @binding(2) var<storage, read> enabled: array<u32>;
@group(0) @binding(3) var<storage, read_write> mask: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (row >= chunk.rows) {
        return;
    }
    mask[chunk.mask_offset + row] = enabled[min(codes[chunk.code_offset + row], chunk.last)];
}
