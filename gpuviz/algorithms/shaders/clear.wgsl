// Zero uint32 words of a storage range: WORDS words from element OFF, or with
// the defaults the whole bound range (so one pipeline serves every size).
override OFF: u32 = 0u;
override WORDS: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read_write> words: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < min(WORDS, arrayLength(&words) - OFF)) {
        words[OFF + i] = 0u;
    }
}
