// Keyed aggregation: the body shared by GPUGroupAggregation, GPUHistogram,
// GPUGridBinning and GPUGridAggregation (gpuviz/algorithms/keyed_aggregation.py).
// Every accepted input row maps to one output row ("key": a group, a bin or a
// cell) and adds 1 (count) or its value (sum, min, max, mean) to it.
//
// A key template (group_keys.wgsl, histogram_keys.wgsl, grid_keys.wgsl)
// includes this file after defining
//   key_setup()               once per invocation before any row (loads parameters)
//   row_key(row) -> u32       the key of one row of the current chunk, or SKIP
//   key_local_init(lid), key_local_flush(lid)   per-workgroup state of the template
//   key_clear()               called once by the init kernel
// Template values (booleans) keep only the bindings and code a variant uses:
// values (the operation reads values), order (min or max), sum, mean, mask,
// filtered (a value-range filter), partials, subgroups, float_atomics.
//
// Strategies. Privatized (LOCAL_KEYS == KEYS): a workgroup accumulates its
// tile in workgroup memory, then flushes it: count/min/max with native
// global atomics; sum/mean (partials) by writing one partial per key and
// workgroup, which the reduce entry point sums per key in a fixed order
// (no global float contention: compare-exchange on a few hot words serializes
// badly). With subgroups (sum/mean over few keys) the lanes of a subgroup first
// add up rows sharing a key, one key at a time, so one workgroup-memory
// update stands for many rows. Global (LOCAL_KEYS == 1, large key counts such
// as 512 x 512 grids): every row updates the output directly; mean keeps its
// counts in cnt and divides in finalize.
//
// Float sums in global memory. With float_atomics (sum and mean where the
// device has shader-float32-atomic) the output is atomic<f32> and a row costs
// one native atomicAdd, which the GPU can issue without waiting for a reply.
// Otherwise (core WGSL has integer atomics only) sums add through a
// compare-exchange loop on the f32 bit pattern: a load plus at least one
// compare-exchange round trip per row. Either way the float32 accumulation
// order (and the rounding of a sum) depends on scheduling: it is not
// deterministic. Workgroup memory always uses the loop (naga accepts f32
// atomics in the storage address space only). Min and max store an
// order-preserving uint32 encoding of the float and use atomicMin/atomicMax,
// which is deterministic (-0 < +0).

override KEYS: u32 = 1u;        // output rows: groups, bins or cells
override OUT_OFFSET: u32 = 0u;  // element offset of the output view in its binding
override OP: u32 = 0u;          // 0 count, 1 sum, 2 min, 3 max, 4 mean
override LOCAL_KEYS: u32 = 1u;  // workgroup-private accumulators: KEYS when privatized, else 1

const WG: u32 = 256u;
const SKIP: u32 = 0xffffffffu;
const NAN_BITS: u32 = 0x7fc00000u;

// One chunk of aligned inputs: rows plus each role's element offset and
// stride inside its binding, the value-range filter [filter_lo, filter_hi]
// and the rows per invocation (a workgroup covers 256 * items rows). Sizes
// are record fields, not overrides, so one pipeline serves every table size.
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
    items: u32,
    wg_base: u32,  // partials: index of the chunk's first workgroup over all chunks
    total_wgs: u32,  // partials: workgroups over all chunks (partials per key)
}

@group(0) @binding(0) var<storage, read> keys: array<u32>;
{% if values %}
@group(0) @binding(1) var<storage, read> vals: array<u32>;
{% endif %}
{% if mask %}
@group(0) @binding(2) var<storage, read> mask: array<u32>;
{% endif %}
{% if filtered %}
@group(0) @binding(3) var<storage, read> filt: array<u32>;
{% endif %}
@group(0) @binding(4) var<storage, read> chunk: Chunk;
{% if float_atomics %}
@group(0) @binding(5) var<storage, read_write> out: array<atomic<f32>>;
{% else %}
@group(0) @binding(5) var<storage, read_write> out: array<atomic<u32>>;
{% endif %}
{% if partials %}
// [KEYS][total_wgs] partial sums (f32 bits), then for mean [KEYS][total_wgs] counts
@group(0) @binding(6) var<storage, read_write> partials: array<u32>;
{% elif mean %}
@group(0) @binding(6) var<storage, read_write> cnt: array<atomic<u32>>;
{% endif %}

