"""The watcher against real files, real OS notifications and the real indexes (fake embedder for speed)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_engine.daemon.watch import WatcherThread, WatchUpdate, watch
from vault_engine.errors import InvalidInput, VaultBusy, VaultError
from vault_engine.index.fakes import HashEmbedder
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

TIMEOUT = 20.0


def wait_for(predicate: Callable[[], bool], timeout: float = TIMEOUT, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.02)


def search_ids(root: Path, text: str, limit: int = 1000) -> list[str]:
    return [hit.id for hit in FullTextIndex(root / STATE_DIR / "fulltext").search(text, limit)]


def indexed_count(root: Path) -> int:
    return FullTextIndex(root / STATE_DIR / "fulltext").count()


def memory_text(memory_id: str, body: str, title: str | None = None) -> str:
    return f"---\nid: {memory_id}\ntitle: {title or memory_id}\ntype: fact\n---\n{body}\n"


def write_memory(root: Path, rel: str, memory_id: str, body: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memory_text(memory_id, body), encoding="utf-8")
    return path


def change_syncs(updates: list[WatchUpdate]) -> list[WatchUpdate]:
    return [u for u in updates if u.trigger != "start"]


def settle(watcher: WatcherThread, quiet: float = 0.6) -> int:
    """Wait until no sync has been reported for ``quiet`` seconds; the number of updates so far."""
    deadline = time.monotonic() + TIMEOUT
    count, since = len(watcher.updates), time.monotonic()
    while time.monotonic() - since < quiet:
        if time.monotonic() > deadline:
            raise AssertionError("the watcher never settled")
        time.sleep(0.02)
        if len(watcher.updates) != count:
            count, since = len(watcher.updates), time.monotonic()
    return count


def reported(watcher: WatcherThread, test: Callable[[WatchUpdate], bool], what: str) -> WatchUpdate:
    """The first update passing ``test``, waiting for it (the index is searchable a little before the report)."""
    wait_for(lambda: any(test(u) for u in list(watcher.updates)), what=what)
    return next(u for u in watcher.updates if test(u))


@pytest.fixture
def running(vault: Vault) -> Iterator[WatcherThread]:
    watcher = WatcherThread(vault, HashEmbedder(), debounce_ms=150).start()
    yield watcher
    watcher.stop()


def test_start_sync_indexes_what_is_already_there(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"memories/a.md": memory_text("m-a", "Preexisting walrus fact.")})
    with WatcherThread(vault, HashEmbedder()) as watcher:
        [start] = watcher.updates
        assert start.trigger == "start" and start.report is not None
        assert start.report.plan.added == ("m-a",)
        assert search_ids(vault.root, "walrus") == ["m-a"]


def test_an_edit_is_searchable_soon_after_the_write(vault: Vault, running: WatcherThread) -> None:
    path = write_memory(vault.root, "memories/global/edit.md", "m-edit", "The first version mentions penguins.")
    wait_for(lambda: search_ids(vault.root, "penguins") == ["m-edit"], what="the new file")
    path.write_text(memory_text("m-edit", "The second version mentions narwhals."), encoding="utf-8")
    written = time.monotonic()
    wait_for(lambda: search_ids(vault.root, "narwhals") == ["m-edit"], what="the edit")
    assert time.monotonic() - written < 5
    assert search_ids(vault.root, "penguins") == []
    last = reported(running, lambda u: u.report is not None and u.report.plan.modified == ("m-edit",), "the report")
    assert last.changed and last.trigger == "changes" and last.changes >= 1


def test_deleting_a_file_removes_it_from_the_index(vault: Vault, running: WatcherThread) -> None:
    path = write_memory(vault.root, "memories/doomed.md", "m-doomed", "Ephemeral axolotl.")
    wait_for(lambda: search_ids(vault.root, "axolotl") == ["m-doomed"], what="the new file")
    path.unlink()
    wait_for(lambda: search_ids(vault.root, "axolotl") == [], what="the deletion")
    reported(running, lambda u: u.report is not None and u.report.plan.deleted == ("m-doomed",), "the report")


def test_a_burst_of_files_is_a_few_syncs(vault: Vault, running: WatcherThread) -> None:
    count = 500
    for n in range(count):
        write_memory(vault.root, f"memories/burst/note-{n:03}.md", f"m-burst-{n:03}", f"Burst item {n} quokka.")
    wait_for(lambda: indexed_count(vault.root) == count, what="all burst files")
    assert sorted(search_ids(vault.root, "quokka")) == [f"m-burst-{n:03}" for n in range(count)]

    def added() -> int:
        return sum(len(u.report.plan.added) for u in change_syncs(running.updates) if u.report)

    wait_for(lambda: added() == count, what="the reports")
    syncs = change_syncs(running.updates)
    assert 0 < len(syncs) <= 5, [u.changes for u in syncs]
    assert syncs[-1].report is not None and syncs[-1].report.problems == []


def test_an_invalid_file_is_reported_and_the_watcher_goes_on(vault: Vault, running: WatcherThread) -> None:
    broken = vault.root / "memories" / "broken.md"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("---\nid: m-broken\ntitle: [oops\ntype: fact\n---\nSloth body.\n", encoding="utf-8")
    wait_for(lambda: any(u.new_problems for u in running.updates), what="the problem report")
    [problem] = next(u.new_problems for u in running.updates if u.new_problems)
    assert problem.path == "memories/broken.md" and problem.line is not None

    # Still watching: another file is indexed; the same problem is not reported as new again.
    write_memory(vault.root, "memories/fine.md", "m-fine", "A healthy capybara.")
    wait_for(lambda: search_ids(vault.root, "capybara") == ["m-fine"], what="a valid file next to the broken one")
    last = reported(running, lambda u: u.report is not None and "m-fine" in u.report.plan.added, "the report")
    assert last.report is not None and last.new_problems == ()
    assert [p.path for p in last.report.problems] == ["memories/broken.md"]

    broken.write_text(memory_text("m-broken", "Sloth body, fixed."), encoding="utf-8")
    wait_for(lambda: search_ids(vault.root, "sloth") == ["m-broken"], what="the fixed file")
    fixed = reported(running, lambda u: u.report is not None and "m-broken" in u.report.plan.added, "the report")
    assert fixed.report is not None and fixed.report.problems == []


def test_editor_temp_files_do_not_trigger_a_sync(vault: Vault, running: WatcherThread) -> None:
    folder = vault.root / "memories"
    folder.mkdir(exist_ok=True)
    before = len(running.updates)
    for name in (".note.md.swp", "note.md~", "4913", ".#note.md", "note.md.tmp", "#note.md#", "INDEX.md"):
        (folder / name).write_text(memory_text("m-temp", "Temporary armadillo."), encoding="utf-8")
    (vault.root / ".obsidian" / "workspace.json").write_text("{}", encoding="utf-8")
    (vault.root / "journal").mkdir(exist_ok=True)
    (vault.root / "journal" / "x.md").write_text(memory_text("m-journal", "Journal armadillo."), encoding="utf-8")
    time.sleep(1.0)  # several debounce windows and ticks: long enough for a sync to have started
    assert len(running.updates) == before
    for name in (".note.md.swp", "note.md~", "4913", ".#note.md", "note.md.tmp", "#note.md#"):
        (folder / name).unlink()
    time.sleep(0.5)
    assert len(running.updates) == before
    assert search_ids(vault.root, "armadillo") == []


def test_a_folder_moved_away_and_back(vault: Vault, running: WatcherThread, tmp_path: Path) -> None:
    for n in range(3):
        write_memory(vault.root, f"memories/projects/acme/m{n}.md", f"m-acme-{n}", "Acme pelican.")
    wait_for(lambda: len(search_ids(vault.root, "pelican")) == 3, what="the project files")
    outside = tmp_path / "parked-acme"
    shutil.move(vault.root / "memories" / "projects" / "acme", outside)
    wait_for(lambda: search_ids(vault.root, "pelican") == [], what="the folder moved away")
    shutil.move(outside, vault.root / "memories" / "renamed-acme")
    wait_for(lambda: len(search_ids(vault.root, "pelican")) == 3, what="the folder moved back")


def test_a_git_checkout_is_one_or_a_few_syncs(vault: Vault, running: WatcherThread) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(vault.root), "-c", "user.email=t@example.com", "-c", "user.name=t",
                        "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)

    git("init", "-q", "-b", "one")
    for n in range(200):
        write_memory(vault.root, f"memories/one/m{n}.md", f"m-one-{n}", "Branch one heron.")
    git("add", "memories")
    git("commit", "-q", "-m", "one")
    wait_for(lambda: len(search_ids(vault.root, "heron")) == 200, what="branch one indexed")
    git("checkout", "-q", "-b", "two")
    git("rm", "-q", "-r", "memories/one")
    for n in range(200):
        write_memory(vault.root, f"memories/two/m{n}.md", f"m-two-{n}", "Branch two ibis.")
    git("add", "memories")
    git("commit", "-q", "-m", "two")
    wait_for(lambda: len(search_ids(vault.root, "ibis")) == 200 and search_ids(vault.root, "heron") == [],
             what="branch two indexed")
    before = settle(running)
    git("checkout", "-q", "one")
    wait_for(lambda: len(search_ids(vault.root, "heron")) == 200 and search_ids(vault.root, "ibis") == [],
             what="the checkout back to branch one")
    syncs = running.updates[before : settle(running)]
    assert 0 < len(syncs) <= 5
    assert sum(len(u.report.plan.added) for u in syncs if u.report) == 200
    assert sum(len(u.report.plan.deleted) for u in syncs if u.report) == 200


@pytest.mark.parametrize(
    "failure",
    [VaultBusy("vault is busy: another memvault process is writing"), OSError(errno.ENOSPC, "No space left on device")],
    ids=["busy", "disk-full"],
)
def test_a_failed_sync_is_reported_and_retried(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                               failure: Exception) -> None:
    failing = threading.Event()
    real_sync = vault.sync

    def sync(**kwargs: Any) -> Any:
        if failing.is_set():
            raise failure
        return real_sync(**kwargs)

    monkeypatch.setattr(vault, "sync", sync)
    with WatcherThread(vault, HashEmbedder(), retry_seconds=(0.2, 0.4)) as watcher:
        failing.set()
        write_memory(vault.root, "memories/late.md", "m-late", "Written while failing, a tapir.")
        wait_for(lambda: sum(u.error is not None for u in watcher.updates) >= 3, what="failed attempts")
        failed = [u for u in watcher.updates if u.error is not None]
        assert [u.trigger for u in failed[:3]] == ["changes", "retry", "retry"]
        assert [u.retry_in for u in failed[:3]] == [0.2, 0.4, 0.4]  # backs off, up to the last delay
        assert all(isinstance(u.error, VaultError) and u.report is None and not u.changed for u in failed)
        if isinstance(failure, OSError):
            assert failed[0].error is not None and "No space left" in failed[0].error.one_line()
        failing.clear()
        wait_for(lambda: search_ids(vault.root, "tapir") == ["m-late"], what="the retry once syncing works")
        done = reported(watcher, lambda u: u.error is None and u.trigger != "start", "the successful retry")
        assert done.trigger == "retry" and done.report is not None and done.report.plan.added == ("m-late",)
        reported(watcher, lambda u: u.filled is not None, "its vectors, computed after its words")
        # Back to normal: no retries once a sync succeeded.
        settled = len(watcher.updates)
        time.sleep(0.8)
        assert len(watcher.updates) == settled


def test_a_sync_held_up_by_another_writer_runs_when_it_is_done(vault: Vault, running: WatcherThread) -> None:
    other = Vault(vault.root)
    lock = getattr(other, "index_lock", other.lock)  # whichever lock sync takes
    with lock.hold():
        write_memory(vault.root, "memories/held.md", "m-held", "Written while another process syncs, a gecko.")
        time.sleep(0.5)
        assert search_ids(vault.root, "gecko") == []
    wait_for(lambda: search_ids(vault.root, "gecko") == ["m-held"], what="the sync after the lock is released")
    assert running.running


def test_the_model_is_created_once(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[HashEmbedder] = []

    def embedder(self: Vault) -> HashEmbedder:
        made.append(HashEmbedder())
        return made[-1]

    monkeypatch.setattr(Vault, "embedder", embedder)
    with WatcherThread(vault) as watcher:
        for n in range(3):
            write_memory(vault.root, f"memories/m{n}.md", f"m-once-{n}", f"Once {n} okapi.")
            wait_for(lambda n=n: f"m-once-{n}" in search_ids(vault.root, "okapi"), what=f"file {n}")
            reported(watcher, lambda u, n=n: u.report is not None and f"m-once-{n}" in u.report.plan.added, "report")
        assert len(change_syncs(watcher.updates)) >= 3
    assert len(made) == 1 and made[0].calls > 0


def test_stop_event_stops_the_loop_promptly(vault: Vault) -> None:
    stop = threading.Event()
    updates: list[WatchUpdate] = []
    thread = threading.Thread(
        target=watch, args=(vault, HashEmbedder()), kwargs={"on_report": updates.append, "stop_event": stop}
    )
    thread.start()
    wait_for(lambda: bool(updates), what="the start sync")
    stop.set()
    stopped = time.monotonic()
    thread.join(5)
    assert not thread.is_alive()
    assert time.monotonic() - stopped < 1.0
    write_memory(vault.root, "memories/after.md", "m-after", "Written after the stop, a dugong.")
    time.sleep(0.5)
    assert len(updates) == 1


def test_a_negative_debounce_is_refused(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="debounce"):
        watch(vault, HashEmbedder(), on_report=lambda _u: None, debounce_ms=-1)


def test_state_files_written_by_sync_do_not_wake_the_watcher(vault: Vault, running: WatcherThread) -> None:
    """Sync writes INDEX.md and .memvault/: a watcher that reacted to them would never rest."""
    write_memory(vault.root, "memories/calm.md", "m-calm", "A calm manatee.")
    wait_for(lambda: search_ids(vault.root, "manatee") == ["m-calm"], what="the file")
    reported(running, lambda u: u.report is not None and u.report.plan.added == ("m-calm",), "the report")
    reported(running, lambda u: u.filled is not None, "its vectors, computed after its words")
    assert (vault.root / "INDEX.md").exists()
    settled = len(running.updates)
    time.sleep(1.0)
    assert len(running.updates) == settled
    assert os.listdir(vault.root / STATE_DIR)


# ---------------------------------------------------------------- scheduled maintenance


def maintain_updates(watcher: WatcherThread) -> list[WatchUpdate]:
    return [u for u in list(watcher.updates) if u.trigger == "maintain"]


def test_maintain_runs_on_schedule_once_per_period(make_vault: Callable[..., Vault],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "24")
    vault = make_vault({"memories/a.md": memory_text("m-a", "Tabs over spaces.")})
    (vault.root / "memories/b.md").write_text(
        "---\nid: m-b\ntitle: b\ntype: fact\ntags: [Deploys, deploy]\n---\nDeploy on Mondays.\n", encoding="utf-8")
    from vault_engine.governance.maintain import last_maintained

    assert last_maintained(vault.root) is None
    with WatcherThread(vault, HashEmbedder(), debounce_ms=50) as watcher:
        wait_for(lambda: len(maintain_updates(watcher)) == 1, what="the scheduled maintain")
        [run] = maintain_updates(watcher)
        assert run.reason == "schedule" and run.error is None and run.maintenance is not None
        assert run.maintenance.counts() == {"tags": 1}
        settle(watcher)
        assert len(maintain_updates(watcher)) == 1  # not again within the period
    assert last_maintained(vault.root) is not None
    assert "tags: [deploy]\n" in (vault.root / "memories/b.md").read_text(encoding="utf-8")


def test_a_servers_scheduled_maintain_waits_until_no_request_came_for_a_while(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    """A maintain holds the writer lock for seconds: in a server it waits for a quiet moment, so the hooks'
    requests at a session's start (a context records what it delivered) never queue behind it."""
    from vault_engine.daemon import watch as watching
    from vault_engine.governance.maintain import last_maintained

    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "24")
    vault = make_vault({"memories/a.md": memory_text("m-a", "Tabs over spaces.")})
    idle = [0.0]  # seconds since the server last answered
    with WatcherThread(vault, HashEmbedder(), debounce_ms=50, idle=lambda: idle[0]) as watcher:
        settle(watcher)
        time.sleep(4 * watching.TICK_MS / 1000)  # quiet ticks pass: still busy, still waiting
        assert maintain_updates(watcher) == [] and last_maintained(vault.root) is None
        idle[0] = watching.QUIET_SECONDS
        wait_for(lambda: len(maintain_updates(watcher)) == 1, what="the maintain once the server is quiet")
        assert maintain_updates(watcher)[0].reason == "schedule"


