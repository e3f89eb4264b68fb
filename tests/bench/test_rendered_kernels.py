"""rendered_kernels (the before/after check of template refactors) keeps
working: its configurations render in this tree, probes through the
benchmark templates, and its normal form ignores comments and layout only."""

from gpuviz.bench.rendered_kernels import configurations, normalise, render


def test_a_sample_of_the_configurations_renders():
    rendered, seen = {}, {}
    for name, template, values in configurations():
        family = name.split()[0]
        seen[family] = seen.get(family, -1) + 1
        if seen[family] % 37 == 0:  # every 37th of each family, its first included
            rendered[name] = render(template, values)
    assert len(rendered) > 100
    assert set(seen) == {"scan", "sort", "visibility", "hash", "spatial"}
    assert {name.split()[0] for name in rendered} == set(seen)
    probed = [code for name, code in rendered.items() if name.startswith("visibility") and "probe=unordered" in name]
    assert probed and all("probe_counter" in code for code in probed)


def test_normal_form():
    a = "fn f(x: u32) -> u32 {  // a comment\n    let y = x + 1u;\n\n    return y; }\n"
    b = "fn f(x:u32)->u32{\nlet y=x+1u; return y;}"
    assert normalise(a) == normalise(b)
    assert normalise(a) != normalise(b.replace("x+1u", "x+2u"))
    assert normalise("let y = x;") != normalise("lety = x;")
