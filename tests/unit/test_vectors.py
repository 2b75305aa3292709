"""The persistent vector store (real SQLite, deterministic fake vectors)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vault_engine.errors import IndexStale
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.vectors import VectorRow, VectorStore


def _rows(fake: HashEmbedder, summary: str, body: str) -> list[VectorRow]:
    vectors = fake.embed([summary, body])
    return [VectorRow("summary", 0, vectors[0]), VectorRow("body", 0, vectors[1])]


def test_put_search_and_persist(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=64)
    path = tmp_path / "vectors.sqlite"
    store = VectorStore(path, fake.name, fake.dim)
    store.put_many([
        ("m-a", "h1", _rows(fake, "pytest fixtures", "use fixtures from conftest")),
        ("m-b", "h2", _rows(fake, "postgres staging", "staging runs postgres sixteen")),
    ])
    hits = store.search(fake.embed(["postgres staging"])[0], limit=2)
    assert hits["summary"][0][0] == "m-b"
    assert hits["summary"][0][1] == pytest.approx(1.0, abs=1e-5)
    assert hits["trigger"] == []
    store.close()
    reopened = VectorStore(path, fake.name, fake.dim)
    assert reopened.hashes() == {"m-a": "h1", "m-b": "h2"}
    assert reopened.search(fake.embed(["conftest fixtures"])[0], limit=1)["body"][0][0] == "m-a"


def test_replace_and_delete_keep_one_copy(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=32)
    store = VectorStore(tmp_path / "v.sqlite", fake.name, fake.dim)
    store.put_many([("m-a", "h1", _rows(fake, "one", "two"))])
    store.put_many([("m-a", "h2", _rows(fake, "three", "four"))])
    assert store.count() == 2
    assert store.hashes() == {"m-a": "h2"}
    store.delete(["m-a"])
    assert store.count() == 0
    assert store.search(fake.embed(["three"])[0], limit=3)["summary"] == []


def test_best_chunk_counts_once_per_memory(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=64)
    store = VectorStore(tmp_path / "v.sqlite", fake.name, fake.dim)
    chunks = fake.embed(["alpha", "beta", "gamma"])
    store.put_many([("m-a", "h", [VectorRow("body", i, chunks[i]) for i in range(3)])])
    other = fake.embed(["delta"])[0]
    store.put_many([("m-b", "h", [VectorRow("body", 0, other)])])
    hits = store.search(fake.embed(["beta"])[0], limit=5)["body"]
    assert [memory for memory, _ in hits] == ["m-a", "m-b"]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_model_mismatch_and_garbage_are_stale(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    VectorStore(path, "model-a", 8).close()
    with pytest.raises(IndexStale, match="model-a"):
        VectorStore(path, "model-b", 8)
    garbage = tmp_path / "g.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    with pytest.raises(IndexStale):
        VectorStore(garbage, "model-a", 8)


def test_search_matches_brute_force_on_random_vectors(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    store = VectorStore(tmp_path / "v.sqlite", "random", 16)
    vectors = rng.normal(size=(200, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.put_many([(f"m-{i:03d}", "h", [VectorRow("summary", 0, vectors[i])]) for i in range(200)])
    query = vectors[17]
    expected = np.argsort(-(vectors @ query), kind="stable")[:10]
    hits = store.search(query, limit=10)["summary"]
    assert [memory for memory, _ in hits] == [f"m-{i:03d}" for i in expected]


def test_a_rewritten_memory_keeps_its_first_rows_and_masks_hold(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=64)
    store = VectorStore(tmp_path / "vectors.sqlite", fake.name, fake.dim)
    chunks = fake.embed(["alpha one", "alpha two", "alpha three"])
    store.put_many([
        ("m-a", "h1", [VectorRow("summary", 0, fake.embed(["old summary"])[0]), VectorRow("body", 0, chunks[0])]),
        ("m-b", "h2", _rows(fake, "beta summary", "beta body")),
    ])
    # Rewriting m-a moves its rows after m-b's in the table; the first chunk is still found first.
    new_summary = fake.embed(["new summary"])[0]
    store.put_many([("m-a", "h3", [VectorRow("summary", 0, new_summary),
                                   *(VectorRow("body", n, v) for n, v in enumerate(chunks))])])
    vector = store.vector("m-a", "summary")
    assert vector is not None and np.allclose(vector, new_summary)
    body = store.vector("m-a", "body")
    assert body is not None and np.allclose(body, chunks[0])
    hits = store.search(fake.embed(["alpha three"])[0], limit=5)
    assert hits["body"][0] == ("m-a", pytest.approx(1.0, abs=1e-5))
    allowed = np.array([memory_id != "m-a" for memory_id in store.ids()])
    masked = store.search(fake.embed(["alpha three"])[0], limit=5, allowed=allowed)
    assert [memory_id for memory_id, _ in masked["body"]] == ["m-b"]


def test_closest_of_ranks_given_memories_by_their_best_lane_and_the_lane_layout_holds(tmp_path: Path) -> None:
    """Brute force over random vectors, with rows of several lanes written in mixed order and an
    unknown lane (never used)."""
    rng = np.random.default_rng(5)
    store = VectorStore(tmp_path / "v.sqlite", "random", 16)

    def unit(n: int) -> np.ndarray:
        v = rng.normal(size=(n, 16)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    summary, context, body = unit(120), unit(120), unit(240)
    store.put_many([(f"m-{i:03d}", "h", [
        VectorRow("body", 0, body[2 * i]), VectorRow("summary", 0, summary[i]),
        VectorRow("future-lane", 0, unit(1)[0]), VectorRow("body", 1, body[2 * i + 1]),
        *([VectorRow("context", 0, context[i])] if i % 2 else []),
    ]) for i in range(120)])
    query = unit(1)[0]
    best = np.maximum(summary @ query, np.where(np.arange(120) % 2 == 1, context @ query, -np.inf))
    asked = [f"m-{i:03d}" for i in range(0, 120, 3)] + ["m-unknown"]
    expected = sorted(range(0, 120, 3), key=lambda i: -best[i])
    found = store.closest_of(query, asked, lanes=("summary", "context"))
    assert [memory for memory, _ in found] == [f"m-{i:03d}" for i in expected]
    assert [value for _, value in found] == pytest.approx([best[i] for i in expected], abs=1e-5)
    assert store.closest_of(query, asked, lanes=("trigger",)) == []
    # Every lane of the layout is searched as before: each lane's own brute force.
    per_lane = store.search(query, limit=5)
    assert [m for m, _ in per_lane["summary"]] == [f"m-{i:03d}" for i in np.argsort(-(summary @ query))[:5]]
    body_best = np.maximum(body[0::2] @ query, body[1::2] @ query)
    assert [m for m, _ in per_lane["body"]] == [f"m-{i:03d}" for i in np.argsort(-body_best)[:5]]
    context_ids = [m for m, _ in store.search(query, limit=200)["context"]]
    assert len(context_ids) == 60 and all(int(m[2:]) % 2 == 1 for m in context_ids)
