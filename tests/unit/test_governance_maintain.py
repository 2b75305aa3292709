"""maintain: idempotent runs, dry run, trash expiry, decay, compaction, crash repair, rollback of every action."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vault_engine import fsio
from vault_engine.errors import NothingToUndo
from vault_engine.governance.actions import EXTRA_KEYS, GOVERNED, field_value
from vault_engine.governance.maintain import last_maintained, maintain
from vault_engine.history import replay
from vault_engine.index.disk import STAT_CACHE
from vault_engine.index.fakes import HashEmbedder
from vault_engine.vault import NewMemory, Vault, now

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DEPLOY = "Deploys run from the main branch with make release."
DEPLOY_AGAIN = "Deploys run from the main branch with make release, always."
DEPLOY_REORDERED = "With make release, deploys run from the main branch."  # says nothing DEPLOY does not


def md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", *(f"{k}: {v}" for k, v in {"type": "fact", **keys}.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def at(days: float, base: datetime = NOW) -> str:
    return (base + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_vault(make_vault: Callable[..., Vault], files: dict[str, str] | None = None) -> Vault:
    return Vault(make_vault(files).root, embedder=HashEmbedder())


def kinds(report: Any) -> list[tuple[str, str]]:
    return [(a.kind, a.memory) for a in report.actions]


def memory_files(vault: Vault) -> dict[str, bytes]:
    """Every file of the vault but its indexes and caches."""
    return {p.relative_to(vault.root).as_posix(): p.read_bytes() for p in sorted(vault.root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(vault.root).parts}


def all_files(vault: Vault) -> dict[str, bytes]:
    """Every file of the vault, its indexes and journal included, but the sync's record of file stats: a
    read may settle a file recorded in the clock tick of its last write (*racy*, index/freshness.py), so
    its stat is written again with its bytes unchanged; that is no change a dry run makes."""
    return {p.relative_to(vault.root).as_posix(): p.read_bytes() for p in sorted(vault.root.rglob("*"))
            if p.is_file() and p.name != STAT_CACHE}


def governed(vault: Vault, *ids: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Path and governed fields of each memory (what an undo must restore)."""
    scan = vault.scan()
    return {i: (scan.get(i).path, {k: field_value(scan.get(i).memory, k) for k in sorted(GOVERNED | EXTRA_KEYS)})
            for i in ids}


def govern_events(vault: Vault) -> list[Any]:
    return [e for e in vault.journal.events() if e.kind == "govern"]


# A vault with something for every step to do.
BUSY = {
    "memories/global/deploys.md": md("m-old", "Deploys", DEPLOY, created=at(-30), proof_count=2),
    "memories/global/deploys-again.md": md("m-dup", "Deploys", DEPLOY_AGAIN, created=at(-5)),
    "memories/global/fridays.md": md("m-fri", "Fridays", "We deploy on Fridays after the standup meeting.",
                                     created=at(-40), authority="explicit", lifecycle="proven"),
    "memories/global/no-fridays.md": md("m-nofri", "Fridays", "We no longer deploy on Fridays after the standup "
                                        "meeting.", created=at(-2), authority="explicit", lifecycle="proven"),
    "memories/global/tax.md": md("m-tax", "Tax", "Quarterly tax filings are due in April.", tags="[Finance]",
                                 created=at(-3)),
    "memories/global/mobile.md": md("m-mobile", "Mobile", "The mobile app uses React Native with Expo.",
                                    tags="[finance, mobile]", created=at(-3)),
    "memories/global/billing.md": md("m-state", "Billing", "2026-05-01: migrated the billing database.",
                                     tier="hot", created=at(-10)),
    "trash/expired.md": md("m-expired", "Old", "Something forgotten long ago.", trashed_at=at(-40),
                           expires_at=at(-10), trashed_from="memories/global/old.md"),
}


