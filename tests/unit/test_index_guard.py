"""Which schema versions count as newer (index/guard.py): the numbers that end them, with the same text before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vault_engine.index.guard import newer


@pytest.mark.parametrize(("found", "ours", "expected"), [
    ("8", "7", True),
    ("10", "9", True),  # compared as numbers, not as text
    ("7", "7", False),
    ("6", "7", False),
    ("memvault-fulltext-5", "memvault-fulltext-4", True),
    ("memvault-fulltext-3", "memvault-fulltext-4", False),
    ("other-9", "memvault-fulltext-4", False),  # another kind of file: stale, not newer
    ("old", "7", False),
    ("", "7", False),
    (None, "7", False),
])
def test_newer_compares_the_trailing_numbers_of_one_kind(found: str | None, ours: str, expected: bool) -> None:
    assert newer(found, ours) is expected


def _newer_catalog(path: Path) -> None:
    from vault_engine.index.catalog import SCHEMA_VERSION, Catalog

    Catalog(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(int(SCHEMA_VERSION) + 1),))
    db.commit()
    db.close()


def test_a_newer_catalog_tells_a_process_of_the_old_install_to_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine import invocation
    from vault_engine.errors import IndexNewer
    from vault_engine.index.catalog import Catalog

    path = tmp_path / "catalog.sqlite"
    _newer_catalog(path)
    with pytest.raises(IndexNewer, match="rebuild the indexes for this one with `memvault sync --full`"):
        Catalog(path)  # an older install run now: it may downgrade on purpose
    monkeypatch.setattr(invocation, "AT_IMPORT", ((1, 2, 3), (4, 5, 6)))  # installed anew since this process began
    with pytest.raises(IndexNewer, match="upgraded since this process started; restart it"):
        Catalog(path)
