"""The layer map is true: import-linter's contracts (pyproject.toml,
[tool.importlinter]) hold, no gpuviz module imports another's private name,
and gpuviz has no import cycles. The last two are read from the source with
``ast``: import-linter checks layers and forbidden imports, not names."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpuviz

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(gpuviz.__file__).resolve().parent


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail(f"lint-imports is not installed beside {sys.executable} (pip install -e '.[test]')")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr


def _modules() -> dict:
    """Dotted module name -> parsed source, for every gpuviz/**/*.py."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("gpuviz",) + path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = (path, ast.parse(path.read_text(), filename=str(path)))
    return modules


MODULES = _modules()


def _imports(name, tree):
    """``(line, target module, imported names)`` for each gpuviz import in a
    module, anywhere in it (function-level imports close cycles too)."""
    is_package = MODULES[name][0].name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gpuviz":
                    yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gpuviz":
                continue
            names = tuple(alias.name for alias in node.names)
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            if submodules:  # ``from . import compat`` imports the module gpuviz.graph.compat
                for submodule in submodules:
                    yield node.lineno, submodule, ()
                names = tuple(n for n in names if f"{target}.{n}" not in MODULES)
            if names or not submodules:
                yield node.lineno, target, names


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for name, (path, tree) in MODULES.items():
        for line, target, names in _imports(name, tree):
            private = [p for p in target.split(".") if _private(p)] + [n for n in names if _private(n)]
            if private and target != name:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {', '.join(private)} from {target}")
    assert not offenders, "private names imported across modules:\n" + "\n".join(offenders)


def test_only_bench_imports_the_oracles():
    """CPU oracles (gpuviz.oracles) serve tests and benchmarks: no production
    module imports one, at module level or inside a function."""
    offenders = []
    for name, (path, tree) in MODULES.items():
        if name.split(".")[:2] in (["gpuviz", "bench"], ["gpuviz", "oracles"]):
            continue
        for line, target, _names in _imports(name, tree):
            if target.split(".")[:2] == ["gpuviz", "oracles"]:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not offenders, "production modules import an oracle:\n" + "\n".join(offenders)


def test_errors_are_imported_from_gpuviz_errors_only():
    """The GraphError family has one home, gpuviz.errors: no module imports
    one of its classes through another module (gpuviz itself re-exports
    them as public names)."""
    import gpuviz.errors

    family = set(gpuviz.errors.__all__)
    offenders = []
    for name, (path, tree) in MODULES.items():
        for line, target, names in _imports(name, tree):
            through = [n for n in names if n in family or n == "*"]
            if through and target != "gpuviz.errors":
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {', '.join(through)} from {target}")
    assert not offenders, "errors imported other than from gpuviz.errors:\n" + "\n".join(offenders)


def test_no_import_cycles():
    edges = {name: set() for name in MODULES}
    for name, (_path, tree) in MODULES.items():
        for _line, target, _names in _imports(name, tree):
            while target not in MODULES and "." in target:  # ``import gpuviz.x.y`` of a name, not a file
                target = target.rsplit(".", 1)[0]
            if target != name and target in MODULES:
                edges[name].add(target)
    cycles = [" -> ".join(c) for c in _cycles(edges)]
    assert not cycles, "import cycles in gpuviz:\n" + "\n".join(cycles)


def _cycles(edges) -> list:
    """One closed path through each strongly connected component of more
    than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(set(component))
    return [_path_through(edges, component) for component in components]


def _path_through(edges, component) -> list:
    """A cycle inside ``component``, starting from its first module."""
    start = min(component)
    path, seen, node = [start], {start: 0}, start
    while True:
        node = min(n for n in edges[node] if n in component)
        if node in seen:
            return path[seen[node]:] + [node]
        seen[node] = len(path)
        path.append(node)
