{# GPUVisibilityWorkflow's kernel with a benchmark probe: the workflow's
   template (workflows/shaders/visibility.wgsl) with some of its blocks
   replaced, rendered by gpuviz.bench.visibility_probes.ProbedVisibility
   with the workflow's values plus `probe`. Outputs are not the
   workflow's:

   "unordered" takes each tile's base from one atomic counter instead of
   the look-back (kept IDs in tile blocks of any order, count wrong),
   "nowrite" skips the ID writes, "bare" both, "coalesced" writes as many
   words to the same places but by consecutive lanes (wrong IDs): what the
   look-back, the writes and their pattern cost; "resident" is the
   workflow, except that `count` receives the most workgroups ever running
   at once (occupancy: a running count and its high-water mark); "" is the
   workflow. The counters are two state words past the tiles' (reserved
   before lagged placement's bits; unordered, bare: per epoch parity, the
   last ticket of an epoch clears the next one's). #}
{% extends "workflows/shaders/visibility.wgsl" %}

{% block look_back %}{{ "false" if probe in ("unordered", "bare") else "true" }}{% endblock %}

{% block epoch_opened %}
{% if probe in ("unordered", "bare") %}
        atomicStore(&state[probe_counter(((ticket >> EPOCH_SHIFT) & 1u) == 0u)], 0u);  // the next epoch's
{% endif %}
{% endblock %}

{% block functions %}
{% if probe in ("unordered", "bare", "resident") %}
// The probe's counter of the epochs of one parity (two words after the tile states).
fn probe_counter(odd: bool) -> u32 { return 1u + 3u * (P.last_tile + 1u) + select(0u, 1u, odd); }
{% endif %}
{% endblock %}

{% block tile_base %}
{% if probe in ("unordered", "bare") %}
    if (g.lid == 0u) { s_step.x = atomicAdd(&state[probe_counter((ep_tag & PARITY) != 0u)], kept); }
    base = workgroupUniformLoad(&s_step).x;
{% endif %}
{% endblock %}

{% block write_ids %}
{% if probe in ("nowrite", "bare") %}
    return;
{% endif %}
{% if probe == "coalesced" %}
    // the same number of words at the same places, written by consecutive lanes (wrong values)
    for (var k = g.lid; k < kb.x; k += WG) { scatter(kb.y + k, row_id(lt * TILE + k)); }
    return;
{% endif %}
{% endblock %}

{% block reserved_words %}{{ 2 if probe else 0 }}{% endblock %}

{% block kernel_start %}
{% if probe == "resident" %}
    if (g.lid == 0u) { atomicMax(&state[probe_counter(true)], atomicAdd(&state[probe_counter(false)], 1u) + 1u); }
{% endif %}
{% endblock %}

{% block lagged_end %}
{% if probe == "resident" %}
    if (g.lid == 0u) {
        atomicSub(&state[probe_counter(false)], 1u);
        if (slot == P.num_tiles + P.lag - 1u && P.tile_base + P.num_tiles - 1u == P.last_tile) {
            count_set1(0u, atomicLoad(&state[probe_counter(true)]));
        }
    }
{% endif %}
{% endblock %}

{% block kernel_end %}
{% if probe == "resident" %}
    if (g.lid == 0u) {
        atomicSub(&state[probe_counter(false)], 1u);
        if (tile == P.last_tile) { count_set1(0u, atomicLoad(&state[probe_counter(true)])); }
    }
{% endif %}
{% endblock %}
