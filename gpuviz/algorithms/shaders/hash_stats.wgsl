{#- Imported by the hash-table kernels ({% import ... as hash_stats %}); renders nothing itself. -#}
{#- flush(count, max_at, sum_at): after a barrier, workgroup counter li < count is added into
    stats[P.stats_off + li] once per workgroup: counter max_at by atomicMax, counter sum_at as the
    low word of a (low, high) pair with carry, every other by atomicAdd. Needs li, counters,
    stats, P.stats_off and carry_of in the including kernel. -#}
{% macro flush(count, max_at, sum_at) %}
    if (li < {{ count }}u) {
        let v = atomicLoad(&counters[li]);
        if (v != 0u) {
            let at = P.stats_off + li;
            if (li == {{ max_at }}u) {
                atomicMax(&stats[at], v);
            } else if (li == {{ sum_at }}u) {
                let old = atomicAdd(&stats[at], v);
                if (carry_of(old, v) != 0u) { atomicAdd(&stats[at + 1u], 1u); }
            } else {
                atomicAdd(&stats[at], v);
            }
        }
    }
{% endmacro %}
