"""The docs document every command, option and module, their links resolve, and every command has help text."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from vault_engine.cli import cli

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PACKAGE = REPO / "vault_engine"
# The command table moved from the README to the command-line reference.
COMMANDS_DOC = (DOCS / "cli.md").read_text(encoding="utf-8")
MODULE_MAP = DOCS / "development.md"
# How each default was reached: one file per topic, listed in the log's README.
DECISIONS = DOCS / "decisions"
# Every command takes these; the reference says so once instead of on every row.
COMMON_OPTIONS = frozenset({"--vault", "--json"})


def _commands(group: click.Group, prefix: str = "") -> list[str]:
    names = []
    for name, command in sorted(group.commands.items()):
        names.append(prefix + name)
        if isinstance(command, click.Group):
            names += _commands(command, prefix + name + " ")
    return names


def _command(name: str) -> click.Command:
    command: click.Command = cli
    for part in name.split():
        assert isinstance(command, click.Group)
        command = command.commands[part]
    return command


@pytest.mark.parametrize("name", _commands(cli))
def test_every_command_is_in_the_command_table(name: str) -> None:
    assert f"| `memvault {name}" in COMMANDS_DOC or f"`memvault {name.split()[0]} " in COMMANDS_DOC


@pytest.mark.parametrize("name", [n for n in _commands(cli) if not isinstance(_command(n), click.Group)])
def test_every_option_is_in_its_command_row(name: str) -> None:
    rows = [line for line in COMMANDS_DOC.splitlines() if line.startswith(f"| `memvault {name.split()[0]}")]
    options = [opt for param in _command(name).params if isinstance(param, click.Option)
               for opt in param.opts if opt.startswith("--") and opt not in COMMON_OPTIONS]
    missing = [opt for opt in options if not any(re.search(rf"{re.escape(opt)}\b(?!-)", row) for row in rows)]
    assert not missing, f"docs/cli.md does not document {missing} of memvault {name}"


@pytest.mark.parametrize("name", _commands(cli))
def test_every_command_has_help(name: str) -> None:
    command = _command(name)
    assert (command.help or "").strip(), f"memvault {name} has no help text"


def _modules_on_disk() -> set[str]:
    """Every module as a path relative to vault_engine/, and every sub-package as ``name/``."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if "__pycache__" in rel.parts:
            continue
        if path.name == "__init__.py":
            if rel.parent != Path("."):
                names.add(f"{rel.parent.as_posix()}/")
        elif path.name != "__main__.py":
            names.add(rel.as_posix())
    return names


def _modules_in_map() -> set[str]:
    """The module paths the module map names: one per bullet (`- `x.py`: ...`) or package heading."""
    text = MODULE_MAP.read_text(encoding="utf-8")
    section = text.split("\n## Module map\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        match = re.match(r"(?:- |#+ )`([^`]+)`", line)
        if match:
            names.add(match.group(1))
    return names


def test_the_module_map_names_every_module() -> None:
    missing = sorted(_modules_on_disk() - _modules_in_map())
    assert not missing, f"docs/development.md's module map is missing {missing}"


def test_the_module_map_names_only_modules_that_exist() -> None:
    stale = sorted(_modules_in_map() - _modules_on_disk())
    assert not stale, f"docs/development.md's module map names modules that do not exist: {stale}"


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DECISIONS.glob("*.md"))]


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            anchors.add(_slug(line.lstrip("#")))
    return anchors


def _links(page: Path) -> list[str]:
    links, fenced = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            links += [target for target in LINK.findall(line) if not re.match(r"[a-z]+:", target)]
    return links


@pytest.mark.parametrize("page", _pages(), ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists() or (anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved)):
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)} links to what does not exist: {broken}"


def test_the_readme_links_every_docs_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    unlinked = [page.name for page in sorted(DOCS.glob("*.md")) if f"(docs/{page.name}" not in readme]
    assert not unlinked, f"README.md does not link {unlinked}"


def test_the_decisions_log_lists_every_topic_and_is_linked() -> None:
    index = (DECISIONS / "README.md").read_text(encoding="utf-8")
    unlisted = [page.name for page in sorted(DECISIONS.glob("*.md"))
                if page.name != "README.md" and f"]({page.name})" not in index]
    assert not unlisted, f"docs/decisions/README.md does not list {unlisted}"
    for page in ("performance.md", "development.md"):
        text = (DOCS / page).read_text(encoding="utf-8")
        assert "(decisions/README.md)" in text, f"docs/{page} does not link the decisions log"
