"""What a sync may publish, git's stale locks, and symlinks the journal and the store never follow."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from vault_engine import fsio, locks, store
from vault_engine.errors import ForgottenContent, JournalError, MemoryFileError, VaultError
from vault_engine.format.memory import memory_text, text_digest
from vault_engine.history import forgotten_digests, replay
from vault_engine.journal import PURGE_DECLINED, Event, Journal
from vault_engine.sharing import gitrepo
from vault_engine.sharing.publishing import has_markers, publishable, through_symlink
from vault_engine.vault import NewMemory, Vault

NOV = "2026-11-05T10:00:00Z"


@pytest.mark.parametrize("rel", ["memories/global/deploys-abc123.md", "journal/2026-12.jsonl", "INDEX.md",
                                 "memories/projects/api/INDEX.md", ".gitattributes", "memvault.toml", "README.md",
                                 "trash/old-note-x1y2z3.md", "episodes/.gitkeep", "profile/me.md",
                                 ".obsidian/types.json", ".gitignore"])
def test_the_vaults_own_files_are_published(rel: str) -> None:
    assert publishable(rel)


@pytest.mark.parametrize("rel", [".memvault/sessions/s1.jsonl", ".memvault/catalog.sqlite", ".memvault/lock",
                                 "memories/.memvault/x.md", "memories/global/.deploys.md.0123456789ab.tmp",
                                 ".obsidian/workspace.json", ".git/config", "notes/mine.md", "secrets.env",
                                 "memories/../.memvault/lock", "node_modules/x/index.md", ".trash/x.md"])
def test_state_hidden_and_unknown_files_are_not(rel: str) -> None:
    assert not publishable(rel)


def test_a_file_a_person_tracks_outside_the_content_folders_is_published_but_never_a_hidden_one() -> None:
    assert publishable("notes/mine.md", tracked=True) and publishable("CHANGES.md", tracked=True)
    assert not publishable(".memvault/catalog.sqlite", tracked=True)
    assert not publishable(".env", tracked=True)


def test_a_symlink_or_a_path_under_a_symlinked_folder_is_seen(tmp_path: Path) -> None:
    (tmp_path / "memories" / "global").mkdir(parents=True)
    (tmp_path / "memories" / "global" / "real.md").write_text("x")
    (tmp_path / "memories" / "global" / "link.md").symlink_to(tmp_path / "memories" / "global" / "real.md")
    (tmp_path / "memories" / "out").symlink_to(tmp_path.parent)
    assert not through_symlink(tmp_path, "memories/global/real.md")
    assert through_symlink(tmp_path, "memories/global/link.md")
    assert through_symlink(tmp_path, "memories/out/anything.md")
    assert not through_symlink(tmp_path, "memories/global/missing.md")


def test_conflict_markers_are_found_only_as_a_pair_of_marker_lines(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_text("a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> origin/main\n")
    assert has_markers(path)
    path.write_text("a line that mentions <<<<<<< in passing\n")
    assert not has_markers(path)


def test_an_old_lock_with_no_git_at_work_is_removed_and_a_young_one_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / ".git"
    (folder / "refs" / "heads").mkdir(parents=True)
    young = folder / "index.lock"
    young.write_text("")
    old = folder / "refs" / "heads" / "main.lock"
    old.write_text("")
    stamp = time.time() - 120
    os.utime(old, (stamp, stamp))
    assert gitrepo.recover_stale_locks(tmp_path, folder, stale_after=30) == [old]
    assert young.exists() and not old.exists()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
def test_a_lock_is_kept_while_a_git_process_works_in_the_clone(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    lock = tmp_path / ".git" / "index.lock"
    lock.write_text("")
    stamp = time.time() - 120
    os.utime(lock, (stamp, stamp))
    # A git that waits on its stdin, working in the clone: what a git in the middle of a command looks like.
    busy = subprocess.Popen(["git", "hash-object", "--stdin"], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/proc/{busy.pid}/cmdline").read_bytes().startswith(b"git") and time.monotonic() < deadline:
            time.sleep(0.01)  # until the child has become git
        assert busy.pid in (gitrepo.git_working_in(tmp_path) or [])
        assert gitrepo.recover_stale_locks(tmp_path, tmp_path / ".git", stale_after=30) == []
        assert lock.exists()
    finally:
        busy.communicate(b"x")
    assert gitrepo.recover_stale_locks(tmp_path, tmp_path / ".git", stale_after=30) == [lock]


def test_the_journal_never_reads_nor_appends_through_a_symlinked_month_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text("private line one\nprivate line two\n")
    folder = tmp_path / "vault" / "journal"
    folder.mkdir(parents=True)
    (folder / "2026-11.jsonl").symlink_to(outside)
    aside = tmp_path / "vault" / ".memvault" / "journal-damaged"
    journal = Journal(folder, lock=locks.WriterLock(tmp_path / "vault" / ".memvault" / "lock", 1.0), aside=aside)
    assert list(journal.events()) == []
    assert journal.warnings and "symlink" in journal.warnings[0]
    with pytest.raises(VaultError, match="symlink"):
        journal.append([Event("add", "m-1", {"title": "x"}, "e-1", NOV)])
    journal.append([Event("add", "m-2", {"title": "y"}, "e-2", "2026-12-01T10:00:00Z")])  # another month: fine
    assert outside.read_text() == "private line one\nprivate line two\n"
    assert not aside.exists()
    assert [e.id for e in journal.events()] == ["e-2"]


def test_the_journal_never_writes_into_a_symlinked_folder(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "journal").symlink_to(tmp_path / "elsewhere")
    journal = Journal(tmp_path / "vault" / "journal")
    with pytest.raises(JournalError, match="symlink"):
        journal.append([Event("add", "m-1", {"title": "x"}, "e-1", NOV)])
    assert list((tmp_path / "elsewhere").iterdir()) == [] and journal.files() == []


def test_append_line_refuses_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    (tmp_path / "link").symlink_to(outside)
    with pytest.raises(VaultError, match="cannot write file: it is a symlink"):
        fsio.append_line(tmp_path / "link", "more\n")
    assert outside.read_text() == "kept\n"


def test_the_store_never_reads_a_memory_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("---\nid: m-01kx0000000000000000000000\ntitle: Leak\n---\nprivate\n")
    vault = tmp_path / "vault"
    (vault / "memories" / "global").mkdir(parents=True)
    (vault / "memories" / "global" / "leak.md").symlink_to(outside)
    (vault / "memories" / "elsewhere").symlink_to(tmp_path)
    with pytest.raises(MemoryFileError, match="symlink"):
        store.read_bytes(vault, "memories/global/leak.md")
    with pytest.raises(MemoryFileError, match="symlink"):
        store.read_bytes(vault, "memories/elsewhere/outside.md")


def test_a_declined_purge_leaves_the_memory_active_in_replay() -> None:
    events = [Event("add", "m-1", {"title": "x"}, "e-1", NOV),
              Event("purge", "m-1", {"permanent": True}, "e-2", NOV),
              Event(PURGE_DECLINED, "m-1", {"purge": "e-2"}, "e-3", NOV)]
    assert replay(events)["m-1"].status == "active"
    assert replay(events[:2])["m-1"].status == "purged"


def test_a_declined_purge_does_not_block_learning_its_text_again(vault: Vault) -> None:
    """The purge came from another machine and was declined here (the memory had changed since): its
    text is no more forgotten here than its memory is, while a purge not declined still blocks it."""
    text = "The staging database password rotates every Monday."
    kept = vault.add(NewMemory(text)).id
    digest = text_digest(memory_text(vault.entry(kept).memory))
    purge = Event("purge", kept, {"permanent": True, "text_sha256": digest}, "e-remote-purge", NOV)
    declined = Event(PURGE_DECLINED, kept, {"purge": "e-remote-purge"}, "e-declined", NOV)
    assert forgotten_digests([purge]) == {digest: kept} and forgotten_digests([purge, declined]) == {}
    vault.journal.append([purge])
    with pytest.raises(ForgottenContent):
        vault.add(NewMemory(text))
    vault.journal.append([declined])
    vault.forget(kept)  # a plain forget here: the text is learnt again, not refused as purged
    assert vault.add(NewMemory(text)).id != kept


def test_a_vault_made_from_a_template_takes_none_of_its_symlinks(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    template = tmp_path / "template"
    (template / "memories" / "global").mkdir(parents=True)
    (template / "memvault.toml").write_text("")
    (template / "memories" / "global" / "note.md").write_text("a note\n")
    (tmp_path / "outside.md").write_text("private\n")
    (template / "memories" / "global" / "leak.md").symlink_to(tmp_path / "outside.md")
    (template / "elsewhere").symlink_to(tmp_path)
    monkeypatch.setenv("MEMVAULT_TEMPLATE", str(template))
    store.create_vault(tmp_path / "vault", git=False)
    made = tmp_path / "vault"
    assert (made / "memories" / "global" / "note.md").is_file()
    assert not (made / "memories" / "global" / "leak.md").exists() and not (made / "elsewhere").exists()
