"""The code's shape (docs/architecture.md): no import cycles, public dependency APIs only.

The layer contracts themselves are import-linter's (``lint-imports`` in CI); these tests
check what it does not: that no module reaches itself through its imports, and that no
module imports a private module of scikit-learn (``sklearn.*._*``).
"""

from __future__ import annotations

import ast
import pathlib
from numbers import Real

import pytest

from privet.learners._params import Interval, StrOptions, validate_params

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "privet"


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Module-level privet imports of every privet module (function-level ones too)."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                    base = f"{base}.{node.module}" if node.module else base
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("privet"):
                    graph[name].add(t)
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm; components of more than one module are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Drop edges into a package's ``__init__`` from its own submodules.

    ``pkg/__init__.py`` re-exporting ``pkg.mod`` while ``pkg.mod`` imports a sibling
    through ``pkg`` is how Python packages work, not a design cycle; an edge from a
    module to the package that contains it is therefore ignored.
    """
    return {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in _strongly_connected(_without_packages(_imports())) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles}"


def test_cycle_detector_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [sorted(c) for c in _strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def test_no_private_sklearn_modules() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = []
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            for m in mods:
                if m.startswith("sklearn") and any(p.startswith("_") for p in m.split(".")):
                    offenders.append(f"{path.relative_to(SRC)}: {m}")
    assert offenders == []


class _Est:
    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "mode": [StrOptions({"a", "b"}), None],
    }

    def __init__(self, epsilon=1.0, mode="a"):
        self.epsilon = epsilon
        self.mode = mode

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "mode": self.mode}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"epsilon": 0}, r"'epsilon' parameter of _Est must be a float in the range \(0, inf\)"),
        ({"epsilon": float("nan")}, "Got nan instead"),
        ({"epsilon": True}, "Got True instead"),
        ({"mode": "c"}, r"a str among \{'a', 'b'\} or None"),
    ],
)
def test_params_helper_rejects_with_sklearn_shaped_message(params, message) -> None:
    from privet.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=message):
        validate_params(_Est(**params))


def test_params_helper_accepts_valid_values() -> None:
    validate_params(_Est(epsilon=0.5, mode=None))
    validate_params(_Est(epsilon=3, mode="b"))


def test_every_module_imports() -> None:
    """A stale import path (a module moved by a restructuring) fails here, not in a user's hands."""
    import importlib

    failures = []
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        try:
            importlib.import_module(name)
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    assert failures == []


def test_importing_the_learners_does_not_start_mpyc() -> None:
    """MPyC reads its command line when its runtime is imported: only MPC paths load it."""
    import subprocess
    import sys

    code = "import sys, privet.learners, privet.audits; print(any(m.startswith('mpyc') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
