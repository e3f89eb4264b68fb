// Keyed aggregation: the body shared by GPUGroupAggregation, GPUHistogram,
// GPUGridBinning and GPUGridAggregation. Every accepted input row maps to one
// output row ("key": a group, a bin or a cell) and adds 1 (count) or its
// value (sum, min, max, mean) to it.
//
// A key snippet is prepended by the Python template step
// (group_aggregation._shader_text): group_keys.wgsl, histogram_keys.wgsl or
// grid_keys.wgsl. It defines
//   key_setup()               once per invocation before any row (loads parameters)
//   row_key(row) -> u32       the key of one row of the current chunk, or SKIP
//   key_local_init(lid), key_local_flush(lid)   per-workgroup state of the snippet
//   key_clear()               called once by the init kernel
// The template step also keeps or drops blocks between "//#if FLAG" (or
// "//#if !FLAG") and "//#endif": VALUES (operation reads values), MEAN,
// MASK, FILTER; so a variant declares only the bindings it uses.
//
// Float atomics: WGSL has integer atomics only. Sums add through a
// compare-exchange loop on the f32 bit pattern, so the float32 accumulation
// order (and the rounding of a sum) depends on scheduling: it is not
// deterministic. Min and max store an order-preserving uint32 encoding of the
// float and use atomicMin/atomicMax, which is deterministic (-0 < +0).

override KEYS: u32 = 1u;        // output rows: groups, bins or cells
override OUT_OFFSET: u32 = 0u;  // element offset of the output view in its binding
override OP: u32 = 0u;          // 0 count, 1 sum, 2 min, 3 max, 4 mean
override ITEMS: u32 = 16u;      // rows per invocation: one workgroup covers 256 * ITEMS rows
override LOCAL_KEYS: u32 = 1u;  // workgroup-private accumulators: KEYS when privatized, else 1

const WG: u32 = 256u;
const SKIP: u32 = 0xffffffffu;
const NAN_BITS: u32 = 0x7fc00000u;

// One chunk of aligned inputs: rows plus each role's element offset and
// stride inside its binding, and the value-range filter [filter_lo, filter_hi].
struct Chunk {
    rows: u32,
    key_offset: u32,
    key_stride: u32,
    value_offset: u32,
    value_stride: u32,
    mask_offset: u32,
    mask_stride: u32,
    filter_offset: u32,
    filter_stride: u32,
    filter_lo: f32,
    filter_hi: f32,
}

@group(0) @binding(0) var<storage, read> keys: array<u32>;
//#if VALUES
@group(0) @binding(1) var<storage, read> vals: array<u32>;
//#endif
//#if MASK
@group(0) @binding(2) var<storage, read> mask: array<u32>;
//#endif
//#if FILTER
@group(0) @binding(3) var<storage, read> filt: array<u32>;
//#endif
@group(0) @binding(4) var<storage, read> chunk: Chunk;
@group(0) @binding(5) var<storage, read_write> out: array<atomic<u32>>;
//#if MEAN
@group(0) @binding(6) var<storage, read_write> cnt: array<atomic<u32>>;
//#endif

