"""The parsers of ``memvault import --from``: what each kind of file gives as entries, and what it refuses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vault_engine.context.export import block
from vault_engine.errors import InvalidInput
from vault_engine.ingest.memory_files import (
    infer_kind,
    markdown_entries,
    read_claude_code_memory,
    read_codex_memories,
    read_memory_files,
    read_rules_file,
)

AGENTS_MD = """# Acme API

The api serves the mobile apps; it runs on Python 3.12.

## Testing

- Always run `pytest -q` before committing.
- Use fixtures from tests/conftest.py, never unittest setUp.
  - Shared fixtures live in tests/conftest.py.
  ```python
  def test_x(client): ...
  ```
* I prefer small, focused test files.

## Release steps

1. Bump the version in pyproject.toml.
2. Tag the commit: `git tag vX.Y.Z`.

3. Push the tag; CI publishes the wheel.

---
<!-- a comment, not a memory -->
"""


def test_agents_md_bullets_lists_and_paragraphs_become_entries() -> None:
    entries = markdown_entries(AGENTS_MD)
    assert [(e.anchor, e.kind) for e in entries] == [
        ("acme-api-1", "fact"), ("testing-1", "rule"), ("testing-2", "rule"), ("testing-3", "preference"),
        ("release-steps-1", "procedure")]
    nested = entries[2].text
    assert nested.startswith("Use fixtures") and "Shared fixtures live" in nested and "def test_x" in nested
    assert entries[4].text.startswith("1. Bump") and "3. Push the tag" in entries[4].text  # one list, blank and all
    assert entries[1].title == "Testing: Always run pytest -q before committing."
    assert entries[1].section == "Acme API > Testing"


def test_memvaults_own_exported_block_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(AGENTS_MD + "\n" + block("<memory-context>\n- `m-1` **Deploy**: exported memory\n"
                                             "</memory-context>") + "\n\n- Never push to main.\n", encoding="utf-8")
    file = read_rules_file(path, "agents-md", home=tmp_path / "home")
    texts = [e.text for e in file.entries]
    assert "Never push to main." in texts and not any("exported memory" in t for t in texts)
    assert file.folder == tmp_path and not file.user_level


def test_a_user_level_claude_md_is_global(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    path = home / ".claude" / "CLAUDE.md"
    path.write_text("# Me\n\n- I like answers without preamble.\n", encoding="utf-8")
    file = read_rules_file(path, "claude-md", home=home)
    assert file.user_level and file.folder is None and file.entries[0].kind == "preference"


@pytest.mark.parametrize(("name", "data", "message"), [
    ("AGENTS.md", b"\xff\xfe# not utf-8\n", "not UTF-8 text"),
    ("AGENTS.md", b'{"role": "user"}\n', "holds JSON, not markdown"),
    ("agents.txt", b"# Rules\n", "not a markdown file"),
    ("AGENTS.md", b"# Rules\n\x00\x01", "binary data"),
    ("AGENTS.md", ("- a\n" + block("x")[:-len("<!-- memvault:end -->")]).encode(), "has no end marker"),
])
def test_a_file_that_is_not_what_from_says_is_refused(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InvalidInput, match=message):
        read_memory_files("agents-md", [path], None)


def test_a_missing_path_is_refused(tmp_path: Path) -> None:
    for kind in ("agents-md", "claude-code-memory", "codex-memories"):
        with pytest.raises(InvalidInput, match="no such file or folder"):
            read_memory_files(kind, [tmp_path / "nope"], None)


def claude_memory(tmp_path: Path, project: Path) -> Path:
    """A Claude Code auto memory folder for ``project``, as 2.1 writes it."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    folder = tmp_path / "home" / ".claude" / "projects" / slug / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "- [Testing conventions](feedback_testing.md) — how tests are written here\n"
        "- [Who I work with](user_role.md) — the user's role\n"
        "- [Old note](gone.md) — a link whose file is gone stays a line of the index\n"
        "- The staging cluster is eu-west-1.\n", encoding="utf-8")
    (folder / "feedback_testing.md").write_text(
        "---\nname: testing-conventions\ndescription: Integration tests hit a real database, never mocks\n"
        "metadata:\n  type: feedback\n---\n\nIntegration tests must hit a real database, not mocks.\n"
        "**Why:** a mocked migration passed while prod broke.\n", encoding="utf-8")
    (folder / "user_role.md").write_text(
        "---\nname: user-role\ndescription: The user is a data scientist\ntype: user\n---\n"
        "The user is a data scientist focused on observability and logging.\n", encoding="utf-8")
    return folder


