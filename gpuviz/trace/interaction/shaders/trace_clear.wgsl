// GPUTraceInteraction "{id}-clear": zero the per-frame accumulators before the
// predicate: cells (occupancy and density), stats, and the
// MERGED / DENSITY / EDGES instance counts the merge and edge passes append to.

override CELLS: u32;         // words of cells (2 * row capacity * width capacity)
override STATS_WORDS: u32;
override MERGED_WORD: u32;   // instance_count word of record MERGED in draw_commands
override DENSITY_WORD: u32;  // instance_count word of record DENSITY
override EDGES_WORD: u32;    // instance_count word of record EDGES

@group(0) @binding(0) var<storage, read_write> cells: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> stats: array<u32>;
@group(0) @binding(3) var<storage, read_write> commands: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i < CELLS / 4u) {
        cells[i] = vec4<u32>(0u);
    }
    if (i < STATS_WORDS) {
        stats[i] = 0u;
    }
    if (i == 0u) {
        commands[MERGED_WORD] = 0u;
        commands[DENSITY_WORD] = 0u;
        commands[EDGES_WORD] = 0u;
    }
}
