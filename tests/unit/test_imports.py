"""No two modules of the package import each other, not even through others,
and its folders import in one direction: each only from the layers below it.

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


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    out: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
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


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_names(package)
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


# The layers of the package, top to bottom.  A module imports from its own folder and from the layers
# below its own, never from one above.  The folders of one layer are independent of each other; the
# single modules of one layer may import each other (the cycle test keeps them in one order).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "__main__"),  # the package itself (its `__init__` re-exports the Vault) and `python -m vault_engine`
    ("cli",),
    ("server",),
    ("daemon", "agents"),
    ("ingest",),
    ("context", "sharing"),
    ("vault",),
    ("governance",),
    ("retrieval",),
    ("index",),
    ("llm",),
    ("store", "copies", "history", "journal", "captures", "gitclone", "senders", "served"),
    ("format",),
    ("config", "location", "invocation", "errors", "limits", "clock", "version", "fsio", "locks", "patterns"),
)


def unit_of(module: str) -> str:
    """The folder or top-level module a module belongs to: ``index`` for ``vault_engine.index.sync``,
    ``store`` for ``vault_engine.store``, ``""`` for the package itself."""
    return module.split(".")[1] if "." in module else ""


def upward_imports(edges: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Every import of ``edges`` against the order of ``layers``: each one from a layer above, or
    between two folders of one layer, as ``module -> module``; and each folder or top-level module
    that has no layer."""
    rank = {unit: number for number, layer in enumerate(layers) for unit in layer}
    folders = {unit_of(module) for module in edges if module.count(".") >= 2}
    found = sorted({f"{unit_of(module) or module} has no layer" for module in edges if unit_of(module) not in rank})
    for source in sorted(edges):
        here = unit_of(source)
        for target in sorted(edges[source]):
            there = unit_of(target)
            if here == there or here not in rank or there not in rank or rank[there] > rank[here]:
                continue
            if rank[there] == rank[here] and not {here, there} & folders:
                continue  # two single modules of one layer
            found.append(f"{source} -> {target}")
    return found


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


def test_folders_import_only_from_the_layers_below() -> None:
    upward = upward_imports(graph())
    assert not upward, ("imports against the layers (LAYERS here, the diagram in docs/development.md):\n"
                        + "\n".join(upward))

def _write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / NAME / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / NAME


def test_the_layer_check_names_each_import_against_the_order(tmp_path: Path) -> None:
    files = {
        "__init__.py": "from .vault import Vault\n",
        "errors.py": "class VaultError(Exception): ...\n",
        "store.py": "from . import journal\nfrom .errors import VaultError\n",
        "journal.py": "from .errors import VaultError\n",
        "vault/__init__.py": "from .vault import Vault\n",
        "vault/vault.py": "from ..index import catalog\nfrom ..store import journal\n\nclass Vault: ...\n",
        "index/__init__.py": "",
        "index/catalog.py": "from .. import store\n\n\ndef rows() -> None:\n    return None\n",
        "index/sync.py": "from typing import TYPE_CHECKING\n",
        "retrieval/__init__.py": "",
        "retrieval/threads.py": "from ..index import catalog\n",
        "context/__init__.py": "",
        "context/director.py": "from ..vault import Vault\n",
        "sharing/__init__.py": "",
        "sharing/senders.py": "from ..errors import VaultError\n",
    }
    package = _write_package(tmp_path, files)
    assert upward_imports(graph(package)) == []  # every import goes down, or between single modules of a layer

    # One import up from inside a function, one under TYPE_CHECKING, one between folders of one layer,
    # and a folder with no layer: each is named.
    _write_package(tmp_path, {
        "index/catalog.py": "from .. import store\n\n\ndef rows() -> None:\n    from ..retrieval.threads import x\n",
        "index/sync.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                         "    from vault_engine.vault import Vault\n",
        "context/director.py": "from ..vault import Vault\nfrom ..sharing import senders\n",
        "plugins/__init__.py": "from ..vault import Vault\n",
    })
    assert upward_imports(graph(package)) == [
        "plugins has no layer",
        f"{NAME}.context.director -> {NAME}.sharing.senders",
        f"{NAME}.index.catalog -> {NAME}.retrieval.threads",
        f"{NAME}.index.sync -> {NAME}.vault",
    ]
