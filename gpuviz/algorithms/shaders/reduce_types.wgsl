{# Element type of a reduction, included by reduction.wgsl with the template
   value `type` (the input's format): alias T, its largest and smallest values
   and which values min/max/extent take into account. #}
{% if type == "uint32" %}
alias T = u32;
fn MAXV() -> T { return 0xffffffffu; }
fn MINV() -> T { return 0u; }
fn is_valid(x: T) -> bool { return true; }
{% elif type == "sint32" %}
alias T = i32;
fn MAXV() -> T { return 2147483647i; }
fn MINV() -> T { return (-2147483647i - 1i); }
fn is_valid(x: T) -> bool { return true; }
{% elif type == "float32" %}
alias T = f32;
fn MAXV() -> T { return bitcast<f32>(0x7f800000u); }
fn MINV() -> T { return bitcast<f32>(0xff800000u); }
// NaN and infinities are skipped by min, max and extent.
fn is_valid(x: T) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
{% else %}
{{ error("reduce_types.wgsl: unknown type " ~ type ~ " (uint32, sint32 or float32)") }}
{% endif %}