def test_maintain_twice_the_second_run_plans_nothing(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, BUSY)
    first = vault.maintain(now=NOW)
    assert kinds(first) == [
        ("expire", "m-expired"),
        ("tags", "m-tax"),
        ("supersede", "m-nofri"),
        ("merge", "m-old"),
        ("retire", "m-state"),
    ]
    assert first.applied and len(first.events) == 5
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert vault.maintain(now=NOW + timedelta(days=1), replan=True).actions == []
    scan = vault.scan()
    assert "m-expired" not in scan.entries and "m-dup" in scan.entries and scan.get("m-dup").path.startswith("trash/")
    assert scan.get("m-fri").memory.lifecycle == "superseded" and scan.get("m-state").memory.tier == "cold"
    assert scan.get("m-tax").memory.tags == ("finance",)
    assert vault.replay_diff() == []


def test_dry_run_changes_no_file(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, BUSY)
    vault.sync()
    with vault.lock.hold():
        pass
    before = all_files(vault)
    report = vault.maintain(now=NOW, dry_run=True)
    assert not report.applied and report.events == []
    assert [k for k, _ in kinds(report)] == ["expire", "tags", "supersede", "merge", "retire"]
    assert all_files(vault) == before
    assert last_maintained(vault.root) is None
    applied = vault.maintain(now=NOW)
    assert kinds(applied) == kinds(report)  # the dry run showed exactly what a run does
    assert last_maintained(vault.root) is not None


def test_dry_run_on_a_vault_never_indexed_leaves_memories_and_journal_alone(
        make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, BUSY)
    before = {k: v for k, v in memory_files(vault).items() if k != "INDEX.md"}
    assert vault.maintain(now=NOW, dry_run=True).actions
    assert {k: v for k, v in memory_files(vault).items() if k != "INDEX.md"} == before
    assert list(vault.journal.events()) == []


# ---------------------------------------------------------------- trash expiry


def test_trash_expiry_with_an_injected_clock(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault)
    kept = vault.add(NewMemory("Python code is formatted with ruff format.")).id
    gone = vault.add(NewMemory("The cat sat on the mat all afternoon.")).id
    vault.forget(gone)
    trashed = vault.scan().get(gone)
    assert trashed.memory.expires_at is not None and trashed.memory.trashed_at is not None
    forgotten_at = trashed.memory.trashed_at
    assert vault.maintain(now=forgotten_at + timedelta(days=29), replan=True).actions == []
    assert (vault.root / trashed.path).exists()
    report = vault.maintain(now=forgotten_at + timedelta(days=31))
    assert kinds(report) == [("expire", gone)]
    assert not (vault.root / trashed.path).exists() and gone not in vault.scan().entries
    events = list(vault.journal.events())
    govern = [e for e in events if e.kind == "govern"]
    tombstones = [e for e in events if e.kind == "trash-expire"]
    assert len(govern) == 1 and govern[0].payload["purge"] == [gone]
    assert len(tombstones) == 1 and tombstones[0].memory == gone
    assert tombstones[0].payload["by"] == govern[0].id
    assert tombstones[0].payload["path"] == trashed.path and len(tombstones[0].payload["text_sha256"]) == 64
    assert replay(events)[gone].status == "purged"
    assert vault.replay_diff() == []
    assert kept in vault.scan().entries
    with pytest.raises(NothingToUndo, match="deleted for good"):
        vault.rollback(gone)
    with pytest.raises(NothingToUndo, match="purged expired trash"):
        vault.rollback(event_id=govern[0].id)
    assert vault.maintain(now=forgotten_at + timedelta(days=31), replan=True).actions == []


# ---------------------------------------------------------------- decay


def test_decay_trashes_old_inferred_low_importance_cold_memories_only(make_vault: Callable[..., Vault]) -> None:
    old = at(-300)
    vault = fake_vault(make_vault, {
        "memories/global/faded.md": md("m-faded", "Faded", "The printer on floor two jams on A3 paper.",
                                       importance=0.3, created=old),
        "memories/global/important.md": md("m-important", "Important", "The VPN needs the hardware token.",
                                           importance=0.8, created=old),
        "memories/global/explicit.md": md("m-explicit", "Explicit", "Lunch orders go in the kitchen sheet.",
                                          importance=0.1, authority="explicit", created=old),
        "episodes/global/episode.md": md("m-episode", "Episode", "We met the auditors in the spring.",
                                         type="episode", importance=0.1, created=old),
        "memories/global/hot.md": md("m-hot", "Hot", "Standups start at ten sharp every weekday.",
                                     importance=0.1, tier="hot", created=old),
        "memories/global/used.md": md("m-used", "Used", "The staging cluster lives in eu-west-1.",
                                      importance=0.3, created=old, last_applied=at(-5)),
        "memories/global/undated.md": md("m-undated", "Undated", "Meeting rooms are booked in the portal."),
        "memories/global/fresh.md": md("m-fresh", "Fresh", "Parking passes are renewed each quarter.",
                                       importance=0.3, created=at(-100)),
    })
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("decay", "m-faded")]
    assert "300 idle days" in report.actions[0].reason
    entry = vault.scan().get("m-faded")
    assert entry.path == "trash/faded.md"
    assert entry.memory.extra["trash_reason"] == "decay"
    assert entry.memory.expires_at == NOW + timedelta(days=30)
    assert not (vault.root / "memories/global/faded.md").exists()
    assert vault.maintain(now=NOW, replan=True).actions == []


