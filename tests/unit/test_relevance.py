"""The relevance floor's arithmetic: word rarity, the query's content and specific words, coverage and
evidence."""

from __future__ import annotations

import math

from vault_engine.retrieval import rarity, relevance
from vault_engine.retrieval.relevance import QueryWords


def test_a_word_weighs_its_rarity_in_english_and_an_unlisted_word_weighs_most() -> None:
    assert rarity.rank("the") == 1 and rarity.weight("the") == 0.0
    assert rarity.weight("use") < rarity.weight("database") < rarity.weight("repository") < rarity.rarest()
    assert rarity.weight("pnpm") == rarity.weight("ERR_CONN_RESET") == rarity.weight("1042") == rarity.rarest()
    assert rarity.weight("Database") == rarity.weight("database")  # case folded
    # A form the vocabulary does not list whole is read by its stem.
    assert rarity.rank("dependencies", "depend") == rarity.rank("depend")
    assert math.isclose(rarity.weight("use"), math.log(rarity.rank("use") / rarity.SHARE_SCALE))


def test_content_words_are_stemmed_without_function_words_unless_nothing_else_is_left() -> None:
    assert relevance.content_stems("What did the deploys break?") == ["deploy", "break"]
    assert relevance.content_stems("what is it") == ["what", "is", "it"]
    assert relevance.content_stems("Deploy deploys DEPLOYED") == ["deploy"]


def test_coverage_is_the_rarity_weighted_share_of_the_query_a_memory_carries() -> None:
    words = QueryWords.of("staging bastion port")
    assert set(words.weights) == {"stage", "bastion", "port"}
    assert words.coverage({"stage", "bastion", "port", "other"}) == 1.0
    assert words.coverage(set()) == 0.0
    rare, common = words.coverage({"bastion"}), words.coverage({"port"})
    assert rare > common > 0.0  # the rare word says more about what the query is after
    assert math.isclose(words.coverage({"bastion", "port"}), rare + common)


def test_the_weights_depend_on_the_query_alone_and_a_subject_weighs_most() -> None:
    """Read from the language, not the vault: the same in a vault of one memory and of thousands."""
    assert QueryWords.of("which package manager should I use?") == QueryWords.of("which package manager should I use?")
    named = QueryWords.of("what did Maria paint", subjects={"maria"})
    assert named.weights["maria"] == rarity.rarest() > QueryWords.of("what did Maria paint").weights["maria"]


def test_a_query_of_words_no_memory_carries_is_covered_by_nothing() -> None:
    words = QueryWords.of("legacy FTP uploader")
    assert words.coverage({"deploy", "stage"}) == 0.0
    assert QueryWords({}).coverage({"anything"}) == 0.0


def test_the_specific_words_of_a_query_are_its_names_numbers_and_identifiers() -> None:
    of = relevance.Specifics.of
    assert of("who is my boss") == relevance.Specifics()
    assert of("what did Caroline research?") == relevance.Specifics(names=frozenset({"carolin"}))
    assert of("which plan is customer 1042 on") == relevance.Specifics(
        codes=frozenset({"1042"}), numbers=frozenset({"1042"}), kinds=frozenset({"custom"}))
    assert of("how many reviewers does a PR need").words == frozenset()  # an abbreviation may be spelled out
    assert of("which AWS region").codes == {"aw"}  # one English does not list is an identifier (as stemmed)
    assert of("should I use pnpm").codes == {"pnpm"}
    assert of("can I ship to prod from this repo").words == frozenset()  # abbreviations of listed words
    assert of("What is the weather").words == frozenset()  # a capital that starts the query


def test_a_memory_carries_every_identifier_and_one_of_the_names() -> None:
    asked = relevance.Specifics.of("Which European countries has Maria visited for customer 1042?")
    assert asked.codes == {"1042"} and asked.names == {"european", "maria"}
    assert asked.carried_by({"maria", "1042", "spain"})
    assert not asked.carried_by({"maria", "2077"}) and not asked.carried_by({"1042", "spain"})
    assert relevance.Specifics().carried_by(set())  # a query with none: every memory carries them


