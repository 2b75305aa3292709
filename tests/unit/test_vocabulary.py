"""The vocabulary store and query expansion (real SQLite, hand-made unit vectors, no model)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from vault_engine.errors import IndexStale
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.vocabulary import Expansion, Vocabulary, vocabulary_terms

DIM = 32


def _axis(n: int) -> npt.NDArray[np.float32]:
    out = np.zeros(DIM, dtype=np.float32)
    out[n] = 1.0
    return out


def _near(axis: int, similarity: float, own: int) -> npt.NDArray[np.float32]:
    """A unit vector with cosine ``similarity`` to ``_axis(axis)``, and 0 to every other ``own`` axis."""
    return (similarity * _axis(axis) + math.sqrt(1 - similarity**2) * _axis(own)).astype(np.float32)


def _store(path: Path, terms: dict[str, npt.NDArray[np.float32]]) -> Vocabulary:
    vocabulary = Vocabulary(path, "fake/unit", DIM)
    vocabulary.add(list(terms), np.vstack(list(terms.values())))
    return vocabulary


# Query word "music" is axis 0, "pets" axis 1; each term has its own axis beyond 2.
TERMS = {
    "violin": _near(0, 0.9, 2),
    "clarinet": _near(0, 0.8, 3),
    "guitar": _near(0, 0.7, 4),
    "drum": _near(0, 0.65, 5),
    "invoice": _near(0, 0.3, 6),
    "music": _near(0, 1.0, 7),
    "musical": _near(0, 0.95, 8),  # shares "music": an inflection BM25 already finds
    "dog": _near(1, 0.85, 9),
    "cat": _near(1, 0.75, 10),
}
QUERY = np.vstack([_axis(0), _axis(1)])


def test_vocabulary_terms_keep_casefolded_content_words() -> None:
    text = "The KICKBOXING class at 7pm: Straße, snake_case, abc123def, an ox and THE violin; café Zürich 2024"
    assert vocabulary_terms(text) == {
        "kickboxing", "class", "strasse", "snake", "case", "abc", "def", "violin", "café", "zürich",
    }
    assert vocabulary_terms("") == set()
    assert vocabulary_terms("the and with 12345 it is ox") == set()  # stopwords, digits, short words


def test_missing_add_count_roundtrip(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=DIM)
    vocabulary = Vocabulary(tmp_path / "vocabulary.sqlite", fake.name, fake.dim)
    words = sorted(vocabulary_terms("Violin lessons on Tuesday, clarinet on Friday; violin again"))
    assert vocabulary.missing(words + words) == words  # sorted, each once
    assert vocabulary.count() == 0
    vocabulary.add(words[:2], fake.embed(words[:2]))
    assert vocabulary.count() == 2
    assert vocabulary.missing(words) == words[2:]
    vocabulary.add(words, fake.embed(words))  # replacing is fine
    assert vocabulary.count() == len(words)
    assert vocabulary.missing(words) == []
    assert vocabulary.missing([]) == []
    many = [f"term{n:04d}" for n in range(1200)]  # more than one IN (...) batch
    assert vocabulary.missing([*many, "violin"]) == many


def test_add_rejects_a_matrix_of_the_wrong_shape(tmp_path: Path) -> None:
    vocabulary = Vocabulary(tmp_path / "v.sqlite", "fake/unit", DIM)
    with pytest.raises(ValueError):
        vocabulary.add(["one", "two"], np.zeros((1, DIM), dtype=np.float32))
    with pytest.raises(ValueError):
        vocabulary.add(["one"], np.zeros((1, DIM + 1), dtype=np.float32))
    assert vocabulary.count() == 0


def test_vectors_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.sqlite"
    _store(path, TERMS).close()
    reopened = Vocabulary(path, "fake/unit", DIM)
    assert reopened.count() == len(TERMS)
    assert reopened.missing(TERMS) == []
    [found] = reopened.expand(["music"], QUERY[:1], per_word=1)
    assert (found.term, found.source) == ("violin", "music")
    assert found.similarity == pytest.approx(0.9, abs=1e-6)


@pytest.mark.parametrize(("model", "dim"), [("other/model", DIM), ("fake/unit", DIM * 2)])
def test_another_model_or_width_is_stale(tmp_path: Path, model: str, dim: int) -> None:
    path = tmp_path / "vocabulary.sqlite"
    _store(path, TERMS).close()
    with pytest.raises(IndexStale) as caught:
        Vocabulary(path, model, dim)
    assert "fake/unit" in caught.value.one_line()
    assert "rebuilt" in caught.value.one_line()


def test_a_damaged_row_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.sqlite"
    vocabulary = _store(path, TERMS)
    with sqlite3.connect(path) as other:
        other.execute("UPDATE terms SET vec = ? WHERE term = 'violin'", (b"\x00" * 7,))
    with pytest.raises(IndexStale):
        vocabulary.expand(["music"], QUERY[:1])


def test_expand_takes_the_best_terms_per_word_above_the_threshold(tmp_path: Path) -> None:
    vocabulary = _store(tmp_path / "v.sqlite", TERMS)
    found = vocabulary.expand(["music", "pets"], QUERY, per_word=3, min_similarity=0.6)
    assert [(e.term, e.source) for e in found] == [
        ("violin", "music"), ("dog", "pets"), ("clarinet", "music"), ("cat", "pets"), ("guitar", "music"),
    ]
    assert [e.similarity for e in found] == pytest.approx([0.9, 0.85, 0.8, 0.75, 0.7], abs=1e-6)
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1], per_word=10, min_similarity=0.6)] == [
        "violin", "clarinet", "guitar", "drum",  # never "invoice" (0.3): below the threshold
    ]
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1], per_word=10, min_similarity=0.75)] == [
        "violin", "clarinet",
    ]
    assert vocabulary.expand(["music"], QUERY[:1], min_similarity=0.99) == []
    assert vocabulary.expand(["music"], QUERY[:1], per_word=0) == []


def test_expand_never_returns_the_word_its_inflections_or_excluded_terms(tmp_path: Path) -> None:
    vocabulary = _store(tmp_path / "v.sqlite", TERMS)
    terms = [e.term for e in vocabulary.expand(["music"], QUERY[:1], per_word=10, min_similarity=0.0)]
    assert "music" not in terms and "musical" not in terms
    terms = [e.term for e in vocabulary.expand(["Music"], QUERY[:1], per_word=2, exclude={"Violin"})]
    assert terms == ["clarinet", "guitar"]
    # Each word of a phrase counts: "musical" is an inflection of "music" in "music lessons".
    terms = [e.term for e in vocabulary.expand(["music lessons"], QUERY[:1], per_word=10, min_similarity=0.6)]
    assert terms == ["violin", "clarinet", "guitar", "drum"]


def test_inflections_are_told_by_five_letters_or_the_whole_short_word(tmp_path: Path) -> None:
    vocabulary = _store(tmp_path / "v.sqlite", {
        "pet": _near(0, 0.95, 2),
        "petted": _near(0, 0.9, 3),
        "instrument": _near(1, 0.95, 4),
        "instrumental": _near(1, 0.9, 5),
        "insect": _near(1, 0.7, 6),  # four letters in common: a different word
        "animals": _near(0, 0.8, 7),
    })
    assert [e.term for e in vocabulary.expand(["pets"], QUERY[:1], per_word=5)] == ["petted", "animals"]
    assert [e.term for e in vocabulary.expand(["instruments"], QUERY[1:], per_word=5)] == ["insect"]


def test_one_slot_per_stem_within_a_word(tmp_path: Path) -> None:
    vocabulary = _store(tmp_path / "v.sqlite", {
        "musicians": _near(0, 0.9, 2),
        "musician": _near(0, 0.85, 3),
        "violin": _near(0, 0.8, 4),
    })
    found = vocabulary.expand(["instruments"], QUERY[:1], per_word=2)
    assert [e.term for e in found] == ["musicians", "violin"]


def test_a_term_found_for_two_words_is_kept_once_with_its_best_similarity(tmp_path: Path) -> None:
    both = (0.7 * _axis(0) + 0.6 * _axis(1)).astype(np.float32)
    both /= np.linalg.norm(both)
    vocabulary = _store(tmp_path / "v.sqlite", {"band": both, "violin": _near(0, 0.9, 2)})
    found = vocabulary.expand(["music", "pets"], QUERY, per_word=3, min_similarity=0.5)
    assert [(e.term, e.source) for e in found] == [("violin", "music"), ("band", "music")]
    assert found[1].similarity == pytest.approx(float(both[0]), abs=1e-6)


def test_ties_are_ordered_by_term(tmp_path: Path) -> None:
    vocabulary = _store(tmp_path / "v.sqlite", {
        "zither": _near(0, 0.8, 2),
        "banjo": _near(0, 0.8, 3),
        "oboe": _near(0, 0.8, 4),
        "lute": _near(0, 0.9, 5),
    })
    found = vocabulary.expand(["music"], QUERY[:1], per_word=3)
    assert [e.term for e in found] == ["lute", "banjo", "oboe"]


def test_many_skipped_candidates_do_not_hide_a_later_term(tmp_path: Path) -> None:
    # More inflections above the threshold than the first sorted slice holds: the walk must go on.
    terms = {f"music{chr(97 + n // 26)}{chr(97 + n % 26)}": _near(0, 0.95 - n * 0.001, 2 + n % 20) for n in range(80)}
    terms["violin"] = _near(0, 0.7, 25)
    vocabulary = _store(tmp_path / "v.sqlite", terms)
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1], per_word=1)] == ["violin"]


def test_an_empty_store_and_an_empty_query_expand_to_nothing(tmp_path: Path) -> None:
    vocabulary = Vocabulary(tmp_path / "v.sqlite", "fake/unit", DIM)
    assert vocabulary.expand(["music"], QUERY[:1]) == []
    assert vocabulary.expand([], np.zeros((0, DIM), dtype=np.float32)) == []
    with pytest.raises(ValueError):
        vocabulary.expand(["music", "pets"], QUERY[:1])  # one vector row per word


def test_added_and_cleared_terms_are_seen_at_once(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    vocabulary = _store(path, {"violin": _near(0, 0.9, 2)})
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1])] == ["violin"]
    vocabulary.add(["cello"], _near(0, 0.95, 3)[None, :])
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1])] == ["cello", "violin"]
    other = Vocabulary(path, "fake/unit", DIM)  # another process, e.g. a sync beside a server
    other.add(["viola"], _near(0, 0.97, 4)[None, :])
    assert [e.term for e in vocabulary.expand(["music"], QUERY[:1])] == ["viola", "cello", "violin"]
    vocabulary.clear()
    assert vocabulary.count() == 0
    assert vocabulary.expand(["music"], QUERY[:1]) == []


def test_expand_with_the_fake_embedder_skips_the_word_itself(tmp_path: Path) -> None:
    fake = HashEmbedder(dim=256)
    vocabulary = Vocabulary(tmp_path / "v.sqlite", fake.name, fake.dim)
    terms = sorted(vocabulary_terms("Kickboxing on Monday, taekwondo on Thursday, violin lessons on Sunday"))
    vocabulary.add(terms, fake.embed(terms))
    # The fake knows no meaning: a stored word matches only itself, and that is never an expansion.
    assert vocabulary.expand(["violin", "guitar"], fake.embed(["violin", "guitar"]), min_similarity=0.9) == []
    [found] = vocabulary.expand(["fiddle"], fake.embed(["violin"]), min_similarity=0.9)
    assert isinstance(found, Expansion)
    assert (found.term, found.source) == ("violin", "fiddle")
    assert found.similarity == pytest.approx(1.0, abs=1e-5)


def test_a_vocabulary_larger_than_one_load_block_is_read_whole(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((9000, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    terms = [f"word{chr(97 + n // 676)}{chr(97 + n // 26 % 26)}{chr(97 + n % 26)}" for n in range(9000)]
    vocabulary = Vocabulary(tmp_path / "v.sqlite", "fake/unit", DIM)
    vocabulary.add(terms, vectors)
    picks = [0, 4095, 4096, 8191, 8192, 8999]  # block edges and the last, partial block
    found = vocabulary.expand([f"query{n}" for n in range(len(picks))], vectors[picks], per_word=1, min_similarity=0.99)
    assert sorted((e.source, e.term) for e in found) == [(f"query{n}", terms[at]) for n, at in enumerate(picks)]
    assert all(e.similarity == pytest.approx(1.0, abs=1e-5) for e in found)
