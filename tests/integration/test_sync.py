"""Sync against real files, the real Tantivy index and SQLite vectors (fake embedder for speed)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.index.derived import embedding_texts, gist
from vault_engine.index.disk import FINE_RACY_NS
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.sync import Indexes, sync
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            info = path.stat()
            out[str(path.relative_to(root))] = (info.st_mtime_ns, info.st_size)
    return out


@pytest.fixture
def filled(make_vault: Callable[..., Vault]) -> Vault:
    vault = make_vault()
    vault.add(NewMemory("Tests use pytest fixtures from conftest.py, never setUp.", tags=("testing",)))
    vault.add(NewMemory("Staging runs Postgres 16 with pgvector.", project="github.com/acme/api"))
    vault.add(NewMemory("The client fails with ERR_CONN_RESET under heavy load.", trigger="When I debug resets"))
    return vault


def test_a_text_several_lanes_hold_is_embedded_once(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    # Summary and body are the same text; the two turns of the same words share it too.
    vault.add(NewMemory("Deploys run at noon.", summary="Deploys run at noon."))
    vault.add(NewMemory("Rollbacks take one command and a minute.", title="Rollbacks"))
    fake = HashEmbedder()
    indexes = Indexes(vault.root, fake)
    report = sync(vault.root, indexes)
    entries = vault.scan().entries.values()
    lanes = [text for entry in entries for _, _, text in embedding_texts(entry.memory, fake)]
    assert len(lanes) > len(set(lanes))  # some lanes repeat a text
    assert report.embedded == fake.calls == len(set(lanes))
    deploys = next(e.memory.id for e in entries if e.memory.title.startswith("Deploys"))
    summary, body = indexes.vectors.vector(deploys, "summary"), indexes.vectors.vector(deploys, "body")
    assert summary is not None and body is not None and (summary == body).all()


def test_first_sync_indexes_everything_and_second_does_nothing(filled: Vault) -> None:
    # A file written in the last clock tick is recorded as racy and checked by its bytes by the next sync,
    # which then records it as settled (index/disk.py): let the tick pass first.
    time.sleep(2 * FINE_RACY_NS / 1e9)
    fake = HashEmbedder()
    indexes = Indexes(filled.root, fake)
    report = sync(filled.root, indexes)
    assert len(report.plan.added) == 3 and report.embedded > 0
    assert indexes.fulltext.count() == 3
    assert [h.id for h in indexes.fulltext.search("ERR_CONN_RESET", 5)]
    calls = fake.calls
    before = _snapshot(filled.root)
    again = sync(filled.root, indexes)
    assert again.plan.empty and again.plan.unchanged == 3
    assert again.parsed == 0 and again.embedded == 0 and fake.calls == calls
    assert _snapshot(filled.root) == before  # nothing written, not even the state files
    indexes.close()


def test_edit_move_delete_are_applied(filled: Vault) -> None:
    fake = HashEmbedder()
    indexes = Indexes(filled.root, fake)
    sync(filled.root, indexes)
    entries, _ = filled.list()
    edited, moved, deleted = entries[0], entries[1], entries[2]
    path = filled.root / edited.path
    path.write_text(path.read_text().replace(edited.memory.body, "Completely new words about kubernetes.\n"))
    target = filled.root / "memories" / "renamed.md"
    (filled.root / moved.path).rename(target)
    (filled.root / deleted.path).unlink()
    report = sync(filled.root, indexes)
    assert report.plan.modified == (edited.memory.id,)
    assert report.plan.moved == (moved.memory.id,)
    assert report.plan.deleted == (deleted.memory.id,)
    assert [h.id for h in indexes.fulltext.search("kubernetes", 5)] == [edited.memory.id]
    assert indexes.fulltext.records()[moved.memory.id][0] == "memories/renamed.md"
    assert deleted.memory.id not in indexes.vectors.hashes()
    indexes.close()


def test_counter_only_change_reindexes_text_but_does_not_re_embed(filled: Vault) -> None:
    fake = HashEmbedder()
    indexes = Indexes(filled.root, fake)
    sync(filled.root, indexes)
    entry = filled.list()[0][0]
    path = filled.root / entry.path
    path.write_text(path.read_text().replace("importance: 0.5", "importance: 0.7"))
    calls = fake.calls
    report = sync(filled.root, indexes)
    assert report.plan.modified == (entry.memory.id,)
    assert fake.calls == calls
    indexes.close()


@pytest.mark.parametrize("damage", ["delete", "garble"])
def test_a_missing_or_corrupt_state_folder_is_rebuilt(filled: Vault, damage: str) -> None:
    indexes = Indexes(filled.root, HashEmbedder())
    sync(filled.root, indexes)
    indexes.close()
    state = filled.root / STATE_DIR
    if damage == "delete":
        shutil.rmtree(state)
    else:
        for path in state.rglob("*"):
            if path.is_file():
                path.write_bytes(b"\x00garbage" * 64)
    fresh = Indexes(filled.root, HashEmbedder())
    report = sync(filled.root, fresh)
    assert fresh.fulltext.count() == 3
    assert len(fresh.vectors.hashes()) == 3
    if damage == "garble":
        assert report.notice is not None and "rebuilt" in report.notice
    fresh.close()


def test_bad_files_are_reported_and_the_rest_indexed(filled: Vault) -> None:
    (filled.root / "memories" / "broken.md").write_text("---\nid: m-x\ntitle: [oops\ntype: fact\n---\nbody\n")
    indexes = Indexes(filled.root, HashEmbedder())
    report = sync(filled.root, indexes)
    assert indexes.fulltext.count() == 3
    assert [p.path for p in report.problems] == ["memories/broken.md"]
    indexes.close()


def test_status_tells_current_from_stale(filled: Vault) -> None:
    from vault_engine.index.sync import freshness

    assert freshness(filled.root)[0] == "missing"
    assert freshness(filled.root)[1].startswith("not built")
    filled.sync(embedder=HashEmbedder())
    assert freshness(filled.root) == ("current", "current (3 files indexed)")
    assert filled.status().index == "current (3 files indexed)"
    # A memory's file, not a folder's INDEX.md page (the listing's order is the file system's)
    path = next(p for p in sorted(filled.root.glob("memories/**/*.md")) if p.name != "INDEX.md")
    path.write_text(path.read_text() + "\nOne more line.\n")
    assert freshness(filled.root)[0] == "stale"
    assert freshness(filled.root)[1].startswith("stale: 0 added, 1 modified")
    (filled.root / STATE_DIR / "catalog.sqlite").write_bytes(b"garbage" * 200)
    assert freshness(filled.root)[0] == "unreadable"


def test_progress_is_reported_and_vectors_keep_their_order(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    texts = [f"Memory {n} " + "word " * (n % 7 * 40) for n in range(30)]
    vault.import_jsonl([f'{{"title": "T{n}", "body": "{t}"}}' for n, t in enumerate(texts)])
    calls: list[tuple[int, int]] = []
    fake = HashEmbedder()
    Vault(vault.root, embedder=fake, progress=lambda done, total: calls.append((done, total))).sync()
    assert calls and calls[-1][0] == calls[-1][1] and all(d <= t for d, t in calls)
    indexes = Indexes(vault.root, fake)
    for entry in vault.scan().entries.values():
        expected = fake.embed([gist(entry.memory)])[0]  # what the summary lane reads
        assert indexes.vectors.vector(entry.memory.id, "summary") == pytest.approx(expected)
    indexes.close()


def test_a_targeted_sync_reads_only_the_given_paths(filled: Vault) -> None:
    fake = HashEmbedder()
    filled.sync(embedder=fake)
    entries = sorted(filled.scan().entries.values(), key=lambda e: e.path)
    first, second = entries[0], entries[1]
    # A hand edit elsewhere is left for a later full sync; the given path is indexed alone.
    (filled.root / second.path).write_text((filled.root / second.path).read_text() + "\nHand edit.\n")
    (filled.root / first.path).write_text((filled.root / first.path).read_text() + "\nZyzzyva appended.\n")
    report = filled.sync(embedder=fake, paths=[first.path])
    assert report.plan.modified == (first.memory.id,) and report.parsed == 1
    assert filled.sync(embedder=fake).plan.modified == (second.memory.id,)

    # Move: the old and the new path both changed.
    moved = "memories/global/moved-by-hand.md"
    (filled.root / first.path).rename(filled.root / moved)
    report = filled.sync(embedder=fake, paths=[first.path, moved])
    assert report.plan.moved == (first.memory.id,) and report.embedded == 0

    # Delete: the path is gone.
    (filled.root / moved).unlink()
    report = filled.sync(embedder=fake, paths=[moved])
    assert report.plan.deleted == (first.memory.id,)

    # A copy of a file (same id at a second path) is reported as a duplicate, and the
    # targeted sync keeps the same one of the two a full walk keeps.
    copy = "memories/global/copy.md"
    (filled.root / copy).write_text((filled.root / second.path).read_text())
    report = filled.sync(embedder=fake, paths=[copy])
    assert any("copy.md" in p.one_line() for p in report.problems)
    full = filled.sync(embedder=fake)
    assert full.plan.empty and any("copy.md" in p.one_line() for p in full.problems)
    # Paths that are not memories are ignored.
    assert filled.sync(embedder=fake, paths=["INDEX.md", ".memvault/lock", "../etc/passwd.md"]).plan.empty


def test_a_write_syncs_just_what_it_wrote(make_vault: Callable[..., Vault]) -> None:
    fake = HashEmbedder()
    vault = Vault(make_vault().root, auto_sync=True, embedder=fake)
    first = vault.add(NewMemory("Alpha memory about caching.")).id
    assert vault.last_sync is not None and vault.last_sync.plan.added == (first,)
    second = vault.add(NewMemory("Beta memory about queues."))
    assert vault.last_sync.plan.added == (second.id,) and vault.last_sync.parsed == 1
    forgotten = vault.forget(first)
    assert vault.last_sync.plan.modified == (first,) and forgotten.path.startswith("trash/")


def test_index_pages_are_rewritten_only_when_what_they_list_changes(filled: Vault) -> None:
    fake = HashEmbedder()
    filled.sync(embedder=fake)
    page = filled.root / "INDEX.md"
    stamp = page.stat().st_mtime_ns
    entry = next(e for e in filled.scan().entries.values() if "ERR_CONN_RESET" in e.memory.body)
    path = filled.root / entry.path
    path.write_text(path.read_text().rstrip("\n") + "\nMore detail in the body only.\n")
    assert filled.sync(embedder=fake).plan.modified == (entry.memory.id,)
    assert page.stat().st_mtime_ns == stamp
    path.write_text(path.read_text().replace(f"title: {entry.memory.title}", "title: Connection resets"))
    filled.sync(embedder=fake)
    assert "Connection resets" in page.read_text()


def test_a_stale_catalog_alone_is_rebuilt_without_re_embedding(filled: Vault) -> None:
    import sqlite3

    fake = HashEmbedder()
    filled.sync(embedder=fake)
    calls = fake.calls
    db = sqlite3.connect(filled.root / STATE_DIR / "catalog.sqlite")
    db.execute("UPDATE meta SET value = 'old' WHERE key = 'version'")
    db.commit()
    db.close()
    report = filled.sync(embedder=fake)
    assert report.notice and "catalog" in report.notice
    assert len(report.plan.added) == 3 and report.embedded == 0 and fake.calls == calls
    assert filled.sync(embedder=fake).plan.empty


def _write_newer_catalog(vault: Vault) -> None:
    import sqlite3

    from vault_engine.index.catalog import SCHEMA_VERSION

    db = sqlite3.connect(vault.root / STATE_DIR / "catalog.sqlite")
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(int(SCHEMA_VERSION) + 1),))
    db.commit()
    db.close()


def test_a_catalog_a_newer_memvault_wrote_is_refused_not_rebuilt(filled: Vault) -> None:
    from vault_engine.errors import IndexNewer

    fake = HashEmbedder()
    filled.sync(embedder=fake)
    _write_newer_catalog(filled)
    catalog = filled.root / STATE_DIR / "catalog.sqlite"
    before = catalog.read_bytes()
    with pytest.raises(IndexNewer, match=r"catalog was written by a newer memvault .*memvault sync --full"):
        filled.sync(embedder=fake)
    assert catalog.read_bytes() == before  # left for the newer memvault, which reads it as it was
    report = filled.sync(embedder=fake, full=True)  # on purpose: rebuilt for this one
    assert report.notice and "newer memvault" in report.notice and fake.calls > 0
    assert filled.sync(embedder=fake).plan.empty


def test_status_says_a_newer_memvault_wrote_the_indexes(filled: Vault) -> None:
    from vault_engine.index.sync import freshness

    filled.sync(embedder=HashEmbedder())
    _write_newer_catalog(filled)
    state, sentence = freshness(filled.root)
    assert state == "unreadable" and "newer memvault" in sentence and "sync --full" in sentence
