"""CPU reference implementations (oracles) of what gpuviz computes on the GPU,
one module per layer: plain numpy (and pyarrow where the layer's data is
Arrow), written for clarity, not speed.

Tests and benchmarks compare GPU results against these; no production
module imports them (the import-linter layers contract in pyproject.toml
places ``oracles`` directly under ``bench``, and ``tests/test_layers.py``
checks that only ``gpuviz.bench`` imports it). Nothing here requests a
device or touches the GPU. Submodules are imported by name
(``from gpuviz.oracles.trace import TraceViewOracle``): this package
imports none of them, so each pulls in only its own layer.
"""
