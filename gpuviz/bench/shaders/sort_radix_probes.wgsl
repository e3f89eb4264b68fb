{# The radix sort's kernels with timing probes (gpuviz.bench.sort_profile):
   the sort's template (algorithms/shaders/sort_radix.wgsl) with blocks of
   its scatter pass replaced, each probe (template value `probes`, a tuple)
   removing a part of the work: "no-lookback" guesses the offsets from the
   digit histogram (writes then clamped), "no-ranking" replaces the subgroup
   ranking by a fixed split, "coalesced-writes" and "lookup-writes" write
   each row to its own row of the output, without or with reading its
   digit's offset. Their output is wrong by design: they bound what each
   part costs. #}
{% extends "algorithms/shaders/sort_radix.wgsl" %}

{% block rank_subgroup %}
{% if "no-ranking" in probes %}
        count = TILE / 256u; s_start[lid] = lid * (TILE / 256u); workgroupBarrier();
{% else %}
{{ super() }}
{% endif %}
{% endblock %}

{% block prefix %}
{% if "no-lookback" in probes %}
        prefix = wg_scan(lid, atomicLoad(&state[HIST + P.pass_index * 256u + lid]), sg).x + tile * (TILE / 256u);
{% else %}
{{ super() }}
{% endif %}
{% endblock %}

{% block write_key %}
{% if "coalesced-writes" in probes %}
        if (j < valid) { key_out[P.key_out + base + j] = key + s_start[d] * 0u; }
{% elif "lookup-writes" in probes %}
        if (j < valid) { key_out[P.key_out + base + j] = key ^ s_start[d]; }
{% elif "no-lookback" in probes %}
        if (j < valid) { key_out[min(P.key_out + s_start[d] + j, P.key_out + P.n - 1u)] = key; }
{% else %}
{{ super() }}
{% endif %}
{% endblock %}

{% block write_value %}
{% if "coalesced-writes" in probes %}
            if (j < valid) { val_out[P.val_out + base + j] = st_load(j); }
{% elif "lookup-writes" in probes %}
            if (j < valid) { val_out[P.val_out + base + j] = st_load(j) ^ s_start[d]; }
{% elif "no-lookback" in probes %}
            if (j < valid) { val_out[min(P.val_out + s_start[d] + j, P.val_out + P.n - 1u)] = st_load(j); }
{% else %}
{{ super() }}
{% endif %}
{% endblock %}
