// Stable LSD radix sort of uint32 keys (and optional uint32 values) with
// 8-bit digits, "onesweep" style:
//
//   clear      zero the state buffer (digit histograms, tile counters, look-back words)
//   histogram  one read of the keys counts the digits of every pass at once
//   scatter    one dispatch per digit pass: each workgroup takes the next tile
//              index from an atomic counter, ranks its rows by digit in
//              workgroup memory (stably), publishes its digit counts, looks
//              back over predecessor tiles for its global digit offsets
//              (decoupled look-back), publishes inclusive offsets and writes
//              its rows, grouped by digit, to their places. A pass in which
//              one digit holds every row (the histogram says so) only copies.
//
// Never hangs: a tile only waits on tiles that took their index earlier, and
// a tile that polls one predecessor SPIN_LIMIT times in vain counts that
// predecessor's digits itself (reading its keys) and publishes them.
//
// Template values (sort.py `radix_shader`), text because they size
// function-scope arrays or unroll per-row code: ITEMS (rows per invocation),
// LOOKBACK (predecessor tiles read per look-back step), HIST_ITEMS (keys per
// invocation per histogram step); `staging` (the workgroup layout below),
// `subgroups` (which variant file ends this one), `pad_words` (a benchmark
// knob of SortTuning). Benchmark probes extend this template and replace its
// jinja blocks (gpuviz/bench/shaders/sort_radix_probes.wgsl). The rankers come from sort_rank.wgsl. The
// template's for-blocks over range(N) repeat their body with constant
// indices: per-row arrays then stay in registers, and the loads of a block
// are all issued before their first use.
// Overrides (pipeline constants): SPIN_LIMIT, HAS_VALUES, LATE_VALUES (load
// values after the look-back instead of with the keys), BALLOTS_FIRST and
// CNT_WORDS.
// Descending order sorts the complemented keys: ties keep source order in
// both directions. Only `mask` bits of a key count; written keys are intact.

const ITEMS: u32 = {{ ITEMS | u32 }};
const LOOKBACK: u32 = {{ LOOKBACK | u32 }};
const HIST_ITEMS: u32 = {{ HIST_ITEMS | u32 }};
override SPIN_LIMIT: u32;
override HAS_VALUES: bool;
override LATE_VALUES: bool;
override BALLOTS_FIRST: bool;
// Per-subgroup packed digit counters: WG / rank_lanes subgroups x 128 words
// holding two 16-bit digit counts each.
override CNT_WORDS: u32;

const WG: u32 = 256u;
const TILE: u32 = WG * ITEMS;

const FLAG_AGG: u32 = 0x40000000u;   // status word: this tile's own digit count
const FLAG_INC: u32 = 0x80000000u;   // status word: count of this digit in all tiles up to this one (+ base)
const VALUE: u32 = 0x3fffffffu;

// State buffer layout (words).
const HIST: u32 = 0u;        // 4 passes x 256 digit counts
const COUNTER: u32 = 1024u;  // 4 tile counters
const STATUS: u32 = 1056u;   // passes x tiles x 256 look-back words

struct Params {
    n: u32,           // rows of the domain
    tiles: u32,       // ceil(n / TILE)
    pass_index: u32,  // digit pass of this dispatch
    passes: u32,      // digit passes in total
    flip: u32,        // 0 (ascending) or 0xffffffff (descending)
    mask: u32,        // low key_bits set
    shift: u32,       // 8 * pass_index
    groups: u32,      // workgroups of a clear/histogram dispatch
    key_in: u32,      // element offsets of the views inside their bindings
    val_in: u32,
    key_out: u32,
    val_out: u32,
    per_group: u32,   // histogram rows per workgroup
    state_words: u32,
    pad0: u32,
    pad1: u32,
};

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> key_in: array<u32>;
@group(0) @binding(2) var<storage, read> val_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> key_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> val_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;

