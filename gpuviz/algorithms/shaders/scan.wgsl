// Single-pass chained prefix scan of packed uint32 with decoupled look-back.
//
// One workgroup scans one tile of TILE rows. Tiles take their index from an
// atomic ticket, so every tile a workgroup waits for has already started.
// A tile publishes its aggregate as soon as it has reduced its rows, then
// looks back over its predecessors' published states: an inclusive prefix
// (or a segment start) ends the walk, aggregates are summed on the way.
// A predecessor that stays unpublished for SPIN_LIMIT polls is reduced from
// its input by the waiting tile itself, so the walk finishes whatever the
// scheduler does (WebGPU promises no forward progress between workgroups).
//
// Spliced before this file: group primitives (Group, Scan4, grp_scan4, the
// entry point) and view accessors for the roles data/heads/out/vals plus
// scatter(k, v) and store_total(v). ROWS (vec4 rows per lane, a multiple of
// four) is substituted before compilation.
//
// State words (zeroed before the first dispatch of a sequence):
//   [0]            ticket counter, shared by the chunk dispatches of a vector
//   [4 + 4t + 0/1] tile t aggregate, low/high 16 bits
//   [4 + 4t + 2/3] tile t inclusive prefix, low/high 16 bits
// Each word is READY | (HEAD if the tile has a segment start) | 16 value bits,
// so every word is self-consistent under relaxed atomics.

const WG: u32 = 256u;
const ROWS: u32 = ${ROWS}u;
const QUADS: u32 = ROWS / 4u;
const TILE: u32 = WG * ROWS * 4u;
const READY: u32 = 0x80000000u;
const HEAD: u32 = 0x40000000u;
const LOW: u32 = 0xffffu;

override INCLUSIVE: bool = false;
override SEGMENTED: bool = false;
override COMPACT: bool = false;         // scatter vals by the scan instead of storing it
override LOOKBACK: u32 = 64u;           // predecessor states read per look-back step (<= 256)
override SPIN_LIMIT: u32 = 512u;        // fruitless polls before reducing a predecessor itself
override SPIN_WINDOW: u32 = 4u;         // states read per step while the nearest is unpublished

// Sizes arrive as uniforms, not overrides, so one pipeline serves every length.
struct ScanParams {
    n: u32,           // rows of this chunk
    tile_base: u32,   // global index of this chunk's first tile
    num_tiles: u32,   // tiles of this chunk (= workgroups)
    total_tile: u32,  // global tile that writes the total (0xffffffff: none)
}

@group(0) @binding(0) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> P: ScanParams;

struct Pair {
    h: u32,  // 1 when a segment starts inside
    v: u32,  // sum since the last segment start
}

fn combine(a: Pair, b: Pair) -> Pair {
    return Pair(a.h | b.h, select(a.v + b.v, b.v, b.h != 0u));
}

var<workgroup> s_ticket: u32;
var<workgroup> s_part_h: array<u32, WG>;
var<workgroup> s_part_v: array<u32, WG>;
var<workgroup> s_agg: Pair;
var<workgroup> s_nr: array<atomic<u32>, 2>;
var<workgroup> s_term: array<atomic<u32>, 2>;
var<workgroup> s_sum: array<atomic<u32>, 2>;
var<workgroup> s_step: vec3<u32>;
var<workgroup> s_fb: array<atomic<u32>, 2>;
var<workgroup> s_fb_res: Pair;

fn canon4(v: vec4<u32>) -> vec4<u32> {
    return select(vec4<u32>(0u), vec4<u32>(1u), v != vec4<u32>(0u));
}

// Rows e..e+3 of the scanned sequence (zero past N); selection flags are
// made canonical 0/1 when compacting.
fn load_data4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (e + 3u < P.n) {
        o = data_get4(e);
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (e + c < P.n) { o[c] = data_get1(e + c); }
        }
    }
    if (COMPACT) { o = canon4(o); }
    return o;
}

