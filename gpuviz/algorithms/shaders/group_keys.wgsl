// Keys of GPUGroupAggregation: dense uint32 group codes. A code >= KEYS is
// counted in the overflow word and never touches the output.

override OVERFLOW_OFFSET: u32 = 0u;  // element offset of the overflow view in its binding

@group(0) @binding(7) var<storage, read_write> overflow: array<atomic<u32>>;

var<workgroup> local_overflow: atomic<u32>;

fn key_setup() {}

fn row_key(row: u32) -> u32 {
    let code = keys[c.key_offset + row * c.key_stride];
    if (code >= KEYS) {
        atomicAdd(&local_overflow, 1u);
        return SKIP;
    }
    return code;
}

fn key_local_init(lid: u32) {
    if (lid == 0u) {
        atomicStore(&local_overflow, 0u);
    }
}

fn key_local_flush(lid: u32) {
    if (lid == 0u) {
        let n = atomicLoad(&local_overflow);
        if (n != 0u) {
            atomicAdd(&overflow[OVERFLOW_OFFSET], n);
        }
    }
}

fn key_clear() {
    atomicStore(&overflow[OVERFLOW_OFFSET], 0u);
}

{% include "algorithms/shaders/keyed_aggregation.wgsl" %}