// Workgroup staging (the tile's keys, then its values, in digit order) and
// the ranking counters, behind st_load/st_store and cnt_add/cnt_load/cnt_store:
// "shared" keeps both in one atomic array (less memory), "plain" stages
// through a plain array and keeps the counters in a separate atomic one.
{% if staging == "shared" %}
override SHM: u32 = max(TILE, CNT_WORDS);
var<workgroup> shm: array<atomic<u32>, SHM>;  // counters, then keys, then values
fn st_load(i: u32) -> u32 { return atomicLoad(&shm[i]); }
fn st_store(i: u32, v: u32) { atomicStore(&shm[i], v); }
fn cnt_add(i: u32, v: u32) -> u32 { return atomicAdd(&shm[i], v); }
fn cnt_load(i: u32) -> u32 { return atomicLoad(&shm[i]); }
fn cnt_store(i: u32, v: u32) { atomicStore(&shm[i], v); }
{% elif staging == "plain" %}
var<workgroup> stage: array<u32, TILE>;                   // keys, then values (and portable ranking)
var<workgroup> cnt: array<atomic<u32>, CNT_WORDS>;        // subgroup ranking counters
fn st_load(i: u32) -> u32 { return stage[i]; }
fn st_store(i: u32, v: u32) { stage[i] = v; }
fn cnt_add(i: u32, v: u32) -> u32 { return atomicAdd(&cnt[i], v); }
fn cnt_load(i: u32) -> u32 { return atomicLoad(&cnt[i]); }
fn cnt_store(i: u32, v: u32) { atomicStore(&cnt[i], v); }
{% else %}
{{ error('sort_radix.wgsl staging must be "shared" or "plain" (got "%s")' % staging) }}
{% endif %}
// Local start of each digit inside the sorted tile; after the look-back, each
// invocation turns its digit's entry into the run's global row minus that
// start (one array, not two: less workgroup memory, more tiles resident).
var<workgroup> s_start: array<u32, 256>;
{% if pad_words %}
var<workgroup> s_pad: array<u32, {{ pad_words | int }}>;  // unused (SortTuning.pad_words)
{% endif %}
// Scratch of three phases that never overlap (each ends on a barrier): the
// scan in wg_scan, the run ends of the portable ranker, a slow predecessor's
// digit counts in tile_count. One array, not three: workgroup memory decides
// how many tiles a multiprocessor holds.
var<workgroup> s_aux: array<atomic<u32>, 256>;
var<workgroup> s_hist: array<atomic<u32>, 1024>;
var<workgroup> s_req: atomic<u32>;
var<workgroup> s_ctrl: u32;

fn digit_of(key: u32) -> u32 {
    return (((key ^ P.flip) & P.mask) >> P.shift) & 255u;
}

// ------------------------------------------------------------------ clear
@compute @workgroup_size(256)
fn clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    for (var i = g * WG + lid; i < P.state_words; i += P.groups * WG) {
        atomicStore(&state[i], 0u);
    }
}

// -------------------------------------------------------------- histogram
@compute @workgroup_size(256)
fn histogram(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.groups) { return; }
    for (var i = lid; i < 1024u; i += WG) { atomicStore(&s_hist[i], 0u); }
    workgroupBarrier();
    let end = min(P.n, (g + 1u) * P.per_group);
    for (var i = g * P.per_group + lid; i < end; i += WG * HIST_ITEMS) {
        var k: array<u32, HIST_ITEMS>;
        {% for i in range(HIST_ITEMS) %}
        k[{{ i }}u] = 0xffffffffu;
        if (i + {{ i }}u * WG < end) { k[{{ i }}u] = (key_in[P.key_in + i + {{ i }}u * WG] ^ P.flip) & P.mask; }
        {% endfor %}
        for (var p = 0u; p < P.passes; p++) {
            let sh = 8u * p;
            {% for i in range(HIST_ITEMS) %}
            if (i + {{ i }}u * WG < end) { atomicAdd(&s_hist[p * 256u + ((k[{{ i }}u] >> sh) & 255u)], 1u); }
            {% endfor %}
        }
    }
    workgroupBarrier();
    for (var i = lid; i < P.passes * 256u; i += WG) {
        let c = atomicLoad(&s_hist[i]);
        if (c != 0u) { atomicAdd(&state[HIST + i], c); }
    }
}

// ------------------------------------------------------------ scan helper
// Exclusive prefix sum of one value per invocation: (exclusive, total).
// `sg` is the subgroup size when subgroup operations may be used, else 0;
// it must be workgroup-uniform.
fn wg_scan(lid: u32, v: u32, sg: u32) -> vec2<u32> {
    if (sg != 0u) {
        let incl = sg_inclusive_add(v);
        if (lid % sg == sg - 1u) { atomicStore(&s_aux[lid / sg], incl); }
        workgroupBarrier();
        if (lid == 0u) {
            var run = 0u;
            for (var i = 0u; i < WG / sg; i++) {
                let c = atomicLoad(&s_aux[i]);
                atomicStore(&s_aux[i], run);
                run += c;
            }
            atomicStore(&s_aux[255], run);
        }
        workgroupBarrier();
        let r = vec2<u32>(atomicLoad(&s_aux[lid / sg]) + incl - v, atomicLoad(&s_aux[255]));
        workgroupBarrier();
        return r;
    }
    atomicStore(&s_aux[lid], v);
    workgroupBarrier();
    for (var o = 1u; o < WG; o <<= 1u) {
        var add = 0u;
        if (lid >= o) { add = atomicLoad(&s_aux[lid - o]); }
        workgroupBarrier();
        atomicAdd(&s_aux[lid], add);
        workgroupBarrier();
    }
    let r = vec2<u32>(atomicLoad(&s_aux[lid]) - v, atomicLoad(&s_aux[WG - 1u]));
    workgroupBarrier();
    return r;
}

