"""Concurrency: writers, syncs, readers, `memvault watch` and hand edits at once, with nothing lost.

The run itself is ``python -m stress.concurrency`` (real ``memvault`` subprocesses, in-process
workers, a watcher subprocess and an editor thread); the other tests here pin the races it
guards against one at a time, deterministically: a person's edit or rename landing between a
writer's read and its write, a reader while a sync holds the index lock, a database busy in
another process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stress import concurrency
from vault_engine import store
from vault_engine.errors import VaultBusy
from vault_engine.governance.actions import Action, Change
from vault_engine.governance.maintain import Executor
from vault_engine.index.catalog import Catalog
from vault_engine.index.change_feed import ChangeFeed
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import STATE_DIR, Scan
from vault_engine.vault import NewMemory, Vault, now
from vault_engine.vault.indexes import READ_WAIT

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


def test_writers_syncs_readers_watch_and_hand_edits_at_once_lose_nothing(tmp_path: Path) -> None:
    """The whole mix for a few seconds: every add and correction kept, no failure beyond a retry
    message, the catalog equal to the files, the journal readable, readers never held up long."""
    started = time.monotonic()
    figures = concurrency.run(seed=11, workers=3, seconds=15.0, workdir=tmp_path)
    ops = figures["operations"]
    assert figures["failures"] == 0, figures["failure_samples"]
    assert figures["lost"] == 0 and figures["edits_lost"] == 0, figures["lost_samples"]
    for kind in ("add", "correct", "search", "sync", "edit", "watch sync", "reader search"):
        assert ops.get(kind, 0) > 0, (kind, ops)
    final = figures["final"]
    assert final["catalog_matches_files"] and final["unparseable"] == 0 and final["journal_warnings"] == 0
    assert final["temp_files_left"] == []
    assert figures["longest_reader_wait_ms"] < 5000, figures  # a warm search, never a sync's length
    assert time.monotonic() - started < 55


# ---------------------------------------------------------------- a person's edit between read and write


@pytest.fixture
def two(make_vault: Callable[..., Vault]) -> tuple[Vault, str, str]:
    vault = make_vault()
    first = vault.add(NewMemory("The deploy runs from the main branch.")).id
    second = vault.add(NewMemory("The cache expires after ten minutes.")).id
    return vault, first, second


def _edit_after_next_scan(vault: Vault, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Scan], None]) -> None:
    """Run ``edit`` right after the writer's next read of the vault (inside its lock), once."""
    real = Vault.scan
    pending = [edit]

    def scan_then_edit(self: Vault) -> Scan:
        result = real(self)
        if pending:
            pending.pop()(result)
        return result

    monkeypatch.setattr(Vault, "scan", scan_then_edit)


