"""Query expansion with the real model: the vault's own words stand in for a query's broader ones.

Thresholds come from measuring all-MiniLM-L6-v2 (int8) on single words: a
category word and its members score 0.59-0.77 ("instruments"/"violin" 0.63,
"martial arts"/"taekwondo" 0.71, "pets"/"dog" 0.70), words from other topics
0.1-0.45, and loosely related words up to ~0.57 ("martial arts"/"gym" 0.55);
the default ``min_similarity`` of 0.6 sits between the two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.config import EmbeddingSettings
from vault_engine.index.embedder import FastEmbedder
from vault_engine.index.vocabulary import Vocabulary, vocabulary_terms

pytestmark = pytest.mark.slow

SENTENCES = [
    'Maria started kickboxing classes at the community gym.',
    'Her brother earned a black belt in taekwondo last spring.',
    'Joanna plays the clarinet in the town orchestra.',
    'Tim practices violin every evening before dinner.',
    'I bought a used guitar from a shop downtown.',
    'We adopted a puppy from the shelter in March.',
    'The kitten sleeps on the windowsill all afternoon.',
    'Our dog loves long walks by the river.',
    'The cat knocked a glass off the kitchen table.',
    'Friday is pizza night at our house.',
    "Grandma's lasagna recipe needs three kinds of cheese.",
    'The quarterly invoice was sent to the client on Monday.',
    'Staging runs Postgres 16 on a dedicated server.',
    'Use pytest fixtures instead of setUp methods.',
    'The deadline for the tax filing is next Tuesday.',
    'We repainted the garden fence a pale green.',
    'The weather forecast says heavy rain tomorrow.',
    'Melanie finished reading a novel about sailors.',
    'Caroline volunteers at the library on weekends.',
    'The laptop battery drains faster after the update.',
    'Our team meeting moved to Wednesday morning.',
    'He is saving money for a new apartment.',
    'The museum opens a photography exhibition in June.',
    'She ran her first marathon in under four hours.',
    'The car needs new tires before winter.',
    'Backups are copied to cloud storage every night.',
    'I planted tomatoes and basil in the backyard.',
    'The bakery on the corner sells fresh bread.',
    'My sister is moving to Canada for a new job.',
    'The conference talk covered database indexing.',
    'We hiked to the lake and camped overnight.',
    'The printer on the second floor is jammed again.',
    'Dad fixed the leaking faucet in the bathroom.',
    'The kids built a snowman in the park.',
    'Remember to renew the passport before August.',
    'The budget review is scheduled for the end of the month.',
    'Coffee from the new roastery tastes like chocolate.',
    'The train was delayed by forty minutes.',
    'She painted a sunset over the harbour.',
    'Our neighbour teaches yoga on Saturday mornings.',
]
QUERIES = ["martial", "martial arts", "instruments", "pets"]
FAMILIES = {
    "martial": {"taekwondo", "kickboxing", "belt"},
    "martial arts": {"taekwondo", "kickboxing", "belt"},
    "instruments": {"clarinet", "violin", "guitar", "orchestra"},
    "pets": {"puppy", "kitten", "dog", "cat"},
}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> FastEmbedder:
    return FastEmbedder(EmbeddingSettings(), tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def vocabulary(embedder: FastEmbedder, tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    store = Vocabulary(tmp_path_factory.mktemp("vault") / "vocabulary.sqlite", embedder.name, embedder.dim)
    terms = store.missing(set().union(*(vocabulary_terms(s) for s in SENTENCES)))
    store.add(terms, embedder.embed(terms))
    return store


def _expand(
    vocabulary: Vocabulary, embedder: FastEmbedder, words: list[str], per_word: int = 3, min_similarity: float = 0.6
) -> dict[str, set[str]]:
    """The terms found for each query word."""
    found: dict[str, set[str]] = {word: set() for word in words}
    for expansion in vocabulary.expand(words, embedder.embed(words), per_word=per_word, min_similarity=min_similarity):
        found[expansion.source].add(expansion.term)
    return found


def test_the_vault_words_are_stored_once(vocabulary: Vocabulary) -> None:
    words = set().union(*(vocabulary_terms(s) for s in SENTENCES))
    assert vocabulary.count() == len(words)
    assert vocabulary.missing(words) == []
    assert {"kickboxing", "taekwondo", "clarinet", "violin", "puppy", "lasagna"} <= words


def test_category_words_expand_to_their_members_at_the_default_threshold(
    vocabulary: Vocabulary, embedder: FastEmbedder
) -> None:
    found = _expand(vocabulary, embedder, ["martial arts", "instruments", "pets"])
    assert "taekwondo" in found["martial arts"]
    assert {"violin", "guitar"} <= found["instruments"]
    assert {"dog", "cat"} <= found["pets"]


def test_nothing_from_another_topic_clears_the_default_threshold(
    vocabulary: Vocabulary, embedder: FastEmbedder
) -> None:
    found = vocabulary.expand(QUERIES, embedder.embed(QUERIES), per_word=10)
    assert found
    for expansion in found:
        assert expansion.term in FAMILIES[expansion.source], expansion
        assert expansion.similarity >= 0.6
    assert not {e.term for e in found} & {"pizza", "lasagna", "invoice", "postgres", "weather", "laptop", "gym"}


def test_the_measured_gap_between_members_and_other_words(vocabulary: Vocabulary, embedder: FastEmbedder) -> None:
    members = {"martial arts": ["taekwondo"], "instruments": ["violin", "guitar"], "pets": ["dog", "cat", "puppy"]}
    others = ["pizza", "lasagna", "invoice", "postgres", "weather", "laptop", "tax", "museum", "garden"]
    query = embedder.embed(list(members))
    for row, words in enumerate(members.values()):
        near = embedder.embed(words) @ query[row]
        far = embedder.embed(others) @ query[row]
        assert float(near.min()) >= 0.62
        assert float(far.max()) <= 0.45


def test_a_lower_threshold_reaches_weaker_members(vocabulary: Vocabulary, embedder: FastEmbedder) -> None:
    # clarinet ~0.59 to "instruments" and kitten ~0.55 to "pets": just under the default.
    strict = _expand(vocabulary, embedder, ["instruments", "pets"], per_word=10)
    assert "clarinet" not in strict["instruments"] and "kitten" not in strict["pets"]
    loose = _expand(vocabulary, embedder, ["instruments", "pets"], per_word=10, min_similarity=0.54)
    assert "clarinet" in loose["instruments"]
    assert "kitten" in loose["pets"]


def test_per_word_keeps_the_best_members(vocabulary: Vocabulary, embedder: FastEmbedder) -> None:
    words = ["instruments", "pets"]
    found = vocabulary.expand(words, embedder.embed(words), per_word=1)
    every = vocabulary.expand(words, embedder.embed(words), per_word=10)
    assert sorted(e.source for e in found) == words  # one member each ...
    for kept in found:  # ... of its family, and the closest one the vault holds
        assert kept.term in FAMILIES[kept.source]
        assert kept.similarity == max(e.similarity for e in every if e.source == kept.source)


def test_a_phrase_is_one_query_item_and_never_expands_to_its_own_words(
    embedder: FastEmbedder, tmp_path: Path
) -> None:
    store = Vocabulary(tmp_path / "vocabulary.sqlite", embedder.name, embedder.dim)
    terms = sorted(set().union(*(vocabulary_terms(s) for s in SENTENCES)) | {"martial", "arts"})
    store.add(terms, embedder.embed(terms))
    found = _expand(store, embedder, ["martial arts"], per_word=10)
    assert "taekwondo" in found["martial arts"]
    assert not found["martial arts"] & {"martial", "arts"}  # both "arts" (0.67) and "martial" (0.75) clear 0.6


def test_vectors_survive_reopening(vocabulary: Vocabulary, embedder: FastEmbedder) -> None:
    reopened = Vocabulary(vocabulary.path, embedder.name, embedder.dim)
    words = ["instruments"]
    assert reopened.expand(words, embedder.embed(words)) == vocabulary.expand(words, embedder.embed(words))
    best = reopened.expand(words, embedder.embed(words))[0]
    assert best.term in FAMILIES["instruments"]
    assert 0.6 <= best.similarity <= 0.8  # a category word and its members: 0.59-0.77 (above)
