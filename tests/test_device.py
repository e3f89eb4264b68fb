"""Device acquisition, capability reporting and the light top-level import."""

import subprocess
import sys

import pytest

import gpuviz
from gpuviz.device import OPTIONAL_FEATURES


def test_shared_device_is_reused(device):
    assert gpuviz.request_device() is device
    private = gpuviz.request_device(shared=False)
    assert private is not device


def test_optional_features_requested_where_available(device):
    import wgpu

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    for feature in OPTIONAL_FEATURES:
        assert (feature in device.features) == (feature in adapter.features)
    assert device.limits["max-storage-buffer-binding-size"] == adapter.limits["max-storage-buffer-binding-size"]
    assert device.limits["max-buffer-size"] == adapter.limits["max-buffer-size"]


def test_capabilities_report(device):
    caps = gpuviz.device_capabilities(device)
    assert caps.timestamps == ("timestamp-query" in device.features)
    assert caps.subgroups == ("subgroup" in device.features)
    assert caps.max_compute_workgroups_per_dimension >= 65535
    assert caps.max_storage_buffer_binding_size == device.limits["max-storage-buffer-binding-size"]
    assert caps.as_dict()["features"] == sorted(device.features)


def test_adapter_is_picked_by_name(device, monkeypatch):
    name = gpuviz.device_capabilities(device).adapter.split()[0]
    picked = gpuviz.request_device(adapter_name=name, shared=False)
    assert gpuviz.device_capabilities(picked).adapter.startswith(name)
    with pytest.raises(gpuviz.GraphLookupError, match='no adapter matches GPUVIZ_ADAPTER "no-such-gpu" \\(found .+\\)'):
        gpuviz.request_device(adapter_name="no-such-gpu", shared=False)
    monkeypatch.setenv("GPUVIZ_ADAPTER", "no-such-gpu")
    with pytest.raises(LookupError, match="no-such-gpu"):
        gpuviz.request_device(shared=False)


def test_top_level_import_stays_headless():
    code = ("import sys, gpuviz; heavy = [m for m in ('pyarrow', 'ipywidgets', 'anywidget', 'jupyter_rfb') "
            "if m in sys.modules]; assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
