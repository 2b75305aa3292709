"""The embedding cache: keyed by model and text as the model reads it, bounded, never failing the work."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from vault_engine.index import notices
from vault_engine.index.embedding_cache import FILE, ROW_OVERHEAD, EmbeddingCache, KeptVectors, key_of, model_text
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.filling import embed_distinct, fill
from vault_engine.index.vectors import Pending, VectorRow, VectorStore


def _vector(seed: int, dim: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vector = rng.standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_model_text_collapses_whitespace_and_cuts_past_the_window() -> None:
    assert model_text("  Use\tpytest \n\n fixtures ", 256) == "Use pytest fixtures"
    long = " ".join(f"w{n}" for n in range(600))
    cut = model_text(long, 256)
    assert cut.split() == long.split()[:512]
    assert model_text("a b c", 1) == "a b"  # two words per token of the window


def test_key_depends_on_model_and_text() -> None:
    assert key_of("m1", "text") == key_of("m1", "text")
    assert key_of("m1", "text") != key_of("m2", "text")
    assert key_of("m1", "text") != key_of("m1", "text ")
    assert len(key_of("m1", "text")) == 16


def test_round_trip_by_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache", 10_000_000)
    cache.put_many("m1", [("alpha", _vector(1)), ("beta", _vector(2))])
    found = cache.get_many("m1", 8, ["alpha", "beta", "gamma"])
    assert set(found) == {"alpha", "beta"}
    assert np.array_equal(found["alpha"], _vector(1))
    assert cache.get_many("m2", 8, ["alpha"]) == {}  # another model: a miss
    assert cache.get_many("m1", 16, ["alpha"]) == {}  # another dimension: a miss
    state = cache.status()
    assert state.vectors == 2 and state.per_model == {"m1": 2} and state.problem is None
    cache.close()
    reopened = EmbeddingCache(tmp_path / "cache", 10_000_000)
    assert set(reopened.get_many("m1", 8, ["alpha"])) == {"alpha"}  # it persists
    assert reopened.clear() == 2
    assert not (tmp_path / "cache" / FILE).exists()
    assert reopened.get_many("m1", 8, ["alpha"]) == {}


def test_eviction_drops_the_least_recently_used(tmp_path: Path) -> None:
    row = 8 * 4 + ROW_OVERHEAD
    cache = EmbeddingCache(tmp_path, 10 * row)  # room for 10 vectors
    cache.put_many("m", [(f"old{n}", _vector(n)) for n in range(6)])
    db = cache._connect()
    assert db is not None
    db.execute("UPDATE vectors SET used = used - 100")  # written long ago
    cache.get_many("m", 8, ["old0"])  # read now: recently used again
    cache.put_many("m", [(f"new{n}", _vector(100 + n)) for n in range(6)])  # 12 > 10: evict to 9
    kept = cache.get_many("m", 8, [f"old{n}" for n in range(6)] + [f"new{n}" for n in range(6)])
    assert len(kept) == 9
    assert "old0" in kept and all(f"new{n}" in kept for n in range(6))
    assert sum(f"old{n}" in kept for n in range(1, 6)) == 2


def test_a_damaged_file_is_started_afresh(tmp_path: Path) -> None:
    (tmp_path / FILE).write_bytes(b"this is not a database" * 100)
    cache = EmbeddingCache(tmp_path, 10_000_000)
    assert cache.get_many("m", 8, ["alpha"]) == {}
    cache.put_many("m", [("alpha", _vector(1))])
    assert set(cache.get_many("m", 8, ["alpha"])) == {"alpha"}
    assert cache.problem is None


def test_an_unusable_folder_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("the cache folder cannot be made under a file (even by root)")
    cache = EmbeddingCache(blocked / "cache", 10_000_000)
    model = HashEmbedder(dim=8)
    vectors, report = embed_distinct(model, cache, ["one text", "another"], 256)
    assert set(vectors) == {"one text", "another"} and report.embedded == 2
    assert cache.problem is not None and "not used" in cache.problem
    assert cache.status().problem == cache.problem


def test_embed_distinct_embeds_each_text_once_and_uses_the_cache(tmp_path: Path) -> None:
    model = HashEmbedder(dim=8)
    cache = EmbeddingCache(tmp_path, 10_000_000)
    texts = ["Same text.", "Same   text.", "Other text.", "Same text."]
    vectors, report = embed_distinct(model, cache, texts, 256)
    assert model.calls == 2 and report.embedded == 2 and report.cached == 0
    assert set(vectors) == set(texts)
    assert np.array_equal(vectors["Same text."], vectors["Same   text."])
    again, second = embed_distinct(model, cache, ["Other text.", "New one."], 256)
    assert model.calls == 3 and second.embedded == 1 and second.cached == 1
    assert np.array_equal(again["Other text."], vectors["Other text."])


def test_fill_settles_only_the_fingerprint_still_queued(tmp_path: Path) -> None:
    model = HashEmbedder(dim=8)
    store = VectorStore(tmp_path / "vectors.sqlite", model.name, model.dim)
    store.queue([Pending("m-a", "h1", (("summary", 0, "first text"),)),
                 Pending("m-b", "h1", (("summary", 0, "second text"),))])
    assert store.pending_count() == 2 and store.count() == 0
    assert store.hashes() == {"m-a": "h1", "m-b": "h1"}  # queued counts as current: not queued twice
    rows = [("m-a", "h-old", [VectorRow("summary", 0, _vector(3))]),
            ("m-b", "h1", [VectorRow("summary", 0, _vector(4))])]
    assert store.settle(rows) == 1  # m-a was queued again since: its stale vectors are not stored
    report = fill(store, model, None, 256)
    assert report.memories == 1 and report.remaining == 0
    assert store.hashes() == {"m-a": "h1", "m-b": "h1"} and store.pending_count() == 0
    store.queue([], deleted=["m-a"])
    assert store.hashes() == {"m-b": "h1"}
    store.close()


@pytest.mark.parametrize(("batches", "embedded", "stored"), [(4, 800, 2), (2, 512, 0)])
def test_fill_stops_between_batches_and_keeps_the_rest_queued(tmp_path: Path, batches: int, embedded: int,
                                                               stored: int) -> None:
    model = HashEmbedder(dim=8)
    store = VectorStore(tmp_path / "vectors.sqlite", model.name, model.dim)
    store.queue([Pending(f"m-{n:04d}", "h", tuple(("sentence", k, f"text {n} {k}") for k in range(400)))
                 for n in range(5)])  # groups of two memories (800 texts, four batches of the model)
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > batches  # a whole group (its vectors stored), or half of one (nothing stored)

    report = fill(store, model, None, 256, stop=stop)
    assert report.stopped and report.memories == stored and model.calls == embedded
    assert report.remaining == 5 - stored and store.pending_count() == 5 - stored
    store.close()
    with sqlite3.connect(tmp_path / "vectors.sqlite") as db:
        assert db.execute("SELECT COUNT(DISTINCT id) FROM vectors").fetchone()[0] == stored


# ---------------------------------------------------------------- vectors that read back wrong


def _damage(path: Path, how: str) -> None:
    """Damage every row of the cache file at ``path`` in place, as a bad disk or a bug would."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT key, vec FROM vectors ORDER BY key").fetchall()
    vectors = [np.frombuffer(vec, dtype=np.float32).copy() for _key, vec in rows]
    if how == "zeroed":
        vectors = [np.zeros_like(v) for v in vectors]
    elif how == "nan":
        for v in vectors:
            v[3] = np.nan
    elif how == "shuffled":  # the numbers of each vector in another order: still of unit length
        vectors = [v[::-1].copy() for v in vectors]
    elif how == "swapped":  # each row holds the next text's vector, checksum and all
        sums = [s for (s,) in db.execute("SELECT sum FROM vectors ORDER BY key")]
        with db:
            for (key, _vec), vec, total in zip(rows, [*vectors[1:], vectors[0]], [*sums[1:], sums[0]], strict=True):
                db.execute("UPDATE vectors SET vec = ?, sum = ? WHERE key = ?", (vec.tobytes(), total, key))
        db.close()
        return
    elif how == "scaled":
        vectors = [v * 3 for v in vectors]
    with db:
        for (key, _vec), vec in zip(rows, vectors, strict=True):
            db.execute("UPDATE vectors SET vec = ? WHERE key = ?", (vec.tobytes(), key))
    db.close()


