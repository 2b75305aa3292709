"""Colliding ids never displace a valid memory: of several files holding one id, the memory already
indexed keeps it; the newcomers are named by status and audit, never shown, searched or governed in its
place, and ``repair`` gives each an id of its own (journalled, undoable)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_engine import store
from vault_engine.cli import cli
from vault_engine.context.director import TaskRequest, build
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault

FACTS = [
    "The billing service retries failed card charges three times with exponential backoff.",
    "Postgres backups are taken every night at 02:00 UTC and kept for thirty days.",
    "The mobile app reads feature flags from LaunchDarkly at startup only.",
    "Kafka topics for audit events keep messages for ninety days.",
    "The search cluster runs Elasticsearch 8 on three dedicated nodes.",
    "Frontend builds use Vite; the old webpack config is dead code.",
    "Customer emails go out through Postmark, never through SES.",
    "The staging environment is rebuilt from scratch every Sunday night.",
    "API keys for partners are rotated every quarter by the platform team.",
    "Terraform state lives in an S3 bucket with DynamoDB locking.",
    "The data warehouse is Snowflake, loaded hourly by Fivetran.",
    "Mobile releases ship on Thursdays after the QA sign-off meeting.",
    "Log retention in Datadog is fifteen days for debug level logs.",
    "The GraphQL gateway caches persisted queries for one hour.",
    "On-call engineers hand over at 09:00 local time every Monday.",
]
# Where the hand-made copies go: some sort before the original by path, some after, one in the trash.
PLACES = ["memories/global/a-copy.md", "notes/zz-copy.md", "aaa/copy.md", "memories/global/zz-copy.md",
          "memories/projects/x/copy.md", "a.md", "z.md", "memories/aa.md", "b/copy.md", "memories/global/0.md",
          "trash/copy.md", "notes/a.md", "memories/global/m.md", "c.md", "memories/global/b-copy.md"]


def impostor_text(original: str, n: int) -> str:
    """A hand-made file holding the id of memory ``n``: its frontmatter copied, its text another memory's
    (a near-duplicate governance would merge), under another title."""
    head, _, _ = original.partition("\n---\n")
    head = head.replace("title: ", "title: Copied ", 1)
    return f"{head}\n---\n{FACTS[(n + 1) % len(FACTS)]} Impostor number {n}.\n"


@pytest.fixture
def collided(make_vault: Callable[..., Vault]) -> tuple[Vault, list[str], dict[str, str], dict[str, str]]:
    """15 memories, indexed; then 15 hand-made files, each holding one of their ids. Returns the vault,
    the ids, each id's original path and each id's impostor path."""
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    ids = [vault.add(NewMemory(text)).id for text in FACTS]
    scan = store.scan(vault.root)
    originals = {i: scan.entries[i].path for i in ids}
    impostors = {}
    for n, memory_id in enumerate(ids):
        target = vault.root / PLACES[n]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(impostor_text(scan.entries[memory_id].parsed.text, n), encoding="utf-8")
        impostors[memory_id] = PLACES[n]
    vault = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())  # a later process
    vault.sync()
    return vault, ids, originals, impostors


def test_the_originals_stay_what_show_search_and_context_give(collided: tuple[Vault, list[str], dict[str, str],
                                                                              dict[str, str]]) -> None:
    vault, ids, originals, _ = collided
    for n, memory_id in enumerate(ids):
        assert vault.find(memory_id).path == originals[memory_id]  # show
        assert vault.entry(memory_id).memory.title.startswith("Copied") is False
        assert vault.scan().entries[memory_id].path == originals[memory_id]
        hits = vault.search(SearchQuery(FACTS[n], limit=5, weak=True)).hits
        assert hits and hits[0].id == memory_id and hits[0].path == originals[memory_id]
    for n in range(len(FACTS)):
        hits = vault.search(SearchQuery(f"Impostor number {n}", limit=20, weak=True)).hits
        assert all(h.path == originals[h.id] and not h.title.startswith("Copied") for h in hits)
    for n, memory_id in enumerate(ids):
        delivered = build(vault, TaskRequest(FACTS[n]), record=False).to_json()
        given = {item["id"]: item for item in delivered["resident"] + delivered["manifest"]}
        assert memory_id in given and not given[memory_id]["title"].startswith("Copied")
        assert all(not item["title"].startswith("Copied") for item in given.values())


def test_status_and_audit_name_each_newcomer(collided: tuple[Vault, list[str], dict[str, str],
                                                             dict[str, str]]) -> None:
    vault, ids, originals, impostors = collided
    expected = sorted(f"{impostors[i]}: duplicate id {i} (also in {originals[i]}); this copy is ignored "
                      "(`memvault repair` gives it an id of its own)" for i in ids)
    assert sorted(vault.status().invalid) == expected
    assert sorted(vault.audit().invalid) == expected
    assert sorted(p.one_line() for p in vault.sync(full=True).problems) == expected


def test_maintain_governs_the_originals_and_never_a_newcomer(collided: tuple[Vault, list[str], dict[str, str],
                                                                            dict[str, str]]) -> None:
    vault, ids, originals, impostors = collided
    before = {path: (vault.root / path).read_bytes() for path in impostors.values()}
    report = vault.maintain()
    assert report.actions  # it had work to do, on the originals alone
    scan = vault.scan()
    assert all(scan.entries[i].path == originals[i] for i in ids)
    current = {e.memory.id for e in scan.active()}
    assert not [e.path for e in store.scan(vault.root).trashed() if e.memory.id in current]  # none current and trashed
    for path, data in before.items():  # a newcomer is never governed: its file is as it was made
        assert (vault.root / path).read_bytes() == data, path
    assert all(action.kind != "repair" for action in report.actions)  # a newcomer is no leftover of a move


def test_repair_gives_each_newcomer_an_id_of_its_own_and_rollback_takes_it_back(
        collided: tuple[Vault, list[str], dict[str, str], dict[str, str]]) -> None:
    vault, ids, originals, impostors = collided
    planned = vault.repair(dry_run=True)
    assert sorted((r.path, r.old, r.kept) for r in planned) == sorted((impostors[i], i, originals[i]) for i in ids)
    assert vault.status().invalid  # a dry run changes nothing
    done = vault.repair()
    assert len(done) == len(ids) and vault.status().invalid == []
    events = [e for e in vault.journal.events() if e.kind == "reid"]
    assert sorted((e.payload["from"], e.memory) for e in events) == sorted((r.old, r.new) for r in done)
    scan = store.scan(vault.root)
    for item in done:
        assert scan.entries[item.old].path == originals[item.old]
        assert scan.entries[item.new].path == item.path and scan.entries[item.new].memory.title.startswith("Copied")
    n = ids.index(done[0].old)
    hits = vault.search(SearchQuery(f"Impostor number {n}", limit=5, weak=True,
                                      trust=("system", "learned", "external"))).hits
    assert done[0].new in [h.id for h in hits]  # now searched as the memory it is
    assert vault.repair() == []  # nothing left to repair
    undone = vault.rollback(done[0].new)
    assert undone.id == done[0].old and undone.path == done[0].path
    assert store.scan(vault.root).entries[done[0].old].path == originals[done[0].old]  # the original keeps it
    assert [r.path for r in vault.repair(dry_run=True)] == [done[0].path]


def test_without_an_index_the_older_file_named_for_its_id_keeps_it(
        collided: tuple[Vault, list[str], dict[str, str], dict[str, str]]) -> None:
    vault, ids, originals, _ = collided
    shutil.rmtree(vault.root / store.STATE_DIR)
    fresh = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    assert all(fresh.scan().entries[i].path == originals[i] for i in ids)
    fresh.sync()
    assert all(fresh.find(i).path == originals[i] for i in ids)


def test_a_restore_cut_short_is_finished_by_the_copy_outside_the_trash(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    memory_id = vault.add(NewMemory("The VPN config lives in the infra repository.")).id
    vault.forget(memory_id)
    trashed = vault.entry(memory_id)
    # The restore wrote the copy outside the trash, then a crash kept it from removing the trashed one.
    later = trashed.memory.updated + timedelta(seconds=1) if trashed.memory.updated else None
    restored = trashed.memory.replace(trashed_at=None, expires_at=None, trashed_from=None, updated=later,
                                      extra={k: v for k, v in trashed.memory.extra.items() if k != "trash_reason"})
    store.write(vault.root, "memories/global/vpn.md", restored)
    assert vault.scan().entries[memory_id].path == "memories/global/vpn.md"
    assert vault.repair(dry_run=True) == []  # the same memory twice: maintain's repair, not a newcomer
    vault.maintain()
    assert store.scan(vault.root).entries[memory_id].path == "memories/global/vpn.md"
    assert not (vault.root / trashed.path).exists()


def test_the_command_line_names_and_repairs_the_newcomers(
        collided: tuple[Vault, list[str], dict[str, str], dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, ids, originals, impostors = collided
    monkeypatch.setattr(Vault, "embedder", lambda self: HashEmbedder())
    runner = CliRunner()

    def run(*args: str) -> str:
        done = runner.invoke(cli, ["--vault", str(vault.root), *args])
        assert done.exit_code == 0, done.stderr
        return done.stdout

    shown = json.loads(run("show", ids[0], "--json"))
    assert shown["path"] == originals[ids[0]]
    status = run("status")
    assert all(impostors[i] in status for i in ids)
    planned = json.loads(run("repair", "--dry-run", "--json"))
    assert planned["dry_run"] is True and len(planned["repaired"]) == len(ids)
    assert f"{impostors[ids[0]]}: {ids[0]} -> " in run("repair")
    assert "invalid:   0 files" in run("status")
    assert Path(vault.root / impostors[ids[0]]).read_text().count(ids[0]) == 0


def test_a_copy_the_files_alone_cannot_tell_apart_loses_by_the_journal_and_across_a_rebuild(
        make_vault: Callable[..., Vault]) -> None:
    """A copy named as memvault names files, with the original's date, sorting first by path: without an index
    the journal's record of the title and text decides; ``sync --full`` keeps the copy that was indexed."""
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    memory_id = vault.add(NewMemory("Invoices are generated on the first business day of the month.")).id
    original = vault.entry(memory_id)
    copy = original.memory.replace(title="Copied invoices", body="Something else entirely.\n")
    rel = f"aaa/copied-{memory_id[-6:]}.md"
    store.write(vault.root, rel, copy)
    assert store.scan(vault.root).entries[memory_id].path == rel  # the files alone: the first by path
    assert vault.scan().entries[memory_id].path == original.path  # the index
    vault.sync(full=True)
    assert vault.find(memory_id).path == original.path
    shutil.rmtree(vault.root / store.STATE_DIR)
    fresh = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    assert fresh.scan().entries[memory_id].path == original.path  # the journal
    fresh.sync()
    assert fresh.find(memory_id).path == original.path
    same = original.memory.replace(body=original.memory.body)  # the same memory twice: told apart by name
    store.write(vault.root, "zzz/again.md", same)
    assert "the same memory: `memvault maintain` removes it" in "\n".join(fresh.status().invalid)
