"""The command line's edges: one size limit on every way text comes in, checked before the vault is opened, and
human output that shows control characters instead of letting the terminal run them."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vault_engine.cli import cli
from vault_engine.limits import MAX_DOCUMENT, MAX_ITEMS, MAX_SUMMARY, MAX_TAG, MAX_TEXT, MAX_TITLE
from vault_engine.vault import NewMemory, Vault

PACKAGE = Path(__file__).resolve().parents[2] / "vault_engine"
# What a terminal acts on: every C0 control but tab and newline, DEL and the C1 controls.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Endless(io.RawIOBase):
    """Standard input of ``size`` bytes of ``x`` that fails the test when read ``cap`` bytes deep."""

    def __init__(self, size: int, cap: int):
        self.size, self.cap, self.taken = size, cap, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self.size - self.taken)
        if self.taken + count > self.cap:
            raise AssertionError(f"read {self.taken + count} bytes of a {self.size}-byte input")
        buffer[:count] = b"x" * count
        self.taken += count
        return count


def _files(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _one_error(result: Result, *fragments: str) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


@pytest.mark.parametrize(("args", "limit", "what"), [
    (("add", "-"), MAX_TEXT, "memory text"),
    (("correct", "m-01j9z3k4q8r2s5t7v9w1x3y5z7", "-"), MAX_TEXT, "correction text"),
    (("ingest-doc", "-"), MAX_DOCUMENT, "the document"),
    (("remember-output", "--source", "tool:cat"), MAX_DOCUMENT, "the tool output"),
    (("ingest", "-", "--session", "s1"), MAX_DOCUMENT, "the conversation"),
])
def test_standard_input_past_the_limit_is_refused_unread_and_nothing_is_written(vault: Vault, args: tuple[str, ...],
                                                                                limit: int, what: str) -> None:
    """5 MB on standard input: refused in one line after reading the limit and at most a block more."""
    before = _files(vault.root)
    stdin = Endless(5_000_000, cap=limit + 256 * 1024)
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), *args], input=io.BufferedReader(stdin))
    _one_error(result, "<stdin>", f"{what} is too long (more than {limit} characters")
    assert _files(vault.root) == before


def test_a_text_argument_past_the_limit_is_refused(run_cli: Callable[..., Result], vault: Vault) -> None:
    before = _files(vault.root)
    line = _one_error(run_cli("add", "x" * (MAX_TEXT + 1)))
    assert f"memory text is too long ({MAX_TEXT + 1} characters; at most {MAX_TEXT}); a longer text is a " \
           "document: memvault ingest-doc" in line
    _one_error(run_cli("correct", "m-01j9z3k4q8r2s5t7v9w1x3y5z7", "y" * (MAX_TEXT + 1)), "correction text is too long")
    assert _files(vault.root) == before


@pytest.mark.parametrize(("args", "fragment"), [
    (("--title", "t" * (MAX_TITLE + 1)), f"title is too long ({MAX_TITLE + 1} characters; at most {MAX_TITLE})"),
    (("--summary", "s" * (MAX_SUMMARY + 1)), "summary is too long"),
    (("--trigger", "w" * (MAX_SUMMARY + 1)), "trigger is too long"),
    (("--tag", "g" * (MAX_TAG + 1)), "a tag is too long"),
    (tuple(a for n in range(MAX_ITEMS + 1) for a in ("--tag", f"t{n}")), f"tags: at most {MAX_ITEMS} may be given"),
])
def test_the_short_fields_have_the_servers_limits_on_the_command_line(
        run_cli: Callable[..., Result], vault: Vault, args: tuple[str, ...], fragment: str) -> None:
    before = _files(vault.root)
    _one_error(run_cli("add", "Deploys go out with make release.", *args), fragment)
    assert _files(vault.root) == before


def test_stdin_at_the_limit_is_taken(vault: Vault) -> None:
    text = ("Deploys go out with make release. " * (MAX_TEXT // 34 + 1))[:MAX_TEXT]
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), "add", "-", "--json"], input=text)
    assert result.exit_code == 0, result.output
    assert Vault(vault.root).entry(json.loads(result.stdout)["id"]).memory.body.strip() == text.strip()


def test_an_import_line_or_body_past_the_limit_is_one_bad_line(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    lines = [
        json.dumps({"title": "Fine", "body": "Staging runs Postgres 16."}),
        json.dumps({"title": "Too long a line", "body": "z" * MAX_DOCUMENT}),
        json.dumps({"title": "Too long a body", "body": "y" * (MAX_TEXT + 1)}),
        json.dumps({"title": "Also fine", "body": "Production runs Postgres 15."}),
    ]
    file = tmp_path / "memories.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli("import", str(file), "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert len(data["imported"]) == 2
    assert data["errors"] == [f"{file}:2: line is too long (more than {MAX_DOCUMENT} characters)",
                              f"{file}:3: body is too long ({MAX_TEXT + 1} characters; at most {MAX_TEXT})"]


# ---------------------------------------------------------------- control characters in what is printed


TITLE = "Deploy \x9b31mchecklist\x9b0m \x9d0;owned\x9c \x7f"  # C1 CSI, OSC and ST, and DEL


@pytest.fixture
def hostile(vault: Vault) -> tuple[Vault, str]:
    """A vault holding a memory whose title, summary and body carry terminal sequences, and a hand-edited file
    whose title holds an escape sequence that would set the terminal's title."""
    live = Vault(vault.root, auto_sync=True)
    added = live.add(NewMemory("Deploys need the release checklist \x9b2J first.", title=TITLE,
                               summary="Read \x9b31mthis\x9b0m first."))
    other = live.add(NewMemory("Rollbacks use the previous image tag.", title="Rollback steps"))
    path = vault.root / other.path
    path.write_text(path.read_text(encoding="utf-8").replace("title: Rollback steps",
                                                              'title: "Rollback \\e]0;owned\\a steps"'), "utf-8")
    return live, added.id


