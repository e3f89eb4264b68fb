"""The radix sort's timing probes (gpuviz.bench.sort_profile): a benchmark
template extending sort_radix.wgsl through its blocks; the sort's own
template names no probe."""

import pytest

from gpuviz import SortTuning
from gpuviz.algorithms.sort import radix_shader
from gpuviz.bench.rendered_kernels import normalise
from gpuviz.bench.sort_profile import PROBES, probe_tuning
from gpuviz.graph.shaders import compute_pipeline

PROFILE_PROBES = [("no-lookback",), ("no-lookback", "coalesced-writes"), ("no-lookback", "lookup-writes"),
                  ("no-lookback", "no-ranking", "coalesced-writes")]


@pytest.mark.parametrize("probes", PROFILE_PROBES, ids=["+".join(p) for p in PROFILE_PROBES])
@pytest.mark.parametrize("subgroups", [True, False], ids=["subgroups", "portable"])
def test_profile_probes_render_and_compile(device, probes, subgroups):
    """Every probe the sort profiler times changes the scatter code, and the result compiles (the profile
    runs them only on the GPU machine)."""
    if subgroups and "subgroup" not in device.features:
        pytest.skip("the device has no subgroup feature")
    code, constants = radix_shader(probe_tuning(SortTuning, probes), subgroups=subgroups, has_values=True,
                                   staging="shared")
    default, _ = radix_shader(SortTuning(), subgroups=subgroups, has_values=True, staging="shared")
    assert code != default
    assert ("prefix = look_back(" in code) == ("no-lookback" not in probes)
    assert ("count = rank_subgroup(" in code) == ("no-ranking" not in probes)
    writes = {"coalesced-writes": "= key + s_start[d] * 0u;", "lookup-writes": "= key ^ s_start[d];"}
    for probe, line in writes.items():
        assert (line in code) == (probe in probes)
    assert "key_out[P.key_out + s_start[d] + j] = key;" not in code  # clamped or coalesced
    compute_pipeline(device, code, entry_point="scatter", constants=constants, bounds_checks=False,
                     loop_bounding=False)


def test_the_probe_template_without_probes_is_the_sorts():
    for subgroups in (False, True):
        default, _ = radix_shader(SortTuning(), subgroups=subgroups, has_values=True, staging="plain")
        probed, _ = radix_shader(probe_tuning(SortTuning, ()), subgroups=subgroups, has_values=True, staging="plain")
        assert normalise(probed) == normalise(default)  # (super() leaves blank lines)
        assert "s_start[d] * 0u" not in default and "min(P.key_out" not in default


def test_probe_validation():
    assert set(PROBES) == {"no-lookback", "no-ranking", "coalesced-writes", "lookup-writes"}
    for bad in (("faster",), ["no-lookback"], ("coalesced-writes", "lookup-writes")):
        with pytest.raises(ValueError, match="sort probes must be a tuple of"):
            probe_tuning(SortTuning, bad)
