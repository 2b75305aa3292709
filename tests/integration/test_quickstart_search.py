"""The quick-start vault (the template and scripts/examples.jsonl, as scripts/run.sh makes it) with
the real model and indexes: the search run.sh shows ranks as its lanes agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import create_vault
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_the_memory_every_lane_ranks_first_stays_first_in_the_quick_start_search(tmp_path: Path) -> None:
    create_vault(tmp_path / "vault", git=False)
    vault = Vault(tmp_path / "vault", auto_sync=True)
    assert not vault.import_jsonl((REPO / "scripts" / "examples.jsonl").read_text(encoding="utf-8").splitlines()).errors
    hits = vault.search(SearchQuery("how do we check changes before committing", limit=2)).hits
    assert [h.title for h in hits] == ["Run the tests before proposing a commit", "Review checklist"]
    first, second = hits
    assert all(rank == 1 for rank in first.lanes.values())
    # The checklist covers more of the query's words, but every lane ranks the test rule higher.
    assert second.rerank["terms"] > first.rerank["terms"] and second.rerank["unanimous"] < 1
    assert "held below the memory every lane ranks first" in next(w for w in second.why if w.startswith("re-ranked:"))
