// The scene's span records in up to 4 chunks (GPUTraceScene.record_chunks,
// each one binding; every chunk but the last holds CHUNK_ROWS records), so
// scenes past one storage binding (100M spans) draw too. Include after
// trace_span.wgsl with {{ records_bindings }} (4 binding numbers) and
// {{ chunk_rows }} given.
const CHUNK_ROWS: u32 = {{ chunk_rows }}u;
@group(0) @binding({{ records_bindings[0] }}) var<storage, read> records0: array<TraceSpan>;
@group(0) @binding({{ records_bindings[1] }}) var<storage, read> records1: array<TraceSpan>;
@group(0) @binding({{ records_bindings[2] }}) var<storage, read> records2: array<TraceSpan>;
@group(0) @binding({{ records_bindings[3] }}) var<storage, read> records3: array<TraceSpan>;

fn span_record(row: u32) -> TraceSpan {
    let chunk = row / CHUNK_ROWS;
    let r = row - chunk * CHUNK_ROWS;
    if (chunk == 0u) {
        return records0[r];
    }
    if (chunk == 1u) {
        return records1[r];
    }
    if (chunk == 2u) {
        return records2[r];
    }
    return records3[r];
}
