"""The check every read makes: what changed on disk since the last sync (real files, the hash embedder)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine import store
from vault_engine.index import disk
from vault_engine.index.disk import STAT_CACHE, load_stat_cache
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.freshness import changes
from vault_engine.index.sync import freshness
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import NewMemory, Vault


@pytest.fixture
def synced(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    vault = Vault(make_vault().root, embedder=HashEmbedder(), auto_sync=True)
    made = {text: vault.add(NewMemory(text)).id for text in ("Alpha ships on Monday.", "Beta ships on Friday.")}
    return vault, made


def _path(vault: Vault, memory_id: str) -> Path:
    return vault.root / vault.find(memory_id).path


def _age(path: Path, seconds: int = 60) -> None:
    """Move a file's times back, as if it was last changed a while ago."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns - seconds * 10**9, info.st_mtime_ns - seconds * 10**9))


def test_an_unchanged_vault_has_no_changes_and_racy_stats_settle(synced: tuple[Vault, dict[str, str]]) -> None:
    vault, _made = synced
    first = changes(vault.root)
    # Files written in the tick of the sync that recorded them are read again once, never reported changed.
    assert first.empty
    assert changes(vault.root).empty


def test_a_same_size_edit_that_keeps_the_mtime_is_found(synced: tuple[Vault, dict[str, str]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: the stat cache compared mtime and size only; an edit that kept both (a tool that
    restores the mtime, or one in the same clock tick) was never indexed, not even by `memvault sync`."""
    vault, made = synced
    path = _path(vault, made["Alpha ships on Monday."])
    later = disk.time.time_ns() + 10 * disk.RACY_NS
    with monkeypatch.context() as clock:  # recorded well after the files changed: not racy, trusted by stat
        clock.setattr(disk.time, "time_ns", lambda: later)
        vault.sync(full=True)
    rel = path.relative_to(vault.root).as_posix()
    assert load_stat_cache(vault.root / store.STATE_DIR / STAT_CACHE)[rel][5] == path.stat().st_ctime_ns
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Monday", "Sunday"), encoding="utf-8")  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert changes(vault.root).paths == (path.relative_to(vault.root).as_posix(),)
    assert freshness(vault.root)[0] == "stale"
    hits = Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("Sunday")).hits
    assert hits[0].id == made["Alpha ships on Monday."] and "fts" in hits[0].lanes


def test_a_stat_recorded_in_the_tick_of_the_edit_is_checked_by_its_bytes(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "note.md"
    path.write_text("one", encoding="utf-8")
    info = path.stat()
    racy = disk.stat_entry(info, "d", "id")
    assert racy[5] == 0 and not disk.unchanged(racy, info)  # read again next time
    window = disk.RACY_NS if info.st_ctime_ns % 10**9 == 0 else disk.FINE_RACY_NS
    monkeypatch.setattr(disk.time, "time_ns", lambda: max(info.st_mtime_ns, info.st_ctime_ns) + window + 1)
    settled = disk.stat_entry(info, "d", "id")
    assert settled[5] == info.st_ctime_ns and disk.unchanged(settled, info)


def test_added_deleted_and_renamed_files_are_changes(synced: tuple[Vault, dict[str, str]]) -> None:
    vault, made = synced
    alpha = _path(vault, made["Alpha ships on Monday."])
    beta = _path(vault, made["Beta ships on Friday."])
    alpha.unlink()
    moved = beta.with_name("beta-moved.md")
    os.rename(beta, moved)
    (vault.root / "memories" / "global" / "new-note.md").write_text("# New\n\nGamma.\n", encoding="utf-8")
    rel = {p: p.relative_to(vault.root).as_posix() for p in (alpha, beta, moved)}
    assert set(changes(vault.root).paths) == {rel[alpha], rel[beta], rel[moved], "memories/global/new-note.md"}
    result = Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("ships"))
    paths = {hit.id: hit.path for hit in result.hits}
    assert paths[made["Beta ships on Friday."]] == rel[moved] and made["Alpha ships on Monday."] not in paths
    assert "memories/global/new-note.md" in paths.values()
    assert changes(vault.root).empty


def test_a_file_touched_but_unchanged_is_settled_without_a_sync(synced: tuple[Vault, dict[str, str]]) -> None:
    vault, made = synced
    path = _path(vault, made["Beta ships on Friday."])
    _age(path)
    found = changes(vault.root)
    assert found.empty and path.relative_to(vault.root).as_posix() in found.settled
    catalog = vault.root / store.STATE_DIR / "catalog.sqlite"
    stamp = catalog.stat().st_mtime_ns
    Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("ships"))
    assert catalog.stat().st_mtime_ns == stamp  # no sync
    recorded = load_stat_cache(vault.root / store.STATE_DIR / STAT_CACHE)
    assert recorded[path.relative_to(vault.root).as_posix()][0] == path.stat().st_mtime_ns
    assert not changes(vault.root).settled


def test_a_stat_cache_of_an_older_release_is_read_once_more(synced: tuple[Vault, dict[str, str]]) -> None:
    vault, _made = synced
    cache = vault.root / store.STATE_DIR / STAT_CACHE
    entries = json.loads(cache.read_text())
    cache.write_text(json.dumps({rel: entry[:4] for rel, entry in entries.items()}))
    assert set(load_stat_cache(cache)) == set(entries)  # kept, not dropped
    found = changes(vault.root)
    assert found.empty and set(found.settled) == set(entries)


def test_an_invalid_file_is_read_by_one_sync_then_passed_by_until_it_changes(
        synced: tuple[Vault, dict[str, str]]) -> None:
    """Regression: a file sync refuses left no record, so every read found it new and synced it again."""
    vault, _made = synced
    broken = vault.root / "memories" / "global" / "broken.md"
    broken.write_text("---\nid: m-01broken\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    assert changes(vault.root).paths == ("memories/global/broken.md",)
    report = vault.sync()
    assert [p.path for p in report.problems] == ["memories/global/broken.md"]
    assert changes(vault.root).empty  # recorded: the next reads do not sync it again
    assert [p.path for p in vault.sync().problems] == ["memories/global/broken.md"]  # still reported
    assert freshness(vault.root)[0] == "current"
    broken.write_text("# Mended\n\nThe broken note was mended.\n", encoding="utf-8")
    assert changes(vault.root).paths == ("memories/global/broken.md",)
    hits = Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("mended")).hits
    assert hits[0].path == "memories/global/broken.md"
