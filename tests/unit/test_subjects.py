"""Inferred subjects: the name an untagged memory's title leads with, when the vault keeps coming back to it."""

from __future__ import annotations

import pytest

from vault_engine.retrieval.subjects import Inferred, leading_name


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
    titles = ["Caroline: hi", "Caroline: I paint", "Melanie: me too", "Yesterday it rained", "caroline again"]
    inferred = Inferred.of(titles, total=20, min_share=0.1)
    assert dict(inferred.shares) == {"caroline": pytest.approx(0.1)}
    assert inferred.written == {"caroline": "Caroline"}
    assert inferred.subject_of("Caroline: what a day") == "caroline"
    assert inferred.subject_of("Melanie: what a day") is None  # 1 of 20 titles: below the share
    assert inferred.subject_of("Hey Caroline, how are you?") is None  # it leads with "Hey"


def test_an_empty_vault_infers_nothing() -> None:
    assert Inferred.of([], total=0, min_share=0.05).shares == {}
