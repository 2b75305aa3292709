"""Atomic writes, durable appends and the vault writer lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vault_engine import fsio, locks
from vault_engine.config import VaultConfig, VaultSettings
from vault_engine.errors import VaultBusy, VaultError
from vault_engine.vault import NewMemory, Vault

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))
else:
    sys.stdin.read()
"""


class Killed(BaseException):
    """Stands in for the process dying at that instant (nothing below it runs)."""


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


# ---------------------------------------------------------------- write_atomic


def test_write_atomic_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.md"
    fsio.write_atomic(target, "first\n")
    assert target.read_text() == "first\n"
    fsio.write_atomic(target, b"second\n")
    assert target.read_bytes() == b"second\n"
    assert temp_files(tmp_path) == []


def test_temp_names_are_hidden_and_unique(tmp_path: Path) -> None:
    target = tmp_path / "a.md"
    names = {fsio.temp_path_for(target).name for _ in range(50)}
    assert len(names) == 50
    assert all(n.startswith(".a.md.") and n.endswith(".tmp") for n in names)


def test_kill_before_replace_leaves_old_content_and_only_a_hidden_temp(
    make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = "---\nid: m-keep\ntitle: Keep me\ntype: fact\n---\nold body\n"
    vault = make_vault(files={"memories/global/keep.md": original})
    target = vault.root / "memories/global/keep.md"

    def killed(*_args: object) -> None:
        raise Killed

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(Killed):
        fsio.write_atomic(target, "---\nid: m-keep\ntitle: New\ntype: fact\n---\nnew body\n")
    monkeypatch.undo()
    assert target.read_text() == original
    leftovers = [p.name for p in target.parent.iterdir() if p.name not in ("keep.md", ".gitkeep")]
    assert len(leftovers) == 1 and leftovers[0].startswith(".keep.md.") and leftovers[0].endswith(".tmp")
    # the stray temp holds a full copy, yet no scan ever sees it
    scan = vault.scan()
    assert list(scan.entries) == ["m-keep"] and scan.problems == []
    assert scan.entries["m-keep"].memory.title == "Keep me"


def test_failed_replace_leaves_old_content_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.md"
    target.write_text("old\n")

    def refuse(*_args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(VaultError, match="cannot write file"):
        fsio.write_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert temp_files(tmp_path) == []


def test_failed_fsync_leaves_old_content_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.md"
    target.write_text("old\n")

    def full(_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(VaultError, match="disk is full"):
        fsio.write_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert temp_files(tmp_path) == []


# ---------------------------------------------------------------- write_many_atomic


# ---------------------------------------------------------------- replace_unchanged


def _in_the_window(monkeypatch: pytest.MonkeyPatch, action: Callable[[Path], None]) -> None:
    """Run ``action`` on the target the instant before the rename, once: the editor's append or rename
    landing after the writer's check, in the file it had opened."""
    real = os.replace
    pending = [action]

    def replace(source: object, dest: object) -> None:
        if pending:
            pending.pop()(Path(str(dest)))
        real(source, dest)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)


def test_replace_unchanged_replaces_the_file_it_was_told_of(tmp_path: Path) -> None:
    target = tmp_path / "m.md"
    target.write_text("old\n")
    fsio.replace_unchanged(target, "new\n", b"old\n")
    assert target.read_text() == "new\n" and temp_files(tmp_path) == []


def test_replace_unchanged_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    target = tmp_path / "m.md"
    target.write_text("old\nA line typed by hand.\n")
    with pytest.raises(VaultBusy, match="changed by another program"):
        fsio.replace_unchanged(target, "new\n", b"old\n", shown="memories/m.md")
    assert target.read_text() == "old\nA line typed by hand.\n" and temp_files(tmp_path) == []


def test_an_append_landing_between_the_check_and_the_rename_is_put_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``>>`` opens the old file and writes to it: after the rename that text would live only in the
    replaced inode. It is put back at the path, and the write is refused (a retry reads it)."""
    target = tmp_path / "m.md"
    target.write_bytes(b"old\n")
    handle = open(target, "ab")  # noqa: SIM115 - opened before the rename, like an editor holding the file

    def append(_path: Path) -> None:
        handle.write(b"A line typed by hand.\n")
        handle.flush()

    _in_the_window(monkeypatch, append)
    with pytest.raises(VaultBusy, match="changed by another program"):
        fsio.replace_unchanged(target, "new\n", b"old\n")
    handle.close()
    assert target.read_bytes() == b"old\nA line typed by hand.\n" and temp_files(tmp_path) == []


def test_a_file_renamed_between_the_check_and_the_rename_gets_no_second_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "m.md"
    target.write_bytes(b"old\n")
    _in_the_window(monkeypatch, lambda path: path.rename(path.with_name("renamed.md")))
    with pytest.raises(VaultBusy, match="moved or deleted by another program"):
        fsio.replace_unchanged(target, "new\n", b"old\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["renamed.md"]
    assert (tmp_path / "renamed.md").read_bytes() == b"old\n"


def test_replace_unchanged_keeps_the_mode_of_the_text_it_puts_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "m.md"
    target.write_bytes(b"old\n")
    target.chmod(0o600)

    def append(path: Path) -> None:
        with open(path, "ab") as late:
            late.write(b"more\n")

    _in_the_window(monkeypatch, append)
    with pytest.raises(VaultBusy):
        fsio.replace_unchanged(target, "new\n", b"old\n")
    assert target.read_bytes() == b"old\nmore\n" and (target.stat().st_mode & 0o777) == 0o600


def test_write_many_atomic_writes_all(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("old a")
    items: list[tuple[Path, bytes | str]] = [
        (tmp_path / "a.md", "new a"), (tmp_path / "x" / "b.md", b"new b"), (tmp_path / "y" / "c.md", "new c"),
    ]
    fsio.write_many_atomic(items)
    assert [p.read_text() for p, _ in items] == ["new a", "new b", "new c"]
    assert temp_files(tmp_path) == []


def test_write_many_atomic_failure_names_the_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def refuse_second(path: str | os.PathLike[str], *args: int) -> int:
        if ".b.md." in os.fspath(path):
            raise OSError(28, "No space left on device")
        return real_open(path, *args)

    monkeypatch.setattr(os, "open", refuse_second)
    with pytest.raises(VaultError) as info:
        fsio.write_many_atomic([(tmp_path / "a.md", "a"), (tmp_path / "b.md", "b")])
    monkeypatch.undo()
    assert info.value.path is not None and info.value.path.endswith("b.md")
    assert not (tmp_path / "a.md").exists() and not (tmp_path / "b.md").exists()
    assert temp_files(tmp_path) == []


# ---------------------------------------------------------------- append_line


def test_append_line_after_torn_last_line_starts_a_new_line(tmp_path: Path) -> None:
    target = tmp_path / "journal" / "2026-11.jsonl"
    target.parent.mkdir()
    target.write_bytes(b'{"id":"e-1"}\n{"id":"e-2","ki')
    fsio.append_line(target, '{"id":"e-3"}\n')
    assert target.read_bytes().split(b"\n") == [b'{"id":"e-1"}', b'{"id":"e-2","ki', b'{"id":"e-3"}', b""]


def test_append_line_creates_and_appends(tmp_path: Path) -> None:
    target = tmp_path / "new" / "log.jsonl"
    fsio.append_line(target, "a\n")
    fsio.append_line(target, "b\n")
    assert target.read_text() == "a\nb\n"


# ---------------------------------------------------------------- WriterLock


@pytest.fixture
def holder(vault: Vault) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start a process that holds the vault's flock (until its stdin closes, or for N seconds)."""
    started: list[subprocess.Popen[str]] = []

    def start(*extra: str) -> subprocess.Popen[str]:
        vault.lock.path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(vault.lock.path), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc

    yield start
    for proc in started:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)


def test_lock_is_reentrant_in_one_process(vault: Vault) -> None:
    with vault.lock.hold(), vault.lock.hold():
        # an operation that takes the lock itself works while it is held
        vault.add(NewMemory("Nested writes are fine"))
    with vault.lock.hold():
        pass
    assert len(list(vault.scan().active())) == 1


def test_second_process_makes_writer_wait_then_fail(
    vault: Vault, holder: Callable[..., subprocess.Popen[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_VAULT_LOCK_TIMEOUT", "0.3")
    busy_vault = Vault(vault.root)
    assert busy_vault.lock.timeout == 0.3
    holder()
    started = time.monotonic()
    with pytest.raises(VaultBusy) as info:
        busy_vault.add(NewMemory("Waits for the lock"))
    waited = time.monotonic() - started
    assert 0.3 <= waited < 3
    assert "vault is busy" in info.value.one_line()
    assert info.value.exit_code != 0
    assert list(busy_vault.scan().entries) == []  # nothing was written


def test_writer_waits_briefly_then_proceeds(vault: Vault, holder: Callable[..., subprocess.Popen[str]]) -> None:
    patient = Vault(vault.root, VaultConfig(vault=VaultSettings(lock_timeout=5)))
    holder("0.3")
    started = time.monotonic()
    result = patient.add(NewMemory("Gets the lock once it is free"))
    assert time.monotonic() - started >= 0.1
    assert result.id in patient.scan().entries


def test_readers_are_never_blocked(vault: Vault, holder: Callable[..., subprocess.Popen[str]]) -> None:
    vault.add(NewMemory("Readable while locked"))
    holder()
    started = time.monotonic()
    assert len(vault.list()[0]) == 1
    vault.status()
    assert time.monotonic() - started < 1


def test_lock_serialises_threads_sharing_one_vault(vault: Vault) -> None:
    lock = locks.WriterLock(vault.lock.path, timeout=0.3)
    inside = threading.Event()
    leave = threading.Event()

    def hold_it() -> None:
        with lock.hold():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=hold_it)
    thread.start()
    try:
        assert inside.wait(5)
        with pytest.raises(VaultBusy), lock.hold():
            pass
    finally:
        leave.set()
        thread.join(5)
    with lock.hold():  # free again
        pass
