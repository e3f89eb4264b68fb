"""FrameWindow: how many frames a canvas keeps in flight, on an explicit clock."""

from gpuviz.widgets.frame_rate import FrameWindow


def _frame(window, index, sent, confirmed, in_flight):
    window.sent(index, sent, in_flight=in_flight)
    return window.confirmed(index, confirmed)


def test_the_window_grows_while_round_trips_stay_fast_and_it_is_full():
    window = FrameWindow(low=2, high=6, start=3)
    assert _frame(window, 1, 0.0, 0.05, in_flight=1) == 0.05
    assert window.limit == 3  # not full: nothing learnt about a larger window
    _frame(window, 2, 0.10, 0.15, in_flight=3)
    assert window.limit == 4
    _frame(window, 3, 0.14, 0.19, in_flight=4)  # within one round trip of the last change
    assert window.limit == 4
    _frame(window, 4, 0.30, 0.35, in_flight=4)
    assert window.limit == 5
    for index in range(5, 20):
        _frame(window, index, index * 0.2, index * 0.2 + 0.05, in_flight=window.limit)
    assert window.limit == 6  # the ceiling


def test_the_window_shrinks_when_frames_queue_on_the_way():
    window = FrameWindow(low=2, high=8, start=5, horizon=30.0)
    _frame(window, 1, 0.0, 0.04, in_flight=1)
    assert _frame(window, 2, 0.1, 0.3, in_flight=4) > 2 * 0.04 + 0.02
    assert window.limit == 5  # one late frame on a busy machine is not a queue
    _frame(window, 3, 0.4, 0.6, in_flight=5)
    assert window.limit == 4  # two in a row are (the average passed twice the fastest)
    for index in range(4, 12):
        _frame(window, index, index * 1.0, index * 1.0 + 0.3, in_flight=window.limit)
    assert window.limit == 2  # the floor


def test_the_fastest_round_trip_is_forgotten_after_the_horizon():
    window = FrameWindow(low=2, high=8, start=4, horizon=1.0)
    _frame(window, 1, 0.0, 0.01, in_flight=4)  # fast once
    window.limit = 4
    _frame(window, 2, 5.0, 5.2, in_flight=4)  # 5 s later, 0.2 s is the only round trip remembered
    assert window.limit == 5  # not a queue against the forgotten 0.01 s: the new base, and the window was full


def test_bounds_and_unknown_frames():
    assert FrameWindow(low=2, high=1, start=4).limit == 1  # max_buffered_frames=1 wins over the floor
    window = FrameWindow()
    assert window.confirmed(7, 1.0) is None  # never sent (e.g. jupyter_rfb's own lossless resend)
    window.sent(1, 1.0, in_flight=1)
    window.sent(2, 1.1, in_flight=2)
    assert window.confirmed(2, 1.2) is not None and window.confirmed(1, 1.3) is None  # 1 was confirmed with 2
