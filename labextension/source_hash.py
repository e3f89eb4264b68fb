"""The hash of the labextension's sources, recorded beside its built output.

``make labextension`` writes it to ``gpuviz/labextension/sources.sha256``
after building; tests/test_labextension_build.py recomputes it (no node
needed) so a source edited without rebuilding fails CI. It covers every file
that decides the build: package.json, package-lock.json, tsconfig.json,
src/ and style/.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = HERE.parent / "gpuviz" / "labextension" / "sources.sha256"


def source_files(root: Path = HERE) -> list:
    """The files hashed, sorted by their path relative to ``root``."""
    files = [root / name for name in ("package.json", "package-lock.json", "tsconfig.json")]
    for folder in ("src", "style"):
        files += [p for p in (root / folder).rglob("*") if p.is_file()]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def source_hash(root: Path = HERE) -> str:
    """sha256 over each source's relative path and bytes (line endings as stored)."""
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        RECORD.write_text(source_hash() + "\n")
    print(source_hash())