var<workgroup> acc: array<atomic<u32>, LOCAL_KEYS>;
//#if MEAN
var<workgroup> acc_count: array<atomic<u32>, LOCAL_KEYS>;
//#endif
var<private> c: Chunk;

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// Order-preserving float -> uint32 (finite and infinite values; -0 < +0).
fn order_key(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn order_value(u: u32) -> f32 {
    return bitcast<f32>(select(~u, u & 0x7fffffffu, (u & 0x80000000u) != 0u));
}

// The empty accumulator: no finite float encodes to 0xffffffff or 0.
fn identity() -> u32 {
    return select(0u, 0xffffffffu, OP == 2u);
}

fn row_accepted(row: u32) -> bool {
//#if MASK
    if (mask[c.mask_offset + row * c.mask_stride] == 0u) {
        return false;
    }
//#endif
//#if FILTER
    let f = bitcast<f32>(filt[c.filter_offset + row * c.filter_stride]);
    if (is_nan(f) || f < c.filter_lo || f > c.filter_hi) {
        return false;
    }
//#endif
    return true;
}

//#if VALUES
fn add_global(i: u32, v: f32) {
    var old = atomicLoad(&out[OUT_OFFSET + i]);
    loop {
        let r = atomicCompareExchangeWeak(&out[OUT_OFFSET + i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) {
            break;
        }
        old = r.old_value;
    }
}

fn add_local(i: u32, v: f32) {
    var old = atomicLoad(&acc[i]);
    loop {
        let r = atomicCompareExchangeWeak(&acc[i], old, bitcast<u32>(bitcast<f32>(old) + v));
        if (r.exchanged) {
            break;
        }
        old = r.old_value;
    }
}

fn combine(key: u32, v: f32, local: bool) {
    if (OP == 2u) {
        if (local) { atomicMin(&acc[key], order_key(v)); } else { atomicMin(&out[OUT_OFFSET + key], order_key(v)); }
    } else if (OP == 3u) {
        if (local) { atomicMax(&acc[key], order_key(v)); } else { atomicMax(&out[OUT_OFFSET + key], order_key(v)); }
    } else {
        if (local) { add_local(key, v); } else { add_global(key, v); }
//#if MEAN
        if (local) { atomicAdd(&acc_count[key], 1u); } else { atomicAdd(&cnt[key], 1u); }
//#endif
    }
}
//#endif

fn accumulate_row(key: u32, row: u32, local: bool) {
//#if !VALUES
    if (local) { atomicAdd(&acc[key], 1u); } else { atomicAdd(&out[OUT_OFFSET + key], 1u); }
//#endif
//#if VALUES
    let v = bitcast<f32>(vals[c.value_offset + row * c.value_stride]);
    if (finite(v)) {
        combine(key, v, local);
    }
//#endif
}

fn flush(k: u32) {
    let a = atomicLoad(&acc[k]);
//#if !VALUES
    if (a != 0u) { atomicAdd(&out[OUT_OFFSET + k], a); }
//#endif
//#if VALUES
    if (OP == 2u) {
        if (a != 0xffffffffu) { atomicMin(&out[OUT_OFFSET + k], a); }
    } else if (OP == 3u) {
        if (a != 0u) { atomicMax(&out[OUT_OFFSET + k], a); }
    } else {
//#if MEAN
        let n = atomicLoad(&acc_count[k]);
        if (n != 0u) {
            atomicAdd(&cnt[k], n);
            add_global(k, bitcast<f32>(a));
        }
//#endif
//#if !MEAN
        if (a != 0u) { add_global(k, bitcast<f32>(a)); }
//#endif
    }
//#endif
}

// One workgroup per tile of 256 * ITEMS consecutive rows of one chunk.
@compute @workgroup_size(256)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    c = chunk;
    key_setup();
    let local = LOCAL_KEYS == KEYS;
    if (local) {
        for (var k = lid; k < LOCAL_KEYS; k += WG) {
            atomicStore(&acc[k], identity());
//#if MEAN
            atomicStore(&acc_count[k], 0u);
//#endif
        }
    }
    key_local_init(lid);
    workgroupBarrier();
    let base = (wid.x + wid.y * nwg.x) * WG * ITEMS;
    for (var i = 0u; i < ITEMS; i += 1u) {
        let row = base + i * WG + lid;
        if (row < c.rows && row_accepted(row)) {
            let key = row_key(row);
            if (key != SKIP) {
                accumulate_row(key, row, local);
            }
        }
    }
    workgroupBarrier();
    if (local) {
        for (var k = lid; k < LOCAL_KEYS; k += WG) {
            flush(k);
        }
    }
    key_local_flush(lid);
}

// Every encoding starts here: empty accumulators (and the snippet's state).
@compute @workgroup_size(256)
fn init(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i == 0u) {
        key_clear();
    }
    if (i < KEYS) {
        atomicStore(&out[OUT_OFFSET + i], identity());
//#if MEAN
        atomicStore(&cnt[i], 0u);
//#endif
    }
}

// min/max: decode, empty -> NaN; mean: sum / count, empty -> NaN.
@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= KEYS) {
        return;
    }
    let a = atomicLoad(&out[OUT_OFFSET + i]);
    var r = a;
    if (OP == 2u || OP == 3u) {
        r = select(bitcast<u32>(order_value(a)), NAN_BITS, a == identity());
    }
//#if MEAN
    let n = atomicLoad(&cnt[i]);
    r = select(bitcast<u32>(bitcast<f32>(a) / f32(n)), NAN_BITS, n == 0u);
//#endif
    atomicStore(&out[OUT_OFFSET + i], r);
}