# ---------------------------------------------------------------- compaction


def add_episodes(vault: Vault, count: int) -> list[str]:
    texts = ["Met the auditors about the yearly report.", "Paired with Sam on the flaky login test.",
             "Ordered new laptops for the interns.", "Gave the quarterly roadmap talk to sales.",
             "Reviewed the office lease with the landlord.", "Planned the summer offsite in Lisbon."]
    return [vault.add(NewMemory(texts[n], type="episode", extra={"occurred_at": f"2026-01-{n + 1:02d}"})).id
            for n in range(count)]


def test_compaction_digests_the_oldest_episodes_and_keeps_them(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {"memvault.toml": "[compaction]\nmax_cold = 3\ntarget_cold = 1\ndigest_size = 2\n"})
    episodes = add_episodes(vault, 5)
    paths = {i: vault.scan().get(i).path for i in episodes}
    before = {i: (vault.root / p).read_text(encoding="utf-8") for i, p in paths.items()}
    report = vault.maintain(now=NOW)
    assert [a.kind for a in report.actions] == ["compact", "compact"]
    digests = [a.memory for a in report.actions]
    assert [a.related for a in report.actions] == [tuple(episodes[0:2]), tuple(episodes[2:4])]
    scan = vault.scan()
    for digest_id, members in zip(digests, (episodes[0:2], episodes[2:4]), strict=True):
        digest = scan.get(digest_id)
        assert digest.path.startswith("episodes/global/")
        assert digest.memory.extra["digest"] is True and digest.memory.type == "episode"
        assert digest.memory.links == tuple(members)
        assert digest.memory.title == "Digest: 2 episodes, " + (
            "2026-01-01 to 2026-01-02" if members == episodes[0:2] else "2026-01-03 to 2026-01-04")
        for member in members:
            assert f"[[{paths[member][:-3]}|" in digest.memory.body and f"`{member}`" in digest.memory.body
            old = before[member]
            end = old.index("\n---\n", 3)
            assert (vault.root / paths[member]).read_text(encoding="utf-8") == (
                old[:end] + f"\ncompacted_into: {digest_id}" + old[end:])
    assert (vault.root / paths[episodes[4]]).read_text(encoding="utf-8") == before[episodes[4]]
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert vault.replay_diff() == []


def test_no_compaction_at_or_under_the_limit(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {"memvault.toml": "[compaction]\nmax_cold = 3\ntarget_cold = 1\n"})
    add_episodes(vault, 3)
    assert vault.maintain(now=NOW, replan=True).actions == []


# ---------------------------------------------------------------- interrupted moves


