"""The package stays easy to enter: no module, class or function grows past what one reading takes."""

from __future__ import annotations

import ast
from pathlib import Path

import vault_engine

PACKAGE = Path(vault_engine.__file__).parent
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_is_too_long() -> None:
    long = [f"{p.relative_to(PACKAGE)}: {n} lines" for p in _modules()
            if (n := p.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES]
    assert long == []


def test_no_class_or_function_is_too_long() -> None:
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                limit = MAX_CLASS_LINES
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                limit = MAX_FUNCTION_LINES
            else:
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > limit:
                long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {size} lines")
    assert long == []


def test_the_limits_are_checked_against_real_code() -> None:
    """The walk above sees the package: its largest class is well past a trivial size."""
    sizes = [(n.end_lineno or n.lineno) - n.lineno + 1 for p in _modules()
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef)]
    assert len(_modules()) > 100 and max(sizes) > 100
