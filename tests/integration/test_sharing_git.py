"""One vault on two machines through real git: clones, concurrent changes, merges with memvault's drivers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vault_engine.vault import Vault, revise

pytestmark = pytest.mark.slow


# Commits need an author; the machine running the tests may have none configured.
AUTHOR = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
          "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **AUTHOR})
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def memvault(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], capture_output=True,
                          text=True, timeout=120, cwd=vault)
    assert done.returncode == 0, done.stderr
    return done


def commit_all(where: Path, message: str) -> None:
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", message)


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare shared remote and two clones of one vault (A made it with memvault init, B cloned it)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = tmp_path / "a"
    memvault(tmp_path, "init", str(a))
    memvault(a, "sync")  # writes the index page, committed with the vault
    git(a, "checkout", "-q", "-b", "main")
    commit_all(a, "a vault")
    git(a, "remote", "add", "origin", str(remote))
    git(a, "push", "-q", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(b))
    return remote, a, b


def share_one_memory(a: Path, b: Path) -> str:
    """A memory added on A, pushed, and pulled on B (whose first command registers the drivers)."""
    shared = memvault(a, "add", "Deploys of the api run from main after the CI passes.",
                      "--title", "Deploy notes").stdout.strip()
    commit_all(a, "shared memory")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    memvault(b, "status")
    return shared


def conflict_markers(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if ".git" in path.parts or ".memvault" in path.parts or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "<<<<<<<" in text or ">>>>>>>" in text:
            found.append(str(path.relative_to(root)))
    return found


def test_init_declares_and_registers_the_drivers_and_a_fresh_clone_registers_them_on_its_first_command(
        clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    assert "merge=memvault-journal" in (a / ".gitattributes").read_text()
    assert "vault_engine" in git(a, "config", "--get", "merge.memvault-journal.driver")
    assert subprocess.run(["git", "-C", str(b), "config", "--get", "merge.memvault-memory.driver"],
                          capture_output=True).returncode == 1
    memvault(b, "status")
    assert "git merge-driver memory %O %A %B %P" in git(b, "config", "--get", "merge.memvault-memory.driver")
    assert git(b, "status", "--porcelain") == ""  # registering touched no tracked file


def test_concurrent_work_on_two_machines_merges_without_a_conflict(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    shared = share_one_memory(a, b)
    # Both machines, independently: a memory of the same title, feedback on the shared one, journal events.
    on_a = memvault(a, "add", "Staging runs Postgres 16.", "--title", "Database notes").stdout.strip()
    memvault(a, "feedback", shared, "--outcome", "used-successfully")
    on_b = memvault(b, "add", "Production runs Postgres 15.", "--title", "Database notes").stdout.strip()
    memvault(b, "feedback", shared, "--outcome", "used-successfully")
    memvault(b, "feedback", shared, "--outcome", "ignored")
    commit_all(a, "work on a")
    commit_all(b, "work on b")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    assert conflict_markers(b) == []
    vault = Vault(b)
    assert {on_a, on_b, shared} <= {e.memory.id for e in vault.scan().active()}
    applied = vault.find(shared).memory.applied
    assert applied["used-successfully"] == 2 and applied["ignored"] == 1
    events = [json.loads(line)["id"] for f in sorted((b / "journal").glob("*.jsonl"))
              for line in f.read_text().splitlines() if line.strip()]
    assert len(events) == len(set(events))
    journal_a = {json.loads(line)["id"] for f in (a / "journal").glob("*.jsonl") for line in f.read_text().splitlines()}
    assert journal_a <= set(events)
    status = memvault(b, "--json", "status")
    assert json.loads(status.stdout)["invalid"] == []
    # The merge pushed back and pulled on A: both machines hold the same files.
    git(b, "push", "-q", "origin", "main")
    git(a, "pull", "-q", "--no-rebase", "origin", "main")
    tracked_a = {p: (a / p).read_bytes() for p in git(a, "ls-files").split()}
    tracked_b = {p: (b / p).read_bytes() for p in git(b, "ls-files").split()}
    assert tracked_a == tracked_b


def test_the_same_memory_edited_on_both_machines_keeps_both_versions(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    shared = share_one_memory(a, b)
    path = Vault(a).find(shared).path
    for where, body in ((a, "Deploys of the api run from the release branch."),
                        (b, "Deploys of the api run from tags only.")):
        text = (where / path).read_text()
        (where / path).write_text(text.replace("Deploys of the api run from main after the CI passes.", body))
        commit_all(where, "edit")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    assert conflict_markers(b) == []
    commit_all(b, "the conflict version")
    vault = Vault(b)
    current = vault.find(shared).memory
    versions = [e.memory for e in vault.scan().active() if e.memory.extra.get("conflict_of") == shared]
    assert len(versions) == 1 and versions[0].id in current.links
    assert {current.body.strip(), versions[0].body.strip()} == {"Deploys of the api run from the release branch.",
                                                                 "Deploys of the api run from tags only."}


def run(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], capture_output=True,
                          text=True, timeout=300, cwd=vault, env={**os.environ, **AUTHOR})


def test_git_sync_is_quiet_with_nothing_to_do_and_says_one_line_when_the_remote_is_gone(
        clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, _a, b = clones
    done = run(b, "git", "sync")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    added = memvault(b, "add", "Builds are cached in the ci-cache bucket.").stdout.strip()
    git(b, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    failed = run(b, "git", "sync")
    assert failed.returncode == 75 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and "cannot reach origin" in failed.stderr
    assert git(b, "status", "--porcelain") == "" and added in git(b, "show", "HEAD", "--stat") + "".join(
        p.read_text() for p in (b / "memories").rglob("*.md"))
    assert "memvault: " in git(b, "log", "-1", "--format=%s")


def test_three_machines_syncing_in_turn_converge(clones: tuple[Path, Path, Path], tmp_path: Path) -> None:
    remote, a, b = clones
    c = tmp_path / "c"
    git(tmp_path, "clone", "-q", str(remote), str(c))
    shared = memvault(a, "add", "Deploys of the api run from main after the CI passes.",
                      "--title", "Deploy notes").stdout.strip()
    assert run(a, "git", "sync").returncode == 0
    for where in (b, c):
        assert run(where, "git", "sync").returncode == 0
    made: set[str] = {shared}
    for round_ in range(2):
        for n, where in enumerate((a, b, c)):
            made.add(memvault(where, "add", f"Machine {n} round {round_}: the cache warms in {n + round_} minutes.",
                              "--title", f"Cache note {round_}").stdout.strip())
            memvault(where, "feedback", shared, "--outcome", "used-successfully")
        for where in (a, b, c):
            done = run(where, "git", "sync")
            assert done.returncode == 0, done.stderr
    for where in (a, b, c):  # a last round: everyone has everything
        assert run(where, "git", "sync").returncode == 0
    trees = []
    for where in (a, b, c):
        assert conflict_markers(where) == [] and git(where, "status", "--porcelain") == ""
        vault = Vault(where)
        assert {e.memory.id for e in vault.scan().active()} >= made
        assert vault.find(shared).memory.applied["used-successfully"] == 6
        trees.append(git(where, "rev-parse", "HEAD^{tree}"))
    assert trees[0] == trees[1] == trees[2]


def test_the_same_feedback_on_two_machines_in_one_second_counts_twice(
        clones: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Both machines write the same bytes (same count, same second): git takes such a file once and never
    runs the driver, so the sync sums the counters itself, as the journal's two events say."""
    _, a, b = clones
    shared = memvault(a, "add", "Deploys of the api run from main after the CI passes.",
                      "--title", "Deploy notes").stdout.strip()
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    monkeypatch.setattr(revise, "now", lambda: datetime(2026, 12, 6, 14, 1, 55, tzinfo=UTC))
    for where in (a, b):
        Vault(where).feedback(shared, "used-successfully")
    rel = Vault(a).find(shared).path
    assert (a / rel).read_bytes() == (b / rel).read_bytes()  # the case: one file, byte for byte
    for where in (a, b, a):
        done = run(where, "git", "sync")
        assert done.returncode == 0, done.stderr
    for where in (a, b):
        assert Vault(where).find(shared).memory.applied["used-successfully"] == 2
        assert git(where, "status", "--porcelain") == ""
    assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")


