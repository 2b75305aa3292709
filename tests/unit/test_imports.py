"""No two modules of the package import each other, not even through others.

Every import statement counts: top-level, function-local and ``TYPE_CHECKING``
ones.  A function-local import hides a cycle from Python, not from a reader:
the modules still depend on each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import vault_engine

PACKAGE = Path(vault_engine.__file__).parent
NAME = "vault_engine"


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name ``from <...> import`` starts from (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The package's modules that ``module`` imports anywhere in its source."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield f"{base}.{alias.name}"
                elif base in known:
                    yield base


def graph() -> dict[str, set[str]]:
    modules = module_names()
    known = set(modules)
    return {name: set(imports_of(name, path, known)) - {name} for name, path in modules.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``edges`` as the list of modules along it (first repeated last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_walk_sees_every_kind_of_import() -> None:
    edges = graph()
    assert f"{NAME}.vault" in edges[NAME]  # `from .vault import Vault` names a package
    assert f"{NAME}.errors" in edges[f"{NAME}.fsio"]  # `from .errors import VaultBusy` names a module
    assert f"{NAME}.vault.vault" in edges[f"{NAME}.vault"]  # a package re-exporting its submodule


def test_find_cycle_names_the_modules_along_it() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_module_imports_itself_through_others() -> None:
    edges = graph()
    cycles = []
    while (cycle := find_cycle(edges)) is not None:
        cycles.append(" -> ".join(cycle))
        edges[cycle[-2]].discard(cycle[-1])  # report every cycle, not only the first
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
