// tests/render/test_raster.py: every macro of render/shaders/raster.wgsl
// over items (pixel, key, id, run) and their float depths.
{% import "render/shaders/raster.wgsl" as raster %}

struct Params {
    items: u32,
    pixels: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> items: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> item_depths: array<f32>;
@group(0) @binding(3) var<storage, read_write> words: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> depths: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> hits: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> resolved: array<vec4<u32>>;  // (empty, key, id, hit id)

{{ raster.packed_format("packed", key_bits) }}
{{ raster.packed_target("words") }}
{{ raster.depth_target("depths", "hits") }}

@compute @workgroup_size(64)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.pixels) {
        words_clear(gid.x);
        depths_clear(gid.x);
    }
}

@compute @workgroup_size(64)
fn splat(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.items) {
        return;
    }
    let item = items[gid.x];
    let word = packed_word(item.y, item.z);
    if (item.w == 1u) {
        words_splat(item.x, word);
    } else {
        words_splat_run(item.x, item.w, word);
    }
    depths_test(item.x, raster_depth_bits(item_depths[gid.x]));
}

@compute @workgroup_size(64)
fn hit(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.items) {
        depths_hit(items[gid.x].x, raster_depth_bits(item_depths[gid.x]), items[gid.x].z);
    }
}

@compute @workgroup_size(64)
fn resolve(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= params.pixels) {
        return;
    }
    let word = atomicLoad(&words[gid.x]);
    let hit = atomicLoad(&hits[gid.x]);
    let far = atomicLoad(&depths[gid.x]) == RASTER_FAR;
    resolved[gid.x] = vec4<u32>(select(0u, 1u, packed_empty(word)), select(packed_key(word), 0u, packed_empty(word)),
                                select(packed_id(word), 0xffffffffu, packed_empty(word)),
                                select(raster_hit_id(hit), 0xffffffffu, raster_hit_empty(hit) || far));
}
