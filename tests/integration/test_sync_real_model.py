"""Sync with the real offline model: the vector lane finds a paraphrase with no shared words."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.index.embedder import FastEmbedder
from vault_engine.index.sync import Indexes
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow


def test_paraphrase_is_nearest_in_the_vector_index(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    target = vault.add(NewMemory("The cat sat on the mat.")).id
    vault.add(NewMemory("Quarterly tax filings are due in April."))
    vault.add(NewMemory("Deploys to production happen on Tuesdays."))
    report = vault.sync()
    assert len(report.plan.added) == 3 and report.embedded >= 3
    embedder = FastEmbedder(vault.config.embedding, vault.root / ".memvault" / "models")
    indexes = Indexes(vault.root, embedder)
    query = embedder.embed(["A kitten rested on the rug"])[0]
    hits = indexes.vectors.search(query, limit=3)
    assert hits["summary"][0][0] == target
    assert indexes.fulltext.search("kitten rested rug", 5) == []  # no shared words: BM25 cannot find it
    indexes.close()


def test_sync_command_reports_and_is_idempotent(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    vault.add(NewMemory("Use pytest fixtures, not setUp."))
    runner = CliRunner()
    first = runner.invoke(cli, ["--vault", str(vault.root), "sync", "--json"])
    assert first.exit_code == 0, first.output
    # The summary (derived: the first sentence) is the whole body: one text, embedded once for both lanes
    # (by the model, or earlier: adding it compared it with the vault, which left its vector in the cache).
    report = json.loads(first.output)
    assert report["added"] and report["embedded"] + report["cached"] == 1
    second = runner.invoke(cli, ["--vault", str(vault.root), "sync"])
    assert second.exit_code == 0
    assert "0 added, 0 modified, 0 moved, 0 deleted, 1 unchanged; 0 texts embedded" in second.output
    full = runner.invoke(cli, ["--vault", str(vault.root), "sync", "--full", "--json"])
    # A rebuild takes the vector from the embedding cache: the model embeds nothing.
    assert full.exit_code == 0 and '"embedded": 0' in full.output and '"cached": 1' in full.output
