"""The viewer's decorations on the CPU: every tooltip line of a real Kineto
trace is one line (its args are indented JSON; the overlay's text layer
draws single lines and refuses others, which made the frame under a
hovered Kineto span raise)."""

from pathlib import Path

import gpuviz.trace
from gpuviz.trace.index import TraceIndex
from gpuviz.widgets.trace.decorations import span_lines

KINETO = Path(__file__).resolve().parents[3] / "assets" / "kineto_alexnet_cuda.json.gz"


def test_tooltip_lines_of_a_kineto_trace_are_single_lines():
    index = TraceIndex.of(gpuviz.trace.load(KINETO)).prepare_spans()
    args = index.trace.spans.column("args").to_pylist()
    multi = [s for s, a in enumerate(args) if a and "\n" in a]
    assert multi, "the Kineto asset has indented args (the case this test is for)"
    for s in multi[:200]:
        lines = span_lines(index, s)
        assert all("\n" not in line for line in lines), lines
        assert lines[-1].startswith("args: {") and len(lines[-1]) <= len("args: ") + 90
