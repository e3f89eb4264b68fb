// DataAnalysis: the render node's pipelines, one viewport per panel.
// The colours (ramp, bar_color, cdf_color, palette: RGB triples) are template
// values from render.py (draw_shader), which the widget's legend shares. Every
// draw reads GPU-resident results only (grid, extents, histogram counts, CDF,
// group means): no CPU readback.
//
//   vs_fill   a quad over the viewport: instance 0 in the background colour,
//             instance 1 in the panel colour
//   vs_heat   heatmap quad; fs_heat looks up the cell and maps it through a
//             colour ramp normalized by this frame's GPU-computed colour range
//             (gpuviz/render/colour_range.py: linear, log or robust percentiles)
//   vs_bars   one instanced quad per histogram bin (equal width on screen:
//             linear bins on a linear axis, log bins on a log axis)
//   vs_cdf    one thick segment per bin of the inclusive-scan CDF
//   vs_groups one bar per group mean, from a zero baseline
{% macro vec3(c) %}vec3<f32>({{ "%.4f" | format(c[0]) }}, {{ "%.4f" | format(c[1]) }}, {{ "%.4f" | format(c[2]) }}){% endmacro %}
{% macro vec3s(colors) %}{% for c in colors %}{{ vec3(c) }}{% if not loop.last %}, {% endif %}{% endfor %}{% endmacro %}
{% if ramp | length != 5 %}{{ error("draw.wgsl: ramp() interpolates five stops (got %d)" % (ramp | length)) }}{% endif %}

{% include "widgets/analysis/shaders/view.wgsl" %}

@group(0) @binding(1) var<storage, read> display: array<u32>;
@group(0) @binding(2) var<storage, read> colour_range: array<f32>;  // lo, hi, n, mode (GPUColourRange)
@group(0) @binding(3) var<storage, read> counts: array<u32>;
@group(0) @binding(4) var<storage, read> cdf: array<u32>;
@group(0) @binding(5) var<storage, read> hist_max: array<u32>;
@group(0) @binding(6) var<storage, read> group_means: array<u32>;
@group(0) @binding(7) var<storage, read> group_extent: array<f32>;

const TOP: f32 = {{ "%.6f" | format(top) }};  // PLOT_TOP of layout.py: headroom under the plot's top (axes span max / TOP)

struct VOut {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) color: vec4<f32>,
}

// Corner of a two-triangle quad, (0, 0) to (1, 1).
fn corner(vi: u32) -> vec2<f32> {
    var c = array<vec2<f32>, 6>(vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(0.0, 1.0),
                                vec2<f32>(0.0, 1.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0));
    return c[vi];
}

