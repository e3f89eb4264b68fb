{# Storage accessors for one packed uint32 view, imported by kernels as
   {% import "algorithms/shaders/views.wgsl" as views %}.

   view(name, binding, access, layout, offset) declares the binding and
   name_get4(i) / name_get1(i) (and name_set4 / name_set1 when access is
   "read_write"); i counts view rows. offset is a WGSL u32 expression, the
   view's element offset inside its bound range: a uniform field where it
   differs per chunk, so one pipeline serves every chunk.
   layout "vec4": words bound as vec4<u32> (offset and range are whole vec4
   words); "scalar": any four-byte offset; "none": a role this kernel variant
   does not use (no binding, reads give zero, writes vanish). A "-start"
   suffix ("vec4-start", "scalar-start") says the view begins its bound range:
   the accessors then index from 0 and ignore offset, so the driver sees the
   same constant-folded addressing as a kernel written for one buffer (a
   uniform offset costs the scan family, where nearly every view starts its
   range, a few percent). Structural, like vec4 vs scalar: one
   pipeline still serves every chunk of the same layouts. #}
{% macro view(name, binding, access, layout, offset) %}
{% if layout.endswith("-start") %}
{{ view(name, binding, access, layout[:-6], "0u") }}
{% elif layout == "vec4" %}
@group(0) @binding({{ binding }}) var<storage, {{ access }}> {{ name }}: array<vec4<u32>>;
fn {{ name }}_get4(i: u32) -> vec4<u32> { return {{ name }}[({{ offset }} + i) >> 2u]; }
fn {{ name }}_get1(i: u32) -> u32 { let p = {{ offset }} + i; return {{ name }}[p >> 2u][p & 3u]; }
{% if access == "read_write" %}
fn {{ name }}_set4(i: u32, v: vec4<u32>) { {{ name }}[({{ offset }} + i) >> 2u] = v; }
fn {{ name }}_set1(i: u32, v: u32) { let p = {{ offset }} + i; {{ name }}[p >> 2u][p & 3u] = v; }
{% endif %}
{% elif layout == "scalar" %}
@group(0) @binding({{ binding }}) var<storage, {{ access }}> {{ name }}: array<u32>;
fn {{ name }}_get4(i: u32) -> vec4<u32> {
    let p = {{ offset }} + i;
    return vec4<u32>({{ name }}[p], {{ name }}[p + 1u], {{ name }}[p + 2u], {{ name }}[p + 3u]);
}
fn {{ name }}_get1(i: u32) -> u32 { return {{ name }}[{{ offset }} + i]; }
{% if access == "read_write" %}
fn {{ name }}_set4(i: u32, v: vec4<u32>) {
    let p = {{ offset }} + i;
    {{ name }}[p] = v.x; {{ name }}[p + 1u] = v.y; {{ name }}[p + 2u] = v.z; {{ name }}[p + 3u] = v.w;
}
fn {{ name }}_set1(i: u32, v: u32) { {{ name }}[{{ offset }} + i] = v; }
{% endif %}
{% elif layout == "none" %}
fn {{ name }}_get4(i: u32) -> vec4<u32> { return vec4<u32>(0u); }
fn {{ name }}_get1(i: u32) -> u32 { return 0u; }
fn {{ name }}_set4(i: u32, v: vec4<u32>) { }
fn {{ name }}_set1(i: u32, v: u32) { }
{% else %}
{{ error("views.view: unknown layout " ~ layout ~ " (vec4, scalar or none)") }}
{% endif %}
{% endmacro %}
