// GPUGroupFilter (algorithms/group_filter.py): row i keeps its value when
// its group code is enabled in the table and becomes NaN otherwise; NaN
// never passes a value-range filter, so every aggregation that reads these
// values as its filter values drops the row (no per-row mask to read).
// Codes at or past the table's last word (null groups) read that word.
// One chunk per dispatch; dispatches wider than the per-dimension limit
// are tiled in 2-D.

struct Chunk {
    rows: u32,
    value_offset: u32,
    code_offset: u32,
    out_offset: u32,
    last: u32,  // index of the table's last word (the group count)
    enabled_offset: u32,
}

@group(0) @binding(0) var<uniform> chunk: Chunk;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> codes: array<u32>;
@group(0) @binding(3) var<storage, read> enabled: array<u32>;
@group(0) @binding(4) var<storage, read_write> filtered: array<u32>;

const NAN_BITS: u32 = 0x7fc00000u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (row >= chunk.rows) {
        return;
    }
    let keep = enabled[chunk.enabled_offset + min(codes[chunk.code_offset + row], chunk.last)] != 0u;
    filtered[chunk.out_offset + row] = select(NAN_BITS, values[chunk.value_offset + row], keep);
}