def test_a_crash_between_write_and_remove_of_a_merge_is_finished_next_run(
        make_vault: Callable[..., Vault], monkeypatch: pytest.MonkeyPatch) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/deploys.md": md("m-old", "Deploys", DEPLOY, created=at(-30), proof_count=2),
        "memories/global/deploys-again.md": md("m-dup", "Deploys", DEPLOY_AGAIN, created=at(-5), proof_count=3),
    })
    real_remove = fsio.remove
    crashes = []

    def crash_once(path: Path) -> None:
        if not crashes and path.name == "deploys-again.md" and "trash" not in path.parts:
            crashes.append(path)
            raise OSError("simulated crash")
        real_remove(path)

    monkeypatch.setattr(fsio, "remove", crash_once)
    with pytest.raises(OSError, match="simulated crash"):
        vault.maintain(now=NOW)
    assert crashes
    assert (vault.root / "memories/global/deploys-again.md").exists()  # in both places, never in neither
    assert (vault.root / "trash/deploys-again.md").exists()
    assert vault.scan().duplicates == {"m-dup": ["trash/deploys-again.md"]}
    assert vault.scan().get("m-old").memory.proof_count == 5  # the survivor was written first

    dry = vault.maintain(now=NOW, dry_run=True)
    assert kinds(dry) == [("repair", "m-dup")]
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("repair", "m-dup")] and len(report.events) == 1
    assert "kept trash/deploys-again.md" in report.actions[0].reason
    scan = vault.scan()
    assert scan.duplicates == {} and scan.problems == []
    assert scan.get("m-dup").path == "trash/deploys-again.md"
    assert scan.get("m-dup").memory.extra["merged_into"] == "m-old"
    assert not (vault.root / "memories/global/deploys-again.md").exists()
    assert scan.get("m-old").memory.proof_count == 5  # not counted twice
    assert [e["merged"] for e in scan.get("m-old").memory.evidence if "merged" in e] == ["m-dup"]
    assert vault.maintain(now=NOW, replan=True).actions == []
    # The merge was journalled before its files changed: it survives the crash and can be undone.
    [merge] = [e for e in govern_events(vault) if e.payload["kind"] == "merge"]
    assert merge.payload["moved"] == {"m-dup": {"from": "memories/global/deploys-again.md",
                                                "to": "trash/deploys-again.md"}}
    assert vault.replay_diff() == []
    vault.rollback("m-dup")
    scan = vault.scan()
    assert scan.get("m-dup").path == "memories/global/deploys-again.md" and not scan.get("m-dup").in_trash
    assert scan.get("m-old").memory.proof_count == 2 and scan.duplicates == {}


def test_a_copy_left_in_the_trash_by_an_interrupted_forget_wins(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/printer.md": md("m-printer", "Printer", "The printer jams on A3.", created=at(-30)),
    })
    text = (vault.root / "memories/global/printer.md").read_text(encoding="utf-8")
    trashed = text.replace("\n---\n", f"\ntrashed_at: {at(-1)}\nexpires_at: {at(29)}\n"
                                      "trashed_from: memories/global/printer.md\n---\n", 1)
    (vault.root / "trash/printer.md").write_text(trashed, encoding="utf-8")
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("repair", "m-printer")]
    assert report.actions[0].remove == ("memories/global/printer.md",)
    scan = vault.scan()
    assert scan.get("m-printer").path == "trash/printer.md" and scan.duplicates == {}
    assert report.events == [e.id for e in govern_events(vault)]
    with pytest.raises(NothingToUndo, match="leftover copy"):
        vault.rollback(event_id=report.events[0])


def test_copies_with_different_text_are_left_alone(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/a.md": md("m-same", "Printer", "The printer jams on A3."),
        "memories/global/b.md": md("m-same", "Printer", "The printer jams on A4 now."),
    })
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert (vault.root / "memories/global/a.md").exists() and (vault.root / "memories/global/b.md").exists()


# ---------------------------------------------------------------- rollback of every action