def test_claude_code_auto_memory_topic_files_and_index(tmp_path: Path) -> None:
    project = tmp_path / "work" / "api.v2"
    project.mkdir(parents=True)
    folder = claude_memory(tmp_path, project)
    files = {f.path.name: f for f in read_claude_code_memory(folder, tmp_path / "home")}
    assert set(files) == {"MEMORY.md", "feedback_testing.md", "user_role.md"}
    index = [e.text for e in files["MEMORY.md"].entries]
    assert index == ["[Old note](gone.md) — a link whose file is gone stays a line of the index",
                     "The staging cluster is eu-west-1."]
    testing = files["feedback_testing.md"].entries[0]
    assert (testing.anchor, testing.kind) == ("feedback_testing", "rule")
    assert testing.title == "Integration tests hit a real database, never mocks"
    assert testing.text.startswith("Integration tests must hit a real database")
    assert files["user_role.md"].entries[0].kind == "profile"
    assert files["user_role.md"].folder == project  # found again from the slug, '.' and all


def test_claude_code_memory_of_a_folder_that_is_gone_is_global(tmp_path: Path) -> None:
    folder = claude_memory(tmp_path, tmp_path / "deleted-project")
    assert all(f.user_level and f.folder is None for f in read_claude_code_memory(folder, None))


def test_a_folder_without_memory_is_not_claude_codes_auto_memory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="not Claude Code's auto memory folder"):
        read_claude_code_memory(tmp_path / "empty", None)


CODEX_SUMMARY = """## User Profile

The user maintains the Acme api and prefers terse answers with the commands to run.

## General Tips

- Run `make check` before declaring a task done.
- The repo uses uv; never call pip directly.

## What's in Memory

- api release: release, tag, wheel
  - desc: how the api is released
"""

CODEX_MEMORY = """# Task Group: api release

scope: releasing the Acme api

## Task 1: cut release 2.3, success

### rollout_summary_files

- rollout_summaries/2026-11-02-release.md (cwd=/work/api, updated_at=2026-11-02T10:00:00Z)

### keywords

- release, tag, wheel

## User preferences

- The user wants release notes grouped by component.

## Reusable knowledge

- The wheel is built by CI on tag push; a local build is not uploaded.

## Failures and how to do differently

- Tagging before bumping the version publishes the old version: bump first.

---
rollout_summary_files:
  - 2026-10-01-old.md (cwd=/work/api, updated_at=2026-10-01T10:00:00Z)
description: older clustered block
keywords: a, b
---

- The changelog lives in docs/CHANGES.md.
"""


def test_codex_memories_profile_tips_and_handbook(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    (folder / "rollout_summaries").mkdir(parents=True)
    (folder / "memory_summary.md").write_text(CODEX_SUMMARY, encoding="utf-8")
    (folder / "MEMORY.md").write_text(CODEX_MEMORY, encoding="utf-8")
    (folder / "raw_memories.md").write_text("- raw, not consolidated\n", encoding="utf-8")
    (folder / "rollout_summaries" / "2026-11-02-release.md").write_text("recap\n", encoding="utf-8")
    files = read_codex_memories(folder)
    assert [f.path.name for f in files] == ["memory_summary.md", "MEMORY.md"] and all(f.user_level for f in files)
    summary = [(e.kind, e.text) for e in files[0].entries]
    assert summary[0][0] == "profile" and summary[0][1].startswith("The user maintains the Acme api")
    assert ("rule", "The repo uses uv; never call pip directly.") in summary
    assert not any("desc:" in text or "api release:" in text for _, text in summary)
    handbook = [(e.kind, e.text) for e in files[1].entries]
    assert ("preference", "The user wants release notes grouped by component.") in handbook
    assert ("rule", "Tagging before bumping the version publishes the old version: bump first.") in handbook
    assert ("fact", "The wheel is built by CI on tag push; a local build is not uploaded.") in handbook
    assert "The changelog lives in docs/CHANGES.md." in [t for _, t in handbook]
    texts = " ".join(t for _, t in handbook)
    assert "rollout_summaries/" not in texts and "release, tag, wheel" not in texts and "older clustered" not in texts
    assert "raw, not consolidated" not in texts


def test_a_file_that_is_not_codexs_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "notes.md"
    other.write_text("- a note\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"not memory_summary\.md nor MEMORY\.md"):
        read_codex_memories(other)
    with pytest.raises(InvalidInput, match="not Codex's memories folder"):
        read_codex_memories(tmp_path)


@pytest.mark.parametrize(("text", "section", "kind"), [
    ("Never push to main.", "Git", "rule"),
    ("Use ruff for formatting.", "", "rule"),
    ("We prefer tabs in Go files.", "", "preference"),
    ("The api runs on Python 3.12.", "Overview", "fact"),
    ("```sh\nmake release\n```", "How to release", "procedure"),
    ("Works at Acme as a platform engineer.", "About me", "profile"),
])
def test_kinds_are_inferred_from_words_and_section(text: str, section: str, kind: str) -> None:
    assert infer_kind(text, section) == kind
