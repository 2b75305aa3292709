"""Generated INDEX.md pages."""

from __future__ import annotations

from collections.abc import Callable

from vault_engine import store
from vault_engine.index.catalog import CatalogRow, row_from_entry
from vault_engine.index.pages import HEADER, write_pages
from vault_engine.vault import NewMemory, Vault


def rows(vault: Vault) -> list[CatalogRow]:
    return [row_from_entry(e, "") for e in store.scan(vault.root).entries.values()]


def test_pages_list_memories_by_scope_project_and_type(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    g = vault.add(NewMemory("Keep commits small and focused.", type="collaboration-policy")).id
    p = vault.add(NewMemory("Staging runs Postgres 16.", project="github.com/acme/api")).id
    old = vault.add(NewMemory("Old rule about tabs.")).id
    vault.correct(old, "New rule: spaces.")
    written = write_pages(vault.root, rows(vault))
    assert written == ["INDEX.md", "memories/projects/github.com-acme-api/INDEX.md"]
    root_page = (vault.root / "INDEX.md").read_text()
    assert root_page.startswith(HEADER)
    assert g in root_page and p not in root_page and old not in root_page  # superseded is history, not listed
    assert "[[memories/projects/github.com-acme-api/INDEX|github.com/acme/api]]" in root_page
    assert "### collaboration-policy (1)" in root_page
    project_page = (vault.root / "memories/projects/github.com-acme-api/INDEX.md").read_text()
    assert p in project_page and "Staging runs Postgres 16" in project_page
    # Pages are not memories, and an unchanged vault rewrites nothing.
    assert all(not e.path.endswith("INDEX.md") for e in rows(vault))
    assert write_pages(vault.root, rows(vault)) == []


def test_a_project_page_without_memories_is_removed(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    p = vault.add(NewMemory("Staging runs Postgres 16.", project="github.com/acme/api")).id
    write_pages(vault.root, rows(vault))
    vault.forget(p)
    written = write_pages(vault.root, rows(vault))
    assert "memories/projects/github.com-acme-api/INDEX.md" in written
    assert not (vault.root / "memories/projects/github.com-acme-api/INDEX.md").exists()