SCENARIOS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "tags": ({
        "memories/global/a.md": md("m-a", "Tax", "Quarterly tax filings are due in April.", tags="[Finance]"),
        "memories/global/b.md": md("m-b", "Mobile", "The mobile app uses React Native.", tags="[finances, mobile]"),
    }, ("m-a", "m-b")),
    "supersede": ({
        "memories/global/fridays.md": md("m-old", "Fridays", "We deploy on Fridays after the standup meeting.",
                                         created=at(-40), tier="hot", authority="explicit", lifecycle="proven"),
        "memories/global/no-fridays.md": md("m-new", "Fridays", "We no longer deploy on Fridays after the standup "
                                            "meeting.", created=at(-2), authority="explicit", lifecycle="proven"),
    }, ("m-old", "m-new")),
    "merge": ({
        "memories/global/deploys.md": md("m-old", "Deploys", DEPLOY, created=at(-30), proof_count=2,
                                         tags="[deploy]", evidence="[{event: e-1, source: chat}]"),
        "memories/global/deploys-again.md": md("m-dup", "Deploys", DEPLOY_REORDERED, created=at(-5), tags="[release]",
                                               applied="{ignored: 2}"),
        "memories/global/tax.md": md("m-link", "Tax", "Quarterly tax filings are due in April.", links="[m-dup]"),
    }, ("m-old", "m-dup", "m-link")),
    "link": ({
        "memories/global/pg.md": md("m-a", "Staging database",
                                    "The staging database runs Postgres with the pgvector extension."),
        "memories/global/backups.md": md("m-b", "Backups", "Backups of the staging Postgres database run nightly."),
    }, ("m-a", "m-b")),
    "decay": ({
        "memories/global/faded.md": md("m-a", "Faded", "The printer on floor two jams on A3 paper.",
                                       importance=0.3, created=at(-300)),
    }, ("m-a",)),
    "compact": ({
        "memvault.toml": "[compaction]\nmax_cold = 1\ntarget_cold = 0\ndigest_size = 5\n",
        "episodes/global/a.md": md("m-a", "Auditors", "Met the auditors.", type="episode", created=at(-9)),
        "episodes/global/b.md": md("m-b", "Laptops", "Ordered new laptops.", type="episode", created=at(-8)),
    }, ("m-a", "m-b")),
    "retire": ({
        "memories/global/billing.md": md("m-a", "Billing", "2026-05-01: migrated the billing database.",
                                         tier="hot", created=at(-10)),
    }, ("m-a",)),
    "overflow": ({
        "memvault.toml": "[tiers]\nhot_budget_chars = 100\n",
        "memories/global/a.md": md("m-a", "Ruff", "Always run ruff before committing any Python code.",
                                   tier="hot", importance=0.2),
        "memories/global/b.md": md("m-b", "Tabs", "The user prefers tabs over spaces.", tier="hot",
                                   importance=0.6),
    }, ("m-a", "m-b")),
}


@pytest.mark.parametrize("kind", sorted(SCENARIOS))
def test_rollback_of_each_action_restores_the_files_and_vetoes_it(
        kind: str, make_vault: Callable[..., Vault]) -> None:
    files, ids = SCENARIOS[kind]
    vault = fake_vault(make_vault, files)
    before = governed(vault, *ids)
    report = maintain(vault, now=NOW, steps=[kind])
    assert report.actions and {a.kind for a in report.actions} == {kind}
    assert governed(vault, *ids) != before
    first = report.actions[0]
    for event_id in reversed(report.events):  # newest first, as a person would undo a whole run
        result = vault.rollback(event_id=event_id)
        assert result.action == f"undid {kind}" and result.conflicts == []
    assert governed(vault, *ids) == before
    for created in (m.id for a in report.actions for _, m in a.create):  # a digest goes to the trash
        assert vault.scan().get(created).path.startswith("trash/")
    again = vault.maintain(now=NOW)
    assert first.key() not in [a.key() for a in again.actions]
    if kind == "overflow":  # the tier is still over its budget: the other memory goes instead
        assert kinds(again) == [("overflow", "m-b")]
    else:
        assert kind not in {a.kind for a in again.actions}
    assert vault.replay_diff() == []


def test_rollback_of_an_expiry_is_refused(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {"trash/old.md": md("m-old", "Old", "Gone.", trashed_at=at(-40),
                                                       expires_at=at(-10))})
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("expire", "m-old")]
    with pytest.raises(NothingToUndo, match="cannot be rolled back"):
        vault.rollback(event_id=report.events[0])
    with pytest.raises(NothingToUndo, match="deleted for good"):
        vault.rollback("m-old")


def test_rollback_by_memory_id_and_by_event_id(make_vault: Callable[..., Vault]) -> None:
    files, ids = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    before = governed(vault, *ids)
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("merge", "m-old")]
    result = vault.rollback("m-dup")  # any memory the action touched names it
    assert (result.action, result.id) == ("undid merge", "m-dup")
    assert result.related is not None and set(result.related.split(", ")) == {"m-old", "m-link"}
    assert governed(vault, *ids) == before
    with pytest.raises(NothingToUndo, match="already rolled back"):
        vault.rollback(event_id=report.events[0])
    with pytest.raises(NothingToUndo, match="no journal event e-nope"):
        vault.rollback(event_id="e-nope")
    rollbacks = [e for e in vault.journal.events() if e.kind == "rollback"]
    assert [(e.payload["undoes"], e.payload["action"]) for e in rollbacks] == [(report.events[0], "merge")]


