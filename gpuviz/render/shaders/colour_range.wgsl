// GPUColourRange (gpuviz/render/colour_range.py): the value range a colour
// map normalises by, chosen on the GPU from the values themselves, so a draw
// later in the same frame reads it (no CPU round trip).
//
// The range is two order statistics of the counted values (finite ones;
// positive ones for mode LOG): ranks k and n - 1 - k with
// k = floor(fraction * (n - 1)). They are found exactly by a radix select on
// the values' order-preserving 32-bit keys, 8 bits per pass, both ranks at
// once: `count` histograms the next digit of every key that matches the
// prefix found so far (workgroup-local atomics, flushed once per workgroup),
// `choose` (one workgroup) scans the 256 bins, keeps the digit where the
// rank falls and clears the bins. After four passes the prefixes are the keys.
//
// out[0], out[1]: lo, hi (NaN when nothing is counted); out[2]: n; out[3]: mode.

override CELLS: u32 = 1u;

const LOG: u32 = 1u;
const PREFIX: u32 = 512u;  // scratch: bins of rank lo [0, 256), of rank hi [256, 512), prefixes, ranks, n
const RANK: u32 = 514u;
const COUNT: u32 = 516u;

struct Params {
    mode: u32,      // 0 linear, 1 log (positive values only), 2 robust
    fraction: f32,  // 0 for min..max
    _pad0: u32,
    _pad1: u32,
};

struct Pass {
    digit: u32,  // 0 (most significant byte) .. 3
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<uniform> pass_: Pass;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read_write> scratch: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> local: array<atomic<u32>, 512>;
var<workgroup> sums: array<u32, 256>;

fn counted(bits: u32) -> bool {
    if ((bits & 0x7f800000u) == 0x7f800000u) {
        return false;  // NaN (empty cells) and infinities
    }
    return params.mode != LOG || (bits != 0u && bits < 0x80000000u);
}

// Float bits -> a key whose unsigned order is the floats' order (and back).
fn key_of(bits: u32) -> u32 {
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

fn float_of(key: u32) -> f32 {
    return bitcast<f32>(select(~key, key & 0x7fffffffu, (key & 0x80000000u) != 0u));
}

@compute @workgroup_size(256)
fn reset(@builtin(local_invocation_index) lid: u32) {
    for (var i = lid; i < 520u; i += 256u) {
        atomicStore(&scratch[i], 0u);
    }
}

@compute @workgroup_size(256)
fn count(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    atomicStore(&local[lid], 0u);
    atomicStore(&local[lid + 256u], 0u);
    workgroupBarrier();
    let digit = pass_.digit;
    let shift = 24u - 8u * digit;
    let prefix_lo = atomicLoad(&scratch[PREFIX]);
    let prefix_hi = atomicLoad(&scratch[PREFIX + 1u]);
    let stride = nwg.x * 256u;
    for (var i = wid.x * 256u + lid; i < CELLS; i += stride) {
        let bits = values[i];
        if (!counted(bits)) {
            continue;
        }
        let key = key_of(bits);
        let bin = (key >> shift) & 255u;
        if (digit == 0u) {
            atomicAdd(&local[bin], 1u);  // both ranks share the first histogram
            continue;
        }
        let high = key >> (shift + 8u);
        if (high == prefix_lo) {
            atomicAdd(&local[bin], 1u);
        }
        if (high == prefix_hi) {
            atomicAdd(&local[256u + bin], 1u);
        }
    }
    workgroupBarrier();
    for (var b = lid; b < 512u; b += 256u) {
        let n = atomicLoad(&local[b]);
        if (n > 0u) {
            atomicAdd(&scratch[b], n);
        }
    }
}

@compute @workgroup_size(256)
fn choose(@builtin(local_invocation_index) lid: u32) {
    let digit = pass_.digit;
    for (var s = 0u; s < 2u; s++) {
        // digit 0 has one histogram (bins of rank lo) for both ranks
        let h = atomicLoad(&scratch[select(s, 0u, digit == 0u) * 256u + lid]);
        let prefix = select(atomicLoad(&scratch[PREFIX + s]), 0u, digit == 0u);
        let stored_rank = atomicLoad(&scratch[RANK + s]);
        sums[lid] = h;
        workgroupBarrier();
        for (var offset = 1u; offset < 256u; offset <<= 1u) {
            var v = sums[lid];
            if (lid >= offset) {
                v += sums[lid - offset];
            }
            workgroupBarrier();
            sums[lid] = v;
            workgroupBarrier();
        }
        let inclusive = sums[lid];
        let exclusive = inclusive - h;
        let total = sums[255];
        var rank = stored_rank;
        if (digit == 0u) {
            let low = u32(floor(params.fraction * f32(max(total, 1u) - 1u)));
            rank = select(low, max(total, 1u) - 1u - low, s == 1u);
            if (lid == 0u && s == 0u) {
                atomicStore(&scratch[COUNT], total);
            }
        }
        workgroupBarrier();  // every thread has read the prefix and rank before one rewrites them
        if (h > 0u && exclusive <= rank && rank < inclusive) {
            let key = (prefix << 8u) | lid;
            atomicStore(&scratch[PREFIX + s], key);
            atomicStore(&scratch[RANK + s], rank - exclusive);
            if (digit == 3u) {
                out[s] = float_of(key);
            }
        }
        workgroupBarrier();
    }
    storageBarrier();
    atomicStore(&scratch[lid], 0u);
    atomicStore(&scratch[lid + 256u], 0u);
    if (digit == 3u && lid == 0u) {
        let n = atomicLoad(&scratch[COUNT]);
        if (n == 0u) {
            out[0] = bitcast<f32>(0x7fc00000u);
            out[1] = bitcast<f32>(0x7fc00000u);
        }
        out[2] = f32(n);
        out[3] = f32(params.mode);
    }
}
