{# Compute rasterisation: pixels (or cells) written by compute instead of the
   rasteriser, for any consumer whose items are too many and too small for
   one primitive each (TraceViewer's tracks, FrustumCulling's splats).
   Imported as {% import "render/shaders/raster.wgsl" as raster %}; the
   consumer declares its target arrays and keeps its own policy (which
   items, which pixels, what a key means, how a pixel is coloured).

   Packed target: one u32 word per pixel, cleared to 0 (empty). A splat is
   atomicMax(word, (key << (32 - key_bits)) | (id + 1)): the highest key
   wins (a priority, or a depth written so that nearer is larger), among
   equal keys the highest ID (the later item in draw order, as instanced
   primitives overdraw). Any order of splats leaves the same words. IDs
   are below 2^(32 - key_bits) - 1.

     packed_format(prefix, key_bits)  prefix_word(key, id) -> u32, and for
         the resolve prefix_empty(word), prefix_key(word), prefix_id(word)
     packed_target(name)  over `name: array<atomic<u32>>`: name_clear(pixel),
         name_splat(pixel, word), name_splat_run(first, count, word)

   Depth target: two u32 per pixel, depth bits and id + 1, for a depth too
   fine to share a word with the ID. Splats run in two passes over the
   same items: name_test keeps the nearest depth (atomicMin of the bits of
   a depth >= 0, which order as the floats do), then name_hit gives the
   pixel the highest ID among the items at that depth.

     depth_target(name, ids)  over `name` (depth bits) and `ids` (both
         array<atomic<u32>>): name_clear(pixel), name_test(pixel, bits),
         name_hit(pixel, bits, id), and depth_format()'s helpers
     depth_format()  RASTER_FAR (the bits of an empty pixel, behind
         everything), raster_depth_bits(depth), and for the resolve
         raster_depth(bits), raster_hit_empty(hit), raster_hit_id(hit)

   See gpuviz/render/raster.py for the formats in Python and their oracle. #}
{% macro packed_format(prefix, key_bits) %}
{% if not (1 <= key_bits <= 31) %}{{ error("raster.packed_format: key_bits must be 1..31, got " ~ key_bits) }}{% endif %}
const {{ prefix | upper }}_ID_BITS: u32 = {{ 32 - key_bits }}u;
const {{ prefix | upper }}_ID_MASK: u32 = {{ "0x%08xu" | format(2 ** (32 - key_bits) - 1) }};
fn {{ prefix }}_word(key: u32, id: u32) -> u32 { return (key << {{ prefix | upper }}_ID_BITS) | (id + 1u); }
fn {{ prefix }}_empty(word: u32) -> bool { return word == 0u; }
fn {{ prefix }}_key(word: u32) -> u32 { return word >> {{ prefix | upper }}_ID_BITS; }
fn {{ prefix }}_id(word: u32) -> u32 { return (word & {{ prefix | upper }}_ID_MASK) - 1u; }
{% endmacro %}

{% macro packed_target(name) %}
fn {{ name }}_clear(pixel: u32) { atomicStore(&{{ name }}[pixel], 0u); }
fn {{ name }}_splat(pixel: u32, word: u32) { atomicMax(&{{ name }}[pixel], word); }
fn {{ name }}_splat_run(first: u32, count: u32, word: u32) {
    for (var p = first; p < first + count; p++) {
        atomicMax(&{{ name }}[p], word);
    }
}
{% endmacro %}

{# The format of a depth target, alone where the consumer binds its arrays
   read-only (a fragment shader resolving them). #}
{% macro depth_format() %}
const RASTER_FAR: u32 = 0xffffffffu;
fn raster_depth_bits(depth: f32) -> u32 { return bitcast<u32>(max(depth, 0.0)); }
fn raster_depth(bits: u32) -> f32 { return bitcast<f32>(bits); }
fn raster_hit_empty(hit: u32) -> bool { return hit == 0u; }
fn raster_hit_id(hit: u32) -> u32 { return hit - 1u; }
{% endmacro %}

{% macro depth_target(name, ids) %}
{{ depth_format() }}
fn {{ name }}_clear(pixel: u32) {
    atomicStore(&{{ name }}[pixel], RASTER_FAR);
    atomicStore(&{{ ids }}[pixel], 0u);
}
fn {{ name }}_test(pixel: u32, bits: u32) { atomicMin(&{{ name }}[pixel], bits); }
fn {{ name }}_hit(pixel: u32, bits: u32, id: u32) {
    if (atomicLoad(&{{ name }}[pixel]) == bits) {
        atomicMax(&{{ ids }}[pixel], id + 1u);
    }
}
{% endmacro %}
