// Two-level reduction (sum, min, max or extent) of uint32, sint32 or float32.
//
// `blocks`: workgroup wg reduces GROUP_BLOCKS consecutive blocks of BLOCK
// rows (ITEMS vec4 loads a lane per block, coalesced) into partial slot
// `slot_base + wg`. `finish`: one workgroup reduces every partial (four loads
// in flight per lane) and writes the output. Fixed order for a given
// length, so float sums are reproducible on one device.
//
// Accumulators are vec2<T>: x is the result for sum/min/max, (x, y) is
// (min, max) for extent. Float min/max/extent skip NaN and infinities, so
// +-inf serve as identities; a result still at its identity means "no
// finite value" and is written as 0.
//
// Template values: type (the input format, reduce_types.wgsl), data (the
// views.view layout of the input chunk; "none" for the final pass), out
// (the layout of the output view; "none" where this variant does not write it) and subgroups (which workgroup
// reduction and entry points). View element offsets are ReduceParams fields.

{% import "algorithms/shaders/views.wgsl" as views %}
{% include "algorithms/shaders/reduce_types.wgsl" %}
{{ views.view("data", 2, "read", data, "RP.data_off") }}
{{ views.view("out", 3, "read_write", out, "RP.out_off") }}
{% include "algorithms/shaders/reduce_subgroup.wgsl" if subgroups else "algorithms/shaders/reduce_portable.wgsl" %}

override OP: u32;          // 0 sum, 1 min, 2 max, 3 extent
override IS_FLOAT: bool = false;
override GROUP_BLOCKS: u32 = 1u;  // blocks per workgroup: fewer partials and workgroup reductions
const ITEMS: u32 = 8u;  // vec4 loads per lane (written out in blocks_main)
const BLOCK: u32 = 256u * 4u * ITEMS;

