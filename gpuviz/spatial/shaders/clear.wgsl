{#- The clear entry point of the grid build, grid query and point filter
    kernels, imported ({% import ... as clear %}); renders nothing itself.
    kernel(rows, store): linear() (the invocation's row over a 2-D dispatch
    of 256-wide workgroups) and clear, which zeroes the 8 statistics words at
    P.stats_off and, when rows is given, runs the WGSL statement store for
    every row s < rows (the WGSL expression rows). -#}
{% macro kernel(rows=none, store=none) %}
fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 256u;
}

@compute @workgroup_size(256)
fn clear(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear(gid, nwg);
    if (s < 8u) {
        atomicStore(&stats[P.stats_off + s], 0u);
    }
{% if rows %}
    if (s < {{ rows }}) {
        {{ store }}
    }
{% endif %}
}
{% endmacro %}
