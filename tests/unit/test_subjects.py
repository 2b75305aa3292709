"""Inferred subjects: the name an untagged memory's title leads with, when the vault keeps coming back to it."""

from __future__ import annotations

import pytest

from vault_engine.retrieval.subjects import MIN_TITLES, Inferred, leading_name, query_names


@pytest.mark.parametrize(("title", "name"), [
    ("Caroline: I went to the support group", "Caroline"),
    ("Priya moved the launch to May", "Priya"),
    ("The API of Globex changed", "Globex"),  # a function word and an acronym name nothing
    ("I think Melanie paints", "Melanie"),
    ("use pnpm, not npm", None),
    ("", None),
])
def test_the_leading_name_is_the_first_capitalised_word(title: str, name: str | None) -> None:
    assert leading_name(title) == name


def test_a_name_that_leads_many_titles_is_a_subject_and_a_rare_one_is_not() -> None:
    titles = ["Caroline: hi", "Caroline: I paint", "Caroline: bye", "Melanie: me too", "Melanie: and me",
              "Yesterday it rained", "caroline again"]
    inferred = Inferred.of(titles, total=30, min_share=0.1)
    assert dict(inferred.shares) == {"caroline": pytest.approx(0.1)}
    assert inferred.written == {"caroline": "Caroline"}
    assert inferred.subject_of("Caroline: what a day") == "caroline"
    assert inferred.subject_of("Melanie: what a day") is None  # 2 of 30 titles: below the share
    assert inferred.subject_of("Hey Caroline, how are you?") is None  # it leads with "Hey"
    # However large its share, a word that leads fewer than MIN_TITLES titles names no subject.
    assert Inferred.of(["Write commit messages in the imperative mood", "The CDN caches assets"], total=5,
                       min_share=0.05).shares == {}
    assert len(["Caroline: hi", "Caroline: I paint", "Caroline: bye"]) == MIN_TITLES


def test_a_query_names_a_subject_only_by_writing_it_as_a_name() -> None:
    inferred = Inferred.of(["Write a test first"] * 3 + ["Caroline: hi"] * 3, total=6, min_share=0.05)
    assert set(inferred.shares) == {"write", "caroline"}
    assert set(inferred.named_by("What did Caroline paint?").shares) == {"caroline"}
    assert inferred.named_by("what did caroline paint").shares == {}
    assert inferred.named_by("Write a haiku about tea").shares == {}  # the first word is no name
    assert query_names("Where did Melanie and Caroline go, and what did the API say?") == {"melanie", "caroline"}


def test_an_empty_vault_infers_nothing() -> None:
    assert Inferred.of([], total=0, min_share=0.05).shares == {}