ORDERS = [("a", "b", "c"), ("a", "c", "b"), ("b", "a", "c"), ("b", "c", "a"), ("c", "a", "b"), ("c", "b", "a")]


@pytest.mark.parametrize("order", ORDERS, ids=["".join(o) for o in ORDERS])
def test_three_machines_with_every_kind_of_change_converge_in_every_order(tmp_path: Path,
                                                                          order: tuple[str, str, str]) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    machines = {name: tmp_path / name for name in "abc"}
    a = machines["a"]
    memvault(tmp_path, "init", str(a))
    git(a, "checkout", "-q", "-b", "main")
    git(a, "remote", "add", "origin", str(remote))
    shared = memvault(a, "add", "Deploys of the api run from main after the CI passes.",
                      "--title", "Deploy notes").stdout.strip()
    doomed = memvault(a, "add", "The staging password rotates every Monday at 09:00.",
                      "--title", "Staging rotation").stdout.strip()
    spare = memvault(a, "add", "Old dashboards live in the legacy Grafana folder.",
                     "--title", "Legacy dashboards").stdout.strip()
    assert run(a, "git", "sync").returncode == 0
    for name in "bc":
        git(tmp_path, "clone", "-q", str(remote), str(machines[name]))
        assert run(machines[name], "git", "sync").returncode == 0
    b, c = machines["b"], machines["c"]
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"title": "Imported runbook", "body": "Restart the queue workers first."}) + "\n")
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps(t) + "\n" for t in [
        {"role": "user", "content": "Why did the nightly build fail?"},
        {"role": "assistant", "content": "The cache bucket was full; I cleared it."},
        {"role": "user", "content": "Add a check for the bucket size to the pipeline."}]))
    # a: corrects the shared memory, forgets one for good, runs maintain
    memvault(a, "correct", shared, "Deploys of the api run from the release branch after the CI passes.")
    memvault(a, "forget", doomed, "--permanent")
    memvault(a, "maintain")
    # b: corrects the same memory differently, gives feedback on the one a purges, imports, forgets
    memvault(b, "correct", shared, "Deploys of the api run from tags only.")
    memvault(b, "feedback", doomed, "--outcome", "used-successfully")
    memvault(b, "import", str(records))
    memvault(b, "forget", spare)
    # c: feedback, an ingested conversation, a memory of its own
    memvault(c, "feedback", shared, "--outcome", "ignored")
    memvault(c, "ingest", str(chat), "--flush")
    own = memvault(c, "add", "The bucket size check runs in the nightly pipeline.").stdout.strip()
    for _ in range(2):  # two rounds in this order: everyone has everyone's changes
        for name in order:
            done = run(machines[name], "git", "sync")
            assert done.returncode == 0, f"{name}: {done.stdout}{done.stderr}"
    trees, currents, replays = set(), [], []
    for where in machines.values():
        assert conflict_markers(where) == [] and git(where, "status", "--porcelain") == ""
        vault = Vault(where)
        active = {e.memory.id: e.memory for e in vault.scan().active()}
        assert doomed not in active and own in active
        assert not any(b"staging password rotates" in p.read_bytes() for p in where.rglob("*")
                       if p.is_file() and ".git" not in p.parts and ".memvault" not in p.parts)
        versions = [m for m in active.values() if m.supersedes == shared]
        current = [m for m in versions if "conflict_of" not in m.extra]
        assert len(versions) == 2 and len(current) == 1 and active[shared].lifecycle == "superseded"
        assert spare not in active and any(e.memory.id == spare for e in vault.scan().trashed())
        status = json.loads(memvault(where, "--json", "status").stdout)
        assert status["invalid"] == []
        replay = run(where, "--json", "journal", "replay")
        replays.append(json.loads(replay.stdout)["differences"])
        currents.append(sorted(active))
        trees.add(git(where, "rev-parse", "HEAD^{tree}"))
    assert len(trees) == 1 and currents[0] == currents[1] == currents[2]
    assert replays[0] == replays[1] == replays[2]
    # The purge stays in force on every machine: the text is not learned again.
    again = run(c, "add", "The staging password rotates every Monday at 09:00.")
    assert again.returncode != 0 and "forgotten" in again.stderr


