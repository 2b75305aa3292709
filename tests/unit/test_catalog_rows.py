"""Catalog rows: the memory holding a memory's content now, and the length of its body, kept in sqlite."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.format.memory import Memory
from vault_engine.index.catalog import Catalog, row_from_memory, successor

BASE = Memory(id="m-a", title="Deploys run from main", type="fact")


@pytest.mark.parametrize(("memory", "expected"), [
    (BASE, ""),
    (BASE.replace(extra={"merged_into": "m-b"}), "m-b"),  # governance merged it
    (BASE.replace(extra={"compacted_into": "m-digest"}), "m-digest"),  # a turn compacted into an episode
    (BASE.replace(lifecycle="superseded", superseded_by="m-c"), "m-c"),  # a correction superseded it
    (BASE.replace(extra={"merged_into": "m-b"}, superseded_by="m-c"), "m-b"),
    (BASE.replace(extra={"merged_into": ["not", "an", "id"]}), ""),  # hand-edited nonsense names nothing
])
def test_the_successor_is_the_memory_holding_its_content_now(memory: Memory, expected: str) -> None:
    assert successor(memory) == expected


def test_the_successor_is_kept_in_the_catalog(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    merged = BASE.replace(extra={"merged_into": "m-b"})
    catalog.apply([row_from_memory(merged, "trash/a.md", "h", trashed=True)], [])
    row = catalog.get(["m-a"])["m-a"]
    assert row.successor == "m-b" and row.in_trash
    catalog.close()


def test_the_length_of_the_body_is_kept_in_the_catalog(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    long = BASE.replace(body="Deploys run from main after review. " * 50)
    catalog.apply([row_from_memory(long, "memories/a.md", "h", trashed=False)], [])
    assert catalog.get(["m-a"])["m-a"].chars == len(long.body) == 1800
    catalog.close()
