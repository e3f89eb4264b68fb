"""No module of the trace viewer reads another object's private attributes:
the viewer's state is read through what the class hands out (its state
objects, arguments), never as ``viewer._x`` from another module. The
check parses every module of ``gpuviz/widgets/trace/`` and fails on any
``<expr>._name`` whose ``<expr>`` is not ``self`` or ``cls`` (an object's
own attributes), e.g. ``viewer._window``, ``self.viewer._graph`` or
``graph._owned``."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "gpuviz" / "widgets" / "trace"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_reads(source: str) -> list:
    """(line, text) of every private attribute read on something other than self / cls."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                hits.append((node.lineno, ast.unparse(node)))
    return hits


def test_no_private_attribute_of_another_object_is_read():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += [f"{path.relative_to(PACKAGE.parents[2])}:{line}: {text}"
                  for line, text in private_reads(path.read_text(encoding="utf-8"))]
    assert not found, "private attributes read from outside their object:\n" + "\n".join(found)


def test_the_check_sees_private_reads():
    source = "def f(viewer, self):\n    a = viewer._window\n    b = self.viewer._graph.frame\n    c = self._ok\n" \
             "    d = viewer.__class__\n"
    assert [text for _, text in private_reads(source)] == ["viewer._window", "self.viewer._graph"]