def test_the_words_a_code_follows_name_its_kind() -> None:
    of = relevance.Specifics.of
    assert of("how do we run the tests for PR 311").kinds == {"pr"}
    assert of("which rooms are on floor 5 2 and 3").kinds == {"floor"}  # a number after a number adds no kind
    assert of("is the 2077 account paid").kinds == frozenset()  # a function word before it names no kind
    assert of("should I use pnpm").kinds == frozenset()  # a word English does not list is a name, not a number
    # A day or a year next to a month's name writes a date: no number of a kind.
    assert of("What setback did Melanie face in October 2023?").kinds == frozenset()
    assert of("What dish did Nate make on 9 November, 2022?").numbers == frozenset()
    assert of("Where was John between August 11 and August 15 2023?").numbers == frozenset()
    assert of("what happened to order 1042 on May 23, 2023").numbers == {"1042"}
    assert of("What state did Joanna visit in summer 2021?").numbers == frozenset()


def test_a_memory_naming_another_thing_of_the_kind_by_its_own_code_is_another_instance() -> None:
    asked = relevance.Specifics.of("which plan is customer 2077 on")
    other = "Customer 1042 is on the Enterprise plan and pays yearly"
    assert asked.other_instance({"custom", "1042", "plan"}, other) == ("1042",)
    # It carries the query's code too, or no word the code follows, or no code of its own: not another one.
    assert asked.other_instance({"custom", "2077", "1042"}, "Customer 2077 took over customer 1042's seats") == ()
    assert asked.other_instance({"plan", "1042"}, "Invoice 1042 pays for the Enterprise plan") == ()
    assert asked.other_instance({"custom", "plan"}, "Customers on the Starter plan pay monthly") == ()
    pr = relevance.Specifics.of("how do we run the tests for PR 311")
    assert pr.other_instance({"pr", "298", "test"}, "PR 298 was merged once its tests passed") == ("298",)
    assert pr.other_instance({"test", "run"}, "Run the tests with pytest -x") == ()  # general, not another PR
    assert relevance.Specifics.of("who is my boss").other_instance({"boss"}, "Boss 1 and boss 2") == ()
    # A turn of a chat log dated on the day the question names carries its number: not another one.
    october = relevance.Specifics.of("What setback did Melanie face in October 2023?")
    assert october.other_instance({"octob", "2023", "melani"}, "[6:55 pm on 20 October, 2023] Melanie: ...") == ()
    assert relevance.Specifics.of("What activities does Melanie partake in?").other_instance(
        {"melani"}, "Melanie: I signed up for a pottery class at 1:36 pm on 3 May 2023") == ()


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
    named = relevance.Floors(evidence=0.55, meaning=0.5, named_evidence=0.45, named_meaning=0.3)
    assert named.cleared(0.31, 0.31, names_carried=True) and not named.cleared(0.31, 0.31)
    assert named.cleared(0.46, 0.1, names_carried=True) and not named.cleared(0.46, 0.1)
    assert not named.cleared(0.44, 0.29, names_carried=True)
    line = relevance.describe(0.31, 0.31, 0.0, named, names_carried=True)
    assert "carries the query's names, numbers and identifiers" in line and not line.startswith("weak")
    best = relevance.Best(floors)
    assert not best.clears
    best.add(0.5, 0.3)
    best.add(0.2, 0.2)
    assert (best.evidence, best.meaning, best.clears) == (0.5, 0.3, False)
    best.add(0.3, 0.52)
    assert best.clears and best.floored
    assert best.to_json() == {"best": 0.5, "meaning": 0.52, "floor": 0.55, "meaning_floor": 0.5,
                              "named": {"best": 0.0, "meaning": 0.0, "floor": 9.0, "meaning_floor": 9.0},
                              "subjects": []}
    named = relevance.Best(relevance.Floors(evidence=0.55, meaning=0.5, named_evidence=0.45, named_meaning=0.3))
    named.add(0.35, 0.35)
    assert not named.clears  # the query names something this candidate does not carry
    assert "carry the query's names" in named.describe()
    named.add(0.32, 0.32, names_carried=True)
    assert named.clears and (named.named_evidence, named.named_meaning) == (0.32, 0.32)


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