{% include "algorithms/shaders/sort_rank.wgsl" %}
{% import "algorithms/shaders/look_back.wgsl" as look_back %}

// -------------------------------------------------------------- look-back
// Digit count of one full predecessor tile, from its keys.
fn tile_count(lid: u32, t: u32) -> u32 {
    atomicStore(&s_aux[lid], 0u);
    var k: array<u32, ITEMS>;
    {% for i in range(ITEMS) %}
    k[{{ i }}u] = key_in[P.key_in + t * TILE + {{ i }}u * WG + lid];
    {% endfor %}
    workgroupBarrier();
    {% for i in range(ITEMS) %}
    atomicAdd(&s_aux[digit_of(k[{{ i }}u])], 1u);
    {% endfor %}
    workgroupBarrier();
    let c = atomicLoad(&s_aux[lid]);
    workgroupBarrier();
    return c;
}

fn status_index(t: u32, d: u32) -> u32 {
    return STATUS + (P.pass_index * P.tiles + t) * 256u + d;
}

// The per-digit scan across tiles (look_back.wgsl walk_lanes): invocation
// `lid` sums digit `lid` over tiles 0..tile-1, plus the digit's global base
// (the chain's origin); a slow predecessor's digits are counted from its keys.
{% macro digit_status(j) %}state[status_index({{ j }}, lid)]{% endmacro %}
{% macro digit_count(j) %}tile_count(lid, {{ j }}){% endmacro %}
{% macro digit_base() %}wg_scan(lid, atomicLoad(&state[HIST + P.pass_index * 256u + lid]), sg).x{% endmacro %}
{{ look_back.walk_lanes(LOOKBACK, digit_status, digit_count, digit_base) }}

// A trivial pass: the tile's rows go to the same rows of the output.
fn copy_tile(lid: u32, tile: u32) {
    let base = tile * TILE;
    let valid = min(TILE, P.n - base);
    {% for i in range(ITEMS) %}
    {
        let j = {{ i }}u * WG + lid;
        if (j < valid) {
            key_out[P.key_out + base + j] = key_in[P.key_in + base + j];
            if (HAS_VALUES) { val_out[P.val_out + base + j] = val_in[P.val_in + base + j]; }
        }
    }
    {% endfor %}
}

