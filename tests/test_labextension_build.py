"""The prebuilt labextension shipped in the package matches its sources, and
Jupyter sees it enabled (no node needed: the build records its sources' hash)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "labextension"
BUILT = ROOT / "gpuviz" / "labextension"


def _source_hash_module():
    spec = importlib.util.spec_from_file_location("labextension_source_hash", SOURCES / "source_hash.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_build_records_the_hash_of_its_sources():
    module = _source_hash_module()
    recorded = (BUILT / "sources.sha256").read_text().strip()
    assert recorded == module.source_hash(), (
        "labextension/ changed since gpuviz/labextension was built: run `make labextension` and commit both")
    hashed = {p.relative_to(SOURCES).as_posix() for p in module.source_files()}
    assert {"package.json", "package-lock.json", "tsconfig.json", "src/index.ts", "style/index.css"} <= hashed
    assert not any(name.startswith(("node_modules/", "lib/")) for name in hashed)


def test_hash_changes_with_any_source_byte(tmp_path):
    module = _source_hash_module()
    copy = tmp_path / "labextension"
    for path in module.source_files():
        target = copy / path.relative_to(SOURCES)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    assert module.source_hash(copy) == module.source_hash()
    index = copy / "src" / "index.ts"
    index.write_bytes(index.read_bytes() + b" ")
    assert module.source_hash(copy) != module.source_hash()


def test_built_metadata_matches_the_sources_and_stays_small():
    source = json.loads((SOURCES / "package.json").read_text())
    built = json.loads((BUILT / "package.json").read_text())
    assert built["name"] == source["name"] == "gpuviz"
    assert built["version"] == source["version"]
    load = built["jupyterlab"]["_build"]["load"]
    assert (BUILT / load).is_file(), load
    static = list((BUILT / "static").iterdir())
    # only the current build: every chunk is referenced from the remote entry or is a known file
    entry = (BUILT / load).read_text()
    for path in static:
        if path.suffix == ".js" and path.name not in (Path(load).name, "style.js"):
            assert path.name.split(".")[1] in entry, f"{path.name} is not part of the current build"
    total = sum(p.stat().st_size for p in static)
    assert total < 200_000, f"the built extension is {total} bytes"
    version = (ROOT / "labextension" / "src" / "index.ts").read_text()
    assert f"VERSION = '{source['version']}'" in version


def test_pyproject_ships_the_build_where_jupyter_looks():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data_files = project["tool"]["setuptools"]["data-files"]
    assert data_files["share/jupyter/labextensions/gpuviz"] == ["gpuviz/labextension/package.json",
                                                                "gpuviz/labextension/sources.sha256"]
    assert data_files["share/jupyter/labextensions/gpuviz/static"] == ["gpuviz/labextension/static/*"]
    assert any(dep.startswith("notebook>=7") for dep in project["project"]["optional-dependencies"]["demo"])


def test_jupyter_lists_the_extension_enabled():
    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        pytest.skip("no jupyter in this environment (make test installs JupyterLab)")
    listing = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True, timeout=120)
    lines = [line for line in (listing.stdout + listing.stderr).splitlines() if line.strip().startswith("gpuviz ")]
    assert lines, listing.stdout + listing.stderr
    assert "enabled" in lines[0] and "OK" in lines[0], lines[0]
    assert f"v{json.loads((SOURCES / 'package.json').read_text())['version']}" in lines[0]