struct ReduceParams {
    n: u32,          // rows of this chunk
    slot_base: u32,  // first partial slot of this chunk
    slots: u32,      // total partial slots (final pass)
    blocks: u32,     // workgroups of this chunk (past it: padding of a 2-D grid)
    data_off: u32,   // element offsets of the views inside their bound ranges
    out_off: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> RP: ReduceParams;
@group(0) @binding(1) var<storage, read_write> partials: array<vec2<u32>>;

fn identity() -> vec2<T> {
    switch OP {
        case 1u: { return vec2<T>(MAXV(), MAXV()); }
        case 2u: { return vec2<T>(MINV(), MINV()); }
        case 3u: { return vec2<T>(MAXV(), MINV()); }
        default: { return vec2<T>(); }
    }
}

fn lift(x: T) -> vec2<T> {
    if (OP == 0u) { return vec2<T>(x, x); }
    return select(identity(), vec2<T>(x, x), is_valid(x));
}

fn merge(a: vec2<T>, b: vec2<T>) -> vec2<T> {
    switch OP {
        case 0u: { return a + b; }
        case 1u: { return min(a, b); }
        case 2u: { return max(a, b); }
        default: { return vec2<T>(min(a.x, b.x), max(a.y, b.y)); }
    }
}

fn lift4(w: vec4<u32>) -> vec2<T> {
    let v = bitcast<vec4<T>>(w);
    return merge(merge(lift(v.x), lift(v.y)), merge(lift(v.z), lift(v.w)));
}

// Workgroup wg's reduction of its GROUP_BLOCKS blocks (valid in lane 0).
fn block_reduce(l: Lanes, wg: u32) -> vec2<T> {
    var acc = identity();
    for (var blk = 0u; blk < GROUP_BLOCKS; blk++) {
        let base = (wg * GROUP_BLOCKS + blk) * BLOCK;
        if (base >= RP.n) { break; }
        if (base + BLOCK <= RP.n) {
            // A full block: unconditional loads, all in flight before the first use
            // (written out: arrays indexed in loops can end up in local memory).
            let i = base + l.lid * 4u;
            let v0 = data_get4(i);
            let v1 = data_get4(i + 1024u);
            let v2 = data_get4(i + 2048u);
            let v3 = data_get4(i + 3072u);
            let v4 = data_get4(i + 4096u);
            let v5 = data_get4(i + 5120u);
            let v6 = data_get4(i + 6144u);
            let v7 = data_get4(i + 7168u);
            acc = merge(acc, merge(merge(merge(lift4(v0), lift4(v1)), merge(lift4(v2), lift4(v3))),
                                   merge(merge(lift4(v4), lift4(v5)), merge(lift4(v6), lift4(v7)))));
        } else {
            for (var k = 0u; k < ITEMS; k++) {
                let e = base + (k * 256u + l.lid) * 4u;
                for (var c = 0u; c < 4u; c++) {
                    if (e + c < RP.n) { acc = merge(acc, lift(bitcast<T>(data_get1(e + c)))); }
                }
            }
        }
    }
    return wg_reduce(l, acc);
}

fn blocks_main(l: Lanes, wg: u32) {
    if (wg >= RP.blocks) { return; }
    let r = block_reduce(l, wg);
    if (l.lid == 0u) { partials[RP.slot_base + wg] = bitcast<vec2<u32>>(r); }
}

// The result as written to the output: a float min/max/extent still at an
// identity means no finite value was seen, written as 0.
fn store_result(res: vec2<T>) {
    var r = res;
    if (IS_FLOAT && OP != 0u) {
        r = select(r, vec2<T>(), vec2<bool>(r.x == MAXV() || r.x == MINV(), r.y == MAXV() || r.y == MINV()));
    }
    out_set1(0u, bitcast<u32>(r.x));
    if (OP == 3u) { out_set1(1u, bitcast<u32>(r.y)); }
}

fn final_main(l: Lanes) {
    var acc = identity();
    // Four independent loads a lane per round, so their latencies overlap.
    for (var i = l.lid; i < RP.slots; i += 1024u) {
        var a = bitcast<vec2<T>>(partials[i]);
        var b = identity();
        var c = identity();
        var d = identity();
        if (i + 256u < RP.slots) { b = bitcast<vec2<T>>(partials[i + 256u]); }
        if (i + 512u < RP.slots) { c = bitcast<vec2<T>>(partials[i + 512u]); }
        if (i + 768u < RP.slots) { d = bitcast<vec2<T>>(partials[i + 768u]); }
        acc = merge(acc, merge(merge(a, b), merge(c, d)));
    }
    let r = wg_reduce(l, acc);
    if (l.lid == 0u) { store_result(r); }
}

// ---------------------------------------------------------------------------
// Single pass (`single`): every workgroup reduces its blocks as in `blocks`,
// publishes its partial into a node-owned state buffer and takes an arrival
// ticket; the workgroup that arrives last reduces every partial and writes
// the output, so no second dispatch runs.
//
// State words (zero when the buffer is created, never cleared):
//   [0]                 epoch << EPOCH_SHIFT | arrivals in this epoch; the
//                       last arrival moves it to the next epoch.
//   [4 + 4s + 0..3]     partial slot s: x low/high 16 bits, y low/high 16
//                       bits, each word READY | PARITY (epoch & 1) | 16 bits.
// WGSL atomics are relaxed, so the last workgroup cannot rely on the order of
// another workgroup's stores: it reads each partial until all four of its
// words carry this epoch's tag. Every partial's stores were issued before its
// workgroup's ticket, so this waits only for visibility, never for another
// workgroup to be scheduled: it cannot hang.

const R_READY: u32 = 0x80000000u;
const R_PARITY: u32 = 0x40000000u;
const R_TAG: u32 = R_READY | R_PARITY;
const R_EPOCH_SHIFT: u32 = 21u;  // partial slots < 2^21 (2^32 rows / 8192-row blocks = 2^19)
const R_COUNT_MASK: u32 = (1u << R_EPOCH_SHIFT) - 1u;

@group(0) @binding(4) var<storage, read_write> rstate: array<atomic<u32>>;
var<workgroup> s_last: u32;

fn load_partial(s: u32, tag: u32) -> vec2<T> {
    let w = 4u + 4u * s;
    var a = 0u;
    var b = 0u;
    var c = 0u;
    var d = 0u;
    loop {
        a = atomicLoad(&rstate[w]);
        b = atomicLoad(&rstate[w + 1u]);
        c = atomicLoad(&rstate[w + 2u]);
        d = atomicLoad(&rstate[w + 3u]);
        if ((a & R_TAG) == tag && (b & R_TAG) == tag && (c & R_TAG) == tag && (d & R_TAG) == tag) { break; }
    }
    return bitcast<vec2<T>>(vec2<u32>((a & 0xffffu) | (b << 16u), (c & 0xffffu) | (d << 16u)));
}

fn single_main(l: Lanes, wg: u32) {
    if (wg >= RP.blocks) { return; }
    let r = block_reduce(l, wg);
    if (l.lid == 0u) {
        let epoch = atomicLoad(&rstate[0]) >> R_EPOCH_SHIFT;
        let tag = R_READY | select(0u, R_PARITY, (epoch & 1u) != 0u);
        let u = bitcast<vec2<u32>>(r);
        let w = 4u + 4u * (RP.slot_base + wg);
        atomicStore(&rstate[w], tag | (u.x & 0xffffu));
        atomicStore(&rstate[w + 1u], tag | (u.x >> 16u));
        atomicStore(&rstate[w + 2u], tag | (u.y & 0xffffu));
        atomicStore(&rstate[w + 3u], tag | (u.y >> 16u));
        let ticket = atomicAdd(&rstate[0], 1u);
        var last = 0u;
        if ((ticket & R_COUNT_MASK) == RP.slots - 1u) {
            // every workgroup of this encoding has arrived: open the next epoch
            atomicStore(&rstate[0], (epoch + 1u) << R_EPOCH_SHIFT);
            last = tag;
        }
        s_last = last;
    }
    let tag = workgroupUniformLoad(&s_last);
    if (tag == 0u) { return; }
    var acc = identity();
    for (var i = l.lid; i < RP.slots; i += 1024u) {
        var a = load_partial(i, tag);
        var b = identity();
        var c = identity();
        var d = identity();
        if (i + 256u < RP.slots) { b = load_partial(i + 256u, tag); }
        if (i + 512u < RP.slots) { c = load_partial(i + 512u, tag); }
        if (i + 768u < RP.slots) { d = load_partial(i + 768u, tag); }
        acc = merge(acc, merge(merge(a, b), merge(c, d)));
    }
    let res = wg_reduce(l, acc);
    if (l.lid == 0u) { store_result(res); }
}
