// Stable sort of small domains inside one workgroup: a bitonic network over
// (key, row) pairs, so equal keys keep their source order.
//
// A workgroup holds SLOTS slots split into SLOTS / width segments of `width`
// slots (a power of two); each segment sorts one domain of at most `width`
// rows, padded with (0xffffffff, 0xffffffff), which sorts after every real
// row. Domains come from a table of (row offset, length) pairs; a dispatch
// sorts `segments` domains of one width class. Rows outside the domains are
// never read or written.
//
// No template values: SLOTS (a power of two >= 256) and HAS_VALUES are
// overrides, so one module serves every slot count.

override SLOTS: u32;
override HAS_VALUES: bool;

const WG: u32 = 256u;

struct Params {
    segments: u32,   // domains in the table
    width: u32,      // slots per domain (power of two)
    per_group: u32,  // SLOTS / width
    flip: u32,       // 0 (ascending) or 0xffffffff (descending)
    mask: u32,       // low key_bits set
    key_in: u32,     // element offsets of the views inside their bindings
    val_in: u32,
    key_out: u32,
    val_out: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> table: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> key_in: array<u32>;
@group(0) @binding(3) var<storage, read> val_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> key_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> val_out: array<u32>;

var<workgroup> sk: array<u32, SLOTS>;
var<workgroup> si: array<u32, SLOTS>;

@compute @workgroup_size(256)
fn sort_small(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * P.per_group;
    if (first >= P.segments) { return; }
    for (var slot = lid; slot < SLOTS; slot += WG) {
        let s = first + slot / P.width;
        let r = slot % P.width;
        var key = 0xffffffffu;
        var row = 0xffffffffu;
        if (s < P.segments) {
            let seg = table[s];
            if (r < seg.y) {
                key = (key_in[P.key_in + seg.x + r] ^ P.flip) & P.mask;
                row = r;
            }
        }
        sk[slot] = key;
        si[slot] = row;
    }
    workgroupBarrier();
    for (var size = 2u; size <= P.width; size <<= 1u) {
        for (var j = size >> 1u; j > 0u; j >>= 1u) {
            for (var q = lid; q < SLOTS / 2u; q += WG) {
                let a = 2u * q - (q & (j - 1u));
                let b = a + j;
                let up = (a & size) == 0u || size == P.width;
                let ka = sk[a];
                let kb = sk[b];
                let ia = si[a];
                let ib = si[b];
                if ((ka > kb || (ka == kb && ia > ib)) == up) {
                    sk[a] = kb;
                    sk[b] = ka;
                    si[a] = ib;
                    si[b] = ia;
                }
            }
            workgroupBarrier();
        }
    }
    for (var slot = lid; slot < SLOTS; slot += WG) {
        let s = first + slot / P.width;
        let r = slot % P.width;
        if (s < P.segments) {
            let seg = table[s];
            if (r < seg.y) {
                let src = seg.x + si[slot];
                key_out[P.key_out + seg.x + r] = key_in[P.key_in + src];
                if (HAS_VALUES) { val_out[P.val_out + seg.x + r] = val_in[P.val_in + src]; }
            }
        }
    }
}
