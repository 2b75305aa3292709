"""Which schema versions count as newer (index/guard.py): the numbers that end them, with the same text before."""

from __future__ import annotations

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
