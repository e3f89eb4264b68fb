"""Lane packing: the vectorised packer equals the plain greedy sweep, and both
satisfy the packing's properties checked from scratch here."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.oracles.trace import pack_lanes_reference
from gpuviz.trace.lanes import pack_lanes


def intervals(max_size=60, max_time=40):
    return st.lists(st.tuples(st.integers(0, max_time), st.integers(0, 12), st.integers(0, 3)),
                    min_size=0, max_size=max_size)


def arrays(spans):
    a = np.array(spans, np.int64).reshape(-1, 3)
    return a[:, 0], a[:, 1], a[:, 2]


def check_properties(start, dur, thread, lane, depth, parent):
    end = start + dur
    n = len(start)
    for t in np.unique(thread):
        for ln in np.unique(lane[thread == t]):
            rows = np.flatnonzero((thread == t) & (lane == ln))
            rows = rows[np.lexsort((end[rows], start[rows]))]
            assert np.all(start[rows][1:] >= end[rows][:-1]), "two spans of one lane overlap"
    for i in range(n):
        p = parent[i]
        if p < 0:
            assert depth[i] == 0
            continue
        assert thread[p] == thread[i]
        assert start[p] <= start[i] and end[i] <= end[p] and end[p] > start[i]
        assert depth[i] == depth[p] + 1
        assert lane[i] == lane[p] + 1          # a child sits right below its parent


@settings(max_examples=300, deadline=None)
@given(intervals())
def test_vectorised_equals_reference(spans):
    start, dur, thread = arrays(spans)
    got = pack_lanes(start=start, duration=dur, thread=thread)
    want = pack_lanes_reference(start=start, duration=dur, thread=thread)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g, w)
    assert got[3] == want[3]
    check_properties(start, dur, thread, *got[:3])


def nested(draw_list):
    """A properly nested set of spans (children inside parents, siblings apart)."""
    out = []

    def build(lo, hi, level, codes):
        t = lo
        for code in codes:
            if t >= hi:
                break
            length = 1 + code % max(1, hi - t)
            out.append((t, length))
            if level < 4 and length > 2:
                build(t + 1, t + length - 1, level + 1, codes[1:4])
            t += length + code % 3
    build(0, 200, 0, draw_list)
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_nested_input_needs_no_extra_lane(codes, rnd):
    spans = nested(codes)
    rnd.shuffle(spans)
    start = np.array([s for s, _ in spans], np.int64)
    dur = np.array([d for _, d in spans], np.int64)
    thread = np.zeros(len(spans), np.int64)
    lane, depth, parent, added = pack_lanes(start=start, duration=dur, thread=thread)
    assert added == 0
    np.testing.assert_array_equal(lane, depth)
    check_properties(start, dur, thread, lane, depth, parent)


def test_partial_overlap_gets_an_extra_lane():
    # 0-10 and 5-15 overlap without nesting: the second goes to lane 1 (a new track).
    lane, depth, parent, added = pack_lanes(start=[0, 5], duration=[10, 10], thread=[0, 0])
    assert lane.tolist() == [0, 1] and depth.tolist() == [0, 0] and parent.tolist() == [-1, -1] and added == 1


def test_track_offsets_follow_the_deepest_stack():
    # Track 0 holds a 3-deep stack; the overlapping span starts its track below it (lane 3).
    start = [0, 1, 2, 5]
    dur = [10, 8, 2, 20]
    lane, depth, parent, added = pack_lanes(start=start, duration=dur, thread=[0, 0, 0, 0])
    assert lane.tolist() == [0, 1, 2, 3] and depth.tolist() == [0, 1, 2, 0] and added == 1


def test_empty_and_single():
    out = pack_lanes(start=[], duration=[], thread=[])
    assert [len(x) for x in out[:3]] == [0, 0, 0] and out[3] == 0
    lane, depth, parent, added = pack_lanes(start=[7], duration=[0], thread=[3])
    assert lane.tolist() == [0] and parent.tolist() == [-1] and added == 0


def test_large_input_matches_reference_on_a_sample_thread():
    rng = np.random.default_rng(5)
    n = 200_000
    start = rng.integers(0, 10**9, n)
    dur = rng.integers(0, 5000, n)
    thread = rng.integers(0, 50, n)
    lane, depth, parent, added = pack_lanes(start=start, duration=dur, thread=thread)
    keep = thread == 7
    rows = np.flatnonzero(keep)
    ref = pack_lanes_reference(start=start[keep], duration=dur[keep], thread=thread[keep])
    np.testing.assert_array_equal(lane[keep], ref[0])
    np.testing.assert_array_equal(depth[keep], ref[1])
    np.testing.assert_array_equal(parent[keep], np.where(ref[2] >= 0, rows[np.maximum(ref[2], 0)], -1))


@settings(max_examples=100, deadline=None)
@given(intervals())
def test_a_visit_made_once_packs_the_same_and_is_left_unchanged(spans):
    """chrome.build_trace makes the visiting order once for the packing and
    the flow binding, which read it at the same time (threads)."""
    from gpuviz.trace.lanes import visiting
    start, dur, thread = arrays(spans)
    visit = visiting(start, dur, thread)
    before = [a.copy() for a in visit]
    got = pack_lanes(start=start, duration=dur, thread=thread, visit=visit)
    want = pack_lanes(start=start, duration=dur, thread=thread)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g, w)
    assert got[3] == want[3]
    for a, b in zip(visit, before):
        np.testing.assert_array_equal(a, b)
