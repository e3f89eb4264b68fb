// GPUHistogram's validation pass for GPU-resident edges: one workgroup writes
// state[0] = 1 when all EDGE_COUNT edges are finite and strictly increasing,
// else 0 (the counting kernel then skips every row: zero counts).

override EDGE_COUNT: u32 = 2u;
override AUX_OFFSET: u32 = 0u;

@group(0) @binding(0) var<storage, read> edges: array<f32>;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;

var<workgroup> bad: atomic<u32>;

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(256)
fn validate(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        atomicStore(&bad, 0u);
    }
    workgroupBarrier();
    for (var i = lid; i < EDGE_COUNT; i += 256u) {
        let e = edges[AUX_OFFSET + i];
        var ok = finite(e);
        if (i + 1u < EDGE_COUNT) {
            ok = ok && e < edges[AUX_OFFSET + i + 1u];
        }
        if (!ok) {
            atomicStore(&bad, 1u);
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        state[0] = 1u - atomicLoad(&bad);
    }
}