def _append(vault: Vault, memory_id: str, line: str) -> Callable[[Scan], None]:
    def edit(scan: Scan) -> None:
        with open(vault.root / scan.entries[memory_id].path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    return edit


def test_a_hand_edit_made_while_a_correction_runs_is_never_overwritten(
        two: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, first, _ = two
    events = len(list(vault.journal.events()))
    files = sorted(p.name for p in (vault.root / "memories" / "global").iterdir())
    _edit_after_next_scan(vault, monkeypatch, _append(vault, first, "A line typed by hand."))
    with pytest.raises(VaultBusy, match=r"changed by another program.*try again"):
        vault.correct(first, "The deploy runs from the release branch.")
    entry = vault.entry(first)
    assert "A line typed by hand." in entry.memory.body and entry.memory.lifecycle == "proven"
    assert sorted(p.name for p in (vault.root / "memories" / "global").iterdir()) == files  # no new version
    assert len(list(vault.journal.events())) == events
    retried = vault.correct(first, "The deploy runs from the release branch.")  # the retry reads it again
    old = vault.entry(first)
    assert old.memory.superseded_by == retried.id and "A line typed by hand." in old.memory.body


def test_a_file_renamed_while_a_correction_runs_is_not_written_back_as_a_copy(
        two: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, _, second = two

    def rename(scan: Scan) -> None:
        path = vault.root / scan.entries[second].path
        path.rename(path.with_name("renamed-by-hand.md"))

    _edit_after_next_scan(vault, monkeypatch, rename)
    with pytest.raises(VaultBusy, match="moved or deleted by another program"):
        vault.correct(second, "The cache expires after five minutes.")
    scan = vault.scan()
    assert scan.problems == [] and scan.entries[second].path == "memories/global/renamed-by-hand.md"
    new = vault.correct(second, "The cache expires after five minutes.").id
    scan = vault.scan()
    assert scan.problems == [] and scan.entries[second].memory.superseded_by == new


def test_an_append_landing_in_the_instant_before_the_rename_is_kept(
        two: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``echo ... >> file`` opened the file just before a writer renamed its new version over it: the
    line went to the replaced file. The writer sees it there, puts it back and refuses; nothing is lost."""
    vault, first, _ = two
    path = vault.root / vault.entry(first).path
    handle = open(path, "ab")  # noqa: SIM115 - held open across the write, as an editor holds it
    real, pending = os.replace, [True]

    def replace(source: object, dest: object) -> None:
        if pending and Path(str(dest)) == path:
            pending.clear()
            handle.write(b"Appended by hand.\n")
            handle.flush()
        real(source, dest)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(VaultBusy, match=r"changed by another program.*try again"):
        vault.feedback(first, "ignored")
    handle.close()
    assert "Appended by hand." in vault.entry(first).memory.body
    vault.feedback(first, "ignored")  # the retry reads it again and keeps it
    assert "Appended by hand." in vault.entry(first).memory.body


@pytest.mark.parametrize("operation", ["feedback", "forget", "evidence"])
def test_other_writes_keep_a_hand_edit_made_meanwhile(two: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch,
                                                      operation: str) -> None:
    vault, first, _ = two
    _edit_after_next_scan(vault, monkeypatch, _append(vault, first, "Typed meanwhile."))
    with pytest.raises(VaultBusy, match="try again"):
        if operation == "feedback":
            vault.feedback(first, "ignored")
        elif operation == "forget":
            vault.forget(first)
        else:
            vault.add(NewMemory("The deploy runs from the main branch."))  # the same text: evidence
    entry = vault.entry(first)
    assert not entry.in_trash and entry.memory.applied["ignored"] == 0 and entry.memory.proof_count == 1
    assert "Typed meanwhile." in entry.memory.body


def test_maintenance_writing_one_memory_twice_in_a_run_checks_against_its_own_write(
        make_vault: Callable[..., Vault]) -> None:
    """The executor keeps what it wrote, so its second write to a file is not mistaken for a person's."""
    vault = make_vault()
    memory_id = vault.add(NewMemory("Always run ruff before committing.", tags=("Lint",))).id
    executor = Executor(vault, vault.scan(), now())
    executor.apply(Action("tags", memory_id, "first", changes=(Change(memory_id, {"tags": ("Lint",)},
                                                                       {"tags": ("lint",)}),)))
    executor.apply(Action("tags", memory_id, "second", changes=(Change(memory_id, {"tags": ("lint",)},
                                                                        {"tags": ("lint", "python")}),)))
    assert vault.entry(memory_id).memory.tags == ("lint", "python")
    path = vault.root / vault.entry(memory_id).path
    path.write_text(path.read_text(encoding="utf-8") + "By hand.\n", encoding="utf-8")
    with pytest.raises(VaultBusy):
        executor.apply(Action("tags", memory_id, "third", changes=(Change(memory_id, {"tags": ("lint", "python")},
                                                                           {"tags": ("lint",)}),)))
    entry = vault.entry(memory_id)
    assert entry.memory.tags == ("lint", "python") and entry.memory.body.endswith("By hand.\n")
    with pytest.raises(VaultBusy):  # nor is the file moved to the trash from the text planned on
        executor.apply(Action("decay", memory_id, "fourth", trash=(memory_id,)))
    assert not vault.entry(memory_id).in_trash and vault.entry(memory_id).memory.body.endswith("By hand.\n")


# ---------------------------------------------------------------- readers and locks


@pytest.fixture
def holder() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Another process holding a vault lock file until the test ends."""
    started: list[subprocess.Popen[str]] = []

    def hold(path: Path) -> subprocess.Popen[str]:
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc

    yield hold
    for proc in started:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def test_a_search_never_waits_for_a_sync_or_a_writer(make_vault: Callable[..., Vault],
                                                     holder: Callable[[Path], subprocess.Popen[str]]) -> None:
    """With both locks held elsewhere (a long sync, a slow writer), searching answers at once."""
    vault = Vault(make_vault().root, embedder=HashEmbedder())
    made = vault.add(NewMemory("The gateway rejects requests without a trace header.")).id
    vault.sync()
    holder(vault.index_lock.path)
    holder(vault.lock.path)
    started = time.perf_counter()
    hits = vault.search(SearchQuery("gateway trace header")).hits
    assert hits and hits[0].id == made
    assert time.perf_counter() - started < 2.0


def test_a_search_during_another_process_building_the_indexes_does_not_wait(
        make_vault: Callable[..., Vault], holder: Callable[[Path], subprocess.Popen[str]]) -> None:
    """Empty indexes being built elsewhere (a first sync, ``sync --full``): say so, never wait for the build."""
    vault = Vault(make_vault().root, embedder=HashEmbedder())
    made = vault.add(NewMemory("The gateway rejects requests without a trace header.")).id
    Catalog(vault.root / STATE_DIR / "catalog.sqlite").close()  # what a build has made when it starts
    builder = holder(vault.index_lock.path)
    started = time.perf_counter()
    result = vault.search(SearchQuery("gateway trace header"))
    assert time.perf_counter() - started < 2.0
    assert result.hits == [] and result.notice is not None and "being built by another" in result.notice
    assert builder.stdin is not None
    builder.stdin.close()
    builder.wait(timeout=10)
    result = vault.search(SearchQuery("gateway trace header"))  # the build was cut short: this one finishes it
    assert result.hits[0].id == made and result.notice is not None and "built them" in result.notice


@pytest.mark.parametrize("feed", [False, True], ids=["walk", "kernel feed"])
def test_a_hand_edit_while_another_process_holds_the_indexes_waits_briefly_then_says_so(
        make_vault: Callable[..., Vault], holder: Callable[[Path], subprocess.Popen[str]], feed: bool) -> None:
    """A read that finds files changed waits at most READ_WAIT for another process's sync, answers from
    the indexes as they are with a notice, and the next read once the lock is free indexes the edit (a
    server's kernel feed, drained by the first read, is marked to walk again)."""
    vault = Vault(make_vault().root, embedder=HashEmbedder(), auto_sync=True)
    made = vault.add(NewMemory("The gateway rejects requests without a trace header.")).id
    if feed:
        vault.change_feed = ChangeFeed.open(vault.root)
        assert vault.change_feed is not None
        vault.search(SearchQuery("trace header"))  # the first walk: the feed is quiet from here on
    path = vault.root / vault.find(made).path
    path.write_text(path.read_text(encoding="utf-8").replace("trace header", "tenant token"), encoding="utf-8")
    syncing = holder(vault.index_lock.path)
    started = time.perf_counter()
    result = vault.search(SearchQuery("tenant token"))
    assert time.perf_counter() - started < READ_WAIT + 1.0
    assert result.notice is not None and "1 file changed since the search indexes were updated" in result.notice
    assert syncing.stdin is not None
    syncing.stdin.close()
    syncing.wait(timeout=10)
    result = vault.search(SearchQuery("tenant token"))
    assert result.hits[0].id == made and "fts" in result.hits[0].lanes
    assert "changed since" not in (result.notice or "")


def test_a_write_while_a_sync_holds_the_index_lock_is_saved_with_a_warning(
        make_vault: Callable[..., Vault], holder: Callable[[Path], subprocess.Popen[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory is saved before the indexes are touched; indexes still busy become a warning, not a failure."""
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    vault.index_lock.timeout = 0.2
    holder(vault.index_lock.path)
    result = vault.add(NewMemory("Staging runs Postgres 16."))
    assert vault.entry(result.id).memory.title == "Staging runs Postgres 16"
    assert vault.index_warning is not None and "busy" in vault.index_warning and "memvault sync" in vault.index_warning


def test_the_cli_says_busy_in_one_line_with_exit_75_and_a_retry_succeeds(
        make_vault: Callable[..., Vault], holder: Callable[[Path], subprocess.Popen[str]]) -> None:
    vault = make_vault()
    env = {**os.environ, "MEMVAULT_VAULT_LOCK_TIMEOUT": "0.2", "MEMVAULT_VAULT_AUTO_SYNC": "false"}
    lock = holder(vault.lock.path)
    args = [sys.executable, "-m", "vault_engine", "--vault", str(vault.root), "add", "Retry me later."]
    busy = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert busy.returncode == 75 and busy.stdout == ""
    assert busy.stderr.count("\n") == 1 and "vault is busy" in busy.stderr and "try again" in busy.stderr
    assert lock.stdin is not None
    lock.stdin.close()
    lock.wait(timeout=10)
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert store.scan(vault.root).get(done.stdout.strip()).memory.title == "Retry me later"