fn load_heads4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (SEGMENTED) {
        if (e + 3u < P.n) {
            o = heads_get4(e);
        } else {
            for (var c = 0u; c < 4u; c++) {
                if (e + c < P.n) { o[c] = heads_get1(e + c); }
            }
        }
    }
    return canon4(o);
}

fn load_vals4(e: u32) -> vec4<u32> {
    var o = vec4<u32>(0u);
    if (e + 3u < P.n) {
        o = vals_get4(e);
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (e + c < P.n) { o[c] = vals_get1(e + c); }
        }
    }
    return o;
}

fn store_out4(e: u32, v: vec4<u32>) {
    if (e + 3u < P.n) {
        out_set4(e, v);
    } else {
        for (var c = 0u; c < 4u; c++) {
            if (e + c < P.n) { out_set1(e + c, v[c]); }
        }
    }
}

fn tile_word(t: u32) -> u32 {
    return 4u + 4u * t;
}

fn publish(word: u32, p: Pair) {
    let h = select(0u, HEAD, p.h != 0u);
    atomicStore(&state[word], READY | h | (p.v & LOW));
    atomicStore(&state[word + 1u], READY | h | (p.v >> 16u));
}

// First row (inside the chunk) of this lane's row r in tile `lt`.
fn row_start(g: Group, lt: u32, r: u32) -> u32 {
    return lt * TILE + g.id * (g.size * ROWS * 4u) + r * (g.size * 4u) + g.lane * 4u;
}

// Aggregate of global tile j of this chunk, reduced from its input. Order-free:
// the last segment start is found with atomicMax, then the rows from it on are
// summed with atomicAdd. Publishes the aggregate for other waiting tiles.
fn reduce_tile(g: Group, j: u32) -> Pair {
    let lt = j - P.tile_base;
    if (g.lid == 0u) {
        atomicStore(&s_fb[0], 0u);
        atomicStore(&s_fb[1], 0u);
    }
    workgroupBarrier();
    if (SEGMENTED) {
        var last = 0u;
        for (var r = 0u; r < ROWS; r++) {
            let e = row_start(g, lt, r);
            let hd = load_heads4(e);
            for (var c = 0u; c < 4u; c++) {
                if (hd[c] != 0u) { last = max(last, e + c + 1u - lt * TILE); }
            }
        }
        atomicMax(&s_fb[0], last);
        workgroupBarrier();
    }
    let first = max(atomicLoad(&s_fb[0]), 1u) - 1u;
    var sum = 0u;
    for (var r = 0u; r < ROWS; r++) {
        let e = row_start(g, lt, r);
        let d = load_data4(e);
        for (var c = 0u; c < 4u; c++) {
            if (e + c - lt * TILE >= first) { sum += d[c]; }
        }
    }
    atomicAdd(&s_fb[1], sum);
    workgroupBarrier();
    if (g.lid == 0u) {
        let res = Pair(select(0u, 1u, atomicLoad(&s_fb[0]) != 0u), atomicLoad(&s_fb[1]));
        s_fb_res = res;
        publish(tile_word(j), res);
    }
    return workgroupUniformLoad(&s_fb_res);
}