def test_three_way_rollback_keeps_a_later_edit(make_vault: Callable[..., Vault]) -> None:
    files, ids = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    before = governed(vault, *ids)
    report = vault.maintain(now=NOW)
    path = vault.root / "memories/global/deploys.md"
    edited = path.read_text(encoding="utf-8").replace("tags: [deploy, release]", "tags: [deploy, release, ci]")
    edited = edited.replace(DEPLOY, "Deploys run from the main branch with make release (edited).")
    path.write_text(edited, encoding="utf-8")
    result = vault.rollback(event_id=report.events[0])
    assert result.conflicts == []
    survivor = vault.scan().get("m-old").memory
    assert survivor.body == "Deploys run from the main branch with make release (edited).\n"
    assert survivor.tags == ("deploy", "ci")  # the merge's tag is gone, the person's stays
    restored = {k: v for k, v in governed(vault, "m-old")["m-old"][1].items() if k not in ("tags", "body")}
    assert restored == {k: v for k, v in before["m-old"][1].items() if k not in ("tags", "body")}
    assert governed(vault, "m-dup") == {"m-dup": before["m-dup"]}


def test_three_way_rollback_reports_a_field_changed_since(make_vault: Callable[..., Vault]) -> None:
    files, _ = SCENARIOS["supersede"]
    vault = fake_vault(make_vault, files)
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("supersede", "m-new")]
    path = vault.root / "memories/global/fridays.md"
    path.write_text(path.read_text(encoding="utf-8").replace("lifecycle: superseded", "lifecycle: trial"),
                    encoding="utf-8")
    result = vault.rollback("m-old")
    assert result.conflicts == ["m-old.lifecycle changed since; kept 'trial'"]
    old = vault.scan().get("m-old").memory
    assert (old.lifecycle, old.superseded_by, old.tier) == ("trial", None, "hot")
    assert vault.scan().get("m-new").memory.supersedes is None


def test_rollback_of_a_trashed_memory_restored_by_hand_only_reverts_fields(
        make_vault: Callable[..., Vault]) -> None:
    files, ids = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    before = governed(vault, *ids)
    report = vault.maintain(now=NOW)
    vault.restore("m-dup")
    vault.rollback(event_id=report.events[0])
    assert governed(vault, *ids) == before
    assert [e.path for e in vault.scan().trashed()] == []


# ---------------------------------------------------------------- journal and schedule


def test_replay_stays_consistent_for_hand_written_memories(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/a.md": md("m-a", "Tax", "Quarterly tax filings are due in April.", tags="[Finance]"),
        "memories/global/b.md": md("m-b", "Mobile", "The mobile app uses React Native.", tags="[finances]",
                                   lifecycle="proven", authority="explicit", proof_count=4,
                                   applied="{used-successfully: 3}"),
    })
    assert kinds(vault.maintain(now=NOW)) == [("tags", "m-b")]
    assert kinds(vault.maintain(now=NOW)) == []
    vault.rollback("m-b")
    assert vault.replay_diff() == []
    assert vault.replay_apply() == []


def test_maintain_marks_the_schedule(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault)
    assert last_maintained(vault.root) is None
    vault.maintain(dry_run=True)
    assert last_maintained(vault.root) is None
    started = now().timestamp()
    vault.maintain()
    stamp = last_maintained(vault.root)
    assert stamp is not None and stamp >= started - 1


def test_maintain_on_an_empty_vault_does_nothing(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault)
    report = vault.maintain(now=NOW)
    assert (report.actions, report.events, report.counts()) == ([], [], {})
    assert list(vault.journal.events()) == []


def test_plain_notes_are_never_governed(make_vault: Callable[..., Vault]) -> None:
    note = "# Deploys\n\nDeploys run from the main branch with make release.\n"
    vault = fake_vault(make_vault, {
        "memories/global/note.md": note,
        "memories/global/deploys.md": md("m-old", "Deploys", DEPLOY, created=at(-300), importance=0.1),
    })
    assert kinds(vault.maintain(now=NOW)) == [("decay", "m-old")]
    assert (vault.root / "memories/global/note.md").read_text(encoding="utf-8") == note


