"""The re-ranker: each feature moves the candidate it should, and only that one."""

from __future__ import annotations

import random
from datetime import date

import pytest

from vault_engine.retrieval import rerank
from vault_engine.retrieval.rerank import Candidate, QueryProfile

TODAY = date(2023, 8, 15)
WEIGHTS = {"terms": 0.5, "tags": 0.5, "time": 0.5, "thread": 0.3}


def candidate(memory_id: str, score: float, text: str = "", tags: tuple[str, ...] = (),
              occurred: date | None = None, neighbour: float = 0.0) -> Candidate:
    return Candidate(memory_id, score, rerank.terms_of(text, tags), tags, occurred, neighbour)


def order(query: str, candidates: list[Candidate], weights: dict[str, float] = WEIGHTS) -> list[str]:
    return [c.id for c, _score, _factors in rerank.rerank(QueryProfile.of(query, TODAY), candidates, weights)]


def test_stems_match_the_full_text_index() -> None:
    assert rerank.stems("Painting paints") == ["paint", "paint"]
    assert rerank.stems("changes change") == ["chang", "chang"]
    assert rerank.stems("committing commit") == ["commit", "commit"]
    assert rerank.terms_of("Researching adoption", ("Caroline",)) == {"research", "adopt", "carolin"}


def test_a_tag_in_a_script_without_spaces_is_named_by_standing_in_the_query() -> None:
    other = candidate("a", 0.50, "她唱了一首歌", tags=("王菲",))
    named = candidate("b", 0.45, "她唱了一首歌", tags=("欧阳娜娜",))
    tags_only = {"tags": 0.5}
    assert order("欧阳娜娜唱过什么歌", [other, named], tags_only) == ["b", "a"]
    # An English tag is named as a word only: "line" is not named by "Caroline".
    assert order("Where did Caroline go camping?", [candidate("c", 0.45, "camping", tags=("line",)),
                                                    candidate("d", 0.50, "camping")]) == ["d", "c"]


def test_terms_lift_the_candidate_that_covers_every_query_word() -> None:
    one_word = candidate("a", 0.50, "adoption is a big step")
    all_words = candidate("b", 0.45, "researching adoption agencies this week")
    assert order("which adoption agencies did she research", [one_word, all_words]) == ["b", "a"]
    assert order("which adoption agencies did she research", [one_word, all_words], {"terms": 0.0}) == ["a", "b"]


def test_tags_named_in_the_query_lift_their_memories() -> None:
    other_speaker = candidate("a", 0.50, "I went camping", tags=("melanie",))
    named = candidate("b", 0.45, "I went camping", tags=("caroline",))
    assert order("Where did Caroline go camping?", [other_speaker, named]) == ["b", "a"]


def test_the_person_of_the_query_names_a_chat_role() -> None:
    said = candidate("a", 0.45, "I went to a photography workshop", tags=("user",))
    answered = candidate("b", 0.50, "A photography workshop is a good start", tags=("assistant",))
    # The person asking is the chat's user: "I" names what the user said ...
    assert order("When did I go to the photography workshop?", [answered, said]) == ["a", "b"]
    # ... and the one asked is its assistant.
    assert order("Which workshop did you recommend?", [said, answered]) == ["b", "a"]
    # Neither person: no role is named, and the order is the lanes'.
    assert order("the photography workshop", [answered, said]) == ["b", "a"]


@pytest.mark.parametrize(("query", "role"), [
    ("When did I go?", "user"),
    ("How much did my taxi cost?", "user"),
    ("What did you recommend?", "assistant"),
    ("Your advice on lenses", "assistant"),
    # Both persons: asking back what the assistant said ...
    ("Can you remind me of the restaurant?", "assistant"),
    ("What was the hiking trail you recommended to me?", "assistant"),
    ("You mentioned three apps; which one had the timer I liked?", "assistant"),
    ("Did you tell me the ratio?", "assistant"),
    # ... or a request for a new answer, which what the user said about themselves shapes.
    ("Can you suggest some activities that I can do in the evening?", "user"),
    ("Do you think I should attend my reunion?", "user"),
    ("I think you need my notes", "user"),
    ("the photography workshop", None),
])
def test_which_role_a_query_names(query: str, role: str | None) -> None:
    assert rerank.roles_named([w.casefold() for w in rerank.words(query)]) == ({role} if role else set())
    assert QueryProfile.of(query, TODAY).names_tag("user") == (role == "user")


def test_a_date_in_the_query_lifts_memories_from_then() -> None:
    may = candidate("a", 0.50, "we painted a sunset", occurred=date(2023, 5, 8))
    july = candidate("b", 0.45, "we painted a sunset", occurred=date(2023, 7, 20))
    assert order("What did they paint in July 2023?", [may, july]) == ["b", "a"]
    # A month named without a year matches that month of any year.
    july_before = candidate("c", 0.45, "we painted a sunset", occurred=date(2021, 7, 3))
    assert order("What did they paint in July?", [may, july_before]) == ["c", "a"]
    # No date in the query: no time feature at all.
    assert order("What did they paint?", [may, july]) == ["a", "b"]


def test_a_turn_next_to_a_strong_match_rises() -> None:
    lonely = candidate("a", 0.40, "nice")
    answer = candidate("b", 0.38, "yes, last Friday", neighbour=1.0)
    top = candidate("c", 1.0, "did you go to the workshop?")
    assert order("when was the workshop", [top, lonely, answer], {"thread": 0.3}) == ["c", "b", "a"]


