// Ranking of the radix scatter (included by sort_radix.wgsl, whose template
// values and declarations it uses): the subgroup ranker and the portable one.

// ---------------------------------------------------------------- ranking
// Both rankers take the digits of the invocation's rows and leave in `pos`
// the row's place in the tile sorted stably by digit; they fill s_start and
// return the tile's count of digit `lid`.

fn lanes_below(n: u32) -> vec4<u32> {
    var m = vec4<u32>(0u);
    for (var c = 0u; c < 4u; c++) {
        let bits = clamp(i32(n) - i32(32u * c), 0, 32);
        m[c] = select((1u << u32(bits)) - 1u, 0xffffffffu, bits == 32);
    }
    return m;
}

fn popcount4(v: vec4<u32>) -> u32 {
    let c = countOneBits(v);
    return c.x + c.y + c.z + c.w;
}

fn first_lane(v: vec4<u32>) -> u32 {
    if (v.x != 0u) { return countTrailingZeros(v.x); }
    if (v.y != 0u) { return 32u + countTrailingZeros(v.y); }
    if (v.z != 0u) { return 64u + countTrailingZeros(v.z); }
    return 96u + countTrailingZeros(v.w);
}

// Lanes (of a subgroup of up to 32) whose digit equals this lane's `d`: one
// ballot per digit bit, written out (Naga's loop bounding can keep a driver
// from unrolling the loop form).
fn same_digit_lanes(d: u32, live: u32) -> u32 {
    let b0 = (d & 1u) != 0u;
    let b1 = (d & 2u) != 0u;
    let b2 = (d & 4u) != 0u;
    let b3 = (d & 8u) != 0u;
    let b4 = (d & 16u) != 0u;
    let b5 = (d & 32u) != 0u;
    let b6 = (d & 64u) != 0u;
    let b7 = (d & 128u) != 0u;
    let v0 = sg_ballot(b0).x;
    let v1 = sg_ballot(b1).x;
    let v2 = sg_ballot(b2).x;
    let v3 = sg_ballot(b3).x;
    let v4 = sg_ballot(b4).x;
    let v5 = sg_ballot(b5).x;
    let v6 = sg_ballot(b6).x;
    let v7 = sg_ballot(b7).x;
    return live & select(~v0, v0, b0) & select(~v1, v1, b1) & select(~v2, v2, b2) & select(~v3, v3, b3)
                & select(~v4, v4, b4) & select(~v5, v5, b5) & select(~v6, v6, b6) & select(~v7, v7, b7);
}

// Subgroup ranking: subgroup w owns rows [w*sg*ITEMS, (w+1)*sg*ITEMS) of the
// tile, round k its rows k*sg + lane. Eight ballots find the lanes with the
// same digit; the lowest of them adds their number to the subgroup's counter.
// Subgroups of up to 32 lanes keep the masks in one word.
fn rank_subgroup(lid: u32, sg: u32, keys: ptr<function, array<u32, ITEMS>>,
                 pos: ptr<function, array<u32, ITEMS>>, valid: u32) -> u32 {
    let warps = WG / sg;
    let w = lid / sg;
    let lane = lid % sg;
    for (var i = lid; i < warps * 128u; i += WG) { cnt_store(i, 0u); }
    workgroupBarrier();
    if (sg <= 32u) {  // one ballot word: scalar masks (the common case, and 4x fewer operations)
        let below_me = (1u << lane) - 1u;
        let live = select((1u << sg) - 1u, 0xffffffffu, sg == 32u);
        if (BALLOTS_FIRST) {
            // All rows' ballots, then all counter atomics, then all shuffles:
            // the rows' chains overlap instead of running one after another.
            // pos holds digit << 16 | rows before this one << 5 | leader lane.
            var pre: array<u32, ITEMS>;
            {% for i in range(ITEMS) %}
            {
                let d = select(255u, digit_of((*keys)[{{ i }}u]), (*pos)[{{ i }}u] < valid);
                let peers = same_digit_lanes(d, live);
                (*pos)[{{ i }}u] = (d << 16u) | (countOneBits(peers & below_me) << 5u) | countTrailingZeros(peers);
                pre[{{ i }}u] = countOneBits(peers);
            }
            {% endfor %}
            {% for i in range(ITEMS) %}
            if ((((*pos)[{{ i }}u] >> 5u) & 2047u) == 0u) {
                let d = (*pos)[{{ i }}u] >> 16u;
                let sh = (d & 1u) * 16u;
                pre[{{ i }}u] = (cnt_add(w * 128u + (d >> 1u), pre[{{ i }}u] << sh) >> sh) & 0xffffu;
            }
            {% endfor %}
            {% for i in range(ITEMS) %}
            (*pos)[{{ i }}u] = (sg_shuffle(pre[{{ i }}u], (*pos)[{{ i }}u] & 31u) + (((*pos)[{{ i }}u] >> 5u) & 2047u)) | ((*pos)[{{ i }}u] & 0xffff0000u);
            {% endfor %}
        } else {
        {% for i in range(ITEMS) %}
        {
            let d = select(255u, digit_of((*keys)[{{ i }}u]), (*pos)[{{ i }}u] < valid);
            let peers = same_digit_lanes(d, live);
            let before = countOneBits(peers & below_me);
            var pre = 0u;
            if (before == 0u) {
                let sh = (d & 1u) * 16u;
                pre = (cnt_add(w * 128u + (d >> 1u), countOneBits(peers) << sh) >> sh) & 0xffffu;
            }
            (*pos)[{{ i }}u] = (sg_shuffle(pre, countTrailingZeros(peers)) + before) | (d << 16u);
        }
        {% endfor %}
        }
    } else {
        let below_me = lanes_below(lane);
        let live = lanes_below(sg);
        {% for i in range(ITEMS) %}
        {
            let d = select(255u, digit_of((*keys)[{{ i }}u]), (*pos)[{{ i }}u] < valid);
            var peers = live;
            for (var b = 0u; b < 8u; b++) {  // subgroups over 32 lanes: rare, left a loop
                let bit = ((d >> b) & 1u) != 0u;
                let ballot = sg_ballot(bit);
                peers &= select(~ballot, ballot, bit);
            }
            let before = popcount4(peers & below_me);
            var pre = 0u;
            if (before == 0u) {
                let sh = (d & 1u) * 16u;
                pre = (cnt_add(w * 128u + (d >> 1u), popcount4(peers) << sh) >> sh) & 0xffffu;
            }
            (*pos)[{{ i }}u] = (sg_shuffle(pre, first_lane(peers)) + before) | (d << 16u);
        }
        {% endfor %}
    }
    workgroupBarrier();
    if (lid < 128u) {  // exclusive over subgroups, two digits per word
        var run = 0u;
        for (var v = 0u; v < warps; v++) {
            let c = cnt_load(v * 128u + lid);
            cnt_store(v * 128u + lid, run);
            run += c;
        }
        s_start[2u * lid] = run & 0xffffu;
        s_start[2u * lid + 1u] = run >> 16u;
    }
    workgroupBarrier();
    let count = s_start[lid];
    let start = wg_scan(lid, count, sg).x;
    s_start[lid] = start;
    workgroupBarrier();
    if (lid < 128u) {  // fold the digits' tile starts into the counters (both stay below TILE < 2^16)
        let add = s_start[2u * lid] | (s_start[2u * lid + 1u] << 16u);
        for (var v = 0u; v < warps; v++) { cnt_add(v * 128u + lid, add); }
    }
    workgroupBarrier();
    {% for i in range(ITEMS) %}
    {
        let d = (*pos)[{{ i }}u] >> 16u;
        let sh = (d & 1u) * 16u;
        (*pos)[{{ i }}u] = ((*pos)[{{ i }}u] & 0xffffu) + ((cnt_load(w * 128u + (d >> 1u)) >> sh) & 0xffffu);
    }
    {% endfor %}
    workgroupBarrier();
    return count;
}

