"""Compute rasterisation (gpuviz/render/raster.py, render/shaders/raster.wgsl):
a test kernel (raster_kernel.wgsl) uses every macro; its packed words, depth
bits, hits and resolved (empty, key, ID) per pixel equal the oracle
(gpuviz.oracles.render) for 0, 1, workgroup-1, workgroup, workgroup+1 and
several workgroups of items, colliding on few pixels, with runs, tied
depths, and keys of 1..31 bits (the largest IDs each allows)."""

from pathlib import Path

import jinja2
import numpy as np
import pytest
import wgpu
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.errors import GraphValidationError
from gpuviz.graph.shaders import PACKAGE_ROOT, ShaderTemplateError
from gpuviz.oracles.render import depth_raster, packed_raster
from gpuviz.render.raster import RASTER_FAR, packed_id_limit, packed_words, unpack_words

BU = wgpu.BufferUsage
WG = 64
ENTRIES = ("clear", "splat", "hit", "resolve")


def _error(message):
    raise ShaderTemplateError(message)


_ENV = jinja2.Environment(loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(Path(__file__).parent),
                                                      jinja2.FileSystemLoader(PACKAGE_ROOT)]),
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.globals["error"] = _error
_PIPELINES = {}


def pipelines(device, key_bits):
    if key_bits not in _PIPELINES:
        code = _ENV.get_template("raster_kernel.wgsl").render(key_bits=key_bits)
        module = device.create_shader_module(code=code)
        entries = [{"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "uniform"}}]
        entries += [{"binding": b, "visibility": wgpu.ShaderStage.COMPUTE,
                     "buffer": {"type": "read-only-storage" if b < 3 else "storage"}} for b in range(1, 7)]
        group = device.create_bind_group_layout(entries=entries)
        layout = device.create_pipeline_layout(bind_group_layouts=[group])
        _PIPELINES[key_bits] = group, [device.create_compute_pipeline(
            layout=layout, compute={"module": module, "entry_point": e}) for e in ENTRIES]
    return _PIPELINES[key_bits]


def run(device, items, item_depths, *, key_bits, pixels):
    """GPU: clear, splat, hit, resolve; returns (words, depth bits, hits, resolved (pixels, 4))."""
    group_layout, steps = pipelines(device, key_bits)

    def buffer(data, usage=BU.STORAGE):
        data = np.ascontiguousarray(data)
        return device.create_buffer_with_data(data=data.tobytes() if data.nbytes else b"\0" * 16, usage=usage)

    out = [device.create_buffer(size=4 * max(pixels, 4) * k, usage=BU.STORAGE | BU.COPY_SRC) for k in (1, 1, 1, 4)]
    buffers = [buffer(np.uint32([len(items), pixels, 0, 0]), BU.UNIFORM), buffer(np.asarray(items, np.uint32)),
               buffer(np.asarray(item_depths, np.float32)), *out]
    group = device.create_bind_group(layout=group_layout, entries=[
        {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": buf.size}} for b, buf in enumerate(buffers)])
    encoder = device.create_command_encoder()
    for pipeline, threads in zip(steps, (pixels, len(items), len(items), pixels)):
        cpass = encoder.begin_compute_pass()  # one pass each: the next reads what this one wrote
        cpass.set_pipeline(pipeline)
        cpass.set_bind_group(0, group)
        if threads:
            cpass.dispatch_workgroups(-(-threads // WG))
        cpass.end()
    device.queue.submit([encoder.finish()])
    read = [np.frombuffer(device.queue.read_buffer(b), np.uint32) for b in out]
    return read[0][:pixels], read[1][:pixels], read[2][:pixels], read[3].reshape(-1, 4)[:pixels]


def case(seed, n, *, key_bits, pixels):
    rng = np.random.default_rng(seed)
    at = rng.integers(0, pixels, n)
    runs = np.minimum(rng.choice([1, 1, 2, 5], n), pixels - at)
    keys = rng.integers(0, 1 << key_bits, n, dtype=np.int64)
    limit = packed_id_limit(key_bits)
    ids = np.where(rng.random(n) < 0.2, np.maximum(limit - 1 - rng.integers(0, 2, n), 0),
                   rng.integers(0, min(limit, 1000), n))
    depths = rng.choice(np.float32([0.0, 0.25, 0.5, 0.75, 1.0]), n)  # ties on purpose
    return at, runs, keys, ids, depths


def check(device, seed, n, *, key_bits, pixels=37):
    at, runs, keys, ids, depths = case(seed, n, key_bits=key_bits, pixels=pixels)
    items = np.stack([at, keys, ids, runs], 1) if n else np.zeros((0, 4))
    words, bits, hits, resolved = run(device, items, depths, key_bits=key_bits, pixels=pixels)
    want = packed_raster(at, keys, ids, key_bits=key_bits, size=pixels, runs=runs)
    np.testing.assert_array_equal(words, want)
    want_bits, want_hits = depth_raster(at, depths, ids, size=pixels)
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(hits, want_hits)
    empty, want_keys, want_ids = unpack_words(want, key_bits=key_bits)
    np.testing.assert_array_equal(resolved[:, 0], empty)
    np.testing.assert_array_equal(resolved[:, 1], want_keys)
    np.testing.assert_array_equal(resolved[:, 2].astype(np.int64), np.where(empty, 0xFFFFFFFF, want_ids))
    hit_ids = np.where(want_hits == 0, 0xFFFFFFFF, want_hits.astype(np.int64) - 1)
    np.testing.assert_array_equal(resolved[:, 3].astype(np.int64), hit_ids)
    return words


@pytest.mark.parametrize("n", [0, 1, WG - 1, WG, WG + 1, 5 * WG + 3])
@pytest.mark.parametrize("key_bits", [1, 2, 31])
def test_targets_match_the_oracle(device, n, key_bits):
    check(device, n * 7 + key_bits, n, key_bits=key_bits)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(0, 3 * WG), key_bits=st.sampled_from([1, 2, 8, 16, 31]))
def test_targets_match_the_oracle_property(device, seed, n, key_bits):
    check(device, seed, n, key_bits=key_bits, pixels=int(seed % 40) + 1)


def test_empty_target():
    empty, keys, ids = unpack_words(np.zeros(3, np.uint32), key_bits=2)
    assert empty.all() and (keys == 0).all() and (ids == -1).all()
    bits, hits = depth_raster([], [], [], size=2)
    assert (bits == RASTER_FAR).all() and (hits == 0).all()


def test_priority_then_draw_order():
    """A higher key wins whatever the ID; among equal keys the higher ID."""
    words = packed_raster([0, 0, 1, 1], [1, 0, 2, 2], [3, 9, 4, 8], key_bits=2, size=2)
    _, keys, ids = unpack_words(words, key_bits=2)
    assert keys.tolist() == [1, 2] and ids.tolist() == [3, 8]


def test_out_of_range_is_refused():
    with pytest.raises(GraphValidationError, match="key_bits"):
        packed_words(keys=[0], ids=[0], key_bits=32)
    with pytest.raises(GraphValidationError, match="key out of range"):
        packed_words(keys=[4], ids=[0], key_bits=2)
    with pytest.raises(GraphValidationError, match="ID out of range"):
        packed_words(keys=[0], ids=[packed_id_limit(2)], key_bits=2)
    with pytest.raises(ShaderTemplateError, match="key_bits"):
        _ENV.get_template("raster_kernel.wgsl").render(key_bits=0)
