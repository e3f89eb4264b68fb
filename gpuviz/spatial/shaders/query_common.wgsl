// The spatial query record (gpuviz/spatial/query.py: QUERY_WORDS words) and
// its readers, shared by the grid query and the exact point filter. The
// including kernel declares `query: array<u32>` and `QUERY_OFF()`.
//
// Words: 0 kind (0 empty, 1 point, 2 bounds, 3 radius, 4 polygon), 1 polygon
// vertex count, 4..6 a (point, bounds minimum, radius centre), 7 radius,
// 8..10 b (bounds maximum; a polygon's vertex bounds in a and b), 16.. the
// polygon's vertices as (x, y) float32 pairs.

const KIND_EMPTY: u32 = 0u;
const KIND_POINT: u32 = 1u;
const KIND_BOUNDS: u32 = 2u;
const KIND_RADIUS: u32 = 3u;
const KIND_POLYGON: u32 = 4u;
const MAX_VERTICES: u32 = 256u;

fn qword(i: u32) -> u32 { return query[QUERY_OFF() + i]; }
fn qf(i: u32) -> f32 { return bitcast<f32>(qword(i)); }
fn query_kind() -> u32 { return qword(0u); }
fn query_a() -> vec3<f32> { return vec3<f32>(qf(4u), qf(5u), qf(6u)); }
fn query_b() -> vec3<f32> { return vec3<f32>(qf(8u), qf(9u), qf(10u)); }
fn query_r() -> f32 { return qf(7u); }
fn vertex(j: u32) -> vec2<f32> { return vec2<f32>(qf(16u + 2u * j), qf(17u + 2u * j)); }

// The axis-aligned region a query can select, or valid = false for a query
// that selects nothing (empty, unknown kind, non-finite or inverted values,
// a negative radius, a polygon of fewer than 3 or more than 256 vertices).
// A radius region is the centre +- r widened by 2^-20 r + 1e-30, so every
// point the exact float32 distance test accepts lies inside it.
struct Region {
    valid: bool,
    a: vec3<f32>,
    b: vec3<f32>,
}

fn query_region() -> Region {
    let kind = query_kind();
    var a = query_a();
    var b = query_b();
    var valid = kind >= KIND_POINT && kind <= KIND_POLYGON;
    if (kind == KIND_POINT) {
        b = a;
    } else if (kind == KIND_RADIUS) {
        let r = query_r();
        for (var k = 0u; k < DIMS; k++) {
            valid = valid && is_finite(a[k]);
        }
        valid = valid && is_finite(r) && r >= 0.0;
        if (valid) {
            // widened, and saturated at the float32 range rather than inf
            let rb = r + r * 9.5367431640625e-7 + 1e-30;
            b = a + vec3<f32>(rb);
            a = a - vec3<f32>(rb);
            for (var k = 0u; k < DIMS; k++) {
                if (!is_finite(a[k])) { a[k] = -3.4028234663852886e38; }
                if (!is_finite(b[k])) { b[k] = 3.4028234663852886e38; }
            }
        }
    } else if (kind == KIND_POLYGON) {
        let n = qword(1u);
        valid = valid && n >= 3u && n <= MAX_VERTICES && DIMS == 2u;
    }
    for (var k = 0u; k < DIMS; k++) {
        valid = valid && is_finite(a[k]) && is_finite(b[k]) && a[k] <= b[k];
    }
    return Region(valid, a, b);
}
