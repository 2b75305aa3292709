"""changes.is_relevant: which filesystem changes can change what sync sees (pure, no filesystem)."""

from __future__ import annotations

from pathlib import Path

import pytest
from watchfiles import Change

from vault_engine.daemon.changes import is_relevant, is_temp_name

ROOT = "/vaults/main"
ALL_CHANGES = [Change.added, Change.modified, Change.deleted]


def at(rel: str) -> str:
    return f"{ROOT}/{rel}"


@pytest.mark.parametrize("change", ALL_CHANGES, ids=lambda c: c.name)
@pytest.mark.parametrize(
    "rel",
    [
        "memories/global/use-pytest.md",
        "memories/projects/github.com-acme-api/staging.md",
        "profile/me.md",
        "trash/old.md",  # trashed memories are indexed too (as trashed)
        "notes.md",  # a file the user made at the root
        "episodes/2024/journal/day.md",  # only the root journal/ is the vault's own
        "memories/journal/x.md",
        "memories/README.md",  # only the root README.md is the vault guide
        "memories/node_modules/x.md",  # only the root node_modules/ is skipped, as in store
        "a folder/with spaces.md",
    ],
)
def test_memory_files_are_relevant(rel: str, change: Change) -> None:
    assert is_relevant(ROOT, change, at(rel))


@pytest.mark.parametrize("change", ALL_CHANGES, ids=lambda c: c.name)
@pytest.mark.parametrize(
    "rel",
    [
        # the vault's own and tools' folders
        ".memvault/fulltext/meta.json",
        ".memvault/sync-files.json",
        ".memvault/lock",
        ".git/index",
        ".git/refs/heads/main.md",
        ".obsidian/workspace.json",
        ".obsidian/snippets/x.md",
        "journal/2026-11.jsonl",
        "journal/notes.md",
        "journal",
        "node_modules/pkg/README.md",
        # generated pages and the vault guide
        "INDEX.md",
        "memories/projects/acme/INDEX.md",
        "README.md",
        # hidden files and folders anywhere
        ".hidden.md",
        "memories/.drafts/idea.md",
        "memories/.idea.md",
        # editor swap, backup, lock and temp files
        "memories/.use-pytest.md.swp",
        "memories/.use-pytest.md.swx",
        "memories/use-pytest.md~",
        "memories/4913",
        "memories/5036",
        "memories/.#use-pytest.md",
        "memories/#use-pytest.md#",
        "memories/use-pytest.md.tmp",
        "memories/.use-pytest.md.3f9a1c2b7d4e.tmp",  # memvault's own atomic writes
        "memories/use-pytest.md___jb_tmp___",
        "memories/use-pytest.md___jb_old___",
        "memories/use-pytest.md.bak",
        "memories/use-pytest.md.orig",
        "memories/use-pytest.swp",
    ],
)
def test_other_paths_are_ignored(rel: str, change: Change) -> None:
    assert not is_relevant(ROOT, change, at(rel))


@pytest.mark.parametrize("rel", ["memories/projects/acme", "memories/2024", "memories/github.com-acme-api", "profile"])
@pytest.mark.parametrize("change", [Change.added, Change.deleted], ids=lambda c: c.name)
def test_a_folder_appearing_or_disappearing_is_relevant(rel: str, change: Change) -> None:
    # A folder moved in, away or renamed carries its memories without an event per file.
    assert is_relevant(ROOT, change, at(rel))


@pytest.mark.parametrize("rel", ["memories/projects/acme", "memories/diagram.png", "memvault.toml"])
def test_a_non_markdown_modification_is_ignored(rel: str) -> None:
    assert not is_relevant(ROOT, Change.modified, at(rel))


def test_deleting_a_memory_file_is_relevant() -> None:
    assert is_relevant(ROOT, Change.deleted, at("memories/global/gone.md"))


@pytest.mark.parametrize(
    "path",
    [
        "/vaults/main",  # the root itself
        "/vaults/main/",
        "/vaults/mainline/memories/x.md",  # a sibling folder sharing the prefix
        "/vaults/other/memories/x.md",
        "relative/memories/x.md",
    ],
)
def test_paths_outside_the_vault_are_ignored(path: str) -> None:
    assert not is_relevant(ROOT, Change.added, path)


def test_the_root_may_be_given_with_a_trailing_separator_or_as_a_path() -> None:
    assert is_relevant(ROOT + "/", Change.modified, at("memories/x.md"))
    assert is_relevant(Path(ROOT), Change.modified, at("memories/x.md"))


def test_markdown_suffix_is_case_sensitive_like_the_store() -> None:
    # store.iter_markdown reads only ``*.md``: a ``.MD`` file is not a memory,
    # but it may be a folder's name as far as a pure filter can tell.
    assert not is_relevant(ROOT, Change.modified, at("memories/NOTES.MD"))


@pytest.mark.parametrize(
    ("name", "temp"),
    [
        ("foo.md~", True),
        (".foo.md.swp", True),
        ("foo.md.swo", True),
        ("4913", True),
        ("5159", True),
        ("#foo.md#", True),
        ("foo.md.tmp", True),
        ("foo.md.TMP", True),
        ("foo.md.crdownload", True),
        ("foo.md", False),
        ("2024", False),  # a year folder is not vim's writability probe
        ("4914", False),
        ("tmp", False),
        ("swap-notes.md", False),
        ("github.com-acme-api", False),
    ],
)
def test_temp_names(name: str, temp: bool) -> None:
    assert is_temp_name(name) is temp
