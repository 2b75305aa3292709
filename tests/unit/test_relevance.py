"""The relevance floor's arithmetic: IDF, the query's content words, coverage and evidence."""

from __future__ import annotations

import math

from vault_engine.retrieval import relevance
from vault_engine.retrieval.relevance import QueryWords


def test_a_word_no_memory_carries_weighs_most_and_a_word_every_memory_carries_nothing() -> None:
    assert relevance.idf(100, 0) > relevance.idf(100, 1) > relevance.idf(100, 50)
    assert relevance.idf(100, 100) < 0.01 and relevance.idf(100, 500) == 0.0
    assert math.isclose(relevance.idf(9, 0), math.log(10 / 0.5))


def test_content_words_are_stemmed_without_function_words_unless_nothing_else_is_left() -> None:
    assert relevance.content_stems("What did the deploys break?") == ["deploy", "break"]
    assert relevance.content_stems("what is it") == ["what", "is", "it"]
    assert relevance.content_stems("Deploy deploys DEPLOYED") == ["deploy"]


def test_coverage_is_the_idf_weighted_share_of_the_query_a_memory_carries() -> None:
    words = QueryWords.of("staging bastion port", documents=10, frequency={"stage": 5, "bastion": 1, "port": 9})
    assert set(words.weights) == {"stage", "bastion", "port"}
    assert words.coverage({"stage", "bastion", "port", "other"}) == 1.0
    assert words.coverage(set()) == 0.0
    rare, common = words.coverage({"bastion"}), words.coverage({"port"})
    assert rare > common > 0.0  # the rare word says more about what the query is after
    assert math.isclose(words.coverage({"bastion", "port"}), rare + common)


def test_a_query_of_words_the_vault_never_saw_is_covered_by_nothing() -> None:
    words = QueryWords.of("legacy FTP uploader", documents=10, frequency={})
    assert words.coverage({"deploy", "stage"}) == 0.0
    assert QueryWords({}).coverage({"anything"}) == 0.0


def test_evidence_adds_the_best_cosine_to_the_coverage_and_explains_itself() -> None:
    assert relevance.evidence({"summary": 0.3, "body": 0.5}, 0.25) == 0.75
    assert relevance.evidence({}, 0.4) == 0.4
    floors = relevance.Floors(evidence=0.55, meaning=0.5)
    strong = relevance.describe(0.75, 0.5, 0.25, floors)
    paraphrase = relevance.describe(0.5, 0.5, 0.0, floors)
    weak = relevance.describe(0.4, 0.4, 0.0, floors)
    assert strong.startswith("evidence 0.75") and "above the relevance floor 0.55" in strong
    assert "meaning alone reaches 0.50" in paraphrase and not paraphrase.startswith("weak")
    assert weak.startswith("weak: evidence 0.40") and "below the relevance floor 0.55" in weak


def test_a_hit_clears_the_floors_by_evidence_or_by_meaning_alone() -> None:
    floors = relevance.Floors(evidence=0.55, meaning=0.5)
    assert floors.cleared(0.6, 0.1) and floors.cleared(0.51, 0.51) and not floors.cleared(0.5, 0.3)
    best = relevance.Best(floors)
    assert not best.clears
    best.add(0.5, 0.3)
    best.add(0.2, 0.2)
    assert (best.evidence, best.meaning, best.clears) == (0.5, 0.3, False)
    best.add(0.3, 0.52)
    assert best.clears and best.floored
    assert best.to_json() == {"best": 0.5, "meaning": 0.52, "floor": 0.55, "meaning_floor": 0.5, "subjects": []}


def test_a_search_naming_a_subject_a_candidate_carries_is_answered_below_the_floors() -> None:
    best = relevance.Best(relevance.Floors(evidence=0.6, meaning=0.5))
    best.add(0.45, 0.2)
    assert not best.clears
    best.subjects = ("Maria",)
    assert best.clears and not best.floored
    notice = best.describe_subjects()
    assert "below the relevance floor 0.60" in notice and "names Maria" in notice and "marked weak" in notice
    assert best.to_json()["subjects"] == ["Maria"]


def test_the_subjects_a_query_names_are_its_content_words_a_candidate_carries() -> None:
    subjects = {"maria": "Maria", "john": "John", "deploy": "deploy"}
    carried = {"maria": {"m-1"}, "john": set(), "deploy": {"m-2"}}

    def named(query: str) -> tuple[str, ...]:
        return relevance.named_subjects(relevance.content_stems(query), subjects, carried)

    # As the tags spell them, once each; a subject no candidate carries is not named.
    assert named("What has Maria and maria's friend John done?") == ("Maria",)
    assert named("how do we deploy? Deployments fail") == ("deploy",)
    assert named("write a haiku about tea") == ()