@pytest.mark.parametrize("how", ["zeroed", "nan", "shuffled", "swapped", "scaled"])
def test_a_vector_that_reads_back_wrong_is_computed_again(tmp_path: Path, how: str) -> None:
    model = HashEmbedder(dim=8)
    texts = ["alpha beta", "gamma delta", "epsilon zeta"]
    cache = EmbeddingCache(tmp_path, 10_000_000)
    truth, _ = embed_distinct(model, cache, texts, 256)
    cache.close()
    _damage(tmp_path / FILE, how)
    cache = EmbeddingCache(tmp_path, 10_000_000)
    assert cache.get_many(model.name, 8, texts) == {}  # every row fails its check: a miss
    assert cache.rejected == len(texts)
    lines = notices.take()
    assert len(lines) == 1 and "failed their check" in lines[0] and "\n" not in lines[0]
    again, report = embed_distinct(model, cache, texts, 256)
    assert report.embedded == len(texts) and report.cached == 0
    assert all(np.array_equal(again[t], truth[t]) for t in texts)
    # Rewritten sound: the next read finds them all, and says nothing more.
    fresh = EmbeddingCache(tmp_path, 10_000_000)
    found = fresh.get_many(model.name, 8, texts)
    assert set(found) == set(texts) and fresh.rejected == 0
    assert all(np.array_equal(found[t], truth[t]) for t in texts)
    assert notices.take() == []


