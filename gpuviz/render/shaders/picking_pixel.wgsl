// GPUIndexPickingTarget.add_pixel_pass: the (object, batch) IDs under one
// GPU-resident pixel position, copied into two uint32 words.
//
// Template value: batches (the target has a batch-ID attachment). Element
// offsets of the caller's views inside their bound ranges are overrides.
// A position outside the target reads as the empty pair (NO_ID, NO_ID); so
// does the batch word of a target without batch IDs.

override POSITION_OFF: u32 = 0u;
override OUTPUT_OFF: u32 = 0u;
const NO_ID: u32 = 0xffffffffu;

@group(0) @binding(0) var objects: texture_2d<u32>;
{% if batches %}
@group(0) @binding(1) var batches: texture_2d<u32>;
{% endif %}
@group(0) @binding(2) var<storage, read> position: array<u32>;
@group(0) @binding(3) var<storage, read_write> output: array<u32>;

@compute @workgroup_size(1)
fn main() {
    let dim = textureDimensions(objects);
    let p = vec2<u32>(position[POSITION_OFF], position[POSITION_OFF + 1u]);
    var ids = vec2<u32>(NO_ID, NO_ID);
    if (p.x < dim.x && p.y < dim.y) {
        ids.x = textureLoad(objects, p, 0).x;
{% if batches %}
        ids.y = textureLoad(batches, p, 0).x;
{% endif %}
    }
    output[OUTPUT_OFF] = ids.x;
    output[OUTPUT_OFF + 1u] = ids.y;
}
