"""The one write transaction: lock, check, write, journal, then one sync of the touched files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from vault_engine.errors import IndexStale, VaultBusy
from vault_engine.journal import Event
from vault_engine.vault import NewMemory, Vault


class Syncs:
    """Stands in for ``vault.sync``: records each call, and whether the writer lock was free then."""

    def __init__(self, vault: Vault, fail: Exception | None = None):
        self.vault = vault
        self.fail = fail
        self.calls: list[list[str]] = []
        self.lock_free: list[bool] = []

    def __call__(self, *, paths: Iterable[str] | None = None, **_: Any) -> Any:
        self.calls.append(sorted(paths or ()))
        self.lock_free.append(not self.vault.lock.held())
        if self.fail is not None:
            raise self.fail
        return SimpleNamespace(pending=0)  # what the caller reads of the report: nothing waits for vectors


@pytest.fixture
def syncs(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> Syncs:
    vault.auto_sync = True
    recorder = Syncs(vault)
    monkeypatch.setattr(vault, "sync", recorder)
    return recorder


def test_the_writer_lock_is_held_inside_and_released_after(vault: Vault) -> None:
    with vault.transaction():
        assert vault.lock.held()
    assert not vault.lock.held()


def test_a_file_changed_since_it_was_read_is_refused_and_kept(vault: Vault) -> None:
    added = vault.add(NewMemory("Deploys go out on Tuesdays.", title="Deploys"))
    entry = vault.entry(added.id)
    path = vault.root / entry.path
    edited = path.read_text(encoding="utf-8").replace("Tuesdays", "Thursdays")
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(VaultBusy), vault.transaction() as tx:
        tx.write(entry.path, entry.memory.replace(title="Deploys, rewritten"), entry.parsed)
    assert path.read_text(encoding="utf-8") == edited


def test_recorded_events_reach_the_journal(vault: Vault) -> None:
    event = Event("detail", "m-01", {"by": "test"})
    with vault.transaction() as tx:
        assert [e.id for e in tx.record(event)] == [event.id]
        assert tx.record(event) == []  # an id already written is not written twice
    assert [e.id for e in vault.journal.events(("detail",))] == [event.id]


def test_nested_transactions_sync_once_at_the_outermost_end(vault: Vault, syncs: Syncs) -> None:
    with vault.transaction() as outer:
        first = vault.add(NewMemory("Tests use pytest fixtures.", title="Fixtures"))
        assert syncs.calls == []
        with vault.transaction() as inner:
            assert inner is outer
            second = vault.add(NewMemory("Releases are tagged from main.", title="Releases"))
        assert syncs.calls == []
    assert syncs.calls == [sorted([first.path, second.path])]
    assert syncs.lock_free == [True]  # a writer never waits for the indexes


def test_a_batch_syncs_once_without_holding_the_lock_between_its_transactions(vault: Vault, syncs: Syncs) -> None:
    with vault.batch():
        assert not vault.lock.held()
        vault.add(NewMemory("Logs rotate daily.", title="Logs"))
        assert not vault.lock.held()
        vault.add(NewMemory("Backups run at night.", title="Backups"))
    assert len(syncs.calls) == 1 and len(syncs.calls[0]) == 2


def test_a_transaction_without_sync_leaves_the_indexes_alone(vault: Vault, syncs: Syncs) -> None:
    with vault.transaction(sync=False) as tx:
        tx.record(Event("application", "", {"ids": []}))
    assert syncs.calls == []


def test_a_failing_sync_becomes_a_warning_and_the_write_stays(vault: Vault, syncs: Syncs) -> None:
    syncs.fail = IndexStale("the catalog is unreadable")
    added = vault.add(NewMemory("Staging mirrors production.", title="Staging"))
    assert (vault.root / added.path).exists()
    assert vault.index_warning is not None
    assert "search indexes not updated" in vault.index_warning and "the catalog is unreadable" in vault.index_warning


def test_nothing_is_written_or_synced_when_the_body_raises_before_writing(vault: Vault, syncs: Syncs) -> None:
    def files() -> set[Path]:
        return {p for p in vault.root.rglob("*") if p.is_file() and ".memvault" not in p.parts}

    before, events = files(), list(vault.journal.events())
    with pytest.raises(RuntimeError), vault.transaction():
        raise RuntimeError("stopped")
    assert files() == before
    assert list(vault.journal.events()) == events
    assert syncs.calls == []
    assert not vault.lock.held()


def test_a_batch_that_syncs_on_error_syncs_when_it_fails(vault: Vault, syncs: Syncs) -> None:
    with pytest.raises(RuntimeError), vault.batch(sync_on_error=True):
        added = vault.add(NewMemory("Migrations run before deploys.", title="Migrations"))
        raise RuntimeError("the model went away")
    assert syncs.calls == [[added.path]]