// A point of the unit panel square as clip coordinates.
fn clip(p: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

@vertex
fn vs_fill(@builtin(vertex_index) vi: u32, @builtin(instance_index) ii: u32) -> VOut {
    let c = corner(vi);
    return VOut(clip(c), c, select(view.background, view.panel, ii > 0u));
}

@fragment
fn fs_color(v: VOut) -> @location(0) vec4<f32> {
    return v.color;
}

// ------------------------------------------------------------------ heatmap
@vertex
fn vs_heat(@builtin(vertex_index) vi: u32) -> VOut {
    let c = corner(vi);
    return VOut(clip(c), c, vec4<f32>(0.0));
}

// RAMP of render.py: five stops, dark to bright (monotonic luminance).
fn ramp(t: f32) -> vec3<f32> {
    var stops = array<vec3<f32>, 5>({{ vec3s(ramp) }});
    let s = clamp(t, 0.0, 1.0) * 4.0;
    let i = min(u32(s), 3u);
    return mix(stops[i], stops[i + 1u], s - f32(i));
}

@fragment
fn fs_heat(v: VOut) -> @location(0) vec4<f32> {
    let w = view.grid_size.x;
    let h = view.grid_size.y;
    let i = min(u32(max(v.uv.x, 0.0) * f32(w)), w - 1u);
    let j = min(u32(max(v.uv.y, 0.0) * f32(h)), h - 1u);  // row 0 = ymin, drawn at the bottom
    let bits = display[j * w + i];
    if (!is_finite_bits(bits)) {
        return view.empty;
    }
    let x = bitcast<f32>(bits);
    let lo = colour_range[0];
    let hi = colour_range[1];
    let log_scale = colour_range[3] == 1.0;
    var t = 1.0;
    if (!(hi > lo)) {
        t = select(1.0, 0.0, log_scale && x <= 0.0);  // one value (or none counted: log of <= 0 values)
    } else if (log_scale) {
        t = select(log(x / lo) / log(hi / lo), 0.0, x <= 0.0);
    } else {
        t = (x - lo) / (hi - lo);
    }
    return vec4<f32>(ramp(t), 1.0);
}

// ---------------------------------------------------------------- histogram
@vertex
fn vs_bars(@builtin(vertex_index) vi: u32, @builtin(instance_index) bin: u32) -> VOut {
    let c = corner(vi);
    let n = f32(max(view.bins, 1u));
    let gap = select(0.0, 0.12, view.bins <= 96u);
    let height = f32(counts[bin]) / f32(max(hist_max[0], 1u)) * TOP;
    let x = (f32(bin) + mix(gap, 1.0 - gap, c.x)) / n;
    return VOut(clip(vec2<f32>(x, c.y * height)), c, vec4<f32>({{ vec3(bar_color) }}, 1.0));
}

fn cdf_point(k: u32) -> vec2<f32> {
    let total = cdf[max(view.bins, 1u) - 1u];
    var y = 0.0;
    if (k > 0u && total > 0u) {
        y = f32(cdf[k - 1u]) / f32(total);
    }
    return vec2<f32>(f32(k) / f32(max(view.bins, 1u)), y * TOP);
}

@vertex
fn vs_cdf(@builtin(vertex_index) vi: u32, @builtin(instance_index) k: u32) -> VOut {
    let c = corner(vi);
    let a = clip(cdf_point(k)).xy;
    let b = clip(cdf_point(k + 1u)).xy;
    let px = view.hist_px;
    let d = (b - a) / px;  // the segment in pixels
    var normal = vec2<f32>(0.0, 1.0);
    if (dot(d, d) > 0.0) {
        normal = normalize(vec2<f32>(-d.y, d.x));
    }
    let p = mix(a, b, c.x) + normal * (c.y - 0.5) * 3.0 * px;  // 3 logical px wide
    return VOut(vec4<f32>(p, 0.0, 1.0), c, vec4<f32>({{ vec3(cdf_color) }}, 1.0));
}

// ------------------------------------------------------------------- groups
// GROUP_PALETTE of render.py, cycled.
fn palette(g: u32) -> vec3<f32> {
    var colors = array<vec3<f32>, {{ palette | length | u32 }}>({{ vec3s(palette) }});
    return colors[g % {{ palette | length | u32 }}];
}

@vertex
fn vs_groups(@builtin(vertex_index) vi: u32, @builtin(instance_index) g: u32) -> VOut {
    let c = corner(vi);
    let lo = min(group_extent[0], 0.0);
    var hi = max(group_extent[1], 0.0);
    if (hi <= lo) {
        hi = lo + 1.0;
    }
    let bits = group_means[g];
    var mean = 0.0;  // empty groups (NaN) draw no bar
    if (is_finite_bits(bits)) {
        mean = bitcast<f32>(bits);
    }
    let base = (0.0 - lo) / (hi - lo) * TOP;
    let top = (mean - lo) / (hi - lo) * TOP;
    let n = f32(max(view.groups, 1u));
    let x = (f32(g) + mix(0.1, 0.9, c.x)) / n;
    return VOut(clip(vec2<f32>(x, mix(base, top, c.y))), c, vec4<f32>(palette(g), 1.0));
}
