"""The kernel's feed of changed files (real inotify, real files): what makes a long-lived process walk the vault
before a read, and what does not.  Like the rest of the suite (its process sweep reads /proc), Linux only."""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_engine import store
from vault_engine.index import change_feed
from vault_engine.index.change_feed import ChangeFeed
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import Vault

MEMORY = "---\nid: m-1\ntitle: Ferry\ntype: fact\n---\nThe ferry leaves pier seven every forty minutes.\n"


@pytest.fixture
def vault_folder(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "memories" / "global").mkdir(parents=True)
    (root / ".memvault").mkdir()
    (root / "memories" / "global" / "ferry.md").write_text(MEMORY)
    return root


@pytest.fixture
def feed(vault_folder: Path) -> Iterator[ChangeFeed]:
    opened = ChangeFeed.open(vault_folder)
    assert opened is not None
    assert opened.dirty()  # nothing is known before the first walk
    assert not opened.dirty()
    yield opened
    opened.close()


def test_an_edit_a_deletion_and_a_replacement_each_make_the_next_read_walk(vault_folder: Path,
                                                                            feed: ChangeFeed) -> None:
    memory = vault_folder / "memories" / "global" / "ferry.md"
    with memory.open("a") as handle:
        handle.write("Saturdays: every hour.\n")
    assert feed.dirty() and not feed.dirty()
    spare = memory.with_name(".ferry.md.tmp")
    spare.write_text(MEMORY)
    os.replace(spare, memory)  # an editor's atomic save
    assert feed.dirty() and not feed.dirty()
    memory.unlink()
    assert feed.dirty() and not feed.dirty()


@pytest.mark.parametrize("rel", [".memvault/catalog.sqlite", "memories/global/notes.txt", "memories/global/.x.swp",
                                 "memories/global/INDEX.md", "INDEX.md", "README.md", ".obsidian/workspace.json"])
def test_files_the_walk_never_reports_make_no_walk(vault_folder: Path, feed: ChangeFeed, rel: str) -> None:
    path = vault_folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    feed.dirty()  # a folder made above (.obsidian) is news once
    path.write_text("written by someone else\n")
    assert not feed.dirty()


def test_a_new_folder_and_a_moved_one_are_watched_too(vault_folder: Path, feed: ChangeFeed) -> None:
    project = vault_folder / "memories" / "projects" / "api"
    project.mkdir(parents=True)
    assert feed.dirty()
    (project / "deploys.md").write_text(MEMORY)
    assert feed.dirty()
    moved = vault_folder / "memories" / "projects" / "web"
    project.rename(moved)
    assert feed.dirty()
    with (moved / "deploys.md").open("a") as handle:
        handle.write("Edited after the move.\n")
    assert feed.dirty() and not feed.dirty()


def test_mark_dirty_makes_the_next_read_walk(feed: ChangeFeed) -> None:
    feed.mark_dirty()
    assert feed.dirty() and not feed.dirty()


def test_no_feed_where_another_machine_may_write(vault_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert change_feed.filesystem_type(vault_folder) in change_feed.LOCAL_FILESYSTEMS
    with monkeypatch.context() as patched:  # a kernel without inotify: every read walks
        patched.setattr(sys, "platform", "darwin")
        assert ChangeFeed.open(vault_folder) is None
    for kind in ("nfs4", "fuse.sshfs", "cifs", ""):
        monkeypatch.setattr(change_feed, "filesystem_type", lambda _path, kind=kind: kind)
        assert ChangeFeed.open(vault_folder) is None


def test_a_closed_feed_always_walks(vault_folder: Path) -> None:
    opened = ChangeFeed.open(vault_folder)
    assert opened is not None
    opened.close()
    assert opened.dirty() and opened.dirty()


def test_a_read_with_a_quiet_feed_does_not_walk_and_one_after_an_edit_does(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, made = vault_of(["The ferry leaves pier seven every forty minutes.", "Invoices go out monthly."])
    vault.change_feed = ChangeFeed.open(vault.root)
    assert vault.change_feed is not None
    walks: list[Path] = []
    real_walk = store.stat_markdown

    def counted(root: Path) -> Iterator[tuple[str, os.stat_result]]:
        walks.append(root)
        return real_walk(root)

    monkeypatch.setattr(store, "stat_markdown", counted)
    assert vault.search(SearchQuery("ferry pier")).hits and len(walks) == 1  # the first read walks
    for _ in range(3):
        assert vault.search(SearchQuery("ferry pier")).hits
    assert len(walks) == 1
    path = vault.root / vault.find(made[0]).path
    path.write_text(path.read_text().replace("forty", "twenty"))
    hits = vault.search(SearchQuery("ferry every twenty minutes")).hits
    assert len(walks) == 2 and hits[0].id == made[0] and "twenty" in path.read_text()
    vault.change_feed.close()


def test_with_no_watch_left_every_read_walks_and_no_watch_is_kept(vault_folder: Path, feed: ChangeFeed) -> None:
    """``fs.inotify.max_user_watches`` reached halfway through the folders when they are watched anew: every
    read walks, and the watches placed before are taken back (the kernel's own list of them, in fdinfo)."""
    assert len(_watches(feed)) == 3  # the root, memories, global
    (vault_folder / "memories" / "projects" / "api").mkdir(parents=True)  # two more, watched on the next look

    class Full:
        """The C library, whose fifth watch (the last folder) fails as the kernel fails it when the user's
        are all taken: by then at least one of the new folders is watched."""

        def __init__(self, real: Any):
            self.real, self.placed = real, 0

        def inotify_add_watch(self, fd: int, path: bytes, mask: int) -> int:
            self.placed += 1
            if self.placed == 5:
                ctypes.set_errno(errno.ENOSPC)
                return -1
            return int(self.real.inotify_add_watch(fd, path, mask))

        def inotify_rm_watch(self, fd: int, wd: int) -> int:
            return int(self.real.inotify_rm_watch(fd, wd))

    feed._libc = Full(feed._libc)  # type: ignore[assignment]
    feed._watch_all()
    assert _watches(feed) == [] and not feed.available
    assert feed.dirty() and feed.dirty()


def _watches(feed: ChangeFeed) -> list[str]:
    return [line for line in Path(f"/proc/self/fdinfo/{feed._fd}").read_text().splitlines()
            if line.startswith("inotify wd:")]
