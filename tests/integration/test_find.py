"""Vault.find and Vault.links_of: readers skip the vault scan, and a stale catalog never gives a wrong answer."""

from __future__ import annotations

import shutil

import pytest

from vault_engine.errors import InvalidInput, MemoryNotFound
from vault_engine.index.fakes import HashEmbedder
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault


@pytest.fixture
def linked(vault: Vault) -> tuple[Vault, str, str]:
    warm = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    target = warm.add(NewMemory("Releases are cut from main every Tuesday.", title="Release day"))
    source = warm.add(NewMemory("Before a release, freeze merges for an hour.", title="Merge freeze"))
    path = warm.root / source.path
    path.write_text(path.read_text().replace("links: []", "links: ['[[release-day]]', 'Release day', '[[nowhere]]']")
                    if "links: []" in path.read_text() else path.read_text().replace(
                        "\n---\n", "\nlinks: ['[[release-day]]', 'Release day', '[[nowhere]]']\n---\n", 1))
    warm.sync()
    return warm, source.id, target.id


def test_find_reads_the_file_the_catalog_names(linked: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    vault, source, _ = linked
    monkeypatch.setattr(vault, "scan", lambda: pytest.fail("find scanned the vault"))
    assert vault.find(source).memory.title == "Merge freeze"


def test_find_falls_back_to_a_scan_when_the_catalog_is_stale(linked: tuple[Vault, str, str]) -> None:
    vault, source, _ = linked
    old = vault.root / vault.find(source).path
    moved = old.with_name("renamed-by-hand.md")
    shutil.move(old, moved)  # not synced: the catalog still names the old path
    assert vault.find(source).path.endswith("renamed-by-hand.md")
    shutil.rmtree(vault.root / STATE_DIR)  # no catalog at all
    assert vault.find(source).memory.id == source


def test_find_errors_like_entry(linked: tuple[Vault, str, str]) -> None:
    vault, _, _ = linked
    with pytest.raises(MemoryNotFound):
        vault.find("m-00000000000000000000000000")
    with pytest.raises(InvalidInput):
        vault.find("../etc/passwd")


def test_links_of_agrees_with_the_scan(linked: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, source, target = linked
    memory = vault.find(source).memory
    assert memory.links == ("[[release-day]]", "Release day", "[[nowhere]]")
    expected = vault.resolve_links(memory, vault.scan())
    assert [link["id"] for link in expected] == [target, target, None]
    assert vault.links_of(memory) == expected


def test_links_of_checks_the_targets_on_disk(linked: tuple[Vault, str, str]) -> None:
    vault, source, target = linked
    target_file = vault.root / vault.find(target).path
    target_file.unlink()  # not synced: the catalog still resolves the links to it
    links = vault.links_of(vault.find(source).memory)
    assert [link["id"] for link in links] == [None, None, None]


def test_links_that_all_resolve_need_no_scan(linked: tuple[Vault, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    vault, source, target = linked
    memory = vault.find(source).memory.replace(links=("[[release-day]]", "Release day"))
    monkeypatch.setattr(vault, "scan", lambda: pytest.fail("links_of scanned the vault"))
    assert vault.links_of(memory) == [{"link": "[[release-day]]", "id": target}, {"link": "Release day", "id": target}]