// Sum of everything before global tile `tile` back to the nearest segment
// start (or the sequence start). Workgroup-uniform.
//
// A step reads LOOKBACK predecessor states, but only SPIN_WINDOW while the
// nearest one is still unpublished, so waiting tiles do not flood the cache
// lines that publishing tiles write.
fn look_back(g: Group, tile: u32) -> u32 {
    var look = tile;  // tiles look..tile-1 are already summed into acc
    var acc = 0u;
    var spins = 0u;
    var it = 0u;
    var window = LOOKBACK;
    if (g.lid < 2u) {
        atomicStore(&s_nr[g.lid], LOOKBACK);
        atomicStore(&s_term[g.lid], LOOKBACK);
        atomicStore(&s_sum[g.lid], 0u);
    }
    workgroupBarrier();
    loop {
        let par = it & 1u;
        var val = 0u;
        diag_add(g, 1u, 1u);
        if (g.lid < window) {
            var kind = 0u;  // 0 unpublished, 1 aggregate, 2 terminal (prefix or segment start)
            if (g.lid >= look) {
                kind = 2u;  // before the first tile: the empty prefix
            } else {
                let w = tile_word(look - 1u - g.lid);
                let a0 = atomicLoad(&state[w]);
                let a1 = atomicLoad(&state[w + 1u]);
                let p0 = atomicLoad(&state[w + 2u]);
                let p1 = atomicLoad(&state[w + 3u]);
                if ((p0 & p1 & READY) != 0u) {
                    kind = 2u;
                    val = (p0 & LOW) | ((p1 & LOW) << 16u);
                } else if ((a0 & a1 & READY) != 0u) {
                    kind = select(1u, 2u, ((a0 | a1) & HEAD) != 0u);
                    val = (a0 & LOW) | ((a1 & LOW) << 16u);
                }
            }
            if (kind == 0u) { atomicMin(&s_nr[par], g.lid); }
            if (kind == 2u) { atomicMin(&s_term[par], g.lid); }
        }
        workgroupBarrier();
        if (g.lid < window) {
            let nr = atomicLoad(&s_nr[par]);
            let term = atomicLoad(&s_term[par]);
            let used = select(nr, term + 1u, term < nr);
            if (g.lid < used) { atomicAdd(&s_sum[par], val); }
        }
        workgroupBarrier();
        if (g.lid == 0u) {
            let nr = atomicLoad(&s_nr[par]);
            s_step = vec3<u32>(nr, atomicLoad(&s_term[par]), atomicLoad(&s_sum[par]));
            let next = select(LOOKBACK, min(SPIN_WINDOW, LOOKBACK), nr == 0u);
            let nx = 1u - par;
            atomicStore(&s_nr[nx], next);
            atomicStore(&s_term[nx], next);
            atomicStore(&s_sum[nx], 0u);
        }
        let step = workgroupUniformLoad(&s_step);
        acc += step.z;
        if (step.y < step.x) { break; }
        look -= step.x;
        spins = select(0u, spins + 1u, step.x == 0u);
        window = select(LOOKBACK, min(SPIN_WINDOW, LOOKBACK), step.x == 0u);
        if (step.x == 0u) { diag_add(g, 2u, 1u); }
        if (spins > SPIN_LIMIT) {
            diag_add(g, 3u, 1u);
            let p = reduce_tile(g, look - 1u);
            acc += p.v;
            if (p.h != 0u) { break; }
            look -= 1u;
            spins = 0u;
            window = LOOKBACK;
            if (g.lid == 0u) {  // the slots were sized for a spin window
                atomicStore(&s_nr[1u - par], LOOKBACK);
                atomicStore(&s_term[1u - par], LOOKBACK);
            }
            workgroupBarrier();
        }
        it += 1u;
    }
    return acc;
}