def test_audit_reports_hot_rows_and_the_plan_without_writing(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memvault.toml": "[tiers]\nhot_budget_chars = 1000\n",
        "memories/global/billing.md": md("m-old-state", "Billing", "2026-05-22: migrated the billing database.",
                                         tier="hot", created=at(-10)),
        "memories/global/runner.md": md("m-new-state", "Runner", "2026-05-29: upgraded the runner image.",
                                        tier="hot", created=at(-3)),
        "memories/global/ruff.md": md("m-rule", "Ruff", "Always run ruff before committing.", tier="hot",
                                      created=at(-300)),
        "profile/name.md": md("m-name", "Name", "My name is Ada.", type="core-profile", authority="explicit",
                              tier="hot", created=at(-300)),
    })
    vault.sync()
    before = all_files(vault)
    report = vault.audit(now=NOW)
    assert all_files(vault) == before
    plans = {row.id: row.plan for row in report.hot}
    assert plans["m-old-state"].startswith("move now (state memory 10 days old")
    assert plans["m-new-state"] == "move in 4 days"
    assert plans["m-rule"] == "keep" and plans["m-name"] == "keep"
    rows = {row.id: row for row in report.hot}
    assert (rows["m-name"].protected, rows["m-rule"].protected) == (True, False)
    assert (rows["m-old-state"].nature, rows["m-rule"].nature, rows["m-old-state"].age_days) == ("state", "rule", 10)
    assert report.planned == {"retire": 1}
    assert report.counts == {"catalog": 4, "vectors": 4, "files": 4} and report.counts_ok
    assert report.hot_chars == sum(row.chars for row in report.hot) and report.hot_budget == 1000


def test_audit_sees_an_unfinished_move_as_maintain_does(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/printer.md": md("m-printer", "Printer", "The printer jams on A3.", created=at(-30)),
    })
    shutil.copy(vault.root / "memories/global/printer.md", vault.root / "trash/printer.md")
    trash = vault.root / "trash/printer.md"
    trash.write_text(trash.read_text(encoding="utf-8").replace(
        "\n---\n", f"\ntrashed_at: {at(-1)}\n---\n", 1), encoding="utf-8")
    assert vault.audit(now=NOW).planned == {"repair": 1}


def test_audit_keeps_protected_and_moved_back_states(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/billing.md": md("m-protected", "Billing", "2026-05-01: migrated the billing database.",
                                         tier="hot", importance=0.95, created=at(-10)),
        "memories/global/runner.md": md("m-state", "Runner", "2026-05-20: upgraded the runner image.",
                                        tier="hot", created=at(-10)),
    })
    plans = {row.id: row.plan for row in vault.audit(now=NOW).hot}
    assert plans["m-protected"] == "keep" and plans["m-state"].startswith("move now")
    report = vault.maintain(now=NOW)
    assert kinds(report) == [("retire", "m-state")]
    vault.rollback("m-state")
    plans = {row.id: row.plan for row in vault.audit(now=NOW).hot}
    assert plans == {"m-protected": "keep", "m-state": "keep"}
    assert vault.audit(now=NOW).planned == {}


def test_audit_survives_an_unreadable_vector_index(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {"memories/global/a.md": md("m-a", "Tax", "Quarterly tax filings are due.")})
    vault.sync()
    (vault.root / ".memvault" / "vectors.sqlite").write_bytes(b"not a database at all" * 100)
    report = vault.audit(now=NOW)
    assert report.counts["vectors"] == -1 and report.counts["catalog"] == 1 and not report.counts_ok


def test_rollback_is_refused_once_the_trashed_memory_is_gone(make_vault: Callable[..., Vault]) -> None:
    files, _ = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    merged = vault.maintain(now=NOW)
    assert kinds(merged) == [("merge", "m-old")]
    expired = vault.maintain(now=NOW + timedelta(days=31))
    assert kinds(expired) == [("expire", "m-dup")]
    survivor = (vault.root / "memories/global/deploys.md").read_bytes()
    with pytest.raises(NothingToUndo, match="m-dup to the trash, deleted for good since"):
        vault.rollback(event_id=merged.events[0])
    with pytest.raises(NothingToUndo, match="deleted for good"):
        vault.rollback("m-dup")
    assert (vault.root / "memories/global/deploys.md").read_bytes() == survivor
    assert vault.scan().get("m-old").memory.proof_count == 3


