{# The decoupled look-back, one copy for every kernel that chains tiles with
   it: the chained scan (scan.wgsl), GPUVisibilityWorkflow
   (workflows/shaders/visibility.wgsl) and the radix sort's per-digit scan
   (sort_radix.wgsl). Imported as
   {% import "algorithms/shaders/look_back.wgsl" as look_back %}:
   workgroup_state() renders the walks' workgroup variables, each walk macro
   one WGSL function, `look_back` or `look_back_group`.

   The protocol. Tiles take their index from an atomic ticket, so every tile
   a tile waits for has started. A tile publishes its aggregate (its own
   value) as soon as it has it, then walks back over its predecessors'
   states: an aggregate is added and the walk goes on, a terminal state (an
   inclusive prefix, or whatever else ends the chain: the scan's segment
   start) is added and ends it, an unpublished one is polled again. The
   value summed before the tile (its exclusive prefix) plus its own is its
   inclusive prefix, which it publishes for its successors. WebGPU promises
   no forward progress between workgroups: a predecessor that stays
   unpublished for SPIN_LIMIT polls is reduced from its input by the
   waiting workgroup itself (and published for other waiters), and the walk
   goes on past it. Values are u32 sums; a kernel whose tile value carries
   more (the scan's segment heads) keeps the rest in its hooks.

   Hooks of walk_workgroup and walk_group (walk_lanes says its own) are the
   including kernel's: WGSL names it defines, and jinja macros it passes in
   (each renders WGSL statements inside the walk's loop, where `g`, `tile`,
   `look` and `acc` are the workgroup's Group, its tile, the predecessor
   below the last one summed and the sum so far; `own`, when given, names
   the tile's aggregate and its type, the hooks' value type):
     inspect(j: u32) -> vec2<u32>   (WGSL) predecessor tile j's state: kind 0
                                    unpublished, 1 aggregate, 2 terminal; its value
     reduce(j, when)                adds predecessor `j`, reduced from its input
                                    by the whole workgroup (and published), to
                                    `acc`; leaves the loop (break) where that
                                    tile ends the chain, publishing the tile's
                                    inclusive prefix first when `when` holds
     publish(when, prefix)          publishes the tile's inclusive prefix, its
                                    exclusive prefix being `prefix`, when `when`
                                    holds
     count(i)                       optional diagnostics: 1 a step, 2 a fruitless
                                    step, 3 a predecessor reduced by the waiter
   The workgroup walks read the WGSL constants or overrides LOOKBACK,
   SPIN_WINDOW and SPIN_LIMIT and the workgroup state of workgroup_state(). #}

{# The workgroup variables of walk_workgroup and walk_group: a step's nearest
   unpublished and nearest terminal lane and the sum up to it (double-buffered
   by step parity), and the step's result for a uniform read. #}
{% macro workgroup_state() %}
var<workgroup> s_nr: array<atomic<u32>, 2>;
var<workgroup> s_term: array<atomic<u32>, 2>;
var<workgroup> s_sum: array<atomic<u32>, 2>;
var<workgroup> s_step: vec3<u32>;
{% endmacro %}

{# `fn look_back(g: Group, tile: u32[, own]) -> u32`: the exclusive prefix of
   global tile `tile` (> 0), walked by the whole workgroup (devices without
   subgroups); workgroup-uniform. A step reads LOOKBACK predecessor states,
   only `narrow` (a WGSL expression: SPIN_WINDOW, at most LOOKBACK) while the
   nearest one is still unpublished, so waiting tiles do not flood the cache
   lines that publishing tiles write. own: an extra parameter ("name: type",
   the tile's aggregate) the hooks read; early: a WGSL bool under which lane
   0 publishes the inclusive prefix the moment it sees the walk end (one
   barrier earlier than its caller could), else none. #}
{% macro walk_workgroup(reduce, narrow, own=none, publish=none, early=none, count=none) %}
fn look_back(g: Group, tile: u32{{ ", " ~ own if own }}) -> u32 {
    var look = tile;  // tiles look..tile-1 are summed into acc
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
{% if count %}
        {{ count(1) }}
{% endif %}
        if (g.lid < window) {
            var kind = 2u;  // before the first tile: the empty prefix
            if (g.lid < look) {
                let st = inspect(look - 1u - g.lid);
                kind = st.x;
                val = st.y;
            }
            if (kind == 0u) { atomicMin(&s_nr[par], g.lid); }
            if (kind == 2u) { atomicMin(&s_term[par], g.lid); }
        }
        workgroupBarrier();
        if (g.lid < window) {
            let nr = atomicLoad(&s_nr[par]);
            let term = atomicLoad(&s_term[par]);
            if (g.lid < select(nr, term + 1u, term < nr)) { atomicAdd(&s_sum[par], val); }
        }
        workgroupBarrier();
        if (g.lid == 0u) {
            let nr = atomicLoad(&s_nr[par]);
            s_step = vec3<u32>(nr, atomicLoad(&s_term[par]), atomicLoad(&s_sum[par]));
{% if early %}
            {{ publish(early ~ " && s_step.y < nr", "acc + s_step.z") }}
{% endif %}
            let next = select(LOOKBACK, {{ narrow }}, nr == 0u);  // the next step's window
            atomicStore(&s_nr[1u - par], next);
            atomicStore(&s_term[1u - par], next);
            atomicStore(&s_sum[1u - par], 0u);
        }
        let step = workgroupUniformLoad(&s_step);
        acc += step.z;
        if (step.y < step.x) { break; }
        look -= step.x;
        spins = select(0u, spins + 1u, step.x == 0u);
        window = select(LOOKBACK, {{ narrow }}, step.x == 0u);
{% if count %}
        if (step.x == 0u) { {{ count(2) }} }
{% endif %}
        if (spins > SPIN_LIMIT) {
{% if count %}
            {{ count(3) }}
{% endif %}
            {{ reduce("look - 1u", (early ~ " && g.lid == 0u") if early else "false") }}
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
{% endmacro %}

{# `fn look_back_group(g: Group, tile: u32, own) -> u32`: walk_workgroup's
   result with the walk run by subgroup 0 alone (where subgroups exist), no
   workgroup barrier per step: lane i inspects predecessor look-1-i,
   subgroup minima find the nearest unpublished and the nearest terminal
   state, a subgroup sum adds the states up to it. The other subgroups wait
   once; after SPIN_LIMIT fruitless polls the whole workgroup reduces the
   stalled predecessor, then the walk resumes. Publishes the inclusive
   prefix the moment it is known (successors wait on it). wide: states a
   step reads (a WGSL expression, at most g.size); SPIN_WINDOW of them while
   the nearest is unpublished. #}
{% macro walk_group(reduce, publish, own, wide, count=none) %}
fn look_back_group(g: Group, tile: u32, {{ own }}) -> u32 {
    var look = tile;
    var acc = 0u;
    loop {
        if (g.id == 0u) {
            var window = {{ wide }};
            var spins = 0u;
            var done = 0u;
            loop {
{% if count %}
                {{ count(1) }}
{% endif %}
                var st = vec2<u32>(1u, 0u);  // lanes past the window: neutral
                if (g.lane < window) {
                    st = vec2<u32>(2u, 0u);  // before the first tile: the empty prefix
                    if (g.lane < look) { st = inspect(look - 1u - g.lane); }
                }
                let nr = min(window, grp_min(select(g.size, g.lane, st.x == 0u)));
                let term = grp_min(select(g.size, g.lane, st.x == 2u));
                let used = select(nr, term + 1u, term < nr);
                acc += grp_add(select(0u, st.y, g.lane < used));
                if (term < nr) {
                    done = 1u;
                    break;
                }
                look -= nr;
                if (nr == 0u) {
{% if count %}
                    {{ count(2) }}
{% endif %}
                    spins += 1u;
                    window = min(SPIN_WINDOW, {{ wide }});
                    if (spins > SPIN_LIMIT) { break; }
                } else {
                    spins = 0u;
                    window = {{ wide }};
                }
            }
            if (g.lane == 0u) {
                s_step = vec3<u32>(look, acc, done);
                {{ publish("done != 0u", "acc") }}
            }
        }
        let r = workgroupUniformLoad(&s_step);
        look = r.x;
        acc = r.y;
        if (r.z != 0u) { break; }
{% if count %}
        {{ count(3) }}
{% endif %}
        {{ reduce("look - 1u", "g.lid == 0u") }}
        look -= 1u;
    }
    return acc;
}
{% endmacro %}

{# `fn look_back(lid: u32, tile: u32, sg: u32, lane: u32) -> u32`: one chain
   per invocation (the sort's per-digit scan: invocation `lid` sums digit
   `lid` over tiles 0..tile-1, plus the chain's origin). Rounds are
   workgroup-uniform; in a round each invocation reads the `window` (a
   number: the template unrolls them, all loads issued together)
   predecessors below the last one it summed (the WGSL constant LOOKBACK
   equals `window`) and sums them down to the first inclusive one, or stops at the first unpublished one without
   blocking. An invocation's state word of a tile is FLAG_INC | its
   inclusive prefix, FLAG_AGG | the tile's own value, or below FLAG_AGG
   while unpublished (VALUE masks the value; WGSL constants of the
   includer). A round ends in one workgroup decision (a request per
   subgroup through s_req, read back through s_ctrl): every chain done,
   still summing, or a predecessor stalled SPIN_LIMIT rounds, which the
   whole workgroup then reduces, every chain waiting on it adding its value
   (the first tile's chains their origin too, and end there). Hooks:
   status(j) the WGSL reference of this invocation's state word of tile j;
   reduce(j) this invocation's value of tile j, reduced from its input by
   the whole workgroup; origin() the chain's value before the first tile
   (workgroup-uniform control flow; `sg` is for it). #}
{% macro walk_lanes(window, status, reduce, origin) %}
fn look_back(lid: u32, tile: u32, sg: u32, lane: u32) -> u32 {
    var prefix = 0u;
    var t = tile - 1u;  // the next predecessor to sum
    var done = false;
    var waited = 0u;
    loop {
        if (!done) {
            var win: array<u32, LOOKBACK>;
{% for i in range(window) %}
            win[{{ i }}u] = 0u;
            if ({{ i }}u <= t) { win[{{ i }}u] = atomicLoad(&{{ status("t - %du" % i) }}); }
{% endfor %}
            var open = true;
            var used = 0u;
{% for i in range(window) %}
            if (open) {
                let s = win[{{ i }}u];
                if (s < FLAG_AGG) {
                    open = false;
                } else {
                    prefix += s & VALUE;
                    used += 1u;
                    if (s >= FLAG_INC) {
                        done = true;
                        open = false;
                    }
                }
            }
{% endfor %}
            t -= used;
            if (!done) { waited = select(0u, waited + 1u, used == 0u); }
        }
        // Request: 0 done, 1 still summing, 0x80000000 | t a stalled predecessor
        // t; the workgroup takes the largest. One shared atomic per subgroup.
        var req = 0u;
        if (!done) { req = select(1u, 0x80000000u | t, waited > SPIN_LIMIT); }
        req = sg_max(req);
        if (lane == 0u && req != 0u) { atomicMax(&s_req, req); }
        workgroupBarrier();
        if (lid == 0u) { s_ctrl = atomicExchange(&s_req, 0u); }
        let ctrl = workgroupUniformLoad(&s_ctrl);
        if (ctrl == 0u) { break; }
        if (ctrl >= 0x80000000u) {  // a predecessor is slow: reduce it here
            let ft = ctrl & 0x7fffffffu;
            let c = {{ reduce("ft") }};
            var base = 0u;
            if (ft == 0u) { base = {{ origin() }}; }
            if (!done && t == ft) {
                prefix += c;
                waited = 0u;
                if (ft == 0u) {
                    prefix += base;
                    done = true;
                    atomicMax(&{{ status("ft") }}, FLAG_INC | (base + c));
                } else {
                    atomicMax(&{{ status("ft") }}, FLAG_AGG | c);
                    t -= 1u;
                }
            }
        }
    }
    return prefix;
}
{% endmacro %}