def test_factors_report_only_features_that_apply() -> None:
    profile = QueryProfile.of("adoption agencies", TODAY)
    ranked = rerank.rerank(profile, [candidate("a", 1.0, "adoption agencies")], WEIGHTS)
    (_c, score, factors) = ranked[0]
    assert factors == {"terms": 1.5}
    assert score == 1.5


def ranked(candidates: list[Candidate], weights: dict[str, float] = WEIGHTS,
           query: str = "how do we check changes before committing") -> list[str]:
    scored = rerank.rerank(QueryProfile.of(query, TODAY), candidates, weights, unanimous=True)
    return [c.id for c, _score, _factors in scored]


def test_only_the_lanes_unanimous_best_holds_against_word_coverage() -> None:
    best = Candidate("a", 1.0, frozenset({"commit"}), (), None, 0.0, {"fts": 1, "vector": 1})
    covers_more = Candidate("b", 0.95, frozenset({"check", "chang"}), (), None, 0.0, {"fts": 2, "vector": 2})
    assert ranked([best, covers_more]) == ["a", "b"]
    # Found by a lane that did not find the first: the lanes are not unanimous, coverage decides.
    elsewhere = Candidate("c", 0.95, frozenset({"check", "chang"}), (), None, 0.0, {"fts": 2, "feedback": 1})
    assert ranked([best, elsewhere]) == ["c", "a"]
    # Below a memory that is not first everywhere, coverage decides too.
    second = Candidate("d", 1.0, frozenset({"commit"}), (), None, 0.0, {"fts": 2, "vector": 1})
    third = Candidate("e", 0.95, frozenset({"check", "chang"}), (), None, 0.0, {"fts": 3, "vector": 2})
    assert ranked([second, third]) == ["e", "d"]


def test_two_neighbouring_turns_that_tie_without_word_coverage_are_held_the_same_way_whatever_their_scores() -> None:
    """Each turn is the other's neighbour: without the ``terms`` factor their scores tie exactly (a + b
    against b + a).  The one word coverage alone lifts is held below the unanimous best, for any a and b (a
    division of the factor back out decided such ties by its rounding: differently a minute later)."""
    profile = QueryProfile.of("what did john say about the beverage deal", date(2024, 1, 12))
    weights = {"terms": 1.0, "thread": 1.0}
    rng = random.Random(11)
    for _ in range(2000):
        a, b = rng.uniform(0.5, 1.0), rng.uniform(0.5, 1.0)
        best = Candidate("tim", a, frozenset({"deal"}), (), None, b, {"fts": 1, "vector": 1})
        lifted = Candidate("john", b, frozenset({"john", "beverag", "deal"}), (), None, a, {"fts": 2, "vector": 2})
        order = [c.id for c, _score, _effects in rerank.rerank(profile, [best, lifted], weights, unanimous=True)]
        assert order == ["tim", "john"], (a, b)


def test_other_features_may_still_lift_a_memory_over_the_lanes_unanimous_best() -> None:
    best = Candidate("a", 1.0, frozenset({"commit"}), (), None, 0.0, {"fts": 1, "vector": 1})
    named = Candidate("b", 0.95, frozenset({"check", "chang"}), ("caroline",), None, 0.0, {"fts": 2, "vector": 2})
    assert ranked([best, named], query="how does Caroline check changes before committing") == ["b", "a"]


def test_a_named_tag_lifts_a_memory_by_how_close_it_is_to_the_topic() -> None:
    """A name is no topic: the named person's small talk does not pass what someone else said on
    the topic ("What did Caroline realize after her charity race?" when Melanie ran it)."""
    def turn(memory_id: str, score: float, tags: tuple[str, ...], meaning: float) -> Candidate:
        return Candidate(memory_id, score, frozenset(), tags, None, 0.0, {}, meaning)

    on_topic = turn("race", 0.50, ("melanie",), meaning=0.60)
    small_talk = turn("chat", 0.30, ("caroline",), meaning=0.15)
    query = "What did Caroline realize after her charity race?"
    assert order(query, [on_topic, small_talk], {"tags": 2.0}) == ["chat", "race"]
    assert order(query, [on_topic, small_talk], {"tags": 2.0, "tag_gate": 1.0}) == ["race", "chat"]
    # The named person's own turn on the topic keeps the whole lift.
    own = turn("own", 0.30, ("caroline",), meaning=0.60)
    ranked = rerank.rerank(QueryProfile.of(query, TODAY), [on_topic, own], {"tags": 2.0, "tag_gate": 1.0})
    assert [c.id for c, _score, _effects in ranked] == ["own", "race"]
    assert ranked[0][2]["tags"] == pytest.approx(3.0)
    assert rerank.on_topic(0.15, 0.60, 1.0) == pytest.approx(0.25)
    assert rerank.on_topic(0.15, 0.60, 0.0) == 1.0
    assert rerank.on_topic(0.3, 0.0, 1.0) == 1.0  # no vector lane found anything: nothing to compare


def test_the_names_left_out_of_the_vector_query_are_no_words_to_cover() -> None:
    profile = QueryProfile.of("What did Caroline paint?", TODAY)
    assert profile.without(["Caroline"]).terms == {"paint"}
    assert profile.without(["Caroline", "paint"]) == profile  # nothing would be left
