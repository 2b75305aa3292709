"""``memvault watch`` as a real subprocess with the real model: output, and a clean stop on SIGINT/SIGTERM."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.index.fulltext import FullTextIndex
from vault_engine.store import STATE_DIR
from vault_engine.vault import Vault


@pytest.fixture(autouse=True)
def no_scheduled_maintenance(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count syncs; scheduled `maintain` runs are tested on their own."""
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "0")
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_AFTER_CHANGES", "0")
    monkeypatch.setenv("MEMVAULT_WATCH_LEARN_EVERY_MINUTES", "0")


pytestmark = pytest.mark.slow

TIMEOUT = 30.0


class Watching:
    """A running ``memvault watch`` whose output lines are collected as they come."""

    def __init__(self, root: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vault_engine", "--vault", str(root), "watch", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ},
        )
        self.out: list[str] = []
        self.err: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [self._read(self.proc.stdout, self.out), self._read(self.proc.stderr, self.err)]

    @staticmethod
    def _read(stream: IO[str], into: list[str]) -> threading.Thread:
        def run() -> None:
            for line in stream:
                into.append(line.rstrip("\n"))

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def wait_for(self, predicate: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not predicate():
            if self.proc.poll() is not None and not predicate():
                raise AssertionError(f"memvault watch exited ({self.proc.returncode}) before {what}: {self.err}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; stdout={self.out} stderr={self.err}")
            time.sleep(0.02)

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        code = self.proc.wait(TIMEOUT)
        for reader in self._readers:
            reader.join(5)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)


@pytest.fixture
def watching(vault: Vault) -> Iterator[Callable[..., Watching]]:
    started: list[Watching] = []

    def start(*args: str) -> Watching:
        started.append(Watching(vault.root, *args))
        return started[-1]

    yield start
    for proc in started:
        proc.kill()


def memory_text(memory_id: str, body: str) -> str:
    return f"---\nid: {memory_id}\ntitle: {memory_id}\ntype: fact\n---\n{body}\n"


def search_ids(root: Path, text: str) -> list[str]:
    return [hit.id for hit in FullTextIndex(root / STATE_DIR / "fulltext").search(text, 10)]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_watch_syncs_an_edit_and_stops_cleanly(vault: Vault, watching: Callable[..., Watching], signum: int) -> None:
    watcher = watching()
    # stdout and stderr are two pipes read by two threads: "watching" on one may be read before the
    # start sync's line on the other, so both are waited for.
    watcher.wait_for(lambda: bool(watcher.out) and any(line.startswith("watching") for line in watcher.err),
                     "the watcher to start")
    assert watcher.out[0].startswith("synced: 0 added")  # the start sync is always shown

    (vault.root / "memories").mkdir(exist_ok=True)
    (vault.root / "memories" / "hello.md").write_text(memory_text("m-hello", "The wombat token."), "utf-8")
    (vault.root / "memories" / "broken.md").write_text("---\nid: [oops\n---\n", "utf-8")
    watcher.wait_for(lambda: any(line.startswith("synced: 1 added") for line in watcher.out), "the sync line")
    assert search_ids(vault.root, "wombat") == ["m-hello"]
    watcher.wait_for(lambda: any("warning: memories/broken.md:" in line for line in watcher.err), "the warning")

    code = watcher.stop(signum)
    assert code == 0, watcher.err
    assert watcher.err[-1] == "stopped"
    assert not any("Traceback" in line for line in watcher.out + watcher.err)
    # Reported once, not again by every later sync that still finds it broken.
    [warning] = [line for line in watcher.err if line.startswith("warning:")]
    assert warning.startswith("warning: memories/broken.md:3: invalid YAML")


def test_watch_json_prints_one_object_per_sync(vault: Vault, watching: Callable[..., Watching]) -> None:
    watcher = watching("--json", "--debounce", "100")
    watcher.wait_for(lambda: any(line.startswith("watching") for line in watcher.err), "the watcher to start")
    (vault.root / "memories").mkdir(exist_ok=True)
    (vault.root / "memories" / "one.md").write_text(memory_text("m-one", "A jerboa."), "utf-8")
    watcher.wait_for(lambda: any('"m-one"' in line for line in watcher.out), "the JSON sync line")
    watcher.wait_for(lambda: any('"event": "vectors"' in line for line in watcher.out), "the JSON vectors line")
    assert watcher.stop(signal.SIGINT) == 0
    records = [json.loads(line) for line in watcher.out]
    assert records[0]["event"] == "sync" and records[0]["trigger"] == "start"
    [added] = [r for r in records if r["event"] == "sync" and r["added"]]
    # The words first (searchable at once), the vectors right after.
    assert added["added"] == ["m-one"] and added["trigger"] == "changes" and added["pending"] == 1
    assert set(added) >= {"modified", "moved", "deleted", "unchanged", "parsed", "invalid", "seconds", "changes",
                          "embedded", "cached"}
    [vectors] = [r for r in records if r["event"] == "vectors"]
    assert vectors["memories"] == 1 and vectors["embedded"] + vectors["cached"] >= 1
    assert watcher.err[-1] == "stopped"


def test_watch_rejects_a_negative_debounce(vault: Vault) -> None:
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), "watch", "--debounce", "-5"])
    assert result.exit_code == 2
    assert "error:" in result.output and "--debounce" in result.output


def test_watch_reports_a_bad_debounce_setting(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_WATCH_DEBOUNCE_MS", "-1")
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), "watch"])
    assert result.exit_code == 1
    assert result.output.strip() == "error: the watch debounce must be at least 0 ms, got -1"


def sync_lock_held(vault: Vault) -> bool:
    """Whether some process holds the lock that sync takes (tried without waiting)."""
    path = getattr(vault, "index_lock", vault.lock).path
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def test_a_signal_during_a_sync_lets_it_finish(vault: Vault, watching: Callable[..., Watching]) -> None:
    watcher = watching()
    watcher.wait_for(lambda: any(line.startswith("watching") for line in watcher.err), "the watcher to start")
    folder = vault.root / "memories" / "many"
    folder.mkdir(parents=True)
    count = 300
    for n in range(count):
        (folder / f"m{n}.md").write_text(memory_text(f"m-many-{n}", f"Item {n} of a long sync, a bison."), "utf-8")
    watcher.wait_for(lambda: sync_lock_held(vault), "the sync to start")
    code = watcher.stop(signal.SIGINT)
    assert code == 0, watcher.err
    assert watcher.err[-1] == "stopped"
    assert any(line.startswith("synced: ") and " added" in line for line in watcher.out[1:])
    index = FullTextIndex(vault.root / STATE_DIR / "fulltext")
    synced = sum(int(line.split("synced: ")[1].split(" added")[0]) for line in watcher.out[1:])
    assert index.count() == synced > 0  # every sync that started also finished
