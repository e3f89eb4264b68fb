"""GPUColourRange against its numpy oracle (exact order statistics, boundary
sizes, NaN, negative and all-empty inputs, every normalisation, no
recompilation) and the colour bar layout (end labels are the range used)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.errors import GraphValidationError
from gpuviz.graph import GPUCommandGraph
from gpuviz.render.colour_bar import colour_bar_layout, ramp_colours
from gpuviz.oracles.render import colour_range_oracle
from gpuviz.render.colour_range import COLOUR_NORMALISATIONS, GPUColourRange
from gpuviz.render.number_format import format_number
from gpuviz.tables import GPUData

STOPS = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 1.0))


class RangeRig:
    """One compiled graph over a fixed-size input, refilled per example."""

    def __init__(self, device, n):
        self.device, self.n = device, n
        self.values = GPUData.allocate(device, format="float32", length=n)
        self.out = GPUData.allocate(device, format="float32", length=4)
        graph = GPUCommandGraph(device, id="colour-range-test")
        self.node = GPUColourRange(id="range", input=graph.import_gpu_data("values", self.values),
                                   output=graph.import_gpu_data("out", self.out))
        self.node.add_to_graph(graph)
        self.compiled = graph.compile()

    def run(self, values, normalisation, percentile=1.0):
        self.device.queue.write_buffer(self.values.buffer, 0, np.asarray(values, np.float32).tobytes())
        self.node.set_normalisation(normalisation, percentile=percentile)
        encoder = self.device.create_command_encoder()
        self.compiled.encode(encoder)
        self.device.queue.submit([encoder.finish()])
        return np.frombuffer(self.device.queue.read_buffer(self.out.buffer), np.float32)[:4]


@pytest.fixture(scope="module")
def rigs(device):
    made = {}
    yield lambda n: made.setdefault(n, RangeRig(device, n))
    for rig in made.values():
        rig.compiled.destroy()


def check(got, values, normalisation, percentile=1.0):
    lo, hi = colour_range_oracle(values, normalisation=normalisation, percentile=percentile)
    v = np.asarray(values, np.float32)
    counted = np.isfinite(v) & ((v > 0) if normalisation == "log" else True)
    assert got[2] == counted.sum()
    assert got[3] == COLOUR_NORMALISATIONS.index(normalisation)
    if not counted.any():
        assert math.isnan(got[0]) and math.isnan(got[1])
    else:
        assert (got[0], got[1]) == (np.float32(lo), np.float32(hi))


SIZES = [1, 2, 255, 256, 257, 1000, 256 * 512 + 3]


@settings(max_examples=40, deadline=None)
@given(size=st.sampled_from(SIZES), seed=st.integers(0, 2**32 - 1), nan_share=st.sampled_from([0.0, 0.3, 0.97]),
       normalisation=st.sampled_from(COLOUR_NORMALISATIONS), percentile=st.sampled_from([0.0, 1.0, 10.0, 49.0]))
def test_range_matches_numpy_order_statistics(rigs, size, seed, nan_share, normalisation, percentile):
    rng = np.random.default_rng(seed)
    values = (rng.lognormal(0.0, 3.0, size) * rng.choice([-1.0, 1.0, 1.0], size)).astype(np.float32)
    values[rng.random(size) < nan_share] = np.nan
    values[rng.random(size) < 0.01] = np.inf
    check(rigs(size).run(values, normalisation, percentile), values, normalisation, percentile)


def test_ties_zeros_signed_zero_and_all_empty(rigs):
    rig = rigs(257)
    ties = np.full(257, 3.5, np.float32)
    ties[::7] = -0.0
    ties[1::11] = 0.0
    for normalisation in COLOUR_NORMALISATIONS:
        check(rig.run(ties, normalisation), ties, normalisation)
    empty = np.full(257, np.nan, np.float32)
    for normalisation in COLOUR_NORMALISATIONS:
        check(rig.run(empty, normalisation), empty, normalisation)
    negative = -np.arange(1, 258, dtype=np.float32)
    check(rig.run(negative, "log"), negative, "log")  # nothing positive: NaN, n = 0
    check(rig.run(negative, "robust", 10.0), negative, "robust", 10.0)


def test_robust_range_ignores_outliers(rigs):
    rig = rigs(1000)
    values = np.linspace(1.0, 2.0, 1000).astype(np.float32)
    values[:5] = 1e9
    got = rig.run(values, "robust")
    assert got[1] < 2.0 + 1e-6 and got[0] < 1.02  # the 1e9 cells are beyond the 99th percentile
    assert rig.run(values, "linear")[1] == np.float32(1e9)


def test_normalisation_changes_without_recompiling_and_bad_values_are_refused(rigs):
    rig = rigs(256)
    before = rig.compiled
    values = np.arange(256, dtype=np.float32) - 10
    for normalisation in COLOUR_NORMALISATIONS * 2:
        check(rig.run(values, normalisation), values, normalisation)
    assert rig.compiled is before
    with pytest.raises(GraphValidationError, match="normalisation"):
        rig.node.set_normalisation("equalised")
    with pytest.raises(GraphValidationError, match="percentile"):
        rig.node.set_normalisation("robust", percentile=50.0)


# -- layout -------------------------------------------------------------------------


def measure(text):
    return 6.0 * len(text)


@pytest.mark.parametrize("domain,normalisation", [((1.96, 28.86), "robust"), ((1.0, 7.0), "log"),
                                                  ((1.0, 25000.0), "log"), ((-3.25, 1234.5), "linear")])
def test_colour_bar_end_ticks_are_the_range_used(domain, normalisation):
    rect = (10.0, 30.0, 12.0, 200.0)
    layout = colour_bar_layout(rect=rect, domain=domain, normalisation=normalisation, stops=STOPS, title="mean",
                               measure=measure, line_height=13.0)
    assert layout.extremes == domain
    ys = [y for _t, _x, y, *_ in layout.labels]
    texts = [t for t, *_ in layout.labels]
    assert ys[0] == 230.0 and texts[0] == format_number(domain[0], digits=3)  # bottom: lo
    assert ys[-1] == 30.0 and texts[-1] == format_number(domain[1], digits=3)  # top: hi
    assert np.all(np.diff(ys) < 0)
    # label boxes (13 px lines) stay inside the bar's extent and never overlap
    offset = {"top": 0.0, "middle": -6.5, "bottom": -13.0}
    boxes = [(y + offset[anchor[1]], y + offset[anchor[1]] + 13.0) for _t, _x, y, anchor, _w in layout.labels]
    assert boxes[0][1] == 230.0 and boxes[-1][0] == 30.0
    for (top_a, _bottom_a), (_top_b, bottom_b) in zip(boxes, boxes[1:]):
        assert bottom_b <= top_a  # each next label (higher up) ends above the previous one
    assert layout.title[0] == "mean" and layout.title[2] <= 27.0 and layout.title[3][1] == "bottom"  # above the bar
    # the gradient runs bottom (first stop) to top (last stop)
    assert layout.slices[0][4] == pytest.approx(tuple(ramp_colours(STOPS, [0.5 / 64])[0]))
    assert layout.slices[-1][1] == pytest.approx(30.0) and layout.slices[0][3] == pytest.approx(230.0)


def test_ramp_colours_interpolate_the_stops():
    np.testing.assert_allclose(ramp_colours(STOPS, [0.0, 0.25, 0.5, 0.75, 1.0, 2.0]),
                               [(0, 0, 0), (0.5, 0, 0), (1, 0, 0), (1, 0.5, 0.5), (1, 1, 1), (1, 1, 1)])
