// GPUIndexPickingTarget.add_region_pass: one (object, batch) pair per
// covered pixel of a GPU-resident rectangle, appended into caller-sized
// storage.
//
// Entry point `setup` (one invocation) clamps the caller's rect (x0, y0,
// x1, y1; half-open) to the target, stores it in `clamped`, writes the
// indirect dispatch record of `append` (16x16 pixels per workgroup) and
// zeroes count and overflow. `append` loads each pixel of the clamped rect;
// a pixel whose object ID is not NO_ID takes a slot with one atomicAdd on
// count, and writes its pair when the slot is below CAPACITY, otherwise
// raises overflow. So count ends as the number of covered pixels, even past
// capacity, and nothing is written past capacity. Append order is whatever
// the atomics give.
//
// Template values: batches (the target has batch IDs), batch_output (the
// caller gave output_batches). Element offsets of the caller's views are
// overrides.

override RECT_OFF: u32 = 0u;
override COUNT_OFF: u32 = 0u;
override OVERFLOW_OFF: u32 = 0u;
override IDS_OFF: u32 = 0u;
override BATCHES_OFF: u32 = 0u;
override CAPACITY: u32 = 0u;
const NO_ID: u32 = 0xffffffffu;
const SIDE: u32 = 16u;

@group(0) @binding(0) var objects: texture_2d<u32>;
{% if batches %}
@group(0) @binding(1) var batches: texture_2d<u32>;
{% endif %}
@group(0) @binding(2) var<storage, read> rect: array<u32>;
@group(0) @binding(3) var<storage, read_write> clamped: array<u32>;
@group(0) @binding(4) var<storage, read_write> args: array<u32>;
@group(0) @binding(5) var<storage, read_write> count: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> overflow: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> out_ids: array<u32>;
{% if batch_output %}
@group(0) @binding(8) var<storage, read_write> out_batches: array<u32>;
{% endif %}
@group(0) @binding(9) var<storage, read> bounds: array<u32>;

@compute @workgroup_size(1)
fn setup() {
    let dim = textureDimensions(objects);
    let x0 = min(rect[RECT_OFF], dim.x);
    let y0 = min(rect[RECT_OFF + 1u], dim.y);
    let x1 = clamp(rect[RECT_OFF + 2u], x0, dim.x);
    let y1 = clamp(rect[RECT_OFF + 3u], y0, dim.y);
    clamped[0] = x0;
    clamped[1] = y0;
    clamped[2] = x1;
    clamped[3] = y1;
    let gx = (x1 - x0 + SIDE - 1u) / SIDE;
    let gy = (y1 - y0 + SIDE - 1u) / SIDE;
    let empty = gx == 0u || gy == 0u;
    args[0] = select(gx, 0u, empty);
    args[1] = select(gy, 0u, empty);
    args[2] = 1u;
    atomicStore(&count[COUNT_OFF], 0u);
    atomicStore(&overflow[OVERFLOW_OFF], 0u);
}

@compute @workgroup_size(16, 16)
fn append(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = vec2<u32>(bounds[0] + gid.x, bounds[1] + gid.y);
    if (p.x >= bounds[2] || p.y >= bounds[3]) { return; }
    let object = textureLoad(objects, p, 0).x;
    if (object == NO_ID) { return; }
    let k = atomicAdd(&count[COUNT_OFF], 1u);
    if (k >= CAPACITY) {
        atomicStore(&overflow[OVERFLOW_OFF], 1u);
        return;
    }
    out_ids[IDS_OFF + k] = object;
{% if batch_output %}
{% if batches %}
    out_batches[BATCHES_OFF + k] = textureLoad(batches, p, 0).x;
{% else %}
    out_batches[BATCHES_OFF + k] = NO_ID;
{% endif %}
{% endif %}
}
