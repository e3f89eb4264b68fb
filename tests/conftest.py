import os

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import pytest

import gpuviz


@pytest.fixture(scope="session")
def device():
    """The shared gpuviz device (Mesa's software Vulkan driver in CI)."""
    return gpuviz.request_device()