def test_the_watch_daemon_maintains_once_the_vault_is_quiet(make_vault: Callable[..., Vault],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``memvault watch`` answers no request: what it waits for is the vault itself, quiet since its start and
    since anything outside ``.memvault/`` last changed (an agent's hook appending its journal line)."""
    from vault_engine.daemon import watch as watching
    from vault_engine.governance.maintain import last_maintained

    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "24")
    monkeypatch.setattr(watching, "QUIET_SECONDS", 2.5)
    vault = make_vault({"memories/a.md": memory_text("m-a", "Tabs over spaces.")})
    journal = vault.root / "journal" / "activity.jsonl"
    journal.parent.mkdir(exist_ok=True)
    with WatcherThread(vault, HashEmbedder(), debounce_ms=50, quiet_vault=True) as watcher:
        for n in range(6):  # hooks writing to the vault every 0.6 s (quiet ticks between): the maintain waits
            with journal.open("a", encoding="utf-8") as out:
                out.write(f'{{"n": {n}}}\n')
            time.sleep(0.6)
        assert maintain_updates(watcher) == [] and last_maintained(vault.root) is None
        wait_for(lambda: len(maintain_updates(watcher)) == 1, what="the maintain once the vault is quiet")
        assert maintain_updates(watcher)[0].reason == "schedule"


def test_a_served_vault_answers_at_once_and_maintains_once_quiet(make_vault: Callable[..., Vault],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.daemon import watch as watching
    from vault_engine.governance.maintain import last_maintained
    from vault_engine.server.requests import ContextRequest
    from vault_engine.server.service import MemoryService

    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "24")
    monkeypatch.setattr(watching, "QUIET_SECONDS", 1.5)
    vault = make_vault({"memories/a.md": memory_text("m-a", "Tabs over spaces.")})
    service = MemoryService(Vault(vault.root, embedder=HashEmbedder()))
    try:
        service.watch()
        for _ in range(6):  # a burst of requests: the maintain that is due waits
            service.context(ContextRequest(task="format the code"))
            time.sleep(0.2)
        assert last_maintained(vault.root) is None
        wait_for(lambda: last_maintained(vault.root) is not None, what="the maintain once no request came")
        assert service.idle_seconds() >= 1.5
    finally:
        service.close()


def test_maintain_runs_after_a_large_batch_of_changes(make_vault: Callable[..., Vault],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_AFTER_CHANGES", "5")
    vault = make_vault()
    with WatcherThread(vault, HashEmbedder(), debounce_ms=50) as watcher:
        for n in range(4):
            write_memory(vault.root, f"memories/m{n}.md", f"m-n{n}", f"Fact number {n} about otters.")
        settle(watcher)
        assert maintain_updates(watcher) == []
        for n in range(4, 8):
            write_memory(vault.root, f"memories/m{n}.md", f"m-n{n}", f"Fact number {n} about otters.")
        wait_for(lambda: len(maintain_updates(watcher)) == 1, what="maintain after the import")
        assert maintain_updates(watcher)[0].reason == "changes"


def test_maintenance_due_follows_the_settings(make_vault: Callable[..., Vault],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.daemon.watch import maintenance_due
    from vault_engine.governance.maintain import mark_maintained

    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "24")
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_AFTER_CHANGES", "100")
    vault = make_vault()
    assert maintenance_due(vault, 0) == "schedule"  # never maintained
    mark_maintained(vault.root, when=1_000_000.0)
    assert maintenance_due(vault, 0, now=1_000_000.0 + 23 * 3600) is None
    assert maintenance_due(vault, 0, now=1_000_000.0 + 24 * 3600) == "schedule"
    assert maintenance_due(vault, 100, now=1_000_000.0) == "changes"
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "0")
    assert maintenance_due(Vault(vault.root), 99, now=9e9) is None


# ---------------------------------------------------------------- scheduled learning


class DownLlm:
    """The offline model, except that it cannot compact (as when the API is unreachable)."""

    def __init__(self) -> None:
        from vault_engine.llm.offline import OfflineLlm

        self.inner = OfflineLlm()
        self.name = "down"

    def sense(self, buffer: object, turn: object) -> object:
        return self.inner.sense(buffer, turn)  # type: ignore[arg-type]

    def digest(self, text: str, existing_tags: object, kind: str = "conversation") -> object:
        from vault_engine.errors import LlmUnavailable

        raise LlmUnavailable("Anthropic API rate limited (429) after 5 attempts")


def test_learning_retries_buffered_turns_the_model_could_not_compact(make_vault: Callable[..., Vault]) -> None:
    from vault_engine.daemon.watch import learn
    from vault_engine.errors import IngestDeferred
    from vault_engine.ingest.conversation import ingest, pending_turns
    from vault_engine.llm.base import Turn
    from vault_engine.llm.offline import OfflineLlm

    vault = make_vault()
    turns = [Turn("user" if n % 2 == 0 else "assistant", f"Turn {n} about the staging database migration plan.")
             for n in range(10)]
    with pytest.raises(IngestDeferred):
        ingest(vault, turns, session="s1", llm=DownLlm())  # type: ignore[arg-type]
    assert pending_turns(vault, "s1") == 10
    assert not [e for e in vault.scan().entries.values() if e.memory.type == "episode"]
    vault._llm = OfflineLlm()  # the model is back
    update = learn(vault)
    assert update.trigger == "learn" and update.error is None and update.learned is not None
    assert update.learned.episodes == 1 and update.learned.problems == ()
    assert pending_turns(vault, "s1") == 0
    [episode] = [e for e in vault.scan().entries.values() if e.memory.type == "episode"]
    assert all(turn.content in episode.memory.body for turn in turns)


def test_learning_reports_a_model_still_down_without_losing_turns(make_vault: Callable[..., Vault]) -> None:
    from vault_engine.daemon.watch import learn
    from vault_engine.errors import IngestDeferred
    from vault_engine.ingest.conversation import ingest, pending_turns
    from vault_engine.llm.base import Turn

    vault = make_vault()
    turns = [Turn("user", f"Question {n} about the release checklist and its owners.") for n in range(10)]
    with pytest.raises(IngestDeferred):
        ingest(vault, turns, session="s2", llm=DownLlm())  # type: ignore[arg-type]
    vault._llm = DownLlm()  # type: ignore[assignment]
    update = learn(vault)
    assert update.learned is not None and update.learned.episodes == 0 and update.learned.pending == 10
    assert len(update.learned.problems) == 1 and "rate limited (429)" in update.learned.problems[0]
    assert pending_turns(vault, "s2") == 10