def test_a_long_idle_hot_memory_moved_cold_decays_in_the_same_run(make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memvault.toml": "[tiers]\nhot_budget_chars = 80\n",
        "memories/global/billing.md": md("m-state", "Billing", "2026-05-01: migrated the billing database.",
                                         tier="hot", importance=0.3, created=at(-300)),
        "memories/global/rule.md": md("m-rule", "Ruff", "Always run ruff before committing any Python code.",
                                      tier="hot", importance=0.3, created=at(-300)),
    })
    first = vault.maintain(now=NOW)
    assert kinds(first) == [("retire", "m-state"), ("overflow", "m-rule"), ("decay", "m-rule"),
                            ("decay", "m-state")]
    assert vault.maintain(now=NOW, replan=True).actions == []
    assert sorted(e.memory.id for e in vault.scan().trashed()) == ["m-rule", "m-state"]


# ---------------------------------------------------------------- settled vaults


def test_a_settled_vault_is_not_planned_again_until_a_file_changes(make_vault: Callable[..., Vault]) -> None:
    files, _ = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    first = vault.maintain(now=NOW)
    assert kinds(first) == [("merge", "m-old")] and not first.settled
    second = vault.maintain(now=NOW)
    assert second.settled and second.actions == []
    assert vault.maintain(now=NOW, replan=True).actions == []  # planning in full agrees
    assert vault.maintain(now=NOW, dry_run=True).settled
    (vault.root / "memories/global/deploys-copy.md").write_text(
        md("m-copy", "Deploys", DEPLOY + " Always.", created=at(-1)), encoding="utf-8")
    third = vault.maintain(now=NOW)
    assert not third.settled and kinds(third) == [("merge", "m-old")]
    assert third.actions[0].related == ("m-copy",)


def test_a_settled_vault_never_chooses_a_language_model(make_vault: Callable[..., Vault],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: every `maintain` chose its model first (with an API key, importing its SDK), even
    on a vault it then found settled and left alone."""
    files, _ = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    chosen: list[int] = []
    real = vault.llm
    monkeypatch.setattr(vault, "llm", lambda: chosen.append(1) or real())
    vault.maintain(now=NOW)
    assert chosen == [1]  # work to plan: the model is chosen once
    assert vault.maintain(now=NOW).settled
    assert chosen == [1]  # settled: never chosen


def test_a_settled_vault_is_planned_again_when_the_clock_makes_a_step_due(
        make_vault: Callable[..., Vault]) -> None:
    vault = fake_vault(make_vault, {
        "memories/global/printer.md": md("m-printer", "Printer", "The printer jams on A3.", created=at(-30)),
    })
    vault.forget("m-printer")
    expires = vault.scan().get("m-printer").memory.expires_at
    assert expires is not None
    assert vault.maintain(now=NOW).actions == []
    assert vault.maintain(now=expires - timedelta(hours=1)).settled
    due = vault.maintain(now=expires + timedelta(hours=1))
    assert not due.settled and kinds(due) == [("expire", "m-printer")]


def test_a_rollback_or_a_setting_change_unsettles_the_vault(make_vault: Callable[..., Vault]) -> None:
    files, _ = SCENARIOS["merge"]
    vault = fake_vault(make_vault, files)
    vault.maintain(now=NOW)
    assert vault.maintain(now=NOW).settled
    vault.rollback("m-dup")  # the journal grows: the vault is no longer as the settled run left it
    after_rollback = vault.maintain(now=NOW)
    # The merge stays vetoed; the two are related, so they are linked instead.
    assert not after_rollback.settled and kinds(after_rollback) == [("link", "m-dup"), ("link", "m-old")]
    assert vault.maintain(now=NOW).settled
    (vault.root / "memvault.toml").write_text("[consolidation]\nlink_limit = 1\n", encoding="utf-8")
    assert not Vault(vault.root, embedder=HashEmbedder()).maintain(now=NOW).settled