@pytest.mark.parametrize("args", [
    ("list",), ("show", "{id}", "--depth", "2"), ("search", "deploy release checklist", "--explain"), ("status",),
    ("audit",), ("maintain", "--dry-run"), ("context", "--task", "deploy with the release checklist", "--overview"),
    ("trash", "list"),
])
def test_human_output_shows_control_characters_instead_of_running_them(hostile: tuple[Vault, str],
                                                                       args: tuple[str, ...]) -> None:
    vault, memory_id = hostile
    argv = [a.replace("{id}", memory_id) for a in args]
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), *argv])
    assert result.exit_code == 0, result.output
    printed = result.stdout + result.stderr
    assert not RAW_CONTROL.search(printed), repr(RAW_CONTROL.search(printed))
    if args[0] in ("list", "show", "search", "context"):
        assert "Deploy \\x9b31mchecklist\\x9b0m \\x9d0;owned\\x9c \\x7f" in printed


def test_json_output_stays_exact_json(hostile: tuple[Vault, str]) -> None:
    vault, memory_id = hostile
    for args in (("list", "--json"), ("show", memory_id, "--json"), ("context", "--task", "deploy checklist",
                                                                      "--overview", "--format", "json")):
        result = CliRunner().invoke(cli, ["--vault", str(vault.root), *args])
        assert result.exit_code == 0, result.output
        assert not RAW_CONTROL.search(result.stdout)  # DEL and C1 written as \u escapes: the same JSON value
        assert TITLE in json.dumps(json.loads(result.stdout), ensure_ascii=False)


def test_the_command_line_prints_through_one_helper() -> None:
    """Only cli/options.py may call click.echo: every other line goes through echo or echo_json."""
    offenders = [path.name for path in (PACKAGE / "cli").glob("*.py")
                 if path.name != "options.py" and "click.echo(" in path.read_text(encoding="utf-8")]
    assert not offenders


def test_indexes_a_newer_memvault_wrote_give_one_line_and_sync_full_rebuilds_them(
        vault: Vault, run_cli: Callable[..., Result]) -> None:
    import sqlite3

    from vault_engine.index.catalog import SCHEMA_VERSION

    vault.add(NewMemory("Deploys go through the staging cluster first.", title="Staging first"))
    vault.sync()
    db = sqlite3.connect(vault.root / ".memvault" / "catalog.sqlite")
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(int(SCHEMA_VERSION) + 1),))
    db.commit()
    db.close()
    _one_error(run_cli("search", "staging"), "catalog was written by a newer memvault",
               "memvault sync --full")
    status = run_cli("status")
    assert status.exit_code == 0 and "newer memvault" in status.output
    assert run_cli("sync", "--full").exit_code == 0
    found = run_cli("search", "staging")
    assert found.exit_code == 0 and "Staging first" in found.output