def test_a_vector_no_embedder_would_give_is_not_kept(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, 10_000_000)
    cache.put_many("m", [("good", _vector(1)), ("long", _vector(2) * 2),
                         ("nan", np.full(8, np.nan, dtype=np.float32))])
    assert set(cache.get_many("m", 8, ["good", "long", "nan"])) == {"good"}
    assert cache.rejected == 0  # never stored, so never rejected


def test_a_cache_of_the_version_without_checksums_is_started_afresh(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / FILE)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('version', '1')")
    db.execute("CREATE TABLE vectors (key BLOB PRIMARY KEY, model TEXT NOT NULL, vec BLOB NOT NULL,"
               " used INTEGER NOT NULL) WITHOUT ROWID")
    db.execute("INSERT INTO vectors VALUES (?, 'm', ?, 0)", (key_of("m", "alpha"), np.zeros(8, np.float32).tobytes()))
    db.commit()
    db.close()
    cache = EmbeddingCache(tmp_path, 10_000_000)
    assert cache.get_many("m", 8, ["alpha"]) == {}
    cache.put_many("m", [("alpha", _vector(1))])
    assert np.array_equal(cache.get_many("m", 8, ["alpha"])["alpha"], _vector(1))


def test_a_cache_that_cannot_be_written_says_so_once(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the cache folder should be")
    for _ in range(3):  # three syncs of one process
        cache = EmbeddingCache(blocked / "cache", 10_000_000)
        embed_distinct(HashEmbedder(dim=8), cache, ["one text"], 256)
    lines = notices.take()
    assert len(lines) == 1 and lines[0].startswith("notice: the embedding cache at ") and "not used" in lines[0]
    assert notices.take() == []


def test_kept_vectors_are_read_back_by_the_next_process_without_the_model(tmp_path: Path) -> None:
    first = HashEmbedder()
    kept = KeptVectors(first, EmbeddingCache(tmp_path / "cache", 10_000_000), 256)
    asked = ["Work on this project", "deploy  the\tapi", "Work on this project"]
    vectors = kept.embed(asked)
    assert np.array_equal(vectors, first.embed(asked)) and vectors.dtype == np.float32
    assert first.calls == 2 + 3  # the two distinct texts, then the check above
    later = HashEmbedder()  # another process: a new model, the same cache folder
    again = KeptVectors(later, EmbeddingCache(tmp_path / "cache", 10_000_000), 256)
    assert np.array_equal(again.embed(["deploy the api", "Work on this project"]), vectors[[1, 0]])
    assert later.calls == 0  # whitespace aside, the same text as the model reads it
    assert np.array_equal(again.embed(["a new task"]), later.embed(["a new task"]))
    assert later.calls == 2
    assert again.embed([]).shape == (0, later.dim)


def test_kept_vectors_with_the_cache_off_ask_the_model_each_time(tmp_path: Path) -> None:
    model = HashEmbedder()
    kept = KeptVectors(model, EmbeddingCache(tmp_path / "cache", 0), 256)
    kept.embed(["Work on this project"])
    kept.embed(["Work on this project"])
    assert model.calls == 2 and not (tmp_path / "cache" / FILE).exists()


def test_a_cache_a_newer_memvault_wrote_is_not_used_and_not_deleted(tmp_path: Path) -> None:
    from vault_engine.index.embedding_cache import SCHEMA_VERSION

    EmbeddingCache(tmp_path, 10_000_000).put_many("m", [("alpha", _vector(1))])
    db = sqlite3.connect(tmp_path / FILE)
    db.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(int(SCHEMA_VERSION) + 1),))
    db.commit()
    db.close()
    cache = EmbeddingCache(tmp_path, 10_000_000)
    assert cache.get_many("m", 8, ["alpha"]) == {}
    assert cache.problem is not None and "newer memvault" in cache.problem
    lines = notices.take()
    assert len(lines) == 1 and "newer memvault" in lines[0] and "computed afresh" in lines[0]
    db = sqlite3.connect(tmp_path / FILE)  # still there for the newer memvault
    assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
    db.close()