// ---------------------------------------------------------------- scatter
// `sg_size`: subgroup size (0 in the portable variant), `lane`: subgroup lane
// (0 for every invocation in the portable variant).
//
// Order of work, chosen so that successors are unblocked early and few
// per-row values stay live. Workgroup memory, not registers, limits the
// tiles resident per multiprocessor on a data-centre GPU (a slightly larger
// tile can halve the speed), so every per-digit array here earns its place.
//   0. tile index; the ranking path; a trivial pass copies and returns
//   1. key loads (values too unless LATE_VALUES), ranking
//   2. publish the tile's digit counts (aggregate), stage the keys in
//      workgroup memory in digit order; from here no key is held in registers
//   3. look-back, publish the inclusive prefix at once
//   4. (LATE_VALUES) issue the value loads, then write the staged keys
//      (consecutive invocations write consecutive rows of a digit run),
//      keeping each row's digit packed four to a word
//   5. stage the values in digit order and write them to the same places.
fn scatter_tile(lid: u32, sg_size: u32, lane: u32) {
    if (lid == 0u) {
        s_ctrl = atomicAdd(&state[COUNTER + P.pass_index], 1u);
        atomicStore(&s_req, 0u);
    }
    let tile = workgroupUniformLoad(&s_ctrl);
    if (tile >= P.tiles) { {% if pad_words %}s_pad[lid] = tile; {% endif %}return; }

    // One barrier settles two workgroup-uniform facts. Bit 1: subgroup
    // ranking is impossible (it needs 8..128 lanes numbered lid % size and
    // counters for WG / size subgroups). Bit 2: this digit pass is trivial
    // (one digit holds all n rows, e.g. high bits every key shares): the
    // stable pass is then the identity and every tile just copies its rows.
    let sg_possible = sg_size >= 8u && sg_size <= 128u;
    if (sg_possible && (lane != lid % sg_size || (WG / sg_size) * 128u > CNT_WORDS)) { atomicOr(&s_req, 1u); }
    if (atomicLoad(&state[HIST + P.pass_index * 256u + lid]) == P.n) { atomicOr(&s_req, 2u); }
    workgroupBarrier();
    if (lid == 0u) { s_ctrl = atomicExchange(&s_req, 0u); }
    let ctrl = workgroupUniformLoad(&s_ctrl);
    if ((ctrl & 2u) != 0u) {
        copy_tile(lid, tile);
        return;
    }
    var sg = 0u;
    if (sg_possible && (ctrl & 1u) == 0u) { sg = sg_size; }

    let base = tile * TILE;
    let valid = min(TILE, P.n - base);
    var first = lid;  // row of round k: first + k * step
    var step = WG;
    if (sg != 0u) {
        first = (lid / sg) * sg * ITEMS + lid % sg;
        step = sg;
    }
    var keys: array<u32, ITEMS>;
    var vals: array<u32, ITEMS>;
    var pos: array<u32, ITEMS>;  // rows past the end sort last (digit 255) and are never written
    {% for i in range(ITEMS) %}
    pos[{{ i }}u] = first + {{ i }}u * step;
    if (pos[{{ i }}u] < valid) { keys[{{ i }}u] = key_in[P.key_in + base + pos[{{ i }}u]]; }
    {% endfor %}
    if (HAS_VALUES && !LATE_VALUES) {
        {% for i in range(ITEMS) %}
        if (pos[{{ i }}u] < valid) { vals[{{ i }}u] = val_in[P.val_in + base + pos[{{ i }}u]]; }
        {% endfor %}
    }

    var count = 0u;
    if (sg != 0u) {
{% block rank_subgroup %}
        count = rank_subgroup(lid, sg, &keys, &pos, valid);
{% endblock %}
    } else {
        count = rank_split(lid, &keys, &pos, valid);
    }

    let status = status_index(tile, lid);
    if (tile != 0u) { atomicStore(&state[status], FLAG_AGG | count); }
    // The rankers end on a barrier: workgroup memory is free for the keys.
    {% for i in range(ITEMS) %}
    st_store(pos[{{ i }}u], keys[{{ i }}u]);
    {% endfor %}

    var prefix = 0u;
    if (tile == 0u) {
        prefix = wg_scan(lid, atomicLoad(&state[HIST + P.pass_index * 256u + lid]), sg).x;
    } else {
{% block prefix %}
        prefix = look_back(lid, tile, sg, lane);
{% endblock %}
    }
    atomicStore(&state[status], FLAG_INC | (prefix + count));
    s_start[lid] = prefix - s_start[lid];  // only this invocation reads entry lid before the barrier
    if (HAS_VALUES && LATE_VALUES) {  // in flight while the keys are written
        {% for i in range(ITEMS) %}
        if (first + {{ i }}u * step < valid) { vals[{{ i }}u] = val_in[P.val_in + base + first + {{ i }}u * step]; }
        {% endfor %}
    }
    workgroupBarrier();

    var digits: array<u32, (ITEMS + 3u) / 4u>;  // digit of row i * WG + lid, four to a word
    {% for i in range(ITEMS) %}
    {
        let j = {{ i }}u * WG + lid;
        let key = st_load(j);
        let d = digit_of(key);
        if (HAS_VALUES) {
            if (({{ i }}u % 4u) == 0u) { digits[{{ i }}u / 4u] = d; } else { digits[{{ i }}u / 4u] |= d << (8u * ({{ i }}u % 4u)); }
        }
{% block write_key %}
        if (j < valid) { key_out[P.key_out + s_start[d] + j] = key; }
{% endblock %}
    }
    {% endfor %}
    if (HAS_VALUES) {
        workgroupBarrier();
        {% for i in range(ITEMS) %}
        st_store(pos[{{ i }}u], vals[{{ i }}u]);
        {% endfor %}
        workgroupBarrier();
        {% for i in range(ITEMS) %}
        {
            let j = {{ i }}u * WG + lid;
            let d = (digits[{{ i }}u / 4u] >> (8u * ({{ i }}u % 4u))) & 255u;
{% block write_value %}
            if (j < valid) { val_out[P.val_out + s_start[d] + j] = st_load(j); }
{% endblock %}
        }
        {% endfor %}
    }
}
{% if subgroups %}
{% include "algorithms/shaders/sort_subgroup.wgsl" %}
{% else %}
{% include "algorithms/shaders/sort_portable.wgsl" %}
{% endif %}