def test_watch_runs_git_sync_on_its_schedule(clones: tuple[Path, Path, Path]) -> None:
    remote, _, b = clones
    added = memvault(b, "add", "The nightly job prunes build caches older than a week.").stdout.strip()
    env = {**os.environ, "MEMVAULT_GIT_SYNC_EVERY_MINUTES": "0.02", **AUTHOR}
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(b), "--json", "watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=b, env=env)
    import threading

    deadline = threading.Timer(90, proc.kill)  # a watch that never syncs fails the test, never hangs it
    deadline.start()
    try:
        assert proc.stdout is not None
        events = []
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1].get("event") == "git":
                break
    finally:
        deadline.cancel()
        proc.terminate()
        proc.wait(30)
    shared = events[-1]
    assert shared["event"] == "git" and shared["pushed"] and shared["committed"] >= 1
    assert added in git(remote, "log", "-p", "main")


def test_audit_lists_conflict_versions_maintain_leaves_them_and_rollback_swaps(
        clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    shared = memvault(a, "add", "Deploys of the api run from main after the CI passes.",
                      "--title", "Deploy notes").stdout.strip()
    corrected = memvault(a, "add", "The cache warms in five minutes.", "--title", "Cache warm-up").stdout.strip()
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    path = Vault(a).find(shared).path
    for where, body in ((a, "Deploys of the api run from the release branch."),
                        (b, "Deploys of the api run from tags only.")):
        text = (where / path).read_text()
        (where / path).write_text(text.replace("Deploys of the api run from main after the CI passes.", body))
    memvault(a, "correct", corrected, "The cache warms in ten minutes.")
    memvault(b, "correct", corrected, "The cache warms in two minutes.")
    for where in (a, b, a):
        assert run(where, "git", "sync").returncode == 0
    vault = Vault(a)
    versions = {e.memory.extra["conflict_of"]: e.memory for e in vault.scan().active()
                if "conflict_of" in e.memory.extra}
    assert shared in versions and len(versions) == 2
    report = json.loads(memvault(a, "--json", "audit").stdout)
    assert len(report["conflicts"]) == 2 and any(versions[shared].id in line for line in report["conflicts"])
    plan = json.loads(memvault(a, "--json", "maintain", "--dry-run").stdout)
    assert not any(v.id in json.dumps(plan) for v in versions.values())
    # A body conflict: the texts change places, and back again.
    before = vault.find(shared).memory.body
    memvault(a, "rollback", versions[shared].id)
    assert Vault(a).find(shared).memory.body == versions[shared].body
    assert Vault(a).find(versions[shared].id).memory.body == before
    memvault(a, "rollback", versions[shared].id)
    assert Vault(a).find(shared).memory.body == before
    # Two corrections: the conflicting one becomes current, the other the conflicting version.
    loser = next(m for k, m in versions.items() if k != shared)
    winner_id = loser.extra["conflict_of"]
    memvault(a, "rollback", loser.id)
    after = Vault(a)
    assert "conflict_of" not in after.find(loser.id).memory.extra
    assert after.find(winner_id).memory.extra["conflict_of"] == loser.id
    assert after.find(corrected).memory.superseded_by == loser.id
    assert run(a, "git", "sync").returncode == 0 and run(b, "git", "sync").returncode == 0
    assert Vault(b).find(corrected).memory.superseded_by == loser.id  # the swap travels too


def test_a_merge_undone_on_one_machine_is_not_redone_by_anothers_maintain(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    for name, text in (("deploys", "Deploys run from the main branch with make release."),
                       ("deploys-again", "Deploys run from the main branch with make release, always.")):
        (a / "memories" / "global" / f"{name}.md").write_text(
            f"---\nid: m-{name}\ntitle: Deploys\ntype: fact\n---\n{text}\n", encoding="utf-8")
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    merged = json.loads(memvault(a, "--json", "maintain").stdout)
    event = next(e for e, action in zip(merged["events"], merged["actions"], strict=True) if action["kind"] == "merge")
    memvault(a, "rollback", "--event", event)
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    again = json.loads(memvault(b, "--json", "maintain", "--dry-run").stdout)
    assert "merge" not in again["counts"]
    assert {e.memory.id for e in Vault(b).scan().active()} >= {"m-deploys", "m-deploys-again"}


def test_trash_emptied_on_one_machine_and_restored_on_another_loses_nothing(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    kept = memvault(a, "add", "The on-call rota lives in the team calendar.", "--title", "On-call").stdout.strip()
    memvault(a, "forget", kept)
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    memvault(a, "trash", "empty")
    memvault(b, "trash", "restore", kept)
    for where in (a, b, a):
        done = run(where, "git", "sync")
        assert done.returncode == 0, done.stderr
    for where in (a, b):
        assert conflict_markers(where) == [] and git(where, "status", "--porcelain") == ""
        entry = Vault(where).find(kept)  # restored on one machine: kept on both
        assert not entry.in_trash


def test_a_teammates_memories_are_marked_in_the_context_and_ones_own_are_not(clones: tuple[Path, Path, Path]) -> None:
    _, a, b = clones
    git(a, "config", "user.name", "ada")  # who each clone writes as: git's user.name
    git(b, "config", "user.name", "bob")
    legacy = a / "memories" / "global" / "legacy.md"  # written before memories named their sender
    legacy.write_text("---\nid: m-legacy\ntitle: Release freeze\ntype: fact\ntier: hot\n---\n"
                      "No releases on Fridays.\n", encoding="utf-8")
    assert run(a, "git", "sync").returncode == 0
    assert run(b, "git", "sync").returncode == 0
    bobs = [memvault(b, "add", "The staging database is reset every night at 02:00.", "--tier", "hot").stdout.strip(),
            memvault(b, "add", "Deploys of the api run from main after the CI passes.").stdout.strip()]
    assert run(b, "git", "sync").returncode == 0
    assert run(a, "git", "sync").returncode == 0
    adas = memvault(a, "add", "Run the linters before every commit.", "--tier", "hot").stdout.strip()
    assert run(a, "git", "sync").returncode == 0
    before = {p: p.read_bytes() for p in (a / "memories").rglob("*.md")}
    assert "sender: bob" in memvault(a, "show", bobs[0]).stdout
    assert json.loads(memvault(a, "--json", "show", bobs[0]).stdout)["metadata"]["sender"] == "bob"

    def reasons(where: Path, *args: str) -> dict[str, list[str]]:
        manifest = json.loads(memvault(where, "--json", "context", "--task", "deploy the api to staging",
                                       "--no-record", *args).stdout)
        assert manifest["markdown"].count("from another sender") == sum(
            "from another sender" in " ".join(item.get("why") or item.get("whyApplied"))
            for item in [*manifest["resident"], *manifest["manifest"]])
        return {item["id"]: item.get("why") or item["whyApplied"] for item in [*manifest["resident"],
                                                                                *manifest["manifest"]]}

    on_a = reasons(a)
    assert set(bobs) | {adas, "m-legacy"} <= set(on_a)
    for memory_id in bobs:
        assert "from another sender: bob" in on_a[memory_id]
    for memory_id in (adas, "m-legacy"):
        assert not any(r.startswith("from another sender") for r in on_a[memory_id])
    assert run(b, "git", "sync").returncode == 0
    on_b = reasons(b)
    assert "from another sender: ada" in on_b[adas]
    assert not any(r.startswith("from another sender") for r in on_b[bobs[0]] + on_b["m-legacy"])
    assert "from another sender: ada" in reasons(a, "--sender", "bob")[adas]
    # Reading and syncing an unchanged vault change no tracked file: no file gains a sender.
    memvault(a, "sync")
    assert git(a, "status", "--porcelain") == ""
    assert {p: p.read_bytes() for p in (a / "memories").rglob("*.md")} == before
    assert "sender" not in legacy.read_text(encoding="utf-8")
