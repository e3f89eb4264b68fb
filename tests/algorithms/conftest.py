"""Helpers for the algorithm tests: uploads, graph runs and numpy oracles."""

import numpy as np
import pytest
import wgpu

from gpuviz.algorithms import ScanTuning
from gpuviz.graph import GPUCommandGraph
from gpuviz.oracles import algorithms as oracles
from gpuviz.tables import GPUData, GPUVector, read_array

BU = wgpu.BufferUsage
USAGE = BU.STORAGE | BU.COPY_SRC | BU.COPY_DST
TILE = ScanTuning().tile  # rows one scan workgroup handles (8192)


def gpu_data(device, values, dtype=np.uint32):
    return GPUData.from_numpy(device, np.asarray(values, dtype), USAGE)


def gpu_vector(device, chunks, dtype=np.uint32):
    return GPUVector.from_numpy(device, [np.asarray(c, dtype) for c in chunks], USAGE, format=None)


def shared_vector(device, arrays, offsets, dtype=np.uint32, fill=0):
    """A GPUVector whose chunks share one buffer, chunk k starting ``offsets[k]``
    elements in (views a kernel binds at different element offsets); the
    words around the chunks hold ``fill``."""
    arrays = [np.asarray(a, dtype) for a in arrays]
    words = np.full(max(o + a.size for o, a in zip(offsets, arrays)) + 4, fill, dtype)
    for o, a in zip(offsets, arrays):
        words[o:o + a.size] = a
    backing = GPUData.from_numpy(device, words, USAGE)
    return GPUVector([GPUData(backing.buffer, format=backing.format, length=a.size, byte_offset=4 * o)
                      for o, a in zip(offsets, arrays)])


@pytest.fixture
def compiled_pipelines(monkeypatch):
    """The compute pipelines every ComputeKernel made from here on asks the
    shader builder for, in order (the same object for a cached one)."""
    from gpuviz.graph import kernel

    pipelines = []

    def spy(*args, **kwargs):
        pipelines.append(compute_pipeline(*args, **kwargs))
        return pipelines[-1]

    compute_pipeline = kernel.compute_pipeline
    monkeypatch.setattr(kernel, "compute_pipeline", spy)
    return pipelines


def import_input(device, graph, name, value):
    """A list of arrays -> a vector view (one chunk each); an array -> a data
    view; None -> None."""
    if value is None:
        return None
    if isinstance(value, list):
        return graph.import_gpu_vector(name, GPUVector.from_numpy(device, value))
    return graph.import_gpu_data(name, GPUData.from_numpy(device, value))


def read(device, data):
    return read_array(device, data)


def run(graph):
    """Compile, encode once, submit; returns the compiled graph."""
    compiled = graph.compile()
    submit_encodings(graph.device, compiled, 1)
    return compiled


def write_chunks(device, vector, arrays):
    """Overwrite each chunk of a GPUVector with its array (empty chunks skipped)."""
    for chunk, values in zip(vector.chunks, arrays):
        if values.size:
            device.queue.write_buffer(chunk.buffer, chunk.byte_offset, values.tobytes())


def submit_encodings(device, compiled, times):
    """Encode a compiled graph ``times`` times into one encoder and submit it."""
    encoder = device.create_command_encoder()
    for _ in range(times):
        compiled.encode(encoder)
    device.queue.submit([encoder.finish()])


def new_graph(device, id="test"):
    return GPUCommandGraph(device, id=id)


# ------------------------------------------------------------------- oracles
scan_oracle = oracles.scan  # exclusive/inclusive, optionally segmented, uint32 scan


@pytest.fixture
def graph(device):
    return new_graph(device)


@pytest.fixture(params=["native-float-atomics", "compare-exchange"])
def float_add_path(request, device, monkeypatch):
    """Run a test once per way sums reach global memory: native f32
    atomicAdd (skipped where the device lacks shader-float32-atomic) and
    the portable compare-exchange loop. Tunings with ``float_atomics=None``
    follow the ``GPUVIZ_FLOAT_ATOMICS`` environment variable set here."""
    import gpuviz

    if request.param == "native-float-atomics":
        if not gpuviz.device_capabilities(device).float32_atomics:
            pytest.skip("device lacks shader-float32-atomic")
        monkeypatch.delenv("GPUVIZ_FLOAT_ATOMICS", raising=False)
    else:
        monkeypatch.setenv("GPUVIZ_FLOAT_ATOMICS", "0")
    return request.param
