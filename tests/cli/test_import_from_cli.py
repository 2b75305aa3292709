"""``memvault import --from``: real files in a real git checkout, planned, applied, and applied again."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from vault_engine.vault import Vault

SECRET = "sk-ant-api03-" + "A" * 93 + "-AAAAAAAA"

CLAUDE_MD = f"""# Acme web

The web app is a Next.js site deployed on Fly.

## Testing

- Always run `pnpm test` before committing.
- Use msw for HTTP mocks, never hand-written fetch stubs.
- For now, skip the visual tests.

## Release

1. Bump the version.
2. Tag the commit and push the tag.

## Secrets

- The CI token is {SECRET}; keep it out of logs.
"""


def as_json(result: Result) -> dict:  # type: ignore[type-arg]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def imported(vault: Vault) -> dict[str, list]:  # type: ignore[type-arg]
    """source -> [memories] of the vault's live memories imported from files."""
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for entry in vault.scan().active():
        if entry.memory.source.startswith("document:") and entry.memory.lifecycle != "superseded":
            out.setdefault(entry.memory.source, []).append(entry.memory)
    return out


def one_error(result: Result, *parts: str) -> None:
    """Exactly one stderr line starting with 'error: ', a non-zero exit, no traceback."""
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for part in parts:
        assert part in lines[0], lines[0]


def test_dry_run_shows_the_plan_and_writes_nothing(run_cli: Callable[..., Result], vault: Vault,
                                                   checkout: Path) -> None:
    (checkout / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    before = sorted(p.relative_to(vault.root) for p in vault.root.rglob("*") if ".memvault" not in p.parts)
    plan = as_json(run_cli("--json", "import", "--from", "claude-md", "--dry-run", str(checkout / "CLAUDE.md")))
    assert plan["dry_run"] and plan["counts"] == {"create": 5, "update": 0, "unchanged": 0, "skip": 1, "failed": 0}
    assert after_files(vault) == before
    human = run_cli("import", "--from", "claude-md", "--dry-run", str(checkout / "CLAUDE.md"))
    assert human.exit_code == 0 and "would create" in human.stdout and "skipped" in human.stdout
    assert f"document:{checkout / 'CLAUDE.md'}#testing-1  [rule, github.com/acme/web]" in human.stdout
    assert after_files(vault) == before


def after_files(vault: Vault) -> list[Path]:
    return sorted(p.relative_to(vault.root) for p in vault.root.rglob("*") if ".memvault" not in p.parts)


def test_import_types_places_and_redacts_then_imports_again_without_duplicates(
        run_cli: Callable[..., Result], vault: Vault, checkout: Path) -> None:
    path = checkout / "CLAUDE.md"
    path.write_text(CLAUDE_MD, encoding="utf-8")
    first = as_json(run_cli("--json", "import", "--from", "claude-md", str(path)))
    assert first["counts"]["create"] == 5 and first["counts"]["skip"] == 1
    memories = imported(vault)
    assert len(memories) == 5 and all(len(ms) == 1 for ms in memories.values())
    rule = memories[f"document:{path}#testing-1"][0]
    assert (rule.type, rule.klass, rule.scope, rule.project) == (
        "collaboration-policy", "project-convention", "project", "github.com/acme/web")
    assert rule.authority == "explicit" and "imported" in rule.tags
    assert memories[f"document:{path}#release-1"][0].type == "procedure"
    assert memories[f"document:{path}#acme-web-1"][0].type == "fact"
    assert not any("visual tests" in m.body for ms in memories.values() for m in ms)  # a one-off
    for file in vault.root.rglob("*"):
        if file.is_file():
            assert SECRET.encode() not in file.read_bytes(), file
    # The same file again: nothing changes.
    again = as_json(run_cli("--json", "import", "--from", "claude-md", str(path)))
    assert again["counts"] == {"create": 0, "update": 0, "unchanged": 5, "skip": 1, "failed": 0}
    assert imported(vault).keys() == memories.keys()
    # One rule edited, one bullet inserted above the others: one update, one create, the rest unchanged.
    edited = CLAUDE_MD.replace("before committing", "before every push").replace(
        "## Testing\n\n", "## Testing\n\n- Keep each test under a second.\n")
    path.write_text(edited, encoding="utf-8")
    third = as_json(run_cli("--json", "import", "--from", "claude-md", str(path)))
    assert third["counts"] == {"create": 1, "update": 1, "unchanged": 4, "skip": 1, "failed": 0}
    now = imported(vault)
    assert len([m for ms in now.values() for m in ms]) == 6
    updated = next(i for i in third["items"] if i["action"] == "update")
    new = Vault(vault.root).find(updated["memory"]).memory
    assert "before every push" in new.body and new.supersedes == rule.id


def test_bad_input_gets_one_error_line_and_loses_nothing(run_cli: Callable[..., Result], vault: Vault,
                                                        checkout: Path) -> None:
    good = checkout / "AGENTS.md"
    good.write_text("- Never push to main.\n", encoding="utf-8")
    bad = checkout / "docs" / "AGENTS.md"
    bad.parent.mkdir()
    bad.write_bytes(b"- caf\xe9\n")
    before = after_files(vault)
    one_error(run_cli("import", "--from", "agents-md", str(good), str(checkout / "missing.md")),
              "missing.md", "no such file or folder")
    one_error(run_cli("import", "--from", "agents-md", str(good), str(bad)), str(bad), "not UTF-8 text")
    one_error(run_cli("import", "--from", "codex-memories", str(good)), "not memory_summary.md nor MEMORY.md")
    assert after_files(vault) == before


def test_agents_memories_are_global_unless_their_folder_is_a_project(
        run_cli: Callable[..., Result], vault: Vault, tmp_path: Path, checkout: Path) -> None:
    codex = tmp_path / "codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "memory_summary.md").write_text("## General Tips\n\n- Never run the full suite; pick the file.\n",
                                             encoding="utf-8")
    claude = tmp_path / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(checkout)) / "memory"
    claude.mkdir(parents=True)
    (claude / "MEMORY.md").write_text("- [Deploys](project_deploys.md) — how deploys work\n", encoding="utf-8")
    (claude / "project_deploys.md").write_text(
        "---\nname: deploys\ndescription: Deploys go through fly deploy --remote-only\ntype: project\n---\n"
        "Deploys go through `fly deploy --remote-only`; never deploy from a laptop build.\n", encoding="utf-8")
    as_json(run_cli("--json", "import", "--from", "codex-memories", str(codex)))
    as_json(run_cli("--json", "import", "--from", "claude-code-memory", str(claude)))
    memories = imported(vault)
    tip = memories[f"document:{codex / 'memory_summary.md'}#general-tips-1"][0]
    assert (tip.scope, tip.type, tip.authority) == ("global", "collaboration-policy", "inferred")
    deploys = memories[f"document:{claude / 'project_deploys.md'}#project_deploys"][0]
    assert (deploys.scope, deploys.project, deploys.type) == ("project", "github.com/acme/web", "fact")
    assert deploys.title == "Deploys go through fly deploy --remote-only"


def test_the_jsonl_form_is_unchanged_and_from_options_need_from(run_cli: Callable[..., Result],
                                                                  tmp_path: Path) -> None:
    lines = tmp_path / "m.jsonl"
    lines.write_text('{"body": "The api runs on Python 3.12."}\n', encoding="utf-8")
    assert as_json(run_cli("--json", "import", str(lines)))["imported"]
    assert run_cli("import", "--dry-run", str(lines)).exit_code == 2
    assert run_cli("import", str(lines), str(lines)).exit_code == 2
