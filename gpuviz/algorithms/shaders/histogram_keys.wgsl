// Keys of GPUHistogram: the bin of a float32 value, from an equal-width
// domain [lo, hi] or from KEYS + 1 irregular edges (binary search). With
// TABLE, aux holds KEYS + 1 edges (irregular ones, or the equal-width edges
// rounded up to float32: the float32 estimate of an equal-width bin is then
// corrected against them, exact whatever the division accuracy); without,
// aux = (lo, hi) of a GPU-resident domain and the estimate stands. Bins are
// [e_i, e_i+1); the upper edge belongs to the last bin. NaN, +-inf and values
// outside [lo, hi] are skipped; an invalid domain (non-finite, lo > hi,
// infinite width) or invalid GPU edges (the validation pass wrote 0 to
// edges_state; template value checked) skip every row.

override EDGES: bool = false;     // irregular edges instead of an equal-width domain
override TABLE: bool = true;      // aux holds KEYS + 1 edges (else lo, hi)
override AUX_OFFSET: u32 = 0u;    // element offset of the domain / edges in aux

@group(0) @binding(7) var<storage, read> aux: array<f32>;
{% if checked %}
@group(0) @binding(8) var<storage, read> edges_state: array<u32>;
{% endif %}

var<private> lo: f32;
var<private> hi: f32;
var<private> width: f32;
var<private> valid: bool;

fn key_setup() {
    if (EDGES) {
        lo = aux[AUX_OFFSET];
        hi = aux[AUX_OFFSET + KEYS];
        valid = true;
{% if checked %}
        valid = edges_state[0] == 1u;
{% endif %}
    } else {
        lo = aux[AUX_OFFSET];
        hi = aux[AUX_OFFSET + select(1u, KEYS, TABLE)];
        width = hi - lo;
        valid = finite(lo) && finite(hi) && finite(width) && lo <= hi;
    }
}

fn row_key(row: u32) -> u32 {
    let x = bitcast<f32>(keys[c.key_offset + row * c.key_stride]);
    if (!valid || !finite(x) || x < lo || x > hi) {
        return SKIP;
    }
    if (EDGES) {
        // Largest i < KEYS with edge[i] <= x.
        var a = 0u;
        var b = KEYS;
        loop {
            if (b - a <= 1u) {
                break;
            }
            let m = (a + b) / 2u;
            if (aux[AUX_OFFSET + m] <= x) { a = m; } else { b = m; }
        }
        return a;
    }
    if (width <= 0.0) {
        return 0u;  // degenerate domain lo == hi: matching values enter bin 0
    }
    var b = min(u32((x - lo) / width * f32(KEYS)), KEYS - 1u);
    if (TABLE) {
        loop {
            if (b > 0u && x < aux[AUX_OFFSET + b]) { b -= 1u; } else { break; }
        }
        loop {
            if (b + 1u < KEYS && x >= aux[AUX_OFFSET + b + 1u]) { b += 1u; } else { break; }
        }
    }
    return b;
}

fn key_local_init(lid: u32) {}
fn key_local_flush(lid: u32) {}
fn key_clear() {}

{% include "algorithms/shaders/keyed_aggregation.wgsl" %}
