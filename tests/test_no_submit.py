"""Primitives and workflows never submit: no module under ``algorithms/``,
``workflows/``, ``trace/interaction/`` (nor ``spatial/`` and ``scene/``
once they exist) calls ``queue.submit``. They declare nodes
(``add_to_graph``) or record into an encoder the caller passes; the widget
or script that owns the frame submits. Explicit readback helpers
(``tables.read_array``) and the trace scene's upload live outside these
folders."""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpuviz"
NEVER_SUBMIT = ("algorithms", "workflows", "trace/interaction", "spatial", "scene")
SUBMIT = re.compile(r"\bqueue\s*\.\s*submit\b|\.submit\s*\(\s*\[")


def test_primitives_and_workflows_never_submit():
    hits = []
    for folder in NEVER_SUBMIT:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if SUBMIT.search(line.split("#", 1)[0]):
                    hits.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    assert not hits, "these submit to a queue (record into the caller's encoder instead):\n" + "\n".join(hits)


def test_the_check_sees_a_submit(tmp_path):
    line = "        self.device.queue.submit([encoder.finish()])"
    assert SUBMIT.search(line) and SUBMIT.search("device.queue.submit([])")
    assert not SUBMIT.search("pool.submit(fn, x)")  # a thread pool is not a queue