fn kernel_main(g: Group, wg: u32) {
    if (wg >= P.num_tiles) { return; }
    if (g.lid == 0u) { s_ticket = atomicAdd(&state[0], 1u); }
    let tile = workgroupUniformLoad(&s_ticket);
    let lt = tile - P.tile_base;

    // Issue every load of the tile before using any: in a full tile the loads
    // are unconditional, so they are all in flight at once (a bounds test per
    // row would serialize their latencies).
    var x: array<vec4<u32>, ROWS>;
    var hd: array<vec4<u32>, ROWS>;
    var vals: array<vec4<u32>, ROWS>;
    if ((lt + 1u) * TILE <= P.n) {
        for (var r = 0u; r < ROWS; r++) {
            let e = row_start(g, lt, r);
            x[r] = data_get4(e);
            if (SEGMENTED) { hd[r] = heads_get4(e); } else { hd[r] = vec4<u32>(0u); }
            if (COMPACT) { vals[r] = vals_get4(e); }
        }
        for (var r = 0u; r < ROWS; r++) {
            if (COMPACT) { x[r] = canon4(x[r]); }
            hd[r] = canon4(hd[r]);
        }
    } else {
        for (var r = 0u; r < ROWS; r++) {
            let e = row_start(g, lt, r);
            x[r] = load_data4(e);
            hd[r] = load_heads4(e);
            if (COMPACT) { vals[r] = load_vals4(e); }
        }
    }
    diag_add(g, 0u, 1u);

    // Lane totals of each row (pairs), four rows to a vec4.
    var th: array<vec4<u32>, QUADS>;
    var tv: array<vec4<u32>, QUADS>;
    for (var r = 0u; r < ROWS; r++) {
        var t = Pair(hd[r].x, x[r].x);
        t = combine(t, Pair(hd[r].y, x[r].y));
        t = combine(t, Pair(hd[r].z, x[r].z));
        t = combine(t, Pair(hd[r].w, x[r].w));
        th[r / 4u][r % 4u] = t.h;
        tv[r / 4u][r % 4u] = t.v;
    }

    // Scan across the group's lanes, chaining rows inside the group.
    var run = Pair(0u, 0u);
    for (var q = 0u; q < QUADS; q++) {
        let s = grp_scan4(g, th[q], tv[q]);
        for (var k = 0u; k < 4u; k++) {
            let pre = combine(run, Pair(s.ex_h[k], s.ex_v[k]));
            th[q][k] = pre.h;
            tv[q][k] = pre.v;
            run = combine(run, Pair(s.tot_h[k], s.tot_v[k]));
        }
    }

    // Chain the groups of the workgroup.
    if (g.lane == 0u) {
        s_part_h[g.id] = run.h;
        s_part_v[g.id] = run.v;
    }
    workgroupBarrier();
    var gpre = Pair(0u, 0u);
    var agg = Pair(0u, 0u);
    for (var k = 0u; k < g.count; k++) {
        if (k == g.id) { gpre = agg; }
        agg = combine(agg, Pair(s_part_h[k], s_part_v[k]));
    }
    if (g.lid == 0u) {
        s_agg = agg;
        publish(tile_word(tile), agg);
        if (tile == 0u || agg.h != 0u) { publish(tile_word(tile) + 2u, Pair(0u, agg.v)); }
    }
    let tagg = workgroupUniformLoad(&s_agg);

    // Rows before the tile's first segment start need the carry even when the
    // tile's own inclusive prefix (published above) does not.
    var carry = 0u;
    if (tile != 0u) {
        carry = look_back(g, tile);
        if (g.lid == 0u && tagg.h == 0u) { publish(tile_word(tile) + 2u, Pair(0u, carry + tagg.v)); }
    }
    if (tile == P.total_tile && g.lid == 0u) {
        store_total(select(carry + tagg.v, tagg.v, tagg.h != 0u));
    }

    for (var r = 0u; r < ROWS; r++) {
        let e = row_start(g, lt, r);
        let pre = combine(gpre, Pair(th[r / 4u][r % 4u], tv[r / 4u][r % 4u]));
        var acc = select(carry + pre.v, pre.v, pre.h != 0u);
        var ex: vec4<u32>;
        var inc: vec4<u32>;
        for (var c = 0u; c < 4u; c++) {
            if (hd[r][c] != 0u) { acc = 0u; }
            ex[c] = acc;
            acc += x[r][c];
            inc[c] = acc;
        }
        if (COMPACT) {
            for (var c = 0u; c < 4u; c++) {
                if (x[r][c] != 0u) { scatter(ex[c], vals[r][c]); }
            }
        } else {
            store_out4(e, select(ex, inc, INCLUSIVE));
        }
    }
}