var<workgroup> acc: array<atomic<u32>, LOCAL_KEYS>;
{% if mean %}
var<workgroup> acc_count: array<atomic<u32>, LOCAL_KEYS>;
{% endif %}
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

// Output words as raw bits (any operation), and a float add into one.
{% if float_atomics %}
fn out_get(i: u32) -> u32 {
    return bitcast<u32>(atomicLoad(&out[OUT_OFFSET + i]));
}

fn out_set(i: u32, bits: u32) {
    atomicStore(&out[OUT_OFFSET + i], bitcast<f32>(bits));
}

fn add_global(i: u32, v: f32) {
    atomicAdd(&out[OUT_OFFSET + i], v);
}
{% else %}
fn out_get(i: u32) -> u32 {
    return atomicLoad(&out[OUT_OFFSET + i]);
}

fn out_set(i: u32, bits: u32) {
    atomicStore(&out[OUT_OFFSET + i], bits);
}

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
{% endif %}

fn row_accepted(row: u32) -> bool {
{% if mask %}
    if (mask[c.mask_offset + row * c.mask_stride] == 0u) {
        return false;
    }
{% endif %}
{% if filtered %}
    let f = bitcast<f32>(filt[c.filter_offset + row * c.filter_stride]);
    if (is_nan(f) || f < c.filter_lo || f > c.filter_hi) {
        return false;
    }
{% endif %}
    return true;
}

{% if values %}
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
{% if partials %}
    add_local(key, v);
{% if mean %}
    atomicAdd(&acc_count[key], 1u);
{% endif %}
{% elif order %}
    if (OP == 2u) {
        if (local) { atomicMin(&acc[key], order_key(v)); } else { atomicMin(&out[OUT_OFFSET + key], order_key(v)); }
    } else {
        if (local) { atomicMax(&acc[key], order_key(v)); } else { atomicMax(&out[OUT_OFFSET + key], order_key(v)); }
    }
{% else %}
    if (local) { add_local(key, v); } else { add_global(key, v); }
{% if mean %}
    if (local) { atomicAdd(&acc_count[key], 1u); } else { atomicAdd(&cnt[key], 1u); }
{% endif %}
{% endif %}
}
{% endif %}

fn accumulate_row(key: u32, v: f32, local: bool) {
{% if values %}
    combine(key, v, local);
{% else %}
    if (local) { atomicAdd(&acc[key], 1u); } else { atomicAdd(&out[OUT_OFFSET + key], 1u); }
{% endif %}
}

{% if subgroups %}
// All lanes of the subgroup call this together (skipped rows with key SKIP):
// per distinct key present, one subgroup sum and one workgroup-memory update.
fn subgroup_combine(key: u32, v: f32, lane: u32) {
    var pending = key != SKIP;
    loop {
        let k = subgroupMin(select(SKIP, key, pending));
        if (k == SKIP) {
            break;
        }
        let mine = pending && key == k;
        let s = subgroupAdd(select(0.0, v, mine));
{% if mean %}
        let n = subgroupAdd(select(0u, 1u, mine));
{% endif %}
        if (lane == 0u) {
            add_local(k, s);
{% if mean %}
            atomicAdd(&acc_count[k], n);
{% endif %}
        }
        pending = pending && !mine;
    }
}
{% endif %}

fn flush(k: u32, slot: u32) {
    let a = atomicLoad(&acc[k]);
{% if partials %}
    partials[k * c.total_wgs + slot] = a;
{% if mean %}
    partials[(KEYS + k) * c.total_wgs + slot] = atomicLoad(&acc_count[k]);
{% endif %}
{% else %}
{% if not values %}
    if (a != 0u) { atomicAdd(&out[OUT_OFFSET + k], a); }
{% endif %}
{% if order %}
    if (OP == 2u) {
        if (a != 0xffffffffu) { atomicMin(&out[OUT_OFFSET + k], a); }
    } else {
        if (a != 0u) { atomicMax(&out[OUT_OFFSET + k], a); }
    }
{% endif %}
{% if mean %}
    let n = atomicLoad(&acc_count[k]);
    if (n != 0u) {
        atomicAdd(&cnt[k], n);
        add_global(k, bitcast<f32>(a));
    }
{% endif %}
{% if sum %}
    if (a != 0u) { add_global(k, bitcast<f32>(a)); }
{% endif %}
{% endif %}
}

