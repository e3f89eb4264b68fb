"""Shared fixtures of the trace tests: the real public traces beside the repository."""

from pathlib import Path

import pytest

#: ../shared/data/traces relative to the repository root (CI clones at the same relative position).
TRACES = Path(__file__).parents[2] / ".." / "shared" / "data" / "traces"


@pytest.fixture(scope="session")
def traces_dir():
    """The folder of real traces; the test is skipped when it is missing."""
    if not TRACES.is_dir():
        pytest.skip(f"real trace data not found at {TRACES.resolve()} (expected ../shared/data/traces beside the repo)")
    return TRACES