// Portable ranking: eight stable one-bit splits of (digit << 16 | row) in
// workgroup memory, each a workgroup prefix sum. Rows are striped: round k
// of invocation lid is row k*WG + lid.
fn rank_split(lid: u32, keys: ptr<function, array<u32, ITEMS>>, pos: ptr<function, array<u32, ITEMS>>,
              valid: u32) -> u32 {
    {% for i in range(ITEMS) %}
    st_store((*pos)[{{ i }}u], (select(255u, digit_of((*keys)[{{ i }}u]), (*pos)[{{ i }}u] < valid) << 16u) | (*pos)[{{ i }}u]);
    {% endfor %}
    workgroupBarrier();
    var e: array<u32, ITEMS>;
    for (var b = 16u; b < 24u; b++) {
        var zeros = 0u;
        {% for i in range(ITEMS) %}
        e[{{ i }}u] = st_load(lid * ITEMS + {{ i }}u);
        zeros += 1u - ((e[{{ i }}u] >> b) & 1u);
        {% endfor %}
        let sc = wg_scan(lid, zeros, 0u);  // its barriers order these reads before the writes below
        var z = sc.x;
        {% for i in range(ITEMS) %}
        {
            var dst = sc.y + lid * ITEMS + {{ i }}u - z;
            if (((e[{{ i }}u] >> b) & 1u) == 0u) {
                dst = z;
                z += 1u;
            }
            st_store(dst, e[{{ i }}u]);
        }
        {% endfor %}
        workgroupBarrier();
    }
    s_start[lid] = 0u;
    atomicStore(&s_aux[lid], 0u);
    workgroupBarrier();
    {% for i in range(ITEMS) %}
    {
        let j = lid * ITEMS + {{ i }}u;
        e[{{ i }}u] = st_load(j);
        let d = e[{{ i }}u] >> 16u;
        if (j == 0u || (st_load(j - 1u) >> 16u) != d) { s_start[d] = j; }
        if (j == TILE - 1u || (st_load(j + 1u) >> 16u) != d) { atomicStore(&s_aux[d], j + 1u); }
    }
    {% endfor %}
    workgroupBarrier();
    let count = atomicLoad(&s_aux[lid]) - s_start[lid];
    {% for i in range(ITEMS) %}
    st_store(e[{{ i }}u] & 0xffffu, lid * ITEMS + {{ i }}u);
    {% endfor %}
    workgroupBarrier();
    {% for i in range(ITEMS) %}
    (*pos)[{{ i }}u] = st_load((*pos)[{{ i }}u]);
    {% endfor %}
    workgroupBarrier();
    return count;
}