// One workgroup per tile of 256 * items consecutive rows of one chunk.
@compute @workgroup_size(256)
fn accumulate(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32
{% if subgroups %}
              , @builtin(subgroup_invocation_id) lane: u32
{% endif %}
              ) {
    c = chunk;
    key_setup();
    let local = LOCAL_KEYS == KEYS;
    if (local) {
        for (var k = lid; k < LOCAL_KEYS; k += WG) {
            atomicStore(&acc[k], identity());
{% if mean %}
            atomicStore(&acc_count[k], 0u);
{% endif %}
        }
    }
    key_local_init(lid);
    workgroupBarrier();
    let tile = wid.x + wid.y * nwg.x;
    let base = tile * WG * c.items;
    for (var i = 0u; i < c.items; i += 1u) {
        let row = base + i * WG + lid;
        var key = SKIP;
        if (row < c.rows && row_accepted(row)) {
            key = row_key(row);
        }
        var v = 0.0;
{% if values %}
        if (key != SKIP) {
            v = bitcast<f32>(vals[c.value_offset + row * c.value_stride]);
            if (!finite(v)) {
                key = SKIP;
            }
        }
{% endif %}
{% if subgroups %}
        subgroup_combine(key, v, lane);
{% else %}
        if (key != SKIP) {
            accumulate_row(key, v, local);
        }
{% endif %}
    }
    workgroupBarrier();
    if (local) {
        for (var k = lid; k < LOCAL_KEYS; k += WG) {
            flush(k, c.wg_base + tile);
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
        out_set(i, identity());
{% if mean and not partials %}
        atomicStore(&cnt[i], 0u);
{% endif %}
    }
}

// min/max: decode, empty -> NaN; mean: sum / count, empty -> NaN.
@compute @workgroup_size(256)
fn finalize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= KEYS) {
        return;
    }
    let a = out_get(i);
    var r = a;
    if (OP == 2u || OP == 3u) {
        r = select(bitcast<u32>(order_value(a)), NAN_BITS, a == identity());
    }
{% if mean and not partials %}
    let n = atomicLoad(&cnt[i]);
    r = select(bitcast<u32>(bitcast<f32>(a) / f32(n)), NAN_BITS, n == 0u);
{% endif %}
    out_set(i, r);
}

{% if partials %}
var<workgroup> red_sum: array<f32, 256>;
var<workgroup> red_count: array<u32, 256>;

// sum/mean after privatized accumulation: one workgroup per key adds its
// total_wgs partials (chunk: the first chunk's record) in a fixed tree order;
// empty mean -> NaN.
@compute @workgroup_size(256)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let k = wid.x + wid.y * nwg.x;
    if (k >= KEYS) {
        return;
    }
    let total = chunk.total_wgs;
    var s = 0.0;
    var n = 0u;
    for (var w = lid; w < total; w += WG) {
        s += bitcast<f32>(partials[k * total + w]);
{% if mean %}
        n += partials[(KEYS + k) * total + w];
{% endif %}
    }
    red_sum[lid] = s;
    red_count[lid] = n;
    workgroupBarrier();
    for (var h = WG / 2u; h > 0u; h = h / 2u) {
        if (lid < h) {
            red_sum[lid] += red_sum[lid + h];
            red_count[lid] += red_count[lid + h];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        var r = bitcast<u32>(red_sum[0]);
{% if mean %}
        r = select(bitcast<u32>(red_sum[0] / f32(red_count[0])), NAN_BITS, red_count[0] == 0u);
{% endif %}
        out_set(k, r);
    }
}
{% endif %}
