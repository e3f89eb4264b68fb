"""What a reader of the notebooks sees without running them: each starts
with its title, none closes its live widgets on Run All, and the stored
outputs read as intended on the software adapter they were made on (no
benchmark verdict of MISS against a GPU target, no "1 lanes"). nbval runs
them (``pytest notebooks/ --nbval-lax``)."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text(cell) -> str:
    return "".join(cell["source"])


def outputs(cell) -> str:
    parts = []
    for output in cell.get("outputs", ()):
        parts.append("".join(output.get("text", "")))
        for value in output.get("data", {}).values():
            parts.append("".join(value) if isinstance(value, list) else str(value))
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_starts_with_its_title(path):
    first = cells(path)[0]
    assert first["cell_type"] == "markdown" and re.match(rf"# {path.stem[:2]} · ", text(first)), text(first)[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_leaves_the_live_widgets_open(path):
    """A notebook may show how to close a widget, but its last code cell
    must not close them: after Run All the live views would be blank."""
    last = [c for c in cells(path) if c["cell_type"] == "code"][-1]
    closing = [line for line in text(last).splitlines() if re.match(r"\s*[\w.]+\.close\(\)", line)]
    assert not closing, f"{path.name} ends by closing {closing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_read_as_intended(path):
    shown = "".join(outputs(c) for c in cells(path))
    assert not re.search(r"≤[\d.]+ MISS", shown), "a GPU target judged on the software adapter"
    assert not re.search(r"\b1 lanes\b", shown)
