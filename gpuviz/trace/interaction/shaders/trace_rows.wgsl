// GPUTraceInteraction "{id}-rows": each thread's first layout row, by thread row.
// GPUHierarchyLayout gave row offsets per display slot; a thread of a
// collapsed process takes its process's summary row (its first slot's).

override THREADS: u32;

struct ThreadInfo {
    slot: u32,        // display slot of the thread
    process: u32,     // its process row
    first_slot: u32,  // display slot of its process's first thread
    pad: u32,
}

@group(0) @binding(0) var<storage, read> info: array<ThreadInfo>;
@group(0) @binding(1) var<storage, read> process_states: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> thread_rows: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if (t >= THREADS) {
        return;
    }
    let i = info[t];
    let collapsed = process_states[i.process] == 0u;
    thread_rows[t] = offsets[select(i.slot, i.first_slot, collapsed)];
}
