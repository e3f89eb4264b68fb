{#- The node code both BVH refits share (bvh.wgsl, bvh_segmented.wgsl), imported
    ({% import ... as bvh_nodes %}); renders nothing itself. A node is 8 words
    at P.nodes_off + 8 * (its index in the node buffer): min.xyz, pad, max.xyz,
    pad. Needs P.nodes_off, nodes, minimum, maximum, P.min_off, P.max_off,
    stats, P.stats_off, DIMS and is_finite in the including kernel. -#}

{#- node_min, node_max and store_node of tree node i; at: the WGSL expression of
    its index in the node buffer. -#}
{% macro accessors(at) %}
fn node_min(i: u32) -> vec3<f32> {
    let b = P.nodes_off + 8u * {{ at }};
    return vec3<f32>(nodes[b], nodes[b + 1u], nodes[b + 2u]);
}

fn node_max(i: u32) -> vec3<f32> {
    let b = P.nodes_off + 8u * {{ at }} + 4u;
    return vec3<f32>(nodes[b], nodes[b + 1u], nodes[b + 2u]);
}

fn store_node(i: u32, lo: vec3<f32>, hi: vec3<f32>) {
    let b = P.nodes_off + 8u * {{ at }};
    for (var k = 0u; k < 3u; k++) {
        nodes[b + k] = lo[k];
        nodes[b + 4u + k] = hi[k];
    }
    nodes[b + 3u] = 0.0;
    nodes[b + 7u] = 0.0;
}
{% endmacro %}

{#- The box of source row `row` into lo, hi (declared empty by the caller) when
    every bound is finite and min <= max; else counted invalid (stats word 2). -#}
{% macro leaf_box(row) %}
        var valid = true;
        var a = vec3<f32>(0.0);
        var b = vec3<f32>(0.0);
        for (var k = 0u; k < DIMS; k++) {
            a[k] = minimum[P.min_off + {{ row }} * DIMS + k];
            b[k] = maximum[P.max_off + {{ row }} * DIMS + k];
            valid = valid && is_finite(a[k]) && is_finite(b[k]) && a[k] <= b[k];
        }
        if (valid) {
            lo = a;
            hi = b;
        } else {
            atomicAdd(&stats[P.stats_off + 2u], 1u);
        }
{% endmacro %}

{#- Every level of one tree bottom up inside one workgroup, invocation t
    unioning node count - 1 + t, a storage barrier between levels (levels is
    uniform, so every invocation reaches every barrier); active: the WGSL
    condition of an invocation that writes. -#}
{% macro refit_levels(levels, active) %}
    var level = {{ levels }} - 1u;
    loop {
        storageBarrier();
        if (level == 0u) { break; }
        level -= 1u;
        let count = 1u << level;
        if ({{ active }}) {
            let i = count - 1u + t;
            store_node(i, min(node_min(2u * i + 1u), node_min(2u * i + 2u)),
                       max(node_max(2u * i + 1u), node_max(2u * i + 2u)));
        }
    }
{% endmacro %}
